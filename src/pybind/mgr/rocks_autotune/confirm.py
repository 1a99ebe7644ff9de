"""The confirmation after the search: its record (ConfirmRecord, changed only
here), its rounds, then the steady check of the arms whose objective passed.
Design: doc/dev/internals.rst, dev-internals-confirmation."""
import random
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import paired_stats, perf_counters, power, steady_check
from .measurement_plan import BASELINE, SPLIT, MeasurementPlan
from .paired_stats import HIGHER, Round, Summary
from .perf_counters import Measurement, median
from .record import Record, make
from .space import Candidate
from .session_settings import IOPS, WEAR
from .trial import Trial

# a baseline that fails this many times in a round leaves the round without pairs
BASELINE_TRIES = 2
# its reads' mean latency over the rounds' probes shown over 1 + read_guard
# times the baseline's (the whole interval); judged on the mean, whose A/A
# noise is about half the p99's (doc/bench/read-probe.md)
READS_SLOWER = 'reads slower'
READ_JUDGED, READ_SHOWN = 'mean_ms', 'p99_ms'


@dataclass
class Arm:
    """A candidate confirmed: its search trial, the model's posterior mean
    (wear: its predicted steady write-amp ratio), and whether it is out
    (verdict, why) or passed at a look (after that round)."""
    arm: str  # c1, c2, ... in the model's order
    trial: int
    candidate: Candidate
    options: str
    mean: float
    out: Optional[Tuple[str, str]] = None
    passed: Optional[int] = None
    predicted: Optional[float] = None
    # why its steady window cannot reach steady state within the limit ('':
    # it may): passing its rounds, it is "write-amp unknown" without one
    reach: str = ''


@dataclass
class RoundsNoise:
    """The noise the rounds showed (per-round log-ratios about each arm's
    mean, pooled: power.pooled_sd) and the gain the planned rounds confirm
    `power` of the time at it."""
    sd: float
    df: int
    rounds: int
    power: float
    detectable: Optional[float]


# the figures an arm's result gives over the rounds; iops_c, iops_r: under
# the split design only, C's and R's own IOPS beside the C/R judged (on a
# shared host the candidate moves R's OSDs too)
FIGURES = ('objective', 'kv_sync_lat', 'write_amp', 'iops_c', 'iops_r')
GROUPS = ('iops_c', 'iops_r')


@dataclass
class ArmResult(Record):
    """An arm's verdict as shown (Confirmation.update)."""
    arm: str
    verdict: str
    why: str
    objective: Summary
    write_amp: Summary
    kv_sync_lat: Summary
    trial: int
    mean: float
    predicted: Optional[float]
    restart_seconds: Optional[float]  # the canary's, median over its restarts after the arm
    objective_verdict: str
    steady: Optional[steady_check.SteadyVerdict]
    iops_c: Optional[Summary] = None
    iops_r: Optional[Summary] = None
    # its read probes' latency over the baseline's, mean and p99, over the
    # rounds (None: not probed, under another workload or read_probe 0)
    reads: Optional[Summary] = None
    reads_p99: Optional[Summary] = None
    OMIT_NONE = GROUPS + ('reads', 'reads_p99')

    @classmethod
    def from_json(cls, saved: Any) -> 'ArmResult':
        st = saved['steady']  # its JSON does not name its arm
        return make(cls, saved, steady=None if st is None
                    else steady_check.SteadyVerdict.from_json(st, saved['arm']))


@dataclass
class Verdict(Record):
    """The confirmation's verdict so far (Confirmation.update); what it was
    judged under is its ConfirmRecord's."""
    recommended: Optional[str]  # the arm recommended (None: keep the current options)
    complete: bool  # every round done
    rounds_done: int
    baseline_restart_seconds: Optional[float]
    arms: List[ArmResult]  # the options and candidate are the arm's (ConfirmRecord.arms)
    seen: Optional[RoundsNoise]
    # the read probes' noise, and the slowdown past read_guard the rounds show
    reads_seen: Optional[RoundsNoise] = None

    @property
    def chosen(self) -> Optional[ArmResult]:
        return next((a for a in self.arms if a.arm == self.recommended), None)


@dataclass
class ConfirmRecord(Record):
    """The session's confirmation (`confirm`): set up by plan, changed only
    by Confirmation."""
    arms: List[Arm]
    rounds: int
    margin: float
    objective: str
    direction: str
    # a look after every round from MIN_ROUNDS on, each at this level
    level: float
    measurement_plan: MeasurementPlan
    # each passing arm's steady check: its pairs of windows, each at most the limit (s)
    steady_pairs: int
    steady_window_limit: float
    # a steady write-amp ratio's ceiling: --budget, or under wear 1 / (1 + wear_margin)
    budget: float
    restart_limit: Optional[float] = None
    read_guard: Optional[float] = None  # READS_SLOWER's (None: reads not judged)
    design: Optional[power.Design] = None  # the finalists and rounds asked for
    goal: str = IOPS
    wear_margin: Optional[float] = None
    window: float = 0.0  # the rounds' window length
    # with no finalist under wear: what the model had too little of (Search.blind_why)
    none_why: str = ''
    sequential: bool = True
    orders: List[List[str]] = field(default_factory=list)  # each round's, as drawn
    result: Optional[Verdict] = None  # the verdict so far (Confirmation.update)

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.arm == name)


def plan(ranked: List[Tuple[Trial, float]], rounds: int, margin: float,
         workload: str, measurement_plan: MeasurementPlan, budget: float,
         steady_pairs: int = 1, steady_limit: float = 3600.0,
         restart_limit: Optional[float] = None,
         read_guard: Optional[float] = None, design: Optional[power.Design] = None,
         window: float = 0.0, wear_margin: Optional[float] = None,
         predicted: Sequence[Optional[float]] = (), reach: Sequence[str] = (),
         none_why: str = '') -> ConfirmRecord:
    """The record of a confirmation of `ranked` ((search trial, posterior
    mean), best first), measured as `measurement_plan` says, each passing arm
    checked in `steady_pairs` pairs of steady windows of at most `steady_limit`
    s, its write-amp within `budget` (its reads, where probed, not shown slower
    than 1 + `read_guard` times the baseline's: READS_SLOWER). With `wear_margin`, the goal is wear
    (`predicted`: each arm's ratio) and the write-amp must be below the baseline's by it.
    `reach`: why each arm's steady window cannot reach steady state ('': it may)."""
    # the split design confirms on C/R, the figure its A/A noise is measured on
    objective, direction = perf_counters.objective(workload, measurement_plan.design)
    arms = [Arm(f'c{i}', t.index, t.candidate, t.options, mean,
                predicted=predicted[i - 1] if predicted else None,
                reach=reach[i - 1] if reach else '')
            for i, (t, mean) in enumerate(ranked, 1)]
    return ConfirmRecord(
        arms, rounds, margin, objective, direction, power.look_level(rounds), measurement_plan,
        steady_pairs, steady_limit, budget if wear_margin is None else 1.0 / (1.0 + wear_margin),
        restart_limit, read_guard, design, IOPS if wear_margin is None else WEAR, wear_margin,
        window, none_why)


def _trials(trials: List[Trial], r: int, name: str, steady: str = '') -> List[Trial]:
    """Round r's trials of arm `name` (`steady`: pair r of that arm's steady check)."""
    return [t for t in trials
            if t.kind == 'confirm' and t.round == r and t.arm == name and t.steady == steady]


@dataclass
class Confirmation:
    """The rounds and steady check of `rec` over the session's `trials`
    (its orders shuffled by `seed`; `base_options` what the baseline runs)."""
    rec: ConfirmRecord
    trials: List[Trial]
    seed: int
    base_options: Optional[str]

    def _done(self, r: int, name: str, steady: str = '') -> bool:
        ts = _trials(self.trials, r, name, steady)
        return any(t.verdict == 'measured' for t in ts) or sum(
            t.verdict == 'failed' for t in ts) >= (BASELINE_TRIES if name == BASELINE else 1)

    def _round_done(self, r: int) -> bool:
        return all(self._done(r, a) for a in self.rec.orders[r])

    def _trial(self, r: int, name: str, steady: str = '') -> Optional[Trial]:
        """Arm `name`'s measured trial in round (or steady pair) r."""
        return next((t for t in _trials(self.trials, r, name, steady)
                     if t.verdict == 'measured' and t.measurement), None)

    def _measured(self, r: int, name: str, steady: str = '') -> Optional[Measurement]:
        t = self._trial(r, name, steady)
        return t.measurement if t else None

    def _verdict(self, rounds: Sequence[Round], reads: Sequence[Round]
                 ) -> Tuple[List[str], List[paired_stats.ArmVerdict]]:
        """The arms whose objective passed and whose reads (`reads`: read_rounds)
        are not shown slower (READS_SLOWER), best first, and every arm's
        verdict over the rounds."""
        rec = self.rec
        ranked, verdicts = paired_stats.verdict(
            rounds, [a.arm for a in rec.arms], BASELINE, rec.objective, rec.direction,
            rec.margin, out={a.arm: a.out for a in rec.arms if a.out}, level=rec.level)
        if rec.read_guard is None:
            return ranked, verdicts
        for v in verdicts:
            if v.verdict != 'passes':
                continue
            s = paired_stats.summary(reads, v.arm, BASELINE, READ_JUDGED, rec.level)
            if paired_stats.clears(s, HIGHER, rec.read_guard):
                r = s.ratio  # it clears: a finite interval
                v.verdict, v.why = READS_SLOWER, (
                    f'its 4 KiB reads\' mean latency {r.median:.2f}x [{r.low:.2f}, '
                    f'{r.high:.2f}] the baseline\'s over {s.rounds} rounds, all of it over '
                    f'1 + read_guard {rec.read_guard:.2f}')
        passing = {v.arm for v in verdicts if v.verdict == 'passes'}
        return [a for a in ranked if a in passing], verdicts

    def read_rounds(self) -> List[Round]:
        """Per round drawn, each arm's read probe after its window (if any)."""
        return [{name: (t := self._trial(r, name)) and t.read_probe for name in order}
                for r, order in enumerate(self.rec.orders)]

    def active(self) -> List[str]:
        """The arms still measured: not out, not passed at a look."""
        return [a.arm for a in self.rec.arms if not a.out and not a.passed]

    def next(self) -> Optional[Tuple[int, str, str]]:
        """(round or steady pair, the arm to measure next, the arm whose
        steady check it is: '' for a round), closing a finished round and
        drawing the next one's order on the way; None once it is over."""
        rec = self.rec
        while True:
            r = len(rec.orders) - 1
            if r >= 0:
                for arm in rec.orders[r]:
                    if not self._done(r, arm):
                        return r, arm, ''
                if len(rec.orders) < rec.rounds:
                    self._look(r)
                self._drop_slow_restarts(r)
            active = self.active()
            if len(rec.orders) >= rec.rounds or not active:
                return self._next_steady()
            order = [BASELINE] + active
            # a fresh order each round, from the seed (replayable): drift
            # within a round falls on every arm alike
            random.Random(f'{self.seed}/{len(rec.orders)}').shuffle(order)
            rec.orders.append(order)

    def _best_first(self, ranked: List[str]) -> List[str]:
        """Under wear, the model's order (least predicted write-amp first)."""
        if self.rec.goal != WEAR:
            return ranked
        return [a.arm for a in self.rec.arms if a.arm in ranked]

    def _steady_pairs(self, arm: str) -> Tuple[List[Tuple[Measurement, Measurement]],
                                               int, bool]:
        """(measured steady pairs, pairs done, whether a baseline failed for good)."""
        measured, p, lost = [], 0, False
        while p < self.rec.steady_pairs and all(
                self._done(p, x, arm) for x in (BASELINE, arm)):
            a, b = self._measured(p, arm, arm), self._measured(p, BASELINE, arm)
            if a is not None and b is not None:
                measured.append((a, b))
            elif b is None:
                lost = True
            p += 1
        return measured, p, lost

    def steady_verdict(self, arm: str) -> steady_check.SteadyVerdict:
        reach = self.rec.arm(arm).reach
        if reach:  # known before any window: none is run
            return steady_check.SteadyVerdict(arm, steady_check.UNKNOWN, reach)
        measured, _, lost = self._steady_pairs(arm)
        if lost:
            return steady_check.SteadyVerdict(
                arm, steady_check.UNKNOWN, 'the baseline\'s steady window failed '
                f'{BASELINE_TRIES} times: its write-amp at steady state is unknown')
        rec = self.rec
        return steady_check.judge(arm, measured, rec.steady_pairs, rec.budget,
                                  rec.steady_window_limit, rec.objective, rec.goal)

    def _unchecked(self) -> List[str]:
        """The arms whose objective passed over the rounds, best first, whose
        steady check is not over, up to the first recommended."""
        arms = []
        for arm in self._best_first(self._verdict(self.rounds(), self.read_rounds())[0]):
            v = self.steady_verdict(arm)
            if v.verdict == steady_check.RECOMMENDED:
                break
            if not v.verdict:
                arms.append(arm)
        return arms

    def _next_steady(self) -> Optional[Tuple[int, str, str]]:
        for arm in self._unchecked():
            _, p, _ = self._steady_pairs(arm)
            for a in steady_check.order(self.seed, arm, p):
                if not self._done(p, a, arm):
                    return p, a, arm
        return None

    def failed(self, r: int, name: str, error: str, steady: str = '') -> None:
        """A measurement failed: a candidate that broke the canary is out."""
        if name != BASELINE:
            where = f'its steady window (pair {r + 1})' if steady else f'round {r + 1}'
            self.rec.arm(name).out = ('failed', f'failed in {where}: {error}')

    def rounds(self) -> List[Round]:
        """Per round drawn, each arm's measurement in it."""
        return [{name: self._measured(r, name) for name in order}
                for r, order in enumerate(self.rec.orders)]

    def _look(self, r: int) -> None:
        """After round r (not the last): an arm measured in DROP_AFTER rounds
        or more that can no longer pass is dropped; with looks (`sequential`),
        one whose objective passes at the look's level is done with the rounds."""
        rec = self.rec
        rounds = self.rounds()
        for a in rec.arms:
            if a.out or a.passed:
                continue
            obj = paired_stats.paired(rounds, a.arm, BASELINE, rec.objective)
            why = len(obj) >= paired_stats.DROP_AFTER and paired_stats.futile(
                obj, rec.rounds - (r + 1), rec.direction, rec.margin, rec.level)
            if why:
                a.out = ('dropped', f'dropped after round {r + 1}: {why}')
            elif rec.sequential:
                summary = paired_stats.summary(rounds, a.arm, BASELINE, rec.objective, rec.level)
                if paired_stats.judge(summary, rec.direction, rec.margin,
                                      rec.level)[0] == 'passes':
                    a.passed = r + 1

    def restarts_after(self, options: Optional[str]) -> List[float]:
        """How long the canary took to come up each time it left `options`
        (their unflushed memtables are replayed from the WAL at start)."""
        return [t.restart_seconds for before, t in zip(self.trials, self.trials[1:])
                if before.options == options and t.restart_seconds is not None]

    def _drop_slow_restarts(self, r: int) -> None:
        """After round r: an arm whose restarts after it took longer than
        restart_limit (median, over two or more) is out."""
        limit = self.rec.restart_limit
        if not limit:
            return
        for a in self.rec.arms:
            took = self.restarts_after(a.options)
            if a.out or len(took) < 2 or median(took) <= limit:
                continue
            base = self.restarts_after(self.base_options)
            a.out = ('restart too slow', (
                f'out after round {r + 1}: the canary took {median(took):.0f}s (median of '
                f'{len(took)}) to restart after it, over restart_limit {limit:.0f}s'
                + (f'; after the baseline {median(base):.0f}s' if base else '')))

    def update(self, complete: bool = False) -> Verdict:
        """The verdict so far, kept for the views: each arm's objective
        verdict, steady check and verdict (the steady check's once it has one)."""
        rec = self.rec
        rounds, reads = self.rounds(), self.read_rounds()
        ranked, verdicts = self._verdict(rounds, reads)
        arms = []
        for a, v in zip(rec.arms, verdicts):
            sv = self.steady_verdict(a.arm) if v.verdict == 'passes' else None
            st = sv if sv is not None and (sv.pairs or sv.verdict) else None
            verdict, why = ((sv.verdict, sv.why) if sv is not None and sv.verdict
                            else (v.verdict, v.why))
            took = self.restarts_after(a.options)
            arms.append(ArmResult(
                a.arm, verdict, why, v.objective, v.write_amp,
                v.kv_sync_lat, a.trial, a.mean, a.predicted,
                median(took) if took else None, v.verdict, st, **self._groups(rounds, a.arm),
                **self._reads(reads, a.arm)))
        verdict_of = {r.arm: r.verdict for r in arms}
        best = next((name for name in self._best_first(ranked)
                     if verdict_of[name] == steady_check.RECOMMENDED), None)
        for r in arms:
            if best and r.verdict == 'passes':
                r.why = (f'its objective passed; {best}, ranked before it, was '
                         'recommended, so it needed no steady window')
        base = self.restarts_after(self.base_options)
        rec.result = Verdict(
            best, complete, sum(1 for r in range(len(rec.orders)) if self._round_done(r)),
            median(base) if base else None, arms, self._seen(rounds, rec.objective, rec.margin),
            self._seen(reads, READ_JUDGED, rec.read_guard or 0.0))
        return rec.result

    def _reads(self, reads: Sequence[Round], arm: str) -> Dict[str, Summary]:
        """The arm's read latency over the rounds' probes (none probed: {})."""
        judged, shown = (paired_stats.summary(reads, arm, BASELINE, key, self.rec.level)
                         for key in (READ_JUDGED, READ_SHOWN))
        return {'reads': judged, 'reads_p99': shown} if judged.rounds else {}

    def _groups(self, rounds: Sequence[Round], arm: str) -> Dict[str, Summary]:
        if self.rec.measurement_plan.design != SPLIT:
            return {}
        return {key: paired_stats.summary(rounds, arm, BASELINE, key, self.rec.level)
                for key in GROUPS}

    def _seen(self, rounds: Sequence[Round], key: str, margin: float) -> Optional[RoundsNoise]:
        """The noise of `key` over the rounds, and what they show past `margin` at it."""
        rec = self.rec
        pooled = power.pooled_sd([paired_stats.paired(rounds, a.arm, BASELINE, key)
                                  for a in rec.arms])
        if pooled is None:
            return None
        sd, df = pooled
        return RoundsNoise(sd, df, rec.rounds, power.POWER,
                           power.detectable(sd, rec.rounds, margin))

    def _left_in_round(self) -> int:
        """The measurements of the round drawn last still to come."""
        r = len(self.rec.orders) - 1
        return sum(not self._done(r, a) for a in self.rec.orders[r]) if r >= 0 else 0

    def planned(self) -> int:
        """Round measurements still to come, at most (drops make it fewer)."""
        rec, active = self.rec, self.active()
        return self._left_in_round() + (
            (rec.rounds - len(rec.orders)) * (len(active) + 1) if active else 0)

    def expected_planned(self, gains: Mapping[int, float], sd: float) -> float:
        """Round measurements still to come, as expected: each arm still in
        drawn on from its rounds so far at its search gain (`gains`, by
        trial) and noise `sd`, with the drops and looks of `_look`
        (power.rounds_left); never more than `planned`, which counts each
        round after this one whole."""
        rec = self.rec
        rounds, sign = self.rounds(), 1.0 if rec.direction == paired_stats.HIGHER else -1.0
        arms = [([sign * x for x in paired_stats.paired(rounds, a.arm, BASELINE, rec.objective)],
                 gains.get(a.trial, 0.0)) for a in rec.arms if not a.out and not a.passed]
        return self._left_in_round() + power.rounds_left(
            arms, len(rec.orders), sd, rec.rounds, rec.margin, rec.sequential)

    def steady_planned(self) -> int:
        """Steady-window measurements still to come, at most: two a pair for
        every arm that may still need its check (with a round in flight, any
        arm still in may pass)."""
        rec = self.rec
        n = len(rec.orders)
        if not self.active() or (n >= rec.rounds and self._round_done(n - 1)):
            arms = self._unchecked()
        else:
            arms = [a.arm for a in rec.arms if not a.out and not a.reach]
        return sum(not self._done(p, name, arm)
                   for arm in arms for p in range(rec.steady_pairs) for name in (BASELINE, arm))
