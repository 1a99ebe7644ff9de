"""The steady check, after the confirmation's rounds: steady windows of the
arms whose objective passed, their write-amp ratio, the verdict.
Design: doc/dev/session.rst, dev-session-confirmation (step 6)."""
import math
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .measurement_plan import BASELINE
from .paired_stats import log_ratio
from .perf_counters import ROCKSDB, Measurement, median, wal_scale, write_amps
from .record import Record

RECOMMENDED, OVER_BUDGET, UNKNOWN = 'recommended', 'over budget', 'write-amp unknown'
NOT_LOWER = 'write-amp not lower'  # the wear objective's: it did not save enough


def order(seed: Any, arm: str, pair: int) -> List[str]:
    """Pair `pair`'s order for `arm`'s check: the first drawn from the seed
    (replayable), each later one the one before reversed (ABBA), so that
    what a window leaves to the next (the LSM's shape) falls on both sides."""
    out = [BASELINE, arm]
    random.Random(f'{seed}/steady/{arm}').shuffle(out)
    return out if pair % 2 == 0 else out[::-1]


def _compacted(m: Measurement) -> bool:
    """The window saw its busiest family's compaction below L0 (counted, or
    without a count, not marked short)."""
    return m.l0_cycles >= 1 if m.l0_cycles is not None else not m.window_short


def saw_compaction(m: Measurement) -> bool:
    """The window counted from the end of a compaction below L0 (`settled`)
    to the end of another, and `wal_cover` >= 1.  Not `window_short`, which
    also counts min_flushes (one flush onto a nearly full L0 ends a cycle)."""
    return (m.settled is not None and _compacted(m) and m.wal_cover is not None
            and m.wal_cover >= 1)


def not_steady_why(m: Measurement) -> str:
    """What a window that saw no steady state lacked."""
    if m.settled is None:
        return ('no compaction below L0 after the first (which took in L0 files the '
                'options before wrote)' if _compacted(m) else 'no compaction below L0')
    if not _compacted(m):
        return 'no compaction below L0 after the first'
    if m.wal_cover is None:
        return 'its WAL bytes were not checked against its column families\' memtables'
    return (f'a compaction, but {m.wal_cover:.0%} of the WAL bytes its column families\' '
            'memtables take in through an L0 cycle')


@dataclass
class Pair:
    ratio: Optional[float]  # arm's steady write-amp / the baseline's (None: not counted)
    arm_seen: bool          # each side's window reached steady state (saw_compaction)
    baseline_seen: bool
    # the arm's objective / the baseline's over the two whole windows: what
    # the rounds judged, at steady state (reported; one pair is no measure)
    objective: Optional[float] = None
    # RocksDB bytes a day saved at the baseline window's client rate
    saved_per_day: Optional[float] = None
    # the ratio with one compaction more or less at either window's edges
    # (compaction_range; None: a side's compactions not counted by RocksDB)
    low: Optional[float] = None
    high: Optional[float] = None


def compaction_range(arm: Measurement, base: Measurement) -> Tuple[Optional[float],
                                                                   Optional[float]]:
    """The arm's steady write-amp over the baseline's, each window with one
    compaction (its `compaction_unit`) less or more: a window counted from one
    compaction of its busiest family to another may take in, or leave out,
    one of another family's (its edges), which at a few hundred MiB of WAL
    moves the ratio by several percent (doc/dev/session.rst)."""
    sides = []
    for m in (arm, base):
        if m.write_amp_by != ROCKSDB or m.compaction_unit is None or not m.client_bytes:
            return None, None
        one = m.compaction_unit / m.client_bytes
        sides.append((m.write_amp - min(one, (m.compaction_bytes or 0) / m.client_bytes),
                      m.write_amp + one))
    (a_low, a_high), (b_low, b_high) = sides
    k = wal_scale(arm, base)  # the baseline's at the arm's WAL per byte, as write_amps
    return (a_low / (b_high * k), a_high / (b_low * k)) if b_low > 0 else (None, None)


@dataclass
class SteadyVerdict(Record):
    arm: str
    verdict: str  # recommended | over budget | write-amp unknown | '' (pairs to come)
    why: str = ''
    ratio: Optional[float] = None  # the median over the pairs
    upper_bound: bool = False      # a baseline not steady: the ratio is no steady figure
    pairs: List[Pair] = field(default_factory=list)

    # the medians over the pairs of their figures
    @property
    def objective(self) -> Optional[float]: return self._median('objective')
    @property
    def saved_per_day(self) -> Optional[float]: return self._median('saved_per_day')
    @property
    def low(self) -> Optional[float]: return self._median('low')
    @property
    def high(self) -> Optional[float]: return self._median('high')

    def _median(self, key: str) -> Optional[float]:
        got = [getattr(p, key) for p in self.pairs if getattr(p, key) is not None]
        return median(got) if got else None

    def seen(self, side: str) -> Optional[bool]:
        """Whether every window of `side` (arm | baseline) reached steady state (None: no pair)."""
        return all(getattr(p, f'{side}_seen') for p in self.pairs) if self.pairs else None

    def to_json(self) -> Dict[str, Any]:
        """As confirm.ArmResult keeps it: the pairs, their medians, and
        whether each side's windows all saw steady state."""
        return {'verdict': self.verdict, 'why': self.why, 'ratio': self.ratio,
                'objective': self.objective, 'saved_per_day': self.saved_per_day,
                'range': [self.low, self.high],
                'upper_bound': self.upper_bound, 'pairs': [asdict(p) for p in self.pairs],
                'arm_seen': self.seen('arm'), 'baseline_seen': self.seen('baseline')}

    @classmethod
    def from_json(cls, saved: Any, arm: str = '') -> 'SteadyVerdict':
        """By hand, as its to_json: its JSON does not name its arm."""
        return cls(arm, saved['verdict'], saved['why'], saved['ratio'], saved['upper_bound'],
                   [Pair(**p) for p in saved['pairs']])


def pair_of(arm_m: Measurement, base_m: Measurement, objective: str = '') -> Pair:
    """A pair's figures; `objective`: the measurement's figure the rounds
    judged (its ratio taken as the rounds take theirs, paired_stats.log_ratio)."""
    a, b = write_amps(arm_m, base_m)
    log = log_ratio(getattr(arm_m, objective), getattr(base_m, objective)) if objective else None
    saved = None
    if a and b and base_m.seconds and base_m.client_bytes:
        saved = (b - a) * base_m.client_bytes / base_m.seconds * 86400.0
    low, high = compaction_range(arm_m, base_m)
    return Pair(a / b if a and b else None, saw_compaction(arm_m), saw_compaction(base_m),
                None if log is None else math.exp(log), saved, low, high)


def judge(arm: str, measured: Sequence[Tuple[Measurement, Measurement]],
          wanted: int, budget: float, limit: float, objective: str = '',
          goal: str = 'iops') -> SteadyVerdict:
    """The arm's steady verdict from its measured (arm's, baseline's) pairs:
    '' while fewer than `wanted` are in (unless one says write-amp unknown);
    recommended when the median ratio is at most `budget`."""
    pairs = [pair_of(a, b, objective) for a, b in measured]
    unseen = [a for p, (a, _) in zip(pairs, measured) if not p.arm_seen]
    if unseen or any(p.ratio is None for p in pairs):
        return SteadyVerdict(arm, UNKNOWN, (
            f'not steady within steady_window_limit {limit:.0f}s ({not_steady_why(unseen[0])}): '
            'its write-amp at steady state is unknown; raise steady_window_limit'
            if unseen else 'its steady window counted no write-amp'), pairs=pairs)
    if len(pairs) < wanted:
        return SteadyVerdict(arm, '', pairs=pairs)
    ratio = median([p.ratio for p in pairs if p.ratio is not None])
    upper = not all(p.baseline_seen for p in pairs)
    # no bound either way: a baseline window with no compaction counted is
    # low, one whose only compaction was its first may be high
    bound = (' (no bound: the baseline\'s window was not steady within '
             f'steady_window_limit {limit:.0f}s, so its write-amp there is not its '
             'steady one)' if upper else '')
    asked = (f'at most {budget:.2f}x, the wear it must save' if goal == 'wear'
             else f'the {budget:.2f}x budget')
    if ratio <= budget:
        why = f'steady write-amp {ratio:.2f}x the baseline\'s, within {asked}' + bound
        v = SteadyVerdict(arm, RECOMMENDED, why, ratio, upper, pairs)
        if v.high is not None and v.high > budget:
            v.why = (f'{why}; with a compaction in or out of either window, up to '
                     f'{v.high:.2f}x')
        return v
    return SteadyVerdict(arm, NOT_LOWER if goal == 'wear' else OVER_BUDGET,
                         f'steady write-amp {ratio:.2f}x the baseline\'s, over {asked}'
                         + bound, ratio, upper, pairs)
