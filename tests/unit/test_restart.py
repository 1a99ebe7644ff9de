"""The restart path's one reading of a restart: each outcome from the
cluster's state, against the fake cluster; its reads counted on scale_mgr."""
import mgr_mock
from fake_cluster import FakeClock, FakeCluster
from rocks_autotune.canary_record import CanaryRecord
from rocks_autotune.cluster import MgrCluster
from rocks_autotune.restart import Outcome, Restarter
from scale_mgr import ScaleMgr


def restarter(cluster: FakeCluster, state: CanaryRecord, timeout: float = 60.0) -> Restarter:
    return Restarter(cluster, 0, state, lambda: None, timeout, timeout)


def fresh() -> CanaryRecord:
    return CanaryRecord({}, False, None)


def test_outcomes_say_whether_the_cluster_holds_it_and_whether_it_runs_the_options() -> None:
    assert {o for o in Outcome if o.held} == {Outcome.GATE_HELD, Outcome.OTHERS_UNCLEAN}
    assert {o for o in Outcome if o.runs_them} == {
        Outcome.UP, Outcome.OTHERS_UNCLEAN, Outcome.NOT_CLEAN_IN_TIME}


def test_a_restart_goes_gate_held_then_up() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    s = fresh()
    r = restarter(c, s)
    r.begin('candidate', clock())
    c.info[2].up = False  # another OSD down: the gate holds the restart
    res = r.step(clock())
    assert res.outcome == Outcome.GATE_HELD and res.reasons and c.restarts == []
    c.info[2].up = True
    assert r.step(clock()).outcome == Outcome.WAITING  # issued
    clock.advance(c.restart_delay + 1)
    assert r.step(clock()).outcome == Outcome.UP


def test_an_osd_that_does_not_come_up_is_not_up_in_time() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.broken = lambda options: True  # never comes up
    s = fresh()
    r = restarter(c, s, timeout=30.0)
    r.begin('candidate', clock())
    assert r.step(clock()).outcome == Outcome.WAITING
    clock.advance(10)
    assert r.step(clock()).outcome == Outcome.WAITING
    clock.advance(30)
    assert r.step(clock()).outcome == Outcome.NOT_UP_IN_TIME


def test_up_with_pgs_unclean_is_others_doing_or_not_clean_in_time() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    s = fresh()
    r = restarter(c, s, timeout=30.0)
    r.begin('candidate', clock())
    r.step(clock())
    clock.advance(c.restart_delay + 1)
    c.pg_states = {'active+clean': 90, 'active+undersized+degraded': 6}
    assert r.step(clock()).outcome == Outcome.WAITING  # up on them; PGs not clean yet
    c.info[1].in_ = False  # another OSD's trouble
    res = r.step(clock())
    assert res.outcome == Outcome.OTHERS_UNCLEAN and 'osd.1 is out' in res.reasons
    c.info[1].in_ = True
    clock.advance(31)
    assert r.step(clock()).outcome == Outcome.NOT_CLEAN_IN_TIME


def test_a_step_reads_the_osd_map_once() -> None:
    # at 10,000 OSDs a read of it decodes 11 MB of JSON: the gate's step read
    # it three times (the gate, the OSD's up_from, its noout), a poll up with
    # PGs unclean twice (the OSD, the others)
    mgr_mock.install()
    mgr = ScaleMgr(40, 4)
    r = Restarter(MgrCluster(mgr), 7, fresh(), lambda: None, 60.0, 60.0)
    r.begin('candidate', 0.0)
    mgr.reset_counts()
    assert r.step(0.0).outcome == Outcome.WAITING  # through the gate, restarted
    rec = r.s.restart
    assert rec is not None and rec.issued == 0.0 and r.s.manual == '' and r.s.noout_ours
    assert mgr.get_calls['osd_map'] == 1
    mgr.set_up(20, False)  # another OSD down: PGs unclean
    mgr.reset_counts()
    assert r.step(1.0).outcome == Outcome.OTHERS_UNCLEAN
    assert mgr.get_calls['osd_map'] == 1
