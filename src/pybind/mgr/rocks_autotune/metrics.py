"""Perf counter snapshots and what a measurement window made of them.

All figures are deltas between two `perf dump`s of the canary, so counters
that accumulated before the window (or a `perf reset`) do not matter.
"""
import math
from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

# (section, counter) pairs read from `perf dump`
DB_BYTES = [('bluefs', 'bytes_written_wal'), ('bluefs', 'bytes_written_sst'),
            ('bluefs', 'bytes_written_slow')]
WAL_BYTES = ('bluefs', 'bytes_written_wal')
CLIENT_BYTES = ('osd', 'op_w_in_bytes')
LATENCIES = {'kv_sync_lat_ms': ('bluestore', 'kv_sync_lat'),
             'kv_commit_lat_ms': ('bluestore', 'kv_commit_lat'),
             'kv_flush_lat_ms': ('bluestore', 'kv_flush_lat')}


def snapshot(dump: Dict[str, Any]) -> Dict[str, Any]:
    """Only the counters a measurement uses, so the session state stays small."""
    keys = DB_BYTES + [CLIENT_BYTES] + list(LATENCIES.values())
    out: Dict[str, Any] = {}
    for sec, name in keys:
        out.setdefault(sec, {})[name] = _counter(dump, (sec, name))
    return out


def _counter(dump: Dict[str, Any], key: Tuple[str, str]) -> Any:
    try:
        return dump[key[0]][key[1]]
    except KeyError:
        raise ValueError(f'perf dump has no {key[0]}.{key[1]}')


def _delta(a: Dict[str, Any], b: Dict[str, Any], key: Tuple[str, str]) -> float:
    return float(_counter(b, key)) - float(_counter(a, key))


def _avg_ms(a: Dict[str, Any], b: Dict[str, Any], key: Tuple[str, str]) -> Optional[float]:
    """Average of a time-average counter over the window, in ms."""
    x, y = _counter(a, key), _counter(b, key)
    n = y['avgcount'] - x['avgcount']
    if n <= 0:
        return None
    return (y['sum'] - x['sum']) / n * 1000.0


@dataclass
class Measurement:
    seconds: float
    client_bytes: int
    db_bytes: int
    wal_bytes: int
    write_amp: float  # DB bytes written per client byte
    kv_sync_lat_ms: Optional[float]
    kv_commit_lat_ms: Optional[float]
    kv_flush_lat_ms: Optional[float]
    kv_syncs: int
    iops: Optional[float]  # bench workload only
    flushes: float  # memtable flushes the window is estimated to cover
    window_short: bool  # too few flushes: write-amp is undercounted

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> 'Measurement':
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


def wal_bytes(a: Dict[str, Any], b: Dict[str, Any]) -> float:
    return _delta(a, b, WAL_BYTES)


def measure(before: Dict[str, Any], after: Dict[str, Any], seconds: float,
            flush_bytes: int, min_flushes: float,
            bench_bytes: Optional[int] = None, bench_seconds: Optional[float] = None,
            block_size: int = 4096) -> Measurement:
    """Turn two perf dumps of one window into a Measurement.

    Client bytes are the bench's own bytes when the bench drove the window
    (osd bench writes below the PG layer, so op_w_in_bytes does not see
    them), else the OSD's client write bytes.  `flush_bytes` is the
    candidate's memtable flush size (write_buffer_size x merge): the WAL bytes
    of the window over it estimate how many flushes the window covered.
    """
    db = sum(_delta(before, after, k) for k in DB_BYTES)
    wal = wal_bytes(before, after)
    client = float(bench_bytes) if bench_bytes is not None else _delta(before, after, CLIENT_BYTES)
    lat = {name: _avg_ms(before, after, key) for name, key in LATENCIES.items()}
    syncs = _counter(after, LATENCIES['kv_sync_lat_ms'])['avgcount'] - \
        _counter(before, LATENCIES['kv_sync_lat_ms'])['avgcount']
    iops = None
    if bench_bytes is not None and bench_seconds:
        iops = bench_bytes / block_size / bench_seconds
    flushes = wal / flush_bytes if flush_bytes > 0 else 0.0
    return Measurement(
        seconds=seconds, client_bytes=int(client), db_bytes=int(db), wal_bytes=int(wal),
        write_amp=db / client if client > 0 else math.inf,
        kv_sync_lat_ms=lat['kv_sync_lat_ms'], kv_commit_lat_ms=lat['kv_commit_lat_ms'],
        kv_flush_lat_ms=lat['kv_flush_lat_ms'], kv_syncs=int(syncs), iops=iops,
        flushes=flushes, window_short=flushes < min_flushes)


def median(xs: Iterable[float]) -> float:
    s = sorted(xs)
    if not s:
        raise ValueError('median of nothing')
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def spread(xs: List[float]) -> float:
    """(max - min) / median: the relative noise band of repeated runs."""
    m = median(xs)
    return (max(xs) - min(xs)) / m if m else 0.0


@dataclass
class Baseline:
    kv_sync_lat_ms: float
    iops: Optional[float]
    write_amp: float
    runs: int
    kv_sync_lat_spread: float
    iops_spread: Optional[float]
    write_amp_spread: float

    @classmethod
    def of(cls, ms: List[Measurement]) -> 'Baseline':
        lats = [m.kv_sync_lat_ms for m in ms if m.kv_sync_lat_ms is not None]
        if not lats:
            raise ValueError('no kv_sync latency in the baseline runs')
        iops = [m.iops for m in ms if m.iops is not None]
        was = [m.write_amp for m in ms]
        return cls(kv_sync_lat_ms=median(lats), iops=median(iops) if iops else None,
                   write_amp=median(was), runs=len(ms), kv_sync_lat_spread=spread(lats),
                   iops_spread=spread(iops) if iops else None, write_amp_spread=spread(was))

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def score(m: Measurement, base: Baseline) -> float:
    """Lower is better: log ratios to the baseline, so 0 is 'as the baseline'.

    Latency of the kv sync thread (the bottleneck the seed profiles) and, where
    the bench drove the window, IOPS weigh equally.
    """
    if m.kv_sync_lat_ms is None or m.kv_sync_lat_ms <= 0:
        raise ValueError('measurement has no kv_sync latency')
    s = math.log(m.kv_sync_lat_ms / base.kv_sync_lat_ms)
    if m.iops and base.iops:
        s = 0.5 * s + 0.5 * math.log(base.iops / m.iops)
    return s


def feasible(m: Measurement, base: Baseline, budget: float) -> bool:
    return m.write_amp <= budget * base.write_amp
