"""The tuning session: its life (start, rescue, the commands, a failover) and
what it shows.  Design: doc/dev/internals.rst, dev-internals-session.
"""
import copy
import time
from dataclasses import asdict, replace
from typing import Any, Callable, Dict, List, Optional, Set

from . import session_start, views
from .canary import OPTIONS, SAVED
from .canary_osd import CanaryOsd, SessionLoad
from .cluster import Cluster
from .session_settings import Params, Settings, StartRefused
from .machine import Go, Machine, Move
from .restart import resume_after_failover
from .rocksdb_options import parse_options, parse_sharding
from .search import Search
from .session_phases import ENDING, MEASURING, MOVES, P, Phase, Phases, standing_changes
from .space import SearchSpace
from .store import ACTIVE, Ending, SessionState, StartRecord
from .trial import Trial
from .views import View
from .workload import CLEANUP_RETRY


class Session(Machine):
    kind = 'session'
    MOVES = MOVES
    END = P.END
    ACTIVE = ACTIVE

    def __init__(self, state: SessionState, cluster: Cluster,
                 save: Callable[[SessionState], None],
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(state, save, clock)
        self.s: SessionState = state
        self.cluster = cluster
        # the settings the session started with: a failover (or an option
        # changed since) does not change them mid-session
        self.settings = settings = state.settings
        self.params = state.params
        self.osd = state.osd
        self.release_default = state.release_default
        self.space = SearchSpace(compressions=settings.compressions,
                                 base=parse_options(state.base_options),
                                 column_families=parse_sharding(state.sharding))
        # the memtable cap; by default, what the release's own default may use
        default = SearchSpace.candidate_from_options(parse_options(self.release_default))
        self.space.max_memtable_bytes = settings.max_memtable_bytes or self.space.memtable_bytes(
            default.max_write_buffer_number, default.write_buffer_size)
        self.canary = CanaryOsd(cluster, self.osd, state.canary,
                                SessionLoad(state.client, state.id, state.seed), self.params,
                                settings, lambda: self._save(self.s), clock)
        self.search = Search(state, self.space, settings, self.params, self.release_default,
                             clock)
        self.phases: Phases = Phases(state, cluster, self.params, self.space, self.search,
                                     settings, self.canary, clock)
        self._shown: List[Trial] = []  # view(): the trials as last copied

    # ------------------------------------------------------------ creation

    @classmethod
    def start(cls, cluster: Cluster, params: Params, settings: Settings,
              save: Callable[[SessionState], None],
              clock: Callable[[], float] = time.time) -> 'Session':
        """A new session, persisted before any change.  StartRefused: it
        cannot start, nothing was changed or saved."""
        state = session_start.first_state(cluster, params, settings, clock())
        osd = state.osd
        try:
            session = cls(state, cluster, save, clock)
            session.space.base_candidate()
        except ValueError as e:
            raise StartRefused(
                f'osd.{osd} runs RocksDB options this module cannot tune from: {e}; change '
                f'that key where osd.{osd} gets it (ceph config get osd.{osd} '
                f'{OPTIONS}, or its _annex) to a value the module supports, or pick another '
                f'OSD with --osd')
        session_start.check_running(cluster, osd)
        save(state)  # the record of how to restore
        return session

    @staticmethod
    def check_state(state: SessionState) -> None:
        """Raise ValueError if a persisted session is not one this code wrote
        (what its fields' types say is checked as it is read: record.make)."""
        if not isinstance(state.settings, Settings):  # unreadable (StartRecord.from_json)
            raise ValueError('session state field \'settings\' is missing or malformed')
        if not isinstance(state.params.osd, int):
            raise ValueError('session state has no canary OSD')
        if not set(SAVED) == set(state.originals) == set(state.canary.originals):
            raise ValueError('session state has malformed saved originals')
        Phase(state.phase)

    @classmethod
    def rescue(cls, start: StartRecord, why: str, cluster: Cluster, settings: Settings,
               save: Callable[[SessionState], None],
               clock: Callable[[], float] = time.time) -> 'Session':
        """A session whose state is unreadable but whose start record is not:
        it restores the canary and ends failed (session_start.rescue_state)."""
        # unreadable settings: restoring needs few, the module's own do
        state = session_start.rescue_state(replace(start, settings=start.settings or settings),
                                           why, clock())
        cls.check_state(state)
        return cls(state, cluster, save, clock)

    # ------------------------------------------------------------ commands

    def _take(self, requests: Set[str]) -> None:
        s = self.s
        if 'abort' in requests and self.active:
            s.abort = True
            s.message = 'aborting: restoring the canary'
        elif 'stop' in requests and s.state == 'running':
            s.state = 'stopping'
            s.message = 'stopping after the trial in flight'

    def resume_after_failover(self) -> None:
        """A new mgr took over: a window in flight cannot be trusted, so it
        is redone (a round's measured redoes only its read probe).
        Deadlines start again on this mgr's clock."""
        cur = self.s.current
        if self.s.phase in MEASURING and cur is not None and not (
                self.phases.probes_reads(cur) and cur.measurement is not None):
            self._enter(P.APPLY, 'mgr restarted mid-trial: running the trial again')
            cur.measurement = None  # taken in the window that is redone
            self.canary.rec.window = None
        resume_after_failover(self.canary.rec, self.clock())
        super().resume_after_failover()
        self._persist()

    # ------------------------------------------------------------ the loop

    def _phase(self) -> Phase:
        return Phase(self.s.phase)

    def _interrupt(self, now: float) -> Optional[Move]:
        if self.s.abort and self.s.phase not in ENDING:
            return Go(P.RESTORE)
        return None

    def _after_error(self) -> None:
        # what the optimizer was told may be half done: rebuild it from the trials
        self.search.forget()

    def _give_up(self, error: str) -> Move:
        if self.s.phase in ENDING:
            return self.phases.fail(error)
        self.s.error = error
        return Go(P.RESTORE, error + '; restoring the canary')

    def _persist(self) -> bool:
        self.s.config_changes = standing_changes(self.canary)
        return super()._persist()

    def tidy(self) -> None:
        """An ended session whose client objects are not all removed (its pool
        was full or unhealthy at the end): another try, CLEANUP_RETRY apart."""
        c = self.s.client
        if self.active or not c or c.removed is not None \
                or self.clock() - (c.tried or 0) < CLEANUP_RETRY:
            return
        self.phases.remove_client_objects()
        self._persist()

    # ------------------------------------------------------------ views

    def view(self) -> View:
        """Copies for the other threads: each trial copied again only once it
        differs from its last copy (a step seldom changes one)."""
        trials, shown = self.s.trials, self._shown
        del shown[len(trials):]
        for i, t in enumerate(trials):
            if i >= len(shown) or shown[i] != t:
                shown[i:i + 1] = [copy.deepcopy(t)]
        record = copy.deepcopy(replace(self.s, trials=[]))
        record.trials = list(shown)
        said = self.time_said()
        return View(copy.deepcopy(self.status(said)), record, self.active, said)

    def progress_event(self) -> views.ProgressEvent:
        s = self.s
        return views.ProgressEvent(
            id=f'rocks-autotune-{s.id}', message=f'Tuning RocksDB on osd.{self.osd} '
            f'({s.phase})', progress=self.progress(), refs=[('osd', self.osd)],
            failure=(f'rocks_autotune {s.message}'
                     if s.state in (Ending.FAILED, Ending.ABORTED) else None))

    def progress(self) -> float:
        """Measurements done over those planned."""
        done = len(self.s.trials)
        return min(1.0, done / max(1, done + sum(self.search.left())))

    def time_said(self) -> views.TimeSaid:
        return self.search.time_said(self.canary.rec, self.canary.precondition is not None)

    def status(self, said: Optional[views.TimeSaid] = None) -> Dict[str, Any]:
        return dict(views.status_of(self.s, self.osd, self.progress(),
                                    sorted(self.health_checks()), self.release_default,
                                    self.space.max_memtable_bytes),
                    time=asdict(said or self.time_said()))
