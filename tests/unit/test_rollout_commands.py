"""apply, revert, abort and status of a rollout through the mgr glue (Ceph's
real mgr_module.py over the mock of its C++ side), on the fake cluster."""
import errno
import json
from typing import Any, Dict, List, Tuple

import pytest

import mgr_mock

mgr_mock.install()
from rocks_autotune import module  # noqa: E402
from rocks_autotune.canary import OPTIONS  # noqa: E402
from rocks_autotune.rocksdb_options import NEW_TUNING, PACIFIC_DEFAULT  # noqa: E402
from rocks_autotune.workload import OSD_BENCH  # noqa: E402

NEW = NEW_TUNING


@pytest.fixture
def mgr() -> Any:
    return mgr_mock.make_module()


def out(r: Any) -> Tuple[int, str, str]:
    return r.retval, r.stdout, r.stderr


def status(m: Any, osds: bool = False) -> Dict[str, Any]:
    return json.loads(out(m.cmd_status(format='json', osds=osds))[1])


def events(m: Any) -> List[Tuple[str, str]]:
    return [(f, a[0][0]) for mod, f, a, _ in m.mock_remote if mod == 'progress']


def test_apply_rolls_the_last_recommendation_out_and_revert_puts_it_back(mgr: Any) -> None:
    mgr.cmd_start(workload=OSD_BENCH, osd=1, trials=2, duration=5)
    mgr_mock.drive(mgr)
    best = json.loads(out(mgr.cmd_best(format='json'))[1])
    assert best['answer'] == 'recommend'
    assert 'then ceph rocks-autotune apply' in out(mgr.cmd_best())[1]
    store, config = dict(mgr.mock_store), dict(mgr.cluster.config)
    r, plan, _ = out(mgr.cmd_apply(dry_run=True))
    assert r == 0 and plan.startswith('plan: apply A to the OSDs of class ssd (3 OSDs: osd.0-2)')
    assert f'\n  A: from session {status(mgr)["id"]} (canary osd.1)\n' in plan
    assert '\n  undo: ceph rocks-autotune revert\n' in plan and len(plan.splitlines()) == 8
    r, plan, _ = out(mgr.cmd_apply(dry_run=True, detail=True))
    assert f'from session {status(mgr)["id"]} (canary osd.1): recommend trial' in plan
    assert 'osd.0 bluestore_rocksdb_options' in plan and 'not osd/class:ssd' in plan
    plan_json = json.loads(out(mgr.cmd_apply(dry_run=True, format='json'))[1])
    assert plan_json['options'] == best['options'] and list(plan_json['sets']) == [
        'osd.0', 'osd.1', 'osd.2']
    assert plan_json['undo'] == [f'ceph config rm osd.{i} bluestore_rocksdb_options'
                                 for i in range(3)]
    assert mgr.mock_store == store and mgr.cluster.config == config  # a dry run changes nothing
    restarts = len(mgr.cluster.restarts)
    r, o, _ = out(mgr.cmd_apply())
    assert r == 0 and 'apply' in o and '3 OSDs to restart one at a time' in o
    mgr.publish()
    assert ('update', f'rocks-autotune-apply-{mgr.rollout.r.id}') in events(mgr)
    mgr_mock.drive(mgr, what='rollout')
    st = status(mgr)['rollout']
    assert st['state'] == 'done' and st['counts']['done'] == 3
    assert ('complete', f'rocks-autotune-apply-{st["id"]}') in events(mgr)
    assert all(mgr.cluster.config[(f'osd.{i}', OPTIONS)] == best['options'] for i in range(3))
    assert [o for o, _ in mgr.cluster.restarts[restarts:]] == [0, 1, 2]
    assert all(mgr.cluster.running[i] == best['options'] for i in range(3))
    assert mgr.mock_health == {}
    r, o, _ = out(mgr.cmd_revert())
    assert r == 0 and o.startswith('revert ')
    mgr_mock.drive(mgr, what='rollout')
    assert status(mgr)['rollout']['state'] == 'done'
    assert mgr.cluster.config == config
    assert all(mgr.cluster.running[i] == PACIFIC_DEFAULT for i in range(3))
    r, _, err = out(mgr.cmd_revert())
    assert r == -errno.ENOENT and 'nothing to revert' in err


def test_apply_is_refused_without_a_recommendation(mgr: Any) -> None:
    r, _, err = out(mgr.cmd_apply())
    assert r == -errno.EINVAL and 'no tuning session has run' in err and '--options' in err
    r, _, err = out(mgr.cmd_apply(options=NEW))
    assert r == -errno.EINVAL and '--device-class CLASS or --osds N,M' in err
    # one round: too few for an interval, the answer is to keep the current options
    mgr.mock_options.update(confirm_candidates=1, confirm_rounds=1)
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=5)
    mgr_mock.drive(mgr)
    r, _, err = out(mgr.cmd_apply(dry_run=True))
    assert r == -errno.EINVAL and 'keep your current options' in err
    assert 'rollout' not in mgr.mock_store and mgr.cluster.config == {}


@pytest.mark.parametrize('kw, message', [
    (dict(device_class='nvme'), "no OSD has device class 'nvme'"),
    (dict(osds='1,x'), '--osds takes OSD ids'),
    (dict(osds='7'), 'osd.7 does not exist'),
    (dict(options='max_write_buffer_number'), 'cannot use the options string'),
    (dict(device_class='ssd', osds='1'), 'not both'),
])
def test_bad_input_to_apply_is_a_clear_error_and_changes_nothing(
        mgr: Any, kw: Dict[str, Any], message: str) -> None:
    kw = dict(dict(options=NEW, device_class='ssd'), **kw) if 'osds' not in kw else \
        dict(dict(options=NEW), **kw)
    for dry_run in (True, False):
        r, _, err = out(mgr.cmd_apply(dry_run=dry_run, **kw))
        assert r == -errno.EINVAL and message in err, err
    assert mgr.mock_store == {} and mgr.cluster.config == {} and mgr.rollout is None


def test_the_ceph_cli_reaches_apply_with_its_flags(mgr: Any) -> None:
    # as the ceph CLI sends `apply --device-class ssd --options ... --dry-run`
    r, o, _ = out(mgr._handle_command(None, {
        'prefix': 'rocks-autotune apply', 'device_class': 'ssd', 'options': NEW,
        'dry_run': True}))
    assert r == 0 and 'plan: apply A to the OSDs of class ssd' in o
    r, o, _ = out(mgr._handle_command(None, {
        'prefix': 'rocks-autotune apply', 'device_class': 'ssd', 'options': NEW,
        'dry_run': True, 'detail': True}))
    assert r == 0 and 'config (now -> then):' in o
    r, o, _ = out(mgr._handle_command(None, {
        'prefix': 'rocks-autotune apply', 'osds': '2,0', 'options': NEW}))
    assert r == 0 and mgr.rollout.r.sets == {'osd.2': {OPTIONS: NEW}, 'osd.0': {OPTIONS: NEW}}


def test_a_session_and_a_rollout_never_run_side_by_side(mgr: Any) -> None:
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=5)
    r, _, err = out(mgr.cmd_apply(options=NEW, device_class='ssd'))
    assert r == -errno.EBUSY and 'tuning session is running' in err
    r, _, err = out(mgr.cmd_revert())
    assert r == -errno.EBUSY
    mgr.cmd_abort()
    mgr_mock.drive(mgr)
    assert out(mgr.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    r, _, err = out(mgr.cmd_start(workload=OSD_BENCH, osd=0))
    assert r == -errno.EBUSY and 'an apply is running' in err
    r, _, err = out(mgr.cmd_apply(options=NEW, osds='1'))
    assert r == -errno.EBUSY and 'an apply is running' in err
    assert out(mgr.cmd_revert())[0] == -errno.EBUSY
    mgr_mock.drive(mgr, what='rollout')
    assert out(mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=5))[0] == 0


def test_abort_stops_the_rollout_and_only_revert_may_follow(mgr: Any) -> None:
    assert out(mgr.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    clock = mgr.cluster.clock
    while mgr.rollout.r.phase != 'wait':
        clock.advance(mgr.rollout.step())
    r, o, _ = out(mgr.cmd_abort())
    assert r == 0 and 'after the OSD in flight' in o
    assert out(mgr.cmd_stop())[0] == -errno.ENOENT
    mgr_mock.drive(mgr, what='rollout')
    st = status(mgr)
    assert st['rollout']['state'] == 'aborted' and st['rollout']['counts'] == {
        'pending': 2, 'restarting': 0, 'done': 1, 'failed': 0, 'skipped': 0}
    assert 'ROCKS_AUTOTUNE_ROLLOUT_INCOMPLETE' in mgr.mock_health
    assert events(mgr)[-1][0] == 'fail'
    text = out(mgr.cmd_status())[1]
    assert 'rollout: apply to the OSDs of class ssd: aborted' in text
    assert '  OSDs: 1 done, 0 restarting, 2 pending, 0 failed\n' in text
    r, _, err = out(mgr.cmd_apply(options=NEW, device_class='ssd'))
    assert r == -errno.EBUSY and 'revert` it first' in err
    assert out(mgr.cmd_revert())[0] == 0
    mgr_mock.drive(mgr, what='rollout')
    assert mgr.cluster.config == {} and mgr.mock_health == {}


def test_a_failed_rollout_raises_a_health_check_naming_revert(mgr: Any) -> None:
    mgr.cluster.broken = lambda options: options == NEW
    out(mgr.cmd_apply(options=NEW, device_class='ssd'))
    mgr_mock.drive(mgr, what='rollout')
    check = mgr.mock_health['ROCKS_AUTOTUNE_ROLLOUT_FAILED']
    assert 'stopped: an OSD failed (0/3 done)' in check['summary']
    assert any('`ceph rocks-autotune revert`' in d for d in check['detail'])
    ro = status(mgr)['rollout']
    assert [(o['osd'], o['status'], o['put_back'])
            for o in ro['notable']] == [(0, 'failed', 'done')]
    assert 'osd.0 failed: ' in out(mgr.cmd_status())[1] and 'osds' not in ro
    assert mgr.cluster.running[0] == PACIFIC_DEFAULT


def test_the_rollout_survives_a_mgr_failover(mgr: Any) -> None:
    out(mgr.cmd_apply(options=NEW, device_class='ssd'))
    clock = mgr.cluster.clock
    while not (mgr.rollout.r.phase == 'wait' and [f.i for f in mgr.rollout.r.batch] == [1]):
        clock.advance(mgr.rollout.step())
    other = mgr_mock.load_class(module.RocksAutotune)('rocks_autotune', None, None)
    other.cluster, other.clock = mgr.cluster, mgr.clock
    other.mock_store, other.mock_options = mgr.mock_store, mgr.mock_options
    other.load()
    assert other.rollout is not None and other.rollout.active and other.session is None
    mgr_mock.drive(other, what='rollout')
    assert other.rollout.r.state == 'done'
    assert [o for o, _ in mgr.cluster.restarts] == [0, 1, 2]


def test_a_rollout_head_of_another_version_is_refused_and_set_aside(mgr: Any) -> None:
    # one schema version (the module was never released): a head saved by
    # the last one, 2, is unreadable, never read as today's
    out(mgr.cmd_apply(options=NEW, device_class='ssd'))
    clock = mgr.cluster.clock
    while not (mgr.rollout.r.phase == 'wait' and [f.i for f in mgr.rollout.r.batch] == [1]):
        clock.advance(mgr.rollout.step())
    head = json.loads(mgr.mock_store['rollout'])
    mgr.mock_store['rollout'] = json.dumps(dict(head, version=2))
    other = mgr_mock.load_class(module.RocksAutotune)('rocks_autotune', None, None)
    other.cluster, other.clock = mgr.cluster, mgr.clock
    other.mock_store, other.mock_options = mgr.mock_store, mgr.mock_options
    other.load()
    other.publish()
    assert other.rollout is None and 'ROCKS_AUTOTUNE_ROLLOUT_STATE_CORRUPT' in other.mock_health
    assert json.loads(other.mock_store['rollout.corrupt'])['version'] == 2
    assert 'rollout' not in other.mock_store


def test_an_unreadable_rollout_state_is_reported_and_set_aside(mgr: Any) -> None:
    mgr.mock_store['rollout'] = '{"version": 1, "state": '
    mgr.load()
    mgr.publish()
    assert mgr.rollout is None and 'ROCKS_AUTOTUNE_ROLLOUT_STATE_CORRUPT' in mgr.mock_health
    assert mgr.mock_store['rollout.corrupt'].startswith('{"version"')
    assert 'rollout' not in mgr.mock_store
    assert 'unreadable' in status(mgr)['rollout_error']
    r, _, err = out(mgr.cmd_revert())
    assert r == -errno.ENOENT
    assert out(mgr.cmd_apply(options=NEW, osds='0'))[0] == 0
    mgr.publish()
    assert 'ROCKS_AUTOTUNE_ROLLOUT_STATE_CORRUPT' not in mgr.mock_health


def test_the_serve_loop_runs_a_rollout_and_its_progress_event(mgr: Any) -> None:
    from test_module import serve_in_thread, wait_for
    assert out(mgr.cmd_apply(options=NEW, osds='1,2'))[0] == 0
    t = serve_in_thread(mgr)
    wait_for(lambda: not mgr.rollout.active)
    mgr.shutdown()
    t.join(5)
    assert mgr.rollout.r.state == 'done'
    assert mgr.cluster.running[1] == mgr.cluster.running[2] == NEW
    assert events(mgr)[-1] == ('complete', f'rocks-autotune-apply-{mgr.rollout.r.id}')


def test_the_panels_status_api_carries_the_rollout(mgr: Any) -> None:
    from rocks_autotune import panel
    out(mgr.cmd_apply(options=NEW, osds='2,0'))
    mgr.publish()
    r = panel.Panel(lambda: mgr.panel_snapshot).handle('GET', '/api/status')
    ro = json.loads(r.body)['rollout']
    assert r.status == 200 and ro['kind'] == 'apply' and ro['state'] == 'running'
    assert (ro['total'], ro['counts']['pending'], ro['notable']) == (2, 2, [])
    # every OSD in restart order on request, not in the status the panel polls
    assert 'osds' not in ro and 'sets' not in ro
    every = status(mgr, osds=True)['rollout']
    assert [(o['osd'], o['status']) for o in every['osds']] == [(0, 'pending'), (2, 'pending')]
    assert list(every['sets']) == ['osd.0', 'osd.2']


def test_revert_is_not_refused_while_an_osd_is_down_and_apply_is(mgr: Any) -> None:
    r, o, _ = out(mgr.cmd_apply(options=NEW, device_class='ssd'))
    assert r == 0, o
    mgr_mock.drive(mgr, what='rollout')
    mgr.cluster.kill(1)
    r, _, err = out(mgr.cmd_apply(options=PACIFIC_DEFAULT, device_class='ssd'))
    assert r == -errno.EINVAL and 'osd.1 is down' in err, err
    config = dict(mgr.cluster.config)
    r, o, err = out(mgr.cmd_revert())
    assert r == 0, err
    assert 'osd.1 is down: its config is put back first' in o and 'wait for: ' in o, o
    for _ in range(30):  # its restarts wait at the gate for osd.1
        mgr.cluster.clock.advance(mgr.rollout.step())
    assert ('osd.1', OPTIONS) not in mgr.cluster.config and mgr.rollout.active
    assert mgr.cluster.config != config


def test_max_parallel_a_bad_value_is_refused_and_a_good_one_is_shown(mgr: Any) -> None:
    store, config = dict(mgr.mock_store), dict(mgr.cluster.config)
    for bad in (0, -3, 101):
        for cmd in (mgr.cmd_apply, mgr.cmd_revert):
            kw = dict(options=NEW, device_class='ssd') if cmd == mgr.cmd_apply else {}
            r, _, err = out(cmd(max_parallel=bad, **kw))
            assert r == -errno.EINVAL and '--max-parallel takes' in err and str(bad) in err, err
    assert mgr.mock_store == store and mgr.cluster.config == config and mgr.rollout is None
    plan = json.loads(out(mgr.cmd_apply(options=NEW, device_class='ssd', dry_run=True,
                                        max_parallel=3, format='json'))[1])
    assert plan['max_parallel'] == 3
    assert 'max_parallel' not in json.loads(out(mgr.cmd_apply(
        options=NEW, device_class='ssd', dry_run=True, format='json'))[1])
    r, o, _ = out(mgr.cmd_apply(options=NEW, device_class='ssd', max_parallel=3))
    assert r == 0 and ('3 OSDs to restart up to 3 at a time, as ceph osd ok-to-stop --max '
                       'allows; ') in o and 'stops it after the OSDs in flight' in o, o
    mgr_mock.drive(mgr, what='rollout')
    # the fake's three OSDs are on three hosts: ok-to-stop --max lets one stop at a time
    assert mgr.rollout.r.state == 'done' and mgr.cluster.ok_to_stop_max_asked == [
        (0, 3), (1, 3), (2, 3)]
    assert status(mgr)['rollout']['max_parallel'] == 3
