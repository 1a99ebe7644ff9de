"""One trial's load and measurement: the warm-up, then the window.
Design: doc/dev/internals.rst, dev-internals-load."""
import math
from dataclasses import dataclass
from statistics import median
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import perf_counters
from .canary_record import CanaryRecord, PreconditionRecord, WindowRecord
from .cluster import Cluster, ClusterError
from .perf_counters import Measurement
from .record import Record
from .rocksdb_options import ColumnFamily
from .space import ONE_FAMILY, STEADY_CYCLES, Candidate, SearchSpace, cycle_bytes
from .rocksdb_stats import KvDelta, KvStats, counts, delta
from .session_settings import Settings
from .workload import KeyspaceWorkload, Workload


@dataclass(frozen=True)
class WindowEnd:
    """How a window ends (Search.window_end): a round's at `length`; a
    steady one's counted from the busiest family's first compaction below
    L0, at most `steady_limit` s, sooner (after --duration) once it compacted
    again and the WAL covers steady_bytes; a search one's by the clock, under
    wear not before `wal_to_pass` WAL bytes unless `wal_within` s passed."""
    length: Optional[float] = None
    steady_limit: Optional[float] = None
    wal_to_pass: int = 0
    wal_within: float = 0.0


# a margin on a cycle's time from a rate: the rate's noise, the compaction's own time
CYCLE_MARGIN = 1.25
# flushes before a config's own rate counts (fewer reflect where the window fell, not the rate)
OWN_RATE_FLUSHES = 3
# the most one compaction may weigh in a steady window's RocksDB bytes before
# it ends (within its limit): its edges take one in or leave one out, so this
# bounds the claim's own range (the claims' gap to their checks was the
# load's data: doc/bench/wear-floor.md)
COMPACTION_SHARE = 0.03


def steady_bytes(c: Candidate, families: Sequence[ColumnFamily] = ONE_FAMILY,
                 max_total_wal_size: int = 0) -> int:
    """WAL bytes of every family's L0 cycle (space.cycle_bytes): what a steady window counts."""
    return cycle_bytes(families, c, max_total_wal_size)


def steady_window_bytes(c: Candidate, families: Sequence[ColumnFamily] = ONE_FAMILY,
                        max_total_wal_size: int = 0) -> int:
    """WAL bytes a steady window of `c` writes at most (STEADY_CYCLES)."""
    return STEADY_CYCLES * steady_bytes(c, families, max_total_wal_size)


def flush_size(c: Candidate) -> int:
    """Bytes a column family's memtables take in before config `c` flushes them."""
    return c.write_buffer_size * c.min_write_buffer_number_to_merge


def fill_rate(configs: Iterable[Tuple[Candidate, List[Measurement]]]) -> Optional[float]:
    """The busiest family's memtable bytes a second, pooled over every
    config's windows: the load's rate whatever the config; None: no counts."""
    counted = [(c, m) for c, ms in configs for m in _counted(ms)]
    if not counted:
        return None
    return (sum((m.cf_flushes or 0) * flush_size(c) for c, m in counted)
            / sum(m.seconds for _, m in counted))


def steady_window(c: Candidate, ms: List[Measurement], rate: Optional[float] = None,
                  max_total_wal_size: int = 0) -> Optional[float]:
    """Seconds `c`'s busiest family needs for an L0 compaction: its trigger's
    flushes (x CYCLE_MARGIN) at the flush rate of `ms`, or below
    OWN_RATE_FLUSHES at the load's `rate` (or the WAL limit's if sooner);
    inf if nothing flushed; None: no counts."""
    counted = _counted(ms)
    flushes = sum(m.cf_flushes or 0 for m in counted)
    if flushes >= OWN_RATE_FLUSHES or (flushes and not rate):
        return CYCLE_MARGIN * c.level0_file_num_compaction_trigger * sum(
            m.seconds for m in counted) / flushes
    if rate:
        period = flush_size(c) / rate
        logged = wal_rate(counted) if max_total_wal_size else None
        if logged:
            period = min(period, max_total_wal_size / logged)
        return CYCLE_MARGIN * c.level0_file_num_compaction_trigger * period
    if not counted and rate is None:
        return None
    return math.inf


def _counted(ms: Iterable[Measurement]) -> List[Measurement]:
    return [m for m in ms if m.cf_flushes is not None and m.seconds > 0]


def wal_rate(ms: Iterable[Measurement]) -> Optional[float]:
    """The median WAL bytes a second of `ms` (RocksDB's, else BlueFS's); None: none."""
    rates = [(m.rocksdb_wal_bytes or m.wal_bytes) / m.seconds for m in ms
             if m.seconds > 0 and (m.rocksdb_wal_bytes or m.wal_bytes) > 0]
    return median(rates) if rates else None


@dataclass
class SteadyCap(Record):
    """The session's `steady_cap`: the most WAL bytes a steady window can
    write (the baseline's WAL rate for steady_window_limit), and whether the
    search keeps to it.  Changed only by settle."""
    rate: float
    limit: float
    bytes: int
    applied: Optional[bool] = None  # None until settled
    smallest: Optional[int] = None  # the least a candidate drawn writes (settle)

    def settle(self, space: SearchSpace, seed: int) -> None:
        """Once the baseline is in (replays agree): the space's
        max_steady_bytes, unless that leaves too little to search."""
        # imported here: scipy on the serve thread only (search.Search.optimizer)
        from .optimizer import enough_safe_points, random_points
        space.max_steady_bytes = 0
        self.smallest = min(
            (steady_window_bytes(space.from_point(x), space.column_families,
                                 space.max_total_wal_size)
             for x in random_points(space, 1000, seed) if space.point_is_safe(x)), default=None)
        space.max_steady_bytes = self.bytes
        self.applied = enough_safe_points(space, seed)


def steady_cap(runs: Iterable[Measurement], limit: float) -> Optional[SteadyCap]:
    """What the baseline `runs` write in `limit` s; None without WAL counts."""
    rate = wal_rate(runs)
    return None if not rate else SteadyCap(rate, limit, int(rate * limit))


def steady_length(configs: Iterable[Tuple[Candidate, List[Measurement]]],
                  duration: float, limit: float,
                  families: Sequence[ColumnFamily] = ONE_FAMILY,
                  max_total_wal_size: int = 0) -> float:
    """Seconds a steady window of these configs needs, by their windows so
    far: the longest to a first L0 compaction (steady_window), then a cycle,
    its steady_bytes at the WAL rate, and the RocksDB bytes in which the
    largest compaction seen weighs COMPACTION_SHARE; within [duration, limit]."""
    configs = list(configs)
    rate = fill_rate(configs)
    need = duration
    for c, ms in configs:
        logged = wal_rate(ms)
        cycle = steady_window(c, ms, rate, max_total_wal_size)
        if cycle is None and logged:
            cycle = flush_size(c) * c.level0_file_num_compaction_trigger / logged
        counted = max(cycle or 0.0, steady_bytes(c, families, max_total_wal_size) / logged
                      if logged else 0.0, _share_seconds(ms))
        need = max(need, (cycle or 0.0) + counted)
    return min(need, max(duration, limit))


def _share_seconds(ms: Sequence[Measurement]) -> float:
    """Seconds of RocksDB bytes, at the rate of `ms`, in which the largest
    compaction `ms` saw weighs COMPACTION_SHARE (0: none counted)."""
    counted = [m for m in ms if m.write_amp_by == perf_counters.ROCKSDB and m.seconds > 0]
    unit = max((m.compaction_unit or 0 for m in counted), default=0)
    if not unit:
        return 0.0
    rate = median(m.write_amp * m.client_bytes / m.seconds for m in counted)
    return unit / COMPACTION_SHARE / rate if rate > 0 else 0.0


def read_kv(cluster: Cluster, osd: int) -> Optional[KvStats]:
    """RocksDB's figures now; None when the canary gives none (not yet
    restarted with rocksdb_perf, or a release that prints them otherwise)."""
    try:
        return cluster.kv_stats(osd)
    except ClusterError:
        return None


@dataclass
class Window:
    cluster: Cluster
    osd: int
    # the load, built on its first use (None: the canary's own client traffic, live)
    workload: Optional[Callable[[], Workload]]
    # warmup, min_flushes, max_window_factor; bench_chunk_seconds: what a window too
    # short for min_flushes grows by
    settings: Settings
    duration: float  # --duration
    s: CanaryRecord

    def _window(self) -> WindowRecord:
        w = self.s.window
        if w is None:
            raise ValueError('no window open')
        return w

    def begin(self, now: float) -> None:
        """The canary is up on the trial's options: the warm-up starts."""
        self.s.window = WindowRecord(now)

    def _drive(self, seconds: float) -> float:
        """Run the workload for about `seconds`; return the delay before the next step."""
        if self.workload is None:
            return max(0.0, seconds)
        w, load = self._window(), self.workload()
        nbytes, secs = load.drive(seconds, self.s.iops_estimate)
        if secs > 0:
            self.s.iops_estimate = nbytes / load.block_size / secs
        w.bytes += nbytes
        w.bench_seconds += secs
        ref = load.last_reference
        if ref is not None:  # a split load's group R, over the same seconds
            w.reference_bytes = (w.reference_bytes or 0) + ref
        return 0

    def _kv_stats(self) -> Optional[Dict[str, Any]]:
        """RocksDB's counts now; None: the window counts BlueFS's bytes alone."""
        kv = read_kv(self.cluster, self.osd)
        return None if kv is None else counts(kv)

    def warmup(self, now: float, since: float) -> Tuple[bool, float]:
        """(warm-up over and the window open, delay before the next call)."""
        left = self.settings.warmup - (now - since)
        if left <= 0:
            self.s.window = WindowRecord(
                now, before=perf_counters.snapshot(self.cluster.perf_dump(self.osd)),
                kv_before=self._kv_stats())
            return True, 0
        return False, min(self._drive(left), left)

    def measure(self, now: float, c: Candidate, end: WindowEnd = WindowEnd(),
                families: Sequence[ColumnFamily] = ONE_FAMILY, max_total_wal_size: int = 0
                ) -> Tuple[Optional[Measurement], float]:
        """(the measurement once done as `end` says, delay before the next
        call); a steady window that hit its limit first is short."""
        length, steady_limit = end.length, end.steady_limit
        st = self.settings
        w = self._window()
        if w.before is None:
            raise ValueError('the window is in its warm-up')
        cycles = 0.0 if length is None and steady_limit is None else 1.0
        elapsed = now - w.start
        opened = elapsed + (w.settled or 0.0)  # since the warm-up, for the limit
        bench = self.workload is not None
        until = length if length is not None else self.duration
        if steady_limit is not None:
            until = min(until, steady_limit - (w.settled or 0.0))  # counted after a re-base
        if elapsed < until:
            return None, min(self._drive(until - elapsed), until - elapsed)
        if bench and not w.bench_seconds:
            # time passed before the first chunk (a slow step, a busy mgr):
            # a bench window with no bench measures nothing
            return None, self._drive(self.duration)
        after = perf_counters.snapshot(self.cluster.perf_dump(self.osd))
        kv_after = self._kv_stats() if w.kv_before is not None else None
        if steady_limit is not None and w.kv_before is not None and kv_after is None \
                and opened < steady_limit:
            # RocksDB's figures missed one read: no re-base or end on a guess
            return None, self._extend(steady_limit - opened)
        m = perf_counters.measure(
            w.before, after, seconds=elapsed, flush_bytes=flush_size(c),
            min_flushes=st.min_flushes, bench_bytes=w.bytes if bench else None,
            bench_seconds=w.bench_seconds if bench else None,
            trigger=c.level0_file_num_compaction_trigger, min_cycles=cycles,
            kv=delta(w.kv_before, kv_after) if w.kv_before is not None and kv_after is not None
            else None,
            reference_bytes=w.reference_bytes if bench else None,
            steady_bytes=steady_bytes(c, families, max_total_wal_size)
            if steady_limit is not None else 0)
        if steady_limit is not None:
            delay = self._steady_next(m, now, after, kv_after, elapsed, steady_limit - opened)
            if delay is not None:
                return None, delay
        if length is None and (
                (m.flushes < st.min_flushes and elapsed < self.duration * st.max_window_factor)
                or (m.rocksdb_wal_bytes is not None and m.rocksdb_wal_bytes < end.wal_to_pass
                    and elapsed < end.wal_within)):
            # too little written to see this config's write-amp: extend
            return None, self._drive(st.bench_chunk_seconds)
        return m, 0

    def _extend(self, left: float) -> float:
        """Drive the load a chunk more, at most `left`; the delay."""
        step = min(self.settings.bench_chunk_seconds, left)
        return min(self._drive(step), step)

    def _steady_next(self, m: Measurement, now: float, after: Dict[str, Any],
                     kv_after: Optional[Dict[str, Any]], elapsed: float,
                     left: float) -> Optional[float]:
        """The delay if steady window `m` goes on (re-based, or short of a
        compaction or of every family's WAL cycle), `left` s before its limit;
        None once it ends (`m.settled` set)."""
        w = self._window()
        if left > 0 and w.settled is None and (m.l0_cycles or 0.0) >= 1:
            # the first compaction below L0 took in L0 files this config did
            # not write (the last options', the replayed WAL's flush): count
            # from its end.  Not exact: an L1->L2 compaction may come first,
            # and other families' first ones may fall in the count
            w.settled = elapsed
            w.start, w.before, w.kv_before = now, after, kv_after
            w.bytes, w.bench_seconds = 0, 0.0
            w.reference_bytes = None if w.reference_bytes is None else 0
            return 0.0
        share = perf_counters.compaction_share(m)
        if left > 0 and ((m.l0_cycles or 0.0) < 1
                         or (m.wal_cover is not None and m.wal_cover < 1)
                         or (share is not None and share > COMPACTION_SHARE)):
            # no compaction yet, too few bytes for every family's, or too few
            # for one compaction in or out to be noise: go on
            return self._extend(left)
        m.settled = w.settled
        return None


def precondition_left(pre: Optional[PreconditionRecord], limit: float, blocks: int,
                      trigger: int) -> float:
    """Seconds preconditioning `pre` has left of `limit`: while it overwrites
    the `blocks`, the rest at its rate so far; then the wait for the busiest
    family's first compaction at L0 `trigger` (compaction_wait)."""
    spent = 0.0 if pre is None else pre.seconds + pre.fill_seconds
    left = max(0.0, limit - spent)
    if pre is None or not pre.overwritten:
        return left
    if pre.overwritten < blocks:
        return min(left, (blocks - pre.overwritten) * pre.seconds / pre.overwritten)
    wait = compaction_wait(pre, trigger)
    return left if wait is None else min(left, wait[0])


def compaction_wait(rec: PreconditionRecord, trigger: int
                    ) -> Optional[Tuple[float, int, float, float]]:
    """(seconds, L0 files, WAL bytes a flush, WAL bytes a second) until the
    busiest family's first compaction at `trigger`: each L0 file short of it
    needs the measured WAL per flush, at the rate since RocksDB's counts
    began (None: no trigger or no rate)."""
    rate = rec.wal_rate()
    if not trigger or rate is None:
        return None
    files = sum(n for lv, n, _ in (rec.shape or {}).get(rec.busiest_cf, []) if lv == 0)
    per_flush = (rec.kv_bytes or {}).get('wal', 0) / max(1, rec.flushes)
    return max(0, trigger - files) * per_flush / rate, files, per_flush, rate


@dataclass
class Precondition:
    """Before a driven client load's first baseline window, the canary's DB
    brought to a steady state (doc/dev/session.rst): every object written
    whole, every block overwritten once in scattered order, then the load
    until the busiest family holds files below L0; at most `limit` s; with
    no RocksDB figures, the two passes."""
    cluster: Cluster
    osd: int
    workload: Callable[[], KeyspaceWorkload]  # built on its first use
    limit: float
    s: CanaryRecord

    def begin(self) -> None:
        """Start, or go on after a canary restart (RocksDB's counts restart)."""
        kv = read_kv(self.cluster, self.osd)
        rec = self.s.precondition or PreconditionRecord()
        rec.kv_start = None if kv is None else counts(kv)
        rec.kv_since = rec.seconds + rec.fill_seconds
        rec.kv_bytes = None  # counted from kv_start, as wal_rate's seconds
        self.s.precondition = rec

    def step(self, trigger: int = 0) -> bool:
        """One chunk of load; True once preconditioned, at the limit, or once
        the busiest family's first compaction (at `trigger`, the current L0
        trigger) is out of the limit's reach."""
        rec = self.s.precondition
        if rec is None:
            raise ValueError('no preconditioning begun')
        load = self.workload()
        left = self.limit - rec.seconds - rec.fill_seconds
        wal_before = (rec.kv_bytes or {}).get('wal', 0)
        driven = 0.0
        if rec.filled < load.object_count:
            rec.filled, nbytes, secs = load.fill(rec.filled, left)
            rec.fill_bytes += nbytes
            rec.fill_seconds += secs
        else:
            if rec.overwritten < load.block_count:
                rec.overwritten, nbytes, secs = load.overwrite(rec.overwritten, left)
            else:
                nbytes, secs = load.drive(left, None)
                driven = secs
            rec.bytes += nbytes
            rec.seconds += secs
        kv = read_kv(self.cluster, self.osd)
        below, d = None, None
        if kv is not None and rec.kv_start is not None:
            d = delta(rec.kv_start, counts(kv))
            shape = kv.shape()
            # the whole run's bytes: the longest window before the search, for
            # calibrating the wear model's levels (doc/bench/scenarios.md, run 10)
            rec.shape = {cf: levels for cf, levels in shape.items() if levels}
            rec.busiest_cf, rec.flushes, rec.compactions = d.busiest_cf, d.flushes, d.compactions
            rec.kv_bytes = {'wal': d.wal_bytes, 'flush': d.flush_bytes,
                            'compaction': d.compaction_bytes, 'compressed_raw': d.compressed_raw}
            if driven:
                rec.drive_wal += max(0, d.wal_bytes - wal_before)
                rec.drive_seconds += driven
            below = bool(d.busiest_cf) and any(n > 0 for n, _, _ in shape.get(d.busiest_cf, []))
        passes = rec.filled >= load.object_count and rec.overwritten >= load.block_count
        spent = rec.seconds + rec.fill_seconds
        if passes and below is not False:
            rec.done, rec.steady = True, below
            if below is None:
                rec.why = 'the canary gave no RocksDB figures: its LSM shape is unknown'
            return True
        why = self._out_of_reach(d, trigger, spent) if passes and d is not None else None
        if why is None and spent >= self.limit:
            why = (f'not steady after {self.limit:.0f}s of load (precondition_limit): '
                   + (f'{rec.filled} of {load.object_count} objects filled'
                      if rec.filled < load.object_count else
                      f'{rec.overwritten} of {load.block_count} blocks overwritten'
                      if rec.overwritten < load.block_count else
                      'no column family flushed' if not rec.busiest_cf else
                      f'{rec.busiest_cf} holds nothing below L0 yet'))
        if why is not None:
            rec.done, rec.steady, rec.why = True, False, why
        return rec.done

    def _out_of_reach(self, d: KvDelta, trigger: int, spent: float) -> Optional[str]:
        """Why the rest of the limit cannot bring the busiest family's first
        compaction (None: it may): each L0 file short of `trigger` needs the
        measured WAL per flush, at the rate since RocksDB's counts began."""
        rec = self.s.precondition
        wait = None if rec is None else compaction_wait(rec, trigger)
        if wait is None:
            return None
        need, files, per_flush, rate = wait
        if spent + need <= self.limit:
            return None
        return (f'{d.busiest_cf or "the busiest column family"} holds {files} of the '
                f'{trigger} L0 files that start a compaction, at {per_flush / (1 << 20):.0f} '
                f'MiB of WAL or more a flush: at least {need / 60:.0f} min more at the '
                f'{rate / (1 << 20):.1f} MiB/s written, past precondition_limit '
                f'{self.limit:.0f}s')
