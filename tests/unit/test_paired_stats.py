"""The confirmation statistics: the signed-rank interval, its coverage, how
often a candidate that does nothing is recommended, and what too little or
degenerate data gives."""
import itertools
import math
import random
from typing import Any, Dict, List, Optional

import pytest
from scipy import stats as sps

from rocks_autotune import paired_stats as st
from session_harness import measurement

B = 'baseline'


def test_the_null_distribution_is_the_one_of_every_sign_pattern() -> None:
    for n in range(1, 9):
        sums = [sum(i + 1 for i, s in enumerate(signs) if s)
                for signs in itertools.product((0, 1), repeat=n)]
        expect = [sum(1 for x in sums if x <= t) / len(sums) for t in range(n * (n + 1) // 2 + 1)]
        assert st.signed_rank_cdf(n) == pytest.approx(expect)


@pytest.mark.parametrize('n', [5, 6, 7, 9, 12])
def test_the_interval_is_the_inversion_of_scipys_signed_rank_test(n: int) -> None:
    rng = random.Random(n)
    xs = [rng.gauss(0.05, 0.1) for _ in range(n)]
    low, high = st.interval(xs)
    alpha = (1 - st.LEVEL) / 2
    eps = 1e-9

    def p(theta: float, alternative: str) -> float:
        return float(sps.wilcoxon([x - theta for x in xs], alternative=alternative,
                                  method='exact').pvalue)
    # just outside, the one-sided test rejects at 5%; just inside, it does not
    assert p(low - eps, 'greater') <= alpha < p(low + eps, 'greater')
    assert p(high + eps, 'less') <= alpha < p(high - eps, 'less')


def test_five_rounds_give_their_range_and_four_give_no_interval() -> None:
    assert st.cut(5) == 1 and st.signed_rank_cdf(5)[0] == 1 / 32
    assert st.interval([0.3, -0.1, 0.2, 0.0, 0.1]) == (-0.1, 0.3)
    assert st.interval([0.3, -0.1, 0.2, 0.0]) == (-math.inf, math.inf)
    assert st.interval([]) == (-math.inf, math.inf)


def _round(rng: random.Random, effects: Dict[str, float], sigma: float,
           wa: Optional[Dict[str, float]] = None) -> st.Round:
    """One round: a drift shared by every arm (what pairing cancels), and each
    measurement's own noise."""
    drift = rng.gauss(0, 0.3)
    out = {}
    for arm, effect in dict(effects, **{B: 0.0}).items():
        out[arm] = measurement(
            iops=1000 * math.exp(drift + effect + rng.gauss(0, sigma)),
            kv_sync_lat_ms=math.exp(rng.gauss(0, sigma)),
            write_amp=0.5 * (wa or {}).get(arm, 1.0) * math.exp(rng.gauss(0, 0.02)))
    return out


def typed(rounds: List[Dict[str, Any]]) -> List[st.Round]:
    """Rounds of figures as the statistics take them: each a Measurement."""
    return [{arm: None if m is None else measurement(**m) for arm, m in r.items()}
            for r in rounds]


def test_the_interval_covers_a_known_effect() -> None:
    effect = math.log(1.10)
    covered = 0
    runs = 2000
    for seed in range(runs):
        rng = random.Random(seed)
        rounds = [_round(rng, {'a': effect}, sigma=0.08) for _ in range(5)]
        low, high = st.interval(st.paired(rounds, 'a', B, 'iops'))
        covered += low <= effect <= high
    # exact coverage at 5 rounds: 1 - 2/32 = 93.75%
    assert covered / runs >= 0.92


def _recommended(effects: Dict[str, float], sigma: float, margin: float,
                 runs: int = 2000) -> float:
    """How often a session of 5 rounds recommends one of the arms (seeded)."""
    hits = 0
    for seed in range(runs):
        rng = random.Random(seed)
        rounds = [_round(rng, effects, sigma) for _ in range(5)]
        hits += bool(st.verdict(rounds, list(effects), B, 'iops', st.HIGHER, margin)[0])
    return hits / runs


@pytest.mark.parametrize('margin', [0.0, 0.03])
@pytest.mark.parametrize('sigma', [0.02, 0.1, 0.5])
def test_a_candidate_that_does_nothing_is_recommended_at_most_5_percent(
        margin: float, sigma: float) -> None:
    assert _recommended({'a': 0.0}, sigma, margin) <= 0.05


def test_three_candidates_that_do_nothing_pass_at_most_three_in_32() -> None:
    # the documented bound with k candidates, margin 0 (the worst case)
    assert _recommended({'a': 0.0, 'b': 0.0, 'c': 0.0}, 0.1, 0.0) <= 3 / 32 + 0.01


def test_a_real_effect_is_recommended_with_its_figures() -> None:
    rng = random.Random(7)
    rounds = [_round(rng, {'a': math.log(1.15), 'b': 0.0}, sigma=0.02) for _ in range(5)]
    rec, arms = st.verdict(rounds, ['a', 'b'], B, 'iops', st.HIGHER, 0.03)
    assert rec == ['a']
    a, b = arms
    assert a.verdict == 'passes' and b.verdict == 'below margin'
    r = a.objective.ratio
    assert r.low is not None and r.median is not None and r.high is not None
    assert 1.03 < r.low <= r.median <= r.high and r.rounds == 5
    assert len(r.per_round) == 5
    # write-amp and kv_sync are shown beside it, judged by nothing here
    assert a.kv_sync_lat.rounds == 5 and a.write_amp.rounds == 5


def test_power_a_15_percent_gain_under_modest_noise_is_mostly_found() -> None:
    assert _recommended({'a': math.log(1.15)}, 0.03, 0.03, runs=500) >= 0.8


def test_the_best_median_among_the_passing_wins_and_latency_is_lower_better() -> None:
    rounds = typed([{B: {'op_w_lat_ms': 1.0, 'write_amp': 1.0},
                     'a': {'op_w_lat_ms': 0.90 + 0.01 * i, 'write_amp': 1.0},
                     'b': {'op_w_lat_ms': 0.80 + 0.01 * i, 'write_amp': 1.0},
                     'c': {'op_w_lat_ms': 1.20, 'write_amp': 1.0}} for i in range(5)])
    rec, arms = st.verdict(rounds, ['a', 'b', 'c'], B, 'op_w_lat_ms', st.LOWER, 0.03)
    # the passing best first, by the median
    assert rec == ['b', 'a']
    assert [a.verdict for a in arms] == ['passes', 'passes', 'below margin']


def test_write_amp_in_the_rounds_is_shown_but_decides_nothing() -> None:
    # the rounds' windows are short of a compaction: write-amp is judged in
    # the steady check (steady_check.py), not here, however high it reads
    rounds = typed([{B: {'iops': 100.0, 'write_amp': 1.0},
                     'a': {'iops': 150.0, 'write_amp': 1.5}} for i in range(5)])
    rec, (a,) = st.verdict(rounds, ['a'], B, 'iops', st.HIGHER, 0.03)
    assert rec == ['a'] and a.verdict == 'passes'
    assert a.write_amp.median == pytest.approx(math.log(1.5))


def test_a_short_window_feeds_the_objective_but_never_the_write_amp_figure() -> None:
    def rounds(short_in: Any) -> List[st.Round]:
        # round 3's candidate window saw no compaction: its write-amp (1.3x)
        # is not a steady state's, and is left out of the figure shown
        return typed([{B: {'iops': 100.0, 'write_amp': 1.0, 'window_short': short_in(i, B)},
                       'a': {'iops': 150.0, 'write_amp': 1.3 if i == 3 else 1.0,
                             'window_short': short_in(i, 'a')}} for i in range(6)])
    rec, (a,) = st.verdict(rounds(lambda i, arm: i == 3 and arm == 'a'), ['a'], B, 'iops',
                           st.HIGHER, 0.03)
    assert a.objective.rounds == 6 and a.write_amp.rounds == 5
    assert rec == ['a']
    rec, (a,) = st.verdict(rounds(lambda i, arm: arm == B), ['a'], B, 'iops', st.HIGHER, 0.03)
    assert rec == ['a'] and a.write_amp.rounds == 0
    assert st.paired(rounds(lambda i, arm: True), 'a', B, 'write_amp') == []
    assert len(st.paired(rounds(lambda i, arm: True), 'a', B, 'iops')) == 6


def test_write_amp_pairs_by_rocksdbs_bytes_and_falls_back_to_bluefs_in_a_mixed_round(
        ) -> None:
    def m(wa: float, bluefs: float, by: str = 'rocksdb') -> Any:
        return measurement(iops=100.0, write_amp=wa, bluefs_write_amp=bluefs, write_amp_by=by)
    # RocksDB's bytes 1.2x, BlueFS's (padding included) 1.5x: the verdict's is 1.2x
    both = [{B: m(1.0, 2.0), 'a': m(1.2, 3.0)}]
    assert st.paired(both, 'a', B, 'write_amp') == [pytest.approx(math.log(1.2))]
    # the candidate's window gave no RocksDB bytes: both by BlueFS's
    mixed = [{B: m(1.0, 2.0), 'a': m(3.0, 3.0, 'bluefs')}]
    assert st.paired(mixed, 'a', B, 'write_amp') == [pytest.approx(math.log(1.5))]


def test_ties_and_degenerate_rounds() -> None:
    same = typed([{B: {'iops': 100.0, 'write_amp': 1.0},
                   'a': {'iops': 110.0, 'write_amp': 1.0}}] * 5)
    rec, (a,) = st.verdict(same, ['a'], B, 'iops', st.HIGHER, 0.03)
    # identical rounds: a zero-width interval, which clears the margin
    assert a.objective.low == a.objective.high == pytest.approx(math.log(1.1))
    assert rec == ['a']
    nothing = typed([{B: {'iops': 100.0, 'write_amp': 1.0},
                      'a': {'iops': 100.0, 'write_amp': 1.0}}] * 7)
    assert st.verdict(nothing, ['a'], B, 'iops', st.HIGHER, 0.0)[0] == []
    # four rounds cannot reach 90%, however good
    rec, (a,) = st.verdict(same[:4], ['a'], B, 'iops', st.HIGHER, 0.03)
    assert rec == [] and a.verdict == 'too few rounds'
    assert math.isinf(a.objective.low) and a.objective.ratio.low is None
    # rounds without a usable pair are left out: no baseline, no figure, zero, inf
    bad = typed([
        {'a': {'iops': 110.0, 'write_amp': 1.0}},
        {B: None, 'a': {'iops': 110.0, 'write_amp': 1.0}},
        {B: {'iops': 100.0, 'write_amp': 1.0}, 'a': {'iops': None, 'write_amp': 1.0}},
        {B: {'iops': 0.0, 'write_amp': 1.0}, 'a': {'iops': 110.0, 'write_amp': 1.0}},
        {B: {'iops': 100.0, 'write_amp': math.inf}, 'a': {'iops': 110.0, 'write_amp': 1.0}},
    ])
    assert st.paired(bad, 'a', B, 'iops') == [pytest.approx(math.log(1.1))]
    assert st.paired(bad, 'a', B, 'write_amp') == [0.0, 0.0]
    rec, (a,) = st.verdict(bad + same[:4], ['a'], B, 'iops', st.HIGHER, 0.03)
    assert a.objective.rounds == 5 and a.write_amp.rounds == 6 and rec == ['a']
    # each figure knows its round (1-based), for the panel's per-round chart
    assert a.objective.ratio.at == [5, 6, 7, 8, 9]
    assert st.verdict([], ['a'], B, 'iops', st.HIGHER, 0.03)[1][0].objective.median is None


def test_an_arm_taken_out_keeps_its_figures_and_says_why() -> None:
    same = typed([{B: {'iops': 100.0, 'write_amp': 1.0},
                   'a': {'iops': 110.0, 'write_amp': 1.0}}] * 5)
    rec, (a,) = st.verdict(same, ['a'], B, 'iops', st.HIGHER, 0.03,
                           out={'a': ('failed', 'failed in round 4: osd.0 is down')})
    assert rec == [] and a.verdict == 'failed' and a.objective.rounds == 5
    assert 'round 4' in a.why


def test_a_candidate_is_dropped_only_once_it_cannot_pass() -> None:
    up = [0.10, 0.08, 0.12]
    assert st.futile(up, 2, st.HIGHER, 0.03) == ''
    # at 5 rounds the bound is the worst round: one round under the margin decides
    assert 'margin' in st.futile([0.10, 0.01, 0.12], 2, st.HIGHER, 0.03)
    # with 7 rounds one bad round of three leaves room; three bad ones do not
    assert st.futile([0.10, -0.05, 0.12], 4, st.HIGHER, 0.03) == ''
    assert st.futile([-0.1, -0.05, -0.02], 4, st.HIGHER, 0.03) != ''
    # latency: lower is better
    assert st.futile([-0.10, -0.08, -0.12], 2, st.LOWER, 0.03) == ''
    assert st.futile([-0.10, 0.01, -0.12], 2, st.LOWER, 0.03) != ''
