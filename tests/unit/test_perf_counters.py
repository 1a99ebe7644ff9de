"""A search window's verdict, score and what the optimizer is told
(perf_counters.judged), alone."""
import math

import pytest

from rocks_autotune.perf_counters import INFEASIBLE_WEIGHT, Baseline, Measurement, judged
from rocks_autotune.workload import CLIENT


def window(iops: float, write_amp: float) -> Measurement:
    return Measurement(seconds=20.0, client_bytes=1, db_bytes=1, wal_bytes=1,
                       write_amp=write_amp, kv_sync_lat_ms=1.0, kv_commit_lat_ms=1.0,
                       kv_flush_lat_ms=1.0, kv_syncs=1, iops=iops, flushes=0.0,
                       window_short=False)


BASE = Baseline(kv_sync_lat_ms=1.0, iops=1000.0, write_amp=0.5, runs=4, kv_sync_lat_spread=0.1,
                iops_spread=0.1, write_amp_spread=0.1)


def test_within_the_budget_the_optimizer_is_told_the_score() -> None:
    verdict, score, told = judged(window(1100.0, 0.55), BASE, 1.2, CLIENT)
    assert verdict == 'feasible' and score == told == pytest.approx(-math.log(1.1))


def test_over_the_budget_it_is_told_the_score_plus_a_penalty_on_how_far_over() -> None:
    verdict, score, told = judged(window(1500.0, 0.9), BASE, 1.2, CLIENT)
    assert verdict == 'infeasible' and score == pytest.approx(-math.log(1.5))
    assert told == pytest.approx(score + INFEASIBLE_WEIGHT * math.log(0.9 / 0.5 / 1.2))
