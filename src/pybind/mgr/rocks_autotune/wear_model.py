"""The wear objective's model: a config's steady-state RocksDB bytes per client
byte, from its LSM shape calibrated on the session's windows, to rank candidates.
Design: doc/dev/internals.rst, dev-internals-wear-model."""
import math
from dataclasses import dataclass, field
from statistics import median
from typing import Dict, List, Sequence, Tuple

from .perf_counters import Measurement
from .rocksdb_options import ColumnFamily
from .space import Candidate, flush_capacity, wal_limit

# the fitted survival share's floor: no config keeps nothing
MIN_SURVIVAL = 0.02
# the survival slope per doubling of the flush when the windows saw one flush
# size: a prior, the lab's over 21 windows of 8 configs under fio's 4 KiB
# random writes (doc/bench/wear.md)
PRIOR_SLOPE = -0.096


@dataclass(frozen=True)
class Window:
    """What a window of config `candidate` measured (RocksDB's own bytes)."""
    candidate: Candidate
    client: float
    wal: float
    flush: float
    compaction: float
    compactions: int
    db_used: float = 0.0  # BlueFS's DB bytes in use at its end (0: unknown)
    raw: float = 0.0  # the bytes its flushes and compactions compressed, before (0: unknown)


@dataclass
class Calibration:
    wal: float = 1.0             # WAL bytes per client byte
    survive_at: float = 1.0      # s(F) = survive_at + survive_slope * log2(F / 1 MiB)
    survive_slope: float = 0.0
    compressed: Dict[str, float] = field(default_factory=dict)  # r by compression
    compaction: float = 1.0      # k, over every compacted window
    compaction_by: Dict[str, float] = field(default_factory=dict)  # k by compression
    flushed: Tuple[str, ...] = ()  # the compressions of the windows that flushed
    counted: Tuple[str, ...] = ()  # those whose r RocksDB's own bytes gave
    db_used: float = 0.0
    max_total_wal_size: int = 0  # the running options' (0: RocksDB's own limit)
    windows: int = 0             # windows it was fitted on
    flush_windows: int = 0
    compaction_windows: int = 0


# the model before a window of the session's: that same fit's line and
# compaction scale (doc/bench/wear.md), for the forecast's prior alone
PRIOR = Calibration(wal=0.49, survive_at=0.55, survive_slope=PRIOR_SLOPE, compaction=0.14)


def shard_count(families: Sequence[ColumnFamily]) -> int:
    return sum(cf.shards for cf in families) or 1


def tuned_families(families: Sequence[ColumnFamily]) -> List[ColumnFamily]:
    """The families that flush at the candidate's merge count: not those with
    their own (Tentacle's L and P, 32, rarely flush), unless all have."""
    own = 'min_write_buffer_number_to_merge'
    return [cf for cf in families if own not in cf.memtable] or list(families)


def shard_flush(c: Candidate, families: Sequence[ColumnFamily],
                max_total_wal_size: int = 0) -> float:
    """F: a shard's memtable bytes before a flush (at most the WAL limit's),
    averaged over the tuned families' shards."""
    tuned = tuned_families(families)
    return (min(flush_capacity(tuned, c), wal_limit(families, c, max_total_wal_size))
            / shard_count(tuned))


def wal_flushed(c: Candidate, families: Sequence[ColumnFamily],
                max_total_wal_size: int = 0) -> bool:
    """Whether the WAL limit, not a full memtable, flushes `c`'s tuned families."""
    limit = wal_limit(families, c, max_total_wal_size)
    return flush_capacity(tuned_families(families), c) >= limit


def survival(cal: Calibration, flush: float) -> float:
    s = cal.survive_at + cal.survive_slope * math.log2(max(flush, 1.0) / (1 << 20))
    return min(1.0, max(MIN_SURVIVAL, s))


def shape(c: Candidate, flush: float, db_used: float, shards: int = 1) -> float:
    """K: compaction bytes per flushed byte at steady state, each of `shards`
    families holding its share of `db_used` (0: unknown, L1 = the base)."""
    base = c.max_bytes_for_level_base
    share = db_used / max(1, shards)
    l1 = min(base, share) if share > 0 else base
    k = 1.0 + l1 / (c.level0_file_num_compaction_trigger * max(flush, 1.0))
    if share > base and c.max_bytes_for_level_multiplier > 1:
        levels = math.ceil(math.log(share / base, c.max_bytes_for_level_multiplier))
        k += levels * (c.max_bytes_for_level_multiplier + 1) / 2.0
    return k


def _line(points: Sequence[Tuple[float, float]]) -> Tuple[float, float]:
    """Least squares y = a + b x, b at most 0 (flat at the mean if it would
    rise; PRIOR_SLOPE through the mean if every x is one)."""
    ys = [y for _, y in points]
    mean_y = sum(ys) / len(ys)
    mean_x = sum(x for x, _ in points) / len(points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx <= 0:
        return mean_y - PRIOR_SLOPE * mean_x, PRIOR_SLOPE
    b = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    if b > 0:
        return mean_y, 0.0
    return mean_y - b * mean_x, b


def _counted_ratios(windows: Sequence[Window]) -> Dict[str, float]:
    """r by compression: SST bytes written over bytes compressed, pooled (at
    most 1: uncompressed blocks, index and filters count in the written)."""
    out: Dict[str, float] = {}
    for comp in sorted({w.candidate.compression for w in windows} - {'none'}):
        ws = [w for w in windows if w.candidate.compression == comp and w.raw > 0]
        if ws:
            out[comp] = min(1.0, sum(w.flush + w.compaction for w in ws)
                            / sum(w.raw for w in ws))
    return out


def calibrate(windows: Sequence[Window], families: Sequence[ColumnFamily],
              max_total_wal_size: int = 0) -> Calibration:
    """The model fitted to `windows` run under `max_total_wal_size` (the
    priors where they say nothing)."""
    counted = [w for w in windows if w.client > 0 and w.wal > 0]
    cal = Calibration(windows=len(counted), max_total_wal_size=max_total_wal_size)
    if not counted:
        return cal
    cal.wal = median(w.wal / w.client for w in counted)
    used = [w.db_used for w in counted if w.db_used > 0]
    cal.db_used = median(used) if used else 0.0
    # a window's flushed bytes over its WAL are its survival (if it flushed)
    flushed = [w for w in counted if w.flush > 0]
    cal.flush_windows = len(flushed)
    cal.flushed = tuple(sorted({w.candidate.compression for w in flushed}))

    def flush(w: Window) -> float:
        return shard_flush(w.candidate, families, max_total_wal_size)

    def x(w: Window) -> float:
        return math.log2(flush(w) / (1 << 20))
    if flushed:
        # the line, each compression's factor (RocksDB's count, else against the
        # uncompressed windows'), then the line again on bytes corrected by it
        cal.survive_at, cal.survive_slope = _line([(x(w), w.flush / w.wal) for w in flushed])
        seen = {comp: median(w.flush / w.wal / survival(cal, flush(w))
                             for w in flushed if w.candidate.compression == comp)
                for comp in sorted({w.candidate.compression for w in flushed})}
        if 'none' in seen and len(seen) > 1:
            cal.compressed = {comp: min(1.0, r / seen['none'])
                              for comp, r in seen.items() if comp != 'none'}
        ratios = _counted_ratios(counted)
        cal.compressed.update(ratios)
        cal.counted = tuple(sorted(ratios))
        if cal.compressed:
            cal.survive_at, cal.survive_slope = _line(
                [(x(w), w.flush / w.wal / cal.compressed.get(w.candidate.compression, 1.0))
                 for w in flushed])
    compacted = [w for w in flushed if w.compaction > 0]
    cal.compaction_windows = len(compacted)

    def k(ws: Sequence[Window]) -> float:
        return median(w.compaction / w.flush / shape(w.candidate, flush(w), w.db_used
                                                     or cal.db_used, shard_count(families))
                      for w in ws)
    if compacted:
        cal.compaction = k(compacted)
        cal.compaction_by = {comp: k([w for w in compacted if w.candidate.compression == comp])
                             for comp in sorted({w.candidate.compression for w in compacted})}
    return cal


def predictable(c: Candidate, base: Candidate, cal: Calibration) -> bool:
    """Whether the model bounds `c`'s bytes over `base`'s from above: not when
    `c` turns compression off and only compressed windows flushed (their
    survival then holds the compression's factor)."""
    return (c.compression != 'none' or base.compression == 'none'
            or base.compression in cal.counted or 'none' in cal.flushed or not cal.flushed)


def predict(c: Candidate, cal: Calibration, families: Sequence[ColumnFamily]) -> float:
    """Config `c`'s RocksDB bytes written per client byte at steady state."""
    return parts(c, cal, families)['write_amp']


def parts(c: Candidate, cal: Calibration, families: Sequence[ColumnFamily]) -> Dict[str, float]:
    """The prediction and its parts (WAL, flush, compaction), for the reports."""
    flush = shard_flush(c, families, cal.max_total_wal_size)
    flushed = cal.wal * survival(cal, flush) * cal.compressed.get(c.compression, 1.0)
    k = (cal.compaction_by.get(c.compression, cal.compaction)
         * shape(c, flush, cal.db_used, shard_count(families)))
    return {'wal': cal.wal, 'flush': flushed, 'compaction': flushed * k,
            'write_amp': cal.wal + flushed * (1.0 + k)}


def windows_of(trials: Sequence[Tuple[Candidate, Measurement]]) -> List[Window]:
    """The model's windows from recorded trials that counted RocksDB's bytes."""
    return [Window(c, float(m.client_bytes),
                   float(m.rocksdb_wal_bytes or 0), float(m.flush_bytes or 0),
                   float(m.compaction_bytes or 0), int(m.compactions or 0),
                   float(m.db_used_bytes or 0), float(m.compressed_raw_bytes or 0))
            for c, m in trials if m.write_amp_by == 'rocksdb']
