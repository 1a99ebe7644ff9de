"""A session's measurement window as kept; apart so that confirm.py need not import the store."""
from dataclasses import dataclass, field
from typing import List, Optional

from .perf_counters import Measurement
from .record import Record
from .space import Candidate
from .workload import ReadProbe


@dataclass
class Trial(Record):
    """A window of a session (`trials`, or `current` in flight); JSON only in the store."""
    index: int
    kind: str  # baseline | candidate | confirm; recovery while the canary is restored
    candidate: Candidate  # the tuned options it ran (a baseline: the current ones)
    options: str
    verdict: str = ''  # baseline | feasible | infeasible | measured (confirm) | failed
    measurement: Optional[Measurement] = None
    score: Optional[float] = None
    told: Optional[float] = None  # what the optimizer was told; None = failed
    error: str = ''
    started: float = 0.0
    seconds: float = 0.0
    crashes: List[str] = field(default_factory=list)  # a failed trial's crashes of the canary
    round: Optional[int] = None  # a confirmation measurement's round (0-based) and arm
    arm: str = ''
    osd: Optional[int] = None  # the canary that ran it (None: recorded before it was kept)
    steady: str = ''  # a steady-check window: the arm checked (`round` is then the pair)
    restart_seconds: Optional[float] = None  # its canary's restart onto it (confirm.py)
    # a steady window's read probe of its canary, after the window (client load)
    read_probe: Optional[ReadProbe] = None
