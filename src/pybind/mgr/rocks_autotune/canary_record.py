"""The records of a canary's part of a session and of a restart in flight,
each changed by its one owner; JSON only in the store.  A module of its own
so that their owners need not import the store (which imports them)."""
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol

from .record import Record


@dataclass
class RestartRecord(Record):
    """A restart in flight (restart.Restarter's)."""
    # a canary's: candidate | baseline | recovery | restore; a rollout's: apply | revert | put_back
    purpose: str
    stage: str  # restart.Stage
    since: float
    up_from: Optional[int]
    expect: str  # the options the process must report
    ran: str  # or, going back, those it ran before ('' none): restart.Restarter.begin
    issued: Optional[float] = None  # when the restart call was made
    # from the restart call to the process up on what was set: what the
    # options it left cost it (their WAL is replayed at start)
    up_seconds: Optional[float] = None
    OMIT_NONE = ('issued', 'up_seconds')  # the clocks not yet read


class RestartState(Protocol):
    """The fields restart.Restarter sets in its owner's record (a session's
    canary's; a rollout's, one per OSD of its batch in flight)."""
    restart: Optional[RestartRecord]
    manual: str  # why no orchestrator restarts the OSD, the admin does ('' one does)
    noout_ours: bool  # the noout on the OSD being restarted is ours
    running_dirty: bool  # the process may run a candidate


@dataclass
class WindowRecord(Record):
    """A window's running totals (window.Window's)."""
    start: float
    bytes: int = 0  # the workload's
    bench_seconds: float = 0.0
    # the counters at its start: None in the warm-up, which has no kv_before either
    before: Optional[Dict[str, Any]] = None
    kv_before: Optional[Dict[str, Any]] = None  # RocksDB's (None: it gave none)
    reference_bytes: Optional[int] = None  # a split load's group R's, once it wrote
    # a steady window: the seconds it ran before it counted (Window.measure)
    settled: Optional[float] = None
    OMIT_NONE = ('kv_before', 'reference_bytes', 'settled')


@dataclass
class PreconditionRecord(Record):
    """The client load's preconditioning of the canary's DB (window.Precondition's)."""
    filled: int = 0  # objects written whole
    fill_bytes: int = 0
    fill_seconds: float = 0.0
    overwritten: int = 0  # blocks overwritten
    bytes: int = 0
    seconds: float = 0.0
    done: bool = False
    steady: Optional[bool] = None  # files below L0 in the busiest family (None: unknown)
    why: str = ''  # why it is done without a steady DB
    shape: Optional[Dict[str, Any]] = None  # RocksDB's levels by column family
    busiest_cf: str = ''
    flushes: int = 0
    compactions: int = 0
    kv_bytes: Optional[Dict[str, int]] = None  # RocksDB's bytes over the run
    kv_start: Optional[Dict[str, Any]] = None  # RocksDB's counts at its (re)start
    kv_since: float = 0.0  # seconds of load (fill included) at kv_start
    # the load after the overwrite pass, as the windows drive it (group R
    # beside C): RocksDB's WAL bytes and its seconds
    drive_wal: int = 0
    drive_seconds: float = 0.0

    def wal_rate(self) -> Optional[float]:
        """RocksDB's WAL bytes a second since its counts began (None: none counted)."""
        wal = (self.kv_bytes or {}).get('wal', 0)
        seconds = self.seconds + self.fill_seconds - self.kv_since
        return wal / seconds if wal > 0 and seconds > 0 else None

    def window_rate(self, groups: int, after: float) -> Optional[float]:
        """The WAL rate a window's load gives, before any window: the drive's
        after `after` s of it; before, wal_rate's over the `groups` the windows
        write (the overwrite pass writes C alone, at 2.5x a split window's
        rate on the lab: defaults runs 8 and iops 6)."""
        if self.drive_seconds >= after and self.drive_wal > 0:
            return self.drive_wal / self.drive_seconds
        rate = self.wal_rate()
        return None if rate is None else rate / max(1, groups)


@dataclass
class CanaryRecord(Record):
    """The canary's part of a session (canary_osd.CanaryOsd), its `canary`."""
    # how to restore it, saved before its first change (in the start record
    # too, for a rescue)
    originals: Dict[str, Optional[str]]  # canary.Originals
    annexed: bool
    # the watched config that reached it at the start (canary.entries), None
    # when unknown (a rescued session); someone else's changes since
    config_seen: Optional[Dict[str, Dict[str, str]]]
    config_changes: List[str] = field(default_factory=list)
    last_applied: Optional[str] = None  # the last candidate string set at osd.N
    # RestartState's
    restart: Optional[RestartRecord] = None
    manual: str = ''
    noout_ours: bool = False
    running_dirty: bool = False
    restarted: bool = True  # its restart of the phase in flight is done (up, or none needed)
    window: Optional[WindowRecord] = None
    iops_estimate: Optional[float] = None
    # not in its JSON until begun
    precondition: Optional[PreconditionRecord] = None
    OMIT_NONE = ('precondition',)
