"""The measurement plan: how the canary measures a confirmation's arms
(sequential, or split)."""
from typing import Any, Dict, List

import pytest

from rocks_autotune import confirm
from rocks_autotune.measurement_plan import BASELINE, SEQUENTIAL, MeasurementPlan
from rocks_autotune.space import SearchSpace
from rocks_autotune.trial import Trial
from rocks_autotune.workload import CLIENT

ORDERS = [['c1', BASELINE, 'c2'], [BASELINE, 'c2', 'c1'], ['c2', 'c1', BASELINE],
          [BASELINE, 'c1', 'c2']]


def windows(plan: MeasurementPlan, order: List[str]) -> List[str]:
    """The arms a confirmation on `plan` measures in a round drawn as `order`,
    window by window (each measured before the next is asked for)."""
    c = SearchSpace.candidate_from_options({})
    finalists = [(Trial(index=0, kind='candidate', candidate=c, options='o'), 0.0)
                 for a in order if a != BASELINE]
    rec = confirm.plan(finalists, 5, 0.03, CLIENT, plan, 1.5)
    rec.orders = [order]
    conf = confirm.Confirmation(rec, [], 0, None)
    out = []
    for _ in order:
        nxt = conf.next()
        assert nxt is not None and nxt[0] == 0 and nxt[2] == ''  # round 0, no steady check
        out.append(nxt[1])
        conf.trials.append(Trial(index=len(conf.trials), kind='confirm', candidate=c,
                                 options='', verdict='measured', round=0, arm=nxt[1]))
    return out


def test_sequential_is_every_arm_a_window_of_its_own_in_the_rounds_order() -> None:
    for order in ORDERS:
        assert windows(MeasurementPlan(SEQUENTIAL), order) == order


@pytest.mark.parametrize('plan', [
    None, {}, {'design': 'trio'}, {'design': 'duet'},
    # one of before, its canary listed: the head's version says so first
    {'design': 'sequential', 'osds': [1]},
    {'design': 'sequential', 'mode': 'x'},
])
def test_a_malformed_plan_is_refused(plan: object) -> None:
    # what the store's load refuses as unreadable
    with pytest.raises((ValueError, TypeError, KeyError)):
        MeasurementPlan.from_json(plan)  # type: ignore[arg-type]


@pytest.mark.parametrize('saved', [
    {'design': 'sequential'},
    {'design': 'sequential', 'why': 'no client groups'},
    {'design': 'split', 'why': 'w', 'reference_pgs': 14, 'shared_host': True},
])
def test_a_plan_reads_back_as_stored(saved: Dict[str, Any]) -> None:
    plan = MeasurementPlan.from_json(saved)
    assert list(plan.to_json().items()) == list(saved.items())
    assert MeasurementPlan.from_json(plan.to_json()) == plan
