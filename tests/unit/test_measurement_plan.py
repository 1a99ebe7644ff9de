"""The measurement plan: which canary runs which arm in which window (one
canary: sequential, or split)."""
from typing import Any, Dict

import pytest

from rocks_autotune.measurement_plan import BASELINE, SEQUENTIAL, MeasurementPlan, Slot

ORDERS = [['c1', BASELINE, 'c2'], [BASELINE, 'c2', 'c1'], ['c2', 'c1', BASELINE],
          [BASELINE, 'c1', 'c2']]


def test_sequential_is_every_arm_a_window_of_its_own_in_the_rounds_order() -> None:
    for order in ORDERS:
        assert MeasurementPlan(SEQUENTIAL, 4).windows(order) == [Slot(4, a) for a in order]


@pytest.mark.parametrize('plan', [
    None, {}, {'design': 'trio', 'osds': [1, 2, 3]}, {'design': 'sequential', 'osds': []},
    {'design': 'sequential', 'osds': [1, 2]}, {'design': 'duet', 'osds': [1]},
    {'design': 'split', 'osds': ['2']}, {'design': 'sequential', 'osds': [True]},
    {'design': 'sequential', 'osds': [1], 'mode': 'x'},
])
def test_a_malformed_plan_is_refused(plan: object) -> None:
    # what the store's load refuses as unreadable
    with pytest.raises((ValueError, TypeError, KeyError)):
        MeasurementPlan.from_json(plan)  # type: ignore[arg-type]


@pytest.mark.parametrize('saved', [
    {'design': 'sequential', 'osds': [4]},
    {'design': 'sequential', 'osds': [4], 'why': 'no client groups'},
    {'design': 'split', 'osds': [0], 'why': 'w', 'reference_pgs': 14, 'shared_host': True},
])
def test_a_plan_reads_back_as_stored(saved: Dict[str, Any]) -> None:
    plan = MeasurementPlan.from_json(saved)
    assert list(plan.to_json().items()) == list(saved.items())
    assert MeasurementPlan.from_json(plan.to_json()) == plan
