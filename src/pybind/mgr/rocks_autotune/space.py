"""The search space over BlueStore's RocksDB options and its safety rules,
in plain Python (optimizer.py maps ``SearchSpace.dimensions()`` to skopt's)."""
import re
from dataclasses import asdict, dataclass, fields
from typing import (Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence,
                    Tuple, Union)

from .rocksdb_options import (COMPRESSIONS, ColumnFamily, OptionStringError,
                              compression_from_rocksdb, parse_size, render_options)

MiB = 1 << 20
GiB = 1 << 30
ONE_FAMILY = (ColumnFamily('default'),)


@dataclass(frozen=True)
class Candidate:
    """One point of the search space: RocksDB's option names and units."""
    max_write_buffer_number: int
    write_buffer_size: int
    min_write_buffer_number_to_merge: int
    level0_file_num_compaction_trigger: int
    max_bytes_for_level_base: int
    max_bytes_for_level_multiplier: int
    compression: str

    def __post_init__(self) -> None:
        # from JSON in the mgr store and from skopt (numpy scalars): fail here
        # rather than render "8.0" or "np.int64(8)"
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == 'compression':
                if not isinstance(v, str) or v not in COMPRESSIONS:
                    raise ValueError(f'compression must be one of {sorted(COMPRESSIONS)}, '
                                     f'not {v!r}')
            elif type(v) is not int:  # bool is an int subclass: reject it too
                raise ValueError(f'{f.name} must be int, not {type(v).__name__} {v!r}')
            elif v < 1:
                raise ValueError(f'{f.name} must be positive, not {v}')

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> 'Candidate':
        """Rebuild from ``to_dict`` output; ValueError on anything else."""
        if not isinstance(d, dict):
            raise ValueError(f'candidate must be a dict, not {type(d).__name__}')
        want, got = set(TUNED_KEYS), set(d)
        if got != want:
            raise ValueError(f'candidate keys wrong: missing {sorted(want - got)}, '
                             f'unexpected {sorted(str(k) for k in got - want)}')
        return cls(**d)

    def to_options(self) -> Dict[str, str]:
        """The tuned options as RocksDB option values (sizes in plain bytes)."""
        opts = {k: str(v) for k, v in asdict(self).items()}
        opts['compression'] = COMPRESSIONS[self.compression]
        return opts


TUNED_KEYS: Tuple[str, ...] = tuple(f.name for f in fields(Candidate))

# RocksDB's value of a key bluestore_rocksdb_options does not set (compression: snappy)
ROCKSDB_DEFAULTS: Dict[str, str] = {
    'max_write_buffer_number': '2',
    'write_buffer_size': str(64 * MiB),
    'min_write_buffer_number_to_merge': '1',
    'level0_file_num_compaction_trigger': '4',
    'max_bytes_for_level_base': str(256 * MiB),
    'max_bytes_for_level_multiplier': '10',
    'compression': 'kSnappyCompression',
    'level0_slowdown_writes_trigger': '20',
    'level0_stop_writes_trigger': '36',
}


@dataclass(frozen=True)
class DimensionSpec:
    """One search dimension: integer low..high (inclusive, in ``unit``s) with
    a prior, or categorical (``categories``; the rest ignored)."""
    name: str
    low: int = 0
    high: int = 0
    prior: str = 'uniform'  # 'uniform' | 'log-uniform'
    unit: int = 1           # point value * unit = Candidate field value
    categories: Tuple[str, ...] = ()

    @property
    def is_categorical(self) -> bool:
        return bool(self.categories)


# Sizes in whole MiB (a compact grid for the GP), log prior: their effect is multiplicative.
_INT_DIMS: Tuple[DimensionSpec, ...] = (
    DimensionSpec('max_write_buffer_number', 2, 128, 'log-uniform'),
    DimensionSpec('write_buffer_size', 4, 256, 'log-uniform', MiB),
    DimensionSpec('min_write_buffer_number_to_merge', 1, 32, 'uniform'),
    DimensionSpec('level0_file_num_compaction_trigger', 2, 16, 'uniform'),
    DimensionSpec('max_bytes_for_level_base', 256, 4096, 'log-uniform', MiB),
    DimensionSpec('max_bytes_for_level_multiplier', 4, 10, 'uniform'),
)

# to_point/from_point/point_is_safe rely on dimensions in Candidate field order.
assert tuple(d.name for d in _INT_DIMS) + ('compression',) == TUNED_KEYS

Point = List[Union[int, str]]


def _parse_count(key: str, v: str) -> int:
    # digits only: int() would also take '+5', '-1' and '1_0'
    if not re.fullmatch(r'[0-9]+', v.strip()):
        raise OptionStringError(f'option {key}={v!r} is not a non-negative integer')
    return int(v)


def _parse_multiplier(v: str) -> int:
    # RocksDB's is a double; the search's an integer: an 8.5 is refused, not rounded
    try:
        f = float(v)
    except ValueError:
        raise OptionStringError(
            f'option max_bytes_for_level_multiplier={v!r} is not a number') from None
    if not f.is_integer():
        raise OptionStringError(
            f'max_bytes_for_level_multiplier={v!r} is not a whole number')
    return int(f)


class SearchSpace:
    """Bounds of the search plus the rules that make a candidate unsafe."""

    def __init__(self,
                 compressions: Sequence[str] = tuple(COMPRESSIONS),
                 max_memtable_bytes: int = 2 * GiB,
                 base: Optional[Mapping[str, str]] = None,
                 column_families: Sequence[ColumnFamily] = ONE_FAMILY,
                 max_steady_bytes: int = 0) -> None:
        """``compressions``: what the OSD's RocksDB supports;
        ``max_memtable_bytes``: cap on all families' memtables; ``base``: the
        canary's running options; ``column_families``: its sharding;
        ``max_steady_bytes``: the most WAL a steady window can write (0: no
        limit), past which a candidate is never proposed."""
        if not compressions or not set(compressions) <= set(COMPRESSIONS):
            raise ValueError(f'compressions must be a non-empty subset of '
                             f'{list(COMPRESSIONS)}, got {list(compressions)}')
        # canonical order: the optimizer's draws (and replay) depend on it
        self.compressions: Tuple[str, ...] = tuple(c for c in COMPRESSIONS if c in compressions)
        if max_memtable_bytes < 1:
            raise ValueError(f'max_memtable_bytes must be positive, got {max_memtable_bytes}')
        self.max_memtable_bytes = max_memtable_bytes
        self.column_families: Tuple[ColumnFamily, ...] = tuple(column_families)
        self.base: Dict[str, str] = dict(base or {})
        self.l0_slowdown, self.l0_stop = (
            _parse_count(key, self.base.get(key, ROCKSDB_DEFAULTS[key]))
            for key in ('level0_slowdown_writes_trigger', 'level0_stop_writes_trigger'))
        # 0: RocksDB sizes the WAL limit itself
        self.max_total_wal_size = parse_size(self.base.get('max_total_wal_size', '0'))
        self.max_steady_bytes = max_steady_bytes
        self._dims: Tuple[DimensionSpec, ...] = _INT_DIMS + (
            DimensionSpec('compression', categories=self.compressions),)

    def dimensions(self) -> List[DimensionSpec]:
        return list(self._dims)  # one per Candidate field, in field order

    def to_point(self, c: Candidate) -> Point:
        """Candidate -> point in search units (sizes rounded to whole MiB)."""
        return [getattr(c, d.name) if d.is_categorical
                else (getattr(c, d.name) + d.unit // 2) // d.unit for d in self._dims]

    def from_point(self, x: Sequence[Any]) -> Candidate:
        """Point (possibly numpy scalars from skopt) -> Candidate."""
        if len(x) != len(self._dims):
            raise ValueError(f'point has {len(x)} values, space has {len(self._dims)}')
        kw: Dict[str, Any] = {d.name: str(v) if d.is_categorical else int(v) * d.unit
                              for d, v in zip(self._dims, x)}
        return Candidate(**kw)

    def violations(self, c: Candidate) -> List[str]:
        """Why ``c`` (in bounds or not) is unsafe to run or cannot be judged."""
        return [msg() for msg in self._broken_rules(c)]

    def point_is_safe(self, x: Sequence[Any]) -> bool:
        """``not violations(from_point(x))`` without building a Candidate: the
        optimizer's constraint runs it on thousands of points a trial."""
        d = self._dims
        return next(self._broken_rules(_Tuned(
            int(x[0]) * d[0].unit, int(x[1]) * d[1].unit, int(x[2]) * d[2].unit,
            int(x[3]) * d[3].unit, str(x[6]))), None) is None

    def _broken_rules(self, c: 'Tuned') -> Iterator[Callable[[], str]]:
        """The safety rules ``c`` breaks, each as a callable message
        (point_is_safe stops at the first and formats none)."""
        n, size = c.max_write_buffer_number, c.write_buffer_size
        merge, l0 = c.min_write_buffer_number_to_merge, c.level0_file_num_compaction_trigger
        # RocksDB could never gather enough memtables to flush (writes stall),
        # or lowers a family's merge count behind our back
        stalled = [f'{cf.name} ({_merges(cf, merge)})' for cf in self.column_families
                   if _merges(cf, merge) >= _buffers(cf, n)]
        if stalled:
            yield lambda: (f'min_write_buffer_number_to_merge must be below '
                           f'max_write_buffer_number ({n}) in every column family: '
                           f'not in {", ".join(stalled)}')
        memtables = self.memtable_bytes(n, size)
        if memtables > self.max_memtable_bytes:
            shards = sum(cf.shards for cf in self.column_families)
            yield lambda: (f'memtables may use {_human(memtables)} '
                           f'({shards} column famil{"y" if shards == 1 else "ies"}, '
                           f'up to {n} x {_human(size)} each), '
                           f'over the {_human(self.max_memtable_bytes)} cap')
        # writes would be throttled before L0 compaction starts
        if l0 >= self.l0_slowdown:
            yield lambda: (f'level0_file_num_compaction_trigger ({l0}) must be below '
                           f'level0_slowdown_writes_trigger ({self.l0_slowdown})')
        if self.l0_slowdown >= self.l0_stop:
            yield lambda: (f'level0_slowdown_writes_trigger ({self.l0_slowdown}) must be '
                           f'below level0_stop_writes_trigger ({self.l0_stop}) in the base '
                           'options')
        # the WAL limit would flush before a full merge group: the flush size
        # configured would never run
        if 0 < self.max_total_wal_size < size * merge:
            yield lambda: (f'flush size {_human(size * merge)} (write_buffer_size x '
                           f'min_write_buffer_number_to_merge) exceeds max_total_wal_size '
                           f'{_human(self.max_total_wal_size)}')
        if c.compression not in self.compressions:
            yield lambda: (f'compression {c.compression!r} is not supported by this OSD '
                           f'(supported: {", ".join(self.compressions)})')
        # its write-amp could not be seen at steady state in time: it could
        # never be recommended, so not worth a restart
        steady = STEADY_CYCLES * cycle_bytes(self.column_families, c, self.max_total_wal_size)
        if 0 < self.max_steady_bytes < steady:
            yield lambda: ('a steady window (to a first compaction, then an L0 cycle of every '
                           f'column family) takes up to {_human(steady)} of WAL, over the '
                           f'{_human(self.max_steady_bytes)} one can write '
                           '(steady_window_limit): its write-amp could not be judged')

    def memtable_bytes(self, n_buffers: int, buffer_size: int) -> int:
        """The most memory the memtables of every column family may hold."""
        return _memtable_bytes(self.column_families, n_buffers, buffer_size)

    @staticmethod
    def candidate_from_options(opts: Mapping[str, str]) -> Candidate:
        """The tuned fields of parsed options, RocksDB's defaults for absent keys."""
        def parse(key: str) -> Any:
            v = opts.get(key, ROCKSDB_DEFAULTS[key])
            if key == 'compression':
                return compression_from_rocksdb(v.strip())
            if key == 'max_bytes_for_level_multiplier':
                return _parse_multiplier(v)
            if key in ('write_buffer_size', 'max_bytes_for_level_base'):
                return parse_size(v)
            return _parse_count(key, v)

        try:
            return Candidate(**{key: parse(key) for key in TUNED_KEYS})
        except ValueError as e:  # e.g. write_buffer_size=0
            raise OptionStringError(str(e)) from None

    def base_candidate(self) -> Candidate:
        """The base options as a point of this space; OptionStringError when a
        tuned key holds what it cannot represent (kZSTD, a multiplier of 8.5)."""
        c = self.candidate_from_options(self.base)
        self.render(self.base, c)
        return c

    @staticmethod
    def render(base: Mapping[str, str], c: Candidate) -> str:
        """``base`` with only the tuned keys replaced (in place) or appended;
        every other option keeps its position and text."""
        return render_options({**base, **c.to_options()})


class _Tuned(NamedTuple):
    """The fields of a point the safety rules read, without Candidate's checks."""
    max_write_buffer_number: int
    write_buffer_size: int
    min_write_buffer_number_to_merge: int
    level0_file_num_compaction_trigger: int
    compression: str


Tuned = Union[Candidate, _Tuned]


def _buffers(cf: ColumnFamily, n_buffers: int) -> int:
    return cf.memtable.get('max_write_buffer_number', n_buffers)


def _merges(cf: ColumnFamily, merge: int) -> int:
    return cf.memtable.get('min_write_buffer_number_to_merge', merge)


def flush_capacity(families: Sequence[ColumnFamily], c: Tuned) -> int:
    """Bytes `c`'s memtables take in before every family flushed once: per
    family, shards x write_buffer_size x merge count (its own options beating
    `c`'s), the merge count kept below max_write_buffer_number as RocksDB
    does (a baseline may hold 2 buffers beside a family's merge of 32)."""
    return sum(cf.shards * cf.memtable.get('write_buffer_size', c.write_buffer_size)
               * max(1, min(_merges(cf, c.min_write_buffer_number_to_merge),
                            _buffers(cf, c.max_write_buffer_number) - 1))
               for cf in families)


def _memtable_bytes(families: Sequence[ColumnFamily], n_buffers: int, buffer_size: int) -> int:
    return sum(cf.shards * _buffers(cf, n_buffers)
               * cf.memtable.get('write_buffer_size', buffer_size) for cf in families)


def wal_limit(families: Sequence[ColumnFamily], c: Tuned, max_total_wal_size: int) -> int:
    """Live WAL bytes past which RocksDB flushes the oldest WAL's families:
    max_total_wal_size, or when 0, 4 x all memtables' bytes."""
    return (max_total_wal_size if max_total_wal_size > 0
            else 4 * _memtable_bytes(families, c.max_write_buffer_number, c.write_buffer_size))


# a steady window runs to its busiest family's first compaction, then counts
# a whole cycle (window.Window.measure): up to two cycles' WAL
STEADY_CYCLES = 2


def cycle_bytes(families: Sequence[ColumnFamily], c: Tuned, max_total_wal_size: int) -> int:
    """WAL bytes by which every family went through an L0 cycle under `c`:
    the L0 trigger x flush_capacity, or x the WAL limit if less."""
    return c.level0_file_num_compaction_trigger * min(
        flush_capacity(families, c), wal_limit(families, c, max_total_wal_size))


def _human(n: int) -> str:
    for unit, size in (('GiB', GiB), ('MiB', MiB)):
        if n >= size and n % size == 0:
            return f'{n // size} {unit}'
    if n >= MiB:
        return f'{n / MiB:.1f} MiB'
    return f'{n} B'
