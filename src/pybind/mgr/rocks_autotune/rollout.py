r"""A rollout: `apply` (options to a device class, or to named OSDs) and
`revert` (what an apply changed, put back), one OSD at a time.  A persisted
state machine driven by `step()`, as the session is (session.py).

Its plan (rollout_plan.py) is saved with the values it will replace, at every
mask it touches, before anything changes; then it goes OSD by OSD.  The
phases, their table (MOVES) and each phase's step are in rollout_phases.py;
only the rollout moves them (machine.Machine._enter).  Here: the rollout's
life (its start, the abort, a failover), the OSD in flight, its pause
policy, how it ends, and what it shows.

`abort` is persisted by the module before it is acknowledged, and taken
between OSDs (an OSD held at the gate is not in flight yet: its mask is put
back): the rollout ends aborted.  A rollout that stops early raises a health
check that says so, and that `revert` undoes what was done.
"""
import logging
import time
import uuid
from dataclasses import asdict, dataclass, fields
from typing import Any, Callable, Dict, List, Optional, Set

from . import health, views
from .cluster import Cluster, ClusterError
from .machine import Handler, Machine
from .options import default
from .restart import Restarter, Stage, resume_after_failover
from .rollout_phases import MOVES, P, Phase, RolloutPhases
from .rollout_plan import REVERT
from .store import ROLLOUT_VERSION, RolloutOsd, RolloutPlan, RolloutState
from .views import osd_list

log = logging.getLogger(__name__)

ACTIVE = ('running',)
ENDED = ('done', 'aborted', 'failed')


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
        self.phases = RolloutPhases(self)

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
        return self.phases.table()

    # ------------------------------------------------------------ the OSD in flight

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

    # ------------------------------------------------------------ the OSD's mask, the pause

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
