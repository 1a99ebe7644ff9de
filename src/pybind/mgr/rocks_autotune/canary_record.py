"""A canary's part of a session, and a restart in flight: the records the
store keeps and the window, restart and canary code fill.  A module of its
own so that those need not import the store (which imports them)."""
from typing import Any, Dict, List, Optional, TypedDict


class _Restart(TypedDict):
    """A restart in flight (restart.py)."""
    purpose: str  # candidate | baseline | recovery | restore
    stage: str  # restart.Stage
    since: float
    up_from: Optional[int]
    expect: str  # the options the process must report
    ran: str  # or, going back, those it ran before ('' none): restart.Restarter.begin


class RestartRecord(_Restart, total=False):
    issued: float  # when the restart call was made
    # from the restart call to the process up on what was set: what the
    # options it left cost it (their WAL is replayed at start)
    up_seconds: float


class RestartState(TypedDict):
    """What restart.Restarter keeps in its owner's record (a session's
    canary's, a rollout's)."""
    restart: Optional[RestartRecord]
    manual: str  # why no orchestrator restarts the OSD, the admin does ('' one does)
    noout_ours: bool  # the noout on the OSD being restarted is ours
    running_dirty: bool  # the process may run a candidate


class _Canary(RestartState):
    # how to restore it, saved before its first change (the session's own
    # canary's are in the start record too, for a rescue)
    originals: Dict[str, Optional[str]]  # canary.Originals
    annexed: bool
    # the watched config that reached it at the start (canary.entries), None
    # when unknown (a rescued session); someone else's changes since
    config_seen: Optional[Dict[str, Dict[str, str]]]
    config_changes: List[str]
    last_applied: Optional[str]  # the last candidate string set at osd.N
    restarted: bool  # its restart of the phase in flight is done (up, or none needed)
    window: Optional[Dict[str, Any]]  # window.Window's running totals
    iops_estimate: Optional[float]


class CanaryRecord(_Canary, total=False):
    """One canary's part of a session (canary_osd.CanaryOsd), under
    `canaries` by its OSD id as a string (JSON's keys)."""
    # the client load's preconditioning of its DB (window.Precondition)
    precondition: Dict[str, Any]
