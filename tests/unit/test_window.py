"""Measurement windows against the fake cluster: every window of a
confirmation has one length, long enough by bytes for the slowest config it
compares to go through an L0 compaction cycle; the cap marks a window short;
WAL and SST bytes come apart."""
import dataclasses
import math
from typing import Any, Optional, Tuple

import pytest

from fake_cluster import FakeClock, FakeCluster
from rocks_autotune import perf_counters, window
from rocks_autotune.perf_counters import Measurement
from rocks_autotune.rocksdb_stats import KvDelta
from rocks_autotune.rocksdb_options import PACIFIC_DEFAULT, parse_options
from rocks_autotune.space import MiB, SearchSpace
from rocks_autotune.window import Window, WindowSettings, confirmation_length
from rocks_autotune.workload import BenchWorkload

# small memtables flushed in pairs, L0 compacts at 2 files: a cycle every 32 MiB of WAL
SMALL = SearchSpace.render(parse_options(PACIFIC_DEFAULT), dataclasses.replace(
    SearchSpace.candidate_from_options(parse_options(PACIFIC_DEFAULT)),
    write_buffer_size=8 * MiB, min_write_buffer_number_to_merge=2,
    level0_file_num_compaction_trigger=2))
# Pacific's default: 256 MiB memtables, L0 compacts at RocksDB's 4: 1 GiB per cycle


def run_window(options: str, length: Optional[float], duration: float = 5.0,
               factor: float = 40.0) -> Tuple[Measurement, int, FakeCluster]:
    """One window on osd.0 running `options`; the measurement and how many
    compactions the fake's RocksDB ran during it."""
    clock = FakeClock()
    cluster = FakeCluster(clock)
    cluster.config_set('osd.0', 'bluestore_rocksdb_options', options)
    cluster.restart_osd(0)
    clock.advance(cluster.restart_delay)
    state: Any = {'window': None, 'iops_estimate': None}
    w = Window(cluster, 0, BenchWorkload(cluster, 0, chunk_seconds=1.0), WindowSettings(
        warmup=1.0, duration=duration, min_flushes=0.0, max_window_factor=factor,
        extend_seconds=1.0), state)
    c = SearchSpace.candidate_from_options(parse_options(options))
    w.begin(clock())
    since = clock()
    while True:
        done, delay = w.warmup(clock(), since)
        if done:
            break
        clock.advance(delay)
    before = cluster.compactions[0]
    for _ in range(10000):
        m, delay = w.measure(clock(), c, length=length)
        if m is not None:
            return m, cluster.compactions[0] - before, cluster
        clock.advance(delay)
    raise AssertionError('the window never ended')


def candidate(options: str) -> Any:
    return SearchSpace.candidate_from_options(parse_options(options))


def test_the_confirmation_length_is_what_the_slowest_config_needs_for_a_cycle() -> None:
    small, _, _ = run_window(SMALL, length=None)
    big, _, _ = run_window(PACIFIC_DEFAULT, length=None)
    # from the search windows' WAL rate: 32 MiB against 1 GiB per cycle
    length = confirmation_length([(candidate(SMALL), [small]),
                                  (candidate(PACIFIC_DEFAULT), [big])], 5.0, 200.0)
    assert length == confirmation_length([(candidate(PACIFIC_DEFAULT), [big])], 5.0, 200.0)
    assert 20 < length < 200
    assert confirmation_length([(candidate(SMALL), [small])], 5.0, 200.0) == 5.0  # at least
    assert confirmation_length([(candidate(PACIFIC_DEFAULT), [big])], 5.0, 10.0) == 10.0  # cap
    assert confirmation_length([(candidate(SMALL), [])], 5.0, 200.0) == 5.0  # nothing known
    # both configs measured over that one length: each went through a cycle
    for options in (SMALL, PACIFIC_DEFAULT):
        m, compactions, _ = run_window(options, length=length)
        assert not m.window_short
        assert m.l0_cycles is not None and m.l0_cycles >= 1.0
        assert compactions >= 1  # the fake's RocksDB did compact in the window
        assert length <= m.seconds < length + 2  # one length: not ended early by bytes


def test_a_search_window_ends_by_the_clock_and_the_cap_marks_a_short_one() -> None:
    search, _, _ = run_window(PACIFIC_DEFAULT, length=None)
    assert 5.0 <= search.seconds < 7.0 and not search.window_short
    assert search.l0_cycles is not None and search.l0_cycles < 1.0
    capped, compactions, _ = run_window(PACIFIC_DEFAULT, length=10.0)
    assert 10.0 <= capped.seconds < 12.0
    assert capped.window_short and compactions == 0
    small, _, _ = run_window(SMALL, length=10.0)
    assert 10.0 <= small.seconds < 12.0 and not small.window_short


def test_wal_and_sst_bytes_are_reported_apart() -> None:
    m, _, _ = run_window(SMALL, length=30.0)
    assert m.sst_bytes is not None and m.sst_files is not None
    assert m.wal_bytes > 0 and m.sst_bytes > 0 and m.sst_files >= 3
    assert m.db_bytes == m.wal_bytes + m.sst_bytes  # nothing on a slow device here
    # osd bench writes below the PG layer: no client op latency under it
    assert m.op_w_lat_ms is None


def test_measurements_recorded_before_these_figures_still_load() -> None:
    m, _, _ = run_window(SMALL, length=30.0)
    old = {k: v for k, v in m.to_dict().items()
           if k not in ('sst_bytes', 'sst_files', 'op_w_lat_ms', 'l0_cycles')}
    back = Measurement.from_dict(old)
    assert back.sst_bytes is None and back.l0_cycles is None and back.iops == m.iops


def test_l0_cycles_is_the_smaller_of_what_the_wal_and_the_sst_files_allow() -> None:
    def snap(wal: float, files: float) -> Any:
        return {'bluefs': {'bytes_written_wal': wal, 'files_written_sst': files}}
    zero = snap(0, 0)
    # 4 flushes of 16 MiB at trigger 2: two cycles by the WAL; 3 files: one by the files
    assert perf_counters.l0_cycles(zero, snap(64 * MiB, 3), 16 * MiB, 2) == 1.0
    assert perf_counters.l0_cycles(zero, snap(16 * MiB, 30), 16 * MiB, 2) == 0.5
    assert perf_counters.l0_cycles(zero, snap(16 * MiB, 30), 16 * MiB, 0) == 0.0


def test_with_rocksdbs_counts_the_length_is_the_slowest_configs_trigger_at_its_flush_rate(
        ) -> None:
    def counted(flushes: int, seconds: float) -> Measurement:
        m, _, _ = run_window(SMALL, length=None)
        m.cf_flushes, m.seconds = flushes, seconds
        return m
    small, default = candidate(SMALL), candidate(PACIFIC_DEFAULT)
    # SMALL: 3 flushes in 30 s; the default: 3 in 180 s, its trigger 4 flushes
    both = [(small, [counted(3, 30.0)]), (default, [counted(2, 90.0), counted(1, 90.0)])]
    need = window.CYCLE_MARGIN * default.level0_file_num_compaction_trigger * 60.0
    assert confirmation_length(both, 5.0, 3600.0) == pytest.approx(need)
    assert confirmation_length(both, 5.0, 100.0) == 100.0
    # no flush counted anywhere: no rate, so the limit
    assert confirmation_length([(small, [counted(0, 30.0)]), (default, [counted(0, 45.0)])],
                               5.0, 600.0) == 600.0


def test_a_config_whose_windows_counted_no_flush_is_timed_by_the_loads_fill_rate() -> None:
    def counted(flushes: int, seconds: float) -> Measurement:
        m, _, _ = run_window(SMALL, length=None)
        m.cf_flushes, m.seconds = flushes, seconds
        return m
    small, default = candidate(SMALL), candidate(PACIFIC_DEFAULT)
    # SMALL flushed 6 times (16 MiB each) in 60 s; the default none in 30 s:
    # the load filled memtables at 96 MiB over 90 s, whatever the config
    configs = [(small, [counted(6, 60.0)]), (default, [counted(0, 30.0)])]
    rate = 6 * window.flush_size(small) / 90.0
    assert window.fill_rate(configs) == pytest.approx(rate)
    need = (window.CYCLE_MARGIN * default.level0_file_num_compaction_trigger
            * window.flush_size(default) / rate)
    assert window.steady_window(default, [counted(0, 30.0)], rate) == pytest.approx(need)
    assert confirmation_length(configs, 5.0, 1e9) == pytest.approx(need)
    assert confirmation_length(configs, 5.0, 600.0) == 600.0
    # with 3 flushes of its own, a config's own rate counts, not the load's
    assert window.steady_window(small, [counted(6, 60.0)], rate / 100) == pytest.approx(
        window.CYCLE_MARGIN * small.level0_file_num_compaction_trigger * 10.0)
    # fewer than 3 of its own: the load's rate, when there is one
    assert window.steady_window(small, [counted(1, 60.0)], rate) == pytest.approx(
        window.CYCLE_MARGIN * small.level0_file_num_compaction_trigger
        * window.flush_size(small) / rate)
    assert window.steady_window(small, [counted(1, 60.0)], None) == pytest.approx(
        window.CYCLE_MARGIN * small.level0_file_num_compaction_trigger * 60.0)
    # nothing flushed anywhere: unknown but long; no counts at all: None
    assert window.steady_window(default, [counted(0, 30.0)], 0.0) == math.inf
    m, _, _ = run_window(SMALL, length=None)
    m.cf_flushes = None
    assert window.fill_rate([(small, [m])]) is None
    assert window.steady_window(small, [m], None) is None


def _dump(wal: float, sst: float, client: float) -> Any:
    lat = {'avgcount': 10 if client else 0, 'sum': 0.01 if client else 0.0}
    return {'bluefs': {'bytes_written_wal': wal, 'bytes_written_sst': sst,
                       'bytes_written_slow': 0, 'files_written_sst': 0},
            'osd': {'op_w_in_bytes': client, 'op_w_latency': lat},
            'bluestore': {'kv_sync_lat': lat, 'kv_commit_lat': lat, 'kv_flush_lat': lat}}


def test_write_amp_counts_rocksdbs_own_bytes_when_the_canary_gives_them() -> None:
    # 100 MiB of client writes; BlueFS wrote 170 MiB of WAL (each sync padded
    # to 4 KiB) and 30 of SST; RocksDB itself 100 of WAL, 20 flushed, 10 compacted
    before, after = _dump(0, 0, 0), _dump(170 * MiB, 30 * MiB, 100 * MiB)
    kv = KvDelta(wal_bytes=100 * MiB, flush_bytes=20 * MiB, compaction_bytes=10 * MiB,
                 busiest_cf='O-1', flushes=2, compactions=1)
    m = perf_counters.measure(before, after, 60.0, 16 * MiB, 0.0, kv=kv)
    assert (m.write_amp_by, m.write_amp, m.bluefs_write_amp) == (
        perf_counters.ROCKSDB, pytest.approx(1.3), pytest.approx(2.0))
    assert (m.rocksdb_wal_bytes, m.flush_bytes, m.compaction_bytes) == (
        100 * MiB, 20 * MiB, 10 * MiB)
    # without them (or with statistics that counted nothing): BlueFS's bytes
    for no in (None, KvDelta(0, 0, 0, '', 0, 0)):
        m = perf_counters.measure(before, after, 60.0, 16 * MiB, 0.0, kv=no)
        assert (m.write_amp_by, m.write_amp) == (perf_counters.BLUEFS, pytest.approx(2.0))


def test_a_window_and_a_baseline_counted_differently_compare_by_bluefs() -> None:
    before, after = _dump(0, 0, 0), _dump(170 * MiB, 30 * MiB, 100 * MiB)
    kv = KvDelta(100 * MiB, 20 * MiB, 10 * MiB, 'O-1', 2, 1)
    counted = perf_counters.measure(before, after, 60.0, 16 * MiB, 0.0, kv=kv)
    bluefs = perf_counters.measure(before, after, 60.0, 16 * MiB, 0.0)
    counted.iops = bluefs.iops = 1000.0
    base = perf_counters.Baseline.of([counted, counted], 'osd-bench')
    assert base.write_amp_by == perf_counters.ROCKSDB and base.write_amp == pytest.approx(1.3)
    assert perf_counters.write_amp_ratio(counted, base) == pytest.approx(1.0)
    # one run without RocksDB's bytes: the whole baseline is BlueFS's
    mixed = perf_counters.Baseline.of([counted, bluefs], 'osd-bench')
    assert mixed.write_amp_by == perf_counters.BLUEFS and mixed.write_amp == pytest.approx(2.0)
    assert perf_counters.write_amp_ratio(counted, mixed) == pytest.approx(1.0)
    assert perf_counters.feasible(counted, mixed, 1.0)
    # an old record (BlueFS's bytes, no write_amp_by) against a new one
    old = {'write_amp': 2.2}
    assert perf_counters.write_amps(counted.to_dict(), old) == (pytest.approx(2.0), 2.2)
