import dataclasses
import math
import statistics
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

from rocks_autotune.optimizer import FAILED_MARGIN, TrialOptimizer
from rocks_autotune.rocksdb_options import (NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT,
                                            parse_options)
from rocks_autotune.space import MiB, Candidate, SearchSpace
from space_grid import on_grid

BASE = parse_options(PACIFIC_DEFAULT)
PACIFIC = SearchSpace.candidate_from_options(BASE)
NEW = SearchSpace.candidate_from_options(parse_options(NEW_TUNING))
NEW_LZ4 = SearchSpace.candidate_from_options(parse_options(NEW_TUNING_LZ4))
# What a cluster might run today: off the grid, and unsafe (8 GiB of memtables).
UNSAFE_CURRENT = dataclasses.replace(PACIFIC, max_write_buffer_number=32,
                                     write_buffer_size=256 * MiB)

# Quadratic bowl in the normalized (log where the prior is log) search space.
# Three options dominate, as write_buffer_size / merge / L0 trigger do in
# seed 000; the others matter a little; lz4 is worth 0.2.
TARGET = (0.6, 0.3, 0.35, 0.5, 0.5, 0.5)
WEIGHT = (0.1, 1.0, 1.0, 1.0, 0.1, 0.1)
LZ4_GAIN = 0.2
BOWL_RANGE = sum(w * max(t, 1 - t) ** 2 for w, t in zip(WEIGHT, TARGET)) + LZ4_GAIN


def bowl(space: SearchSpace, c: Candidate) -> float:
    s = 0.0
    for d, v, t, w in zip(space.dimensions(), space.to_point(c), TARGET, WEIGHT):
        assert isinstance(v, int)
        if d.prior == 'log-uniform':
            u = (math.log(v) - math.log(d.low)) / (math.log(d.high) - math.log(d.low))
        else:
            u = (v - d.low) / (d.high - d.low)
        s += w * (u - t) ** 2
    return s + (0.0 if c.compression == 'lz4' else LZ4_GAIN)


def run(space: SearchSpace, seed: int, trials: int, n_initial_points: int,
        noise: float = 0.01) -> Tuple[List[Candidate], float]:
    """Optimize the noisy bowl; return every candidate asked and the best true value."""
    rng = np.random.RandomState(seed)
    opt = TrialOptimizer(space, seed=seed, n_initial_points=n_initial_points)
    asked = []
    for _ in range(trials):
        c = opt.ask()
        asked.append(c)
        opt.tell(c, bowl(space, c) + noise * rng.randn())
    return asked, min(bowl(space, c) for c in asked)


# two seeds: a guard that the GP leads the search, not a measure of how well
# (qa/bench/optimizer_efficiency.py measures that, on the lab's surface);
# each BO run is ~10 s of GP fits
SEEDS = range(2)
TRIALS = 25


@pytest.fixture(scope='module')
def benchmark() -> Dict[str, List[Tuple[List[Candidate], float]]]:
    space = SearchSpace(base=BASE)
    return {
        'bo': [run(space, s, TRIALS, n_initial_points=3) for s in SEEDS],
        # "Nothing in particular": the same safe sampler, never switching to the GP.
        'random': [run(space, s, TRIALS, n_initial_points=TRIALS) for s in SEEDS],
    }


def test_benchmark_asks_are_safe_and_in_space(
        benchmark: Dict[str, List[Tuple[List[Candidate], float]]]) -> None:
    space = SearchSpace(base=BASE)
    for asked, _ in benchmark['bo']:
        assert len(asked) == TRIALS
        for c in asked:
            assert space.violations(c) == []
            assert on_grid(space, c)


def test_benchmark_finds_near_minimum(
        benchmark: Dict[str, List[Tuple[List[Candidate], float]]]) -> None:
    bo = [best for _, best in benchmark['bo']]
    rs = [best for _, best in benchmark['random']]
    # Minimum is 0; "near" = within 10 % of the bowl's range.
    # (Observed: 7 of 8 seeds within 3 %, the worst at 7.5 %; seeds 0 and 1
    # 0.8 % and 1.3 %, random search 1.7 % and 8.1 %.)
    assert all(b <= 0.10 * BOWL_RANGE for b in bo), (bo, BOWL_RANGE)
    # and clearly better than random search with the same budget (which is
    # what a GP that leads nowhere asks: the same sampler, the same seed)
    assert statistics.mean(bo) < 0.75 * statistics.mean(rs), (bo, rs)


def test_asks_safe_in_tight_space() -> None:
    # Only ~5 % of the box is safe here: 512 MiB of memtables, 256 MiB WAL,
    # slowdown at 8, no snappy.
    space = SearchSpace(compressions=['none', 'lz4'], max_memtable_bytes=512 * MiB,
                        base={'max_total_wal_size': '256M',
                              'level0_slowdown_writes_trigger': '8',
                              'level0_stop_writes_trigger': '12'})
    rng = np.random.RandomState(3)
    # 14 constrained random asks, then 16 from the GP (its fits are the cost)
    opt = TrialOptimizer(space, seed=3, n_initial_points=14, acq_points=500)
    asked = []
    for _ in range(30):
        c = opt.ask()
        asked.append(c)
        assert space.violations(c) == [], c
        assert on_grid(space, c)
        opt.tell(c, bowl(space, c) + 0.01 * rng.randn())
    assert len(set(asked)) >= 25  # it explores, not repeats


def test_warm_start_order_skips_unsafe_duplicates_and_told() -> None:
    space = SearchSpace(base=BASE)
    assert space.violations(UNSAFE_CURRENT)
    opt = TrialOptimizer(space, seed=1,
                         warm_start=[UNSAFE_CURRENT, PACIFIC, NEW, PACIFIC, NEW_LZ4])
    assert opt.warm_start == [PACIFIC, NEW, NEW_LZ4]
    assert opt.ask() == PACIFIC
    assert opt.ask() == PACIFIC  # no tell yet: same proposal
    opt.tell(PACIFIC, 1.0)
    assert opt.ask() == NEW
    opt.tell(NEW_LZ4, 0.8)  # told out of order (e.g. measured by the session)
    assert opt.ask() == NEW
    opt.tell_failed(NEW)  # failed still counts as told
    c = opt.ask()
    assert c not in (PACIFIC, NEW, NEW_LZ4)
    assert space.violations(c) == []


def test_warm_start_out_of_bounds_but_safe_is_proposed() -> None:
    space = SearchSpace(base=BASE)
    big = dataclasses.replace(PACIFIC, max_bytes_for_level_base=8 << 30)  # over 4 GiB bound
    assert not on_grid(space, big) and space.violations(big) == []
    opt = TrialOptimizer(space, warm_start=[big])
    assert opt.ask() == big
    opt.tell(big, 1.0)
    assert opt.ask() != big


def test_ask_is_repeatable_without_tell() -> None:
    space = SearchSpace(base=BASE)
    opt = TrialOptimizer(space, seed=9, n_initial_points=2)
    for i in range(6):  # random phase and GP phase
        c = opt.ask()
        assert opt.ask() == c
        opt.tell(c, float(i % 3))


def _history(opt: TrialOptimizer, space: SearchSpace, n: int
             ) -> List[Tuple[Candidate, Optional[float]]]:
    hist: List[Tuple[Candidate, Optional[float]]] = []
    for i in range(n):
        c = opt.ask()
        if i % 4 == 1:
            opt.ask()  # a mgr that asked twice (e.g. status probe) must not matter
        if i == 5:
            opt.tell_failed(c)
            hist.append((c, None))
            continue
        if i == 7:
            # the session also tells an out-of-band measurement (unsafe, off-grid)
            opt.tell(UNSAFE_CURRENT, 3.0)
            hist.append((UNSAFE_CURRENT, 3.0))
        y = bowl(space, c)
        opt.tell(c, y)
        hist.append((c, y))
    return hist


@pytest.mark.parametrize('n', [2, 5, 13])  # warm-start phase, random phase, GP phase
def test_replay_gives_same_next_ask(n: int) -> None:
    space = SearchSpace(base=BASE)
    warm = [PACIFIC, NEW, NEW_LZ4]
    orig = TrialOptimizer(space, seed=42, warm_start=warm)
    hist = _history(orig, space, n)
    expected = orig.ask()

    rebuilt = TrialOptimizer(space, seed=42, warm_start=warm)
    rebuilt.replay(hist)
    assert rebuilt.n_told == orig.n_told
    assert rebuilt.ask() == expected
    # and they keep agreeing afterwards
    for _ in range(2):
        a, b = orig.ask(), rebuilt.ask()
        assert a == b
        orig.tell(a, bowl(space, a))
        rebuilt.tell(b, bowl(space, b))
    assert orig.ask() == rebuilt.ask()


def test_different_seed_differs() -> None:
    space = SearchSpace(base=BASE)
    assert TrialOptimizer(space, seed=1).ask() != TrialOptimizer(space, seed=2).ask()


def test_tell_out_of_bounds_is_clamped() -> None:
    space = SearchSpace(base=BASE)
    opt = TrialOptimizer(space, seed=0)
    huge = Candidate(max_write_buffer_number=512, write_buffer_size=1 << 30,
                     min_write_buffer_number_to_merge=64, level0_file_num_compaction_trigger=40,
                     max_bytes_for_level_base=16 << 30, max_bytes_for_level_multiplier=20,
                     compression='lz4')
    tiny = Candidate(max_write_buffer_number=1, write_buffer_size=1 << 20,
                     min_write_buffer_number_to_merge=1, level0_file_num_compaction_trigger=1,
                     max_bytes_for_level_base=64 << 20, max_bytes_for_level_multiplier=2,
                     compression='none')
    opt.tell(huge, 2.0)
    opt.tell(tiny, 1.0)
    assert opt._opt.Xi == [[128, 256, 32, 16, 4096, 10, 'lz4'], [2, 4, 1, 2, 256, 4, 'none']]
    for _ in range(5):
        c = opt.ask()
        assert space.violations(c) == [] and on_grid(space, c)
        opt.tell(c, 1.5)


def test_tell_unsupported_compression_is_counted_not_learned() -> None:
    space = SearchSpace(base=BASE, compressions=['none', 'lz4'])
    opt = TrialOptimizer(space, seed=0)
    snappy = SearchSpace.candidate_from_options({})  # RocksDB default: snappy
    opt.tell(snappy, 1.0)
    assert opt.n_told == 1
    assert opt._opt.Xi == []
    assert space.violations(opt.ask()) == []


def test_tell_rejects_non_finite() -> None:
    opt = TrialOptimizer(SearchSpace(base=BASE))
    for bad in (float('nan'), float('inf'), -float('inf')):
        with pytest.raises(ValueError):
            opt.tell(PACIFIC, bad)
    assert opt.n_told == 0


def test_failed_trial_penalty() -> None:
    space = SearchSpace(base=BASE)
    opt = TrialOptimizer(space, seed=0)
    opt.tell(PACIFIC, 2.0)
    opt.tell(NEW, 1.0)
    c = opt.ask()
    opt.tell_failed(c)
    assert opt._opt.yi[-1] == pytest.approx(2.0 + FAILED_MARGIN * 2.0)
    assert opt._opt.yi[-1] > max(opt._opt.yi[:-1])


def test_failed_before_any_score_is_held_then_penalized() -> None:
    space = SearchSpace(base=BASE)
    opt = TrialOptimizer(space, seed=0)
    opt.tell_failed(NEW)
    assert opt._opt.Xi == [] and opt.n_told == 1
    assert opt.ask() != NEW  # a told (failed) candidate is not proposed again as warm start
    opt.tell(PACIFIC, -4.0)  # negative scores work too (e.g. -IOPS)
    assert opt._opt.yi == [-4.0, pytest.approx(-4.0 + FAILED_MARGIN * 4.0)]
    assert opt._opt.yi[1] > opt._opt.yi[0]


def test_failed_region_is_avoided() -> None:
    # Everything with write_buffer_size >= 64 MiB "fails": after learning
    # that, the GP should mostly propose smaller buffers.
    space = SearchSpace(base=BASE)
    opt = TrialOptimizer(space, seed=4, n_initial_points=6)
    asked = []
    for _ in range(20):
        c = opt.ask()
        asked.append(c)
        if c.write_buffer_size >= 64 * MiB:
            opt.tell_failed(c)
        else:
            opt.tell(c, bowl(space, c))
    late = asked[10:]
    assert sum(c.write_buffer_size >= 64 * MiB for c in late) <= 3, late


def test_space_without_safe_points_is_refused() -> None:
    # slowdown >= stop in the base makes every candidate unsafe
    hopeless = SearchSpace(base={'level0_slowdown_writes_trigger': '40'})
    with pytest.raises(ValueError, match='level0_stop_writes_trigger'):
        TrialOptimizer(hopeless)
    # 8 MiB of memtables at most: only 2 x 4 MiB fits, ~1 point in 1000
    with pytest.raises(ValueError, match='safe'):
        TrialOptimizer(SearchSpace(max_memtable_bytes=8 * MiB))


def test_invalid_n_initial_points() -> None:
    with pytest.raises(ValueError):
        TrialOptimizer(SearchSpace(), n_initial_points=-1)


# ---------------------------------------------------------------- rank by the model

def _safe_points(space: SearchSpace, seed: int, n: int) -> List[Candidate]:
    opt = TrialOptimizer(space, seed=seed)
    pts = [space.from_point(x) for x in opt._opt.space.rvs(n_samples=400, random_state=seed)]
    return [c for c in pts if not space.violations(c)][:n]


def test_a_lucky_window_of_a_config_measured_twice_does_not_win_the_ranking() -> None:
    """Each config one noisy window, the current options three (the baseline
    runs); a middling config also got one window luckier than any other.  The
    raw windows crown it every time; the model, which averages its two
    windows, seldom does."""
    space = SearchSpace(base=BASE)
    lucky_wins = 0
    seeds = range(10)
    for seed in seeds:
        rng = np.random.RandomState(seed)
        pts = _safe_points(space, seed, 14)
        truth = {c: bowl(space, c) for c in pts}
        lucky = sorted(truth, key=lambda c: truth[c])[len(pts) // 2]
        told = [(PACIFIC, bowl(space, PACIFIC) + 0.1 * rng.randn()) for _ in range(3)]
        told += [(c, truth[c] + 0.1 * rng.randn()) for c in pts]
        told.append((lucky, min(y for _, y in told) - 0.1))
        assert min(told, key=lambda cy: cy[1])[0] == lucky  # the raw windows' pick
        opt = TrialOptimizer(space, seed=seed)
        opt.replay(told)
        ranked = opt.rank(pts, 3)
        assert [m for _, m in ranked] == sorted(m for _, m in ranked)
        lucky_wins += ranked[0][0] == lucky
    # measured: 2 of these 10 (3 of 20 seeds)
    assert lucky_wins <= 3


def test_rank_counts_each_config_once_and_leaves_out_what_it_cannot_place() -> None:
    space = SearchSpace(base=BASE, compressions=['none', 'lz4'])
    opt = TrialOptimizer(space, seed=0, n_initial_points=5)
    assert opt.rank([PACIFIC], 3) == []  # nothing told: no model
    # fewer points than skopt's initial ones: no skopt model yet, ranked all the same
    opt.tell(PACIFIC, 0.0)
    opt.tell(NEW, -0.5)
    opt.tell(NEW_LZ4, -1.0)
    assert not opt._opt.models
    snappy = dataclasses.replace(NEW, compression='snappy')
    ranked = opt.rank([NEW, PACIFIC, NEW_LZ4, NEW, snappy], 5)
    assert [c for c, _ in ranked] == [NEW_LZ4, NEW, PACIFIC]
    assert opt.rank([NEW, PACIFIC, NEW_LZ4], 1)[0][0] == NEW_LZ4
    assert opt.rank([NEW], 0) == []
    # the same after a replay
    again = TrialOptimizer(space, seed=0, n_initial_points=5)
    again.replay([(PACIFIC, 0.0), (NEW, -0.5), (NEW_LZ4, -1.0)])
    assert again.rank([NEW, PACIFIC, NEW_LZ4], 3) == opt.rank([NEW, PACIFIC, NEW_LZ4], 3)
