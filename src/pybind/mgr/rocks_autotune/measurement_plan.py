"""The measurement plan: which canary runs which arm in which window.

A round's arms (in its random order) become windows, each a slot (the
canary's OSD and the arm it runs); the session restarts the canary onto the
slot's arm, then runs one warm-up and one window read there.

- sequential: every arm a window of its own.
- split: windowed as sequential, scored by C/R against a reference group of
  PGs (doc/dev/session.rst, dev-session-split).

(A duet, two canaries measured over the same windows, was measured and not
taken: git show 543f784:doc/bench/duet-ab-tiny.md.)
"""
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


def sequential(osd: int) -> Dict[str, Any]:
    """The plan of one canary."""
    return {'design': SEQUENTIAL, 'osds': [osd]}


def single(osd: int, c: Optional[ClientRecord]) -> Dict[str, Any]:
    """The plan of one canary: split when its client load has a group R
    (the session's `client` record says so), else sequential; why, and for
    a split whether R's OSDs share the canary's host, for the answers."""
    plan: Dict[str, Any] = {'design': SEQUENTIAL, 'osds': [osd]}
    if c is not None and c.design_why:
        plan['why'] = c.design_why
    if c is not None and c.design == SPLIT:
        plan.update(design=SPLIT, reference_pgs=len(c.ref_seeds or []),
                    shared_host=bool(c.shared_host))
    return plan


def check(plan: Any) -> None:
    """ValueError unless `plan` is a plan record this module makes."""
    if not isinstance(plan, dict) or plan.get('design') not in DESIGNS:
        raise ValueError(f'not a measurement plan: {plan!r}')
    osds = plan.get('osds')
    if not (isinstance(osds, list) and len(osds) == 1 and isinstance(osds[0], int)
            and not isinstance(osds[0], bool)):
        raise ValueError(f'a {plan["design"]} plan needs 1 OSD id, not {osds!r}')


def windows(plan: Dict[str, Any], order: Sequence[str]) -> List[Slot]:
    """A round's windows, in the order they run, for the arms of `order`
    (the baseline and the finalists still measured, in the round's order)."""
    check(plan)
    (osd,) = plan['osds']
    return [Slot(osd, arm) for arm in order]
