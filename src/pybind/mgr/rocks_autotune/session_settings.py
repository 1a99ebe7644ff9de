"""What a tuning session is started with (Params, the command's arguments)
and runs with (Settings), kept in its record at its start."""
import math
from dataclasses import dataclass, fields
from typing import Any, Dict, Optional, Tuple

from . import options
from .options import default
from .rocksdb_options import COMPRESSIONS
from .workload import DEFAULT_WORKLOAD, RENAMED, WORKLOADS

# what a session optimizes (options.py, `objective`)
IOPS, WEAR = 'iops', 'wear'

# the client workload's objects: their names are found (hashing names until
# enough land in the canary's PGs) and held in the mgr
MAX_CLIENT_OBJECTS = 65536


@dataclass
class Settings:
    """Module options that shape a session (declared once, in options.py)."""
    warmup: float = default('warmup')
    baseline_runs: int = default('baseline_runs')
    min_flushes: float = default('min_flushes')
    max_window_factor: float = default('max_window_factor')
    steady_window_limit: float = default('steady_window_limit')
    precondition_limit: float = default('precondition_limit')
    restart_timeout: float = default('restart_timeout')
    manual_restart_timeout: float = default('manual_restart_timeout')
    restart_limit: float = default('restart_limit')
    unhealthy_timeout: float = default('unhealthy_timeout')
    on_failure: str = default('on_failure')
    max_memtable_bytes: int = default('max_memtable_bytes')
    compressions: Tuple[str, ...] = default('compressions')
    bench_object_size: int = default('bench_object_size')
    bench_object_num: int = default('bench_object_num')
    bench_chunk_seconds: float = default('bench_chunk_seconds')
    client_pool: str = default('client_pool')
    client_space: int = default('client_space')
    client_object_size: int = default('client_object_size')
    client_threads: int = default('client_threads')
    measurement_design: str = default('measurement_design')
    seed: int = default('seed')
    confirm_candidates: int = default('confirm_candidates')
    confirm_rounds: int = default('confirm_rounds')
    confirm_margin: float = default('confirm_margin')
    steady_pairs: int = default('steady_pairs')
    read_probe: float = default('read_probe')
    read_guard: float = default('read_guard')
    objective: str = default('objective')
    guard: float = default('guard')
    detect: float = default('detect')
    inject_options: str = default('inject_options')  # test hook: appended to every candidate
    poll: float = 2.0  # not an option: how often a step waiting on the cluster looks again

    @property
    def wear(self) -> bool:
        return self.objective == WEAR

    def rounds_margin(self) -> float:
        """What the rounds ask of a candidate's objective: to beat the
        baseline's by confirm_margin, or (wear) to lose at most guard."""
        return -self.guard if self.wear else self.confirm_margin

    def rounds_detect(self) -> float:
        """The gain the rounds are planned to confirm 9 times in 10 (wear:
        none: a candidate as fast as the baseline must pass the guard)."""
        return 0.0 if self.wear else self.detect

    def validate(self) -> None:
        """ValueError naming the first setting a session cannot run with."""
        unknown = [c for c in self.compressions if c not in COMPRESSIONS]
        if unknown or not self.compressions:
            raise ValueError(f'compressions must be a non-empty list of '
                             f'{", ".join(COMPRESSIONS)}, not {",".join(self.compressions)!r}')
        options.check(self)
        if not (isinstance(self.poll, (int, float)) and math.isfinite(self.poll)
                and self.poll >= 0):
            raise ValueError(f'poll must be a non-negative number, not {self.poll!r}')
        if self.client_object_size > self.client_space:
            raise ValueError('client_object_size must be at most client_space')
        if self.client_space // self.client_object_size > MAX_CLIENT_OBJECTS:
            raise ValueError(f'client_space / client_object_size must be at most '
                             f'{MAX_CLIENT_OBJECTS} objects')

    @classmethod
    def from_dict(cls, d: Any) -> 'Settings':
        """The settings a session saved at its start; ValueError when malformed."""
        names = {f.name for f in fields(cls)}
        try:
            kwargs: Dict[str, Any] = {k: (tuple(v) if k == 'compressions' else v)
                                      for k, v in d.items() if k in names}
            st = cls(**kwargs)
            st.validate()  # a value of the wrong type raises TypeError there
        except (TypeError, AttributeError) as e:  # AttributeError: not a dict
            raise ValueError(f'saved settings are malformed: {e}')
        return st


class StartRefused(Exception):
    """`start` cannot go ahead; the message says why.  Nothing was changed."""


@dataclass
class Params:
    """What `ceph rocks-autotune start` asks for."""
    osd: Optional[int] = None
    trials: int = 12
    budget: float = 1.10
    workload: str = DEFAULT_WORKLOAD
    duration: float = 30.0
    force: bool = False
    allow_single_copy: bool = False

    def validate(self) -> None:
        if self.osd is not None and self.osd < 0:
            raise StartRefused(f'--osd must be a non-negative OSD id, not {self.osd}')
        if not 1 <= self.trials <= 500:
            raise StartRefused(f'--trials must be between 1 and 500, not {self.trials}')
        if not (math.isfinite(self.budget) and 1.0 <= self.budget <= 10.0):
            raise StartRefused(f'--budget must be between 1.0 and 10.0 (a multiple of the '
                               f'baseline write amplification), not {self.budget}')
        if self.workload not in WORKLOADS:
            raise StartRefused(f'--workload must be one of {", ".join(WORKLOADS)}, '
                               f'not {self.workload!r}' + (
                                   f' (now named {RENAMED[self.workload]})'
                                   if self.workload in RENAMED else ''))
        if not (math.isfinite(self.duration) and 2 <= self.duration <= 3600):
            raise StartRefused(f'--duration must be between 2 and 3600 seconds, '
                               f'not {self.duration}')
