"""The phase tables' rarer moves, each taken on purpose: every declared move
of a session and a rollout is taken by some unit test (conftest.py fails a
whole run of the suite that leaves one untaken)."""
import ast
import inspect
from typing import Any, Dict, Optional, Set

import pytest

from rocks_autotune import rollout_phases, session_phases
from rocks_autotune.cluster import ClusterError
from rocks_autotune.rocksdb_options import NEW_TUNING
from test_rollout import Harness as RolloutHarness
from session_harness import Harness, assert_restored

Until = Any


def phase(name: str) -> Until:
    return lambda s: s.s.phase == name


def client_session(**settings: Any) -> Harness:
    return Harness(client_space=8 << 20, client_object_size=1 << 20,
                   precondition_limit=600.0, **settings)


def test_a_client_load_that_fails_in_the_preconditioning_fails_the_trial() -> None:
    # precondition -> recover: the trial failed, the canary restored onto its originals
    h = client_session(on_failure='stop')
    before = h.config_of(0)
    s = h.start(osd=0, workload='client')
    h.run(until=phase('precondition'))
    h.cluster.client_fails = 'pool full'
    s.step()
    assert s.s.phase == 'recover' and 'pool full' in s.s.message
    h.cluster.client_fails = ''
    h.run()
    assert [t['verdict'] for t in h.trials] == ['failed']
    assert_restored(h, 0, before)


def test_abort_in_the_preconditioning_restores_the_canary() -> None:
    # precondition -> restore
    h = client_session()
    before = h.config_of(0)
    s = h.start(osd=0, workload='client')
    h.run(until=phase('precondition'))
    s.request('abort')
    s.step()
    assert s.s.phase == 'restore'
    h.run()
    assert s.s.state == 'aborted' and s.s.client.removed is not None
    assert_restored(h, 0, before)


def test_abort_while_the_canary_comes_up_restores_it() -> None:
    # wait_up -> restore
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0)
    h.run(until=lambda s: s.s.phase == 'wait_up' and s.s.current.kind == 'candidate')
    s.request('abort')
    s.step()
    assert s.s.phase == 'restore'
    h.run()
    assert s.s.state == 'aborted'
    assert_restored(h, 0, before)


def test_a_restart_onto_a_candidate_that_fails_fails_the_trial() -> None:
    # restart -> recover: the candidate's restart raised; the trial failed, the
    # canary goes back onto its originals, and that restart works
    h = Harness(on_failure='stop')
    before = h.config_of(0)
    s = h.start(osd=0)
    h.run(until=lambda s: s.s.phase == 'restart' and s.s.current.kind == 'candidate')
    h.cluster.restart_fails = True
    s.step()
    assert s.s.phase == 'recover' and 'restart on the candidate failed' in s.s.message
    h.cluster.restart_fails = False
    h.run()
    assert h.trials[-1]['verdict'] == 'failed'
    assert_restored(h, 0, before)


def test_a_failing_restart_back_onto_the_originals_ends_the_session_failed() -> None:
    # recover_restart -> end: the recovery's restart raised; the config is
    # restored and the alert says to restart the OSD
    h = Harness()
    s = h.start(osd=0)
    h.run(until=lambda s: s.s.phase == 'restart' and s.s.current.kind == 'candidate')
    h.cluster.restart_fails = True
    s.step()  # the candidate's restart: the trial fails
    h.run(until=lambda s: s.s.phase == 'recover_restart' or not s.active)
    s.step()  # the recovery's
    assert s.s.phase == 'end' and s.s.state == 'failed'
    assert 'restart it to load its original options' in s.s.error
    assert h.config_of(0)['bluestore_rocksdb_options'] is None
    assert 'ROCKS_AUTOTUNE_RESTORE_FAILED' in s.health_checks()


def test_abort_during_a_recovery_restores_the_canary() -> None:
    # recover -> restore, recover_restart -> restore, recover_wait -> restore
    for where in ('recover', 'recover_restart', 'recover_wait'):
        h = Harness()
        before = h.config_of(0)
        s = h.start(osd=0)
        h.run(until=lambda s: s.s.phase == 'restart'
              and s.s.current.kind == 'candidate')
        h.cluster.restart_fails = True
        s.step()  # the candidate's restart: the trial fails
        h.cluster.restart_fails = False
        h.run(until=lambda s: s.s.phase == where)
        assert s.s.current.kind == 'recovery'
        s.request('abort')
        s.step()
        assert s.s.phase == 'restore', where
        h.run()
        assert s.s.state == 'aborted', where
        assert_restored(h, 0, before)


def test_an_osd_gone_at_its_restart_is_skipped() -> None:
    # rollout restart -> next: the OSD was purged after its options were set
    h = RolloutHarness()
    ro = h.apply(NEW_TUNING)
    h.run(until=lambda ro: ro.r.phase == 'restart')
    gone = ro.r.osds[ro.r.batch[0].i].osd
    h.cluster.purge(gone)
    h.run(until=lambda ro: ro.r.phase != 'restart')
    assert ro.r.phase == 'next'
    o = [o for o in ro.r.osds if o.osd == gone][0]
    assert o.status == 'skipped' and 'config is as before' in o.error


def test_repeated_errors_putting_an_osd_back_end_the_rollout() -> None:
    # rollout put_back -> end
    h = RolloutHarness()
    ro = h.apply(NEW_TUNING)
    h.run(until=lambda ro: ro.r.phase == 'restart')
    h.cluster.restart_fails = True
    h.run(until=lambda ro: ro.r.phase == 'put_back')
    h.cluster.config_rm = fail  # type: ignore[method-assign]
    h.run()
    assert ro.r.phase == 'end' and ro.r.state == 'failed'
    assert 'giving up after repeated errors' in ro.r.message


def fail(*args: Any) -> None:
    raise ClusterError('the mon is not answering')


def moves_of_handlers(module: Any) -> Dict[str, Set[str]]:
    """Each phase's handler's possible moves, read from the source: the
    `Go(P.X, ...)` it returns (an `End(...)`: P.END), and those of the phases' methods it calls
    through `self.` (a handler makes no move itself); a
    timed `Pause(...)` it returns may end in the moves of `timed_out`, which
    the engine makes once the pause lasted too long."""
    tree = ast.parse(inspect.getsource(module))
    methods = {f.name: f for c in tree.body if isinstance(c, ast.ClassDef)
               for f in c.body if isinstance(f, ast.FunctionDef)}

    def called(node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Lambda):
            node = node.body
        if isinstance(node, ast.Call):
            node = node.func
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return node.attr if node.value.id == 'self' else None
        return None

    def moves(name: str, seen: Set[str]) -> Set[str]:
        seen.add(name)
        out: Set[str] = set()
        for node in ast.walk(methods[name]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == 'Go':
                out |= {a.attr for a in ast.walk(node.args[0])  # P.X, or a choice of them
                        if isinstance(a, ast.Attribute) and ast.unparse(a.value) == 'P'}
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == 'End':
                out.add('END')  # the engine moves an ended job to its END phase
            callee = called(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == 'Pause' and not any(
                        k.arg == 'timed' and ast.unparse(k.value) == 'False'
                        for k in node.keywords):
                callee = 'timed_out'
            if callee in methods and callee not in seen:
                out |= moves(callee, seen)
        return out

    (table,) = [n for n in ast.walk(methods['table']) if isinstance(n, ast.Dict)]
    return {ast.unparse(k).split('.')[1]: moves(str(called(v)), set())
            for k, v in zip(table.keys, table.values) if k is not None}


@pytest.mark.parametrize('module, phases', [(session_phases, session_phases.Phase),
                                            (rollout_phases, rollout_phases.Phase)])
def test_each_handlers_moves_are_in_its_row_of_the_table(module: Any, phases: Any) -> None:
    handlers = moves_of_handlers(module)
    assert handlers, 'no handler read'
    for name, made in handlers.items():
        phase = phases[name]
        allowed = {p.name for p in module.MOVES[phase]} | {phase.name}
        assert made <= allowed, f'{name} may move to {sorted(made - allowed)}'
    # the reading finds moves: a session's measure may go to its next trial;
    # a pause that lasts too long restores the canary, or ends the rollout
    assert 'NEXT' in handlers.get('MEASURE', handlers.get('WAIT', set()))
    assert {'RESTORE', 'END'} & handlers['APPLY' if 'APPLY' in handlers else 'RESTART']
