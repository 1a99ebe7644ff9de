"""What the confirmation rounds say: per round, log-ratios to the baseline; over
the rounds, the median and a Wilcoxon signed-rank interval (plain Python).
Design: doc/dev/internals.rst, dev-internals-confirmation."""
import itertools
import math
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from .perf_counters import median, write_amps
from .record import Record

LEVEL = 0.90
# the rounds a candidate needs before it may be dropped as futile
DROP_AFTER = 3
HIGHER, LOWER = 'higher', 'lower'  # which way the objective is better


def signed_rank_cdf(n: int) -> List[float]:
    """P(T+ <= t) for t = 0 .. n(n+1)/2 under the null, T+ the sum of the
    ranks of the positive differences among n (each sign a fair coin)."""
    counts = [1]  # counts[t]: subsets of {1..i} whose sum is t
    for i in range(1, n + 1):
        counts = [a + (counts[t - i] if t >= i else 0)
                  for t, a in enumerate(counts + [0] * i)]
    return [acc / float(2 ** n) for acc in itertools.accumulate(counts)]


def cut(n: int, level: float = LEVEL) -> int:
    """Walsh averages the interval leaves out at each end (0: n rounds
    cannot reach the level)."""
    # the largest c with P(T+ <= c - 1) <= alpha, one end's share of 1 - level
    return sum(1 for p in signed_rank_cdf(n) if p <= (1.0 - level) / 2.0 + 1e-12)


MIN_ROUNDS = next(n for n in itertools.count(1) if cut(n))  # the fewest with an interval: 5


def interval(xs: Sequence[float], level: float = LEVEL) -> Tuple[float, float]:
    """The signed-rank interval of the centre of `xs`, between two of its Walsh
    averages (pairs i <= j); (-inf, inf) when too few for the level."""
    c = cut(len(xs), level)
    if c == 0:
        return -math.inf, math.inf
    w = sorted((x + y) / 2.0 for i, x in enumerate(xs) for y in xs[i:])
    return w[c - 1], w[len(w) - c]


@dataclass
class Ratios:
    """A Summary as ratios (candidate / baseline), as shown; None for an open end."""
    median: Optional[float]
    low: Optional[float]
    high: Optional[float]
    rounds: int
    per_round: List[float]
    at: List[int]  # the round (1-based) of each, if known


def _exp(v: Optional[float]) -> Optional[float]:
    return None if v is None or not math.isfinite(v) else math.exp(v)


@dataclass
class Summary(Record):
    """One figure of one candidate over the rounds: the log-ratios to the
    baseline the verdicts read, and as ratios (shown; confirm.ArmResult keeps it)."""
    rounds: int
    median: Optional[float]  # None: no round
    low: float
    high: float
    ratio: Ratios

    @classmethod
    def of(cls, xs: Sequence[float], level: float = LEVEL,
           at: Sequence[int] = ()) -> 'Summary':
        low, high = interval(xs, level)
        mid = median(xs) if xs else None
        return cls(len(xs), mid, low, high, Ratios(
            _exp(mid), _exp(low), _exp(high), len(xs), [math.exp(v) for v in xs], list(at)))


def log_ratio(candidate: Any, baseline: Any) -> Optional[float]:
    """log(candidate / baseline); None unless both are positive finite numbers."""
    try:
        c, b = float(candidate), float(baseline)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(c) and math.isfinite(b) and c > 0 and b > 0):
        return None
    return math.log(c / b)


# arm -> its measurement in the round (or its read probe: confirm.read_rounds)
Round = Mapping[str, Any]


def paired_at(rounds: Sequence[Round], arm: str, baseline: str,
              key: str) -> List[Tuple[int, float]]:
    """(round index, the arm's log-ratio of `key` to that round's baseline)
    where both were measured (write-amp: in windows not short, as it counts
    only at steady state)."""
    out = []
    for i, r in enumerate(rounds):
        a, b = r.get(arm), r.get(baseline)
        if a is None or b is None or key == 'write_amp' and (a.window_short or b.window_short):
            continue
        v = log_ratio(*(write_amps(a, b) if key == 'write_amp'
                        else (getattr(a, key), getattr(b, key))))
        if v is not None:
            out.append((i, v))
    return out


def paired(rounds: Sequence[Round], arm: str, baseline: str, key: str) -> List[float]:
    return [v for _, v in paired_at(rounds, arm, baseline, key)]


def summary(rounds: Sequence[Round], arm: str, baseline: str, key: str,
            level: float = LEVEL) -> 'Summary':
    pa = paired_at(rounds, arm, baseline, key)
    return Summary.of([v for _, v in pa], level, at=[i + 1 for i, _ in pa])


def margin_log(margin: float) -> float:
    """A margin of 3% (0.03) in log terms: better by a factor of 1.03."""
    return math.log1p(margin)


def clears(s: Summary, direction: str, margin: float) -> bool:
    """The whole interval is better than the baseline by more than the margin."""
    m = margin_log(margin)
    return s.low > m if direction == HIGHER else s.high < -m


@dataclass
class ArmVerdict:
    arm: str
    objective: Summary
    write_amp: Summary
    kv_sync_lat: Summary
    # over the rounds: passes | too few rounds | below margin | dropped | failed;
    # reads slower (confirm.py); after the steady check: recommended | over budget
    # | write-amp unknown | write-amp not lower
    verdict: str
    why: str = ''


def judge(s_obj: Summary, direction: str, margin: float,
          level: float = LEVEL) -> Tuple[str, str]:
    """(verdict, why) on the objective alone: passes | too few rounds | below
    margin (write-amp is the steady check's)."""
    if not clears(s_obj, direction, margin):
        if not (math.isfinite(s_obj.low) and math.isfinite(s_obj.high)):
            return 'too few rounds', f'too few paired rounds for a {level:.0%} interval'
        return 'below margin', f'its interval does not clear the {margin:.0%} margin'
    return 'passes', ''


def futile(objective: Sequence[float], rounds_left: int, direction: str, margin: float,
           level: float = LEVEL) -> str:
    """Why the objective cannot clear the margin whatever the remaining
    rounds give ('' if it still can)."""
    best_obj = math.inf if direction == HIGHER else -math.inf
    obj = Summary.of(list(objective) + [best_obj] * rounds_left, level)
    if not clears(obj, direction, margin):
        return f'cannot clear the {margin:.0%} margin whatever its remaining rounds give'
    return ''


def verdict(rounds: Sequence[Round], arms: Sequence[str], baseline: str, objective: str,
            direction: str, margin: float,
            out: Optional[Mapping[str, Tuple[str, str]]] = None,
            level: float = LEVEL) -> Tuple[List[str], List[ArmVerdict]]:
    """The arms whose objective passes, best first (by median, then the
    interval's near end), and every arm's verdict.  `rounds`: per round,
    each arm's measurement (None or absent: none); `out`: arms taken out,
    as (dropped | failed, why)."""
    out = out or {}
    results = []
    for arm in arms:
        s_obj = summary(rounds, arm, baseline, objective, level)
        v, why = out[arm] if arm in out else judge(s_obj, direction, margin, level)
        results.append(ArmVerdict(arm, s_obj, summary(rounds, arm, baseline, 'write_amp', level),
                                  summary(rounds, arm, baseline, 'kv_sync_lat_ms', level), v, why))
    sign = 1.0 if direction == HIGHER else -1.0
    passing = sorted((r for r in results if r.verdict == 'passes'),
                     key=lambda r: (sign * (r.objective.median or 0.0),
                                    sign * (r.objective.low if sign > 0
                                            else r.objective.high)), reverse=True)
    return [r.arm for r in passing], results
