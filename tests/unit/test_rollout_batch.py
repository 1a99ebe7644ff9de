"""apply and revert with --max-parallel N: batches that `ceph osd ok-to-stop
--max N` allows (the fake cluster answers as the mgr: the OSD asked about,
then up OSDs of its host by id; PGs of size 3 on three hosts), against the
fake cluster and its clock, persisted through RolloutStore as the module does."""
import json
from typing import Dict, List, Tuple

import pytest

from rocks_autotune import report
from rocks_autotune.canary import OPTIONS
from rocks_autotune.cluster import ClusterError
from rocks_autotune.rocksdb_options import PACIFIC_DEFAULT
from rocks_autotune.rollout import Rollout
from rocks_autotune.rollout_plan import RolloutRefused, plan_apply, plan_revert, undo_commands
from test_rollout import NEW, SSDS_IN_ORDER, Harness, MgrGone, broken_on, runs, statuses

# HOSTS: b [3, 0], a [1, 4], c [2, 5] and the HDDs 6, 7: one batch a host
BATCHES = [[3, 0], [1, 4], [2, 5]]


def batches(h: Harness) -> List[List[int]]:
    """The restarts issued together (at one clock reading), in order."""
    out: Dict[float, List[int]] = {}
    for at, osd in h.issued:
        out.setdefault(at, []).append(osd)
    return list(out.values())


def harness() -> Harness:
    h = Harness()
    h.issued: List[Tuple[float, int]] = []  # type: ignore[misc]
    before = h.cluster.before_restart
    h.cluster.before_restart = lambda osd: (h.issued.append((h.clock.now, osd)), before(osd))
    return h


def flying(ro: Rollout) -> List[int]:
    return [ro.r.osds[f.i].osd for f in ro.r.batch if ro.r.osds[f.i].status == 'restarting']


def in_wait(ro: Rollout) -> bool:
    return ro.r.phase == 'wait' and len(flying(ro)) == 2


def test_one_at_a_time_asks_no_ok_to_stop_max_and_restarts_one_by_one() -> None:
    h = harness()
    ro = h.apply()
    h.run()
    assert ro.r.state == 'done' and batches(h) == [[i] for i in SSDS_IN_ORDER]
    assert h.cluster.ok_to_stop_max_asked == []
    assert 'max_parallel' not in ro.status() and 'in_flight' not in ro.status()


@pytest.mark.parametrize('n, expected', [(2, BATCHES), (3, BATCHES), (4, BATCHES)])
def test_a_batch_is_what_ok_to_stop_max_allows_of_the_pending_osds(
        n: int, expected: List[List[int]]) -> None:
    # the mgr adds osd.6 (an HDD, not the rollout's) to osd.2's batch at 3: left out
    h = harness()
    ro = h.apply(max_parallel=n)
    h.run()
    assert ro.r.state == 'done' and batches(h) == expected
    assert h.cluster.ok_to_stop_max_asked == [(3, n), (1, n), (2, n)]
    assert all(runs(h, i) == NEW for i in SSDS_IN_ORDER) and runs(h, 6) == PACIFIC_DEFAULT
    assert not any(h.cluster.noout.values())
    assert ro.r.message == 'done: 6 OSD(s) restarted on the new options'


def test_a_batch_is_never_more_than_n_nor_any_osd_ok_to_stop_did_not_name() -> None:
    h = harness()
    # a mon that answers more than asked, OSDs of no rollout, and one already done
    h.cluster.ok_to_stop_max_answer = [3, 0, 1, 4, 6, 7]
    ro = h.apply(max_parallel=2)
    h.run(until=lambda ro: ro.r.phase == 'set')
    assert flying(ro) == [3, 0]
    h.cluster.ok_to_stop_max_answer = [5, 3]  # of osd.1, asked: an answer of others is not its
    h.run(until=lambda ro: ro.r.phase == 'wait' and 1 in flying(ro))
    assert flying(ro) == [1]
    h.cluster.ok_to_stop_max_answer = []  # no: a batch of one, which the gate holds
    h.cluster.ok_to_stop_answer = (False, 'PGs would become inactive')
    h.run(until=lambda ro: ro.r.pause is not None and 4 in flying(ro))
    assert flying(ro) == [4] and 'ceph osd ok-to-stop osd.4 says no' in ro.r.message
    h.cluster.ok_to_stop_answer = h.cluster.ok_to_stop_max_answer = None
    h.run()
    assert ro.r.state == 'done' and batches(h) == [[3, 0], [1], [4], [2, 5]]


def test_the_gate_asks_ok_to_stop_of_the_batch_together_and_holds_it_with_the_reason() -> None:
    # the cluster changed between ok-to-stop --max and the gate: osd.3 and osd.1
    # (two hosts) may not stop together
    h = harness()
    h.cluster.ok_to_stop_max_answer = [3, 1]
    ro = h.apply(max_parallel=2)
    h.run(until=lambda ro: ro.r.pause is not None)
    assert ro.r.phase == 'restart' and h.restarted() == []
    assert ro.r.message == ('paused before osd.1, osd.3: ceph osd ok-to-stop osd.1, osd.3 '
                            'together says no: PGs would become inactive: OSDs of more than '
                            'one host')
    h.run()  # held past unhealthy_timeout: stopped, both masks put back
    assert ro.r.state == 'failed' and h.restarted() == [] and h.cluster.config == {}
    assert statuses(ro)[3] == statuses(ro)[1] == 'pending'


def test_each_osd_waits_up_then_the_batch_for_pgs_clean_before_the_next_batch() -> None:
    h = harness()
    clean_at_restart: List[bool] = []
    h.cluster.before_restart = lambda osd: (
        h.issued.append((h.clock.now, osd)),  # type: ignore[attr-defined]
        h.noout_at_restart.append((osd, h.cluster.has_noout(osd))),
        clean_at_restart.append(h.cluster.pgs_active_clean()))
    ro = h.apply(max_parallel=2)
    h.run(until=in_wait)
    assert ro.status()['in_flight'] == [3, 0] and ro.status()['max_parallel'] == 2
    assert 'in flight: osd.0, osd.3' in ro.progress_event().message
    assert '  up to 2 OSDs at a time; in flight: osd.3, osd.0' in report.rollout_lines(
        ro.status())
    h.run()
    assert ro.r.state == 'done'
    # every OSD had its noout as it restarted; each batch started on clean PGs
    assert h.noout_at_restart == [(i, True) for b in BATCHES for i in b]
    assert clean_at_restart == [True, False] * 3


def test_the_batchs_pgs_get_the_restart_timeout_from_its_last_osd_up() -> None:
    # osd.3 is up at once, osd.0 after 25 s, then PGs recover for 10 s: 35 s after
    # osd.3 came up, more than restart_timeout (30 s), none of it osd.3's doing
    h = harness()
    h.cluster.before_restart = lambda osd: setattr(h.cluster, 'restart_delay',
                                                   3.0 if osd == 3 else 25.0)
    ro = h.apply(max_parallel=2)
    h.run(until=lambda ro: h.cluster.osds()[0].up and ro.r.phase == 'wait')
    h.cluster.pg_states = {'active+recovering': 90, 'active+clean': 6}
    start = h.clock.now
    h.run(until=lambda ro: h.clock.now - start > 10)
    h.cluster.pg_states = {'active+clean': 96}
    h.cluster.before_restart = lambda osd: None
    h.run()
    assert ro.r.state == 'done', ro.r.message


def test_an_osd_of_a_batch_that_does_not_come_back_is_put_back_the_others_done() -> None:
    h = harness()
    broken_on(h, 1, NEW)
    ro = h.apply(max_parallel=2)
    h.run()
    assert ro.r.state == 'failed'
    assert statuses(ro) == {3: 'done', 0: 'done', 1: 'failed', 4: 'done', 2: 'pending',
                            5: 'pending'}
    failed = ro.r.osds[2]
    assert failed.put_back == 'done' and 'did not come back up' in failed.error
    assert h.cluster.config_get_own('osd.1', OPTIONS) is None
    assert runs(h, 1) == PACIFIC_DEFAULT and h.cluster.osds()[1].up
    assert [runs(h, i) for i in (3, 0, 4)] == [NEW] * 3
    assert [runs(h, i) for i in (2, 5)] == [PACIFIC_DEFAULT] * 2
    assert not any(h.cluster.noout.values()) and ro.r.batch == []
    assert ro.r.error.endswith('it is back on its prior options')
    detail = '\n'.join(ro.health_checks()['ROCKS_AUTOTUNE_ROLLOUT_FAILED']['detail'])
    assert '3 of 6 OSD(s) run the new options: osd.0, osd.3-4' in detail
    # the revert undoes it, in batches too
    h.cluster.broken = lambda opts: False
    rv = h.begin(plan_revert(h.cluster, ro.r, max_parallel=2))
    h.run()
    assert rv.r.state == 'done' and all(runs(h, i) == PACIFIC_DEFAULT for i in SSDS_IN_ORDER)
    assert h.cluster.config == {}


def test_two_failed_osds_of_a_batch_are_put_back_one_after_the_other() -> None:
    h = harness()
    starting: List[int] = []
    h.cluster.before_restart = lambda o: starting.append(o)
    h.cluster.broken = lambda opts: opts == NEW and starting[-1] in (1, 4)
    ro = h.apply(max_parallel=2)
    h.run()
    assert ro.r.state == 'failed' and statuses(ro)[1] == statuses(ro)[4] == 'failed'
    assert [o.put_back for o in ro.r.osds if o.osd in (1, 4)] == ['done', 'done']
    assert runs(h, 1) == runs(h, 4) == PACIFIC_DEFAULT


def test_abort_mid_batch_stops_after_the_batch_in_flight() -> None:
    h = harness()
    ro = h.apply(max_parallel=2)
    h.run(until=in_wait)
    ro.request('abort')
    h.clock.advance(ro.step())
    assert ro.r.message == 'aborting: stopping after the OSDs in flight'
    h.run()
    assert ro.r.state == 'aborted' and batches(h) == [[3, 0]]
    assert statuses(ro) == {3: 'done', 0: 'done', 1: 'pending', 4: 'pending',
                            2: 'pending', 5: 'pending'}
    assert not any(h.cluster.noout.values())


def test_abort_of_a_batch_held_at_the_gate_puts_its_masks_back() -> None:
    h = harness()
    ro = h.apply(max_parallel=2)
    h.run(until=in_wait)
    h.cluster.ok_to_stop_answer = (False, 'no')
    h.cluster.ok_to_stop_max_answer = [1, 4]
    h.run(until=lambda ro: ro.r.phase == 'restart' and ro.r.pause is not None)
    assert flying(ro) == [1, 4]
    ro.request('abort')
    h.run()
    assert ro.r.state == 'aborted' and ro.r.message == 'aborted before osd.1, osd.4 were restarted'
    assert statuses(ro)[1] == statuses(ro)[4] == 'pending'
    assert set(h.cluster.config) == {('osd.3', OPTIONS), ('osd.0', OPTIONS)}


def test_a_failover_mid_batch_resumes_it_and_restarts_no_osd_twice() -> None:
    h = harness()
    h.apply(max_parallel=2)
    h.run(until=lambda ro: ro.r.phase == 'wait' and flying(ro) == [1, 4])
    ro = h.failover()
    assert [f.restart.stage for f in ro.r.batch] == ['wait_up', 'wait_up']  # type: ignore
    head = json.loads(h.kv.d['rollout'])
    assert [f['i'] for f in head['batch']] == [2, 3] and head['max_parallel'] == 2
    h.run()
    assert ro.r.state == 'done' and batches(h) == BATCHES
    assert all(runs(h, i) == NEW for i in SSDS_IN_ORDER) and not any(h.cluster.noout.values())


def test_a_failover_between_a_batchs_restart_calls_finishes_the_batch() -> None:
    # the mgr went away after osd.3's restart call, before osd.0's: the new
    # mgr finishes the batch (osd.3 being down: a gate of osd.0's own would hold it)
    h = harness()
    call = h.cluster.restart_osd

    def gone_at_0(osd: int) -> str:
        if osd == 0:
            raise MgrGone()
        return call(osd)
    h.cluster.restart_osd = gone_at_0  # type: ignore[method-assign]
    h.apply(max_parallel=2)
    with pytest.raises(MgrGone):
        h.run()
    h.cluster.restart_osd = call  # type: ignore[method-assign]
    ro = h.failover()
    assert [f.restart.stage for f in ro.r.batch] == ['wait_up', 'issuing']  # type: ignore
    ro.resume_after_failover()
    h.clock.advance(ro.step())  # osd.3 still down: the batch's gate lets osd.0 go
    assert h.restarted() == [3, 0] and not h.cluster.osds()[3].up
    h.run()
    assert ro.r.state == 'done' and h.restarted() == [3, 0, 1, 4, 2, 5]


def test_an_osd_skipped_inside_a_batch_leaves_the_rest_of_it_going() -> None:
    h = harness()
    ro = h.apply(max_parallel=2)
    h.run(until=lambda ro: ro.r.phase == 'set')
    h.cluster.config[('osd.0', OPTIONS)] = 'someone=else'
    h.run(until=lambda ro: ro.r.phase == 'restart')
    assert flying(ro) == [3] and statuses(ro)[0] == 'skipped'
    h.run(until=lambda ro: ro.r.phase == 'wait' and flying(ro) == [1, 4])
    h.cluster.purge(4)  # gone during its restart
    h.run()
    assert ro.r.state == 'done' and statuses(ro) == {3: 'done', 0: 'skipped', 1: 'done',
                                                     4: 'skipped', 2: 'done', 5: 'done'}
    assert 'set by someone else' in ro.r.osds[1].error and 'gone' in ro.r.osds[3].error
    assert batches(h) == [[3], [1, 4], [2, 5]] and not any(h.cluster.noout.values())


def test_the_plan_says_how_it_restarts_and_refuses_a_bad_max_parallel() -> None:
    h = Harness()
    one = plan_apply(h.cluster, NEW, '--options', canary=0)
    some = plan_apply(h.cluster, NEW, '--options', canary=0, max_parallel=20)
    assert 'max_parallel' not in one.to_json() and some.to_json()['max_parallel'] == 20
    text = report.plan_text(some, undo_commands(some))
    assert text.startswith('plan: apply to the OSDs of class ssd, up to 20 at a time, as '
                           'ceph osd ok-to-stop --max allows\n')
    assert 'in batches of up to 20' in text
    assert report.plan_text(one, undo_commands(one)).startswith(
        'plan: apply to the OSDs of class ssd, one OSD at a time\n')
    for bad in (0, -1, 101):
        with pytest.raises(RolloutRefused, match='--max-parallel takes'):
            plan_apply(h.cluster, NEW, '--options', canary=0, max_parallel=bad)


def test_a_restart_call_that_fails_in_a_batch_fails_that_osd_only() -> None:
    h = harness()
    call = h.cluster.restart_osd
    fails = [0]

    def once(osd: int) -> str:
        if osd in fails:
            fails.remove(osd)
            raise ClusterError('orchestrator could not restart')
        return call(osd)
    h.cluster.restart_osd = once  # type: ignore[method-assign]
    ro = h.apply(max_parallel=2)
    h.run()
    assert ro.r.state == 'failed' and statuses(ro)[3] == 'done' and statuses(ro)[0] == 'failed'
    assert ro.r.osds[1].put_back == 'done' and runs(h, 3) == NEW
    assert runs(h, 0) == PACIFIC_DEFAULT and h.cluster.config_get_own('osd.0', OPTIONS) is None
    assert ro.r.error == ('restarting osd.0 failed: orchestrator could not restart; it is '
                          'back on its prior options')
