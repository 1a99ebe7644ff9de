"""A job's pause (machine.py's) as its record keeps it; JSON only in the store.  Apart
so that the records need not import the engine (which imports the store)."""
from dataclasses import dataclass
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class PauseRecord:
    """The pause in effect (machine.Pause): `on` (the job's word) and `osd`
    say which health check it raises (health.py), `reasons` why; since
    `since` (a new mgr's clock from its takeover)."""
    on: str
    reasons: List[str]
    osd: Optional[int]
    since: float


def pause_to_json(head: Dict[str, Any]) -> Dict[str, Any]:
    """A head's fields as the store keeps them: its pause as `paused_since`,
    then `pause` {on, reasons, osd} (each None while there is none)."""
    out: Dict[str, Any] = {}
    for k, v in head.items():
        if k == 'pause':
            out['paused_since'] = None if v is None else v.since
            v = None if v is None else {'on': v.on, 'reasons': v.reasons, 'osd': v.osd}
        out[k] = v
    return out


def pause_from_json(saved: Dict[str, Any]) -> Dict[str, Any]:
    """A stored head's fields with its pause a PauseRecord (TypeError: malformed)."""
    out = dict(saved)
    since, p = out.pop('paused_since'), out['pause']
    out['pause'] = None if p is None else PauseRecord(since=float(since), **p)
    return out
