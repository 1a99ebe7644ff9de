"""The mgr glue, run on Ceph's real mgr_module.py over a mock of its C++ side."""
import errno
import functools
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Tuple

import pytest

import mgr_mock

mgr_mock.install()
from rocks_autotune import module, optimizer  # noqa: E402
from rocks_autotune.canary import SAVED  # noqa: E402
from rocks_autotune.optimizer import TrialOptimizer  # noqa: E402
from rocks_autotune.workload import OSD_BENCH  # noqa: E402


@pytest.fixture
def mgr() -> Any:
    return mgr_mock.make_module()


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
    r, _, err = out(mgr.cmd_start(workload=OSD_BENCH, osd=42))
    assert r == -errno.EINVAL and 'osd.42 does not exist' in err
    r, _, err = out(mgr.cmd_start(workload=OSD_BENCH, budget=0.5))
    assert r == -errno.EINVAL and '--budget' in err
    assert mgr.session is None and mgr.mock_store == {} and mgr.cluster.config == {}


def test_a_start_refused_on_the_canarys_options_writes_nothing(mgr: Any) -> None:
    # issue 12, item 5: a canary on zstd started, and its state was saved
    writes: List[str] = []
    store = mgr._ceph_set_store
    mgr._ceph_set_store = lambda key, value: (writes.append(key), store(key, value))
    mgr.cluster.config_set('osd', 'bluestore_rocksdb_options', 'compression=kZSTD')
    r, _, err = out(mgr.cmd_start(workload=OSD_BENCH, osd=0))
    assert r == -errno.EINVAL and "unsupported RocksDB compression 'kZSTD'" in err
    assert mgr.session is None and writes == []
    assert mgr.cluster.config == {('osd', 'bluestore_rocksdb_options'): 'compression=kZSTD'}


def test_allow_single_copy_reaches_the_session_through_the_command(mgr: Any) -> None:
    mgr.cluster.add_pool('thin', size=2, min_size=1)
    r, _, err = out(mgr.cmd_start(workload=OSD_BENCH, osd=0))
    assert r == -errno.EINVAL and '--allow-single-copy' in err
    # as the ceph CLI sends it: the flag is a CephBool argument of its own
    r, o, _ = out(mgr._handle_command(None, {'prefix': 'rocks-autotune start', 'osd': 0,
                                             'allow_single_copy': True}))
    assert r == 0 and "--allow-single-copy: every restart of it leaves pool 'thin'" in o
    assert mgr.session.params.allow_single_copy


def test_session_through_the_commands(mgr: Any) -> None:
    r, o, _ = out(mgr.cmd_start(workload=OSD_BENCH, osd=1, trials=2, duration=5))
    assert r == 0 and 'osd.1' in o
    assert json.loads(mgr.mock_store['session'])['state'] == 'running'
    r, _, err = out(mgr.cmd_start(workload=OSD_BENCH, osd=2))
    assert r == -errno.EBUSY
    mgr.publish()
    assert ('progress', 'update') in [(m, f) for m, f, _, _ in mgr.mock_remote]
    mgr_mock.drive(mgr)
    st = json.loads(out(mgr.cmd_status(format='json'))[1])
    assert st['state'] == 'done' and st['trials_done'] == 2
    r, o, _ = out(mgr.cmd_history())
    assert r == 0 and len(o.splitlines()) >= 5
    kinds = [t['kind'] for t in json.loads(out(mgr.cmd_history(format='json'))[1])]
    assert kinds[:4] == ['baseline', 'baseline', 'candidate', 'candidate']
    assert set(kinds[4:]) == {'confirm'}
    r, o, _ = out(mgr.cmd_best())
    assert r == 0 and 'bluestore_rocksdb_options' in o and 'ceph config set osd.1' in o
    best = json.loads(out(mgr.cmd_best(format='json'))[1])
    assert best['answer'] == 'recommend' and best['options'] and best['commands']
    assert best['ratios']['objective']['rounds'] == 5
    # json-pretty: the same JSON, indented (history and best printed it on one line)
    for cmd in (mgr.cmd_status, mgr.cmd_history, mgr.cmd_best):
        flat, pretty = (out(cmd(format=f))[1] for f in ('json', 'json-pretty'))
        assert '\n  ' in pretty and '\n' not in flat and json.loads(pretty) == json.loads(flat)
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
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=5)
    for _ in range(6):
        mgr.cluster.clock.advance(mgr.session.step())
    other = module.RocksAutotune('rocks_autotune', None, None)
    other.cluster = mgr.cluster
    other.clock = mgr.clock
    other.mock_store = mgr.mock_store
    other.mock_options = mgr.mock_options
    other.load()
    assert other.session is not None and other.session.active
    mgr_mock.drive(other)
    assert other.session.s.state == 'done'


def failover(mgr: Any) -> Any:
    """A new active mgr over the same cluster and store."""
    other = mgr_mock.load_class(module.RocksAutotune)('rocks_autotune', None, None)
    other.cluster = mgr.cluster
    other.clock = mgr.clock
    other.mock_store = mgr.mock_store
    other.mock_options = mgr.mock_options
    other.load()
    return other


def canary_options(mgr: Any, osd: int) -> Tuple[Any, str]:
    return (mgr.cluster.config_get_own(f'osd.{osd}', 'bluestore_rocksdb_options'),
            mgr.cluster.running[osd])


def test_a_long_session_survives_a_failover_whole(mgr: Any, monkeypatch: Any) -> None:
    # issue 11, finding 2: past 64 KiB the one-value state was refused by the
    # store (only logged), and a failover resumed a stale copy.  The asks are
    # the safe random ones: 60 Gaussian-process fits would test the optimizer
    monkeypatch.setattr(optimizer, 'TrialOptimizer',
                        functools.partial(TrialOptimizer, n_initial_points=100))
    mgr.mock_options.update(baseline_runs=10)  # the most there may be
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=50, duration=2)
    clock = mgr.cluster.clock
    while len(mgr.session.s.trials) < 60:
        clock.advance(mgr.session.step())
    assert len(json.dumps(mgr.session.s.to_json())) > 64 << 10
    assert all(len(v) < 64 << 10 for v in mgr.mock_store.values())
    other = failover(mgr)
    assert other.session.s.trials == mgr.session.s.trials
    assert other.session.s.phase == mgr.session.s.phase


def test_a_failed_state_write_pauses_the_session_and_says_so(mgr: Any) -> None:
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=2)
    clock = mgr.cluster.clock
    mgr.mock_store_fails = True
    restarts = len(mgr.cluster.restarts)
    for _ in range(20):
        clock.advance(mgr.session.step())
    mgr.publish()
    assert 'ROCKS_AUTOTUNE_STATE_WRITE_FAILED' in mgr.mock_health
    # the write before the restart failed: the restart was not issued
    assert len(mgr.cluster.restarts) == restarts
    mgr.mock_store_fails = False
    mgr_mock.drive(mgr)
    assert mgr.session.s.state == 'done' and 'ROCKS_AUTOTUNE_STATE_WRITE_FAILED' not in \
        mgr.mock_health


def run_to_candidate_window(mgr: Any) -> None:
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=2, duration=5)
    clock = mgr.cluster.clock
    while not (mgr.session.s.phase == 'measure'
               and mgr.session.s.current.kind == 'candidate'):
        clock.advance(mgr.session.step())
    assert canary_options(mgr, 0)[0] is not None  # the canary runs a candidate


def test_an_unreadable_state_still_restores_the_canary(mgr: Any) -> None:
    # issue 11, finding 3: load() gave up, leaving the candidate config, a
    # canary running it, and noout
    run_to_candidate_window(mgr)
    mgr.mock_store['session'] = '{"version": 2, "state": '
    other = failover(mgr)
    mgr_mock.drive(other)
    assert canary_options(other, 0) == (None, mgr.cluster.defaults['bluestore_rocksdb_options'])
    assert not mgr.cluster.has_noout(0)
    assert other.session.s.state == 'failed'
    other.publish()
    assert 'ROCKS_AUTOTUNE_STATE_CORRUPT' in other.mock_health
    assert 'session.corrupt' in other.mock_store


def own_config(mgr: Any, osd: int) -> Dict[str, Any]:
    """What the session saves of a canary and puts back: its own values at osd.N."""
    return {n: mgr.cluster.config_get_own(f'osd.{osd}', n) for n in SAVED}


def test_a_head_of_another_version_is_refused_and_the_canary_rescued(mgr: Any) -> None:
    # one schema version (the module was never released): a head saved by
    # the last one, 9 (the pause's start beside it, paused_since), is read
    # as unreadable, never as today's
    before = {0: own_config(mgr, 0)}
    run_to_candidate_window(mgr)
    head = json.loads(mgr.mock_store['session'])
    mgr.mock_store['session'] = json.dumps(dict(head, version=9))
    other = failover(mgr)
    mgr_mock.drive(other)
    assert other.session.s.state == 'failed'
    assert own_config(other, 0) == before[0] and not mgr.cluster.has_noout(0)
    assert mgr.cluster.running[0] == mgr.cluster.defaults['bluestore_rocksdb_options']
    assert json.loads(other.mock_store['session.corrupt'])['version'] == 9


def test_an_invalid_option_does_not_break_a_running_session(mgr: Any) -> None:
    run_to_candidate_window(mgr)
    mgr.mock_options['compressions'] = 'none,zstd'
    mgr.serve_panel = lambda: None  # no HTTP server in unit tests
    mgr.config_notify()
    other = failover(mgr)
    assert other.session is not None and other.session.active
    mgr_mock.drive(other)
    assert other.session.s.state == 'done'
    assert canary_options(other, 0)[0] is None
    other.publish()
    assert 'ROCKS_AUTOTUNE_BAD_OPTION' in other.mock_health
    r, _, err = out(other.cmd_start(workload=OSD_BENCH, osd=1))
    assert r == -errno.EINVAL and 'compressions' in err


class FastEvent(threading.Event):
    """The serve loop's wait, on the fake clock: no real sleeping."""

    def __init__(self, clock: Any) -> None:
        super().__init__()
        self.clock = clock

    def wait(self, timeout: Any = None) -> bool:
        self.clock.advance(timeout or 0)
        time.sleep(0.001)
        return False


def serve_in_thread(mgr: Any) -> threading.Thread:
    mgr.serve_panel = lambda: None  # no HTTP server in unit tests
    mgr.event = FastEvent(mgr.cluster.clock)
    t = threading.Thread(target=mgr.serve, daemon=True)
    t.start()
    return t


def wait_for(what: Callable[[], bool], seconds: float = 20) -> None:
    end = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < end, 'timed out'
        time.sleep(0.01)


def test_commands_answer_while_a_step_runs(mgr: Any) -> None:
    # issue 11, finding 8: the serve thread held the lock through a step, and
    # every command waited behind it (and `ceph orch` behind the command)
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=5)
    release, entered = threading.Event(), threading.Event()
    bench = mgr.cluster.bench

    def slow_bench(*args: Any) -> Any:
        entered.set()
        release.wait(30)
        return bench(*args)
    mgr.cluster.bench = slow_bench
    t = serve_in_thread(mgr)
    try:
        assert entered.wait(20)
        for cmd in (lambda: mgr.cmd_status(format='json'), mgr.cmd_history,
                    lambda: mgr.cmd_start(workload=OSD_BENCH, osd=1), mgr.cmd_abort):
            answered: List[Any] = []
            c = threading.Thread(target=lambda: answered.append(cmd()), daemon=True)
            started = time.monotonic()
            c.start()
            c.join(5)
            assert answered and time.monotonic() - started < 1.0, cmd
        assert mgr.session.active  # the abort waits for the step's end
    finally:
        release.set()
    wait_for(lambda: not mgr.session.active)
    mgr.shutdown()
    t.join(5)
    assert mgr.session.s.state == 'aborted'


def test_the_serve_loop_outlives_publish_errors(mgr: Any) -> None:
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=2)
    mgr.mock_remote_fails = True  # e.g. the progress module is not there
    t = serve_in_thread(mgr)
    wait_for(lambda: not mgr.session.active)
    assert t.is_alive()
    mgr.shutdown()
    t.join(5)
    assert mgr.session.s.state == 'done'


def test_an_aborted_session_fails_its_progress_event(mgr: Any) -> None:
    mgr.cmd_start(workload=OSD_BENCH, osd=0, trials=1, duration=5)
    mgr.publish()
    mgr.cmd_abort()
    mgr_mock.drive(mgr)
    assert mgr.session.s.state == 'aborted'
    assert [(m, f) for m, f, _, _ in mgr.mock_remote][-1] == ('progress', 'fail')


def test_loading_the_module_imports_neither_numpy_nor_scipy() -> None:
    # scipy's extensions deadlock a mgr sub-interpreter on a thread whose GIL
    # state is another's: Pacific's mgr hung loading the module when power.py
    # imported scipy at its top; only the serve thread may import them
    code = ('import sys, mgr_mock; mgr_mock.install(); import rocks_autotune.module; '
            'print(sorted(m for m in ("numpy", "scipy", "skopt") if m in sys.modules))')
    here = os.path.dirname(os.path.abspath(__file__))
    path = [here, os.path.join(here, '..', '..', 'src', 'pybind', 'mgr'), '/usr/share/ceph/mgr']
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(path)))
    assert out.stdout.strip() == '[]', out.stdout + out.stderr
