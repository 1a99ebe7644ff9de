"""A rollout's phases: the table of its moves, and each phase's step (batch by
batch: set each OSD's mask, restart it, wait; put a failed one back).
Design: doc/dev/internals.rst, dev-internals-rollout."""
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .canary import OPTIONS
from .cluster import Cluster, ClusterError
from .gate import look
from .health import osd_list, osds_are, rolled
from .machine import End, Go, Handler, Move, Pause, Phases
from .restart import OsdGone, Outcome, Restarter, Stage
from .rollout_plan import RUNNING, _some, at_a_time, own_crash, set_by_others, show
from .rollout_record import InFlight, RolloutOsd, RolloutRecord


class Phase(str, Enum):
    CHECK = 'check'                  # nothing changed yet: do the masks hold the priors?
    NEXT = 'next'                    # the next batch of pending OSDs, or the end
    SET = 'set'                      # their own masks, just before their restart
    RESTART = 'restart'              # the batch in flight: health, the gate, its restarts
    WAIT = 'wait'                    # all up on the options set, PGs active+clean
    PUT_BACK = 'put_back'            # apply: a failed OSD's prior options at osd.N
    PUT_BACK_WAIT = 'put_back_wait'  # its gated restart onto them
    END = 'end'


P = Phase
# the allowed moves: END from any phase but the last is an abort, a failure,
# or repeated errors; back to NEXT from set, restart or wait: the batch's OSDs
# were skipped (gone from the OSD map, or a mask set by someone else)
MOVES: Dict[Phase, Tuple[Phase, ...]] = {
    P.CHECK: (P.NEXT, P.END),
    P.NEXT: (P.SET, P.END),
    P.SET: (P.RESTART, P.NEXT, P.END),
    # put_back: the restart could not be issued
    P.RESTART: (P.WAIT, P.PUT_BACK, P.NEXT, P.END),
    P.WAIT: (P.NEXT, P.PUT_BACK, P.END),
    P.PUT_BACK: (P.PUT_BACK_WAIT, P.END),
    P.PUT_BACK_WAIT: (P.PUT_BACK, P.END),  # put_back: another failed OSD of its batch
    P.END: (),
}


class RolloutPhases(Phases):
    """Each phase's step, and the batch in flight and the end they share."""

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

    # ------------------------------------------------------------ the batch in flight

    def osd(self, f: InFlight) -> RolloutOsd:
        return self.r.osds[f.i]

    def flying(self) -> List[InFlight]:
        """The batch's OSDs still restarting (not done, failed nor skipped)."""
        return [f for f in self.r.batch if self.osd(f).status == 'restarting']

    def restarter(self, f: InFlight) -> Restarter:
        together = [self.osd(g).osd for g in self.flying() if g is not f]
        return Restarter(self.cluster, self.osd(f).osd, f, lambda: self.save(self.r),
                         self.settings.restart_timeout, self.settings.manual_restart_timeout,
                         single_copy_ok=self.r.allow_single_copy, together=together)

    def what(self) -> str:
        return rolled(self.r.kind)

    def names(self, batch: List[InFlight]) -> str:
        return osd_list([self.osd(f).osd for f in batch])

    # ------------------------------------------------------------ an OSD's mask, the pause

    def write(self, who: str, values: Dict[str, Optional[str]],
              held: Optional[Dict[str, Optional[str]]] = None) -> None:
        """`held`: what the mask holds, just read (else a value to remove is
        looked up: a config dump of every OSD's entries)."""
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

    def timed_out(self, pause: Pause) -> End:
        """The batch in flight waited unhealthy_timeout: the rollout stops."""
        for f in self.flying():
            # held at the gate: never restarted, the end puts its mask back
            if self.restarter(f).stage != Stage.GATE:
                # up on the options set, others keep PGs unclean (in the restart
                # phase too, when a failover found its restart already done)
                self.osd(f).status = 'done'
        return self.end('failed', f'waited {self.settings.unhealthy_timeout:.0f}s for the '
                        'cluster: ' + '; '.join(pause.reasons))

    # ------------------------------------------------------------ the end

    def end(self, final: str, message: str) -> End:
        r = self.r
        for f in r.batch:  # none at 'done': each batch ends in a step of its own
            o = self.osd(f)
            rec = f.restart
            if o.status == 'restarting' and (r.phase == P.SET or r.phase == P.RESTART and (
                    rec is None or rec.stage == Stage.GATE)):
                try:  # not restarted: nothing may hold options it has not started on
                    self.unset(o)
                    o.status = 'pending'
                except ClusterError as e:
                    message += (f'; the options set at osd.{o.osd} could not be put back '
                                f'({e}): it loads them at its next restart')
            if f.noout_ours:
                try:
                    self.restarter(f).clear_noout()
                except ClusterError as e:
                    message += f'; noout on osd.{o.osd} could not be cleared: {e}'
        for f in self.flying():
            self.osd(f).error = message  # stopped in flight: may run either
        r.error = message if final == 'failed' else ''
        r.batch = []
        return End(final, message)

    def check(self, now: float) -> Move:
        config = self.cluster.config_snapshot()
        moved = [f'{who} {name}: now {show(config.own(who, name))}, {show(prior)} when planned'
                 for who, names in self.r.priors.items()
                 for name, prior in sorted(names.items()) if config.own(who, name) != prior]
        if moved:
            return self.end('failed', 'the config changed since the plan was made ('
                            + _some(moved) + '); nothing was changed: look at the plan '
                            'again (--dry-run)')
        return Go(P.NEXT, 'restarting the OSDs ' + at_a_time(self.r.max_parallel))

    def next_osd(self, now: float) -> Move:
        """The next batch: the first pending OSD, and (--max-parallel N) the
        pending ones ok-to-stop --max N says may stop with it, in plan order."""
        r = self.r
        pending = [i for i, o in enumerate(r.osds) if o.status == 'pending']
        if not pending:
            done = len([o for o in r.osds if o.status == 'done'])
            skipped = [o for o in r.osds if o.status == 'skipped']
            return self.end('done', f'done: {done} OSD(s) restarted on {self.what()}' + (
                       f'; skipped: {osd_list([o.osd for o in skipped])} (see each)'
                       if skipped else ''))
        i = pending[0]
        batch = [i]
        if r.max_parallel > 1:
            may = set(self.cluster.ok_to_stop_max(r.osds[i].osd, r.max_parallel))
            if r.osds[i].osd in may:  # an answer of others is none of its
                batch += [j for j in pending[1:] if r.osds[j].osd in may][:r.max_parallel - 1]
        r.batch = [InFlight(j) for j in batch]
        for j in batch:
            r.osds[j].status = 'restarting'
        if len(batch) == 1:
            return Go(P.SET, f'osd.{r.osds[i].osd} ({i + 1}/{len(r.osds)}): setting '
                      f'{self.what()} at its own mask')
        return Go(P.SET, f'{self.names(r.batch)} ({len(batch)} OSDs from {i + 1}/{len(r.osds)}, '
                  f'as ok-to-stop allows): setting {self.what()} at their own masks')

    def skip(self, f: InFlight, why: str) -> str:
        """An OSD of the batch left out: named, and why."""
        o = self.osd(f)
        o.status = 'skipped'
        o.error = why
        self.r.batch.remove(f)
        return f'osd.{o.osd} skipped: {why}'

    def set_mask(self, now: float) -> Move:
        """Each one's own mask, just before their restart (again after a failover)."""
        r = self.r
        said = ''
        with self.cluster.one_view():
            config = self.cluster.config_snapshot()
            for f in self.flying():
                o = self.osd(f)
                who = f'osd.{o.osd}'
                held = {name: config.own(who, name) for name in r.sets[who]}
                info = self.cluster.osd_state(o.osd)
                if info is None or info.destroyed:
                    self.unset(o)
                    said = self.skip(f, ('no longer in the OSD map' if info is None
                                         else 'destroyed') + f': its config is as before the '
                                     f'{r.kind}, nothing to restart')
                    continue
                theirs = set_by_others(held, r.priors[who], r.sets[who])
                if theirs:
                    name = theirs[0]
                    said = self.skip(f, f'{who} {name} is now {show(held[name])}, set by '
                                     'someone else since the plan: left as it is, not restarted')
                    continue
                if not o.changed:
                    try:  # what it runs now: what a revert brings it back to
                        o.before[RUNNING] = self.cluster.config_get_running(o.osd, OPTIONS)
                    except ClusterError:
                        o.before[RUNNING] = ''
                    o.changed = r.changed = True
                    self.save(r)  # a revert knows there is something to undo before it is so
                self.write(who, r.sets[who], held)
                if r.kind == 'apply':
                    wrong = [f'{who} gets {name} {show(got)}'
                             for name, value in r.sets[who].items()
                             if (got := self.cluster.config_get(who, name)) != value]
                    if wrong:
                        self.unset(o)
                        self.fail(f, '; '.join(wrong))
                        o.put_back = 'done'
                        return self.end('failed', f'after its options were set, '
                                        f'{"; ".join(wrong)}: something beats its mask that '
                                        'the plan did not see; its config is put back as it '
                                        'was, and it was not restarted')
                if r.kind == 'revert' and not info.up:
                    # a down OSD (maybe the one the options broke) starts on what
                    # was put back; restarting it is not the revert's to do
                    said = self.skip(f, 'down: its config is put back, not restarted; it '
                                     'starts on it when it comes up')
                    continue
                self.restarter(f).begin(r.kind, now, ran=o.back_to)
        if not r.batch:
            return Go(P.NEXT, said)
        return Go(P.RESTART, f'{self.names(r.batch)}: restarting on {self.what()}')

    def restart(self, now: float) -> Move:
        """Health and the gate, for the batch together, then each one's restart."""
        r = self.r
        batch = self.flying()
        restarters = [self.restarter(f) for f in batch]
        names = self.names(batch)
        if all(x.stage == Stage.GATE for x in restarters):
            if r.abort:
                # held at the gate: not in flight yet (the end puts the masks back
                # and clears our noout, which a failover may have left set)
                return self.end('aborted', f'aborted before {names} '
                                f'{"was" if len(batch) == 1 else "were"} restarted')
            # the session's health policy; the rollout's own crashes (an OSD that
            # did not start) do not hold it back, nor an admin's noout on the OSD
            blockers = look(self.cluster, self.osd(batch[0]).osd,
                            own_crash(r.crash_osds, r.since)).blockers(r.force)
            if blockers:
                return Pause(blockers, f'paused before {names}')
        said = ''
        passed = False  # the batch's gate, asked once for all of it (after a failover
        # in its restart calls, of those still at the gate, with the batch)
        with self.cluster.one_view():  # the gate's reads, and each one's before its restart
            for f, x in zip(batch, restarters):
                o = self.osd(f)
                at_gate = x.stage == Stage.GATE
                try:
                    res = x.start(now) if at_gate and passed else x.step(now)
                except OsdGone as e:
                    self.unset(o)
                    said = self.skip(f, f'{e}: its config is as before the {r.kind}')
                    continue
                except ClusterError as e:
                    self.fail(f, f'restarting osd.{o.osd} failed: {e}')
                    continue
                if res.outcome.held:
                    return Pause(res.reasons, f'paused before {names}')
                passed = passed or at_gate
        if self.flying():
            return Go(P.WAIT, f'{self.names(self.flying())}: waiting for '
                      f'{"it" if len(self.flying()) == 1 else "them"} to be up on {self.what()}',
                      self.settings.poll)
        return self.settled(said) or self.settings.poll

    def wait(self, now: float) -> Move:
        """Each of the batch up on the options set, then PGs active+clean."""
        r = self.r
        said = ''
        up: List[int] = []
        held: Dict[int, List[str]] = {}  # up on the options set; others keep PGs unclean
        with self.cluster.one_view():  # the batch judged on one OSD map
            for f in self.flying():
                o = self.osd(f)
                x = self.restarter(f)
                try:
                    res = x.step(now)
                except OsdGone as e:
                    self.unset(o)
                    f.noout_ours = False  # on an OSD that is no more
                    said = self.skip(f, f'{e} (gone during its restart): its config is as '
                                     f'before the {r.kind}')
                    continue
                if res.outcome == Outcome.UP:
                    o.status = 'done'
                    up.append(o.osd)
                elif res.outcome.held:
                    held[f.i] = res.reasons
                elif res.outcome == Outcome.NOT_CLEAN_IN_TIME:
                    o.status = 'done'  # it runs them: its PGs are not clean
                    return self.end('failed', f'PGs did not become active+clean within '
                                    f'{x.timeout():.0f}s of restarting osd.{o.osd} (it runs '
                                    f'{self.what()})')
                elif res.outcome == Outcome.NOT_UP_IN_TIME:
                    self.fail(f, f'osd.{o.osd} did not come back up running {self.what()} '
                              f'within {x.timeout():.0f}s')
        if up:
            said = osds_are(up, f'up on {self.what()}')[0]
        left = self.flying()
        if left and all(f.i in held for f in left):
            if any(self.osd(g).status == 'failed' for g in r.batch):
                for f in left:  # they run the options; a failed one of theirs keeps PGs unclean
                    self.osd(f).status = 'done'
                    self.restarter(f).clear_noout()
            else:
                return Pause(held[left[0].i], f'paused before {self.names(left)}')
        return self.settled(said) or self.settings.poll

    def fail(self, f: InFlight, error: str) -> None:
        """An OSD of the batch failed (did not come back on the options set)."""
        o = self.osd(f)
        o.status = 'failed'
        o.error = error

    def settled(self, said: str) -> Optional[Union[Go, End]]:
        """Once none of the batch is in flight: its failed OSDs put back (apply;
        a revert stops: there is nothing to go back to), else the next batch."""
        r = self.r
        if self.flying():
            return None
        failed = [f for f in r.batch if self.osd(f).status == 'failed']
        if not failed:
            r.batch = []
            return Go(P.NEXT, said)
        o = self.osd(failed[0])
        if r.kind != 'apply':
            return self.end('failed', o.error)
        return Go(P.PUT_BACK, f'{o.error}; putting osd.{o.osd} back on its prior options')

    def putting_back(self) -> InFlight:
        """The batch's failed OSD being put back: the first not yet."""
        f = next((f for f in self.r.batch if self.osd(f).status == 'failed'
                  and not self.osd(f).put_back), None)
        if f is None:
            raise ValueError(f'no OSD to put back in phase {self.r.phase}')
        return f

    def put_back(self, now: float) -> Move:
        f = self.putting_back()
        o = self.osd(f)
        self.unset(o)
        self.restarter(f).begin('put_back', now, ran=o.before.get(RUNNING, ''))
        return Go(P.PUT_BACK_WAIT, f'{o.error}; restarting osd.{o.osd} on its prior '
                  'options')

    def put_back_wait(self, now: float) -> Move:
        f = self.putting_back()
        o = self.osd(f)
        restarter = self.restarter(f)
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
            if any(self.osd(g).status == 'failed' and not self.osd(g).put_back
                   for g in self.r.batch):
                return Go(P.PUT_BACK, f'{o.error}; it is back on its prior options')
            return self.end('failed', f'{o.error}; it is back on its prior options')
        if res.outcome == Outcome.NOT_UP_IN_TIME:
            o.put_back = 'failed'
            return self.end('failed', f'{o.error}; it did not come back on its prior options '
                            f'either within {restarter.timeout():.0f}s (they are set at '
                            f'osd.{o.osd})')
        return self.settings.poll
