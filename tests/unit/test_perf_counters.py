"""A search window's verdict, score and what the optimizer is told
(perf_counters.judged), alone."""
import math

import pytest

from rocks_autotune.perf_counters import (INFEASIBLE_WEIGHT, ROCKSDB, Baseline, Measurement,
                                          judged, write_amp_ratio)
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


def rocksdb_window(wal: float, flush: float = 0.0, client: int = 10 ** 9) -> Measurement:
    """A window counted by RocksDB's own bytes, `wal` and `flush` per client byte."""
    return Measurement(seconds=45.0, client_bytes=client, db_bytes=1, wal_bytes=1,
                       write_amp=wal + flush, kv_sync_lat_ms=1.0, kv_commit_lat_ms=1.0,
                       kv_flush_lat_ms=1.0, kv_syncs=1, iops=1200.0, flushes=0.0,
                       window_short=False, rocksdb_wal_bytes=int(wal * client),
                       flush_bytes=int(flush * client), write_amp_by=ROCKSDB,
                       bluefs_write_amp=1.2 * (wal + flush))


def test_write_amp_is_compared_at_the_baselines_wal_per_client_byte() -> None:
    # defaults run iops 5: 0.509 WAL bytes per client byte in the 4 baseline
    # runs, 0.578-0.582 in every candidate after (none flushed in its 45 s):
    # each read 1.14x the baseline's write-amp, over the 1.10 budget
    base = Baseline.of([rocksdb_window(0.509) for _ in range(4)], CLIENT)
    assert base.wal_per_byte == pytest.approx(0.509)
    assert Baseline.from_json(base.to_json()) == base
    assert write_amp_ratio(rocksdb_window(0.578), base) == pytest.approx(1.0)
    assert judged(rocksdb_window(0.578), base, 1.1, CLIENT)[0] == 'feasible'
    # what a candidate flushes still counts, per WAL byte
    assert write_amp_ratio(rocksdb_window(0.578, 0.578 * 0.2), base) == pytest.approx(1.2)
    # a baseline saved before it knew its WAL per byte, or BlueFS's counting: as counted
    old = {k: v for k, v in base.to_json().items() if k != 'wal_per_byte'}
    assert write_amp_ratio(rocksdb_window(0.578), Baseline.from_json(old)) == pytest.approx(
        0.578 / 0.509)
    assert write_amp_ratio(window(1000.0, 0.578), BASE) == pytest.approx(0.578 / 0.5)
