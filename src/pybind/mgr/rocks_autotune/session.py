"""The tuning session: a persisted state machine driven by `step()`.

Each call to `step()` does one short piece of work (a config change, one
bench chunk, one poll) and returns how long to wait before the next call, so
the mgr's serve loop stays responsive and the unit tests run it against a
fake cluster and a fake clock.  The whole state is a JSON-able dict, saved
after every step (and before a restart is issued); a new active mgr rebuilds
the session (and its optimizer, by replaying the recorded trials) from it.

A trial:  next -> apply -> restart -> wait_up -> warmup -> measure -> next
(the first baseline's, under the client load: wait_up -> precondition -> warmup)
Then the confirmation (confirm.py): the top candidates by the model and the
baseline, round after round, each measurement a trial of kind `confirm`:
          confirm -> apply -> restart -> wait_up -> warmup -> measure -> confirm
The end:  restore -> restore_wait -> end (done | stopped | aborted | failed)

Every move between phases is in MOVES and checked.  Every restart of the
canary goes through restart.Restarter and its gate.  The canary's original
config is saved before the first change; every path that ends a session
goes through `restore`, except `_fail` when restoring itself cannot go on.

The session also keeps what config reached the canary at its start
(`config_seen`).  Before a trial's restart, a change someone else made since
(at osd.N, or at a mask above it) pauses the session
(ROCKS_AUTOTUNE_CONFIG_CHANGED) until it is reverted; `abort` ends it, and
after unhealthy_timeout it ends failed.  The restore leaves someone else's
value at osd.N in place, and says so.
"""
import copy
import logging
import math
from statistics import median
import os
import time
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from . import (confirm, crashes, health, measurement_plan, options, perf_counters, power,
               session_start, views)
from .canary import OPTIONS, SAVED, Canary, ours
from .cluster import Cluster, ClusterError
from .confirm import BASELINE, Confirmation
from .gate import Params, StartRefused, look
from .machine import Handler, Machine
from .options import default
from .perf_counters import Baseline, Measurement
from .restart import Outcome, Restarter, Result, resume_after_failover
from .rocksdb_options import (COMPRESSIONS, NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT,
                              parse_options, parse_sharding)
from .space import Candidate, SearchSpace
from .store import STATE_VERSION, Ending, SessionState, StartRecord
from .views import View
from .window import (Precondition, Window, WindowSettings, confirmation_length, fill_rate,
                     steady_window)
from .workload import (BENCH_LIMIT_OPTION, BENCH_LIMIT_VALUE, CLIENT, NAMESPACE, OSD_BENCH,
                       BenchWorkload, ClientWorkload, LazyClientWorkload, Workload, client_objects)

log = logging.getLogger(__name__)

ACTIVE = ('running', 'stopping', 'restoring')
# the client workload's objects: their names are found (hashing names until
# enough land in the canary's PGs) and held in the mgr
MAX_CLIENT_OBJECTS = 65536


class Phase(str, Enum):
    PREPARE = 'prepare'
    NEXT = 'next'                  # pick the next trial, or the confirmation
    CONFIRM = 'confirm'            # pick the next confirmation measurement, or the end
    APPLY = 'apply'                # health look, then the trial's config
    RESTART = 'restart'            # the gate, then the restart
    WAIT_UP = 'wait_up'            # up on the options set, PGs clean
    PRECONDITION = 'precondition'  # the first baseline's: the DB written to a steady state
    WARMUP = 'warmup'
    MEASURE = 'measure'
    # a trial failed (its candidate broke the canary): back on the originals
    RECOVER = 'recover'                  # the originals' config (no health wait)
    RECOVER_RESTART = 'recover_restart'  # the gate, then the restart
    RECOVER_WAIT = 'recover_wait'        # up on the originals, then the next trial
    RESTORE = 'restore'            # the originals' config, at once
    RESTORE_WAIT = 'restore_wait'  # the gated restart onto them
    END = 'end'


P = Phase
# the allowed moves, each taken by a unit test (tests/unit/conftest.py).  An
# abort (or repeated errors) goes to restore from any phase before it; the end
# comes only through restore, or through _fail where putting the canary back
# on its originals cannot go on (a recovery's restart failed or timed out)
MOVES: Dict[Phase, Tuple[Phase, ...]] = {
    P.PREPARE: (P.NEXT, P.RESTORE),
    P.NEXT: (P.APPLY, P.CONFIRM, P.RESTORE),
    P.CONFIRM: (P.APPLY, P.RESTORE),
    P.APPLY: (P.RESTART, P.RESTORE),
    # recover: the canary did not start on the candidate
    P.RESTART: (P.WAIT_UP, P.RECOVER, P.RESTORE),
    # recover: it did not come up on it in time
    P.WAIT_UP: (P.PRECONDITION, P.WARMUP, P.RECOVER, P.RESTORE),
    # recover: the load failed (the trial did)
    P.PRECONDITION: (P.WARMUP, P.RECOVER, P.RESTORE),
    # apply: the window is redone after a failover; recover: the trial failed
    P.WARMUP: (P.MEASURE, P.APPLY, P.RECOVER, P.RESTORE),
    P.MEASURE: (P.NEXT, P.CONFIRM, P.APPLY, P.RECOVER, P.RESTORE),
    P.RECOVER: (P.RECOVER_RESTART, P.RESTORE),
    # end: the recovery's own restart failed
    P.RECOVER_RESTART: (P.RECOVER_WAIT, P.RESTORE, P.END),
    # next or confirm: recovered; end: not up on the originals in time
    P.RECOVER_WAIT: (P.NEXT, P.CONFIRM, P.RESTORE, P.END),
    P.RESTORE: (P.RESTORE_WAIT, P.END),
    P.RESTORE_WAIT: (P.END,),
    P.END: (),
}
MEASURING = (P.WARMUP.value, P.MEASURE.value)
ENDING = (P.RESTORE.value, P.RESTORE_WAIT.value, P.END.value)


@dataclass
class Settings:
    """Module options that shape a session: their defaults, bounds and help
    are declared once, in options.py."""
    warmup: float = default('warmup')
    baseline_runs: int = default('baseline_runs')
    min_flushes: float = default('min_flushes')
    max_window_factor: float = default('max_window_factor')
    steady_window_limit: float = default('steady_window_limit')
    precondition_limit: float = default('precondition_limit')
    restart_timeout: float = default('restart_timeout')
    manual_restart_timeout: float = default('manual_restart_timeout')
    unhealthy_timeout: float = default('unhealthy_timeout')
    on_failure: str = default('on_failure')
    max_memtable_bytes: int = default('max_memtable_bytes')
    compressions: Tuple[str, ...] = default('compressions')
    bench_object_size: int = default('bench_object_size')
    bench_object_num: int = default('bench_object_num')
    bench_chunk_seconds: float = default('bench_chunk_seconds')
    client_pool: str = default('client_pool')
    client_space: int = default('client_space')
    client_object_size: int = default('client_object_size')
    client_threads: int = default('client_threads')
    seed: int = default('seed')
    confirm_candidates: int = default('confirm_candidates')
    confirm_rounds: int = default('confirm_rounds')
    confirm_margin: float = default('confirm_margin')
    detect: float = default('detect')
    inject_options: str = default('inject_options')  # test hook: appended to every candidate
    poll: float = 2.0  # not an option: how often a step waiting on the cluster looks again

    def validate(self) -> None:
        """ValueError naming the first setting a session cannot run with."""
        unknown = [c for c in self.compressions if c not in COMPRESSIONS]
        if unknown or not self.compressions:
            raise ValueError(f'compressions must be a non-empty list of '
                             f'{", ".join(COMPRESSIONS)}, not {",".join(self.compressions)!r}')
        options.check(self)
        if not (isinstance(self.poll, (int, float)) and math.isfinite(self.poll)
                and self.poll >= 0):
            raise ValueError(f'poll must be a non-negative number, not {self.poll!r}')
        if self.client_object_size > self.client_space:
            raise ValueError('client_object_size must be at most client_space')
        if self.client_space // self.client_object_size > MAX_CLIENT_OBJECTS:
            raise ValueError(f'client_space / client_object_size must be at most '
                             f'{MAX_CLIENT_OBJECTS} objects')

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> 'Settings':
        """The settings a session saved at its start; ValueError when malformed."""
        names = {f.name for f in fields(cls)}
        kwargs: Dict[str, Any] = {k: (tuple(v) if k == 'compressions' else v)
                                  for k, v in d.items() if k in names}
        try:
            st = cls(**kwargs)
        except TypeError as e:
            raise ValueError(f'saved settings are malformed: {e}')
        st.validate()
        return st


@dataclass
class Trial:
    index: int
    kind: str  # baseline | candidate | confirm
    candidate: Dict[str, Any]
    options: str
    verdict: str = ''  # baseline | feasible | infeasible | measured (confirm) | failed
    measurement: Optional[Dict[str, Any]] = None
    score: Optional[float] = None
    told: Optional[float] = None  # what the optimizer was told; None = failed
    error: str = ''
    started: float = 0.0
    seconds: float = 0.0
    crashes: List[str] = field(default_factory=list)  # a failed trial's crashes of the canary
    round: Optional[int] = None  # a confirmation measurement's round (0-based) and arm
    arm: str = ''
    osd: Optional[int] = None  # the canary that ran it (None: recorded before it was kept)


class Session(Machine):
    kind = 'session'
    MOVES = MOVES
    ACTIVE = ACTIVE

    def __init__(self, state: SessionState, cluster: Cluster, settings: Settings,
                 save: Callable[[SessionState], None],
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(state, save, clock)
        self.s: SessionState = state
        self.cluster = cluster
        # the settings the session started with: a failover (or an option
        # changed since) does not change them mid-session
        if state.get('settings') is not None:
            settings = Settings.from_dict(state['settings'])
        state['settings'] = asdict(settings)
        self.settings = settings
        self.osd: int = state['params']['osd']
        self.params = Params(**state['params'])
        self.canary = Canary(cluster, self.osd)
        # sessions saved before the release was read from the cluster ran on Pacific
        self.release_default: str = state.get('release_default', PACIFIC_DEFAULT)
        families = parse_sharding(state.get('sharding', ''))
        self.space = SearchSpace(compressions=settings.compressions,
                                 base=parse_options(state['base_options']),
                                 column_families=families)
        # the memtable cap; by default, what the release's own default may use
        default = SearchSpace.candidate_from_options(parse_options(self.release_default))
        self.space.max_memtable_bytes = settings.max_memtable_bytes or self.space.memtable_bytes(
            default.max_write_buffer_number, default.write_buffer_size)
        self.restarter = Restarter(cluster, self.osd, state, lambda: self._save(self.s),
                                   settings.restart_timeout, settings.manual_restart_timeout,
                                   single_copy_ok=self.params.allow_single_copy)
        workload: Optional[Workload] = None
        self.precondition: Optional[Precondition] = None
        if self.params.workload == OSD_BENCH:
            workload = BenchWorkload(cluster, self.osd, object_size=settings.bench_object_size,
                                     object_num=settings.bench_object_num,
                                     chunk_seconds=settings.bench_chunk_seconds)
        elif self.params.workload == CLIENT:
            client = LazyClientWorkload(lambda: self._client_workload())
            workload = client
            self.precondition = Precondition(cluster, self.osd, client,
                                             settings.precondition_limit, state)
        self.window = Window(cluster, self.osd, workload, WindowSettings(
            warmup=settings.warmup, duration=self.params.duration,
            min_flushes=settings.min_flushes, max_window_factor=settings.max_window_factor,
            extend_seconds=settings.bench_chunk_seconds), state)
        self._optimizer: Any = None

    def _client_workload(self) -> ClientWorkload:
        """The client load, built on its first chunk (its names are hashed, its
        pool opened: not on the path that loads a session)."""
        c = self.s.get('client')
        if c is None:
            raise ValueError('a client session without its client record')
        st = self.settings
        names = client_objects(f'{self.s["id"][:8]}', c['count'], c['pg_num'], c['seeds'])
        return ClientWorkload(self.cluster.client_io(c['pool'], NAMESPACE), names,
                              st.client_object_size, threads=st.client_threads,
                              chunk_seconds=st.bench_chunk_seconds, seed=self.s['seed'],
                              clock=self.clock)

    def _remove_client_objects(self) -> None:
        """The client load's objects go with the session (kept: how many went)."""
        c = self.s.get('client')
        if not c or c.get('removed') is not None:
            return
        try:
            c['removed'] = ClientWorkload(self.cluster.client_io(c['pool'], NAMESPACE), [],
                                          self.settings.client_object_size).cleanup()
        except ClusterError as e:
            log.warning('removing the client workload\'s objects failed: %s', e)
            c['remove_error'] = str(e)

    @property
    def optimizer(self) -> Any:
        """The optimizer, rebuilt on first use by replaying the recorded trials.

        Built lazily, and so only from step() in the mgr's serve thread: scipy's
        pybind11 extensions call PyGILState_Ensure, which deadlocks in a mgr
        sub-interpreter on a thread whose GIL state belongs to another
        interpreter (the mgr's main thread, or a shared command thread).
        """
        if self._optimizer is None:
            # one BLAS thread: the GP is small, and the mgr shares its host's
            # cores with the OSDs (threads made fits ~8x slower under load)
            os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
            os.environ.setdefault('OMP_NUM_THREADS', '1')
            from .optimizer import TrialOptimizer
            warm = [self.space.base_candidate()] + [
                self.space.candidate_from_options(parse_options(p))
                for p in (self.release_default, NEW_TUNING, NEW_TUNING_LZ4)]
            opt = TrialOptimizer(self.space, seed=self.s['seed'], warm_start=warm)
            # a failed baseline run says nothing about the options themselves
            opt.replay([(Candidate.from_dict(t['candidate']), t['told'])
                        for t in self.s['trials']
                        if t['kind'] == 'candidate' or t['told'] is not None])
            self._optimizer = opt
        return self._optimizer

    # ------------------------------------------------------------ creation

    @classmethod
    def start(cls, cluster: Cluster, params: Params, settings: Settings,
              save: Callable[[SessionState], None],
              clock: Callable[[], float] = time.time) -> 'Session':
        """Validate, save the canary's originals, and persist a new session.

        Raises StartRefused (nothing changed, nothing saved) when the session
        cannot start: everything the session will read of its start is
        checked before the first save.
        """
        state = session_start.first_state(cluster, params, settings, clock())
        osd = state['params']['osd']
        try:
            session = cls(state, cluster, settings, save, clock)
            session.space.base_candidate()
        except ValueError as e:
            raise StartRefused(
                f'osd.{osd} runs RocksDB options this module cannot tune from: {e}; change '
                f'that key where osd.{osd} gets it (ceph config get osd.{osd} '
                f'{OPTIONS}, or its _annex) to a value the module supports, or pick another '
                f'OSD with --osd')
        session_start.check_running(cluster, osd)
        # persisted before the first change: the record of how to restore
        save(state)
        return session

    @staticmethod
    def check_state(state: Any) -> None:
        """Raise ValueError if a persisted session is not one this code wrote."""
        if not isinstance(state, dict) or state.get('version') != STATE_VERSION:
            raise ValueError('session state has an unknown format')
        for key, typ in (('state', str), ('phase', str), ('params', dict), ('originals', dict),
                         ('base_options', str), ('trials', list), ('seed', int),
                         ('alerts', dict), ('noout_ours', bool), ('running_dirty', bool)):
            if not isinstance(state.get(key), typ):
                raise ValueError(f'session state field {key!r} is missing or malformed')
        if set(state['originals']) != set(SAVED) or not all(
                v is None or isinstance(v, str) for v in state['originals'].values()):
            raise ValueError('session state has malformed saved originals')
        if not isinstance(state['params'].get('osd'), int):
            raise ValueError('session state has no canary OSD')
        for t in state['trials']:
            Candidate.from_dict(t['candidate'])
        Phase(state['phase'])
        seen = state.get('config_seen')
        if seen is not None and not (isinstance(seen, dict) and all(
                isinstance(v, dict) for v in seen.values())):
            raise ValueError('session state field \'config_seen\' is malformed')
        if state.get('settings') is not None:
            Settings.from_dict(state['settings'])

    @classmethod
    def rescue(cls, start: StartRecord, why: str, cluster: Cluster, settings: Settings,
               save: Callable[[SessionState], None],
               clock: Callable[[], float] = time.time) -> 'Session':
        """A session whose state is unreadable but whose start record is not:
        restore the canary (config, the gated restart: it may run a
        candidate, the noout it may have set) and end failed."""
        state = session_start.rescue_state(start, why, clock())
        cls.check_state(state)
        return cls(state, cluster, settings, save, clock)

    # ------------------------------------------------------------ commands

    def request_stop(self) -> None:
        """Finish the trial in flight, then restore; seen at the next step."""
        self.request('stop')

    def request_abort(self) -> None:
        """Restore now; seen at the next step (a step in flight ends first)."""
        self.request('abort')

    def _take(self, requests: Set[str]) -> None:
        s = self.s
        if 'abort' in requests and self.active:
            s['abort'] = True
            s['message'] = 'aborting: restoring the canary'
        elif 'stop' in requests and s['state'] == 'running':
            s['state'] = 'stopping'
            s['message'] = 'stopping after the trial in flight'

    def resume_after_failover(self) -> None:
        """A new mgr took over: a window in flight cannot be trusted; redo it.
        Deadlines start again on this mgr's clock (restart.resume_after_failover)."""
        if self.s['phase'] in MEASURING and self.s['current'] is not None:
            self._enter(P.APPLY, 'mgr restarted mid-trial: running the trial again')
            self.s['window'] = None
        now = self.clock()
        resume_after_failover(self.s, now)
        if self.s['paused_since'] is not None:
            self.s['paused_since'] = now
        self._persist()

    # ------------------------------------------------------------ the loop

    def _phase(self) -> Phase:
        return Phase(self.s['phase'])

    def _poll(self) -> float:
        return self.settings.poll

    def _interrupt(self, now: float) -> Optional[float]:
        if self.s['abort'] and self.s['phase'] not in ENDING:
            self._enter(P.RESTORE)
            return 0
        return None

    def _after_error(self) -> None:
        # what the optimizer was told may be half done: rebuild it from the trials
        self._optimizer = None

    def _give_up(self, error: str) -> None:
        if self.s['phase'] in ENDING:
            self._fail(error)
        else:
            self.s['error'] = error
            self._enter(P.RESTORE, error + '; restoring the canary')

    def _handlers(self) -> Dict[Any, Handler]:
        return {P.PREPARE: self._prepare, P.NEXT: lambda now: self._next_trial(),
                P.CONFIRM: lambda now: self._next_confirmation(), P.APPLY: self._apply,
                P.RESTART: self._restart, P.WAIT_UP: self._wait_up,
                P.PRECONDITION: self._precondition, P.WARMUP: self._warmup,
                P.MEASURE: self._measure, P.RECOVER: self._recover,
                P.RECOVER_RESTART: self._recover_restart, P.RECOVER_WAIT: self._recover_wait,
                P.RESTORE: self._restore, P.RESTORE_WAIT: self._restore_wait}

    def _prepare(self, now: float) -> float:
        if self.params.workload == OSD_BENCH:
            self.canary.set_bench_limit(BENCH_LIMIT_VALUE)
        # RocksDB's own flush and compaction figures, from the first restart on
        self.canary.collect_rocksdb_stats()
        self._enter(P.NEXT)
        return self._next_trial()

    def _next_trial(self) -> float:
        s = self.s
        if s['state'] == 'stopping':
            self._enter(P.RESTORE, 'stopped by request; restoring the canary')
            return 0
        done = [t for t in s['trials'] if t['verdict'] == 'baseline']
        cands = [t for t in s['trials'] if t['kind'] == 'candidate']
        if len(done) < self.settings.baseline_runs:
            c = self.space.base_candidate()
            trial = Trial(index=len(s['trials']), kind='baseline', candidate=c.to_dict(),
                          options=s['base_options'], osd=self.osd)
        elif len(cands) < self.params.trials:
            c = self.optimizer.ask()
            options = self.space.render(self.space.base, c)
            if self.settings.inject_options:
                options += ',' + self.settings.inject_options
            trial = Trial(index=len(s['trials']), kind='candidate', candidate=c.to_dict(),
                          options=options, osd=self.osd)
        else:
            self._plan_confirmation()
            self._enter(P.CONFIRM, 'search done: confirming its best candidates')
            return self._next_confirmation()
        trial.started = self.clock()
        s['current'] = asdict(trial)
        self._enter(P.APPLY, f'trial {trial.index}: {trial.kind}')
        return 0

    def _plan_for_noise(self, runs: List[Measurement]) -> None:
        """The noise the baseline's A/A pairs measured, and what a
        confirmation can see at it: said before the search starts."""
        s = self.s
        st = self.settings
        key = perf_counters.OBJECTIVES[self.params.workload][0]
        noise = power.aa_noise([getattr(m, key) for m in runs])
        if noise is None:
            s['noise'] = None
            return
        design = power.design(noise['sd'], st.confirm_candidates, st.confirm_rounds,
                              st.confirm_margin, st.detect, options.MAX_CONFIRM_ROUNDS)
        said = dict(noise, objective=key, window=median(m.seconds for m in runs),
                    design=design,
                    plan=power.plan(noise['sd'], design['rounds'], st.confirm_margin,
                                    st.detect, options.MAX_CONFIRM_ROUNDS,
                                    design['candidates']))
        s['noise'] = said
        log.info('osd.%d: %s', self.osd, views.noise_line(said))

    # ------------------------------------------------------------ confirmation

    def _confirmation(self) -> Confirmation:
        return Confirmation(self.s, self.params.budget)

    def _plan_confirmation(self) -> None:
        """The top candidates by the model's posterior mean: feasible search
        trials (one per config, the current options left out: they are the
        baseline every round measures)."""
        s = self.s
        base = self.space.base_candidate().to_dict()
        feasible = [t for t in s['trials']
                    if t['kind'] == 'candidate' and t['verdict'] == 'feasible'
                    and t['candidate'] != base]
        # the finalists and rounds the noise asks for (as asked with none measured)
        design = (s.get('noise') or {}).get('design') or power.design(
            None, self.settings.confirm_candidates, self.settings.confirm_rounds,
            self.settings.confirm_margin, self.settings.detect, options.MAX_CONFIRM_ROUNDS)
        ranked = self.optimizer.rank([Candidate.from_dict(t['candidate']) for t in feasible],
                                     design['candidates'])
        first: Dict[Candidate, Dict[str, Any]] = {}
        for t in feasible:
            first.setdefault(Candidate.from_dict(t['candidate']), t)
        s['confirm'] = confirm.plan([(first[c], mean) for c, mean in ranked],
                                    design['rounds'], self.settings.confirm_margin,
                                    self.params.workload, measurement_plan.sequential(self.osd))
        s['confirm']['design'] = design

        def windows(c: Dict[str, Any]) -> List[Measurement]:
            return [Measurement.from_dict(t['measurement']) for t in s['trials']
                    if t['candidate'] == c and t.get('measurement')]
        compared = [base] + [first[c]['candidate'] for c, _ in ranked]
        s['confirm']['window'] = confirmation_length(
            [(Candidate.from_dict(c), windows(c)) for c in compared],
            self.params.duration, self.settings.steady_window_limit)
        self._confirmation().update()

    def _next_confirmation(self) -> float:
        s = self.s
        if s['state'] == 'stopping':
            self._enter(P.RESTORE, 'stopped by request; restoring the canary')
            return 0
        conf = self._confirmation()
        nxt = conf.next()
        if nxt is None:
            result = conf.update(complete=True)
            self._enter(P.RESTORE, 'confirmation done: ' + views.answer_line(result)
                        + '; restoring the canary')
            return 0
        r, window = nxt
        if len(window) != 1 or window[0].osd != self.osd:
            # a plan of several canaries (measurement_plan.duet) is not run yet
            raise ValueError(f'this session measures osd.{self.osd} alone, not {window}')
        arm = window[0].arm
        if arm == BASELINE:
            candidate, options = self.space.base_candidate().to_dict(), s['base_options']
        else:
            a = conf.arm(arm)
            candidate, options = a['candidate'], a['options']
        trial = Trial(index=len(s['trials']), kind='confirm', candidate=candidate,
                      options=options, round=r, arm=arm, started=self.clock(), osd=self.osd)
        s['current'] = asdict(trial)
        self._enter(P.APPLY, f'confirmation round {r + 1}/{s["confirm"]["rounds"]}: '
                    + ('the baseline' if arm == BASELINE else f'candidate {arm} '
                       f'(trial {conf.arm(arm)["trial"]})'))
        return 0

    def _confirmation_length(self) -> Optional[float]:
        """The confirmation's one window length (None for a search window); a
        confirmation planned before it was recorded takes the cap."""
        if self._cur()['kind'] != 'confirm':
            return None
        length = self.s['confirm'].get('window')
        return float(length) if length else self.params.duration * self.settings.max_window_factor

    def _after_trial(self) -> float:
        """What comes after a trial (or its recovery): the search's next, or
        the confirmation's."""
        if self.s.get('confirm') is None:
            self._enter(P.NEXT)
            return self._next_trial()
        self._enter(P.CONFIRM)
        return self._next_confirmation()

    def _cur(self) -> Dict[str, Any]:
        """The trial in flight: every trial phase has one."""
        cur = self.s['current']
        if cur is None:
            raise ValueError(f'no trial in flight in phase {self.s["phase"]}')
        return cur

    @staticmethod
    def _runs_candidate(cur: Dict[str, Any]) -> bool:
        """The trial sets a candidate's options (else the canary's own run)."""
        return cur['kind'] == 'candidate' or (cur['kind'] == 'confirm'
                                              and cur.get('arm') != BASELINE)

    def _pause(self, now: float, reasons: List[str], config_changed: bool = False) -> float:
        """The cluster is unhealthy for reasons that are not the canary's, or
        someone else changed the canary's config: wait.

        Aborts (restoring the canary) once it has lasted unhealthy_timeout.
        """
        s = self.s
        since = now if s['paused_since'] is None else float(s['paused_since'])
        s['paused_since'] = since
        why = 'config changed by someone else' if config_changed else 'cluster stayed unhealthy'
        if now - since > self.settings.unhealthy_timeout:
            s['alerts'].pop('PAUSED', None)
            s['alerts'].pop('CONFIG_CHANGED', None)
            s['error'] = f'{why}: ' + '; '.join(reasons)
            s['abort'] = True
            self._enter(P.RESTORE, f'{why}; restoring the canary')
            return 0
        timeout = (f'the session aborts and restores osd.{self.osd} '
                   f'if this lasts {self.settings.unhealthy_timeout:.0f}s')
        if config_changed:
            s['message'] = 'paused: config changed by someone else: ' + '; '.join(reasons)
            s['alerts'].pop('PAUSED', None)  # health is looked at once this is resolved
            s['alerts']['CONFIG_CHANGED'] = health.raised('CONFIG_CHANGED', reasons + [
                'every trial is built on the options in effect when the session started',
                'revert the change to go on, or end the session with `ceph '
                'rocks-autotune abort` (its restore leaves the change in place); '
                + timeout], osd=self.osd)
        else:
            s['message'] = 'paused: ' + '; '.join(reasons)
            s['alerts']['PAUSED'] = health.raised('PAUSED', reasons + [timeout])
        return max(self.settings.poll, 5.0)

    def _unpause(self) -> None:
        self.s['paused_since'] = None
        self.s['alerts'].pop('PAUSED', None)
        self.s['alerts'].pop('CONFIG_CHANGED', None)

    def _foreign(self) -> Set[str]:
        """Look for someone else's config changes since the start (kept in
        `config_changes`); the names at osd.N that someone else holds.  A
        session that does not know what was there (rescued, or saved by an
        older version) sees none."""
        seen = self.s.get('config_seen')
        if seen is None:
            return set()
        s = self.s
        cur = s['current']
        applied = [o for o in (s.get('last_applied'), cur['options'] if cur is not None
                               and self._runs_candidate(cur) else None) if o is not None]
        s['config_changes'], held = self.canary.foreign(seen, ours(
            s['originals'], applied, s['annexed'], self.params.workload == OSD_BENCH))
        return held

    def _config_pause(self, now: float) -> Optional[float]:
        """Before a trial's restart: paused while someone else's change stands
        (the candidates embed the base of the start); None to go on."""
        self._foreign()
        if self.s['config_changes']:
            return self._pause(now, self.s['config_changes'], config_changed=True)
        self.s['alerts'].pop('CONFIG_CHANGED', None)
        return None

    def _apply(self, now: float) -> float:
        s = self.s
        cur = self._cur()
        if self._stale_noout():
            return self.settings.poll
        paused = self._config_pause(now)
        if paused is not None:
            return paused
        reasons = self._look()
        if reasons:
            return self._pause(now, reasons)
        self._unpause()
        if self._runs_candidate(cur):
            s['last_applied'] = cur['options']
            self.canary.apply(cur['options'], s['annexed'])
        else:
            self._originals(set())
        # the restart's purpose: whether the process may load a candidate
        self.restarter.begin('candidate' if self._runs_candidate(cur) else 'baseline', now)
        self._enter(P.RESTART)
        return 0

    def _stale_noout(self) -> bool:
        """Our noout, left by a step a failed-over mgr did not finish, is
        cleared: only a restart needs it, and our own flag must not read as
        an unhealthy cluster."""
        if self.s['noout_ours'] and self.cluster.has_noout(self.osd):
            self.restarter.clear_noout()
            return True
        return False

    def _originals(self, held: Set[str]) -> None:
        """The canary's own config, as a baseline or a recovery runs it,
        but for the names someone else holds."""
        s = self.s
        self.canary.restore(s['originals'], held)
        if s['params']['workload'] == OSD_BENCH and BENCH_LIMIT_OPTION not in held:
            self.canary.set_bench_limit(BENCH_LIMIT_VALUE)
        # every window measures with RocksDB's figures on, the baseline's too
        if 'rocksdb_perf' in s['originals']:
            self.canary.collect_rocksdb_stats(held)

    def _restart(self, now: float) -> float:
        cur = self._cur()
        # the gate may have held the restart back for a while
        paused = self._config_pause(now)
        if paused is not None:
            return paused
        try:
            r = self.restarter.step(now)
        except ClusterError as e:
            if self._runs_candidate(cur):
                # an OSD that will not start on the candidate fails the restart
                self._trial_failed(f'restart on the candidate failed: {e}')
            else:
                self.s['error'] = f'restart failed: {e}'
                self._enter(P.RESTORE, f'restart failed: {e}')
            return 0
        if r.outcome.held:
            return self._pause(now, r.reasons)
        self._unpause()
        self._enter(P.WAIT_UP, f'trial {cur["index"]}: waiting for osd.{self.osd}')
        return self.settings.poll

    def _wait_up(self, now: float) -> float:
        s = self.s
        cur = self._cur()
        r = self.restarter.step(now)
        if r.outcome == Outcome.UP:
            self._unpause()
            if self.precondition is not None and not (s.get('precondition') or {}).get('done'):
                self.precondition.begin()
                self._enter(P.PRECONDITION, f'trial {cur["index"]}: writing the canary\'s DB '
                            'into a steady state before the first window')
                return 0
            self.window.begin(now)
            self._enter(P.WARMUP, f'trial {cur["index"]}: warming up')
            return 0
        return self._not_up_yet(now, r, lambda timeout: self._trial_failed(
            f'osd.{self.osd} did not come back up running the options set within '
            f'{timeout:.0f}s'))

    def _not_up_yet(self, now: float, r: Result, not_up: Callable[[float], None]) -> float:
        """A restart that has not come to UP: paused while another OSD keeps
        PGs from clean (the canary runs: pause, not fail), polled while it
        waits; PGs not clean in time abort the session; not up in time is
        `not_up`'s (given the timeout): a failed trial, or a failed recovery."""
        if r.outcome.held:
            return self._pause(now, r.reasons)
        self._unpause()
        if r.outcome == Outcome.WAITING:
            return self.settings.poll
        timeout = self.restarter.timeout()
        if r.outcome == Outcome.NOT_CLEAN_IN_TIME:
            self.s['error'] = (f'PGs did not become active+clean within '
                               f'{timeout:.0f}s of restarting osd.{self.osd}')
            self.s['abort'] = True
            self._enter(P.RESTORE, self.s['error'])
        else:
            not_up(timeout)
        return 0

    # -- a failed trial's recovery: the canary back on its originals.  It
    # does not wait for health (its canary may be down), only for the restart
    # gate; nor for a config change (the next trial pauses on it), which it
    # leaves in place

    def _recover(self, now: float) -> float:
        if self._stale_noout():
            return self.settings.poll
        self._originals(self._foreign())
        self.restarter.begin('recovery', now)
        self._enter(P.RECOVER_RESTART)
        return 0

    def _restart_back(self, now: float) -> Optional[Result]:
        """A step of the restart onto the canary's originals (a recovery's
        or the restore's); None once a failed restart ended the session."""
        try:
            return self.restarter.step(now)
        except ClusterError as e:
            self._fail(f'config restored, but restarting osd.{self.osd} failed: {e}; '
                       f'restart it to load its original options')
            return None

    def _recover_restart(self, now: float) -> float:
        r = self._restart_back(now)
        if r is None:
            return 0
        if r.outcome.held:
            return self._pause(now, r.reasons)
        self._unpause()
        self._enter(P.RECOVER_WAIT, f'trial {self._cur()["index"]} failed: waiting for '
                    f'osd.{self.osd} on its original options')
        return self.settings.poll

    def _recover_wait(self, now: float) -> float:
        s = self.s
        r = self.restarter.step(now)
        if r.outcome == Outcome.UP:
            self._unpause()
            s['alerts'].pop('TRIAL_FAILED', None)
            s['current'] = None
            if self.settings.on_failure == 'stop':
                s['state'] = 'stopping'
            return self._after_trial()
        return self._not_up_yet(now, r, lambda timeout: self._fail(
            f'osd.{self.osd} did not come back on its original options within '
            f'{timeout:.0f}s; its config is restored'))

    def _look(self) -> List[str]:
        """The health policy before a trial's restart: what blocks it.  Notes
        for the status the others' checks, and on each failed trial the
        canary's crashes it caused (for the admin to archive)."""
        s = self.s
        health = look(self.cluster, self.osd, lambda c: crashes.failed_trial_of(
            s['trials'], s['current'], self.osd, c) is not None)
        s['other_checks'] = health.others
        crashes.note(s['trials'], s['current'], self.osd, health.own_crashes)
        return health.blockers(self.params.force)

    def _note_last_crashes(self) -> None:
        """At the end: the crashes reported since the last look (no look
        follows the last trial).  A report posted after the end (ceph-crash
        may take minutes) is not named."""
        if not any(t['verdict'] == 'failed' for t in self.s['trials']):
            return
        try:
            crashes.note(self.s['trials'], self.s['current'], self.osd,
                         self.cluster.recent_crashes())
        except Exception as e:  # best effort: nothing may keep a session from ending
            log.warning('cannot read crash reports at the end of the session: %s', e)

    def _add_trial(self, trial: Dict[str, Any]) -> None:
        """Record a trial once: a step retried after a later error records it again."""
        trials = self.s['trials']
        if trials and trials[-1]['index'] == trial['index']:
            trials[-1] = trial
        else:
            trials.append(trial)

    def _trial_failed(self, error: str) -> None:
        """The candidate broke the canary: record it, then restart on the originals."""
        s = self.s
        cur = self._cur()
        trial = dict(cur, verdict='failed', error=error, told=None,
                     seconds=self.clock() - cur['started'])
        self._add_trial(trial)
        s['alerts']['TRIAL_FAILED'] = health.raised(
            'TRIAL_FAILED', [error, f'restoring osd.{self.osd} to its original options'],
            index=cur['index'], osd=self.osd)
        s['current'] = dict(cur, kind='recovery', index=cur['index'])
        s['window'] = None
        self._enter(P.RECOVER, f'trial {cur["index"]} failed: {error}; restoring the canary')
        if cur['kind'] == 'confirm':
            conf = self._confirmation()
            conf.failed(cur['round'], cur['arm'], error)
            conf.update()
        if cur['kind'] == 'candidate':
            self._tell(Candidate.from_dict(cur['candidate']), None)

    def _tell(self, c: Candidate, told: Optional[float]) -> None:
        """Tell a built optimizer of a trial already recorded (an unbuilt one
        replays the trials); a failure here drops it, to be rebuilt."""
        if self._optimizer is None:
            return
        if told is None:
            self._optimizer.tell_failed(c)
        else:
            self._optimizer.tell(c, told)

    def _precondition(self, now: float) -> float:
        if self.precondition is None:
            raise ValueError('no load to precondition with')
        try:
            done = self.precondition.step()
        except ClusterError as e:
            self._trial_failed(f'osd.{self.osd} failed while its DB was written into a '
                               f'steady state: {e}')
            return 0
        if done:
            self.window.begin(now)
            self._enter(P.WARMUP, f'trial {self._cur()["index"]}: warming up')
        return 0

    def _warmup(self, now: float) -> float:
        try:
            done, delay = self.window.warmup(now, self.s['phase_started'])
        except ClusterError as e:
            self._trial_failed(f'osd.{self.osd} failed during warm-up: {e}')
            return 0
        if done:
            self._enter(P.MEASURE, f'trial {self._cur()["index"]}: measuring')
        return delay

    def _measure(self, now: float) -> float:
        cur = self._cur()
        try:
            m, delay = self.window.measure(now, Candidate.from_dict(cur['candidate']),
                                           length=self._confirmation_length())
        except ClusterError as e:
            self._trial_failed(f'osd.{self.osd} failed during the measurement: {e}')
            return 0
        if m is not None:
            self._record(m)
        return delay

    def _record(self, m: Measurement) -> None:
        s = self.s
        cur = self._cur()
        key = perf_counters.OBJECTIVES[self.params.workload][0]
        if getattr(m, key) is None:
            # only `live` can see none (osd bench always writes): with no
            # traffic there is nothing to compare, now or in any later window
            s['error'] = (f'osd.{self.osd} served no client write in a {m.seconds:.0f}s '
                          f'window: the live workload measures the traffic the canary has; '
                          f'start again while it has some, or use --workload osd-bench')
            s['abort'] = True
            self._enter(P.RESTORE, s['error'])
            return
        trial = dict(cur, measurement=m.to_dict(), seconds=self.clock() - cur['started'])
        told: Optional[float] = None
        if cur['kind'] == 'confirm':
            trial['verdict'] = 'measured'
            self._add_trial(trial)
            s['current'] = None
            s['window'] = None
            self._confirmation().update()
            self._enter(P.CONFIRM)
            self._next_confirmation()
            return
        if cur['kind'] == 'baseline':
            trial['verdict'] = 'baseline'
            self._add_trial(trial)
            runs = [Measurement.from_dict(t['measurement']) for t in s['trials']
                    if t['kind'] == 'baseline' and t['verdict'] == 'baseline']
            if len(runs) >= self.settings.baseline_runs:
                base = Baseline.of(runs, self.params.workload)
                s['baseline'] = base.to_dict()
                self._plan_for_noise(runs)
                # the current options are the first point the optimizer knows:
                # score the runs against their own median, and let the next
                # ask() rebuild the optimizer from the trials (one way in)
                for t in s['trials']:
                    if t['verdict'] == 'baseline':
                        t['score'] = t['told'] = perf_counters.score(
                            Measurement.from_dict(t['measurement']), base,
                            self.params.workload)
                self._optimizer = None
        else:
            if s['baseline'] is None:
                raise ValueError('a candidate was measured before the baseline')
            verdict, score, told = perf_counters.judged(m, Baseline(**s['baseline']),
                                                        self.params.budget, self.params.workload)
            trial.update(verdict=verdict, score=score, told=told)
            self._add_trial(trial)
        # recorded and moved on before anything that may fail
        s['current'] = None
        s['window'] = None
        self._enter(P.NEXT)
        if cur['kind'] == 'candidate':
            self._tell(Candidate.from_dict(cur['candidate']), told)
        self._next_trial()

    # ------------------------------------------------------------ the end

    def _outcome(self) -> Ending:
        """How a session that restores its canary ends: decided when the
        restore begins (its own failure ends it through `_fail`)."""
        s = self.s
        if s['error']:
            return Ending.FAILED
        if s['abort']:
            return Ending.ABORTED
        return Ending.STOPPED if s['state'] == 'stopping' else Ending.DONE

    def _restore(self, now: float) -> float:
        """The originals' config at once; then, if the process may run
        something else, the gated restart onto them."""
        s = self.s
        if s['state'] != 'restoring':
            s['final'] = self._outcome().value
        s['state'] = 'restoring'
        s['current'] = None
        s['window'] = None
        self._unpause()
        s['alerts'].pop('MANUAL_RESTART', None)
        held = self._foreign()
        self.canary.restore(s['originals'], held)
        if held:
            log.warning('osd.%d: left as someone else set them: %s', self.osd, ', '.join(held))
        if not s['running_dirty']:
            return self._finish()
        # the canary keeps noout while it waits for its restart
        self.restarter.set_noout()
        self.restarter.begin('restore', now)
        self._enter(P.RESTORE_WAIT, f'waiting to restart osd.{self.osd} on its original options')
        return 0

    def _restore_wait(self, now: float) -> float:
        s = self.s
        r = self._restart_back(now)
        if r is None:
            return 0
        if r.outcome == Outcome.GATE_HELD:
            # never forced: the restart waits until it is safe
            s['message'] = (f'config restored; osd.{self.osd} is restarted onto it when it is '
                            'safe: ' + '; '.join(r.reasons))
            s['alerts']['RESTORE_PENDING'] = health.raised('RESTORE_PENDING', r.reasons + [
                'its config is restored and noout is set; it may still run a candidate, '
                'and is restarted as soon as ok-to-stop says yes and no other OSD is down'],
                osd=self.osd)
            return max(self.settings.poll, 5.0)
        s['alerts'].pop('RESTORE_PENDING', None)
        # back on its own options: done once its PGs are clean, or at once if
        # another OSD's trouble keeps them from it (not the session's to wait for)
        if r.outcome.runs_them:
            self.restarter.clear_noout()
            return self._finish()
        if r.outcome == Outcome.NOT_UP_IN_TIME:
            self._fail(f'osd.{self.osd} did not come back on its original options within '
                       f'{self.restarter.timeout():.0f}s; its config is restored')
            return 0
        return self.settings.poll

    def _finish(self) -> float:
        s = self.s
        self.restarter.clear_noout()
        self._remove_client_objects()
        self._end(Ending(s['final']) if s.get('final') else self._outcome())
        result = views.answer(s)
        s['message'] = f'{s["state"]}: ' + (
            views.answer_line(result) if result is not None
            else 'no answer: the session ended before its confirmation')
        if s.get('config_changes'):
            s['message'] += ('; config changed by someone else during the session, left as '
                             'they set them: ' + '; '.join(s['config_changes']))
        return 60.0

    def _fail(self, error: str) -> None:
        """End where restoring cannot go on; the alert tells the admin what is left."""
        s = self.s
        s['error'] = error
        held: Set[str] = set()
        try:
            held = self._foreign()
            self.canary.restore(s['originals'], held)
            restored = self.canary.is_restored(s['originals'], held)
        except ClusterError:
            restored = False
        try:
            self.restarter.clear_noout()
        except ClusterError:
            pass
        self._remove_client_objects()  # never raises: a failure is kept in the record
        detail = [error]
        if s['running_dirty']:
            detail.append(f'osd.{self.osd} may still run a candidate: restart it to load '
                          'the restored options')
        for name, value in s['originals'].items():
            detail.append(f'original osd.{self.osd} {name}: '
                          + ('(not set)' if value is None else value)
                          + (' (left: someone else has set it since)' if name in held
                             else '' if restored else ' (NOT restored: set it back by hand)'))
        self._end(Ending.FAILED)
        s['alerts']['RESTORE_FAILED'] = health.raised('RESTORE_FAILED', detail, osd=self.osd)
        s['message'] = f'failed: {error}'

    def _end(self, ending: Ending) -> None:
        """The one place a session ends: its conditions cleared, the crashes
        since the last look named, the ending set, the end phase entered."""
        s = self.s
        health.end_of_job(s['alerts'])
        self._note_last_crashes()
        s['state'] = ending.value
        self._enter(P.END)
        s['ended'] = self.clock()

    # ------------------------------------------------------------ views

    def best(self) -> Optional[Dict[str, Any]]:
        """The search trial the confirmation recommends, if any."""
        return views.recommended_trial(self.s)

    def view(self) -> View:
        return View(status=copy.deepcopy(self.status()), record=copy.deepcopy(dict(self.s)),
                    active=self.active, progress=self.progress())

    def note_internal_error(self, e: Exception) -> None:
        """A step raised past its own handling (a bug): say so in the message."""
        self.s['message'] = f'internal error: {e}'

    def health_checks(self) -> Dict[str, Any]:
        return health.publish(self.s['alerts'])

    def _left(self) -> Tuple[int, int]:
        """(search measurements, confirmation measurements) still to come, at
        most: the confirmation's are k + 1 per round until it starts."""
        s = self.s
        if s.get('confirm') is None:
            return (max(0, self.settings.baseline_runs + self.params.trials - len(s['trials'])),
                    self.settings.confirm_rounds * (self.settings.confirm_candidates + 1))
        return 0, self._confirmation().planned()

    def progress_event(self) -> views.ProgressEvent:
        s = self.s
        return views.ProgressEvent(
            id=f'rocks-autotune-{s["id"]}', message=f'Tuning RocksDB on osd.{self.osd} '
            f'({s["phase"]})', progress=self.progress(), refs=[('osd', self.osd)],
            failure=(f'rocks_autotune {s["message"]}'
                     if s['state'] in (Ending.FAILED, Ending.ABORTED) else None))

    def progress(self) -> float:
        """Measurements done over those planned."""
        done = len(self.s['trials'])
        return min(1.0, done / max(1, done + sum(self._left())))

    def time_said(self) -> Dict[str, Any]:
        """How long a steady-state window of the current options takes here
        (from the baseline's windows), how long the confirmation's windows
        last, and what the rest of the session costs, at most."""
        s = self.s
        st = self.settings
        done = [t for t in s['trials'] if t.get('measurement') and t.get('seconds')]
        windows = [(t, Measurement.from_dict(t['measurement'])) for t in done]
        base = [m for t, m in windows if t['verdict'] == 'baseline']
        rate = fill_rate([(Candidate.from_dict(t['candidate']), [m]) for t, m in windows])
        steady = steady_window(self.space.base_candidate(), base, rate) if base else None
        limit = max(self.params.duration, st.steady_window_limit)
        window = (s['confirm'].get('window') if s.get('confirm') else None) or (
            limit if steady is None or math.isinf(steady) else
            min(max(steady, self.params.duration), limit))
        # a measurement's cost beside its window: restart, warm-up, the steps
        over = median([t['seconds'] - t['measurement']['seconds'] for t in done]) if done \
            else st.warmup + 60.0
        per_search = over + (median([t['measurement']['seconds'] for t in done]) if done
                             else self.params.duration)
        search, confirmation = self._left()
        pre = s.get('precondition') or {}
        # the preconditioning's rest of its limit (when it ends is the DB's to say)
        pending = (max(0.0, st.precondition_limit - pre.get('seconds', 0.0)
                       - pre.get('fill_seconds', 0.0))
                   if self.precondition is not None and not pre.get('done') else 0.0)
        left = pending + search * per_search + confirmation * (over + window)
        cur, w = s['current'], s.get('window')
        if cur is not None and w is not None and cur['kind'] != 'recovery':
            # the measurement in flight is counted above whole: what its
            # warm-up and window spent comes off (an hour-long confirmation
            # window must not read as all still to come until it ends)
            each = over + window if cur['kind'] == 'confirm' else per_search
            left -= min(each, max(0.0, self.clock() - float(w['start'])))
        return {'steady_window': None if steady is None or math.isinf(steady) else steady,
                'no_flush_seen': steady is not None and math.isinf(steady),
                'steady_window_limit': st.steady_window_limit, 'confirm_window': window,
                'left_seconds': max(0.0, left)}

    def status(self) -> Dict[str, Any]:
        return dict(views.status_of(self.s, self.osd, self.progress(),
                                    sorted(self.health_checks()), self.release_default,
                                    self.space.max_memtable_bytes), time=self.time_said())
