"""The measurement plan: which canary runs which arm in which window, for
the sequential design (one canary, the session's today) and the duet (two
canaries over the same windows, crossover)."""
from collections import Counter
from typing import List

import pytest

from rocks_autotune import measurement_plan as mp
from rocks_autotune.measurement_plan import BASELINE, Slot

ORDERS = [['c1', BASELINE, 'c2'], [BASELINE, 'c2', 'c1'], ['c2', 'c1', BASELINE],
          [BASELINE, 'c1', 'c2']]


def test_sequential_is_every_arm_a_window_of_its_own_in_the_rounds_order() -> None:
    for r, order in enumerate(ORDERS):
        assert mp.windows(mp.sequential(4), order, r) == [[Slot(4, a)] for a in order]


def test_a_duet_window_pairs_each_finalist_with_the_baseline_on_the_other_osd() -> None:
    plan = mp.duet(0, 1)
    for r, order in enumerate(ORDERS):
        ws = mp.windows(plan, order, r)
        # one window per finalist, in the round's order, the baseline in each
        assert [next(s.arm for s in w if s.arm != BASELINE) for w in ws] == \
            [a for a in order if a != BASELINE]
        for w in ws:
            assert sorted(s.osd for s in w) == [0, 1]
            assert Counter(s.arm for s in w)[BASELINE] == 1


def arm_on(plan: dict, osd: int, arm: str, rounds: int) -> List[str]:  # type: ignore[type-arg]
    return [next(s.arm for s in mp.windows(plan, ['c1', BASELINE], r)[0] if s.osd == osd)
            for r in range(rounds)]


def test_a_duet_swaps_the_arms_every_round_and_balances_the_restart_order() -> None:
    plan = mp.duet(3, 5)
    # crossover: osd.3 runs the baseline in even rounds, the finalist in odd ones
    assert arm_on(plan, 3, 'c1', 4) == [BASELINE, 'c1', BASELINE, 'c1']
    assert arm_on(plan, 5, 'c1', 4) == ['c1', BASELINE, 'c1', BASELINE]
    # who restarts first: 3, 3, 5, 5, ...: over 4 rounds each arm is first twice
    # and each OSD is first twice
    firsts = [mp.windows(plan, [BASELINE, 'c1'], r)[0][0] for r in range(8)]
    assert [s.osd for s in firsts] == [3, 3, 5, 5, 3, 3, 5, 5]
    assert Counter(s.arm for s in firsts[:4]) == {BASELINE: 2, 'c1': 2}


@pytest.mark.parametrize('plan', [
    None, {}, {'design': 'trio', 'osds': [1, 2, 3]}, {'design': 'sequential', 'osds': []},
    {'design': 'sequential', 'osds': [1, 2]}, {'design': 'duet', 'osds': [1, 1]},
    {'design': 'duet', 'osds': [1, '2']}, {'design': 'duet', 'osds': [True, 2]},
])
def test_a_malformed_plan_is_refused(plan: object) -> None:
    with pytest.raises(ValueError):
        mp.check(plan)


def test_a_duet_of_one_osd_is_refused() -> None:
    with pytest.raises(ValueError, match='two OSDs'):
        mp.duet(2, 2)
