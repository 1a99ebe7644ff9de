"""The measurement plan: which canary runs which arm in which window.
Design: doc/dev/internals.rst, dev-internals-load."""
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from .workload import ClientRecord

BASELINE = 'baseline'
SEQUENTIAL = 'sequential'
SPLIT = 'split'
DESIGNS = (SEQUENTIAL, SPLIT)


@dataclass(frozen=True)
class Slot:
    osd: int
    arm: str


@dataclass(frozen=True)
class MeasurementPlan:
    """How a session's canary measures: its `plan`, its confirmation's `measurement_plan`."""
    design: str  # DESIGNS
    osd: int  # the canary (JSON: `osds`, a list of one)
    why: Optional[str] = None  # why this design, for the answers
    # a split's: group R's PGs, and whether R's OSDs share the canary's host
    reference_pgs: Optional[int] = None
    shared_host: Optional[bool] = None

    def __post_init__(self) -> None:
        if self.design not in DESIGNS or type(self.osd) is not int:  # not a bool either
            raise ValueError(f'not a measurement plan: {self!r}')

    def windows(self, order: Sequence[str]) -> List[Slot]:
        """A round's windows for the arms of `order`, in that order."""
        return [Slot(self.osd, arm) for arm in order]

    def to_json(self) -> Dict[str, Any]:
        """As stored: what is unset left out."""
        out = {k: v for k, v in vars(self).items() if v is not None}
        return dict(design=out.pop('design'), osds=[out.pop('osd')], **out)

    @classmethod
    def from_json(cls, saved: Dict[str, Any]) -> 'MeasurementPlan':
        """ValueError (TypeError, KeyError): not a plan this module makes."""
        (osd,) = saved['osds']
        return cls(**{k: v for k, v in saved.items() if k != 'osds'}, osd=osd)


def single(osd: int, c: Optional[ClientRecord]) -> MeasurementPlan:
    """One canary's plan: split when its client load has a group R, else
    sequential."""
    why = (c.design_why or None) if c else None
    if c is not None and c.design == SPLIT:
        return MeasurementPlan(SPLIT, osd, why, len(c.ref_seeds or []), bool(c.shared_host))
    return MeasurementPlan(SEQUENTIAL, osd, why)
