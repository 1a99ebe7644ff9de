"""Rollouts under faults and at scale (issue 22), each case through the
module's command methods (Ceph's real mgr_module.py over the mock of its C++
side, whose store refuses a value over the mon's 64 KiB) on the fake cluster.
Each test is named for the behaviour it pins; the number is the issue's item."""
import errno
import json
from typing import Any, Dict, List, Optional, Tuple

import pytest

import mgr_mock

mgr_mock.install()
from fake_cluster import TENTACLE_DEFAULTS, FakeClock, FakeCluster  # noqa: E402
from rocks_autotune import module  # noqa: E402
from rocks_autotune.canary import ANNEX, OPTIONS  # noqa: E402
from rocks_autotune.rocksdb_options import NEW_TUNING  # noqa: E402
from rocks_autotune.workload import OSD_BENCH  # noqa: E402

NEW = NEW_TUNING
Config = Dict[Tuple[str, str], str]


def out(r: Any) -> Tuple[int, str, str]:
    return r.retval, r.stdout, r.stderr


def make(n_osds: int = 3, **kw: Any) -> Any:
    m = mgr_mock.make_module()
    m.cluster = FakeCluster(FakeClock(), n_osds=n_osds, **kw)
    m.clock = m.cluster.clock
    return m


def step_until(m: Any, until: Any, steps: int = 2000) -> None:
    clock = m.cluster.clock
    for _ in range(steps):
        if until(m.rollout.r):
            return
        clock.advance(m.rollout.step())
        m.publish()
    raise AssertionError(f'never got there: {m.rollout.r.phase} {m.rollout.r.message}')


def in_flight(osd: int, phase: str = 'wait') -> Any:
    def at(r: Dict[str, Any]) -> bool:
        return r.phase == phase and [r.osds[f.i].osd for f in r.batch] == [osd]
    return at


def failover(m: Any, clock_offset: float = 0.0) -> Any:
    """A new active mgr over the same store and cluster, its clock `offset` ahead."""
    other = mgr_mock.load_class(module.RocksAutotune)('rocks_autotune', None, None)
    other.cluster = m.cluster
    other.clock = lambda: m.cluster.clock() + clock_offset
    other.mock_store, other.mock_options = m.mock_store, m.mock_options
    return other


def restarted(m: Any) -> List[int]:
    return [osd for osd, _ in m.cluster.restarts]


def rollout(m: Any) -> Dict[str, Any]:
    return json.loads(out(m.cmd_status(format='json', osds=True))[1])['rollout']


# ------------------------------------------------------------ 1: single copy

def test_1_apply_is_refused_where_a_restart_leaves_a_single_copy_unless_allowed() -> None:
    m = make()
    m.cluster.add_pool('thin', size=2, min_size=1)
    m.cluster.add_pool('ec21', size=3, min_size=2, k=2)
    r, _, err = out(m.cmd_apply(options=NEW, device_class='ssd'))
    assert r == -errno.EINVAL and "pool 'thin'" in err and 'on one copy' in err
    assert "pool 'ec21'" in err and '--allow-single-copy' in err
    assert m.rollout is None and m.cluster.config == {} and 'rollout' not in m.mock_store
    r, plan, _ = out(m.cmd_apply(options=NEW, device_class='ssd', allow_single_copy=True,
                                 dry_run=True))
    assert r == 0 and 'single copy: --allow-single-copy: restarts of osd.0-2' in plan
    assert out(m.cmd_apply(options=NEW, device_class='ssd', allow_single_copy=True))[0] == 0
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'done' and restarted(m) == [0, 1, 2]


def test_1_a_single_copy_pool_made_mid_rollout_holds_the_next_restart_back() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, in_flight(0))
    m.cluster.add_pool('thin', size=2, min_size=1)
    step_until(m, lambda r: r.phase == 'restart' and r.pause is not None)
    assert restarted(m) == [0] and "pool 'thin'" in m.rollout.r.message
    assert 'ROCKS_AUTOTUNE_ROLLOUT_PAUSED' in m.mock_health


# ------------------------------------------------------------ 2: a failed apply

def test_2_a_failed_apply_leaves_every_osd_it_did_not_restart_as_it_was() -> None:
    m = make(n_osds=4)
    m.cluster.config[('osd.3', OPTIONS)] = 'max_write_buffer_number=4'  # an admin's own
    before: Config = dict(m.cluster.config)
    # osd.0 starts on the new options, osd.1 does not
    m.cluster.broken = lambda options: options == NEW and len(m.cluster.restarts) >= 1
    assert out(m.cmd_apply(options=NEW, osds='0,1,2,3'))[0] == 0
    mgr_mock.drive(m, what='rollout')
    st = rollout(m)
    assert st['state'] == 'failed'
    assert [(o['osd'], o['status']) for o in st['osds']] == [
        (0, 'done'), (1, 'failed'), (2, 'pending'), (3, 'pending')]
    # only the OSD done holds the new options; the failed one is put back, the
    # others were never touched
    before[('osd.0', OPTIONS)] = NEW
    assert m.cluster.config == before
    assert m.cluster.running[1] != NEW
    detail = ' '.join(m.mock_health['ROCKS_AUTOTUNE_ROLLOUT_FAILED']['detail'])
    assert 'not restarted: osd.2-3; their config was not changed' in detail


def test_2_an_abort_at_the_gate_puts_the_osds_mask_back() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, in_flight(0))
    m.cluster.ok_to_stop_answer = (False, 'held for the test')
    step_until(m, lambda r: r.phase == 'restart' and r.pause is not None)
    assert m.cluster.config[('osd.1', OPTIONS)] == NEW  # set just before its restart
    assert out(m.cmd_abort())[0] == 0
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'aborted'
    assert m.cluster.config == {('osd.0', OPTIONS): NEW}  # osd.1 and osd.2 as before


# ------------------------------------------------------------ 3: state at scale

def biggest_value(m: Any) -> int:
    return max(len(v) for v in m.mock_store.values())


def test_3_a_600_osd_rollout_saves_every_step_and_its_revert_too() -> None:
    m = make(n_osds=600, defaults=TENTACLE_DEFAULTS)
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, lambda r: len([o for o in r.osds if o.status == 'done']) == 3)
    assert 'ROCKS_AUTOTUNE_STATE_WRITE_FAILED' not in m.mock_health
    assert out(m.cmd_abort())[0] == 0
    other = failover(m)
    other.load()
    mgr_mock.drive(other, what='rollout')
    assert other.rollout.r.state == 'aborted' and restarted(m) == [0, 1, 2]
    assert biggest_value(m) < 16 << 10  # far below the mon's 64 KiB
    r, o, _ = out(other.cmd_revert())
    assert r == 0, o
    mgr_mock.drive(other, what='rollout')
    assert other.rollout.r.state == 'done' and m.cluster.config == {}
    assert biggest_value(m) < 16 << 10


def test_3_a_2000_osd_apply_is_saved_in_small_values() -> None:
    m = make(n_osds=2000, defaults=TENTACLE_DEFAULTS)
    r, _, err = out(m.cmd_apply(options=NEW, device_class='ssd'))
    assert r == 0, err
    assert biggest_value(m) < 16 << 10
    assert failover(m).rollout_store.load().osds[1999].osd == 1999


def test_3_an_apply_refused_at_its_first_save_leaves_the_last_rollout_revertable() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, osds='0'))[0] == 0
    mgr_mock.drive(m, what='rollout')
    first = m.rollout.r.id
    # someone else's value at osd.1, longer than one value of the store holds:
    # the apply that would save it as osd.1's prior is refused before anything
    huge = 'max_write_buffer_number=4,' + 'x' * (70 << 10) + '=1'
    m.cluster.config[('osd.1', OPTIONS)] = huge
    saved = dict(m.mock_store)
    r, _, err = out(m.cmd_apply(options=NEW, osds='1'))
    assert r == -errno.EIO and 'over' in err
    assert m.mock_store == saved and m.rollout.r.id == first
    assert m.cluster.config == {('osd.0', OPTIONS): NEW, ('osd.1', OPTIONS): huge}
    del m.cluster.config[('osd.1', OPTIONS)]
    other = failover(m)
    other.load()
    assert out(other.cmd_revert())[0] == 0
    mgr_mock.drive(other, what='rollout')
    assert m.cluster.config == {}


def test_3_an_apply_refused_at_its_head_write_removes_the_keys_it_wrote() -> None:
    # issue 45: they stayed in config-key forever (~11.5 KB per 40 OSDs)
    m = make()
    assert out(m.cmd_apply(options=NEW, osds='0'))[0] == 0
    mgr_mock.drive(m, what='rollout')
    saved = dict(m.mock_store)
    put = m.rollout_store._put

    def refuse_the_head(key: str, value: Optional[str]) -> None:
        if key == 'rollout' and value is not None:
            raise OSError('error: entry size limited to 8192 bytes.')
        put(key, value)
    m.rollout_store._put = refuse_the_head
    r, _, err = out(m.cmd_apply(options=NEW, osds='1'))
    assert r == -errno.EIO and 'writing rollout ' in err, err
    assert m.mock_store == saved
    m.rollout_store._put = put
    assert out(m.cmd_apply(options=NEW, osds='1'))[0] == 0  # and the next one saves


def test_3_a_new_rollout_removes_the_last_ones_keys() -> None:
    m = make()
    for osds in ('0', '1'):
        assert out(m.cmd_apply(options=NEW, osds=osds))[0] == 0
        mgr_mock.drive(m, what='rollout')
    rid = m.rollout.r.id
    keys = [k for k in m.mock_store if k.startswith('rollout.') and k != 'rollout.corrupt']
    assert keys and all(k.startswith(f'rollout.{rid}.') for k in keys)


# ------------------------------------------------------------ 4: the health policy

@pytest.mark.parametrize('flag', ['noup', 'nodown'])
def test_4_noup_or_nodown_refuses_an_apply_even_with_force(flag: str) -> None:
    m = make()
    m.cluster.cluster_flags.add(flag)
    for force in (False, True):
        r, _, err = out(m.cmd_apply(options=NEW, device_class='ssd', force=force))
        assert r == -errno.EAGAIN and f'the cluster has {flag} set' in err
    assert m.rollout is None and m.cluster.config == {} and restarted(m) == []


def test_4_noup_set_mid_rollout_holds_the_restart_back_and_clears_no_noout() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, in_flight(0))
    m.cluster.cluster_flags.add('noup')
    m.cluster.clock.advance(30)
    step_until(m, lambda r: r.pause is not None)
    assert restarted(m) == [0] and 'the cluster has noup set' in m.rollout.r.message
    assert not any(m.cluster.noout.values())
    m.cluster.cluster_flags.discard('noup')
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'done' and restarted(m) == [0, 1, 2]


def test_4_others_health_checks_hold_an_apply_back_without_force() -> None:
    m = make()
    m.cluster.extra_health = ['POOL_NEARFULL']
    r, _, err = out(m.cmd_apply(options=NEW, device_class='ssd'))
    assert r == -errno.EAGAIN and 'POOL_NEARFULL' in err and '--force' in err
    assert out(m.cmd_apply(options=NEW, device_class='ssd', force=True))[0] == 0
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'done'


# ------------------------------------------------------------ 5: an OSD purged

def test_5_an_osd_purged_mid_apply_is_skipped_and_revert_goes_through() -> None:
    m = make(n_osds=4)
    assert out(m.cmd_apply(options=NEW, osds='0,1,2,3'))[0] == 0
    step_until(m, in_flight(1, 'wait'))
    m.cluster.purge(2)  # while osd.1 restarts
    mgr_mock.drive(m, what='rollout')
    st = rollout(m)
    assert st['state'] == 'done' and st['counts']['skipped'] == 1
    assert 'osd.2 skipped: no longer in the OSD map' in out(m.cmd_status())[1]
    assert ('osd.2', OPTIONS) not in m.cluster.config
    assert out(m.cmd_revert())[0] == 0
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'done' and m.cluster.config == {}


def test_5_a_destroyed_osd_is_skipped() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, in_flight(0, 'wait'))
    m.cluster.info[2].destroyed = True  # `ceph osd destroy`: the id stays in the map
    step_until(m, lambda r: r.osds[2].status not in ('pending', 'restarting'))
    assert m.rollout.r.osds[2].status == 'skipped'
    assert 'destroyed' in m.rollout.r.osds[2].error
    assert ('osd.2', OPTIONS) not in m.cluster.config


def test_5_an_osd_purged_during_its_own_restart_is_skipped() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, in_flight(1, 'wait'))
    m.cluster.purge(1)
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'done' and m.rollout.r.osds[1].status == 'skipped'
    assert restarted(m) == [0, 1, 2] and ('osd.1', OPTIONS) not in m.cluster.config
    assert not m.rollout.r.batch and m.mock_health == {}


# ------------------------------------------------------------ 6: revert and others' config

def test_6_revert_leaves_what_someone_else_set_after_the_apply_and_says_so() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    mgr_mock.drive(m, what='rollout')
    theirs = 'max_write_buffer_number=4'
    m.cluster.config[('osd.1', OPTIONS)] = theirs
    n = len(restarted(m))
    r, plan, _ = out(m.cmd_revert(dry_run=True))
    assert r == 0 and 'osd.1 bluestore_rocksdb_options is now' in plan and 'someone else' in plan
    assert out(m.cmd_revert())[0] == 0
    mgr_mock.drive(m, what='rollout')
    assert m.cluster.config == {('osd.1', OPTIONS): theirs}
    assert restarted(m)[n:] == [0, 2]
    assert 'osd.1 skipped' in out(m.cmd_status())[1]


# ------------------------------------------------------------ 7: failover races

def test_7_no_command_changes_anything_before_the_saved_state_is_loaded() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, in_flight(0))
    other = failover(m)  # serve() has not loaded yet
    other.LOAD_WAIT = 0.01  # what a command waits for it (10 s in the mgr)
    store, config = dict(m.mock_store), dict(m.cluster.config)
    for call in (lambda: other.cmd_start(workload=OSD_BENCH, osd=1),
                 lambda: other.cmd_apply(options=NEW, osds='1'),
                 other.cmd_revert, other.cmd_abort, other.cmd_stop):
        r, _, err = out(call())
        assert r == -errno.EAGAIN and 'loading' in err
    assert m.mock_store == store and m.cluster.config == config
    # nor does a read answer as if there were nothing: it waits too
    for read in (other.cmd_status, other.cmd_history, other.cmd_best):
        assert out(read())[0] == -errno.EAGAIN
    other.load()
    assert other.rollout.active and out(other.cmd_status())[0] == 0


def test_7_an_acknowledged_abort_survives_a_failover_before_the_next_step() -> None:
    m = make()
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, in_flight(0))
    assert out(m.cmd_abort())[0] == 0  # acknowledged; the old mgr takes no step after it
    other = failover(m)
    other.load()
    mgr_mock.drive(other, what='rollout')
    assert other.rollout.r.state == 'aborted' and restarted(m) == [0]
    assert m.cluster.config == {('osd.0', OPTIONS): NEW}


def session_in_a_window(m: Any, osd: int) -> Any:
    """A short session on osd, stepped into its first measurement window; the clock."""
    assert out(m.cmd_start(workload=OSD_BENCH, osd=osd, trials=3, duration=5))[0] == 0
    clock = m.cluster.clock
    while m.session.s.phase != 'measure':
        clock.advance(m.session.step())
    return clock


def test_7_an_acknowledged_session_abort_survives_a_failover() -> None:
    m = make()
    session_in_a_window(m, osd=1)
    assert out(m.cmd_abort())[0] == 0
    other = failover(m)
    other.load()
    mgr_mock.drive(other)
    assert other.session.s.state == 'aborted'


@pytest.mark.parametrize('offset', [3600.0, -3600.0])
def test_7_a_restart_timeout_spanning_a_failover_runs_on_the_new_mgrs_clock(
        offset: float) -> None:
    m = make()
    m.cluster.restart_delay = 20.0  # a slow boot
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    step_until(m, lambda r: r.phase == 'wait' and [f.i for f in r.batch] == [0]
               and not m.cluster.info[0].up)
    other = failover(m, clock_offset=offset)
    other.load()
    mgr_mock.drive(other, what='rollout')
    assert other.rollout.r.state == 'done' and restarted(m) == [0, 1, 2]


# ------------------------------------------------------------ 8: a long foreign value

def test_8_someone_elses_long_value_does_not_wedge_a_session() -> None:
    m = make()
    clock = session_in_a_window(m, osd=0)
    long_annex = 'max_write_buffer_number=4,' * 1000  # ~25 KB at a mask that reaches it
    m.cluster.config[('osd/class:ssd', ANNEX)] = long_annex
    for _ in range(200):
        clock.advance(m.session.step())
        m.publish()
        if 'ROCKS_AUTOTUNE_CONFIG_CHANGED' in m.session.health_checks():
            break
    assert 'ROCKS_AUTOTUNE_STATE_WRITE_FAILED' not in m.mock_health
    assert biggest_value(m) < 16 << 10
    assert out(m.cmd_abort())[0] == 0
    mgr_mock.drive(m)
    assert m.session.s.state == 'aborted'
    assert m.cluster.config_get_own('osd.0', OPTIONS) is None


# ------------------------------------------------------------ 10: --osds

@pytest.mark.parametrize('text, message', [
    ('0,\u00b2', 'ASCII digits'),   # superscript two: str.isdigit() says yes
    ('\u0661', 'ASCII digits'),     # Arabic-Indic one: int() reads it as 1
    ('1,2,1', 'names osd.1 more than once'),
    ('1,osd.1', 'names osd.1 more than once'),
])
def test_10_osds_takes_ascii_ids_each_once(text: str, message: str) -> None:
    m = make()
    for dry_run in (True, False):
        r, _, err = out(m.cmd_apply(options=NEW, osds=text, dry_run=dry_run))
        assert r == -errno.EINVAL and message in err, err
    assert m.rollout is None and m.mock_store == {} and m.cluster.config == {}


def test_4_the_crash_of_an_osd_the_apply_broke_holds_back_neither_it_nor_its_revert() -> None:
    m = make()
    m.cluster.crash_when_broken = True
    m.cluster.broken = lambda options: options == NEW and len(m.cluster.restarts) >= 1
    assert out(m.cmd_apply(options=NEW, device_class='ssd'))[0] == 0
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'failed' and 'RECENT_CRASH' in m.cluster.health()[1]
    r, _, err = out(m.cmd_revert())  # no --force
    assert r == 0, err
    mgr_mock.drive(m, what='rollout')
    assert m.rollout.r.state == 'done' and m.cluster.config == {}
    # someone else's crash is another matter
    m.cluster.crash('mon.a')
    r, _, err = out(m.cmd_apply(options=NEW, device_class='ssd'))
    assert r == -errno.EAGAIN and 'RECENT_CRASH' in err
