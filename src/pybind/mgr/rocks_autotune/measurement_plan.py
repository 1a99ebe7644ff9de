"""The measurement plan: which canary runs which arm in which window.

The design says how a round's arms (in its random order) become windows,
each a list of slots (an OSD and the arm it runs) in restart order; the
session restarts each slot's OSD onto its arm, then runs one warm-up and one
window read at every slot's OSD.

- sequential: one canary, every arm a window of its own.
- duet: two canaries X and Y serving the same PGs.  One window per
  finalist, the baseline on one OSD and the finalist on the other over the
  same seconds; the arms swap OSDs every round (crossover: X's and Y's
  difference cancels), and which restarts first alternates every two rounds
  (doc/bench/duet-ab-tiny.md).
- split: one canary, windowed as sequential, scored by C/R against a
  reference group of PGs (doc/dev/session.rst, dev-session-split).
"""
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from .workload import ClientRecord

BASELINE = 'baseline'
SEQUENTIAL = 'sequential'
DUET = 'duet'
SPLIT = 'split'
DESIGNS = (SEQUENTIAL, DUET, SPLIT)


@dataclass(frozen=True)
class Slot:
    osd: int
    arm: str


Window = List[Slot]


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


def duet(x: int, y: int) -> Dict[str, Any]:
    """The plan of two canaries measured over the same windows."""
    if x == y:
        raise ValueError('a duet needs two OSDs')
    return {'design': DUET, 'osds': [x, y]}


def check(plan: Any) -> None:
    """ValueError unless `plan` is a plan record this module makes."""
    if not isinstance(plan, dict) or plan.get('design') not in DESIGNS:
        raise ValueError(f'not a measurement plan: {plan!r}')
    osds = plan.get('osds')
    want = 2 if plan['design'] == DUET else 1
    if not (isinstance(osds, list) and len(osds) == want and len(set(osds)) == want
            and all(isinstance(o, int) and not isinstance(o, bool) for o in osds)):
        raise ValueError(f'a {plan["design"]} plan needs {want} distinct OSD ids, not {osds!r}')


def windows(plan: Dict[str, Any], order: Sequence[str], r: int) -> List[Window]:
    """Round `r`'s windows, in the order they run, for the arms of `order`
    (the baseline and the finalists still measured, in the round's order)."""
    check(plan)
    if plan['design'] != DUET:
        (osd,) = plan['osds']
        return [[Slot(osd, arm)] for arm in order]
    x, y = plan['osds']
    out: List[Window] = []
    for arm in order:
        if arm == BASELINE:
            continue
        on_x, on_y = (BASELINE, arm) if r % 2 == 0 else (arm, BASELINE)
        slots = [Slot(x, on_x), Slot(y, on_y)]
        out.append(slots if (r // 2) % 2 == 0 else slots[::-1])
    return out
