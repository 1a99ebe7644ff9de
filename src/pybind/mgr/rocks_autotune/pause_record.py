"""A job's pause (machine.py's) as its record keeps it; JSON only in the store.  Apart
so that the records need not import the engine (which imports the store)."""
from dataclasses import dataclass
from typing import List, Optional


@dataclass(frozen=True)
class PauseRecord:
    """The pause in effect (machine.Pause): `on` (the job's word) and `osd`
    say which health check it raises (health.py), `reasons` why; since
    `since` (a new mgr's clock from its takeover)."""
    on: str
    reasons: List[str]
    osd: Optional[int]
    since: float
