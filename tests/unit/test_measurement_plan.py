"""The measurement plan: which canary runs which arm in which window (one
canary: sequential, or split)."""
import pytest

from rocks_autotune import measurement_plan as mp
from rocks_autotune.measurement_plan import BASELINE, Slot

ORDERS = [['c1', BASELINE, 'c2'], [BASELINE, 'c2', 'c1'], ['c2', 'c1', BASELINE],
          [BASELINE, 'c1', 'c2']]


def test_sequential_is_every_arm_a_window_of_its_own_in_the_rounds_order() -> None:
    for order in ORDERS:
        assert mp.windows(mp.sequential(4), order) == [Slot(4, a) for a in order]


@pytest.mark.parametrize('plan', [
    None, {}, {'design': 'trio', 'osds': [1, 2, 3]}, {'design': 'sequential', 'osds': []},
    {'design': 'sequential', 'osds': [1, 2]}, {'design': 'duet', 'osds': [1, 2]},
    {'design': 'split', 'osds': ['2']}, {'design': 'sequential', 'osds': [True]},
])
def test_a_malformed_plan_is_refused(plan: object) -> None:
    with pytest.raises(ValueError):
        mp.check(plan)
