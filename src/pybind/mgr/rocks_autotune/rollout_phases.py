r"""A rollout's phases: the table of its moves, and each phase's step.

A rollout's plan (rollout_plan.py) is saved with the values it will replace,
at every mask it touches, before anything changes.  Then, OSD by OSD:

    check -> next -> set -> restart -> wait -> next ... -> end
                        \        \         \
                         next      put_back -> put_back_wait -> end (failed)
                         (skipped)

An OSD's own mask is set just before its restart, so that no OSD holds
options it has not been seen to start on; an OSD gone from the OSD map, or
whose mask someone else has set since the plan, is skipped and named.  The
health policy (gate.look, as a session's) and the gate
(gate.restart_blockers) hold each restart back; noout is on the OSD while it
restarts.  An OSD that does not come back on the new options (apply) gets
its own prior options at osd.N and a gated restart onto them; the rollout
then ends failed: the OSDs done stay on the new options, the others' config
was never touched.

Each handler returns its move, which the engine (machine.py) makes.
"""
from enum import Enum
from typing import Any, Callable, Dict, Optional, Tuple

from .canary import OPTIONS
from .cluster import Cluster, ClusterError
from .gate import look
from .health import osd_list, rolled
from .machine import Go, Handler, Move, Pause, Phases
from .restart import OsdGone, Outcome, Restarter, Stage
from .rollout_plan import RUNNING, _some, own_crash, set_by_others, show
from .rollout_record import RolloutOsd, RolloutRecord


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


class RolloutPhases(Phases):
    """Each phase's step, and the OSD in flight and the end they share."""

    def __init__(self, r: RolloutRecord, cluster: Cluster,
                 save: Callable[[RolloutRecord], None], clock: Callable[[], float]) -> None:
        self.r = r
        self.cluster = cluster
        self.settings = r.settings
        self.save = save
        self.clock = clock

    def table(self) -> Dict[Any, Handler]:
        return {P.CHECK: self.check, P.NEXT: self.next_osd, P.SET: self.set_mask,
                P.RESTART: self.restart, P.WAIT: self.wait, P.PUT_BACK: self.put_back,
                P.PUT_BACK_WAIT: self.put_back_wait}

    # ------------------------------------------------------------ the OSD in flight

    def cur(self) -> RolloutOsd:
        i = self.r.current
        if i is None:
            raise ValueError(f'no OSD in flight in phase {self.r.phase}')
        return self.r.osds[i]

    def restarter(self, osd: int) -> Restarter:
        return Restarter(self.cluster, osd, self.r, lambda: self.save(self.r),
                         self.settings.restart_timeout, self.settings.manual_restart_timeout,
                         single_copy_ok=self.r.allow_single_copy)

    def what(self) -> str:
        return rolled(self.r.kind)

    # ------------------------------------------------------------ the OSD's mask, the pause

    def write(self, who: str, values: Dict[str, Optional[str]],
              held: Optional[Dict[str, Optional[str]]] = None) -> None:
        """`held`: what the mask holds, just read (else a value to remove is
        looked up: a config dump, of every OSD's entries)."""
        for name, value in sorted(values.items()):
            if value is not None:
                self.cluster.config_set(who, name, value)
            elif (held[name] if held is not None
                  else self.cluster.config_get_own(who, name)) is not None:
                self.cluster.config_rm(who, name)

    def unset(self, o: RolloutOsd) -> None:
        """An OSD not restarted after all: its own mask as it was before."""
        if o.changed:
            self.write(f'osd.{o.osd}', self.r.priors[f'osd.{o.osd}'])
            o.changed = False

    def timed_out(self, pause: Pause) -> Go:
        """The restart of the OSD in flight waited unhealthy_timeout: the rollout stops."""
        o = self.cur()
        # held at the gate: never restarted, the end puts its mask back
        if self.restarter(o.osd).stage != Stage.GATE:
            # up on the options set, others keep PGs unclean (in the restart
            # phase too, when a failover found its restart already done)
            o.status = 'done'
        return self.end('failed', f'waited {self.settings.unhealthy_timeout:.0f}s for the '
                        'cluster: ' + '; '.join(pause.reasons))

    # ------------------------------------------------------------ the end

    def end(self, final: str, message: str) -> Go:
        r = self.r
        if r.current is not None:  # none at 'done': each OSD ends in a step of its own
            o = self.cur()
            rec = r.restart
            if o.status == 'restarting' and (r.phase == P.SET or r.phase == P.RESTART and (
                    rec is None or rec.stage == Stage.GATE)):
                try:  # not restarted: nothing may hold options it has not started on
                    self.unset(o)
                    o.status = 'pending'
                except ClusterError as e:
                    message += (f'; the options set at osd.{o.osd} could not be put back '
                                f'({e}): it loads them at its next restart')
            if r.noout_ours:
                try:
                    self.restarter(o.osd).clear_noout()
                except ClusterError as e:
                    message += f'; noout on osd.{o.osd} could not be cleared: {e}'
            if o.status == 'restarting':
                o.error = message  # stopped in flight: may run either
        r.state = final
        r.error = message if final == 'failed' else ''
        r.restart = None
        r.ended = self.clock()
        r.current = None
        return Go(P.END, message)

    def check(self, now: float) -> Move:
        config = self.cluster.config_snapshot()
        moved = [f'{who} {name}: now {show(config.own(who, name))}, {show(prior)} when planned'
                 for who, names in self.r.priors.items()
                 for name, prior in sorted(names.items()) if config.own(who, name) != prior]
        if moved:
            return self.end('failed', 'the config changed since the plan was made ('
                            + _some(moved) + '); nothing was changed: look at the plan '
                            'again (--dry-run)')
        return Go(P.NEXT, 'restarting the OSDs one at a time')

    def next_osd(self, now: float) -> Move:
        r = self.r
        i = next((i for i, o in enumerate(r.osds) if o.status == 'pending'), None)
        if i is None:
            done = len([o for o in r.osds if o.status == 'done'])
            skipped = [o for o in r.osds if o.status == 'skipped']
            return self.end('done', f'done: {done} OSD(s) restarted on {self.what()}' + (
                       f'; skipped: {osd_list([o.osd for o in skipped])} (see each)'
                       if skipped else ''))
        o = r.osds[i]
        o.status = 'restarting'
        r.current = i
        return Go(P.SET, f'osd.{o.osd} ({i + 1}/{len(r.osds)}): setting '
                  f'{self.what()} at its own mask')

    def skip(self, o: RolloutOsd, why: str) -> Go:
        o.status = 'skipped'
        o.error = why
        self.r.current = None
        self.r.restart = None
        return Go(P.NEXT, f'osd.{o.osd} skipped: {why}')

    def set_mask(self, now: float) -> Move:
        """Its own mask, just before its restart (after a failover again: the same values)."""
        r = self.r
        o = self.cur()
        who = f'osd.{o.osd}'
        config = self.cluster.config_snapshot()
        held = {name: config.own(who, name) for name in r.sets[who]}
        info = self.cluster.osd_state(o.osd)
        if info is None or info.destroyed:
            self.unset(o)
            return self.skip(o, ('no longer in the OSD map' if info is None else 'destroyed')
                             + f': its config is as before the {r.kind}, nothing to restart')
        theirs = set_by_others(held, r.priors[who], r.sets[who])
        if theirs:
            name = theirs[0]
            return self.skip(o, f'{who} {name} is now {show(held[name])}, set by someone '
                             'else since the plan: left as it is, not restarted')
        if not o.changed:
            try:  # what it runs now: what a revert brings it back to
                o.before[RUNNING] = self.cluster.config_get_running(o.osd, OPTIONS)
            except ClusterError:
                o.before[RUNNING] = ''
            o.changed = r.changed = True
            self.save(r)  # a revert knows there is something to undo before it is so
        self.write(who, r.sets[who], held)
        if r.kind == 'apply':
            wrong = [f'{who} gets {name} {show(got)}' for name, value in r.sets[who].items()
                     if (got := self.cluster.config_get(who, name)) != value]
            if wrong:
                self.unset(o)
                o.status = 'failed'
                o.error = '; '.join(wrong)
                o.put_back = 'done'
                return self.end('failed', f'after its options were set, {"; ".join(wrong)}: '
                                'something beats its mask that the plan did not see; its config is '
                                'put back as it was, and it was not restarted')
        if r.kind == 'revert' and not info.up:
            # a down OSD (maybe the one the options broke) starts on what
            # was put back; restarting it is not the revert's to do
            return self.skip(o, 'down: its config is put back, not restarted; it starts on it '
                             'when it comes up')
        self.restarter(o.osd).begin(r.kind, now, ran=o.back_to)
        return Go(P.RESTART, f'osd.{o.osd}: restarting on {self.what()}')

    def restart(self, now: float) -> Move:
        r = self.r
        o = self.cur()
        restarter = self.restarter(o.osd)
        if r.abort and restarter.stage == Stage.GATE:
            # held at the gate: not in flight yet (the end puts its mask back
            # and clears our noout, which a failover may have left set)
            return self.end('aborted', f'aborted before osd.{o.osd} was restarted')
        # the session's health policy; the rollout's own crashes (an OSD that
        # did not start) do not hold it back, nor an admin's noout on the OSD
        blockers = (look(self.cluster, o.osd, own_crash(r.crash_osds, r.since)).blockers(r.force)
                    if restarter.stage == Stage.GATE else [])
        if not blockers:
            try:
                res = restarter.step(now)
            except OsdGone as e:
                self.unset(o)
                return self.skip(o, f'{e}: its config is as before the {r.kind}')
            except ClusterError as e:
                return self.osd_failed(f'restarting osd.{o.osd} failed: {e}')
            if res.outcome.held:
                blockers = res.reasons
        if blockers:
            return Pause(blockers, f'paused before osd.{o.osd}')
        return Go(P.WAIT, f'osd.{o.osd}: waiting for it to be up on {self.what()}',
                  self.settings.poll)

    def wait(self, now: float) -> Move:
        r = self.r
        o = self.cur()
        try:
            res = self.restarter(o.osd).step(now)
        except OsdGone as e:
            self.unset(o)
            r.noout_ours = False  # on an OSD that is no more
            return self.skip(o, f'{e} (gone during its restart): its config is as before '
                             f'the {r.kind}')
        if res.outcome == Outcome.UP:
            o.status = 'done'
            r.current = None
            r.restart = None
            return Go(P.NEXT, f'osd.{o.osd} is up on {self.what()}')
        if res.outcome.held:
            return Pause(res.reasons, f'paused before osd.{o.osd}')  # others keep PGs unclean
        if res.outcome == Outcome.WAITING:
            return self.settings.poll
        timeout = self.restarter(o.osd).timeout()
        if res.outcome == Outcome.NOT_CLEAN_IN_TIME:
            o.status = 'done'  # it runs them: its PGs are not clean
            return self.end('failed', f'PGs did not become active+clean within {timeout:.0f}s of '
                            f'restarting osd.{o.osd} (it runs {self.what()})')
        return self.osd_failed(f'osd.{o.osd} did not come back up running '
                               f'{self.what()} within {timeout:.0f}s')

    def osd_failed(self, error: str) -> Go:
        """The OSD in flight did not come back on the options set: apply puts it
        back on its own; a revert stops (there is nothing to go back to)."""
        o = self.cur()
        o.status = 'failed'
        o.error = error
        if self.r.kind != 'apply':
            return self.end('failed', error)
        return Go(P.PUT_BACK, f'{error}; putting osd.{o.osd} back on its prior options')

    def put_back(self, now: float) -> Move:
        o = self.cur()
        self.unset(o)
        self.restarter(o.osd).begin('put_back', now, ran=o.before.get(RUNNING, ''))
        return Go(P.PUT_BACK_WAIT, f'{o.error}; restarting osd.{o.osd} on its prior '
                  'options')

    def put_back_wait(self, now: float) -> Move:
        o = self.cur()
        restarter = self.restarter(o.osd)
        try:
            res = restarter.step(now)
        except ClusterError as e:
            o.put_back = 'failed'
            return self.end('failed', f'{o.error}; its prior options are set at osd.{o.osd}, '
                            f'but restarting it failed: {e}')
        if res.outcome == Outcome.GATE_HELD:
            # never forced, as a session's restore
            return Pause(res.reasons, f'{o.error}; osd.{o.osd} is restarted on its prior '
                         'options when it is safe', 'put_back', o.osd, timed=False)
        if res.outcome.runs_them:
            o.put_back = 'done'
            return self.end('failed', f'{o.error}; it is back on its prior options')
        if res.outcome == Outcome.NOT_UP_IN_TIME:
            o.put_back = 'failed'
            return self.end('failed', f'{o.error}; it did not come back on its prior options '
                            f'either within {restarter.timeout():.0f}s (they are set at '
                            f'osd.{o.osd})')
        return self.settings.poll
