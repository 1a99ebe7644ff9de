"""The one way an OSD is restarted (the canary's, and each OSD of a rollout):
gate, restart, up on the options set, PGs active+clean.
Design: doc/dev/internals.rst, dev-internals-restart."""
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, List, Sequence

from .canary import OPTIONS
from .cluster import Cluster, ClusterError, NoOrchestrator, OsdInfo
from .gate import restart_blockers
from .canary_record import RestartRecord, RestartState
from .health import osds_are


class Stage(str, Enum):
    GATE = 'gate'
    ISSUING = 'issuing'  # saved before the restart call: a mgr gone in it leaves this
    WAIT_UP = 'wait_up'
    WAIT_CLEAN = 'wait_clean'


class OsdGone(ClusterError):
    """The OSD is no longer in the OSD map (purged, destroyed): nothing to restart."""


class Outcome(Enum):
    """What a restart has come to; callers act on this, never on a stage.
    A restart that could not be issued raises ClusterError instead."""
    WAITING = 'waiting'                      # poll again
    GATE_HELD = 'gate_held'                  # not restarted: the gate says no (reasons)
    # up on the options set; other OSDs keep PGs from clean (reasons): not its doing
    OTHERS_UNCLEAN = 'others_unclean'
    UP = 'up'                                # up on the options set, PGs active+clean
    NOT_UP_IN_TIME = 'not_up_in_time'        # not up on the options set within the timeout
    NOT_CLEAN_IN_TIME = 'not_clean_in_time'  # up on them; PGs not clean within the timeout

    @property
    def held(self) -> bool:
        """Held by the cluster, not by this OSD: the caller pauses."""
        return self in (Outcome.GATE_HELD, Outcome.OTHERS_UNCLEAN)

    @property
    def runs_them(self) -> bool:
        """The OSD is up on the options set, whatever its PGs."""
        return self in (Outcome.UP, Outcome.OTHERS_UNCLEAN, Outcome.NOT_CLEAN_IN_TIME)


@dataclass
class Result:
    outcome: Outcome
    reasons: List[str] = field(default_factory=list)


# restarts back onto options an OSD ran before: the single-copy rule, which
# the way there passed (or was allowed past), does not hold them back
WAY_BACK = ('restore', 'recovery', 'put_back')


def resume_after_failover(state: RestartState, now: float) -> None:
    """A new active mgr took over a restart in flight: its deadline restarts
    on this mgr's clock.  Two mgrs' clocks are never compared (one an hour
    ahead would call a booting OSD failed); the price is one timeout more."""
    if state.restart is not None:
        state.restart.since = now


class Restarter:
    """Drives the restart recorded in `state.restart`, one poll at a time.
    `single_copy_ok`: --allow-single-copy.  `together`: the rest of its
    rollout batch: gated together, and its PGs not expected clean while one
    of them is down."""

    def __init__(self, cluster: Cluster, osd: int, state: RestartState,
                 save: Callable[[], None], restart_timeout: float,
                 manual_restart_timeout: float, single_copy_ok: bool = False,
                 together: Sequence[int] = ()) -> None:
        self.cluster, self.osd, self.s, self._save = cluster, osd, state, save
        self.restart_timeout, self.manual_restart_timeout = restart_timeout, manual_restart_timeout
        self.single_copy_ok = single_copy_ok
        self.together = together

    def timeout(self) -> float:
        """An admin restarting by hand gets longer."""
        return self.manual_restart_timeout if self.s.manual else self.restart_timeout

    def begin(self, purpose: str, now: float, ran: str = '') -> None:
        """Record a restart onto what the mon now has for the OSD.  `ran`: when
        going back, the options it ran before, which it may run instead (a
        class mask's entry does not reach BlueStore: canary.CLASS_MASK_NOTE)."""
        self.s.restart = RestartRecord(
            purpose=purpose, stage=Stage.GATE.value, since=now, up_from=None,
            expect=self.cluster.config_get(f'osd.{self.osd}', OPTIONS), ran=ran)

    def _rec(self) -> RestartRecord:
        r = self.s.restart
        if r is None:
            raise ValueError('no restart in flight')
        return r

    @property
    def stage(self) -> Stage:
        return Stage(self._rec().stage)

    def set_noout(self) -> None:
        """Our own noout, recorded (and saved) before it is set."""
        if self.cluster.has_noout(self.osd):
            return  # ours already, or the admin's (which then stays)
        self.s.noout_ours = True
        self._save()
        self.cluster.set_noout(self.osd, True)

    def clear_noout(self) -> None:
        """Only the noout we set: an admin's own stays."""
        if self.s.noout_ours:
            self.cluster.set_noout(self.osd, False)
            self.s.noout_ours = False

    def step(self, now: float) -> Result:
        # one OSD map for this step's reads, decoded once; no read follows an action
        with self.cluster.one_view():
            r = self._rec()
            if self.stage == Stage.ISSUING:
                # the mgr went away in the restart call (seen on the lab: the OSD
                # stopped and never started); the OSD tells how far it got
                info = self._info()
                if info.up_from != r.up_from:
                    r.stage, r.since = Stage.WAIT_UP.value, now  # it did restart
                elif not info.up:
                    # stopped by that call, it may be starting: give it a restart's time
                    if now - r.since < self.timeout():
                        return Result(Outcome.WAITING)
                    return self._issue(now)  # stopped and never started: start it
                else:
                    r.stage = Stage.GATE.value  # not restarted: ask the gate again
            if self.stage == Stage.GATE:
                blockers = restart_blockers(self.cluster, self.osd, self.single_copy_ok
                                            or r.purpose in WAY_BACK, self.together)
                if blockers:
                    return Result(Outcome.GATE_HELD, blockers)
                return self.start(now)
            return self._after_issue(now)

    def start(self, now: float) -> Result:
        """Past the gate (this step's, or its batch's): noout, then the restart."""
        r = self._rec()
        up_from = self._info().up_from
        self.set_noout()
        r.up_from = up_from
        r.stage, r.since = Stage.ISSUING.value, now
        if r.purpose == 'candidate':
            # from here on the process may load the candidate: say so first
            self.s.running_dirty = True
        self._save()
        return self._issue(now)

    def _issue(self, now: float) -> Result:
        """The restart call; ClusterError propagates to the caller."""
        r = self._rec()
        try:
            self.cluster.restart_osd(self.osd)
            self.s.manual = ''
        except NoOrchestrator as e:
            self.s.manual = str(e) or 'none is set'  # the admin restarts it
        r.stage, r.since = Stage.WAIT_UP.value, now
        r.issued = now
        return Result(Outcome.WAITING)

    def _after_issue(self, now: float) -> Result:
        r = self._rec()
        late = now - r.since > self.timeout()
        info = self._info()
        if self.stage == Stage.WAIT_UP:
            if not self._runs_what_was_set(info):
                return Result(Outcome.NOT_UP_IN_TIME if late else Outcome.WAITING)
            self.s.running_dirty = r.purpose == 'candidate'
            if r.issued is not None:
                r.up_seconds = now - r.issued
            r.stage, r.since = Stage.WAIT_CLEAN.value, now
            late = False
        if self.cluster.pgs_active_clean():
            self.clear_noout()
            return Result(Outcome.UP)
        osds = [i for i in self.cluster.osd_states().values() if i.id != self.osd]
        if any(not i.up for i in osds if i.id in self.together):
            r.since = now  # its PGs' time to be clean starts once its batch is up
            return Result(Outcome.WAITING)
        others = (osds_are([i.id for i in osds if not i.up], 'down')
                  + osds_are([i.id for i in osds if i.up and not i.in_], 'out'))
        if others:
            # another OSD's trouble is not the canary's fault
            return Result(Outcome.OTHERS_UNCLEAN, others + ['not all PGs are active+clean'])
        return Result(Outcome.NOT_CLEAN_IN_TIME if late else Outcome.WAITING)

    def _info(self) -> OsdInfo:
        info = self.cluster.osd_state(self.osd)
        if info is None:
            raise OsdGone(f'osd.{self.osd} is no longer in the OSD map')
        return info

    def _runs_what_was_set(self, info: OsdInfo) -> bool:
        """Up since the restart, and the process reports the options set."""
        r = self._rec()
        if not info.up or info.up_from <= (r.up_from or 0):
            return False
        try:
            running = self.cluster.config_get_running(self.osd, OPTIONS)
            return running == r.expect or (bool(r.ran) and running == r.ran)
        except ClusterError:  # just started, or died again: not running yet
            return False
