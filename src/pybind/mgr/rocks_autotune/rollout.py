r"""A rollout: `apply` (options to a device class, or to named OSDs) and
`revert` (what an apply changed, put back), one OSD at a time.  A persisted
state machine driven by `step()`, as the session is (session.py).

Its plan (rollout_plan.py) is saved with the values it will replace, at every
mask it touches, before anything changes.  Then, OSD by OSD:

    check -> next -> set -> restart -> wait -> next ... -> end
                        \        \         \
                         next      put_back -> put_back_wait -> end (failed)
                         (skipped)

- check: the masks still hold what the plan read (else it ends, changing nothing);
- next: the next pending OSD, in the plan's order; none left: the end (done);
- set: that OSD's own mask, just before its restart, so that no OSD holds
  options it has not been seen to start on: an OSD gone from the OSD map, or
  whose mask someone else has set since the plan, is skipped and named;
- restart: the health policy (gate.look, as a session's: what threatens
  data always, others' checks without --force) and the gate
  (gate.restart_blockers) hold the restart back, then it goes through
  restart.Restarter: noout on the OSD while it restarts;
- wait: up running the options the mon now has for it, PGs active+clean;
- put_back (apply): an OSD that did not come back on the new options gets its
  own prior options at osd.N, and a gated restart onto them; the rollout then
  ends failed: the OSDs done stay on the new options, the others' config was
  never touched.

`abort` is persisted by the module before it is acknowledged, and taken
between OSDs (an OSD held at the gate is not in flight yet: its mask is put
back): the rollout ends aborted.  A rollout that stops early raises a health
check that says so, and that `revert` undoes what was done.
"""
import logging
import time
import uuid
from dataclasses import asdict, dataclass, fields
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from . import health, views
from .canary import OPTIONS
from .cluster import Cluster, ClusterError
from .gate import look
from .machine import Handler, Machine
from .options import default
from .restart import OsdGone, Outcome, Restarter, Stage, resume_after_failover
from .rollout_plan import REVERT, RUNNING, _some, own_crash, set_by_others, show
from .store import ROLLOUT_VERSION, RolloutOsd, RolloutPlan, RolloutState
from .views import osd_list

log = logging.getLogger(__name__)

ACTIVE = ('running',)
ENDED = ('done', 'aborted', 'failed')


class Phase(str, Enum):
    CHECK = 'check'                  # nothing changed yet: do the masks hold the priors?
    NEXT = 'next'                    # the next pending OSD, or the end
    SET = 'set'                      # its own mask, just before its restart
    RESTART = 'restart'              # the OSD in flight: health, the gate, its restart
    WAIT = 'wait'                    # up on the options set, PGs active+clean
    PUT_BACK = 'put_back'            # apply: a failed OSD's prior options at osd.N
    PUT_BACK_WAIT = 'put_back_wait'  # its gated restart onto them
    END = 'end'


P = Phase
# the allowed moves: END from any phase but the last is an abort, a failure,
# or repeated errors; back to NEXT from set, restart or wait: the OSD was
# skipped (gone from the OSD map, or its mask set by someone else)
MOVES: Dict[Phase, Tuple[Phase, ...]] = {
    P.CHECK: (P.NEXT, P.END),
    P.NEXT: (P.SET, P.END),
    P.SET: (P.RESTART, P.NEXT, P.END),
    # put_back: the restart could not be issued
    P.RESTART: (P.WAIT, P.PUT_BACK, P.NEXT, P.END),
    P.WAIT: (P.NEXT, P.PUT_BACK, P.END),
    P.PUT_BACK: (P.PUT_BACK_WAIT, P.END),
    P.PUT_BACK_WAIT: (P.END,),
    P.END: (),
}


@dataclass
class RolloutSettings:
    """The module options a rollout runs with (declared in options.py)."""
    restart_timeout: float = default('restart_timeout')
    manual_restart_timeout: float = default('manual_restart_timeout')
    unhealthy_timeout: float = default('unhealthy_timeout')
    poll: float = 2.0  # not an option: how often a step waiting on the cluster looks again

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> 'RolloutSettings':
        names = {f.name for f in fields(cls)}
        return cls(**{k: float(v) for k, v in d.items() if k in names})


class Rollout(Machine):
    kind = 'rollout'
    MOVES = MOVES
    ACTIVE = ACTIVE

    def __init__(self, state: RolloutState, cluster: Cluster,
                 save: Callable[[RolloutState], None],
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(state, save, clock)
        self.r = state
        self.cluster = cluster
        self.settings = RolloutSettings.from_dict(state['settings'])

    @classmethod
    def begin(cls, plan: RolloutPlan, settings: RolloutSettings, cluster: Cluster,
              save: Callable[[RolloutState], None],
              clock: Callable[[], float] = time.time) -> 'Rollout':
        """Persist a new rollout (StoreError: not saved, nothing changed)."""
        now = clock()
        state = RolloutState(
            version=ROLLOUT_VERSION, id=str(uuid.uuid4()), state='running',
            phase=P.CHECK.value, message='starting', error='', abort=False, changed=False,
            current=None, started=now, phase_started=now, ended=None, paused_since=None,
            cluster_errors=0, settings=asdict(settings), restart=None, manual=False,
            noout_ours=False, running_dirty=False, alerts={}, **plan)
        save(state)
        return cls(state, cluster, save, clock)

    @staticmethod
    def check_state(state: Any) -> None:
        """Raise ValueError if a persisted rollout is not one this code wrote."""
        if not isinstance(state, dict) or state.get('version') != ROLLOUT_VERSION:
            raise ValueError('rollout state has an unknown format')
        for key, typ in (('id', str), ('kind', str), ('state', str), ('phase', str),
                         ('sets', dict), ('priors', dict), ('osds', list), ('alerts', dict),
                         ('settings', dict), ('changed', bool), ('noout_ours', bool),
                         ('force', bool), ('allow_single_copy', bool),
                         ('crash_osds', list)):
            if not isinstance(state.get(key), typ):
                raise ValueError(f'rollout state field {key!r} is missing or malformed')
        Phase(state['phase'])
        for o in state['osds']:
            if not (isinstance(o.get('osd'), int) and isinstance(o.get('before'), dict)
                    and isinstance(o.get('changed'), bool)):
                raise ValueError('rollout state has a malformed OSD record')
        cur = state.get('current')
        if cur is not None and not (isinstance(cur, int) and 0 <= cur < len(state['osds'])):
            raise ValueError('rollout state has no such OSD in flight')

    # ------------------------------------------------------------ commands

    def request_abort(self) -> None:
        """Stop after the OSD in flight; seen at the next step.  The module
        persists the request before it calls this (and again on a new mgr)."""
        self.request('abort')

    def resume_after_failover(self) -> None:
        """A new active mgr took over: deadlines start again on its own clock."""
        now = self.clock()
        resume_after_failover(self.r, now)
        if self.r['paused_since'] is not None:
            self.r['paused_since'] = now

    # ------------------------------------------------------------ the loop

    def _phase(self) -> Phase:
        return Phase(self.r['phase'])

    def _poll(self) -> float:
        return self.settings.poll

    def _take(self, requests: Set[str]) -> None:
        if 'abort' in requests and not self.r['abort']:
            self.r['abort'] = True
            self.r['message'] = 'aborting: stopping after the OSD in flight'

    def _interrupt(self, now: float) -> Optional[float]:
        r = self.r
        if r['abort'] and self._phase() in (P.CHECK, P.NEXT):
            self._end('aborted', 'aborted' + ('' if r['changed'] else ': nothing was changed'))
            return 0
        return None

    def _give_up(self, error: str) -> None:
        self._end('failed', error)

    def _handlers(self) -> Dict[Any, Handler]:
        return {P.CHECK: self._check, P.NEXT: self._next, P.SET: self._set,
                P.RESTART: self._restart, P.WAIT: self._wait, P.PUT_BACK: self._put_back,
                P.PUT_BACK_WAIT: self._put_back_wait}

    def _cur(self) -> RolloutOsd:
        i = self.r['current']
        if i is None:
            raise ValueError(f'no OSD in flight in phase {self.r["phase"]}')
        return self.r['osds'][i]

    def _restarter(self, osd: int) -> Restarter:
        return Restarter(self.cluster, osd, self.r, self.r['alerts'], lambda: self._save(self.r),
                         self.settings.restart_timeout, self.settings.manual_restart_timeout,
                         owner=f'the {self.r["kind"]}',
                         single_copy_ok=self.r['allow_single_copy'])

    def _what(self) -> str:
        return 'the new options' if self.r['kind'] == 'apply' else 'its options of before'

    # ------------------------------------------------------------ the phases

    def _check(self, now: float) -> float:
        """Nothing has changed yet: the plan holds if the masks still hold
        what it read (its priors).  One read of the config for every mask."""
        config = self.cluster.config_snapshot()
        moved = [f'{who} {name}: now {show(config.own(who, name))}, {show(prior)} when planned'
                 for who, names in self.r['priors'].items()
                 for name, prior in sorted(names.items()) if config.own(who, name) != prior]
        if moved:
            self._end('failed', 'the config changed since the plan was made (' + _some(moved) +
                      '); nothing was changed: look at the plan again (--dry-run)')
            return 0
        self._enter(P.NEXT, 'restarting the OSDs one at a time')
        return 0

    def _next(self, now: float) -> float:
        r = self.r
        i = next((i for i, o in enumerate(r['osds']) if o['status'] == 'pending'), None)
        if i is None:
            done = len([o for o in r['osds'] if o['status'] == 'done'])
            skipped = [o for o in r['osds'] if o['status'] == 'skipped']
            self._end('done', f'done: {done} OSD(s) restarted on {self._what()}' + (
                f'; skipped: {osd_list([o["osd"] for o in skipped])} (see each)'
                if skipped else ''))
            return 0
        o = r['osds'][i]
        o['status'] = 'restarting'
        r['current'] = i
        self._enter(P.SET, f'osd.{o["osd"]} ({i + 1}/{len(r["osds"])}): setting '
                    f'{self._what()} at its own mask')
        return 0

    def _skip(self, o: RolloutOsd, why: str) -> float:
        """Leave this OSD as it is and go on with the next."""
        o['status'] = 'skipped'
        o['error'] = why
        self.r['current'] = None
        self.r['restart'] = None
        self._enter(P.NEXT, f'osd.{o["osd"]} skipped: {why}')
        return 0

    def _set(self, now: float) -> float:
        """Its own mask, just before its restart (again after a failover: the
        same values)."""
        r = self.r
        o = self._cur()
        who = f'osd.{o["osd"]}'
        config = self.cluster.config_snapshot()
        held = {name: config.own(who, name) for name in r['sets'][who]}
        info = self.cluster.osds().get(o['osd'])
        if info is None or info.destroyed:
            self._unset(o)
            return self._skip(o, ('no longer in the OSD map' if info is None else 'destroyed')
                              + f': its config is as before the {r["kind"]}, nothing to restart')
        theirs = set_by_others(held, r['priors'][who], r['sets'][who])
        if theirs:
            name = theirs[0]
            return self._skip(o, f'{who} {name} is now {show(held[name])}, set by someone '
                              'else since the plan: left as it is, not restarted')
        if not o['changed']:
            try:  # what it runs now: what a revert brings it back to
                o['before'][RUNNING] = self.cluster.config_get_running(o['osd'], OPTIONS)
            except ClusterError:
                o['before'][RUNNING] = ''
            o['changed'] = r['changed'] = True
            self._save(r)  # a revert knows there is something to undo before it is so
        self._write({who: r['sets'][who]})
        if r['kind'] == 'apply':
            wrong = [f'{who} gets {name} {show(got)}' for name, value in r['sets'][who].items()
                     if (got := self.cluster.config_get(who, name)) != value]
            if wrong:
                self._unset(o)
                o['status'] = 'failed'
                o['error'] = '; '.join(wrong)
                o['put_back'] = 'done'
                self._end('failed', f'after its options were set, {"; ".join(wrong)}: '
                          'something beats its mask that the plan did not see; its config is '
                          'put back as it was, and it was not restarted')
                return 0
        self._restarter(o['osd']).begin(r['kind'], now, ran=o.get('back_to', ''))
        self._enter(P.RESTART, f'osd.{o["osd"]}: restarting on {self._what()}')
        return 0

    def _write(self, masks: Dict[str, Dict[str, Optional[str]]]) -> None:
        for who, names in sorted(masks.items()):
            for name, value in sorted(names.items()):
                if value is not None:
                    self.cluster.config_set(who, name, value)
                elif self.cluster.config_get_own(who, name) is not None:
                    self.cluster.config_rm(who, name)

    def _unset(self, o: RolloutOsd) -> None:
        """An OSD not restarted after all: its own mask as it was before."""
        if o['changed']:
            who = f'osd.{o["osd"]}'
            self._write({who: self.r['priors'][who]})
            o['changed'] = False

    def _look(self, osd: int) -> List[str]:
        """The session's health policy, before each restart: what threatens
        data always holds it back, others' checks unless --force; the
        rollout's own crashes (an OSD that did not start) do not, nor an
        admin's noout on the OSD about to restart."""
        r = self.r
        return look(self.cluster, osd,
                    own_crash(r['crash_osds'], r['since'])).blockers(r['force'])

    def _restart(self, now: float) -> float:
        r = self.r
        o = self._cur()
        restarter = self._restarter(o['osd'])
        if r['abort'] and restarter.stage == Stage.GATE:
            # held at the gate: not in flight yet
            self._unset(o)
            o['status'] = 'pending'
            r['current'] = None
            r['restart'] = None
            self._end('aborted', f'aborted before osd.{o["osd"]} was restarted')
            return 0
        blockers = self._look(o['osd']) if restarter.stage == Stage.GATE else []
        if not blockers:
            try:
                res = restarter.step(now)
            except OsdGone as e:
                self._unset(o)
                return self._skip(o, f'{e}: its config is as before the {r["kind"]}')
            except ClusterError as e:
                return self._osd_failed(f'restarting osd.{o["osd"]} failed: {e}')
            if res.outcome.held:
                blockers = res.reasons
        if blockers:
            return self._pause(now, blockers)
        self._unpause()
        self._enter(P.WAIT, f'osd.{o["osd"]}: waiting for it to be up on {self._what()}')
        return self.settings.poll

    def _wait(self, now: float) -> float:
        r = self.r
        o = self._cur()
        try:
            res = self._restarter(o['osd']).step(now)
        except OsdGone as e:
            self._unset(o)
            r['noout_ours'] = False  # on an OSD that is no more
            return self._skip(o, f'{e} (gone during its restart): its config is as before '
                              f'the {r["kind"]}')
        if res.outcome == Outcome.UP:
            self._unpause()
            o['status'] = 'done'
            r['current'] = None
            r['restart'] = None
            self._enter(P.NEXT, f'osd.{o["osd"]} is up on {self._what()}')
            return 0
        if res.outcome.held:
            return self._pause(now, res.reasons)  # others keep PGs from clean
        self._unpause()
        if res.outcome == Outcome.WAITING:
            return self.settings.poll
        timeout = self._restarter(o['osd']).timeout()
        if res.outcome == Outcome.NOT_CLEAN_IN_TIME:
            o['status'] = 'done'  # it runs them: its PGs are not clean
            self._end('failed', f'PGs did not become active+clean within {timeout:.0f}s of '
                      f'restarting osd.{o["osd"]} (it runs {self._what()})')
            return 0
        return self._osd_failed(f'osd.{o["osd"]} did not come back up running '
                                f'{self._what()} within {timeout:.0f}s')

    def _osd_failed(self, error: str) -> float:
        """The OSD in flight did not come back on the options set: apply puts it
        back on its own; a revert stops (there is nothing to go back to)."""
        o = self._cur()
        o['status'] = 'failed'
        o['error'] = error
        if self.r['kind'] != 'apply':
            self._end('failed', error)
            return 0
        self._enter(P.PUT_BACK, f'{error}; putting osd.{o["osd"]} back on its prior options')
        return 0

    def _put_back(self, now: float) -> float:
        """Its own mask as it was before the apply (the plan's priors there),
        then its gated restart onto what it ran before."""
        o = self._cur()
        self._unset(o)
        self._restarter(o['osd']).begin('put_back', now, ran=o['before'].get(RUNNING, ''))
        self._enter(P.PUT_BACK_WAIT, f'{o["error"]}; restarting osd.{o["osd"]} on its prior '
                    'options')
        return 0

    def _put_back_wait(self, now: float) -> float:
        r = self.r
        o = self._cur()
        restarter = self._restarter(o['osd'])
        try:
            res = restarter.step(now)
        except ClusterError as e:
            o['put_back'] = 'failed'
            self._end('failed', f'{o["error"]}; its prior options are set at osd.{o["osd"]}, '
                      f'but restarting it failed: {e}')
            return 0
        if res.outcome == Outcome.GATE_HELD:
            # never forced, as a session's restore
            r['message'] = (f'{o["error"]}; osd.{o["osd"]} is restarted on its prior options '
                            'when it is safe: ' + '; '.join(res.reasons))
            r['alerts']['ROLLOUT_PAUSED'] = health.raised(
                'ROLLOUT_PAUSED', res.reasons + [o['error'], 'its prior options are set at '
                                                 f'osd.{o["osd"]}; it is restarted on them as '
                                                 'soon as the gate allows'],
                kind=r['kind'], why=f'osd.{o["osd"]} waits to be put back on its prior options')
            return max(self.settings.poll, 5.0)
        r['alerts'].pop('ROLLOUT_PAUSED', None)
        if res.outcome.runs_them:
            o['put_back'] = 'done'
            self._end('failed', f'{o["error"]}; it is back on its prior options')
            return 0
        if res.outcome == Outcome.NOT_UP_IN_TIME:
            o['put_back'] = 'failed'
            self._end('failed', f'{o["error"]}; it did not come back on its prior options '
                      f'either within {restarter.timeout():.0f}s (they are set at '
                      f'osd.{o["osd"]})')
            return 0
        return self.settings.poll

    def _pause(self, now: float, reasons: List[str]) -> float:
        """The restart of the OSD in flight must wait; the rollout stops if
        that lasts unhealthy_timeout."""
        r = self.r
        since = now if r['paused_since'] is None else float(r['paused_since'])
        r['paused_since'] = since
        timeout = self.settings.unhealthy_timeout
        if now - since > timeout:
            o = self._cur()
            if Phase(r['phase']) == P.RESTART:
                self._unset(o)  # never restarted: its mask as it was
                o['status'] = 'pending'
            else:
                o['status'] = 'done'  # up on the options set, others keep PGs unclean
            self._end('failed', f'waited {timeout:.0f}s for the cluster: '
                      + '; '.join(reasons))
            return 0
        r['message'] = f'paused before osd.{self._cur()["osd"]}: ' + '; '.join(reasons)
        r['alerts']['ROLLOUT_PAUSED'] = health.raised(
            'ROLLOUT_PAUSED', reasons + [f'the {r["kind"]} stops (the OSDs done stay as they '
                                         f'are) if this lasts {timeout:.0f}s'],
            kind=r['kind'], why='the cluster is not healthy')
        return max(self.settings.poll, 5.0)

    def _unpause(self) -> None:
        self.r['paused_since'] = None
        self.r['alerts'].pop('ROLLOUT_PAUSED', None)

    # ------------------------------------------------------------ the end

    def _end(self, final: str, message: str) -> None:
        r = self.r
        if final != 'done' and r['current'] is not None:
            o = self._cur()
            rec = r['restart']
            if o['status'] == 'restarting' and (Phase(r['phase']) == P.SET or (
                    Phase(r['phase']) == P.RESTART and (rec is None
                                                        or rec['stage'] == Stage.GATE.value))):
                try:  # not restarted: nothing may hold options it has not started on
                    self._unset(o)
                    o['status'] = 'pending'
                except ClusterError as e:
                    message += (f'; the options set at osd.{o["osd"]} could not be put back '
                                f'({e}): it loads them at its next restart')
        if r['current'] is not None and r['noout_ours']:
            try:
                self._restarter(self._cur()['osd']).clear_noout()
            except ClusterError as e:
                message += f'; noout on osd.{self._cur()["osd"]} could not be cleared: {e}'
        health.end_of_job(r['alerts'])
        if r['current'] is not None and r['osds'][r['current']]['status'] == 'restarting' \
                and final != 'done':
            r['osds'][r['current']]['error'] = message  # stopped in flight: may run either
        r['state'] = final
        r['error'] = message if final == 'failed' else ''
        r['restart'] = None
        self._enter(P.END, message)
        r['ended'] = self.clock()
        r['current'] = None
        if final != 'done' and r['changed']:
            code = 'ROLLOUT_FAILED' if final == 'failed' else 'ROLLOUT_INCOMPLETE'
            r['alerts'][code] = self._stopped_alert(code, message)

    def _stopped_alert(self, code: str, message: str) -> Dict[str, Any]:
        r = self.r
        by: Dict[str, List[int]] = {}
        for o in r['osds']:
            by.setdefault(o['status'], []).append(o['osd'])
        n = len(r['osds'])
        detail = [message, f'{len(by.get("done", []))} of {n} OSD(s) run {self._what()}: '
                  + osd_list(by.get('done', []))]
        for o in r['osds']:
            if o['status'] == 'failed' and r['kind'] == 'apply':
                detail.append(f'osd.{o["osd"]}: ' + (
                    'put back on its prior options' if o['put_back'] == 'done' else
                    'its prior options are set at its own mask, but it is NOT known to run '
                    'them: check it'))
        rest = [o for o in r['osds'] if o['status'] in ('pending', 'restarting')]
        untouched = [o['osd'] for o in rest if not o['changed']]
        held = [o['osd'] for o in rest if o['changed']]
        if untouched:
            detail.append(f'not restarted: {osd_list(untouched)}; their config was not changed')
        if held:
            detail.append(f'not restarted: {osd_list(held)}; their config says {self._what()}, '
                          'which they load at their next restart')
        if by.get('skipped'):
            detail.append(f'skipped: {osd_list(by["skipped"])} (`ceph rocks-autotune status` '
                          'says why)')
        if r['kind'] == 'apply':
            detail.append(f'`{REVERT}` puts back the config this apply changed and restarts '
                          'the OSDs that run its options')
        else:
            detail.append(f'`{REVERT}` again finishes the revert')
        return health.raised(code, detail, what={'apply': 'rollout', 'revert': 'revert'}[r['kind']],
                             target=r['target'], done=len(by.get('done', [])), total=n)

    # ------------------------------------------------------------ views

    def health_checks(self) -> Dict[str, Any]:
        return health.publish(self.r['alerts'])

    def progress_event(self) -> views.ProgressEvent:
        r = self.r
        what = ('Rolling out RocksDB options to' if r['kind'] == 'apply' else
                'Reverting the RocksDB options of')
        done = len([o for o in r['osds'] if o['status'] in ('done', 'failed')])
        return views.ProgressEvent(
            id=f'rocks-autotune-{r["kind"]}-{r["id"]}',
            message=f'{what} {r["target"]} ({done}/{len(r["osds"])} OSDs)',
            progress=self.progress(), refs=[('osd', o['osd']) for o in r['osds']],
            failure=(f'rocks_autotune {r["message"]}' if r['state'] in ('failed', 'aborted')
                     else None))

    def progress(self) -> float:
        """The share of OSDs on the options set (a failed one is not: it was put back)."""
        osds = self.r['osds']
        return len([o for o in osds if o['status'] == 'done']) / len(osds) if osds else 1.0

    def status(self) -> Dict[str, Any]:
        return views.rollout_status(self.r, self.progress(), sorted(self.health_checks()))

    def note_internal_error(self, e: Exception) -> None:
        self.r['message'] = f'internal error: {e}'
