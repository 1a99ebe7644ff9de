"""Which failed trial a crash of the canary belongs to (crashes.py), alone."""
from typing import Any, List

from rocks_autotune import crashes
from rocks_autotune.cluster import Crash
from rocks_autotune.space import SearchSpace
from rocks_autotune.trial import Trial


def trial(index: int, verdict: str, started: float) -> Trial:
    return Trial(index=index, kind='candidate', candidate=SearchSpace.candidate_from_options({}),
                 options='', verdict=verdict, started=started)


def trials(*verdicts_and_starts: Any) -> List[Trial]:
    return [trial(i, v, t) for i, (v, t) in enumerate(verdicts_and_starts)]


def test_a_crash_during_a_failed_trial_or_its_recovery_is_that_trials() -> None:
    ts = trials(('baseline', 0.0), ('failed', 100.0), ('feasible', 200.0))
    assert crashes.failed_trial_of(ts, None, 1, Crash('a', 'osd.1', 150.0)) is ts[1]
    # up to the next trial's start, and the hosts' clock slack either side
    assert crashes.failed_trial_of(ts, None, 1, Crash('b', 'osd.1', 225.0)) is ts[1]
    assert crashes.failed_trial_of(ts, None, 1, Crash('c', 'osd.1', 75.0)) is ts[1]
    assert crashes.failed_trial_of(ts, None, 1, Crash('d', 'osd.1', 250.0)) is None
    # another OSD's crash is no trial's
    assert crashes.failed_trial_of(ts, None, 1, Crash('e', 'osd.2', 150.0)) is None


def test_the_trial_in_flight_ends_the_last_ones_span_and_a_tie_goes_to_the_later() -> None:
    ts = trials(('failed', 0.0), ('failed', 100.0))
    assert crashes.failed_trial_of(ts, None, 0, Crash('a', 'osd.0', 500.0)) is ts[1]
    cur = trial(2, '', 200.0)
    assert crashes.failed_trial_of(ts, cur, 0, Crash('a', 'osd.0', 500.0)) is None
    assert crashes.failed_trial_of(ts, None, 0, Crash('b', 'osd.0', 100.0)) is ts[1]


def test_note_names_each_crash_once_on_its_trial() -> None:
    ts = trials(('failed', 0.0), ('feasible', 100.0))
    for _ in range(2):
        crashes.note(ts, None, 3, [Crash('x', 'osd.3', 50.0), Crash('y', 'osd.4', 50.0)])
    assert ts[0].crashes == ['x'] and ts[1].crashes == []
