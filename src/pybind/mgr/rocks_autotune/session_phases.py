"""A session's phases: the table of its moves, and each phase's step.

A trial:  next -> apply -> restart -> wait_up -> warmup -> measure -> next
(the first baseline's, under the client load: wait_up -> precondition -> warmup)
Then the confirmation (confirm.py): the top candidates by the model and the
baseline, round after round, each measurement a trial of kind `confirm`,
then the steady check's windows (the same moves; its trials name the arm
checked in `steady`; under the client load, measure ends with a read probe
of each canary, which a failover redoes, not the window):
          confirm -> apply -> restart -> wait_up -> warmup -> measure -> confirm
The end:  restore -> restore_wait -> end (done | stopped | aborted | failed)

A phase works on the canaries of the window in flight (canary_osd.slots:
one for a search trial, the plan's slots for a confirmation window,
measurement_plan).  Their config is set together; they restart one at a
time through the gate (restart -> wait_up, then restart again for the next),
warm up and are measured over the same seconds; a failure of any fails the
window and recovers them all; the restore puts back every canary.
"""
from dataclasses import replace
from enum import Enum
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from . import perf_counters, views
from .canary_osd import CanaryOsd, runs_candidate, slots
from .cluster import Cluster, ClusterError
from .confirm import BASELINE, Confirmation
from .gate import Params
from .machine import Go, Handler, Move, Pause, Phases as JobPhases
from .measurement_plan import Slot
from .perf_counters import Measurement
from .restart import Outcome, Result
from .search import Search
from .session_settings import Settings
from .space import Candidate, SearchSpace
from .store import Ending, SessionState
from .trial import Trial
from .workload import CLIENT


class Phase(str, Enum):
    PREPARE = 'prepare'
    NEXT = 'next'                  # pick the next trial, or the confirmation
    CONFIRM = 'confirm'            # pick the next confirmation window, or the end
    APPLY = 'apply'                # health look, then the window's config
    RESTART = 'restart'            # the gate, then the restart of its next canary
    WAIT_UP = 'wait_up'            # up on the options set, PGs clean
    PRECONDITION = 'precondition'  # the first baseline's: the DB written to a steady state
    WARMUP = 'warmup'
    MEASURE = 'measure'
    # a trial failed (its candidate broke a canary): back on the originals
    RECOVER = 'recover'                  # the originals' config (no health wait)
    RECOVER_RESTART = 'recover_restart'  # the gate, then the restart of its next canary
    RECOVER_WAIT = 'recover_wait'        # up on the originals, then the next trial
    RESTORE = 'restore'            # the originals' config, at once
    RESTORE_WAIT = 'restore_wait'  # the gated restarts onto them
    END = 'end'


P = Phase
# the allowed moves, each taken by a unit test (tests/unit/conftest.py).  An
# abort (or repeated errors) goes to restore from any phase before it; the end
# comes only through restore, or through fail() where putting the canary back
# on its originals cannot go on (a recovery's restart failed or timed out)
MOVES: Dict[Phase, Tuple[Phase, ...]] = {
    P.PREPARE: (P.NEXT, P.RESTORE),
    P.NEXT: (P.APPLY, P.CONFIRM, P.RESTORE),
    P.CONFIRM: (P.APPLY, P.RESTORE),
    P.APPLY: (P.RESTART, P.RESTORE),
    # recover: the canary did not start on the candidate
    P.RESTART: (P.WAIT_UP, P.RECOVER, P.RESTORE),
    # restart: the window's next canary; recover: it did not come up on it in time
    P.WAIT_UP: (P.RESTART, P.PRECONDITION, P.WARMUP, P.RECOVER, P.RESTORE),
    # recover: the load failed (the trial did)
    P.PRECONDITION: (P.WARMUP, P.RECOVER, P.RESTORE),
    # apply: the window is redone after a failover; recover: the trial failed
    P.WARMUP: (P.MEASURE, P.APPLY, P.RECOVER, P.RESTORE),
    P.MEASURE: (P.NEXT, P.CONFIRM, P.APPLY, P.RECOVER, P.RESTORE),
    P.RECOVER: (P.RECOVER_RESTART, P.RESTORE),
    # end: the recovery's own restart failed
    P.RECOVER_RESTART: (P.RECOVER_WAIT, P.RESTORE, P.END),
    # recover_restart: the window's next canary; next or confirm: recovered;
    # end: not up on the originals in time
    P.RECOVER_WAIT: (P.RECOVER_RESTART, P.NEXT, P.CONFIRM, P.RESTORE, P.END),
    P.RESTORE: (P.RESTORE_WAIT, P.END),
    P.RESTORE_WAIT: (P.END,),
    P.END: (),
}
MEASURING = (P.WARMUP.value, P.MEASURE.value)
ENDING = (P.RESTORE.value, P.RESTORE_WAIT.value, P.END.value)


def standing_changes(canaries: Iterable[CanaryOsd]) -> List[str]:
    """The session's list of someone else's changes: its canaries', each once."""
    return list(dict.fromkeys(line for c in canaries for line in c.rec['config_changes']))


def next_to_restart(cluster: Cluster, canaries: List[CanaryOsd]) -> CanaryOsd:
    """Of `canaries` whose restart is not done, the one to step: the restart
    in flight; else one that is down (the gate holds the others' while it
    is); else the first in restart order."""
    left = [c for c in canaries if not c.restarted]
    issued = [c for c in left if c.restart_issued()]
    if issued:
        return issued[0]
    if len(left) > 1:
        osds = cluster.osd_states()
        down = [c for c in left if c.osd not in osds or not osds[c.osd].up]
        if down:
            return down[0]
    return left[0]


class Phases(JobPhases):
    """Each phase's step (a handler returns its move, machine.py), and the end
    of a pause that lasted too long, on the session's record and parts."""

    def __init__(self, s: SessionState, cluster: Cluster, params: Params, space: SearchSpace,
                 search: Search, settings: Settings, canaries: Dict[int, CanaryOsd],
                 clock: Callable[[], float]) -> None:
        self.s = s
        self.cluster = cluster
        self.params = params
        self.osd: int = s['params']['osd']
        self.space = space
        self.search = search
        self.settings = settings
        self.canaries = canaries
        self.clock = clock

    def table(self) -> Dict[Any, Handler]:
        return {P.PREPARE: self.prepare, P.NEXT: lambda now: self.next_trial(),
                P.CONFIRM: lambda now: self.next_confirmation(), P.APPLY: self.apply,
                P.RESTART: self.restart, P.WAIT_UP: self.wait_up,
                P.PRECONDITION: self.precondition, P.WARMUP: self.warmup,
                P.MEASURE: self.measure, P.RECOVER: self.recover,
                P.RECOVER_RESTART: self.recover_restart, P.RECOVER_WAIT: self.recover_wait,
                P.RESTORE: self.restore, P.RESTORE_WAIT: self.restore_wait}

    # ------------------------------------------------------------ the pause

    def timed_out(self, pause: Pause) -> Go:
        """A pause (the cluster unhealthy, or someone else's change to a
        canary's config) lasted unhealthy_timeout: the session aborts."""
        why = ('config changed by someone else' if pause.on == 'config'
               else 'cluster stayed unhealthy')
        return self.abort(f'{why}: ' + '; '.join(pause.reasons), f'{why}; restoring the canary')

    def abort(self, error: str, said: str = '') -> Go:
        """The session ends failed, restoring its canaries."""
        self.s['error'] = error
        self.s['abort'] = True
        return Go(P.RESTORE, said or error)

    # ------------------------------------------------------------ the window in flight

    def cur(self) -> Trial:
        """The trial in flight: every trial phase has one."""
        cur = self.s['current']
        if cur is None:
            raise ValueError(f'no trial in flight in phase {self.s["phase"]}')
        return cur

    def in_window(self) -> List[CanaryOsd]:
        """The canaries of the window in flight, in restart order (a trial
        without its OSD ran on the session's canary)."""
        return [self.canaries[self.osd if t.osd is None else t.osd]
                for t in slots(self.cur())]

    # ------------------------------------------------------------ what comes next

    def prepare(self, now: float) -> Move:
        for c in self.canaries.values():
            c.prepare()
        return Go(P.NEXT)

    def next_trial(self) -> Move:
        s = self.s
        if s['state'] == 'stopping':
            return Go(P.RESTORE, 'stopped by request; restoring the canary')
        trial = self.search.next_trial(self.osd)
        if trial is None:
            self.search.plan_confirmation(s['plan'])
            return Go(P.CONFIRM, 'search done: confirming its best candidates')
        trial.started = self.clock()
        s['current'] = trial
        return Go(P.APPLY, f'trial {trial.index}: {trial.kind}')

    def next_confirmation(self) -> Move:
        s = self.s
        if s['state'] == 'stopping':
            return Go(P.RESTORE, 'stopped by request; restoring the canary')
        conf = self.search.confirmation()
        nxt = conf.next()
        if nxt is None:
            result = conf.update(complete=True)
            return Go(P.RESTORE, 'confirmation done: ' + views.answer_line(result)
                      + '; restoring the canary')
        r, window, steady = nxt
        first = len(s['trials'])
        trials = [self._confirm_trial(conf, r, slot, first + k, steady)
                  for k, slot in enumerate(window)]
        # a window of several canaries: its trials in `slots`, the first's on top
        s['current'] = replace(trials[0], slots=trials) if len(trials) > 1 else trials[0]
        what = (f'steady check of {steady} (pair {r + 1}/{conf.rec.steady.pairs}, a window '
                'until a compaction and every column family\'s cycle of WAL bytes)' if steady
                else
                f'confirmation round {r + 1}/{conf.rec.rounds}')
        return Go(P.APPLY, f'{what}: ' + ', '.join(
            ('the baseline' if t.arm == BASELINE else f'candidate {t.arm} '
             f'(trial {conf.rec.arm(t.arm).trial})')
            + (f' on osd.{t.osd}' if len(trials) > 1 else '') for t in trials))

    def _confirm_trial(self, conf: Confirmation, r: int, slot: Slot, index: int,
                       steady: str) -> Trial:
        if slot.arm == BASELINE:
            candidate = self.space.base_candidate().to_dict()
            options = self.s['base_options']
        else:
            a = conf.rec.arm(slot.arm)
            candidate, options = a.candidate, a.options
        return Trial(index=index, kind='confirm', candidate=candidate, options=options,
                     round=r, arm=slot.arm, started=self.clock(), osd=slot.osd, steady=steady)

    # ------------------------------------------------------------ a trial's window

    def config_pause(self) -> Optional[Pause]:
        """Before a trial's restart: paused while someone else's change stands
        at any of its canaries; None to go on."""
        changes = list(dict.fromkeys(line for c in self.in_window()
                                     for line in c.config_changes()))
        return Pause(changes, 'paused: config changed by someone else',
                     'config') if changes else None

    def apply(self, now: float) -> Move:
        cur = self.cur()
        window = self.in_window()
        if any([c.clear_stale_noout() for c in window]):
            return self.settings.poll
        held = self.config_pause() or self.pool_full()
        if held is not None:
            return held
        reasons = list(dict.fromkeys(r for c in window for r in c.look()))
        if reasons:
            return Pause(reasons)
        for c, trial in zip(window, slots(cur)):
            c.set_up(trial, now)
        return Go(P.RESTART)

    def restart(self, now: float) -> Move:
        cur = self.cur()
        canary = next_to_restart(self.cluster, self.in_window())
        # the gate may have held the restart back for a while
        paused = self.config_pause()
        if paused is not None:
            return paused
        try:
            r = canary.restart(now)
        except ClusterError as e:
            if runs_candidate(canary.slot() or cur):
                # an OSD that will not start on the candidate fails the restart
                return self.trial_failed(f'restart on the candidate failed: {e}')
            self.s['error'] = f'restart failed: {e}'
            return Go(P.RESTORE, f'restart failed: {e}')
        if r.outcome.held:
            return Pause(r.reasons)
        return Go(P.WAIT_UP, f'trial {cur.index}: waiting for osd.{canary.osd}',
                  self.settings.poll)

    def _wait_step(self, now: float, window: List[CanaryOsd]) -> Tuple[CanaryOsd, Result]:
        """A step of the window's restart in flight; once up, it is done."""
        canary = next_to_restart(self.cluster, window)
        r = canary.restart(now)
        if r.outcome == Outcome.UP:
            canary.restart_done()
            for t in slots(self.cur()):
                if t.osd in (None, canary.osd):
                    t.restart_seconds = canary.up_seconds
        return canary, r

    def wait_up(self, now: float) -> Move:
        cur = self.cur()
        window = self.in_window()
        canary, r = self._wait_step(now, window)
        if r.outcome == Outcome.UP:
            if not all(c.restarted for c in window):
                return Go(P.RESTART, f'trial {cur.index}: restarting '
                          f'osd.{next_to_restart(self.cluster, window).osd}')
            needs = [p for c in window if (p := c.precondition_due()) is not None]
            for p in needs:
                p.begin()
            if needs:
                return Go(P.PRECONDITION, f'trial {cur.index}: writing the canary\'s DB '
                          'into a steady state before the first window')
            return self._begin_windows(now)
        return self.not_up_yet(canary, r, lambda timeout: self.trial_failed(
            f'osd.{canary.osd} did not come back up running the options set within '
            f'{timeout:.0f}s'))

    def _begin_windows(self, now: float) -> Go:
        for c in self.in_window():
            c.window.begin(now)
        return Go(P.WARMUP, f'trial {self.cur().index}: warming up')

    def not_up_yet(self, canary: CanaryOsd, r: Result,
                   not_up: Callable[[float], Go]) -> Move:
        """A restart not yet UP: paused while another OSD keeps PGs from
        clean, polled while it waits; PGs not clean in time abort the session;
        not up in time is `not_up`'s (given the timeout)."""
        if r.outcome.held:
            return Pause(r.reasons)
        if r.outcome == Outcome.WAITING:
            return self.settings.poll
        timeout = canary.timeout()
        if r.outcome == Outcome.NOT_CLEAN_IN_TIME:
            return self.abort(f'PGs did not become active+clean within {timeout:.0f}s of '
                              f'restarting osd.{canary.osd}')
        return not_up(timeout)

    def precondition(self, now: float) -> Move:
        needs = [(c, p) for c in self.in_window() if (p := c.precondition_due()) is not None]
        if not needs:  # done in a step that failed after it
            return self._begin_windows(now)
        canary, load = needs[0]
        try:
            done = load.step()
        except ClusterError as e:
            return self.load_failed(f'osd.{canary.osd} failed while its DB was written '
                                    f'into a steady state: {e}')
        if done and len(needs) == 1:
            return self._begin_windows(now)
        return 0

    def warmup(self, now: float) -> Move:
        # the canaries' windows open at the same step: the warm-up is timed
        # from the phase's start, the same for all
        done, delays = [], []
        for c in self.in_window():
            try:
                d, delay = c.window.warmup(now, self.s['phase_started'])
            except ClusterError as e:
                return self.load_failed(f'osd.{c.osd} failed during warm-up: {e}')
            done.append(d)
            delays.append(delay)
        if all(done):
            return Go(P.MEASURE, f'trial {self.cur().index}: measuring', min(delays))
        return min(delays)

    def measure(self, now: float) -> Move:
        cur = self.cur()
        delays = []
        length = self.search.window_length(cur)
        steady_limit = self.search.steady_limit(cur)
        # a canary measured before the others keeps its measurement in its slot
        for c, trial in zip(self.in_window(), slots(cur)):
            if trial.measurement is not None:
                continue
            try:
                m, delay = c.window.measure(now, Candidate.from_dict(trial.candidate),
                                            length=length, steady_limit=steady_limit,
                                            families=self.space.column_families,
                                            max_total_wal_size=self.space.max_total_wal_size)
            except ClusterError as e:
                return self.load_failed(f'osd.{c.osd} failed during the measurement: {e}')
            trial.measurement = m
            delays.append(delay)
        measured = [(t, t.measurement) for t in slots(cur) if t.measurement is not None]
        if len(measured) == len(slots(cur)):
            return self._read_probe(cur) or self._record(measured)
        return min(delays)

    def probes_reads(self, cur: Trial) -> bool:
        """The window `cur` ends with a read probe: a steady one, under the client load."""
        return bool(cur.steady and self.settings.read_probe and self.params.workload == CLIENT)

    def _read_probe(self, cur: Trial) -> Optional[Move]:
        """After a steady window under the client load: a chunk of the read
        probe (read_probe s) of the window's next canary without one, one
        canary at a time; None once each has its probe (or none is run)."""
        if not self.probes_reads(cur):
            return None
        for c, t in zip(self.in_window(), slots(cur)):
            if t.read_probe is None:
                try:
                    t.read_probe = c.read_probe(self.settings.read_probe)
                except ClusterError as e:
                    return self.load_failed(f'osd.{c.osd} failed during the read probe: {e}')
                return Go(P.MEASURE, f'trial {cur.index}: timing reads on osd.{c.osd} '
                          f'after its steady window ({self.settings.read_probe:.0f}s)')
        return None

    def _record(self, measured: List[Tuple[Trial, Measurement]]) -> Go:
        """The window's trials, each with its measurement, recorded."""
        cur = self.cur()
        key = perf_counters.OBJECTIVES[self.params.workload][0]
        for t, m in measured:
            if getattr(m, key) is None:
                # only `live` can see none (osd bench always writes): with no
                # traffic there is nothing to compare, now or in any later window
                osd = self.osd if t.osd is None else t.osd
                return self.abort(f'osd.{osd} served no client write in a {m.seconds:.0f}s '
                                  'window: the live workload measures the traffic the canary '
                                  'has; start again while it has some, or use --workload '
                                  'osd-bench')
        seconds = self.clock() - cur.started
        trials = [(replace(t, seconds=seconds, slots=[]), m) for t, m in measured]
        told: Optional[float] = None
        if cur.kind == 'confirm':
            for trial, _ in trials:
                self.search.add_trial(replace(trial, verdict='measured'))
            self._window_done()
            self.search.confirmation().update()
            return Go(P.CONFIRM)
        ((trial, m),) = trials
        if cur.kind == 'baseline':
            trial.verdict = 'baseline'
            self.search.add_trial(trial)
            self.search.baseline_measured(self.osd)
        else:
            trial.verdict, trial.score, told = self.search.judge(
                m, Candidate.from_dict(cur.candidate))
            trial.told = told
            self.search.add_trial(trial)
            self.search.rejudge()
        self._window_done()
        if cur.kind == 'candidate':
            self.search.tell(Candidate.from_dict(cur.candidate), told)
        return Go(P.NEXT)

    def _window_done(self) -> None:
        for c in self.in_window():
            c.rec['window'] = None
        self.s['current'] = None

    # -- a failed trial's recovery: the canaries back on their originals.  It
    # does not wait for health (a canary may be down), only for the restart
    # gate; nor for a config change (the next trial pauses on it), which it
    # leaves in place

    def pool_full(self) -> Optional[Go]:
        """The client load's pool marked full (its quota reached, or an OSD
        past the full ratio): its writes would wait there for good, so the
        session ends (its objects go with it: deletes pass a full pool)."""
        c = self.s.get('client')
        if not c:
            return None
        if not any(p.full for p in self.cluster.pool_states().values() if p.name == c.pool):
            return None
        error = (f'pool {c.pool!r} is full (its quota reached, or an OSD past the full '
                 'ratio): the client load cannot write there')
        return self.abort(error, error + '; restoring the canary')

    def load_failed(self, error: str) -> Go:
        """The window's load failed: the session ends if its pool is full,
        else the trial failed."""
        return self.pool_full() or self.trial_failed(error)

    def trial_failed(self, error: str) -> Go:
        """The candidate broke a canary: the window's trials recorded failed,
        then every canary of the window restarted on its originals."""
        s = self.s
        cur = self.cur()
        seconds = self.clock() - cur.started
        for t in slots(cur):
            self.search.add_trial(replace(t, slots=[], measurement=None, verdict='failed',
                                          error=error, told=None, seconds=seconds))
        for c in self.in_window():
            c.rec['window'] = None
        # its error, for the health check while the recovery is in flight
        s['current'] = replace(cur, kind='recovery', error=error,
                               slots=[replace(t, kind='recovery') for t in cur.slots])
        if cur.kind == 'confirm':
            conf = self.search.confirmation()
            for t in slots(cur):
                assert t.round is not None  # a confirmation's trial has its round
                conf.failed(t.round, t.arm, error, t.steady)
            conf.update()
        if cur.kind == 'candidate':
            self.search.tell(Candidate.from_dict(cur.candidate), None)
        return Go(P.RECOVER, f'trial {cur.index} failed: {error}; restoring the canary')

    def recover(self, now: float) -> Move:
        window = self.in_window()
        if any([c.clear_stale_noout() for c in window]):
            return self.settings.poll
        for c in window:
            c.recover(now)
        return Go(P.RECOVER_RESTART)

    def recover_restart(self, now: float) -> Move:
        canary = next_to_restart(self.cluster, self.in_window())
        r = self.restart_back(now, canary)
        if isinstance(r, Go):
            return r
        if r.outcome.held:
            return Pause(r.reasons)
        return Go(P.RECOVER_WAIT, f'trial {self.cur().index} failed: waiting for '
                  f'osd.{canary.osd} on its original options', self.settings.poll)

    def recover_wait(self, now: float) -> Move:
        s = self.s
        window = self.in_window()
        canary, r = self._wait_step(now, window)
        if r.outcome == Outcome.UP:
            if not all(c.restarted for c in window):
                return Go(P.RECOVER_RESTART)
            s['current'] = None
            if self.settings.on_failure == 'stop':
                s['state'] = 'stopping'
            return Go(P.NEXT if s.get('confirm') is None else P.CONFIRM)
        return self.not_up_yet(canary, r, lambda timeout: self.fail(
            f'osd.{canary.osd} did not come back on its original options within '
            f'{timeout:.0f}s; its config is restored'))

    # ------------------------------------------------------------ the way out

    def outcome(self) -> Ending:
        """How a session that restores its canary ends: decided when the
        restore begins (its own failure ends it through `fail`)."""
        s = self.s
        if s['error']:
            return Ending.FAILED
        if s['abort']:
            return Ending.ABORTED
        return Ending.STOPPED if s['state'] == 'stopping' else Ending.DONE

    def finish(self) -> Go:
        s = self.s
        for c in self.canaries.values():
            c.clear_noout()
            c.remove_client_objects()
        end = self.end(Ending(s['final']) if s.get('final') else self.outcome())
        s['config_changes'] = standing_changes(self.canaries.values())
        result = views.answer(s)
        s['message'] = f'{s["state"]}: ' + (
            views.answer_line(result) if result is not None
            else 'no answer: the session ended before its confirmation')
        if s.get('config_changes'):
            s['message'] += ('; config changed by someone else during the session, left as '
                             'they set them: ' + '; '.join(s['config_changes']))
        return end

    def fail(self, error: str) -> Go:
        """End where restoring cannot go on; what is left, for the admin's health check."""
        s = self.s
        s['error'] = error
        left: List[str] = []
        for c in self.canaries.values():
            left += c.restore_where_failed()
            c.remove_client_objects()  # never raises: a failure is kept in the record
        s['restore_failed'] = left
        end = self.end(Ending.FAILED)
        s['message'] = f'failed: {error}'
        return end

    def end(self, ending: Ending) -> Go:
        """The one place a session ends: the crashes since the last look
        named, the ending set; the move to the end phase."""
        s = self.s
        for c in self.canaries.values():
            c.note_last_crashes()
        s['state'] = ending.value
        s['ended'] = self.clock()
        return Go(P.END, delay=60.0)

    def restart_back(self, now: float, canary: CanaryOsd) -> Union[Result, Go]:
        """A step of the restart onto the canary's originals; the move to the
        end if it failed."""
        try:
            return canary.restart(now)
        except ClusterError as e:
            return self.fail(f'config restored, but restarting osd.{canary.osd} failed: {e}; '
                             f'restart it to load its original options')

    # ------------------------------------------------------------ the restore

    def restore(self, now: float) -> Move:
        """Every canary's originals' config at once; then, for each whose
        process may run something else, the gated restart onto them."""
        s = self.s
        if s['state'] != 'restoring':
            s['final'] = self.outcome().value
        s['state'] = 'restoring'
        s['current'] = None
        restarts = [c for c in self.canaries.values() if c.restore(now)]
        if not restarts:
            return self.finish()
        return Go(P.RESTORE_WAIT, 'waiting to restart ' + ', '.join(
            f'osd.{c.osd}' for c in restarts) + ' on its original options')

    def restore_wait(self, now: float) -> Move:
        canary = next_to_restart(self.cluster, list(self.canaries.values()))
        r = self.restart_back(now, canary)
        if isinstance(r, Go):
            return r
        if r.outcome == Outcome.GATE_HELD:
            # never forced: the restart waits until it is safe
            return Pause(r.reasons, f'config restored; osd.{canary.osd} is restarted onto it '
                         'when it is safe', 'restore', canary.osd, timed=False)
        # back on its own options: done once its PGs are clean, or at once if
        # another OSD's trouble keeps them from it (not the session's to wait for)
        if r.outcome.runs_them:
            canary.clear_noout()
            canary.restart_done()
            if all(c.restarted for c in self.canaries.values()):
                return self.finish()
            return 0
        if r.outcome == Outcome.NOT_UP_IN_TIME:
            return self.fail(f'osd.{canary.osd} did not come back on its original options '
                             f'within {canary.timeout():.0f}s; its config is restored')
        return self.settings.poll
