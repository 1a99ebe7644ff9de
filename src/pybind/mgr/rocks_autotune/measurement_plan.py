"""The measurement plan: how the canary measures a confirmation's arms.
Design: doc/dev/internals.rst, dev-internals-load."""
from dataclasses import dataclass
from typing import Any, Dict, Optional

from .workload import ClientRecord

BASELINE = 'baseline'
SEQUENTIAL = 'sequential'
SPLIT = 'split'
DESIGNS = (SEQUENTIAL, SPLIT)


@dataclass(frozen=True)
class MeasurementPlan:
    """How a session's canary measures: its `plan`, its confirmation's `measurement_plan`."""
    design: str  # DESIGNS
    why: Optional[str] = None  # why this design, for the answers
    # a split's: group R's PGs, and whether R's OSDs share the canary's host
    reference_pgs: Optional[int] = None
    shared_host: Optional[bool] = None

    def __post_init__(self) -> None:
        if self.design not in DESIGNS:
            raise ValueError(f'not a measurement plan: {self!r}')

    def to_json(self) -> Dict[str, Any]:
        """As stored: what is unset left out."""
        return {k: v for k, v in vars(self).items() if v is not None}

    @classmethod
    def from_json(cls, saved: Dict[str, Any]) -> 'MeasurementPlan':
        """ValueError (TypeError): not a plan this module makes."""
        return cls(**saved)


def plan_for(c: Optional[ClientRecord]) -> MeasurementPlan:
    """The canary's plan: split when its client load has a group R, else
    sequential."""
    why = (c.design_why or None) if c else None
    if c is not None and c.design == SPLIT:
        return MeasurementPlan(SPLIT, why, len(c.ref_seeds or []), bool(c.shared_host))
    return MeasurementPlan(SEQUENTIAL, why)
