import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'src', 'pybind', 'mgr'))
# Ceph's real mgr_module.py and orchestrator package, from the ceph-mgr package
sys.path.append('/usr/share/ceph/mgr')


# ------------------------------------------------ the state machines' moves
# Every move a session or a rollout makes in the unit suite is recorded; run
# whole, the suite fails if a move their tables declare was never taken (a
# move the code makes but the table lacks fails at once: _enter asserts it).
import pytest  # noqa: E402

from rocks_autotune import rollout, session  # noqa: E402

TAKEN = {'session': set(), 'rollout': set()}  # type: ignore[var-annotated]


def _recording(machine: str, cls: type) -> None:
    enter = cls._enter  # type: ignore[attr-defined]

    def recorded(self, phase, *args, **kwargs):  # type: ignore[no-untyped-def]
        old = self.head.phase
        enter(self, phase, *args, **kwargs)
        if phase.value != old:
            TAKEN[machine].add((old, phase.value))
    cls._enter = recorded  # type: ignore[attr-defined]


_recording('session', session.Session)
_recording('rollout', rollout.Rollout)


def untaken() -> dict:  # type: ignore[type-arg]
    out = {}
    for machine, mod in (('session', session), ('rollout', rollout)):
        declared = {(a.value, b.value) for a, bs in mod.MOVES.items() for b in bs if b != a}
        out[machine] = sorted(declared - TAKEN[machine])
    return out


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A whole run of the unit suite (tests/unit, no -k or -m) fails if a
    declared move was never taken: a move the code cannot make is a lie in
    its table, one it makes untested a gap."""
    opts = session.config.option
    whole = (not opts.keyword and not opts.markexpr and not opts.collectonly
             and session.testsfailed == 0
             and any(os.path.abspath(a.split('::')[0]) == HERE for a in session.config.args))
    missing = {k: v for k, v in untaken().items() if v}
    if whole and missing:
        session.config.get_terminal_writer().line(
            f'declared moves no unit test took: {missing}', red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
