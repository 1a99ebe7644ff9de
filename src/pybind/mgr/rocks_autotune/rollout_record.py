"""A rollout's record: its plan, its OSDs in restart order, where it stands.
Design: doc/dev/internals.rst, dev-internals-store."""
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

from .canary_record import RestartRecord
from .options import default
from .pause_record import PauseRecord
from .record import Record, encode, make

ROLLOUT_VERSION = 6
# the most OSDs a batch restarts together (--max-parallel): the head keeps a
# record of each, and must stay small
MAX_PARALLEL = 100
# who (osd/class:ssd, osd.3) -> option -> value (None: none set there)
Masks = Dict[str, Dict[str, Optional[str]]]


@dataclass
class RolloutSettings:
    """The module options a rollout runs with (declared in options.py)."""
    restart_timeout: float = default('restart_timeout')
    manual_restart_timeout: float = default('manual_restart_timeout')
    unhealthy_timeout: float = default('unhealthy_timeout')
    poll: float = 2.0  # not an option: how often a step waiting on the cluster looks again


@dataclass
class RolloutOsd:
    """An OSD of a rollout, in restart order."""
    osd: int
    host: str
    status: str = 'pending'  # | restarting | done | failed | skipped (gone, or not ours to change)
    error: str = ''
    put_back: str = ''  # a failed OSD's return to its prior options: '' | done | failed
    # before the rollout changed anything: what the mon gave it (options,
    # annex), and what its process ran (rollout_plan.RUNNING)
    before: Dict[str, str] = field(default_factory=dict)
    back_to: str = ''  # revert: what it ran before the apply ('' unknown, or an apply)
    changed: bool = False  # its osd.N holds what the rollout set (written just before its restart)


@dataclass
class RolloutPlan:
    """What `apply` or `revert` will do (rollout_plan.py), as --dry-run shows it."""
    kind: str  # apply | revert
    options: Optional[str]  # apply: the options rolled out
    source: str  # where they come from
    target: str  # the OSDs, in words
    sets: Masks  # what is set at each mask (None: removed), in restart order
    priors: Masks  # what was there before, at every mask the rollout touches
    notes: List[str]  # why the plan sets its values where it does
    checks: List[str]  # the restart gate's checks, and what they say at planning
    blockers: List[str]  # what holds its first restart back at planning
    osds: List[RolloutOsd]
    of: Optional[str]  # revert: the id of the rollout it undoes
    force: bool  # others' health checks do not hold restarts back (--force)
    allow_single_copy: bool  # restarts may leave PGs on one copy (--allow-single-copy)
    since: float  # crashes of its OSDs from then on are its own (the apply's start)
    crash_osds: List[int]  # those OSDs: the apply's (a revert's too), whose crashes it caused
    max_parallel: int  # the most OSDs restarted together (--max-parallel)

    def to_json(self) -> Dict[str, Any]:
        """As `--dry-run -f json` shows it; max_parallel only when over 1."""
        return {f.name: encode(getattr(self, f.name)) for f in fields(RolloutPlan)
                if f.name != 'max_parallel' or self.max_parallel != 1}


@dataclass
class InFlight(Record):
    """An OSD of the batch in flight: its index in `osds`, and its restart (restart.py)."""
    i: int
    restart: Optional[RestartRecord] = None
    manual: str = ''
    noout_ours: bool = False
    running_dirty: bool = False  # never a rollout's (a candidate's): the protocol's


@dataclass
class RolloutRecord(RolloutPlan, Record):
    """A persisted rollout (ROLLOUT_VERSION): its plan and where it stands."""
    version: int
    id: str
    state: str = 'running'  # | done | aborted | failed
    phase: str = 'check'  # rollout.Phase
    message: str = 'starting'
    error: str = ''
    abort: bool = False  # abort asked: stop after the OSDs in flight
    changed: bool = False  # the config has been (or is being) changed
    batch: List[InFlight] = field(default_factory=list)  # the OSDs in flight, in restart order
    started: float = 0.0
    phase_started: float = 0.0
    ended: Optional[float] = None
    pause: Optional[PauseRecord] = None  # the pause in effect (machine.Pause)
    cluster_errors: int = 0
    settings: RolloutSettings = field(default_factory=RolloutSettings)

    to_json = Record.to_json  # as the store keeps it (its head and OSD chunks), not the plan's

    @classmethod
    def from_json(cls, saved: Any) -> 'RolloutRecord':
        """ValueError: not a record this code wrote (the store checks its version)."""
        r = make(cls, saved)
        if not all(0 <= f.i < len(r.osds) for f in r.batch):
            raise ValueError('rollout state has no such OSD in flight')
        return r
