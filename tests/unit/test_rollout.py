"""apply and revert: the plan (rollout_plan.py) and the rollout state machine
(rollout.py) against the fake cluster and its clock, persisted through
RolloutStore as the module does."""
import json
import shlex
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from fake_cluster import FakeClock, FakeCluster
from rocks_autotune import report, session_start, store
from rocks_autotune.canary import ANNEX, OPTIONS
from rocks_autotune.health import osd_list
from rocks_autotune.confirm import Arm
from rocks_autotune.session_settings import Params, Settings
from rocks_autotune.rocksdb_options import NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT
from rocks_autotune.rollout import MOVES, Phase, Rollout, RolloutSettings
from rocks_autotune.rollout_plan import (NothingToRevert, RolloutRefused, parse_osd_ids,
                                         plan_apply, plan_revert, recommendation,
                                         undo_commands)
from rocks_autotune.steady_check import SteadyVerdict
from rocks_autotune.store import RolloutStore, SessionState, StoreError
from rocks_autotune.workload import OSD_BENCH
from session_harness import a_confirmation, an_arm

NEW = NEW_TUNING
# three hosts, listed by the tree out of id order; osd.6 and osd.7 are HDDs
HOSTS = {'b': [3, 0], 'a': [1, 4], 'c': [2, 5, 6, 7]}


class KV:
    def __init__(self) -> None:
        self.d: Dict[str, str] = {}
        self.fails = False
        self.refuses: Callable[[str], bool] = lambda key: self.fails
        self.writes: List[str] = []

    def get(self, key: str) -> Optional[str]:
        return self.d.get(key)

    def put(self, key: str, value: Optional[str]) -> None:
        if self.refuses(key):
            raise OSError('no quorum')
        self.writes.append(key)
        if value is None:
            self.d.pop(key, None)
        else:
            self.d[key] = value


class Harness:
    def __init__(self) -> None:
        self.clock = FakeClock()
        self.cluster = FakeCluster(self.clock, n_osds=8)
        self.cluster.place(HOSTS)
        for i in (6, 7):
            self.cluster.info[i].device_class = 'hdd'
        self.kv = KV()
        self.store = RolloutStore(self.kv.get, self.kv.put)
        self.settings = RolloutSettings(restart_timeout=30.0, manual_restart_timeout=60.0,
                                        unhealthy_timeout=120.0)
        self.ro: Optional[Rollout] = None
        # noout on each OSD as its restart was issued
        self.noout_at_restart: List[Tuple[int, bool]] = []
        self.cluster.before_restart = lambda osd: self.noout_at_restart.append(
            (osd, self.cluster.has_noout(osd)))

    def begin(self, plan: Any) -> Rollout:
        self.ro = Rollout.begin(plan, self.settings, self.cluster, self.store.save, self.clock)
        return self.ro

    def apply(self, options: str = NEW, **kw: Any) -> Rollout:
        kw.setdefault('canary', 0)
        return self.begin(plan_apply(self.cluster, options, '--options', **kw))

    def revert(self) -> Rollout:
        assert self.ro is not None
        return self.begin(plan_revert(self.cluster, self.ro.r))

    def run(self, until: Optional[Callable[[Rollout], bool]] = None,
            max_steps: int = 3000) -> Rollout:
        ro = self.ro
        assert ro is not None
        for _ in range(max_steps):
            if not ro.active or (until is not None and until(ro)):
                return ro
            self.clock.advance(ro.step())
        raise AssertionError(f'rollout did not end: {ro.r.phase} {ro.r.message}')

    def failover(self) -> Rollout:
        """A new active mgr: the rollout as the store has it."""
        state = RolloutStore(self.kv.get, self.kv.put).load()
        assert state is not None
        self.ro = Rollout(state, self.cluster, self.store.save, self.clock)
        return self.ro

    def restarted(self) -> List[int]:
        return [osd for osd, _ in self.cluster.restarts]

    def ssd_in_flight(self, osd: int, phase: str = 'wait') -> Callable[[Rollout], bool]:
        def at(ro: Rollout) -> bool:
            cur = ro.r.batch[0].i if ro.r.batch else None
            return ro.r.phase == phase and cur is not None and \
                ro.r.osds[cur].osd == osd
        return at


def statuses(ro: Rollout) -> Dict[int, str]:
    return {o.osd: o.status for o in ro.r.osds}


def runs(h: Harness, osd: int) -> str:
    return h.cluster.running[osd]


SSDS_IN_ORDER = [3, 0, 1, 4, 2, 5]


def at_each(osds: List[int], values: Dict[str, Any]) -> Dict[str, Any]:
    return {f'osd.{i}': dict(values) for i in osds}


# ---------------------------------------------------------------- the plan

def test_the_plan_takes_the_canarys_class_host_by_host_in_crush_order() -> None:
    h = Harness()
    plan = plan_apply(h.cluster, NEW, '--options', canary=4)
    assert plan.target == 'the OSDs of class ssd'
    assert [(o.osd, o.host) for o in plan.osds] == [
        (3, 'b'), (0, 'b'), (1, 'a'), (4, 'a'), (2, 'c'), (5, 'c')]
    # each OSD's own mask, in restart order: a class mask would not reach BlueStore
    assert list(plan.sets.items()) == list(at_each(SSDS_IN_ORDER, {OPTIONS: NEW}).items())
    assert plan.priors == at_each(SSDS_IN_ORDER, {OPTIONS: None})
    assert len(plan.notes) == 1 and 'not osd/class:ssd' in plan.notes[0]
    assert all(o.before[OPTIONS] == PACIFIC_DEFAULT and o.status == 'pending'
               for o in plan.osds)
    hdds = plan_apply(h.cluster, NEW, '--options', device_class='hdd')
    assert [o.osd for o in hdds.osds] == [6, 7]


def test_the_plan_with_osds_sets_each_osds_own_mask_in_crush_order() -> None:
    h = Harness()
    plan = plan_apply(h.cluster, NEW, '--options', osd_ids=parse_osd_ids('5,1,osd.3'))
    assert [o.osd for o in plan.osds] == [3, 1, 5]
    assert plan.sets == at_each([3, 1, 5], {OPTIONS: NEW}) and plan.notes == []
    assert plan.priors == at_each([3, 1, 5], {OPTIONS: None})


def test_dry_run_text_shows_masks_order_what_each_gets_now_and_the_undo() -> None:
    h = Harness()
    h.cluster.config_set('osd/class:ssd', OPTIONS, NEW_TUNING_LZ4)

    def no_tell(osd: int, name: str) -> str:
        raise AssertionError('a plan asks no OSD: one command per OSD, for a dry run')
    h.cluster.config_get_running = no_tell  # type: ignore[method-assign]
    plan = plan_apply(h.cluster, NEW, 'session x', canary=0)
    text = report.plan_text(plan, undo_commands(plan))
    assert 'plan: apply to the OSDs of class ssd, one OSD at a time' in text
    config = [ln.split()[0] for ln in text.splitlines()[3:9]]
    assert config == [f'osd.{i}' for i in SSDS_IN_ORDER]
    assert '  osd.3 bluestore_rocksdb_options: (not set) -> A' in text
    assert '  note: the options go to each OSD\'s own mask (osd.N), not osd/class:ssd' in text
    assert f'A = {NEW}' in text and f'B = {NEW_TUNING_LZ4}' in text
    lines = text.splitlines()
    order = [ln.split()[1] for ln in lines if ln.strip()[:1].isdigit()]
    assert order == [f'osd.{i}' for i in SSDS_IN_ORDER]
    assert '    1. osd.3 (host b): gets B from the monitors now' in lines
    assert '  single copy: no restart leaves a PG on a single copy' in lines
    assert "  others' health checks hold each restart back unless --force: now none" in lines
    assert 'undo: ceph rocks-autotune revert' in text
    assert '  ' + shlex.join(['ceph', 'config', 'rm', 'osd.3', OPTIONS]) in lines
    assert h.cluster.restarts == [] and h.cluster.config == {
        ('osd/class:ssd', OPTIONS): NEW_TUNING_LZ4}


def test_dry_run_brief_says_what_where_what_each_runs_now_and_the_undo_in_a_few_lines() -> None:
    h = Harness()
    h.cluster.config_set('osd.3', OPTIONS, NEW_TUNING_LZ4)
    plan = plan_apply(h.cluster, NEW, 'session x (canary osd.0): recommend trial 3', canary=0)
    lines = report.plan_brief(plan).splitlines()
    n = len(SSDS_IN_ORDER)
    assert lines[0] == (f'plan: apply A to the OSDs of class ssd ({n} OSDs: '
                        f'{osd_list(SSDS_IN_ORDER)}), one at a time, host by host; each OSD '
                        'gets it at its own mask osd.N just before its restart')
    assert lines[1] == '  A: from session x (canary osd.0)'
    # what each gets from the monitors now: its own mask's, else the release default (C)
    assert lines[2] == f'  now: osd.3 gets B, {osd_list(set(SSDS_IN_ORDER) - {3})} get C'
    assert lines[3:5] == ['  nothing holds the first restart back now',
                          '  undo: ceph rocks-autotune revert']
    assert lines[-3:-1] == [f'A = {NEW}', f'B = {NEW_TUNING_LZ4}'] and len(lines) == 9
    assert lines[-1].startswith('C = ') and lines[-4].startswith('more: ')
    h.apply()
    h.run()
    h.cluster.kill(1)
    revert = plan_revert(h.cluster, h.ro.r, allow_single_copy=True)  # type: ignore[union-attr]
    text = report.plan_brief(revert)
    assert text.startswith(f'plan: revert apply {revert.of}: put back what it changed at '), text
    assert '  note: osd.1 is down' in text and 'single copy' in text
    assert 'more: ceph rocks-autotune revert --dry-run --detail' in text


def test_an_osds_own_value_is_saved_and_other_masks_are_left_alone() -> None:
    h = Harness()
    h.cluster.config_set('osd.1', OPTIONS, NEW_TUNING_LZ4)
    h.cluster.config_set('osd/host:c', OPTIONS, NEW_TUNING_LZ4)  # osd.2, osd.5 (and HDDs)
    h.cluster.config_set('osd', OPTIONS, 'compression=kNoCompression')
    plan = plan_apply(h.cluster, NEW, '--options', canary=0)
    assert plan.sets == at_each(SSDS_IN_ORDER, {OPTIONS: NEW})
    assert plan.priors == dict(at_each(SSDS_IN_ORDER, {OPTIONS: None}),
                               **{'osd.1': {OPTIONS: NEW_TUNING_LZ4}})
    text = report.plan_text(plan, undo_commands(plan))
    assert 'ceph config rm osd.2 bluestore_rocksdb_options' in text
    assert shlex.join(['ceph', 'config', 'set', 'osd.1', OPTIONS, NEW_TUNING_LZ4]) in text


def test_an_annex_is_blanked_at_the_same_masks() -> None:
    h = Harness()
    h.cluster.config_set('osd.4', ANNEX, 'write_buffer_size=33554432')
    plan = plan_apply(h.cluster, NEW, '--options', canary=0)
    assert plan.sets == at_each(SSDS_IN_ORDER, {OPTIONS: NEW, ANNEX: ''})
    assert plan.priors['osd.4'] == {OPTIONS: None, ANNEX: 'write_buffer_size=33554432'}


@pytest.mark.parametrize('kw, setup, message', [
    (dict(device_class='nvme'), None, "no OSD has device class 'nvme' (the classes: hdd, ssd)"),
    (dict(osd_ids=[1, 42]), None, 'osd.42 does not exist'),
    (dict(options='max_write_buffer_number'), None, 'cannot use the options string'),
    (dict(options=''), None, 'it holds no option'),
    (dict(options='a=1,a=2'), None, 'given more than once'),
    (dict(device_class='ssd', osd_ids=[1]), None, 'not both'),
    (dict(canary=None), None, '--device-class CLASS or --osds N,M'),
    (dict(), lambda c: setattr(c.info[2], 'up', False), 'osd.2 is down'),
    (dict(), lambda c: setattr(c.info[0], 'device_class', ''), 'osd.0 has no device class'),
    (dict(), lambda c: c.config_set('osd.5/host:c', OPTIONS, 'x=1'), 'a mask of its own'),
])
def test_bad_input_is_refused_and_changes_nothing(kw: Dict[str, Any], setup: Any,
                                                  message: str) -> None:
    h = Harness()
    if setup is not None:
        setup(h.cluster)
    before = dict(h.cluster.config)
    kw.setdefault('canary', 0)
    options = kw.pop('options', NEW)
    with pytest.raises(RolloutRefused, match='.*' + message.replace('(', r'\(')
                       .replace(')', r'\)')):
        plan_apply(h.cluster, options, '--options', **kw)
    assert h.cluster.config == before and h.cluster.restarts == [] and h.kv.d == {}


@pytest.mark.parametrize('text', ['1,x', ',', 'osd.', '-1'])
def test_an_osd_list_that_does_not_parse_is_refused(text: str) -> None:
    with pytest.raises(RolloutRefused, match='--osds'):
        parse_osd_ids(text)


def _session(answer: str, **extra: Any) -> SessionState:
    arm = an_arm('c1', 4, 'recommended', 1.7, steady=SteadyVerdict('c1', 'recommended', ratio=0.9))
    conf = a_confirmation(arm, record_arms=[Arm('c1', 4, {}, NEW, 1.7)],
                          recommended='c1' if answer == 'recommend' else None)
    s = session_start.first_state(FakeCluster(FakeClock()), Params(osd=2, workload=OSD_BENCH),
                                  Settings(), 0.0)
    return replace(s, **dict({'id': 's1', 'state': 'done', 'confirm': conf}, **extra))


def test_the_recommendation_is_the_last_sessions_answer_or_refused() -> None:
    options, source = recommendation(_session('recommend'))
    assert options == NEW and source.startswith('session s1 (canary osd.2): recommend trial 4')
    for session, message in [
            (None, 'no tuning session has run'),
            (_session('keep'), 'keep your current options: .*nothing to apply'),
            (_session('recommend', state='running'), 'still running'),
            (_session('recommend', confirm=None, state='aborted'), 'has no answer'),
            (_session('recommend', config_changes=['osd x']), 'would undo that')]:
        with pytest.raises(RolloutRefused, match=message):
            recommendation(session)


# ---------------------------------------------------------------- the rollout

def test_apply_restarts_one_osd_at_a_time_through_the_gate_with_noout() -> None:
    h = Harness()
    h.cluster.restart_gate.clear()
    ro = h.apply()
    assert json.loads(h.kv.d['rollout'])['phase'] == 'check'  # saved before any change
    # each restart waits for the one before it: up on the new options, PGs clean
    clean_at_restart: List[bool] = []
    h.cluster.before_restart = lambda osd: (
        h.noout_at_restart.append((osd, h.cluster.has_noout(osd))),
        clean_at_restart.append(h.cluster.pgs_active_clean() and all(
            i.up for i in h.cluster.info.values())))
    h.run()
    assert ro.r.state == 'done' and ro.health_checks() == {}
    assert h.restarted() == SSDS_IN_ORDER
    assert h.cluster.restart_gate == [(i, True) for i in SSDS_IN_ORDER]
    assert h.noout_at_restart == [(i, True) for i in SSDS_IN_ORDER]
    assert all(clean_at_restart)
    assert not any(h.cluster.noout.values())
    assert all(runs(h, i) == NEW for i in SSDS_IN_ORDER)
    assert runs(h, 6) == runs(h, 7) == PACIFIC_DEFAULT
    assert h.cluster.config == {(f'osd.{i}', OPTIONS): NEW for i in SSDS_IN_ORDER}
    assert set(statuses(ro).values()) == {'done'} and ro.progress() == 1.0


def test_a_gate_that_says_no_holds_the_next_restart_back_then_lets_it_go() -> None:
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(0, 'restart'))
    assert h.restarted() == [3]
    h.cluster.kill(7)  # an HDD, outside the rollout: osd.0's restart would add to it
    for _ in range(10):
        h.clock.advance(ro.step())
    assert h.restarted() == [3] and ro.r.phase == 'restart'
    assert 'ROCKS_AUTOTUNE_ROLLOUT_PAUSED' in ro.health_checks()
    assert 'osd.7 is down' in ro.r.message
    h.cluster.admin_restarts(7)
    h.clock.advance(5)
    h.cluster.ok_to_stop_answer = (False, 'would become inactive')
    for _ in range(5):
        h.clock.advance(ro.step())
    assert h.restarted() == [3, 7] and 'ok-to-stop' in ro.r.message
    h.cluster.ok_to_stop_answer = None
    h.run()
    assert ro.r.state == 'done' and h.restarted() == [3, 7] + SSDS_IN_ORDER[1:]
    assert (7, False) not in h.cluster.restart_gate[2:]


def test_pgs_moving_data_hold_the_next_restart_back_though_ok_to_stop_says_yes() -> None:
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(0, 'restart'))
    h.cluster.pg_states = {'active+remapped+backfilling': 90, 'active+clean': 6}
    assert h.cluster.ok_to_stop(0)[0] and h.cluster.inactive_pgs() == 0
    for _ in range(10):
        h.clock.advance(ro.step())
    assert h.restarted() == [3] and 'not all PGs are active+clean' in ro.r.message
    h.cluster.pg_states = {'active+clean': 96}
    h.run()
    assert ro.r.state == 'done' and h.restarted() == SSDS_IN_ORDER


def test_a_gate_that_stays_shut_stops_the_rollout_after_unhealthy_timeout() -> None:
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(1, 'restart'))
    h.cluster.inactive = 2
    h.run()
    assert ro.r.state == 'failed' and 'waited 120s for the cluster' in ro.r.error
    assert statuses(ro) == {3: 'done', 0: 'done', 1: 'pending', 4: 'pending', 2: 'pending',
                            5: 'pending'}
    # osd.1's mask, set before the gate, is put back
    assert h.cluster.config == {(f'osd.{i}', OPTIONS): NEW for i in (3, 0)}
    assert 'ROCKS_AUTOTUNE_ROLLOUT_FAILED' in ro.health_checks()


def broken_on(h: Harness, osd: int, options: str) -> None:
    """osd.N does not start on `options` (the others do)."""
    starting: List[int] = []
    h.cluster.before_restart = lambda o: starting.append(o)
    h.cluster.broken = lambda opts: bool(starting) and starting[-1] == osd and opts == options


def test_an_osd_that_does_not_come_back_stops_the_rollout_and_is_put_back() -> None:
    h = Harness()
    broken_on(h, 1, NEW)
    ro = h.apply()
    h.run()
    assert ro.r.state == 'failed'
    assert statuses(ro) == {3: 'done', 0: 'done', 1: 'failed', 4: 'pending', 2: 'pending',
                            5: 'pending'}
    failed = ro.r.osds[2]
    assert failed.put_back == 'done' and 'did not come back up' in failed.error
    # put back on its prior options: its own mask as it was (nothing set there)
    assert h.cluster.config_get_own('osd.1', OPTIONS) is None
    assert runs(h, 1) == PACIFIC_DEFAULT and h.cluster.osds()[1].up
    assert ro.r.priors['osd.1'] == {OPTIONS: None}
    assert [runs(h, i) for i in (3, 0)] == [NEW, NEW]
    assert [runs(h, i) for i in (4, 2, 5)] == [PACIFIC_DEFAULT] * 3
    assert not any(h.cluster.noout.values())
    check = ro.health_checks()['ROCKS_AUTOTUNE_ROLLOUT_FAILED']
    text = '\n'.join(check['detail'])
    assert '2 of 6 OSD(s) run the new options: osd.0, osd.3' in text
    assert 'osd.1: put back on its prior options' in text
    assert 'not restarted: osd.2, osd.4-5' in text
    assert '`ceph rocks-autotune revert` puts back' in text
    # the failed one was put back: it is not progress (2 of 6 done)
    assert ro.progress() == pytest.approx(2 / 6) and ro.status()['progress'] == ro.progress()


def test_put_back_and_revert_wait_for_what_the_osd_ran_not_a_class_mask_it_never_read() -> None:
    # options at the class mask: the mon answers them, the OSDs never ran them
    h = Harness()
    h.cluster.config_set('osd/class:ssd', OPTIONS, NEW_TUNING_LZ4)
    broken_on(h, 1, NEW)
    ro = h.apply()
    h.run()
    assert ro.r.state == 'failed' and ro.r.osds[2].put_back == 'done'
    assert runs(h, 1) == PACIFIC_DEFAULT and h.cluster.config_get('osd.1', OPTIONS) == \
        NEW_TUNING_LZ4
    ro = h.revert()
    h.run()
    assert ro.r.state == 'done' and ro.health_checks() == {}
    assert all(runs(h, i) == PACIFIC_DEFAULT for i in range(8))
    assert h.cluster.config == {('osd/class:ssd', OPTIONS): NEW_TUNING_LZ4}


def test_revert_after_a_failure_puts_back_every_mask_and_restarts_the_osds_done() -> None:
    h = Harness()
    broken_on(h, 1, NEW)
    h.apply()
    h.run()
    n = len(h.cluster.restarts)
    ro = h.revert()
    # only the masks the apply set: the OSDs done; osd.1 was put back, the
    # others never touched
    assert ro.r.sets == at_each([3, 0], {OPTIONS: None})
    assert [o.osd for o in ro.r.osds] == [3, 0]
    h.run()
    assert ro.r.state == 'done' and ro.health_checks() == {}
    assert h.cluster.config == {}
    assert h.restarted()[n:] == [3, 0]
    assert all(runs(h, i) == PACIFIC_DEFAULT for i in range(8))
    with pytest.raises(NothingToRevert, match='a revert .* and it is done'):
        plan_revert(h.cluster, ro.r)


def test_a_failed_apply_whose_only_changed_osd_was_put_back_is_reverted_empty() -> None:
    # nothing is left to put back, but the apply stopped part way: its health
    # check stands and a new apply waits for a revert, which must be possible
    h = Harness()
    broken_on(h, SSDS_IN_ORDER[0], NEW)
    ro = h.apply()
    h.run()
    assert ro.r.state == 'failed' and 'ROCKS_AUTOTUNE_ROLLOUT_FAILED' in ro.health_checks()
    assert h.cluster.config == {}
    n = len(h.cluster.restarts)
    rv = h.revert()
    assert any('nothing is left to put back' in note for note in rv.r.notes)
    h.run()
    assert rv.r.state == 'done' and rv.r.osds == [] and rv.health_checks() == {}
    assert len(h.cluster.restarts) == n and h.cluster.config == {}
    with pytest.raises(NothingToRevert, match='a revert .* and it is done'):
        plan_revert(h.cluster, rv.r)


def test_a_restart_that_cannot_be_issued_fails_the_osd_and_the_put_back_says_so() -> None:
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(0, 'restart'))
    h.cluster.restart_fails = True
    h.run()
    assert ro.r.state == 'failed' and statuses(ro)[0] == 'failed'
    assert ro.r.osds[1].put_back == 'failed'
    assert 'restarting osd.0 failed' in ro.r.error
    detail = '\n'.join(ro.health_checks()['ROCKS_AUTOTUNE_ROLLOUT_FAILED']['detail'])
    assert 'NOT known to run them' in detail
    assert h.cluster.config_get_own('osd.0', OPTIONS) is None  # its own mask as it was
    assert not any(h.cluster.noout.values())  # set for the restart, cleared at the end


def test_pgs_that_stay_unclean_after_a_restart_stop_the_rollout_on_that_osd() -> None:
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(0, 'wait'))
    h.cluster.pg_states = {'active+remapped+backfilling': 96}
    h.run()
    assert ro.r.state == 'failed' and 'PGs did not become active+clean within 30s' in \
        ro.r.error
    assert statuses(ro)[0] == 'done' and runs(h, 0) == NEW  # it runs them
    assert h.restarted() == [3, 0] and not any(h.cluster.noout.values())


def test_a_failover_mid_rollout_restarts_no_osd_twice() -> None:
    h = Harness()
    h.apply()
    h.run(until=h.ssd_in_flight(1, 'wait'))
    ro = h.failover()
    assert ro.r.osds[2].status == 'restarting' and ro.r.batch[0].restart.stage == 'wait_up'
    h.run()
    assert ro.r.state == 'done' and h.restarted() == SSDS_IN_ORDER
    assert all(runs(h, i) == NEW for i in SSDS_IN_ORDER) and not any(h.cluster.noout.values())


class MgrGone(BaseException):
    """The active mgr went away (mgr fail) in the middle of a call: no handler runs."""


def apply_until_the_mgr_goes_in_a_restart(h: Harness, how_far: str) -> None:
    """Apply, the mgr going away inside the first restart call once the
    backend has `how_far` (stopped the OSD, restarted it, or not begun)."""
    call = h.cluster.restart_osd

    def gone_midway(osd: int) -> str:
        if how_far == 'stopped':
            h.cluster.kill(osd)
        elif how_far == 'restarted':
            call(osd)
        raise MgrGone()
    h.cluster.restart_osd = gone_midway  # type: ignore[method-assign]
    h.apply()
    with pytest.raises(MgrGone):
        h.run()
    h.cluster.restart_osd = call  # type: ignore[method-assign]


@pytest.mark.parametrize('how_far', ['stopped', 'restarted', 'not_begun'])
def test_a_failover_inside_the_restart_call(how_far: str) -> None:
    # fault case 17 on the lab: the mgr failed while its orchestrator backend
    # restarted osd.3, which was stopped and never started; the new mgr must
    # finish what the call began, without a second restart of one that did
    h = Harness()
    apply_until_the_mgr_goes_in_a_restart(h, how_far)
    assert json.loads(h.kv.d['rollout'])['batch'][0]['restart']['stage'] == 'issuing'
    ro = h.failover()
    h.run()
    assert ro.r.state == 'done' and ro.health_checks() == {}
    assert h.restarted() == SSDS_IN_ORDER  # osd.3 once
    assert all(runs(h, i) == NEW for i in SSDS_IN_ORDER) and not any(h.cluster.noout.values())


def test_a_timeout_past_the_gate_after_a_failover_leaves_the_osd_done() -> None:
    # the restart call went through before the mgr went away; the new mgr
    # finds osd.3 up on the new options while another OSD down keeps PGs
    # unclean: the pause that times out is in the restart phase, past the gate
    h = Harness()
    apply_until_the_mgr_goes_in_a_restart(h, 'restarted')
    h.clock.advance(h.cluster.restart_delay)
    h.cluster.kill(6)
    ro = h.failover()
    h.run()
    assert ro.r.state == 'failed' and 'waited 120s for the cluster' in ro.r.error
    assert runs(h, 3) == NEW and statuses(ro)[3] == 'done'
    assert h.cluster.config == {('osd.3', OPTIONS): NEW}  # its mask holds what it runs


def test_a_failover_at_every_step_still_ends_the_same() -> None:
    h = Harness()
    broken_on(h, 4, NEW)
    h.apply()
    for _ in range(3000):
        ro = h.failover()
        if not ro.active:
            break
        h.clock.advance(ro.step())
    assert ro.r.state == 'failed' and statuses(ro)[4] == 'failed'
    assert ro.r.osds[3].put_back == 'done'
    assert h.restarted() == [3, 0, 1, 4]  # osd.4's restart on the new options never came up
    # the OSDs done keep the new options; osd.4 is put back, osd.2 and osd.5 untouched
    assert h.cluster.config == {(f'osd.{i}', OPTIONS): NEW for i in (3, 0, 1)}


def test_abort_stops_after_the_osd_in_flight_and_revert_undoes_what_was_done() -> None:
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(1, 'wait'))
    ro.request('abort')
    h.run()
    assert ro.r.state == 'aborted'
    assert statuses(ro) == {3: 'done', 0: 'done', 1: 'done', 4: 'pending', 2: 'pending',
                            5: 'pending'}
    assert 'ROCKS_AUTOTUNE_ROLLOUT_INCOMPLETE' in ro.health_checks()
    n = len(h.cluster.restarts)
    h.revert()
    h.run()
    assert h.restarted()[n:] == [3, 0, 1]
    assert h.cluster.config == {} and all(runs(h, i) == PACIFIC_DEFAULT for i in range(8))


def test_abort_while_held_at_the_gate_restarts_nothing_more() -> None:
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(0, 'restart'))
    h.cluster.ok_to_stop_answer = (False, 'no')
    h.clock.advance(ro.step())
    ro.request('abort')
    h.run()
    assert ro.r.state == 'aborted' and h.restarted() == [3]
    assert statuses(ro)[0] == 'pending'


def test_abort_at_the_gate_after_a_failover_clears_the_rollouts_own_noout() -> None:
    # the mgr went away just before the restart call: noout (ours) is set,
    # and the new mgr sends osd.3, still up on its old options, to the gate
    h = Harness()
    apply_until_the_mgr_goes_in_a_restart(h, 'not_begun')
    ro = h.failover()
    assert ro.r.batch[0].noout_ours and h.cluster.has_noout(3)
    h.cluster.ok_to_stop_answer = (False, 'no')
    h.clock.advance(ro.step())
    assert ro.r.batch[0].restart is not None and ro.r.batch[0].restart.stage == 'gate'
    ro.request('abort')
    h.run()
    assert ro.r.state == 'aborted' and h.restarted() == []
    assert statuses(ro)[3] == 'pending' and h.cluster.config == {}
    assert not any(h.cluster.noout.values()) and not ro.r.batch


def test_abort_before_the_config_is_set_changes_nothing() -> None:
    h = Harness()
    ro = h.apply()
    ro.request('abort')
    h.run()
    assert ro.r.state == 'aborted' and not ro.r.changed
    assert h.cluster.config == {} and h.cluster.restarts == [] and ro.health_checks() == {}
    with pytest.raises(NothingToRevert, match='changed nothing'):
        plan_revert(h.cluster, ro.r)


def test_revert_of_a_partial_rollout_restores_values_and_absences_at_every_mask() -> None:
    h = Harness()
    lz4 = NEW_TUNING_LZ4
    h.cluster.config.update({
        ('osd/class:ssd', OPTIONS): lz4,                     # left as is (see CLASS_MASK_NOTE)
        ('osd.1', OPTIONS): 'compression=kNoCompression',    # an own value, replaced
        ('osd/host:c', OPTIONS): PACIFIC_DEFAULT,            # a host mask, left as is
        ('osd.4', ANNEX): 'write_buffer_size=33554432',      # an annex, blanked
        ('osd', 'osd_max_backfills'): '2',                   # not the rollout's
    })
    before = dict(h.cluster.config)
    ro = h.apply()
    assert list(ro.r.sets) == [f'osd.{i}' for i in SSDS_IN_ORDER]
    h.run(until=h.ssd_in_flight(4, 'wait'))
    ro.request('abort')
    h.run()
    assert ro.r.state == 'aborted'
    assert [runs(h, i) for i in (3, 0, 1, 4)] == [NEW] * 4
    assert h.cluster.config_get_own('osd.4', ANNEX) == ''
    h.revert()
    h.run()
    assert h.cluster.config == before
    for i in range(8):  # what each ran before the apply (the class mask never reached one)
        assert runs(h, i) == h.cluster.config_get(f'osd.{i}', OPTIONS, at_start=True)
    assert h.cluster.config_get('osd.3', OPTIONS) == lz4  # what the mon answers


def test_a_revert_cut_short_is_finished_by_the_next_revert() -> None:
    h = Harness()
    h.apply()
    h.run()
    ro = h.revert()
    h.run(until=h.ssd_in_flight(1, 'wait'))
    ro.request('abort')
    h.run()
    assert ro.r.state == 'aborted'
    assert 'again finishes the revert' in '\n'.join(
        ro.health_checks()['ROCKS_AUTOTUNE_ROLLOUT_INCOMPLETE']['detail'])
    n = len(h.cluster.restarts)
    again = h.revert()
    assert [o.osd for o in again.r.osds] == [4, 2, 5] and again.r.of == ro.r.of
    h.run()
    assert again.r.state == 'done' and h.restarted()[n:] == [4, 2, 5]
    assert h.cluster.config == {} and all(runs(h, i) == PACIFIC_DEFAULT for i in range(8))


def test_a_config_change_between_the_plan_and_its_start_changes_nothing() -> None:
    h = Harness()
    plan = plan_apply(h.cluster, NEW, '--options', canary=0)
    h.cluster.config_set('osd.2', OPTIONS, NEW_TUNING_LZ4)
    ro = h.begin(plan)
    h.run()
    assert ro.r.state == 'failed' and 'config changed since the plan' in ro.r.error
    assert h.cluster.config == {('osd.2', OPTIONS): NEW_TUNING_LZ4}
    assert h.cluster.restarts == [] and ro.health_checks() == {}
    with pytest.raises(NothingToRevert):
        plan_revert(h.cluster, ro.r)


def test_a_mask_the_plan_did_not_see_stops_the_rollout_before_that_osds_restart() -> None:
    h = Harness()
    plan = plan_apply(h.cluster, NEW, '--options', canary=0)
    h.cluster.config_set('osd.1/host:a', OPTIONS, NEW_TUNING_LZ4)  # after the plan
    ro = h.begin(plan)
    h.run()
    assert ro.r.state == 'failed' and statuses(ro)[1] == 'failed'
    assert 'osd.1 gets bluestore_rocksdb_options' in ro.r.error
    # osd.3 and osd.0 came first and stay done; osd.1's own mask is put back
    assert h.cluster.config == {('osd.1/host:a', OPTIONS): NEW_TUNING_LZ4,
                                ('osd.3', OPTIONS): NEW, ('osd.0', OPTIONS): NEW}
    assert h.restarted() == [3, 0]


def test_without_an_orchestrator_the_admin_restarts_each_osd() -> None:
    h = Harness()
    h.cluster.orchestrator = False
    ro = h.apply(osd_ids=[2, 1])
    h.run(until=lambda ro: 'ROCKS_AUTOTUNE_MANUAL_RESTART' in ro.health_checks())
    detail = ro.health_checks()['ROCKS_AUTOTUNE_MANUAL_RESTART']['detail'][0]
    assert 'restart osd.1' in detail and 'the apply goes on' in detail
    h.cluster.admin_restarts(1)
    h.run(until=lambda ro: 'restart osd.2' in str(ro.health_checks()))
    h.cluster.admin_restarts(2)
    h.run()
    assert ro.r.state == 'done' and runs(h, 1) == runs(h, 2) == NEW


def test_a_failed_state_write_pauses_the_rollout_changing_nothing() -> None:
    h = Harness()
    ro = h.apply()
    h.kv.fails = True
    for _ in range(5):
        h.clock.advance(ro.step())
    assert h.cluster.config == {} and 'ROCKS_AUTOTUNE_STATE_WRITE_FAILED' in ro.health_checks()
    h.kv.fails = False
    h.run()
    assert ro.r.state == 'done' and 'ROCKS_AUTOTUNE_STATE_WRITE_FAILED' not in \
        ro.health_checks()


def test_the_phase_table_is_whole_and_checked_at_every_move() -> None:
    assert set(MOVES) == set(Phase)
    for targets in MOVES.values():
        assert Phase.END in targets or not targets
    h = Harness()
    ro = h.apply()
    ro.r.phase = Phase.PUT_BACK_WAIT.value
    with pytest.raises(AssertionError, match='no move from put_back_wait to next'):
        ro._enter(Phase.NEXT)
    # every phase a rollout passes through is in the table (the walk above is checked)
    seen = set()
    h2 = Harness()
    broken_on(h2, 0, NEW)
    r2 = h2.apply()
    while r2.active:
        seen.add(r2.r.phase)
        h2.clock.advance(r2.step())
    assert seen | {'end'} == {p.value for p in Phase}


# ---------------------------------------------------------------- the store

def test_the_store_keeps_large_rollouts_in_small_values(monkeypatch: Any) -> None:
    monkeypatch.setattr(store, 'ROLLOUT_CHUNK', 2)
    h = Harness()
    ro = h.apply()
    h.run(until=h.ssd_in_flight(4, 'wait'))
    rid = ro.r.id
    assert sorted(k for k in h.kv.d if '.osds.' in k) == [
        f'rollout.{rid}.osds.0', f'rollout.{rid}.osds.1', f'rollout.{rid}.osds.2']
    # every option string is kept once, in a value of its own; the head and
    # the OSD records name them by number
    values = [v for k, v in h.kv.d.items() if '.value.' in k]
    assert values.count(PACIFIC_DEFAULT) == 1 and values.count(NEW) == 1
    assert all(PACIFIC_DEFAULT not in v for k, v in h.kv.d.items() if '.value.' not in k)
    assert RolloutStore(h.kv.get, h.kv.put).load() == ro.r
    # only what changed is written again
    h.kv.writes.clear()
    h.store.save(ro.r)
    assert h.kv.writes == []
    ro.r.osds[5].status = 'failed'
    h.store.save(ro.r)
    assert h.kv.writes == [f'rollout.{rid}.osds.2']


def test_a_save_cut_short_before_the_head_is_not_misread() -> None:
    h = Harness()
    h.apply()
    h.run()
    old = dict(h.kv.d)
    last = h.ro.r if h.ro is not None else None
    h.kv.refuses = lambda key: key == 'rollout'  # the OSD records of the next are written
    with pytest.raises(StoreError):
        Rollout.begin(plan_apply(h.cluster, NEW_TUNING_LZ4, '--options', osd_ids=[6]),
                      h.settings, h.cluster, h.store.save, h.clock)
    assert h.kv.d['rollout'] == old['rollout']
    # the last rollout's record is whole: its keys are its own, untouched
    assert all(h.kv.d[k] == v for k, v in old.items())
    assert RolloutStore(h.kv.get, h.kv.put).load() == last


def test_a_saved_rollout_reloads_to_the_same_bytes() -> None:
    """The record's JSON is the store's alone (RolloutRecord.to_json,
    from_json): at every step of an apply with a failed OSD put back, and of
    its revert, what a new mgr loads saves again to exactly what is stored."""
    h = Harness()
    broken_on(h, 1, NEW)
    seen = 0
    for start in (h.apply, h.revert):
        ro = start()
        while True:
            again = KV()
            loaded = RolloutStore(h.kv.get, h.kv.put).load()
            assert loaded is not None
            RolloutStore(again.get, again.put).save(loaded)
            assert again.d == h.kv.d
            seen += any(f.restart is not None for f in loaded.batch)
            if not ro.active:
                break
            h.clock.advance(ro.step())
    assert ro.r.state == 'done' and seen > 10


def test_a_corrupt_rollout_state_is_rejected() -> None:
    h = Harness()
    h.apply()
    good = h.kv.d['rollout']
    for mutate in (lambda s: s.update(version=9), lambda s: s.update(phase='nowhere'),
                   lambda s: s.update(batch=[{'i': 17}]), lambda s: s.pop('kind'),
                   lambda s: s.update(changed='yes')):
        state = json.loads(good)
        mutate(state)
        h.kv.d['rollout'] = json.dumps(state)
        with pytest.raises((ValueError, TypeError)):
            h.failover()


def test_revert_with_an_osd_down_puts_its_config_back_first_and_waits_for_it() -> None:
    # issue 45: an OSD down after the apply (the options it took may be what
    # keeps it down) held every revert back; now its config is put back at
    # once, unrestarted, and the other restarts wait at the gate for it
    h = Harness()
    h.apply()
    h.run()
    h.cluster.kill(1)
    n = len(h.cluster.restarts)
    plan = plan_revert(h.cluster, h.ro.r)  # type: ignore[union-attr]
    assert [o.osd for o in plan.osds][0] == 1
    assert any('osd.1 is down: its config is put back first' in x for x in plan.notes)
    assert any('osd.1 is down' in b for b in plan.blockers)
    ro = h.begin(plan)
    for _ in range(20):
        h.clock.advance(ro.step())
    assert (('osd.1', OPTIONS) not in h.cluster.config) and statuses(ro)[1] == 'skipped'
    assert 'not restarted' in ro.r.osds[0].error
    assert h.restarted()[n:] == [] and ro.r.phase == 'restart'
    assert 'ROCKS_AUTOTUNE_ROLLOUT_PAUSED' in ro.health_checks()
    h.cluster.admin_restarts(1)  # it comes up, on what was put back
    assert runs(h, 1) == PACIFIC_DEFAULT
    n = len(h.cluster.restarts)
    h.run()
    assert ro.r.state == 'done' and h.cluster.config == {}
    assert sorted(h.restarted()[n:]) == [0, 2, 3, 4, 5]  # never osd.1
    assert all(runs(h, i) == PACIFIC_DEFAULT for i in range(8))
