"""One trial's load and measurement: the warm-up, then the window.

The canary already runs the trial's options (restart.py saw to that).  Each
call does one chunk of work and says how long to wait; the workload owns
the bench's details.  The window's running totals live in the session's
state (`window`), so a step is all that is lost with a mgr.  A ClusterError
(the canary died, the bench failed) is the caller's: it fails the trial.

A window lasts --duration, then grows until it covers what it is for, at
most max_window_factor times --duration, and is marked short if it did not:
a search window, `min_flushes` memtable flushes; a confirmation window (it
compares write-amp at steady state), an L0->L1 compaction cycle of the
config it measures (metrics.l0_cycles), so that it ends by bytes written,
not by the clock.
"""
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from . import metrics
from .cluster import Cluster
from .metrics import Measurement
from .space import Candidate
from .store import SessionState
from .workload import BenchWorkload


@dataclass
class WindowSettings:
    warmup: float
    duration: float
    min_flushes: float
    max_window_factor: float
    extend_seconds: float  # a window too short for min_flushes grows by this much


class Window:
    def __init__(self, cluster: Cluster, osd: int, workload: Optional[BenchWorkload],
                 settings: WindowSettings, state: SessionState) -> None:
        self.cluster = cluster
        self.osd = osd
        self.workload = workload  # None: the canary's own client traffic (live)
        self.settings = settings
        self.s = state

    def _window(self) -> Dict[str, Any]:
        w = self.s['window']
        if w is None:
            raise ValueError('no window open')
        return w

    def begin(self, now: float) -> None:
        """The canary is up on the trial's options: the warm-up starts."""
        self.s['window'] = {'start': now, 'bytes': 0, 'bench_seconds': 0.0, 'before': None}

    def _drive(self, seconds: float) -> float:
        """Run the workload for about `seconds`; return the delay before the next step."""
        if self.workload is None:
            return max(0.0, seconds)
        w = self._window()
        nbytes, secs = self.workload.drive(seconds, self.s['iops_estimate'])
        if secs > 0:
            self.s['iops_estimate'] = nbytes / self.workload.block_size / secs
        w['bytes'] += nbytes
        w['bench_seconds'] += secs
        return 0

    def warmup(self, now: float, since: float) -> Tuple[bool, float]:
        """(warm-up over and the window open, delay before the next call)."""
        left = self.settings.warmup - (now - since)
        if left <= 0:
            self.s['window'] = {'start': now, 'bytes': 0, 'bench_seconds': 0.0,
                                'before': metrics.snapshot(self.cluster.perf_dump(self.osd))}
            return True, 0
        return False, min(self._drive(left), left)

    def measure(self, now: float, c: Candidate,
                compaction: bool = False) -> Tuple[Optional[Measurement], float]:
        """(the measurement once the window is done, delay before the next call);
        `compaction`: a confirmation window, which waits for a compaction cycle."""
        st = self.settings
        w = self._window()
        flush_bytes = c.write_buffer_size * c.min_write_buffer_number_to_merge
        trigger = c.level0_file_num_compaction_trigger
        cycles = 1.0 if compaction else 0.0
        elapsed = now - w['start']
        bench = self.workload is not None
        if elapsed < st.duration:
            return None, min(self._drive(st.duration - elapsed), st.duration - elapsed)
        if bench and not w['bench_seconds']:
            # the window's time went by before its first chunk (a slow step,
            # a busy mgr): a bench window with no bench measures nothing
            return None, self._drive(st.duration)
        after = metrics.snapshot(self.cluster.perf_dump(self.osd))
        covered = metrics.wal_bytes(w['before'], after) / flush_bytes
        short = covered < st.min_flushes or (
            compaction and metrics.l0_cycles(w['before'], after, flush_bytes, trigger) < cycles)
        if short and elapsed < st.duration * st.max_window_factor:
            # too little written to see this config's write-amp: extend
            return None, self._drive(st.extend_seconds)
        return metrics.measure(w['before'], after, seconds=elapsed, flush_bytes=flush_bytes,
                               min_flushes=st.min_flushes,
                               bench_bytes=w['bytes'] if bench else None,
                               bench_seconds=w['bench_seconds'] if bench else None,
                               trigger=trigger, min_cycles=cycles), 0
