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

Every move between phases is in MOVES and checked, and only the session
moves them.  What is done to a canary OSD (its config, its gated restarts
through restart.Restarter, its window, the watch on its config, its crashes,
its restore) is its canary_osd.CanaryOsd's: a phase runs the trial's window
on the canaries of its slots (one today: the session's canary).  What is
measured next, and what the measurements tell the optimizer, is
search.Search's.  The canary's original
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
import time
from dataclasses import asdict
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from . import health, measurement_plan, perf_counters, session_start, views
from .canary import OPTIONS, SAVED
from .canary_osd import CanaryOsd, runs_candidate
from .cluster import Cluster, ClusterError
from .confirm import BASELINE
from .gate import Params, StartRefused
from .machine import Handler, Machine
from .perf_counters import Baseline, Measurement
from .restart import Outcome, Result, resume_after_failover
from .rocksdb_options import PACIFIC_DEFAULT, parse_options, parse_sharding
from .search import Search, Trial
from .session_settings import Settings
from .space import Candidate, SearchSpace
from .store import STATE_VERSION, Ending, SessionState, StartRecord
from .views import View

log = logging.getLogger(__name__)

ACTIVE = ('running', 'stopping', 'restoring')


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
        # the canaries, by OSD: the plan's (one today, the session's own)
        self.canary = CanaryOsd(cluster, self.osd, state, self.params, settings,
                                lambda: self._save(self.s), clock)
        self.canaries: Dict[int, CanaryOsd] = {self.osd: self.canary}
        self.search = Search(state, self.space, settings, self.params, self.release_default,
                             clock)

    @property
    def optimizer(self) -> Any:
        """The search's optimizer (built on first use: search.Search.optimizer)."""
        return self.search.optimizer

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
        self.search.forget()

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
        for c in self.canaries.values():
            c.prepare()
        self._enter(P.NEXT)
        return self._next_trial()

    def _next_trial(self) -> float:
        s = self.s
        if s['state'] == 'stopping':
            self._enter(P.RESTORE, 'stopped by request; restoring the canary')
            return 0
        trial = self.search.next_trial(self.osd)
        if trial is None:
            self.search.plan_confirmation(measurement_plan.single(self.osd, s.get('client')))
            self._enter(P.CONFIRM, 'search done: confirming its best candidates')
            return self._next_confirmation()
        trial.started = self.clock()
        s['current'] = asdict(trial)
        self._enter(P.APPLY, f'trial {trial.index}: {trial.kind}')
        return 0

    # ------------------------------------------------------------ confirmation

    def _next_confirmation(self) -> float:
        s = self.s
        if s['state'] == 'stopping':
            self._enter(P.RESTORE, 'stopped by request; restoring the canary')
            return 0
        conf = self.search.confirmation()
        nxt = conf.next()
        if nxt is None:
            result = conf.update(complete=True)
            self._enter(P.RESTORE, 'confirmation done: ' + views.answer_line(result)
                        + '; restoring the canary')
            return 0
        r, window = nxt
        if len(window) != 1 or window[0].osd not in self.canaries:
            # a plan of several canaries (measurement_plan.duet) is not run yet
            raise ValueError(f'this session measures osd.{self.osd} alone, not {window}')
        (slot,) = window
        arm = slot.arm
        if arm == BASELINE:
            candidate, options = self.space.base_candidate().to_dict(), s['base_options']
        else:
            a = conf.arm(arm)
            candidate, options = a['candidate'], a['options']
        trial = Trial(index=len(s['trials']), kind='confirm', candidate=candidate,
                      options=options, round=r, arm=arm, started=self.clock(), osd=slot.osd)
        s['current'] = asdict(trial)
        self._enter(P.APPLY, f'confirmation round {r + 1}/{s["confirm"]["rounds"]}: '
                    + ('the baseline' if arm == BASELINE else f'candidate {arm} '
                       f'(trial {conf.arm(arm)["trial"]})'))
        return 0

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

    def _in_window(self) -> List[CanaryOsd]:
        """The canaries the trial in flight runs on, in the order they
        restart: its window's slots (a trial recorded before its OSD was kept
        ran on the session's canary).  One slot per window: a plan of several
        canaries is refused where its window is taken (_next_confirmation)."""
        osd = self._cur().get('osd')
        return [self.canaries[self.osd if osd is None else osd]]

    def _config_pause(self, now: float) -> Optional[float]:
        """Before a trial's restart: paused while someone else's change stands
        at any of its canaries; None to go on."""
        changes = [line for c in self._in_window() for line in c.config_changes()]
        if changes:
            return self._pause(now, changes, config_changed=True)
        self.s['alerts'].pop('CONFIG_CHANGED', None)
        return None

    def _apply(self, now: float) -> float:
        cur = self._cur()
        if any([c.clear_stale_noout() for c in self._in_window()]):
            return self.settings.poll
        paused = self._config_pause(now)
        if paused is not None:
            return paused
        reasons = [r for c in self._in_window() for r in c.look()]
        if reasons:
            return self._pause(now, reasons)
        self._unpause()
        for c in self._in_window():
            c.set_up(cur, now)
        self._enter(P.RESTART)
        return 0

    def _restart(self, now: float) -> float:
        cur = self._cur()
        (canary,) = self._in_window()
        # the gate may have held the restart back for a while
        paused = self._config_pause(now)
        if paused is not None:
            return paused
        try:
            r = canary.restart(now)
        except ClusterError as e:
            if runs_candidate(cur):
                # an OSD that will not start on the candidate fails the restart
                self._trial_failed(f'restart on the candidate failed: {e}')
            else:
                self.s['error'] = f'restart failed: {e}'
                self._enter(P.RESTORE, f'restart failed: {e}')
            return 0
        if r.outcome.held:
            return self._pause(now, r.reasons)
        self._unpause()
        self._enter(P.WAIT_UP, f'trial {cur["index"]}: waiting for osd.{canary.osd}')
        return self.settings.poll

    def _wait_up(self, now: float) -> float:
        cur = self._cur()
        (canary,) = self._in_window()
        r = canary.restart(now)
        if r.outcome == Outcome.UP:
            self._unpause()
            if canary.precondition is not None and canary.needs_precondition():
                canary.precondition.begin()
                self._enter(P.PRECONDITION, f'trial {cur["index"]}: writing the canary\'s DB '
                            'into a steady state before the first window')
                return 0
            canary.window.begin(now)
            self._enter(P.WARMUP, f'trial {cur["index"]}: warming up')
            return 0
        return self._not_up_yet(now, canary, r, lambda timeout: self._trial_failed(
            f'osd.{canary.osd} did not come back up running the options set within '
            f'{timeout:.0f}s'))

    def _not_up_yet(self, now: float, canary: CanaryOsd, r: Result,
                    not_up: Callable[[float], None]) -> float:
        """A restart that has not come to UP: paused while another OSD keeps
        PGs from clean (the canary runs: pause, not fail), polled while it
        waits; PGs not clean in time abort the session; not up in time is
        `not_up`'s (given the timeout): a failed trial, or a failed recovery."""
        if r.outcome.held:
            return self._pause(now, r.reasons)
        self._unpause()
        if r.outcome == Outcome.WAITING:
            return self.settings.poll
        timeout = canary.timeout()
        if r.outcome == Outcome.NOT_CLEAN_IN_TIME:
            self.s['error'] = (f'PGs did not become active+clean within '
                               f'{timeout:.0f}s of restarting osd.{canary.osd}')
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
        if any([c.clear_stale_noout() for c in self._in_window()]):
            return self.settings.poll
        for c in self._in_window():
            c.recover(now)
        self._enter(P.RECOVER_RESTART)
        return 0

    def _restart_back(self, now: float, canary: CanaryOsd) -> Optional[Result]:
        """A step of the restart onto the canary's originals (a recovery's
        or the restore's); None once a failed restart ended the session."""
        try:
            return canary.restart(now)
        except ClusterError as e:
            self._fail(f'config restored, but restarting osd.{canary.osd} failed: {e}; '
                       f'restart it to load its original options')
            return None

    def _recover_restart(self, now: float) -> float:
        (canary,) = self._in_window()
        r = self._restart_back(now, canary)
        if r is None:
            return 0
        if r.outcome.held:
            return self._pause(now, r.reasons)
        self._unpause()
        self._enter(P.RECOVER_WAIT, f'trial {self._cur()["index"]} failed: waiting for '
                    f'osd.{canary.osd} on its original options')
        return self.settings.poll

    def _recover_wait(self, now: float) -> float:
        s = self.s
        (canary,) = self._in_window()
        r = canary.restart(now)
        if r.outcome == Outcome.UP:
            self._unpause()
            s['alerts'].pop('TRIAL_FAILED', None)
            s['current'] = None
            if self.settings.on_failure == 'stop':
                s['state'] = 'stopping'
            return self._after_trial()
        return self._not_up_yet(now, canary, r, lambda timeout: self._fail(
            f'osd.{canary.osd} did not come back on its original options within '
            f'{timeout:.0f}s; its config is restored'))

    def _trial_failed(self, error: str) -> None:
        """The candidate broke the canary: record it, then restart on the originals."""
        s = self.s
        cur = self._cur()
        trial = dict(cur, verdict='failed', error=error, told=None,
                     seconds=self.clock() - cur['started'])
        self.search.add_trial(trial)
        s['alerts']['TRIAL_FAILED'] = health.raised(
            'TRIAL_FAILED', [error, f'restoring osd.{self.osd} to its original options'],
            index=cur['index'], osd=self.osd)
        s['current'] = dict(cur, kind='recovery', index=cur['index'])
        s['window'] = None
        self._enter(P.RECOVER, f'trial {cur["index"]} failed: {error}; restoring the canary')
        if cur['kind'] == 'confirm':
            conf = self.search.confirmation()
            conf.failed(cur['round'], cur['arm'], error)
            conf.update()
        if cur['kind'] == 'candidate':
            self.search.tell(Candidate.from_dict(cur['candidate']), None)

    def _precondition(self, now: float) -> float:
        (canary,) = self._in_window()
        if canary.precondition is None:
            raise ValueError('no load to precondition with')
        try:
            done = canary.precondition.step()
        except ClusterError as e:
            self._trial_failed(f'osd.{canary.osd} failed while its DB was written into a '
                               f'steady state: {e}')
            return 0
        if done:
            canary.window.begin(now)
            self._enter(P.WARMUP, f'trial {self._cur()["index"]}: warming up')
        return 0

    def _warmup(self, now: float) -> float:
        (canary,) = self._in_window()
        try:
            done, delay = canary.window.warmup(now, self.s['phase_started'])
        except ClusterError as e:
            self._trial_failed(f'osd.{canary.osd} failed during warm-up: {e}')
            return 0
        if done:
            self._enter(P.MEASURE, f'trial {self._cur()["index"]}: measuring')
        return delay

    def _measure(self, now: float) -> float:
        cur = self._cur()
        (canary,) = self._in_window()
        try:
            m, delay = canary.window.measure(now, Candidate.from_dict(cur['candidate']),
                                             length=self.search.window_length(cur))
        except ClusterError as e:
            self._trial_failed(f'osd.{canary.osd} failed during the measurement: {e}')
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
            self.search.add_trial(trial)
            s['current'] = None
            s['window'] = None
            self.search.confirmation().update()
            self._enter(P.CONFIRM)
            self._next_confirmation()
            return
        if cur['kind'] == 'baseline':
            trial['verdict'] = 'baseline'
            self.search.add_trial(trial)
            self.search.baseline_measured(self.osd)
        else:
            if s['baseline'] is None:
                raise ValueError('a candidate was measured before the baseline')
            verdict, score, told = perf_counters.judged(m, Baseline(**s['baseline']),
                                                        self.params.budget, self.params.workload)
            trial.update(verdict=verdict, score=score, told=told)
            self.search.add_trial(trial)
        # recorded and moved on before anything that may fail
        s['current'] = None
        s['window'] = None
        self._enter(P.NEXT)
        if cur['kind'] == 'candidate':
            self.search.tell(Candidate.from_dict(cur['candidate']), told)
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
        if not self.canary.restore(now):
            return self._finish()
        self._enter(P.RESTORE_WAIT, f'waiting to restart osd.{self.osd} on its original options')
        return 0

    def _restore_wait(self, now: float) -> float:
        s = self.s
        r = self._restart_back(now, self.canary)
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
            self.canary.clear_noout()
            return self._finish()
        if r.outcome == Outcome.NOT_UP_IN_TIME:
            self._fail(f'osd.{self.osd} did not come back on its original options within '
                       f'{self.canary.timeout():.0f}s; its config is restored')
            return 0
        return self.settings.poll

    def _finish(self) -> float:
        s = self.s
        for c in self.canaries.values():
            c.clear_noout()
            c.remove_client_objects()
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
        detail = [error]
        for c in self.canaries.values():
            detail += c.restore_where_failed()
            c.remove_client_objects()  # never raises: a failure is kept in the record
        self._end(Ending.FAILED)
        s['alerts']['RESTORE_FAILED'] = health.raised('RESTORE_FAILED', detail, osd=self.osd)
        s['message'] = f'failed: {error}'

    def _end(self, ending: Ending) -> None:
        """The one place a session ends: its conditions cleared, the crashes
        since the last look named, the ending set, the end phase entered."""
        s = self.s
        health.end_of_job(s['alerts'])
        for c in self.canaries.values():
            c.note_last_crashes()
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
        return min(1.0, done / max(1, done + sum(self.search.left())))

    def time_said(self) -> Dict[str, Any]:
        return self.search.time_said(self.canary.precondition is not None)

    def status(self) -> Dict[str, Any]:
        return dict(views.status_of(self.s, self.osd, self.progress(),
                                    sorted(self.health_checks()), self.release_default,
                                    self.space.max_memtable_bytes), time=self.time_said())
