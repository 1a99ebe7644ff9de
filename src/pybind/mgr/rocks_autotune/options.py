"""The module's options, declared once, with the session or rollout setting each
feeds. Design: doc/dev/internals.rst, dev-internals-module."""
import math
from dataclasses import dataclass, fields
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

# the confirmation's largest settings: its record (a figure per candidate and
# round) stays well inside one store value, and its time within reason
MAX_CONFIRM_CANDIDATES = 5
MAX_CONFIRM_ROUNDS = 15


@dataclass(frozen=True)
class Opt:
    name: str
    type: str  # the mgr Option's: secs | int | float | size | str
    default: Any
    desc: str
    min: Optional[float] = None
    max: Optional[float] = None
    enum: Optional[Sequence[str]] = None
    setting: Optional[str] = None  # the field it feeds (None: its name; '': none)
    scale: int = 1  # a number feeds the field times this (MiB to bytes)
    listed: bool = False  # a str option that is a comma-separated list (a tuple field)

    @property
    def field(self) -> str:
        return self.name if self.setting is None else self.setting

    def option_kwargs(self) -> Dict[str, Any]:
        kw: Dict[str, Any] = {'type': self.type, 'default': self.default, 'desc': self.desc}
        kw.update({k: getattr(self, k) for k in ('min', 'max') if getattr(self, k) is not None})
        if self.enum is not None:
            kw['enum_allowed'] = list(self.enum)
        return kw

    def value(self, raw: Any) -> Any:
        """The settings field's value of the option's `raw` one; ValueError if it is not one."""
        if self.type == 'str':
            v = '' if raw is None else str(raw)
            if self.listed:
                return tuple(c.strip() for c in v.split(',') if c.strip())
            return v
        try:
            number = float(raw) if self.type in ('secs', 'float') else int(raw)
        except (TypeError, ValueError):
            raise ValueError(f'{self.name} must be a number, not {raw!r}')
        return number * self.scale

    def check(self, v: Any) -> None:
        """ValueError if the field's value `v` is out of this option's bounds."""
        if self.type in ('secs', 'int', 'float', 'size'):
            n = (v / self.scale if isinstance(v, (int, float)) and not isinstance(v, bool)
                 else None)
            whole = self.type in ('int', 'size')
            if n is None or not math.isfinite(n) or (whole and not isinstance(v, int)):
                raise ValueError(f'{self.name} must be {"an integer" if whole else "a number"}, '
                                 f'not {v!r}')
            if (self.min is not None and n < self.min) or (self.max is not None and n > self.max):
                raise ValueError(f'{self.name} must be {bounds(self)}, not {number(n)}')
        elif self.enum is not None and v not in self.enum:
            raise ValueError(f'{self.name} must be one of {", ".join(self.enum)}, not {v!r}')


def number(x: float) -> str:
    """A bound or value as the admin typed it: whole numbers in full."""
    return str(int(x)) if float(x).is_integer() else f'{x:g}'


def bounds(o: Opt) -> str:
    if o.min is not None and o.max is not None:
        return f'between {number(o.min)} and {number(o.max)}'
    return (f'at least {number(o.min)}' if o.min is not None
            else f'at most {number(o.max)}')  # type: ignore[arg-type]


OPTIONS: Tuple[Opt, ...] = (
    Opt('sleep_interval', type='secs', default=60, min=1, setting='',
        desc='how often the loop wakes when no session is running'),
    Opt('warmup', type='secs', default=10, min=0,
        desc='workload run after each restart before the window opens'),
    # in pairs: each pair is an A/A measurement of the noise (power.py)
    Opt('baseline_runs', type='int', default=4, min=2, max=10,
        desc='measurements of the current options before any candidate; each two '
             'consecutive ones measure the noise the confirmation will face'),
    Opt('min_flushes', type='float', default=2.0, min=0,
        desc='memtable flushes a window must cover; shorter windows are extended '
             'and, if still short, marked'),
    # 2.0's 60-s confirmation windows put a default session at 49 min on the lab,
    # over the 45 it must fit (doc/dev/session.rst, "The confirmation")
    Opt('max_window_factor', type='float', default=1.5, min=1,
        desc='a window may be extended up to this many times --duration'),
    Opt('steady_window_limit', type='secs', default=3600, min=1,
        desc='after the confirmation\'s rounds (short windows, judged on the '
             'objective), the steady check measures the baseline and each passing '
             'candidate in steady windows: each lasts until its config\'s busiest RocksDB '
             'column family went through a compaction below L0 (write-amp at steady '
             'state), at most this long; a candidate whose window saw none is not '
             'recommended (write-amp unknown), and so the search proposes only '
             'candidates whose windows can be, at the baseline\'s WAL rate.  More for a '
             'slow cluster (status says what a window needs)'),
    Opt('precondition_limit', type='secs', default=1800, min=1,
        desc='the client workload first writes its objects end to end, overwrites '
             'each 4 KiB block of them once, and goes on until the canary\'s busiest '
             'column family holds data below L0, at most this long'),
    Opt('restart_timeout', type='secs', default=300, min=10,
        desc='time for a restarted OSD (the canary, an OSD of a rollout) to come '
             'back up and PGs to be active+clean'),
    # an OSD that replays minutes of WAL at every restart is a cost an admin
    # pays at each upgrade and failure; twice the lab's ~60-s restarts
    Opt('restart_limit', type='secs', default=120, min=10,
        desc='a candidate after which the canary took longer than this to restart '
             '(median over the confirmation\'s rounds: the WAL its memtables left is '
             'replayed at start) is not recommended'),
    Opt('manual_restart_timeout', type='secs', default=3600, min=10,
        desc='as restart_timeout, when the admin restarts the OSD by hand'),
    Opt('unhealthy_timeout', type='secs', default=1800, min=10,
        desc='a session paused by an unhealthy cluster aborts after this long; a '
             'rollout held back this long stops'),
    Opt('on_failure', type='str', default='continue', enum=('continue', 'stop'),
        desc='after a candidate breaks the canary (restored): go on or stop'),
    Opt('max_memtable_mib', type='int', default=0, min=0, setting='max_memtable_bytes',
        scale=1 << 20,
        desc='cap on the memtable memory of all the canary\'s column families '
             '(max_write_buffer_number x write_buffer_size each); 0: what the '
             'release\'s default bluestore_rocksdb_options may use'),
    Opt('compressions', type='str', default='none,lz4,snappy', listed=True,
        desc='RocksDB compressions to try (those the OSDs were built with)'),
    Opt('bench_object_size', type='size', default=4 << 20, min=65536,
        desc='size of the objects osd bench writes into'),
    Opt('bench_object_num', type='int', default=16, min=1, max=1024,
        desc='number of objects osd bench writes into'),
    Opt('bench_chunk_seconds', type='float', default=5.0, min=0.5,
        desc='length of one chunk of the client load or one osd bench call; stop '
             'and abort are seen between chunks'),
    Opt('client_pool', type='str', default='',
        desc='pool the client workload writes its objects to, in its own namespace '
             '(rocks_autotune); empty: the replicated pool in which the canary serves '
             'the most PGs'),
    Opt('client_space', type='size', default=4 << 30, min=1 << 20,
        desc='the client workload\'s keyspace: it writes 4 KiB at random offsets of '
             'this many bytes of objects (per replica; a session refuses to start where '
             'they would take an OSD past nearfull or the pool to its quota), all removed '
             'when the session ends'),
    Opt('client_object_size', type='size', default=4 << 20, min=65536,
        desc='size of the client workload\'s objects (client_space / this many), an '
             'RBD image\'s by default'),
    # deep, as an RBD client's cache keeps it: on the lab 512 wrote the
    # canary's WAL 2.0-2.5x as fast as 16 (doc/bench/client-depth.md), and
    # every steady window is bound by that rate
    Opt('client_threads', type='int', default=512, min=1, max=1024,
        desc='client workload writes in flight (asynchronous, per group)'),
    # split cuts the client's per-round A/A noise by three on the lab
    # (doc/bench/split-aa.md); it needs PGs of the pool without the canary
    Opt('measurement_design', type='str', default='auto',
        enum=('auto', 'split', 'sequential'),
        desc='how the client workload is measured: split also writes as many objects '
             'in PGs of the pool whose up set leaves the canary out, over the same '
             'windows, and judges C/R (the canary\'s PGs\' IOPS over theirs); '
             'sequential writes the canary\'s PGs alone; auto: split where the pool '
             'has enough PGs without the canary, else sequential (other workloads: '
             'sequential)'),
    # numpy's RandomState, which the optimizer seeds, takes 0 .. 2**32 - 1
    Opt('seed', type='int', default=0, min=0, max=2 ** 32 - 1,
        desc='random seed of the optimizer'),
    Opt('confirm_candidates', type='int', default=3, min=1,
        max=MAX_CONFIRM_CANDIDATES,
        desc='after the search, this many candidates (the best by the model\'s '
             'posterior mean) are confirmed against the baseline'),
    Opt('confirm_rounds', type='int', default=5, min=1, max=MAX_CONFIRM_ROUNDS,
        desc='confirmation rounds at most (each measures the candidates and the '
             'baseline in a fresh random order; a look after each from the fifth ends '
             'a candidate that passes); below 5 no candidate can be recommended'),
    Opt('steady_pairs', type='int', default=1, min=1, max=3,
        desc='pairs of steady windows (the baseline and the candidate, the first in a '
             'random order, each later one reversed) in the steady check of each '
             'candidate whose objective passed; its write-amp ratio is the median over '
             'the pairs'),
    Opt('read_probe', type='secs', default=20, min=0,
        desc='after each confirmation round\'s window of the client workload, the '
             'canary\'s reads are timed this long (4 KiB at random offsets of its '
             'objects): compression and more L0 files can slow reads; 0: no probe'),
    Opt('read_guard', type='float', default=0.25, min=0, max=5,
        desc='a candidate whose read latency over the rounds\' probes is shown more than '
             '1 + this times the baseline\'s (its mean\'s whole interval above it) is '
             'not recommended; the answer says what slowdown the rounds could show'),
    Opt('objective', type='str', default='iops', enum=('iops', 'wear'),
        desc='what a session optimizes (start --objective overrides it): iops, the '
             'client\'s IOPS, its write-amp within --budget; wear, the fewest RocksDB '
             'bytes written per client byte at steady state (flash wear), its IOPS no '
             'worse than guard'),
    Opt('guard', type='float', default=0.03, min=0, max=0.5,
        desc='under the wear objective, a candidate is recommended only if the low end '
             'of its IOPS interval over the confirmation\'s rounds is at least 1 - guard '
             'of the baseline\'s'),
    Opt('confirm_margin', type='float', default=0.03, min=0, max=1,
        desc='a candidate is recommended only if its whole interval (90%, wider '
             'when the confirmation looks after several rounds) is better than the '
             'baseline by this fraction (under the wear objective: its steady write-amp '
             'lower by this fraction)'),
    Opt('detect', type='float', default=0.10, min=0.01, max=1,
        desc='the gain the confirmation is planned for: status says how many rounds '
             'confirm it 9 times in 10 at the noise the baseline runs measured, and '
             'what the planned rounds can confirm'),
    Opt('inject_candidate_options', type='str', default='', setting='inject_options',
        desc='fault-injection test hook: appended to every candidate option string '
             'of sessions started from now on; leave empty'),
)


BY_FIELD: Dict[str, Opt] = {o.field: o for o in OPTIONS if o.field}


def default(field: str) -> Any:
    o = BY_FIELD[field]
    return o.value(o.default)


def read(cls: Any, get: Callable[[str], Any]) -> Any:
    """A `cls` (Settings, RolloutSettings) from the options' values (`get`
    by name), checked; ValueError naming the first one that will not do."""
    names = {f.name for f in fields(cls)}
    settings = cls(**{o.field: o.value(get(o.name)) for o in OPTIONS if o.field in names})
    check(settings)
    return settings


def check(settings: Any) -> None:
    """ValueError naming the first field of `settings` out of its option's bounds."""
    names = {f.name for f in fields(settings)}
    for o in OPTIONS:
        if o.field in names:
            o.check(getattr(settings, o.field))
