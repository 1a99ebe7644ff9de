"""What a confirmation can see at a given noise: its power, the smallest gain it
confirms, the rounds a gain needs, and the one level all its looks use.
Design: doc/dev/internals.rst, dev-internals-confirmation."""
import bisect
import math
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, List, Optional, Sequence, Tuple

from .paired_stats import (DROP_AFTER, LEVEL, MIN_ROUNDS, cut, log_ratio, margin_log,
                           signed_rank_cdf)
from .record import Record

POWER = 0.90  # what "can confirm" means: 9 times in 10
ALPHA = (1.0 - LEVEL) / 2.0  # one side of the 90% interval: a candidate at the margin passes <= 5%
PLAN_CONFIDENCE = 0.80  # the A/A sd's upper confidence limit a plan takes
SIMS = 8000
STOP_SIMS = 400  # a forecast's: its mean round within ~0.1 round
SEED = 20261126


def _draws(rounds: int) -> Iterator[List[float]]:
    """SIMS seeded sequences of `rounds` standard normal rounds (redrawn, not kept)."""
    rng = random.Random(f'{SEED}/{rounds}')
    for _ in range(SIMS):
        yield [rng.gauss(0.0, 1.0) for _ in range(rounds)]


def looks(rounds: int) -> range:
    return range(MIN_ROUNDS, rounds + 1)  # the rounds after which a confirmation looks


@lru_cache(maxsize=None)
def look_level(rounds: int) -> float:
    """The interval level of every look of up to `rounds` rounds: the narrowest
    that passes a candidate exactly at the margin at most ALPHA of the time."""
    if rounds <= MIN_ROUNDS:
        return LEVEL
    cdfs = {n: signed_rank_cdf(n) for n in looks(rounds)}
    smallest = []  # per draw, the smallest one-sided p-value over its looks
    for xs in _draws(rounds):
        best = 1.0
        for n in looks(rounds):
            order = sorted(range(n), key=lambda i: abs(xs[i]))
            t = sum(rank for rank, i in enumerate(order, 1) if xs[i] > 0)
            # P(T+ >= t) = P(T+ <= M - t), M = n(n+1)/2: the law is symmetric
            best = min(best, cdfs[n][n * (n + 1) // 2 - t])
        smallest.append(best)
    smallest.sort()
    # the largest p-value a look may pass at: at most ALPHA of the draws pass
    allowed = int(ALPHA * len(smallest))
    a = max((p for p in smallest if bisect.bisect_right(smallest, p) <= allowed), default=0.0)
    return 1.0 - 2.0 * a


@lru_cache(maxsize=None)
def _lows(rounds: int) -> List[float]:
    """Per draw, the largest low end over the looks, sorted (`rounds` >=
    MIN_ROUNDS: its callers' check)."""
    level = look_level(rounds)
    cuts = {n: cut(n, level) for n in looks(rounds)}
    out = []
    for xs in _draws(rounds):
        walsh: List[float] = []  # of the rounds so far, sorted
        best = -math.inf
        for n, x in enumerate(xs, 1):
            for y in xs[:n]:
                bisect.insort(walsh, (x + y) / 2.0)
            c = cuts.get(n, 0)
            if c:
                best = max(best, walsh[c - 1])
        out.append(best)
    return sorted(out)


def confirm_rate(gain: float, sd: float, rounds: int, margin: float) -> float:
    """How often a candidate truly better by `gain` (0.10: +10%) clears the
    margin over `rounds` at per-round noise `sd` (log-ratio units)."""
    if rounds < MIN_ROUNDS:
        return 0.0
    e = math.log1p(gain)
    m = margin_log(margin)
    if sd <= 0:
        return 1.0 if e > m else 0.0
    lows = _lows(rounds)
    return 1.0 - bisect.bisect_right(lows, (m - e) / sd) / len(lows)


def detectable(sd: float, rounds: int, margin: float) -> Optional[float]:
    """The smallest gain (0.26: +26%) confirmed with POWER over `rounds` at
    noise `sd`; None if the rounds are too few for an interval."""
    q = _power_low(rounds)
    return None if q is None else math.expm1(margin_log(margin) - sd * q)


def sized_sd(rounds: int, margin: float, detect: float) -> Optional[float]:
    """The noise `rounds` are sized for: the largest at which they confirm
    `detect` with POWER (detectable's inverse); None if there is none."""
    q = _power_low(rounds)
    span = math.log1p(detect) - margin_log(margin)
    return span / -q if q is not None and q < 0 < span else None


def _power_low(rounds: int) -> Optional[float]:
    """The (1 - POWER) quantile q of the largest low end: a gain e passes with
    POWER when e + sd * q > m; None if the rounds are too few for an interval."""
    if rounds < MIN_ROUNDS:
        return None
    lows = _lows(rounds)
    return lows[min(len(lows) - 1, int((1.0 - POWER) * len(lows)))]


def rounds_for(gain: float, sd: float, margin: float, most: int) -> Optional[int]:
    """The fewest rounds (at most `most`) that confirm `gain` with POWER; None if more."""
    for n in range(MIN_ROUNDS, most + 1):
        d = detectable(sd, n, margin)
        if d is not None and d <= gain:
            return n
    return None


@lru_cache(maxsize=256)
def stop_rounds(observed: Tuple[float, ...], gain: float, sd: float, rounds: int,
                margin: float, sequential: bool = True) -> Tuple[int, ...]:
    """Per seeded draw, the round after which an arm's rounds end, `observed`
    of them done (log-ratios, higher better) and the rest drawn at its `gain`
    and noise `sd`: at the first look that passes it (`sequential`) or, from
    DROP_AFTER on, that leaves it no way to pass; else at `rounds`
    (confirm.Confirmation._look, at its level, on the Walsh averages as _lows)."""
    level, e, m = look_level(rounds), math.log1p(gain), margin_log(margin)
    cuts = {n: cut(n, level) for n in range(1, rounds + 1)}
    # with the rounds left at their best, the interval's low end is the
    # c-th smallest of the Walsh averages so far (paired_stats.futile)
    c_all = cuts[rounds]
    rng = random.Random(f'{SEED}/stop/{rounds}/{observed}/{gain}')
    out = []
    for _ in range(STOP_SIMS):
        xs: List[float] = []
        walsh: List[float] = []
        n = 0
        while n < rounds:
            x = observed[n] if n < len(observed) else e + sd * rng.gauss(0.0, 1.0)
            xs.append(x)
            for y in xs:
                bisect.insort(walsh, (x + y) / 2.0)
            n += 1
            if n == rounds or n <= len(observed):
                continue  # the last round, or one whose look is done
            if n >= DROP_AFTER and (not c_all or c_all <= len(walsh) and walsh[c_all - 1] <= m):
                break
            c = cuts[n]
            if sequential and c and walsh[c - 1] > m:
                break
        out.append(n)
    return tuple(out)


def rounds_left(arms: Sequence[Tuple[Sequence[float], float]], done: int, sd: float,
                rounds: int, margin: float, sequential: bool = True) -> float:
    """The round measurements expected after round `done` (one a round for the
    baseline, one for each arm still in it), the arms as (observed log-ratios,
    gain): what Confirmation.planned counts at most, with its drops and looks."""
    if not arms:
        return 0.0
    stops = [stop_rounds(tuple(round(x, 6) for x in xs), round(g, 4), sd, rounds, margin,
                         sequential) for xs, g in arms]
    return sum(max(0, max(s) - done) + sum(max(0, n - done) for n in s)
               for s in zip(*stops)) / float(STOP_SIMS)


@dataclass
class AaNoise:
    """The per-round noise of A/A pairs of one figure (aa_noise)."""
    sd: float
    pairs: int
    per_pair: List[float]
    planned_sd: float  # the sd a plan takes (planned_sd)


def aa_noise(values: Sequence[Optional[float]]) -> Optional[AaNoise]:
    """The per-round noise of A/A pairs of the baseline runs' `values`, in run
    order: (1st, 2nd), (3rd, 4th), ...  None without a pair."""
    logs = [r for a, b in zip(values[0::2], values[1::2])
            for r in [log_ratio(b, a)] if r is not None]
    if not logs:
        return None
    sd = math.sqrt(sum(r * r for r in logs) / len(logs))
    return AaNoise(sd, len(logs), logs, planned_sd(sd, len(logs)))


def planned_sd(sd: float, df: int) -> float:
    """The PLAN_CONFIDENCE upper confidence limit of an sd measured on `df`
    degrees of freedom (A/A log-ratios have a known mean, 0: one per pair)."""
    # imported here, on the serve thread: scipy imported while the mgr loads
    # its modules deadlocks Pacific's mgr (see search.Search.optimizer)
    from scipy.stats import chi2
    return sd * math.sqrt(df / float(chi2.ppf(1.0 - PLAN_CONFIDENCE, df)))


def pooled_sd(arms: Sequence[Sequence[float]]) -> Optional[Tuple[float, int]]:
    """The rounds' noise (each arm's log-ratios about their mean, pooled) and
    its degrees of freedom; None with no arm of 2 rounds."""
    full = [xs for xs in arms if len(xs) >= 2]
    df = sum(len(xs) - 1 for xs in full)
    if not df:
        return None
    ss = sum(sum((x - mean) ** 2 for x in xs) for xs in full for mean in [sum(xs) / len(xs)])
    return math.sqrt(ss / df), df


@dataclass
class Plan:
    sd: float
    rounds: int
    margin: float
    power: float
    detectable: Optional[float]  # the gain it confirms `power` of the time (None: none)
    detect: float
    rounds_for_detect: Optional[int]  # the rounds `detect` needs (None: over most_rounds)
    most_rounds: int
    false_recommend: float  # at most, the chance a finalist doing nothing passes


@dataclass
class Design:
    candidates: int
    rounds: int
    why: str


@dataclass
class Noise(AaNoise, Record):
    """The session's `noise` (aa_noise of the figure judged) and the
    confirmation designed and planned at it."""
    objective: str
    window: float  # the baseline runs' median length (s)
    design: Design
    goal: str  # session_settings: iops | wear
    plan: Plan


def noise(values: Sequence[Optional[float]], objective: str, window: float, goal: str,
          candidates: int, rounds: int, margin: float, detect: float, most: int
          ) -> Optional[Noise]:
    """Noise of the baseline runs' `values`; None without a pair."""
    aa = aa_noise(values)
    if aa is None:
        return None
    d = design(aa.planned_sd, candidates, rounds, margin, detect, most)
    return Noise(**vars(aa), objective=objective, window=window, design=d, goal=goal,
                 plan=plan(aa.planned_sd, d.rounds, margin, detect, most, d.candidates))


def plan(sd: float, rounds: int, margin: float, detect: float, most: int,
         candidates: int) -> Plan:
    """What `rounds` can see at noise `sd`: the gain confirmed with POWER,
    the rounds `detect` needs (None: over `most`), and at most the chance
    that one of `candidates` doing nothing passes."""
    return Plan(sd, rounds, margin, POWER, detectable(sd, rounds, margin), detect,
                rounds_for(detect, sd, margin, most), most,
                min(1.0, candidates * confirm_rate(0.0, sd, rounds, margin)))


def design(sd: Optional[float], candidates: int, rounds: int, margin: float, detect: float,
           most: int) -> Design:
    """How many finalists over how many rounds, in the measurements asked
    for: as asked if they confirm `detect` at noise `sd` (or `sd` unknown);
    else the most finalists whose rounds do; else one, over as many rounds
    as they allow (at most `most`)."""
    asked = Design(candidates, rounds, 'as asked')
    if sd is None:
        return asked
    d = detectable(sd, rounds, margin)
    if d is not None and d <= detect:
        return asked
    measurements = rounds * (candidates + 1)
    for k in range(candidates - 1, 0, -1):
        n = min(most, measurements // (k + 1))
        d = detectable(sd, n, margin)
        if d is not None and d <= detect:
            return Design(k, n, f'{candidates} over {rounds} rounds cannot confirm '
                                f'{detect:+.0%}: {k} over {n} rounds can, in as many measurements')
    n = min(most, measurements // 2)
    if candidates == 1 or n <= rounds:
        return asked
    return Design(1, n, f'no split of {measurements} measurements confirms {detect:+.0%}: '
                        f'one candidate over {n} rounds sees the smallest gain')
