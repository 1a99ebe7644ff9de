"""The search: which options a session measures next (the baseline runs,
then the optimizer's candidates), and what its measurements tell the
optimizer.  Works on the session's record only: the session moves the
phases and runs the trials (doc/dev/session.rst)."""
import logging
import math
import os
from dataclasses import dataclass, field, replace
from statistics import mean, median
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import confirm, options, perf_counters, power, views, wear_model
from .confirm import Confirmation
from .session_settings import Params, Settings
from .measurement_plan import SPLIT, MeasurementPlan
from .perf_counters import Baseline, Measurement
from .rocksdb_options import NEW_TUNING, NEW_TUNING_LZ4, parse_options
from .space import Candidate, SearchSpace, wal_limit
from .canary_record import CanaryRecord, PreconditionRecord
from .store import SessionState
from .trial import Trial
from .views import TimeSaid
from .window import (WindowEnd, fill_rate, precondition_left, steady_bytes, steady_cap,
                     steady_length, steady_window, steady_window_bytes, wal_rate)
from .workload import BLOCK_SIZE, CLIENT

log = logging.getLogger(__name__)

# seconds of the preconditioning's 4 KiB writes whose WAL rate sets the
# finalist's prior under wear (Search.before_baseline), and the forecast
PRIOR_AFTER = 60.0
# a measurement's seconds beside its window and warm-up before one is
# measured: restart and steps, 9-24 s in the defaults runs (doc/bench/defaults.md)
OVERHEAD_PRIOR = 10.0


@dataclass
class Search:
    s: SessionState
    space: SearchSpace
    settings: Settings
    params: Params
    release_default: str
    clock: Callable[[], float]
    _optimizer: Any = field(default=None, init=False, repr=False)  # built on first use
    _capped: bool = field(default=False, init=False, repr=False)  # the prior at a WAL rate

    @property
    def optimizer(self) -> Any:
        """The optimizer, rebuilt on first use by replaying the recorded trials.
        Use only from step() in the serve thread: scipy's pybind11 calls
        PyGILState_Ensure, which deadlocks in a mgr sub-interpreter elsewhere."""
        if self._optimizer is None:
            # one BLAS thread: the GP is small, and the mgr shares its host's
            # cores with the OSDs (threads made fits ~8x slower under load)
            os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
            os.environ.setdefault('OMP_NUM_THREADS', '1')
            from .optimizer import TrialOptimizer
            cap = self.s.steady_cap
            if cap and cap.applied is None:
                cap.settle(self.space, self.s.seed)
            self.space.max_steady_bytes = cap.bytes if cap and cap.applied else 0
            if self.s.baseline is not None and self._prior() is None:
                self._draw_prior()
            warm = [self.space.base_candidate()] + [
                self.space.candidate_from_options(parse_options(p))
                for p in (self.release_default, NEW_TUNING, NEW_TUNING_LZ4)]
            opt = TrialOptimizer(self.space, seed=self.s.seed, warm_start=warm)
            # a failed baseline run says nothing about the options themselves
            opt.replay([(t.candidate, t.told) for t in self.s.trials
                        if t.kind == 'candidate' or t.told is not None])
            self._optimizer = opt
        return self._optimizer

    def _prior(self) -> Optional[float]:
        """The prior this objective's forecast takes (_draw_prior)."""
        return self.s.feasible_prior if self.settings.wear else self.s.reach_prior

    def _draw_prior(self, cap: Optional[int] = None) -> None:
        """The share of random points that may do, before any is measured.
        Wear (feasible_prior): half the share feasible by what is known (steady
        window judgeable, predicted ratio under 1 - confirm_margin, by the
        windows' calibration or before them the lab's, wear_model.PRIOR); the
        other half is for what only a window shows (IOPS within the guard).  Iops
        (reach_prior): the share whose steady window can reach steady state.
        `cap`: a steady window's WAL bytes, before the baseline's steady_cap."""
        from .optimizer import random_points  # scipy: the serve thread's (optimizer)
        s, space = self.s, self.space
        drawn = [space.from_point(x) for x in random_points(space, 1000, s.seed)
                 if space.point_is_safe(x)]
        if not self.settings.wear:
            if cap is None and s.steady_cap is not None:
                cap = s.steady_cap.bytes
            s.reach_prior = 1.0 if cap is None or not drawn else sum(
                self._steady_need(c) <= cap for c in drawn) / len(drawn)
            return
        fams, wal = space.column_families, space.max_total_wal_size
        s.wal_flushed_prior = (sum(wear_model.wal_flushed(c, fams, wal) for c in drawn)
                               / len(drawn) if drawn else 0.0)
        cal = (self.wear_calibration() if s.baseline is not None
               else replace(wear_model.PRIOR, max_total_wal_size=wal))
        ok = [c for c in drawn if self.steady_judgeable(c, cap)
              and self.predicted_ratio(c, cal) * (1.0 + self.settings.confirm_margin) <= 1.0]
        s.feasible_prior = 0.5 * len(ok) / len(drawn) if drawn else 0.0

    def before_baseline(self, pre: Optional[PreconditionRecord]) -> None:
        """The forecast's prior until the baseline's: at the start with no cap,
        then once at the WAL rate of PRIOR_AFTER s of the preconditioning's
        4 KiB writes (the fill's big writes log little)."""
        rate = None if pre is None or pre.seconds < PRIOR_AFTER else pre.window_rate(
            self._groups(), PRIOR_AFTER)
        if self.s.baseline is not None or (self._prior() is not None
                                           and (self._capped or rate is None)):
            return
        self._draw_prior(None if rate is None else int(rate * self._steady_window_limit()))
        self._capped = rate is not None

    def _groups(self) -> int:
        """The groups a window's load writes: C, and R beside it in a split."""
        c = self.s.client
        return 2 if c is not None and c.design == SPLIT else 1

    def _steady_window_limit(self) -> float:
        """How long a steady window may run: steady_window_limit, at least --duration."""
        return max(self.params.duration, self.settings.steady_window_limit)

    def forget(self) -> None:
        """Drop the built optimizer: its next use replays the recorded trials."""
        self._optimizer = None

    def tell(self, c: Candidate, told: Optional[float]) -> None:
        """Tell a built optimizer of a trial already recorded (an unbuilt one
        replays the trials); a failure here drops it, to be rebuilt."""
        if self._optimizer is None:
            return
        try:
            if told is None:
                self._optimizer.tell_failed(c)
            else:
                self._optimizer.tell(c, told)
        except Exception:  # the trial is recorded: a replay tells it again
            log.exception('telling the optimizer failed; it is rebuilt from the trials')
            self._optimizer = None

    def add_trial(self, trial: Trial) -> None:
        """Record a trial once: a step retried after an error replaces the last."""
        trials = self.s.trials
        if trials and trials[-1].index == trial.index:
            trials[-1] = trial
        else:
            trials.append(trial)

    def confirmation(self) -> Confirmation:
        """The confirmation planned (plan_confirmation)."""
        s = self.s
        if s.confirm is None:
            raise ValueError('no confirmation planned')
        return Confirmation(s.confirm, s.trials, s.seed, s.base_options)

    def wear_calibration(self) -> wear_model.Calibration:
        """The wear model fitted to every window so far."""
        return wear_model.calibrate(
            wear_model.windows_of([(t.candidate, t.measurement)
                                   for t in self.s.trials if t.measurement]),
            self.space.column_families, self.space.max_total_wal_size)

    def predicted_ratio(self, c: Candidate, cal: wear_model.Calibration) -> float:
        """Config `c`'s predicted steady write-amp over the current options'
        (at least 1 where the model cannot bound it: wear_model.predictable)."""
        fams, base = self.space.column_families, self.space.base_candidate()
        ratio = wear_model.predict(c, cal, fams) / wear_model.predict(base, cal, fams)
        return ratio if wear_model.predictable(c, base, cal) else max(ratio, 1.0)

    def judge(self, m: Measurement, c: Candidate,
              cal: Optional[wear_model.Calibration] = None) -> Tuple[str, float, float]:
        """A search window's (verdict, score, what the optimizer is told):
        perf_counters.judged's; under wear, the log of the predicted steady
        write-amp ratio plus judged's penalty on IOPS below 1 - guard, feasible
        when below the baseline's by confirm_margin, IOPS within the noise."""
        base, design = self.s.baseline, self.s.plan.design
        if base is None:
            raise ValueError('a candidate was measured before the baseline')
        if not self.settings.wear:
            return perf_counters.judged(m, base, self.params.budget, self.params.workload,
                                        design)
        score = perf_counters.score(m, base, self.params.workload, design)
        floor = math.log1p(-self.settings.guard)
        ratio = self.predicted_ratio(c, cal or self.wear_calibration())
        told = math.log(ratio) + perf_counters.INFEASIBLE_WEIGHT * max(0.0, floor + score)
        noise = self.s.noise
        ok = (-score >= floor - (noise.sd if noise else 0.0)
              and ratio * (1.0 + self.settings.confirm_margin) <= 1.0
              and self.steady_judgeable(c))
        return ('feasible' if ok else 'infeasible'), score, told

    def steady_judgeable(self, c: Candidate, cap: Optional[int] = None) -> bool:
        """Whether a steady window of `c` fits steady_cap's bytes (or `cap`):
        under wear one that does not is no finalist, capped space or not."""
        if cap is None and self.s.steady_cap:
            cap = self.s.steady_cap.bytes
        return cap is None or steady_window_bytes(
            c, self.space.column_families, self.space.max_total_wal_size) <= cap

    def _steady_need(self, c: Candidate) -> int:
        """The WAL bytes of every family's L0 cycle (window.steady_bytes)."""
        return steady_bytes(c, self.space.column_families, self.space.max_total_wal_size)

    def out_of_reach(self, c: Candidate) -> str:
        """Why a steady window of `c` cannot reach steady state within
        steady_window_limit ('': it may): it must count more WAL than the
        baseline's rate writes in the limit (steady_cap).  Such a finalist is
        "write-amp unknown" at once, not after an hour's window that cannot
        see it."""
        cap, need = self.s.steady_cap, self._steady_need(c)
        if cap is None or need <= cap.bytes:
            return ''
        return (f'its steady window must count {need / 2**20:.0f} MiB of WAL (every column '
                f'family\'s L0 cycle), past the {cap.bytes / 2**20:.0f} MiB the baseline\'s '
                f'{cap.rate / 2**20:.2f} MiB/s write in steady_window_limit {cap.limit:.0f}s: '
                'its write-amp at steady state cannot be judged here (raise '
                f'steady_window_limit to {need / cap.rate:.0f}s or more)')

    def rejudge(self) -> None:
        """Under the wear objective, every window judged again by the model
        as now calibrated; the optimizer is rebuilt at its next use."""
        if not self.settings.wear or self.s.baseline is None:
            return
        cal = self.wear_calibration()
        for t in self.s.trials:
            if t.verdict not in ('baseline', 'feasible', 'infeasible') or not t.measurement:
                continue
            verdict, score, t.told = self.judge(t.measurement, t.candidate, cal)
            if t.verdict != 'baseline':
                t.verdict, t.score = verdict, score
        self._optimizer = None

    def window_end(self, cur: Trial) -> WindowEnd:
        """How the window of `cur` ends: a round's at the rounds' length; a
        steady window's by its limit; a search window's by the clock, and
        under wear, where the WAL limit flushes its config, not before its WAL
        passed that limit (that flush sets the steady bytes; a shorter window
        misses it and mispredicts: 0.96x predicted, 1.31x measured)."""
        conf = self.s.confirm
        if cur.kind == 'confirm' and conf is not None:
            return (WindowEnd(steady_limit=max(self.params.duration, conf.steady_window_limit))
                    if cur.steady else WindowEnd(length=conf.window))
        fams, c, wal = self.space.column_families, cur.candidate, self.space.max_total_wal_size
        if cur.kind == 'confirm' or not self.settings.wear \
                or not wear_model.wal_flushed(c, fams, wal):
            return WindowEnd()
        return WindowEnd(wal_to_pass=wal_limit(fams, c, wal),
                         wal_within=self._steady_window_limit())

    def objective_window(self) -> float:
        """The rounds' window length: the median of the baseline runs' (the
        length the noise was measured on), at least --duration."""
        runs = [t.measurement.seconds for t in self.s.trials
                if t.verdict == 'baseline' and t.measurement]
        return max(self.params.duration, median(runs)) if runs else self.params.duration

    def next_trial(self, osd: int) -> Optional[Trial]:
        """The search's next trial on `osd`: a baseline run, or the
        optimizer's candidate; None once the search is done."""
        s = self.s
        if self._runs_left():
            return Trial(index=len(s.trials), kind='baseline',
                         candidate=self.space.base_candidate(), options=s.base_options, osd=osd)
        if sum(t.kind == 'candidate' for t in s.trials) >= self.params.trials:
            return None
        c = self.optimizer.ask()
        options = self.space.render(self.space.base, c)
        if self.settings.inject_options:
            options += ',' + self.settings.inject_options
        return Trial(index=len(s.trials), kind='candidate', candidate=c, options=options, osd=osd)

    def _runs_left(self) -> int:
        """Baseline runs still to measure (a failed one is measured again)."""
        return max(0, self.settings.baseline_runs
                   - sum(t.verdict == 'baseline' for t in self.s.trials))

    def baseline_measured(self, osd: int) -> None:
        """Once all baseline runs are in: the baseline, the noise, and the
        runs scored against their own median."""
        s = self.s
        runs = [t.measurement for t in s.trials
                if t.kind == 'baseline' and t.verdict == 'baseline' and t.measurement]
        if len(runs) < self.settings.baseline_runs:
            return
        s.baseline = base = Baseline.of(runs, self.params.workload)
        # redrawn at the optimizer's build, at the baseline's cap (wear: calibrated)
        s.feasible_prior = s.reach_prior = None
        self._plan_for_noise(runs, osd)
        s.steady_cap = steady_cap(runs, self._steady_window_limit())
        for t in s.trials:
            if t.verdict == 'baseline' and t.measurement:
                t.score = t.told = perf_counters.score(t.measurement, base, self.params.workload,
                                                       s.plan.design)
        self._optimizer = None
        self.rejudge()

    def _plan_for_noise(self, runs: List[Measurement], osd: int) -> None:
        """The noise of the baseline's A/A pairs, on the figure the
        confirmation judges (C/R under split), and what it can see at it."""
        st = self.settings
        key = perf_counters.objective(self.params.workload, self.s.plan.design)[0]
        noise = self.s.noise = power.noise(
            [getattr(m, key) for m in runs], key, median(m.seconds for m in runs),
            st.objective, st.confirm_candidates, st.confirm_rounds, st.rounds_margin(),
            st.rounds_detect(), options.MAX_CONFIRM_ROUNDS)
        if noise is not None:
            log.info('osd.%d: %s', osd, views.noise_line(noise))

    def plan_confirmation(self, plan: MeasurementPlan) -> None:
        """The top feasible candidates by the model's posterior mean (one per
        config, not the current options: the baseline), measured as `plan` says."""
        s, st = self.s, self.settings
        base = self.space.base_candidate()
        feasible = [t for t in s.trials
                    if t.kind == 'candidate' and t.verdict == 'feasible' and t.candidate != base]
        design = s.noise.design if s.noise else power.design(
            None, st.confirm_candidates, st.confirm_rounds, st.rounds_margin(),
            st.rounds_detect(), options.MAX_CONFIRM_ROUNDS)
        ranked = self.optimizer.rank([t.candidate for t in feasible], design.candidates)
        first: Dict[Candidate, Trial] = {}  # each config's first feasible trial
        for t in feasible:
            first.setdefault(t.candidate, t)
        cal = self.wear_calibration() if st.wear else None
        s.confirm = confirm.plan(
            [(first[c], mean) for c, mean in ranked], design.rounds, st.rounds_margin(),
            self.params.workload, plan, self.params.budget, st.steady_pairs,
            st.steady_window_limit, st.restart_limit, st.read_guard, design,
            self.objective_window(),
            st.confirm_margin if cal else None,
            [self.predicted_ratio(c, cal) for c, _ in ranked] if cal else (),
            [self.out_of_reach(c) for c, _ in ranked],
            self.blind_why(cal) if cal and not ranked else '')
        self.confirmation().update()

    def blind_why(self, cal: wear_model.Calibration) -> str:
        """Under wear, what the model had too little of ('': enough): windows
        without a flush say nothing of a flush's size, and a compression none
        of whose windows flushed counts as saving nothing."""
        few = cal.flush_windows * 2 <= cal.windows
        unseen = [x for x in self.space.compressions if x != 'none' and x not in cal.flushed]
        if not few and not unseen:
            return ''
        said = ([f'{cal.flush_windows} of its {cal.windows} windows flushed a memtable']
                if few else [])
        said += ([f'none compressed with {"/".join(unseen)} flushed, so it counts no saving '
                  'from them'] if unseen else [])
        cap = self.params.duration * self.settings.max_window_factor
        return (f'the model had little to go by: {"; ".join(said)} (search windows of at '
                f'most {cap:.0f}s, max_window_factor x --duration, unless the WAL limit '
                'flushes their config: a longer --duration shows more)')

    def left(self) -> Tuple[int, int, int]:
        """(search, confirmation round, steady) measurements still to come,
        at most: k + 1 a round, two a steady pair per finalist."""
        s, st = self.s, self.settings
        if s.confirm is None:
            return (max(0, st.baseline_runs + self.params.trials - len(s.trials)),
                    st.confirm_rounds * (st.confirm_candidates + 1),
                    2 * st.steady_pairs * st.confirm_candidates)
        conf = self.confirmation()
        return 0, conf.planned(), conf.steady_planned()

    def _window_lengths(self, windows: List[Tuple[Trial, Measurement]]
                        ) -> Tuple[Optional[float], float, float, Optional[float]]:
        """(a steady window of the current options, None before the baseline,
        inf if nothing flushed; its limit; the rounds' window; the finalists'
        steady window, None before them), from the measured trials."""
        fams, wal = self.space.column_families, self.space.max_total_wal_size
        base = [m for t, m in windows if t.verdict == 'baseline']
        rate = fill_rate([(t.candidate, [m]) for t, m in windows])
        base_c = self.space.base_candidate()
        steady = steady_window(base_c, base, rate, wal) if base else None
        if steady is not None and not math.isinf(steady):
            # beside that cycle, its WAL through every family's, and --duration
            steady = max(steady, steady_length([(base_c, base)], self.params.duration, math.inf,
                                               fams, wal))
        conf = self.s.confirm
        if conf is None:
            return steady, self._steady_window_limit(), self.objective_window(), None
        limit = max(self.params.duration, conf.steady_window_limit)
        need = steady_length([(c, [m for t, m in windows if t.candidate == c])
                              for c in [base_c] + [a.candidate for a in conf.arms]],
                             self.params.duration, limit, fams, wal)
        return steady, limit, conf.window, need

    def time_said(self, canary: CanaryRecord, preconditioned: bool) -> TimeSaid:
        """The windows' lengths, and what the rest of the session costs at
        most and as expected (`preconditioned`: the DB is preconditioned first;
        no expected time before PRIOR_AFTER s of it: its rates, the prior's)."""
        s, st = self.s, self.settings
        done = [(t, t.measurement) for t in s.trials if t.measurement and t.seconds]
        steady, limit, window, need = self._window_lengths(done)
        pre = canary.precondition
        known = not preconditioned or s.baseline is not None or (
            pre is not None and (pre.done or pre.seconds >= PRIOR_AFTER))
        # a measurement's cost beside its window: restart, warm-up, the steps; not
        # the first one's preconditioning, nor a steady window's wait to compact
        first = (pre.seconds + pre.fill_seconds if preconditioned and pre is not None and pre.done
                 else 0.0)
        over = median([t.seconds - m.seconds - (m.settled or 0.0) - (first if k == 0 else 0.0)
                       for k, (t, m) in enumerate(done)]) if done else st.warmup + OVERHEAD_PRIOR
        per_search = over + self._search_window(
            done, pre.window_rate(self._groups(), PRIOR_AFTER) if pre else None)
        search, confirmation, steadies = self.left()
        # the baseline runs left at their own window (the rounds'), not the candidates'
        runs = min(search, self._runs_left())
        per_run = over + window
        # the preconditioning's rest: its overwrite pass at the rate so far,
        # then the wait for a compaction at its WAL a flush
        blocks = 0 if s.client is None else (s.client.count or 0) * (
            st.client_object_size // BLOCK_SIZE)  # ClientWorkload.block_count
        pending = (precondition_left(pre, st.precondition_limit, blocks,
                                     self.space.base_candidate().level0_file_num_compaction_trigger)
                   if preconditioned and not (pre is not None and pre.done) else 0.0)
        alone = pending + runs * per_run + (search - runs) * per_search  # all a keep session runs
        # each round's window is followed by its read probe under the client load
        probe = st.read_probe if self.params.workload == CLIENT else 0.0
        rounds = confirmation * (over + window + probe)
        # as expected: a finalist at a small gain is mostly dropped early
        rounds_expected = self._rounds_expected(confirmation) * (over + window + probe)
        left = alone + rounds + steadies * (over + limit)  # each window at its limit
        # a finalist's steady pairs (the first that passes ends the check),
        # each as long as the windows so far say
        expect = min(limit, need or steady or limit)
        steady_cost = min(steadies, 2 * st.steady_pairs) * (over + expect) * self._reach_share()
        finalist = alone + rounds + steady_cost
        cur, w = s.current, canary.window
        if cur is not None and w is not None and cur.kind != 'recovery':
            # the measurement in flight is counted above whole: what it spent
            # comes off, up to the length each branch counted it at
            ran = max(0.0, self.clock() - float(w.start) + (w.settled or 0.0))
            if cur.kind == 'confirm':
                at_most = over + (limit if cur.steady else window + probe)
                expected_length = over + (expect if cur.steady else window + probe)
            else:
                at_most = expected_length = per_run if cur.kind == 'baseline' else per_search
                alone = max(0.0, alone - min(at_most, ran))
            left -= min(at_most, ran)
            finalist -= min(expected_length, ran)
        chance, passes = self.finalist_chance(), self.pass_chance()
        expected = alone + chance * max(0.0, finalist - alone - (rounds - rounds_expected)
                                        - (1.0 - passes) * steady_cost)
        return TimeSaid(None if steady is None or math.isinf(steady) else steady,
                        steady is not None and math.isinf(steady), limit, window, steadies,
                        need, max(0.0, left), max(0.0, expected) if known else None,
                        None if s.confirm or not known else alone, max(0.0, finalist),
                        chance, passes)

    def _rounds_expected(self, at_most: int) -> float:
        """The round measurements left as expected (`at_most`: left()'s):
        each finalist's rounds drawn at its gain and noise, dropped or passed
        at its looks (power.rounds_left); at most if that noise is unknown."""
        s = self.s
        if not at_most:
            return 0.0
        if s.confirm is not None:
            if s.noise is None:
                return float(at_most)
            return min(float(at_most),
                       self.confirmation().expected_planned(self._gains(), s.noise.plan.sd))
        f = self._finalists()
        if f is None:
            return float(at_most)
        gains, sd, rounds, margin = f
        return min(float(at_most),
                   power.rounds_left([((), g) for g in gains], 0, sd, rounds, margin))

    def _finalists(self) -> Optional[Tuple[List[float], float, int, float]]:
        """Before the confirmation, its finalists as expected: the best
        feasible search gains, or with none yet as many at no gain (what
        every session from the options admins run has met: doc/bench/
        defaults.md, scenarios.md); at the planned noise, or before it the
        noise the asked rounds are sized for.  (gains, sd, rounds, margin);
        None if no noise is known or sized."""
        s, st = self.s, self.settings
        if s.noise is not None:
            k, rounds = s.noise.design.candidates, s.noise.design.rounds
            sd: Optional[float] = s.noise.plan.sd
        else:
            k, rounds = st.confirm_candidates, st.confirm_rounds
            sd = power.sized_sd(rounds, st.rounds_margin(), st.rounds_detect())
        if sd is None:
            return None
        gains = sorted(self._gains(feasible=True).values(), reverse=True)[:k]
        return gains or [0.0] * k, sd, rounds, st.rounds_margin()

    def _gains(self, feasible: bool = False) -> Dict[int, float]:
        """Each scored (`feasible`: and feasible) candidate's search gain
        (0.10: +10%), by trial."""
        return {t.index: math.expm1(-t.score) for t in self.s.trials
                if t.kind == 'candidate' and t.score is not None
                and (not feasible or t.verdict == 'feasible')}

    def _search_window(self, done: List[Tuple[Trial, Measurement]],
                       pre_rate: Optional[float] = None) -> float:
        """A search window's expected length (the windows left sum to their count
        x it): the mean of the candidates' so far, a median missing the long ones
        (defaults run 4, wear: 47-66 s and 357-380 s).  Under wear the windows
        the WAL limit flushes (window_end) and the others each at their mean so
        far, weighed by the share of the space the limit flushes (the prior: a
        few picks say little of the rest; defaults run 7's first six held one,
        its last six six); before one of a kind, such a window as long as its
        WAL takes to pass the limit at the runs' rate (before them
        `pre_rate`, the preconditioning's), the other as the runs'."""
        cands = [(t.candidate, m.seconds) for t, m in done if t.kind == 'candidate']
        # the baseline runs' alone: defaults run 10 took its 6 no-flush windows
        # at 339 s (its 3 long candidates in the mean) where they ran 30-46 s
        runs = self.objective_window()
        share, rate = self.s.wal_flushed_prior, wal_rate(m for _, m in done) or pre_rate
        if not self.settings.wear or share is None:
            return mean(x for _, x in cands) if cands else runs
        fams, wal = self.space.column_families, self.space.max_total_wal_size
        flushed = [wear_model.wal_flushed(c, fams, wal) for c, _ in cands]
        long = [x for (_, x), f in zip(cands, flushed) if f]
        short = [x for (_, x), f in zip(cands, flushed) if not f]
        # only a set max_total_wal_size can flush first (RocksDB's own is 4 x memtables)
        passed = min(self._steady_window_limit(), wal / rate) if rate else runs
        return (share * (mean(long) if long else max(runs, passed))
                + (1.0 - share) * (mean(short) if short else runs))

    def _reach_share(self) -> float:
        """Before the confirmation, the share of the feasible candidates whose
        steady window can reach steady state (reach_prior, or 1, with none):
        only those run steady windows."""
        if self.s.confirm is not None:
            return 1.0  # the arms out of reach are no longer in steady_planned
        feasible = [t.candidate for t in self.s.trials
                    if t.kind == 'candidate' and t.verdict == 'feasible']
        if not feasible:  # the share of the points drawn (None under wear: in its prior)
            return 1.0 if self.s.reach_prior is None else self.s.reach_prior
        return sum(not self.out_of_reach(c) for c in feasible) / len(feasible)

    def finalist_chance(self) -> float:
        """The chance the search leaves a finalist to confirm (planned: 1 with
        arms, else 0): 1 once a candidate is feasible; else that one of those
        left is, each at the rule of succession's rate with prior
        feasible_prior (one half before the baseline): 2 x prior / (n + 2)."""
        s = self.s
        if s.confirm is not None:
            return 1.0 if s.confirm.arms else 0.0
        tried = [t for t in s.trials if t.kind == 'candidate']
        if any(t.verdict == 'feasible' for t in tried):
            return 1.0
        left = max(0, self.params.trials - len(tried))
        prior = 0.5 if s.feasible_prior is None else s.feasible_prior
        return 1.0 - (1.0 - 2.0 * prior / (len(tried) + 2)) ** left

    def pass_chance(self) -> float:
        """The chance a finalist's rounds pass it on to its steady windows:
        1 once one passed; else power.confirm_rate at the best gain of the
        arms still in, or before them of the finalists as expected
        (_finalists); 1 if no noise is known."""
        s, conf = self.s, self.s.confirm
        if conf is None:
            f = self._finalists()
            return 1.0 if f is None else power.confirm_rate(max(f[0]), f[1], f[2], f[3])
        if any(a.passed for a in conf.arms):
            return 1.0
        arms = {a.trial for a in conf.arms if not a.out}
        ranked = [g for i, g in self._gains().items() if i in arms]
        if not s.noise or not ranked:
            return 1.0
        p = s.noise.plan
        return power.confirm_rate(max(ranked), p.sd, p.rounds, p.margin)
