"""qa/teuthology/run-vstart's verdict on vstart_runner's output (no lab).

The lines are vstart_runner's own, as it printed them on the lab (its
LogStream logs unittest's verbose lines through `log.info`)."""
import importlib.machinery
import importlib.util
import os
from typing import Any, List

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
PREFIX = '2026-11-26 12:54:28,453.453 INFO:__main__:'
MODULE = 'tasks.mgr.test_rocks_autotune.TestRocksAutotune'


@pytest.fixture(scope='module')
def rv() -> Any:
    path = os.path.join(REPO, 'qa', 'teuthology', 'run-vstart')
    loader = importlib.machinery.SourceFileLoader('run_vstart', path)
    spec = importlib.util.spec_from_loader('run_vstart', loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def feed(run: Any, lines: List[str], rc: int = 0) -> Any:
    for line in lines:
        run.read(PREFIX + line + '\n')
    run.rc = rc
    return run


def passed(name: str, seconds: float = 100.0) -> List[str]:
    return [f'Stopped test: {name} ({MODULE}.{name}) in {seconds}s',
            f'{name} ({MODULE}.{name}) ... ok']


def test_the_test_names_are_read_from_the_test_case(rv: Any) -> None:
    names = rv.test_names()
    assert {'test_short_session', 'test_abort_mid_trial',
            'test_canary_killed_mid_trial'} <= set(names)


def test_every_test_ok_passes(rv: Any) -> None:
    names = rv.test_names()
    run = feed(rv.Run('MgrTestCase', [rv.TEST_MODULE]),
               [line for n in names for line in passed(n)] + ['OK'])
    assert run.problems(names) == []
    assert run.tests['test_short_session'] == ('ok', 100.0)


def test_a_skip_fails_the_run_even_when_vstart_runner_exits_0(rv: Any) -> None:
    # MgrTestCase.setUpClass with too few mgrs: no test runs, unittest says OK
    run = feed(rv.Run('MgrTestCase', [rv.TEST_MODULE]), [
        f"setUpClass ({MODULE}) ... skipped 'Only have 0 manager daemons, 2 are required'",
        'Ran 0 tests in 1.0s', 'OK (skipped=1)'])
    problems = run.problems(rv.test_names())
    assert any('skipped' in p for p in problems), problems
    assert any('test_short_session did not run' in p for p in problems), problems


def test_a_failure_or_a_test_that_did_not_run_fails_the_run(rv: Any) -> None:
    names = rv.test_names()
    lines = [line for n in names[:-1] for line in passed(n)]
    lines.append(f'{names[0]} ({MODULE}.{names[0]}) ... FAIL')
    problems = feed(rv.Run('MgrTestCase', [rv.TEST_MODULE]), lines, rc=255).problems(names)
    assert 'vstart_runner exited 255' in problems
    assert f'{names[0]}: FAIL' in problems
    assert f'{names[-1]} did not run' in problems


def test_the_thrasher_run_must_kill_the_canary_and_answer_a_restart(rv: Any) -> None:
    args = ['--config-mode', rv.THRASH_YAML]
    quiet = feed(rv.Run('thrasher', args, kills=True), ['Running task rocks_autotune...'])
    assert len(quiet.problems([])) == 2
    # the workunits' run need not kill, but must have answered a restart
    quiet = feed(rv.Run('workunits', ['--config-mode', rv.WORKUNITS_YAML]),
                 ['Running task rocks_autotune...'])
    assert len(quiet.problems([])) == 1 and 'answered no restart' in quiet.problems([])[0]
    line = ("INFO:tasks.rocks_autotune:killing the canary osd.2 in trial 4 (measure)",
            'INFO:tasks.rocks_autotune:stopping the rocks_autotune admin '
            '(6 restart(s) answered)')
    run = rv.Run('thrasher', args, kills=True)
    for text in line:
        run.read('2026-11-26 13:04:27,154.154 ' + text + '\n')
    run.rc = 0
    assert run.killed and run.restarts == 6
    assert run.problems([]) == []


def test_a_failed_tests_exception_line_is_kept_for_the_results(rv: Any) -> None:
    # unittest's report, as vstart_runner logs it
    name = 'test_short_session'
    run = feed(rv.Run('MgrTestCase', [rv.TEST_MODULE]), [
        f'{name} ({MODULE}.{name}) ... FAIL',
        f'FAIL: {name} ({MODULE}.{name})',
        'Traceback (most recent call last):',
        '  File "/x/qa/tasks/mgr/test_rocks_autotune.py", line 258, in test_short_session',
        "    self.assertEqual(s['state'], 'done', s)",
        "AssertionError: 'failed' != 'done'",
        'FAILED (failures=1)'], rc=1)
    assert run.why == {name: "line 258: AssertionError: 'failed' != 'done'"}
    assert run.tests[name][0] == 'FAIL'


def test_ci_leaves_to_the_config_mode_runs_only_the_tests_they_check_too(rv: Any) -> None:
    runs, expected = rv.default_runs()
    assert set(rv.COVERED) <= set(rv.test_names())
    assert set(expected) == set(rv.test_names()) - set(rv.COVERED)
    assert runs[0].args == [f'{MODULE}.{t}' for t in expected]
    assert [(r.name, r.config_mode, r.kills) for r in runs[1:]] == [
        ('thrasher', True, True), ('workunits', True, False)]
    assert set(rv.COVERED.values()) == {r.name for r in runs[1:]}
