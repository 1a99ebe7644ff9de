"""A session's phases: the table of its moves, and each phase's step.
Design: doc/dev/internals.rst, dev-internals-session.
"""
import logging
from dataclasses import replace
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from . import crashes, perf_counters, views
from .canary_osd import CanaryOsd, runs_candidate
from .cluster import Cluster, ClusterError
from .confirm import BASELINE
from .gate import look
from .session_settings import Params, Settings
from .machine import End, Go, Handler, Move, Pause, Phases as JobPhases
from .perf_counters import Measurement
from .restart import Outcome, Result
from .search import Search
from .space import SearchSpace
from .store import Ending, SessionState
from .trial import Trial
from .workload import CLIENT, ClientWorkload

log = logging.getLogger(__name__)


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
    # recover: the canary did not come up on it in time
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


def standing_changes(canary: CanaryOsd) -> List[str]:
    """The session's list of someone else's changes: its canary's, each once."""
    return list(dict.fromkeys(canary.rec.config_changes))


class WayOut(JobPhases):
    """The way out: the canary back on its originals, then the end (or a
    failure where restoring cannot go on)."""

    s: SessionState
    cluster: Cluster
    canary: CanaryOsd
    settings: Settings
    clock: Callable[[], float]

    def outcome(self) -> Ending:
        """How a session that restores its canary ends, decided when the
        restore begins (a failed restore ends it through `fail`)."""
        s = self.s
        if s.error:
            return Ending.FAILED
        if s.abort:
            return Ending.ABORTED
        return Ending.STOPPED if s.state == 'stopping' else Ending.DONE

    def finish(self) -> End:
        self.canary.restarter.clear_noout()
        self.remove_client_objects()
        self.s.config_changes = standing_changes(self.canary)
        return self.end(Ending(self.s.final) if self.s.final else self.outcome())

    def fail(self, error: str) -> End:
        """End where restoring cannot go on; what is left, for the admin's health check."""
        s = self.s
        s.error = error
        s.restore_failed = self.canary.restore_where_failed()
        self.remove_client_objects()  # never raises: a failure is kept in the record
        return self.end(Ending.FAILED, f'failed: {error}')

    def end(self, ending: Ending, message: str = '') -> End:
        """The one way a session ends: the canary's crashes since the last
        look named on the failed trials (one posted after the end is not:
        ceph-crash may take minutes); the move that ends it."""
        s = self.s
        if any(t.verdict == 'failed' for t in s.trials):
            try:
                crashes.note(s.trials, s.current, self.canary.osd, self.cluster.recent_crashes())
            except Exception as e:  # best effort: nothing may keep a session from ending
                log.warning('cannot read crash reports at the end of the session: %s', e)
        return End(ending.value, message, delay=60.0)

    def ended(self, end: End) -> None:
        """An end with no message of its own (a restore that went through)
        says the answer, now that the state is the ending."""
        if end.message:
            return
        s = self.s
        s.message = f'{s.state}: ' + (
            views.answer_line(s.confirm, s.osd) if s.confirm and s.confirm.result
            else 'no answer: the session ended before its confirmation')
        if s.config_changes:
            s.message += ('; config changed by someone else during the session, left as '
                          'they set them: ' + '; '.join(s.config_changes))

    def remove_client_objects(self) -> None:
        """The client load's objects go with the session (ClientWorkload.remove_objects)."""
        c = self.s.client
        if c is not None and c.removed is None:
            ClientWorkload.remove_objects(c, self.cluster, self.settings.client_threads,
                                          self.settings.bench_chunk_seconds, self.clock())

    def restart_back(self, now: float, canary: CanaryOsd) -> Union[Result, End]:
        """A step of the restart onto the originals; the end if it failed."""
        try:
            return canary.restarter.step(now)
        except ClusterError as e:
            return self.fail(f'config restored, but restarting osd.{canary.osd} failed: {e}; '
                             f'restart it to load its original options')

    # ------------------------------------------------------------ the restore

    def restore(self, now: float) -> Move:
        """The originals' config; then, if the canary may run something
        else, the gated restart onto them."""
        s = self.s
        if s.state != 'restoring':
            s.final = self.outcome().value
        s.state = 'restoring'
        s.current = None
        if not self.canary.restore(now):
            return self.finish()
        return Go(P.RESTORE_WAIT, f'waiting to restart osd.{self.canary.osd} on its original '
                  'options')

    def restore_wait(self, now: float) -> Move:
        canary = self.canary
        r = self.restart_back(now, canary)
        if isinstance(r, End):
            return r
        if r.outcome == Outcome.GATE_HELD:
            # never forced: the restart waits until it is safe
            return Pause(r.reasons, f'config restored; osd.{canary.osd} is restarted onto it '
                         'when it is safe', 'restore', canary.osd, timed=False)
        # back on its own options: done once its PGs are clean, or at once if
        # another OSD's trouble keeps them from it (not the session's to wait for)
        if r.outcome.runs_them:
            canary.restart_done()
            return self.finish()
        if r.outcome == Outcome.NOT_UP_IN_TIME:
            return self.not_back(canary.restarter.timeout())
        return self.settings.poll

    def not_back(self, timeout: float) -> End:
        return self.fail(f'osd.{self.canary.osd} did not come back on its original options '
                         f'within {timeout:.0f}s; its config is restored')


class Phases(WayOut):
    """Each phase's step (a handler returns its move, machine.py), and the end
    of a pause that lasted too long."""

    def __init__(self, s: SessionState, cluster: Cluster, params: Params, space: SearchSpace,
                 search: Search, settings: Settings, canary: CanaryOsd,
                 clock: Callable[[], float]) -> None:
        self.s, self.cluster, self.params, self.osd = s, cluster, params, s.osd
        self.space, self.search, self.settings = space, search, settings
        self.canary, self.clock = canary, clock

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
        """The session ends failed, restoring its canary."""
        self.s.error = error
        self.s.abort = True
        return Go(P.RESTORE, said or error)

    def cur(self) -> Trial:
        """The trial in flight: every trial phase has one."""
        cur = self.s.current
        if cur is None:
            raise ValueError(f'no trial in flight in phase {self.s.phase}')
        return cur

    # ------------------------------------------------------------ what comes next

    def prepare(self, now: float) -> Move:
        self.canary.prepare()
        self.search.before_baseline(None)
        return Go(P.NEXT)

    def stopped(self) -> Optional[Go]:
        """A requested stop's move, taken where no trial is in flight."""
        return (Go(P.RESTORE, 'stopped by request; restoring the canary')
                if self.s.state == 'stopping' else None)

    def next_trial(self) -> Move:
        s = self.s
        if (stop := self.stopped()) is not None:
            return stop
        trial = self.search.next_trial(self.osd)
        if trial is None:
            self.search.plan_confirmation(s.plan)
            return Go(P.CONFIRM, 'search done: confirming its best candidates')
        trial.started = self.clock()
        s.current = trial
        return Go(P.APPLY, f'trial {trial.index}: {trial.kind}')

    def next_confirmation(self) -> Move:
        s = self.s
        if (stop := self.stopped()) is not None:
            return stop
        conf = self.search.confirmation()
        nxt = conf.next()
        if nxt is None:
            conf.update(complete=True)
            return Go(P.RESTORE, 'confirmation done: ' + views.answer_line(conf.rec, self.osd)
                      + '; restoring the canary')
        r, arm, steady = nxt
        if arm == BASELINE:
            candidate, options, who = self.space.base_candidate(), s.base_options, 'the baseline'
        else:
            a = conf.rec.arm(arm)
            candidate, options = a.candidate, a.options
            who = f'candidate {a.arm} (trial {a.trial})'
        s.current = Trial(index=len(s.trials), kind='confirm', candidate=candidate,
                          options=options, round=r, arm=arm, started=self.clock(),
                          osd=self.osd, steady=steady)
        what = (f'steady check of {steady} (pair {r + 1}/{conf.rec.steady_pairs}, a window '
                'counted from a first compaction to another and every column family\'s '
                'cycle of WAL bytes)' if steady
                else
                f'confirmation round {r + 1}/{conf.rec.rounds}')
        return Go(P.APPLY, f'{what}: {who}')

    # ------------------------------------------------------------ a trial's window

    def config_pause(self) -> Optional[Pause]:
        """Paused while someone else's change stands at the canary; None to go on."""
        changes = list(dict.fromkeys(self.canary.config_changes(self.s.current)))
        return Pause(changes, 'paused: config changed by someone else',
                     'config') if changes else None

    def apply(self, now: float) -> Move:
        if (stop := self.stopped()) is not None:  # a stop held by a pause ends here
            return stop
        canary = self.canary
        if canary.clear_stale_noout():
            return self.settings.poll
        held = self.config_pause() or self.pool_full()
        if held is not None:
            return held
        # the health look: for the status, the others' checks; on each failed
        # trial, the canary's crashes it caused (for the admin to archive)
        s, osd = self.s, canary.osd
        health = look(self.cluster, osd, lambda c: crashes.failed_trial_of(
            s.trials, s.current, osd, c) is not None)
        s.other_checks = health.others
        crashes.note(s.trials, s.current, osd, health.own_crashes)
        reasons = list(dict.fromkeys(health.blockers(self.params.force)))
        if reasons:
            return Pause(reasons)
        canary.set_up(self.cur(), now)
        return Go(P.RESTART)

    def restart(self, now: float) -> Move:
        cur = self.cur()
        canary = self.canary
        # the gate may have held the restart back for a while
        paused = self.config_pause()
        if paused is not None:
            return paused
        try:
            r = canary.restarter.step(now)
        except ClusterError as e:
            if runs_candidate(cur):
                # an OSD that will not start on the candidate fails the restart
                return self.trial_failed(f'restart on the candidate failed: {e}')
            self.s.error = f'restart failed: {e}'
            return Go(P.RESTORE, f'restart failed: {e}')
        return self.after_restart(r, lambda: Go(
            P.WAIT_UP, f'trial {cur.index}: waiting for osd.{canary.osd}', self.settings.poll),
            issuing=True)

    def wait_up(self, now: float) -> Move:
        cur = self.cur()
        canary = self.canary

        def up() -> Go:
            cur.restart_seconds = canary.up_seconds
            pre = canary.precondition_due()
            if pre is None:
                return self._begin_windows(now)
            pre.begin()
            return Go(P.PRECONDITION, f'trial {cur.index}: writing the canary\'s DB '
                      'into a steady state before the first window')
        return self.after_restart(canary.restarter.step(now), up, lambda timeout: self.trial_failed(
            f'osd.{canary.osd} did not come back up running the options set within '
            f'{timeout:.0f}s'))

    def _begin_windows(self, now: float) -> Go:
        self.canary.window.begin(now)
        return Go(P.WARMUP, f'trial {self.cur().index}: warming up')

    def after_restart(self, r: Result, then: Callable[[], Move],
                      not_up: Optional[Callable[[float], Move]] = None,
                      issuing: bool = False) -> Move:
        """A step of a trial's or a recovery's restart (restart.Outcome) as its
        move: `then` once the canary runs the options set with its PGs clean
        (`issuing`: once the restart is under way), `not_up` (given the
        timeout) if it did not come up in time.  Held, it pauses; PGs not
        clean in time abort."""
        canary, o = self.canary, r.outcome
        if o.held:
            return Pause(r.reasons)
        if issuing:
            return then()
        if o == Outcome.UP:
            canary.restart_done()
            return then()
        if o == Outcome.WAITING:
            return self.settings.poll
        timeout = canary.restarter.timeout()
        if o == Outcome.NOT_CLEAN_IN_TIME:
            return self.abort(f'PGs did not become active+clean within {timeout:.0f}s of '
                              f'restarting osd.{canary.osd}')
        assert not_up is not None  # every restart past its issue says what this means
        return not_up(timeout)

    def precondition(self, now: float) -> Move:
        load = self.canary.precondition_due()
        if load is None:  # done in a step that failed after it
            return self._begin_windows(now)
        try:
            done = load.step(self.space.base_candidate().level0_file_num_compaction_trigger)
        except ClusterError as e:
            return self.load_failed(f'osd.{self.canary.osd} failed while its DB was written '
                                    f'into a steady state: {e}')
        pre = self.canary.rec.precondition
        if pre is not None:
            self.search.before_baseline(pre)
        if done:
            return self._begin_windows(now)
        return 0

    def warmup(self, now: float) -> Move:
        try:
            done, delay = self.canary.window.warmup(now, self.s.phase_started)
        except ClusterError as e:
            return self.load_failed(f'osd.{self.canary.osd} failed during warm-up: {e}')
        if done:
            return Go(P.MEASURE, f'trial {self.cur().index}: measuring', delay)
        return delay

    def measure(self, now: float) -> Move:
        cur = self.cur()
        # measured already: its read probe is in flight
        if cur.measurement is None:
            c = self.canary
            try:
                m, delay = c.window.measure(now, cur.candidate, self.search.window_end(cur),
                                            families=self.space.column_families,
                                            max_total_wal_size=self.space.max_total_wal_size)
            except ClusterError as e:
                return self.load_failed(f'osd.{c.osd} failed during the measurement: {e}')
            if m is None:
                return delay
            cur.measurement = m
        return self._read_probe(cur) or self._record(cur.measurement)

    def probes_reads(self, cur: Trial) -> bool:
        """The window `cur` ends with a read probe: a confirmation round's,
        under the client load (paired over the rounds, as the objective is)."""
        return bool(cur.kind == 'confirm' and not cur.steady and self.settings.read_probe
                    and self.params.workload == CLIENT)

    def _read_probe(self, cur: Trial) -> Optional[Move]:
        """A round's read probe of the canary (read_probe s); None once it
        has one, or runs none."""
        if not self.probes_reads(cur) or cur.read_probe is not None:
            return None
        c = self.canary
        try:
            cur.read_probe = c.read_probe(self.settings.read_probe)
        except ClusterError as e:
            return self.load_failed(f'osd.{c.osd} failed during the read probe: {e}')
        return Go(P.MEASURE, f'trial {cur.index}: timing reads on osd.{c.osd} '
                  f'after its window ({self.settings.read_probe:.0f}s)')

    def _record(self, m: Measurement) -> Go:
        """The window's trial, with its measurement, recorded."""
        cur = self.cur()
        if getattr(m, perf_counters.OBJECTIVES[self.params.workload][0]) is None:
            # only `live` can see none (osd bench always writes): with no
            # traffic there is nothing to compare, now or in any later window
            return self.abort(f'osd.{self.canary.osd} served no client write in a '
                              f'{m.seconds:.0f}s window: the live workload measures the '
                              'traffic the canary has; start again while it has some, or use '
                              '--workload osd-bench')
        search = self.search
        trial = replace(cur, seconds=self.clock() - cur.started)
        if cur.kind == 'confirm':
            search.add_trial(replace(trial, verdict='measured'))
            self._window_done()
            search.confirmation().update()
            return Go(P.CONFIRM)
        if cur.kind == 'baseline':
            search.add_trial(replace(trial, verdict='baseline'))
            search.baseline_measured(self.osd)
            self._window_done()
            return Go(P.NEXT)
        trial.verdict, trial.score, trial.told = search.judge(m, cur.candidate)
        search.add_trial(trial)
        search.rejudge()
        self._window_done()
        search.tell(cur.candidate, trial.told)
        return Go(P.NEXT)

    def _window_done(self) -> None:
        self.canary.rec.window = None
        self.s.current = None

    def pool_full(self) -> Optional[Go]:
        """The client load's pool marked full: its writes would wait there
        for good, so the session ends (deletes pass a full pool)."""
        c = self.s.client
        if not c or not any(p.full for p in self.cluster.pool_states().values()
                            if p.name == c.pool):
            return None
        error = (f'pool {c.pool!r} is full (its quota reached, or an OSD past the full '
                 'ratio): the client load cannot write there')
        return self.abort(error, error + '; restoring the canary')

    def load_failed(self, error: str) -> Go:
        """The window's load failed: the session ends if its pool is full,
        else the trial fails."""
        return self.pool_full() or self.trial_failed(error)

    def trial_failed(self, error: str) -> Go:
        """The candidate broke the canary: the trial recorded failed, then
        the canary restarted on its originals."""
        cur = self.cur()
        self.search.add_trial(replace(cur, measurement=None, verdict='failed', error=error,
                                      told=None, seconds=self.clock() - cur.started))
        self.canary.rec.window = None
        # its error, for the health check while the recovery is in flight
        self.s.current = replace(cur, kind='recovery', error=error)
        if cur.kind == 'confirm':
            conf = self.search.confirmation()
            assert cur.round is not None  # a confirmation's trial has its round
            conf.failed(cur.round, cur.arm, error, cur.steady)
            conf.update()
        if cur.kind == 'candidate':
            self.search.tell(cur.candidate, None)
        return Go(P.RECOVER, f'trial {cur.index} failed: {error}; restoring the canary')

    # the recovery waits for the restart gate only: not for health (a canary
    # may be down), nor for a config change, left in place (the next trial
    # pauses on it)

    def recover(self, now: float) -> Move:
        if self.canary.clear_stale_noout():
            return self.settings.poll
        self.canary.recover(now)
        return Go(P.RECOVER_RESTART)

    def recover_restart(self, now: float) -> Move:
        r = self.restart_back(now, self.canary)
        if isinstance(r, End):
            return r
        return self.after_restart(r, lambda: Go(
            P.RECOVER_WAIT, f'trial {self.cur().index} failed: waiting for '
            f'osd.{self.canary.osd} on its original options', self.settings.poll), issuing=True)

    def recover_wait(self, now: float) -> Move:
        s = self.s

        def up() -> Go:
            s.current = None
            if self.settings.on_failure == 'stop':
                s.state = 'stopping'
            return Go(P.NEXT if s.confirm is None else P.CONFIRM)
        return self.after_restart(self.canary.restarter.step(now), up, self.not_back)
