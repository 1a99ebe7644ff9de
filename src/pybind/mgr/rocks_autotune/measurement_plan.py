"""The measurement plan: how the canary measures a confirmation's arms.
Design: doc/dev/internals.rst, dev-internals-load."""
from dataclasses import dataclass
from typing import Optional

from .record import Record
from .workload import ClientRecord

BASELINE = 'baseline'
SEQUENTIAL = 'sequential'
SPLIT = 'split'
DESIGNS = (SEQUENTIAL, SPLIT)


@dataclass(frozen=True)
class MeasurementPlan(Record):
    """How a session's canary measures: its `plan`, its confirmation's `measurement_plan`."""
    design: str  # DESIGNS
    why: Optional[str] = None  # why this design, for the answers
    # a split's: group R's PGs, and whether R's OSDs share the canary's host
    reference_pgs: Optional[int] = None
    shared_host: Optional[bool] = None
    OMIT_NONE = ('why', 'reference_pgs', 'shared_host')  # as stored: what is unset left out

    def __post_init__(self) -> None:
        if self.design not in DESIGNS:
            raise ValueError(f'not a measurement plan: {self!r}')


def plan_for(c: Optional[ClientRecord]) -> MeasurementPlan:
    """The canary's plan: split when its client load has a group R, else
    sequential."""
    why = (c.design_why or None) if c else None
    if c is not None and c.design == SPLIT:
        return MeasurementPlan(SPLIT, why, len(c.ref_seeds or []), bool(c.shared_host))
    return MeasurementPlan(SEQUENTIAL, why)
