"""A rollout (`apply`, `revert`): its life (start, abort, a failover) and what
it shows.  Design: doc/dev/internals.rst, dev-internals-rollout.
"""
import time
import uuid
from typing import Any, Callable, Dict, Optional, Set

from . import views
from .cluster import Cluster
from .health import osd_list
from .machine import Machine, Move
from .restart import resume_after_failover
from .rollout_phases import MOVES, P, Phase, RolloutPhases
from .rollout_plan import in_flight
from .rollout_record import ROLLOUT_VERSION, RolloutPlan, RolloutRecord, RolloutSettings


class Rollout(Machine):
    kind = 'rollout'
    MOVES = MOVES
    END = Phase.END
    ACTIVE = ('running',)

    def __init__(self, state: RolloutRecord, cluster: Cluster,
                 save: Callable[[RolloutRecord], None],
                 clock: Callable[[], float] = time.time) -> None:
        Phase(state.phase)  # ValueError: not a phase of this code's
        super().__init__(state, save, clock)
        self.r = state
        self.settings = state.settings
        self.phases: RolloutPhases = RolloutPhases(state, cluster, save, clock)

    @classmethod
    def begin(cls, plan: RolloutPlan, settings: RolloutSettings, cluster: Cluster,
              save: Callable[[RolloutRecord], None],
              clock: Callable[[], float] = time.time) -> 'Rollout':
        """Persist a new rollout (StoreError: not saved, nothing changed)."""
        now = clock()
        state = RolloutRecord(**vars(plan), version=ROLLOUT_VERSION, id=str(uuid.uuid4()),
                              phase=P.CHECK.value, started=now, phase_started=now,
                              settings=settings)
        save(state)
        return cls(state, cluster, save, clock)

    def resume_after_failover(self) -> None:
        """A new active mgr took over: deadlines start again on its own clock."""
        for f in self.r.batch:
            resume_after_failover(f, self.clock())
        super().resume_after_failover()

    def _phase(self) -> Phase:
        return Phase(self.r.phase)

    def _take(self, requests: Set[str]) -> None:
        if 'abort' in requests and not self.r.abort:
            self.r.abort = True
            self.r.message = f'aborting: stopping after {in_flight(self.r.max_parallel)}'

    def _interrupt(self, now: float) -> Optional[Move]:
        r = self.r
        if r.abort and self._phase() in (P.CHECK, P.NEXT):
            return self.phases.end('aborted',
                                   'aborted' + ('' if r.changed else ': nothing was changed'))
        return None

    def _give_up(self, error: str) -> Move:
        return self.phases.end('failed', error)

    def progress_event(self) -> views.ProgressEvent:
        r = self.r
        what = ('Rolling out RocksDB options to' if r.kind == 'apply' else
                'Reverting the RocksDB options of')
        done = sum(o.status in ('done', 'failed') for o in r.osds)
        flying = [r.osds[f.i].osd for f in r.batch if r.osds[f.i].status == 'restarting']
        return views.ProgressEvent(
            id=f'rocks-autotune-{r.kind}-{r.id}',
            message=f'{what} {r.target} ({done}/{len(r.osds)} OSDs'
            + (f'; in flight: {osd_list(flying)})' if r.max_parallel > 1 and flying else ')'),
            # Ceph's own events name an object or two: a big rollout names none
            progress=self.progress(),
            refs=[('osd', o.osd) for o in r.osds] if len(r.osds) <= views.SHOWN else [],
            failure=f'rocks_autotune {r.message}' if r.state in ('failed', 'aborted') else None)

    def progress(self) -> float:
        """The share of OSDs on the options set (a failed one is not: it was put back)."""
        osds = self.r.osds
        return sum(o.status == 'done' for o in osds) / len(osds) if osds else 1.0

    def status(self, every: bool = False) -> Dict[str, Any]:
        return views.rollout_status(self.r, self.progress(), sorted(self.health_checks()), every)
