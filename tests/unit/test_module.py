"""The mgr glue, run on Ceph's real mgr_module.py over a mock of its C++ side."""
import errno
import json
from typing import Any, Tuple

import pytest

import mgr_mock

mgr_mock.install()
from rocks_autotune import module  # noqa: E402


@pytest.fixture
def mgr() -> Any:
    return mgr_mock.make_module()


def drive(m: Any, steps: int = 3000) -> None:
    clock = m.cluster.clock
    for _ in range(steps):
        if m.session is None or not m.session.active:
            return
        clock.advance(m.session.step())
        m.publish()
    raise AssertionError('session did not end')


def out(r: Any) -> Tuple[int, str, str]:
    return r.retval, r.stdout, r.stderr


def test_status_idle_plain_and_json(mgr: Any) -> None:
    r, o, _ = out(mgr.cmd_status())
    assert r == 0 and o.startswith('state: idle')
    r, o, _ = out(mgr.cmd_status(format='json'))
    assert json.loads(o) == {'state': 'idle'}


def test_every_module_option_has_a_type_and_help() -> None:
    # added by the mgr itself (Tentacle adds sqlite3_killpoint too)
    standard = ('log_level', 'log_to_file', 'log_to_cluster', 'log_to_cluster_level',
                'sqlite3_killpoint')
    for opt in module.RocksAutotune.MODULE_OPTIONS:
        if opt['name'] not in standard:
            assert opt['type'] and opt.get('desc'), opt['name']


def test_start_refusal_is_a_clear_error_and_changes_nothing(mgr: Any) -> None:
    r, _, err = out(mgr.cmd_start(osd=42))
    assert r == -errno.EINVAL and 'osd.42 does not exist' in err
    r, _, err = out(mgr.cmd_start(budget=0.5))
    assert r == -errno.EINVAL and '--budget' in err
    assert mgr.session is None and mgr.mock_store == {} and mgr.cluster.config == {}


def test_session_through_the_commands(mgr: Any) -> None:
    r, o, _ = out(mgr.cmd_start(osd=1, trials=2, duration=5))
    assert r == 0 and 'osd.1' in o
    assert json.loads(mgr.mock_store['session'])['state'] == 'running'
    r, _, err = out(mgr.cmd_start(osd=2))
    assert r == -errno.EBUSY
    mgr.publish()
    assert ('progress', 'update') in [(m, f) for m, f, _, _ in mgr.mock_remote]
    drive(mgr)
    st = json.loads(out(mgr.cmd_status(format='json'))[1])
    assert st['state'] == 'done' and st['trials_done'] == 2
    r, o, _ = out(mgr.cmd_history())
    assert r == 0 and len(o.splitlines()) >= 5
    assert len(json.loads(out(mgr.cmd_history(format='json'))[1])) == 4
    r, o, _ = out(mgr.cmd_best())
    assert r == 0 and 'bluestore_rocksdb_options' in o and 'ceph config set osd.1' in o
    best = json.loads(out(mgr.cmd_best(format='json'))[1])
    assert best['options'] and best['commands']
    assert mgr.mock_remote[-1][1] == 'complete'
    assert mgr.mock_health == {}


def test_stop_and_abort_without_a_session(mgr: Any) -> None:
    assert out(mgr.cmd_stop())[0] == -errno.ENOENT
    assert out(mgr.cmd_abort())[0] == -errno.ENOENT
    assert out(mgr.cmd_best())[0] == -errno.ENOENT


def test_corrupted_store_is_reported_not_raised(mgr: Any) -> None:
    mgr.mock_store['session'] = '{"version": 1, "state": "running"'
    mgr.load()
    assert mgr.session is None
    assert 'unreadable' in json.loads(out(mgr.cmd_status(format='json'))[1])['error']
    mgr.publish()
    assert 'ROCKS_AUTOTUNE_STATE_CORRUPT' in mgr.mock_health
    assert mgr.mock_store['session.corrupt'].startswith('{"version"')


def test_resume_from_store_after_failover(mgr: Any) -> None:
    mgr.cmd_start(osd=0, trials=1, duration=5)
    for _ in range(6):
        mgr.cluster.clock.advance(mgr.session.step())
    other = module.RocksAutotune('rocks_autotune', None, None)
    other.cluster = mgr.cluster
    other.clock = mgr.clock
    other.mock_store = mgr.mock_store
    other.mock_options = mgr.mock_options
    other.load()
    assert other.session is not None and other.session.active
    drive(other)
    assert other.session.s['state'] == 'done'
