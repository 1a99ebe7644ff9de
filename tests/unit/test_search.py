"""The search alone (search.py): which trial comes next, what the baseline
runs settle, what is left, and the confirmation it plans, on a session's
record with no cluster steps."""
import math
from dataclasses import replace
from typing import Any, Optional, Tuple

import pytest

from fake_cluster import TENTACLE_DEFAULTS, FakeClock, FakeCluster
from rocks_autotune import power, report, session_start, views, wear_model
from rocks_autotune.canary_record import PreconditionRecord, WindowRecord
from rocks_autotune.measurement_plan import SEQUENTIAL, MeasurementPlan
from rocks_autotune.session_settings import Params
from rocks_autotune.perf_counters import Measurement
from rocks_autotune.rocksdb_options import BLOG_SMALL, parse_options, parse_sharding
from rocks_autotune.search import OVERHEAD_PRIOR, Search
from rocks_autotune.session import Settings
from rocks_autotune.space import MiB, SearchSpace
from rocks_autotune.window import SteadyCap, steady_window_bytes
from rocks_autotune.workload import CLIENT, OSD_BENCH


def search(**settings: Any) -> Tuple[Search, FakeClock]:
    clock = FakeClock()
    cluster = FakeCluster(clock)
    params = Params(osd=1, trials=2, duration=10.0, workload=OSD_BENCH)
    st = Settings(**dict(dict(baseline_runs=2, confirm_candidates=1, confirm_rounds=2),
                         **settings))
    state = session_start.first_state(cluster, params, st, clock())
    space = SearchSpace(compressions=st.compressions,
                        base=parse_options(state.base_options))
    return Search(state, space, st, params, state.release_default, clock), clock


def measured(iops: float, write_amp: float = 2.0, wal_bytes: int = 10 ** 9) -> Measurement:
    return Measurement(seconds=10.0, client_bytes=10 ** 9, db_bytes=2 * 10 ** 9,
                       wal_bytes=wal_bytes, write_amp=write_amp, kv_sync_lat_ms=1.0 / iops,
                       kv_commit_lat_ms=1.0, kv_flush_lat_ms=1.0, kv_syncs=1000, iops=iops,
                       flushes=3.0, window_short=False)


def record(sr: Search, kind: str, verdict: str, m: Measurement) -> None:
    trial = sr.next_trial(1)
    assert trial is not None and trial.kind == kind and trial.osd == 1
    sr.s.trials.append(replace(trial, verdict=verdict, measurement=m, seconds=15.0))


def test_the_baseline_runs_come_first_then_the_optimizers_candidates_then_none() -> None:
    sr, _ = search()
    # the steady check's: a pair per finalist, at most
    assert sr.left() == (2 + 2, 2 * (1 + 1), 2 * 1)
    first = sr.next_trial(1)
    assert first is not None and first.kind == 'baseline'
    assert first.options == sr.s.base_options and first.candidate == sr.space.base_candidate()
    record(sr, 'baseline', 'baseline', measured(1000))
    assert sr.s.baseline is None  # not all runs in: nothing settled
    sr.baseline_measured(1)
    assert sr.s.baseline is None
    record(sr, 'baseline', 'baseline', measured(1010))
    sr.baseline_measured(1)
    # all in: the baseline, and both runs scored against their median (as told)
    assert sr.s.baseline is not None
    assert all(t.score is not None and t.score == t.told for t in sr.s.trials)
    assert sr.s.noise is not None
    record(sr, 'candidate', 'feasible', measured(1100))
    record(sr, 'candidate', 'feasible', measured(1200))
    assert sr.next_trial(1) is None and sr.left()[0] == 0


def test_the_search_proposes_only_what_a_steady_window_can_judge() -> None:
    sr, _ = search(steady_window_limit=300.0, baseline_runs=2)
    for _ in range(2):  # 10 MiB of WAL in each 10-s window: 1 MiB/s
        record(sr, 'baseline', 'baseline', measured(1000, wal_bytes=10 * MiB))
    sr.baseline_measured(1)
    cap = sr.s.steady_cap
    assert cap == SteadyCap(rate=1.0 * MiB, limit=300.0, bytes=300 * MiB)
    for _ in range(2):
        trial = sr.next_trial(1)
        assert trial is not None and trial.kind == 'candidate'
        assert steady_window_bytes(trial.candidate) <= 300 * MiB
        sr.s.trials.append(replace(trial, verdict='feasible', measurement=measured(1100),
                                   seconds=15.0))
    assert cap.applied is True
    # rebuilt from the record (a failover): the same limit
    sr.forget()
    sr.optimizer
    assert sr.space.max_steady_bytes == 300 * MiB
    assert views.steady_cap_line(cap).startswith(
        'search: only candidates whose write-amp a steady window can judge (a first '
        "compaction, then every column family's L0 cycle, within 300 MiB of WAL (the "
        "baseline's 1.00 MiB/s for 300s")


def test_a_steady_window_too_short_for_any_candidate_leaves_the_search_as_it_was() -> None:
    sr, _ = search(steady_window_limit=1.0, baseline_runs=2)
    for _ in range(2):  # 1 MiB of WAL in 10 s, for the 10-s --duration: 1 MiB
        record(sr, 'baseline', 'baseline', measured(1000, wal_bytes=MiB))
    sr.baseline_measured(1)
    trial = sr.next_trial(1)
    assert trial is not None and trial.kind == 'candidate'
    cap = sr.s.steady_cap
    assert cap.bytes == MiB and cap.applied is False
    assert sr.space.max_steady_bytes == 0
    # what it would take: the least of the optimizer's draws, at the runs' rate
    assert cap.smallest > MiB
    line = views.steady_cap_line(cap)
    assert 'search: every candidate, though a steady window writes about 1 MiB' in line
    assert (f"the least of the space's candidates drawn takes {cap.smallest / MiB:.0f} MiB, "
            f"{cap.smallest / (0.1 * MiB):.0f}s at this rate)") in line


def test_inject_options_are_appended_to_every_candidate() -> None:
    sr, _ = search(baseline_runs=1, inject_options='bloom_locality=1')
    record(sr, 'baseline', 'baseline', measured(1000))
    sr.baseline_measured(1)
    cand = sr.next_trial(1)
    assert cand is not None and cand.kind == 'candidate'
    assert cand.options.endswith(',bloom_locality=1')


def test_the_confirmation_is_planned_on_the_plan_given_and_its_windows_counted() -> None:
    sr, _ = search()
    record(sr, 'baseline', 'baseline', measured(1000))
    record(sr, 'baseline', 'baseline', measured(1010))
    sr.baseline_measured(1)
    for iops in (1100, 1200):
        record(sr, 'candidate', 'feasible', measured(iops))
    sr.forget()  # rebuilt from the trials recorded here, as after a failover
    sr.plan_confirmation(MeasurementPlan(SEQUENTIAL))
    conf = sr.s.confirm
    assert conf.measurement_plan == MeasurementPlan(SEQUENTIAL)
    # the rounds' windows: the baseline runs' length (their measured 10 s)
    assert conf.window == 10.0 and conf.design is not None and conf.design.candidates >= 1
    assert (conf.steady_pairs, conf.steady_window_limit) == (
        1, sr.settings.steady_window_limit)
    search_left, confirmation_left, steady_left = sr.left()
    assert search_left == 0 and confirmation_left > 0
    assert steady_left == 2 * len(conf.arms)
    t = sr.time_said(sr.s.canary, preconditioned=False)
    assert t.confirm_window == 10.0 and t.steady_windows_left == steady_left
    # the steady windows counted at the limit each, at most
    assert t.left_seconds >= steady_left * sr.settings.steady_window_limit
    # expected: one finalist's steady pair, each window as long as the
    # windows so far say it needs, not the limit
    assert 0 < t.expected_seconds < t.left_seconds
    assert t.steady_need is not None and t.expected_seconds >= 2 * min(
        t.steady_need, sr.settings.steady_window_limit)


def test_the_expected_time_weighs_the_rounds_by_the_chance_of_a_finalist() -> None:
    # scenario bench, Tentacle's default under wear: no candidate feasible, the
    # session ran the search alone, and a forecast counting the rounds and
    # steady windows was 3.2-3.8x the time it took
    sr, _ = search()
    sr.params = replace(sr.params, trials=4)
    canary = sr.s.canary
    record(sr, 'baseline', 'baseline', measured(1000))
    record(sr, 'baseline', 'baseline', measured(1010))
    sr.baseline_measured(1)
    t = sr.time_said(canary, preconditioned=False)
    # none measured: each of the 4 left feasible at 1/2
    assert t.finalist_chance == pytest.approx(1 - 0.5 ** 4)
    assert t.keep_seconds < t.expected_seconds < t.finalist_seconds
    branch = (t.expected_seconds - t.keep_seconds) / t.finalist_chance
    for k in range(3):
        record(sr, 'candidate', 'infeasible', measured(900))
    t = sr.time_said(canary, preconditioned=False)
    assert t.finalist_chance == pytest.approx(1 / 5)  # none of 3: 1 / (3 + 2), one left
    # the finalist's branch weighed by that chance, itself unchanged
    assert (t.expected_seconds - t.keep_seconds) / t.finalist_chance == pytest.approx(branch)
    record(sr, 'candidate', 'infeasible', measured(900))
    t = sr.time_said(canary, preconditioned=False)
    # the search is over with nothing to confirm: nothing is expected
    assert t.finalist_chance == 0.0 and t.expected_seconds == t.keep_seconds == 0.0
    assert t.left_seconds > 0  # the bound still counts what a finalist would cost
    lines = report.time_lines(replace(t, keep_seconds=600.0, finalist_seconds=2400.0,
                                      finalist_chance=0.2, pass_chance=0.5,
                                      expected_seconds=960.0), 'running')
    assert ('about 16 min expected, at most about' in lines[0]
            and '(about 10 min if the search leaves nothing to confirm, 40 min if a '
            'finalist passes its rounds; a finalist 20% likely, its rounds passing 50% at '
            'its search gain, or at none before one is feasible, by the windows so far)'
            in lines[0]), lines


def test_a_feasible_candidate_makes_a_finalist_certain_and_its_gain_its_passing() -> None:
    # scenario bench, Pacific's pinned default under iops: the finalist's
    # search window was 8% faster, its rounds dropped it, and the forecast
    # had counted its steady windows whole
    def said(iops: float) -> Any:
        sr, _ = search(confirm_rounds=5)
        record(sr, 'baseline', 'baseline', measured(1000))
        record(sr, 'baseline', 'baseline', measured(1010))
        sr.baseline_measured(1)
        record(sr, 'candidate', 'feasible', measured(iops))
        sr.s.trials[-1].score = -math.log(iops / sr.s.baseline.iops)
        return sr, sr.time_said(sr.s.canary, preconditioned=False)
    fast_sr, fast = said(1200.0)
    plan = fast_sr.s.noise.plan
    assert fast.finalist_chance == 1.0 and plan.rounds == 5
    assert fast.pass_chance == pytest.approx(power.confirm_rate(
        1200.0 / fast_sr.s.baseline.iops - 1.0, plan.sd, plan.rounds, plan.margin))
    even_sr, even = said(1005.0)
    assert even.pass_chance < 0.5 < fast.pass_chance
    # the steady windows at the pass chance
    assert even.expected_seconds < fast.expected_seconds <= fast.finalist_seconds
    # and the rounds as its gain says (defaults run iops 3: a finalist at a
    # 1-6% chance dropped after 4 of 10 rounds, the forecast counting all 10):
    # the weak one mostly dropped after 3 or 4 of the 5
    # (the strong one runs all 5: a pass at the last look ends nothing early)
    whole = even_sr.left()[1]
    assert whole == 10 and even_sr._rounds_expected(whole) < 0.8 * whole
    assert fast_sr._rounds_expected(whole) == whole


def test_before_a_feasible_candidate_its_finalists_are_expected_at_no_gain() -> None:
    # defaults run iops 4: before the baseline the forecast was 1.9-2.1x the
    # session, and 3.62x once the noise was planned, counting every round
    # whole and the steady windows as if a finalist would pass: its finalist
    # was 1% slower and dropped after 4 of 10 rounds
    sr, _ = search(confirm_candidates=3, confirm_rounds=5)  # the module's defaults
    whole = sr.left()[1]
    sd = power.sized_sd(sr.settings.confirm_rounds, sr.settings.confirm_margin,
                        sr.settings.detect)
    assert sd is not None and sr.s.noise is None
    # before the noise: at the noise the asked rounds are sized for
    assert sr.pass_chance() == power.confirm_rate(0.0, sd, sr.settings.confirm_rounds,
                                                  sr.settings.confirm_margin) < 0.05
    assert sr._rounds_expected(whole) < 0.7 * whole
    # wear's rounds ask only that it lose no more than the guard: at no gain
    # most finalists pass, over nearly every round
    sr.settings = replace(sr.settings, objective='wear')
    assert 0.85 < sr.pass_chance() < 0.95 and sr._rounds_expected(whole) > 0.9 * whole
    # once planned, at the noise measured
    sr.settings = replace(sr.settings, objective='iops')
    record(sr, 'baseline', 'baseline', measured(1000))
    record(sr, 'baseline', 'baseline', measured(1010))
    sr.baseline_measured(1)
    p = sr.s.noise.plan
    assert sr.pass_chance() == power.confirm_rate(0.0, p.sd, p.rounds, p.margin)


def test_the_time_said_counts_a_read_probe_after_each_round_window_of_the_client_load() -> None:
    sr, _ = search()
    canary = sr.s.canary
    bench = sr.time_said(canary, preconditioned=False).left_seconds
    sr.params = replace(sr.params, workload=CLIENT)
    probed = sr.time_said(canary, preconditioned=False).left_seconds
    sr.settings = replace(sr.settings, read_probe=0.0)
    assert sr.time_said(canary, preconditioned=False).left_seconds == pytest.approx(bench)
    assert probed == pytest.approx(bench + sr.left()[1] * Settings().read_probe)


def test_the_time_said_counts_the_window_in_flight_off_what_is_left() -> None:
    sr, clock = search()
    canary = sr.s.canary
    before = sr.time_said(canary, preconditioned=False).left_seconds
    expected = sr.time_said(canary, preconditioned=False).expected_seconds
    trial = sr.next_trial(1)
    assert trial is not None
    sr.s.current = trial
    canary.window = WindowRecord(clock())
    clock.advance(4.0)
    assert sr.time_said(canary, preconditioned=False).left_seconds == pytest.approx(
        before - 4.0)
    assert sr.time_said(canary, preconditioned=False).expected_seconds == pytest.approx(
        expected - 4.0)


def test_a_steady_window_past_its_expected_length_still_leaves_the_others() -> None:
    # demo run 9: during the finalist's steady window the expected time left
    # read 0 s for 10 minutes, with the baseline's steady window still to run
    sr, clock = search()
    canary = sr.s.canary
    record(sr, 'baseline', 'baseline', measured(1000))
    record(sr, 'baseline', 'baseline', measured(1010))
    sr.baseline_measured(1)
    record(sr, 'candidate', 'feasible', measured(1100))
    sr.plan_confirmation(MeasurementPlan(SEQUENTIAL))
    sr.s.current = replace(sr.s.trials[0], kind='confirm', steady=True)
    canary.window = WindowRecord(clock())
    t0 = sr.time_said(canary, preconditioned=False)
    assert t0.steady_need < t0.steady_window_limit
    clock.advance(10 * t0.steady_window_limit)
    t = sr.time_said(canary, preconditioned=False)
    # the upper bound counted the window at its limit; the finalist's branch
    # at its expected length, and no more comes off it: the other window of
    # the pair is still to come
    assert t0.left_seconds - t.left_seconds > t0.steady_window_limit
    assert t.finalist_seconds > t0.steady_need


def test_the_time_said_does_not_count_the_preconditioning_as_every_measurements_cost() -> None:
    # demo run 7: its first baseline took 309 s, 242 of them preconditioning;
    # as every measurement's cost it forecast 6,842 s left where 2,400 were
    sr, _ = search()
    canary = sr.s.canary
    record(sr, 'baseline', 'baseline', measured(1000))
    sr.s.trials[0].seconds = 15.0 + 240.0
    canary.precondition = PreconditionRecord(done=True, seconds=234.0, fill_seconds=6.0)
    pre = sr.time_said(canary, preconditioned=True)
    plain = sr.time_said(canary, preconditioned=False)
    # each of the 3 search measurements left: 15 s, not 255 s
    assert plain.expected_seconds - pre.expected_seconds >= 3 * 240.0


def test_no_expected_time_is_said_before_a_minute_of_preconditioning() -> None:
    # defaults runs 8 and iops 6: a look before the first step read 2.60x and
    # 1.98x the time the session took (no rate yet: the preconditioning at its limit)
    sr, _ = search()
    canary = sr.s.canary
    for pre in (None, PreconditionRecord(seconds=30.0, kv_bytes={'wal': 60 * MiB})):
        canary.precondition = pre
        t = sr.time_said(canary, preconditioned=True)
        assert t.expected_seconds is None and t.keep_seconds is None and t.left_seconds > 0
        assert 'expected time: after a minute of the preconditioning\'s load' in \
            report.time_lines(t, 'running')[0]
    canary.precondition = PreconditionRecord(seconds=60.0, kv_bytes={'wal': 120 * MiB})
    t = sr.time_said(canary, preconditioned=True)
    assert t.expected_seconds is not None and t.keep_seconds is not None
    assert 'min expected, at most about' in report.time_lines(t, 'running')[0]


def test_before_any_window_the_wal_rate_is_the_drives_or_a_share_of_the_overwrites() -> None:
    # defaults run 8: the overwrite pass, C alone, logged 2.5x the WAL a second
    # of the split windows that write R beside C
    pre = PreconditionRecord(seconds=400.0, kv_bytes={'wal': 800 * MiB})
    assert pre.window_rate(1, 60.0) == pytest.approx(2 * MiB)
    assert pre.window_rate(2, 60.0) == pytest.approx(1 * MiB)
    pre.drive_wal, pre.drive_seconds = 30 * MiB, 30.0  # under a minute: not yet
    assert pre.window_rate(2, 60.0) == pytest.approx(1 * MiB)
    pre.drive_wal, pre.drive_seconds = 90 * MiB, 120.0
    assert pre.window_rate(2, 60.0) == pytest.approx(0.75 * MiB)
    assert pre.window_rate(1, 60.0) == pytest.approx(0.75 * MiB)


def test_the_search_left_is_counted_at_the_mean_candidate_window_not_the_median() -> None:
    # defaults run 4 (wear, 512 in flight): candidates the WAL limit flushes ran
    # windows of 357-380 s beside 47-66 s; at the median the forecast said 461 s
    # left with 7 candidates to go
    sr, _ = search()
    sr.params = replace(sr.params, trials=4)
    canary = sr.s.canary
    for _ in range(2):
        record(sr, 'baseline', 'baseline', measured(1000))
    sr.baseline_measured(1)
    for seconds in (10.0, 10.0, 100.0):  # the runs' windows are 10 s
        record(sr, 'candidate', 'infeasible', replace(measured(900), seconds=seconds))
        sr.s.trials[-1].seconds = seconds + 5.0  # 5 s around each window
    t = sr.time_said(canary, preconditioned=False)
    assert t.keep_seconds == pytest.approx(1 * (5.0 + 40.0))


def test_before_any_candidate_a_wear_search_window_counts_the_wal_limits_share() -> None:
    # the same run: the first candidate's window ran 380 s, the forecast had
    # counted the runs' 45 s for all 12
    sr, _ = search()
    sr.settings = replace(sr.settings, objective='wear')
    sr.space.max_total_wal_size = 100 * MiB
    canary = sr.s.canary
    # before any window (run 7's keep branch read 0.50x then): at the
    # preconditioning's WAL rate, 2 MiB/s, and the runs' --duration
    sr.s.wal_flushed_prior = 0.5
    canary.precondition = PreconditionRecord(seconds=100.0, kv_bytes={'wal': 200 * MiB})
    t = sr.time_said(canary, preconditioned=False)
    over = sr.settings.warmup + OVERHEAD_PRIOR
    # the 2 baseline runs at --duration, the 2 candidates at the share
    runs, candidates = 2 * (over + 10.0), 2 * (over + 0.5 * 10.0 + 0.5 * 50.0)
    assert t.keep_seconds == pytest.approx(runs + candidates)
    canary.precondition = None
    sr.s.wal_flushed_prior = None
    for _ in range(2):  # 10-s windows at 1 MiB/s of WAL: the limit passed in 100 s
        record(sr, 'baseline', 'baseline', measured(1000, wal_bytes=10 * MiB))
    sr.baseline_measured(1)
    sr.s.wal_flushed_prior = 0.5
    t = sr.time_said(canary, preconditioned=False)
    assert t.keep_seconds == pytest.approx(2 * (5.0 + 10.0 + 0.5 * (100.0 - 10.0)))
    sr.settings = replace(sr.settings, objective='iops')  # its windows end by the clock
    assert sr.time_said(canary, preconditioned=False).keep_seconds == pytest.approx(
        2 * (5.0 + 10.0))


def wear_search_after_runs(trials: int) -> Search:
    """A wear search of `trials` candidates, a 100-MiB WAL limit, its 2
    baseline runs in: 10-s windows at 1 MiB/s of WAL."""
    sr, _ = search()
    sr.params = replace(sr.params, trials=trials)
    sr.settings = replace(sr.settings, objective='wear')
    sr.space.max_total_wal_size = 100 * MiB
    for _ in range(2):
        record(sr, 'baseline', 'baseline', measured(1000, wal_bytes=10 * MiB))
    sr.baseline_measured(1)
    return sr


def test_a_wear_search_window_weighs_each_kind_by_the_wal_limits_share() -> None:
    # defaults run 7 (wear, seed 1): its first six candidates held one window
    # the WAL limit flushed (402 s, beside 30-46 s), its last six six (345-377
    # s); at the mean so far the forecast fell to 0.60x of the time left
    sr = wear_search_after_runs(trials=5)
    canary = sr.s.canary
    fams = sr.space.column_families
    big = sr.space.base_candidate()  # 4 x 256 MiB
    small = replace(big, write_buffer_size=4 * MiB)
    assert wear_model.wal_flushed(big, fams, 100 * MiB)
    assert not wear_model.wal_flushed(small, fams, 100 * MiB)
    for c, seconds in ((big, 400.0), (small, 40.0), (small, 20.0)):
        record(sr, 'candidate', 'infeasible', replace(measured(900), seconds=seconds))
        sr.s.trials[-1] = replace(sr.s.trials[-1], candidate=c, seconds=seconds + 5.0)
    sr.s.wal_flushed_prior = 0.5  # as drawn (this space's draws hold none)
    t = sr.time_said(canary, preconditioned=False)
    # 2 left, each 5 s around a window of 0.5 x 400 + 0.5 x 30 (not the mean, 153 s)
    assert t.keep_seconds == pytest.approx(2 * (5.0 + 0.5 * 400.0 + 0.5 * 30.0))


def test_a_wear_search_window_takes_the_kind_not_yet_seen_at_the_baseline_runs() -> None:
    # defaults run 10 (wear, seed 0): its first candidates were all flushed by
    # the WAL limit (452-868 s); the forecast took the others at the mean of
    # every window so far (339 s) where they ran 30-46 s, as the runs' 47 s
    sr = wear_search_after_runs(trials=4)
    canary = sr.s.canary
    big = sr.space.base_candidate()
    for seconds in (800.0, 600.0):
        record(sr, 'candidate', 'infeasible', replace(measured(900), seconds=seconds))
        sr.s.trials[-1] = replace(sr.s.trials[-1], candidate=big, seconds=seconds + 5.0)
    sr.s.wal_flushed_prior = 0.5
    t = sr.time_said(canary, preconditioned=False)
    # 2 left, each 5 s around 0.5 x 700 (the long ones' mean) + 0.5 x 10 (the runs')
    assert t.keep_seconds == pytest.approx(2 * (5.0 + 0.5 * 700.0 + 0.5 * 10.0))


def test_the_wal_limits_share_is_drawn_with_the_prior_under_wear_only() -> None:
    sr, _ = search()
    sr.settings = replace(sr.settings, objective='wear')
    sr.space.max_total_wal_size = 64 * MiB
    sr._draw_prior()
    assert sr.s.wal_flushed_prior is not None and 0.0 < sr.s.wal_flushed_prior < 1.0
    sr, _ = search()
    sr._draw_prior()
    assert sr.s.wal_flushed_prior is None


@pytest.mark.parametrize('start,prior', [(None, 0.0), (BLOG_SMALL, 0.5)])
def test_under_wear_the_prior_before_any_window_is_the_models_at_the_labs_calibration(
        start: Optional[str], prior: float) -> None:
    # defaults run 7 (wear, Tentacle's default): before its baseline a finalist
    # was 89-100% likely, the forecast 2.6-3.2x the 67 min it took; the model
    # at the lab's calibration sees no candidate 3% under that default's bytes
    # (its 1-GiB WAL limit flushes nearly all as it does the default), and half
    # the space (the half a window may still refuse) under the blog string's
    clock = FakeClock()
    cluster = FakeCluster(clock, defaults=TENTACLE_DEFAULTS)
    if start is not None:
        cluster.config_set('osd.1', 'bluestore_rocksdb_options', start)
        cluster.running[1] = start
    params = Params(osd=1, trials=12, duration=10.0, workload=CLIENT)
    st = Settings(objective='wear')
    state = session_start.first_state(cluster, params, st, clock())
    space = SearchSpace(compressions=st.compressions, base=parse_options(state.base_options),
                        column_families=parse_sharding(TENTACLE_DEFAULTS['bluestore_rocksdb_cfs']))
    sr = Search(state, space, st, params, state.release_default, clock)
    assert sr.finalist_chance() == 1 - 0.5 ** 12  # no prior: one half a candidate
    sr.before_baseline(None)
    assert sr.s.feasible_prior == pytest.approx(prior, abs=0.02)
    assert (sr.finalist_chance() > 0.9) == (prior > 0)
