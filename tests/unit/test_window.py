"""Measurement windows against the fake cluster: every window of a
confirmation has one length, long enough by bytes for the slowest config it
compares to go through an L0 compaction cycle; the cap marks a window short;
WAL and SST bytes come apart."""
import dataclasses
import math
from typing import Any, Dict, Optional, Tuple

import pytest

from fake_cluster import TENTACLE_DEFAULTS, FakeClock, FakeCluster
from rocks_autotune import perf_counters, steady_check, window
from rocks_autotune.canary_record import CanaryRecord, PreconditionRecord, WindowRecord
from rocks_autotune.perf_counters import Measurement
from rocks_autotune.rocksdb_stats import KvDelta
from rocks_autotune.rocksdb_options import PACIFIC_DEFAULT, parse_options, parse_sharding
from rocks_autotune.space import MiB, SearchSpace, flush_capacity
from rocks_autotune.session_settings import Settings
from rocks_autotune.window import Window, WindowEnd, precondition_left, steady_length
from rocks_autotune.workload import BenchWorkload
from session_harness import measurement

# small memtables flushed in pairs, L0 compacts at 2 files: a cycle every 32 MiB of WAL
SMALL = SearchSpace.render(parse_options(PACIFIC_DEFAULT), dataclasses.replace(
    SearchSpace.candidate_from_options(parse_options(PACIFIC_DEFAULT)),
    write_buffer_size=8 * MiB, min_write_buffer_number_to_merge=2,
    level0_file_num_compaction_trigger=2))
# Pacific's default: 256 MiB memtables, L0 compacts at RocksDB's 4: 1 GiB per cycle


def run_window(options: str, length: Optional[float], duration: float = 5.0,
               factor: float = 40.0, wal_to_pass: Tuple[int, float] = (0, 0.0),
               kv: bool = False) -> Tuple[Measurement, int, FakeCluster]:
    """One window on osd.0 running `options` (`kv`: with RocksDB's own
    counts); the measurement and how many compactions the fake's RocksDB
    ran during it."""
    clock = FakeClock()
    cluster = FakeCluster(clock)
    cluster.config_set('osd.0', 'bluestore_rocksdb_options', options)
    if kv:
        cluster.config_set('osd.0', 'rocksdb_perf', 'true')
        cluster.config_set('osd.0', 'rocksdb_collect_compaction_stats', 'true')
    cluster.restart_osd(0)
    clock.advance(cluster.restart_delay)
    state, load = CanaryRecord({}, False, None), BenchWorkload(cluster, 0, chunk_seconds=1.0)
    w = Window(cluster, 0, lambda: load, Settings(
        warmup=1.0, min_flushes=0.0, max_window_factor=factor, bench_chunk_seconds=1.0),
        duration, state)
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
        m, delay = w.measure(clock(), c, WindowEnd(length, None, *wal_to_pass))
        if m is not None:
            return m, cluster.compactions[0] - before, cluster
        clock.advance(delay)
    raise AssertionError('the window never ended')


def candidate(options: str) -> Any:
    return SearchSpace.candidate_from_options(parse_options(options))


def test_the_steady_length_is_what_the_slowest_config_needs_for_a_cycle() -> None:
    small, _, _ = run_window(SMALL, length=None)
    big, _, _ = run_window(PACIFIC_DEFAULT, length=None)
    # from the search windows' WAL rate: 32 MiB against 1 GiB per cycle
    length = steady_length([(candidate(SMALL), [small]),
                           (candidate(PACIFIC_DEFAULT), [big])], 5.0, 200.0)
    assert length == steady_length([(candidate(PACIFIC_DEFAULT), [big])], 5.0, 200.0)
    assert 20 < length < 200
    assert steady_length([(candidate(SMALL), [small])], 5.0, 200.0) == 5.0  # at least
    assert steady_length([(candidate(PACIFIC_DEFAULT), [big])], 5.0, 10.0) == 10.0  # cap
    assert steady_length([(candidate(SMALL), [])], 5.0, 200.0) == 5.0  # nothing known
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


def test_a_search_window_can_run_until_rocksdb_logged_the_wal_asked() -> None:
    plain, _, _ = run_window(PACIFIC_DEFAULT, length=None, kv=True)
    assert plain.rocksdb_wal_bytes and 5.0 <= plain.seconds < 7.0
    need = 3 * plain.rocksdb_wal_bytes
    long, _, _ = run_window(PACIFIC_DEFAULT, length=None, kv=True, wal_to_pass=(need, 60.0))
    assert (long.rocksdb_wal_bytes or 0) >= need and 12.0 < long.seconds < 60.0
    # at most the seconds given; a round's fixed length is never stretched
    bounded, _, _ = run_window(PACIFIC_DEFAULT, length=None, kv=True, wal_to_pass=(need, 8.0))
    assert 8.0 <= bounded.seconds < 10.0 and (bounded.rocksdb_wal_bytes or 0) < need
    fixed, _, _ = run_window(PACIFIC_DEFAULT, length=5.0, kv=True, wal_to_pass=(need, 60.0))
    assert 5.0 <= fixed.seconds < 7.0


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


def counted_wal(c: Any, flushes: int, seconds: float) -> Measurement:
    """A window of SMALL's, told it counted `flushes` of config `c` in
    `seconds`, its WAL bytes theirs: the length also waits for a config's
    steady_bytes at the WAL rate its windows saw, which must agree."""
    m, _, _ = run_window(SMALL, length=None)
    m.cf_flushes, m.seconds = flushes, seconds
    m.wal_bytes = m.rocksdb_wal_bytes = flushes * window.flush_size(c)
    return m


def test_with_rocksdbs_counts_the_length_is_the_slowest_configs_trigger_at_its_flush_rate(
        ) -> None:
    small, default = candidate(SMALL), candidate(PACIFIC_DEFAULT)
    # SMALL: 3 flushes in 30 s; the default: 3 in 180 s, its trigger 4 flushes
    both = [(small, [counted_wal(small, 3, 30.0)]),
            (default, [counted_wal(default, 2, 90.0), counted_wal(default, 1, 90.0)])]
    need = window.CYCLE_MARGIN * default.level0_file_num_compaction_trigger * 60.0
    # to its first compaction (a cycle at most), then the cycle it counts
    assert steady_length(both, 5.0, 3600.0) == pytest.approx(2 * need)
    assert steady_length(both, 5.0, 100.0) == 100.0
    # no flush counted anywhere: no rate, so the limit
    assert steady_length([(small, [counted_wal(small, 0, 30.0)]),
                          (default, [counted_wal(default, 0, 45.0)])], 5.0, 600.0) == 600.0


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
    assert steady_length(configs, 5.0, 1e9) == pytest.approx(2 * need)
    assert steady_length(configs, 5.0, 600.0) == 600.0
    # with 3 flushes of its own, a config's own rate counts, not the load's
    assert window.steady_window(small, [counted(6, 60.0)], rate / 100) == pytest.approx(
        window.CYCLE_MARGIN * small.level0_file_num_compaction_trigger * 10.0)
    # fewer than 3 of its own: the load's rate, when there is one
    assert window.steady_window(small, [counted(1, 60.0)], rate) == pytest.approx(
        window.CYCLE_MARGIN * small.level0_file_num_compaction_trigger
        * window.flush_size(small) / rate)
    assert window.steady_window(small, [counted(1, 60.0)], None) == pytest.approx(
        window.CYCLE_MARGIN * small.level0_file_num_compaction_trigger * 60.0)
    # a WAL limit below its flush size flushes it first (issue 42's forecast:
    # a finalist's 125-MiB memtables under a 128-MiB WAL were timed as 9x
    # their real flushes)
    big = dataclasses.replace(default, write_buffer_size=512 * MiB)
    ms = [counted(0, 30.0)]
    ms[0].rocksdb_wal_bytes = 30 * MiB  # a MiB a second of WAL, all families'
    assert window.steady_window(big, ms, rate, 64 * MiB) == pytest.approx(
        window.CYCLE_MARGIN * big.level0_file_num_compaction_trigger * 64.0)
    assert window.steady_window(big, ms, rate, 0) == pytest.approx(
        window.CYCLE_MARGIN * big.level0_file_num_compaction_trigger
        * window.flush_size(big) / rate)
    # nothing flushed anywhere: unknown but long; no counts at all: None
    assert window.steady_window(default, [counted(0, 30.0)], 0.0) == math.inf
    m, _, _ = run_window(SMALL, length=None)
    m.cf_flushes = None
    assert window.fill_rate([(small, [m])]) is None
    assert window.steady_window(small, [m], None) is None


def _dump(wal: float, sst: float, client: float, slow: float = 0) -> Any:
    lat = {'avgcount': 10 if client else 0, 'sum': 0.01 if client else 0.0}
    return {'bluefs': {'bytes_written_wal': wal, 'bytes_written_sst': sst,
                       'bytes_written_slow': slow, 'files_written_sst': 0},
            'osd': {'op_w_in_bytes': client, 'op_w_latency': lat},
            'bluestore': {'kv_sync_lat': lat, 'kv_commit_lat': lat, 'kv_flush_lat': lat}}


def test_slow_device_bytes_are_a_share_of_the_db_bytes_never_added() -> None:
    # BlueFS counts spilled-over SST bytes in bytes_written_sst and again in
    # bytes_written_slow (the device they landed on): 40 of the 100 spilled
    before, after = _dump(0, 0, 0), _dump(100 * MiB, 100 * MiB, 100 * MiB, slow=40 * MiB)
    m = perf_counters.measure(before, after, 60.0, 16 * MiB, 0.0)
    assert m.db_bytes == 200 * MiB and m.slow_bytes == 40 * MiB
    assert m.write_amp == pytest.approx(2.0)


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
    assert perf_counters.judged(counted, mixed, 1.0, 'osd-bench')[0] == 'feasible'
    # an old record (BlueFS's bytes, no write_amp_by) against a new one
    old = measurement(write_amp=2.2)
    assert perf_counters.write_amps(counted, old) == (pytest.approx(2.0), 2.2)


# The lab's Tentacle sharding: 12 column families, L and P merging 32
# memtables whatever the candidate says
SHARDED = TENTACLE_DEFAULTS['bluestore_rocksdb_cfs']
# the candidate a session from the slow baseline recommended on the lab
C1 = dataclasses.replace(candidate(PACIFIC_DEFAULT), max_write_buffer_number=113,
                         write_buffer_size=4 * MiB, min_write_buffer_number_to_merge=8,
                         level0_file_num_compaction_trigger=2)
# sensitivity.py's slow baseline: 64 KiB memtables, two at most, L0 compacted at one file
SLOW_BASE = ('compression=kLZ4Compression,max_write_buffer_number=2,'
             'min_write_buffer_number_to_merge=1,write_buffer_size=65536,'
             'level0_file_num_compaction_trigger=1,level0_slowdown_writes_trigger=3,'
             'level0_stop_writes_trigger=4,max_bytes_for_level_base=4194304,'
             'max_bytes_for_level_multiplier=8')


def test_steady_bytes_count_every_family_with_its_own_merge_count() -> None:
    families = parse_sharding(SHARDED)
    # 10 families merge 8 x 4 MiB (32 MiB), L and P 32 x 4 MiB (128 MiB): 576 MiB, x trigger 2
    assert window.steady_bytes(C1, families) == 2 * (10 * 32 + 2 * 128) * MiB
    # the slow baseline's 2 buffers: RocksDB lowers L's and P's 32 to 1, so
    # all 12 flush at 64 KiB, L0 compacts at 1 file
    assert window.steady_bytes(candidate(SLOW_BASE), families) == 12 * 64 * 1024
    # one family (no sharding): the one flush size, x the trigger
    assert window.steady_bytes(C1) == 2 * 32 * MiB == 2 * window.flush_size(C1)


def test_the_labs_write_amp_trap_is_not_steady() -> None:
    """The lab's numbers: c1's steady window ended after 127 s at O-1's first
    flush and compaction (51 KB flushed of 170 MB of WAL; P and L never
    flushed) and read 0.24x the baseline's write-amp: recommended.  Its WAL
    covers 14% of what its column families take in through a cycle: not
    steady, write-amp unknown.  The slow baseline's window is steady."""
    families = parse_sharding(SHARDED)
    c1 = perf_counters.measure(
        _dump(0, 0, 0), _dump(170545152, 111358, 354059149), 127.0, window.flush_size(C1),
        0.0, trigger=2, min_cycles=1.0, steady_bytes=window.steady_bytes(C1, families),
        kv=KvDelta(wal_bytes=170545152, flush_bytes=51854, compaction_bytes=59504,
                   busiest_cf='O-1', flushes=1, compactions=1))
    assert c1.write_amp == pytest.approx(0.482, abs=0.001) and c1.l0_cycles == 1.0
    assert c1.wal_cover == pytest.approx(170545152 / (1152 * MiB)) and c1.window_short
    base_c = candidate(SLOW_BASE)
    base = perf_counters.measure(
        _dump(0, 0, 0), _dump(18255872, 34263990, 26659828), 20.1, window.flush_size(base_c),
        0.0, trigger=1, min_cycles=1.0, steady_bytes=window.steady_bytes(base_c, families),
        kv=KvDelta(wal_bytes=18255872, flush_bytes=3361352, compaction_bytes=30902638,
                   busiest_cf='O-1', flushes=53, compactions=53))
    assert base.write_amp == pytest.approx(1.97, abs=0.01) and base.wal_cover > 20
    assert not base.window_short
    c1.settled = base.settled = 10.0  # each counted from the end of a first compaction
    assert not steady_check.saw_compaction(c1)
    assert steady_check.saw_compaction(base)
    v = steady_check.judge('c1', [(c1, base)], 1, 1.10, 127)
    assert v.verdict == steady_check.UNKNOWN and v.ratio is None
    assert '(a compaction, but 14% of the WAL bytes' in v.why


def sharded_window(options: str, shares: Dict[str, float], limit: float,
                   duration: float = 20.0, level_bytes: int = 0
                   ) -> Tuple[Measurement, FakeCluster]:
    """One steady window on osd.0, sharded as the lab's Tentacle, each column
    family taking `shares` of the WAL, RocksDB's statistics on; the load
    writes about 1.34 MB of WAL a second, the lab's rate (c1's 170 MB in 127 s)."""
    clock = FakeClock()
    cluster = FakeCluster(clock, defaults=TENTACLE_DEFAULTS)
    cluster.shares = shares
    cluster.level_bytes = level_bytes
    # 25 writes of 4 KiB a kv sync, a quarter of it WAL: 25600 / lat bytes a second
    cluster.model = lambda o: (25600 / 1.34e6, 1.0)
    for name, value in (('bluestore_rocksdb_options', options), ('rocksdb_perf', 'true'),
                        ('rocksdb_collect_compaction_stats', 'true')):
        cluster.config_set('osd.0', name, value)
    cluster.restart_osd(0)
    clock.advance(cluster.restart_delay)
    state, load = CanaryRecord({}, False, None), BenchWorkload(cluster, 0, chunk_seconds=1.0)
    w = Window(cluster, 0, lambda: load, Settings(
        warmup=1.0, min_flushes=0.0, max_window_factor=40.0, bench_chunk_seconds=1.0),
        duration, state)
    families = parse_sharding(SHARDED)
    c = candidate(options)
    w.begin(clock())
    since = clock()
    while True:
        done, delay = w.warmup(clock(), since)
        if done:
            break
        clock.advance(delay)
    assert state.window is not None and state.window.kv_before is not None  # counted by RocksDB
    for _ in range(100000):
        m, delay = w.measure(clock(), c, WindowEnd(steady_limit=limit), families=families,
                             max_total_wal_size=SearchSpace(
                                 base=parse_options(options)).max_total_wal_size)
        if m is not None:
            return m, cluster
        clock.advance(delay)
    raise AssertionError('the window never ended')


# the lab's load as c1 saw it: O-1 took enough to cycle in about 127 s, P and
# L (the PG log, deferred writes) most of the rest, the other families little
LAB_SHARES = dict({'O-1': 0.38, 'P': 0.3, 'L': 0.3},
                  **{cf: 0.02 / 9 for cf in ('default', 'm-0', 'm-1', 'm-2', 'p-0', 'p-1',
                                             'p-2', 'O-0', 'O-2')})


def test_a_window_whose_only_cycle_is_one_familys_goes_on_to_the_limit_unknown() -> None:
    opts = SearchSpace.render(parse_options(PACIFIC_DEFAULT), C1)
    m, cluster = sharded_window(opts, LAB_SHARES, limit=300.0)
    fams = cluster.families[0]
    # O-1 went through a cycle about where the lab's window ended...
    assert m.busiest_cf == 'O-1' and m.compactions is not None and m.compactions >= 1
    assert fams['O-1'][3] >= 1
    # ...but the window went on to the limit, counting from there: P and L
    # (128 MiB a flush) never flushed, its WAL short of the 1152 MiB a cycle
    # of every family needs
    assert m.settled is not None and 300.0 <= m.settled + m.seconds <= 301.0
    assert fams['P'][2] == fams['L'][2] == 0
    assert m.wal_cover is not None and m.wal_cover < 1 and m.window_short
    assert not steady_check.saw_compaction(m)
    v = steady_check.judge('c1', [(m, m)], 1, 1.10, 300.0)
    assert v.verdict == steady_check.UNKNOWN


def test_a_window_in_which_every_family_went_through_a_cycle_is_steady() -> None:
    # the load spread by each family's flush size, so each cycles as the WAL
    # covers steady_bytes: the window ends there, long before its limit
    opts = SearchSpace.render(parse_options(PACIFIC_DEFAULT), dataclasses.replace(
        C1, write_buffer_size=1 * MiB, min_write_buffer_number_to_merge=2,
        max_write_buffer_number=40))
    families = parse_sharding(SHARDED)
    c = candidate(opts)
    names = ['default'] + [f'{f}-{i}' for f in 'mpO' for i in range(3)] + ['L', 'P']
    defs = {cf.name: cf for cf in families}
    per = {n: flush_capacity([dataclasses.replace(defs[n.split('-')[0]], shards=1)], c)
           for n in names}
    shares = {n: v / sum(per.values()) for n, v in per.items()}
    m, cluster = sharded_window(opts, shares, limit=3600.0)
    assert all(f[3] >= 1 for f in cluster.families[0].values())  # every family compacted
    assert m.wal_cover is not None and 1 <= m.wal_cover < 1.05 and not m.window_short
    assert m.seconds < 200  # 168 MiB at 1.34 MB/s: about 131 s
    assert steady_check.saw_compaction(m)


def test_a_steady_window_waits_for_the_wal_limit_not_every_familys_memtables() -> None:
    """Past max_total_wal_size RocksDB flushes whichever families hold the
    oldest WAL, however little they took in: under a 256 MiB limit c1's
    families (576 MiB of flush capacity, trigger 2) have each gone through
    an L0 cycle by 512 MiB of WAL, those that take little in by the limit's
    flushes, and the window ends there, steady, not at 1152 MiB."""
    families = parse_sharding(SHARDED)
    assert window.steady_bytes(C1, families, 256 * MiB) == 512 * MiB
    assert window.steady_bytes(C1, families, 1 << 30) == window.steady_bytes(C1, families) \
        == 1152 * MiB
    opts = SearchSpace.render(dict(parse_options(PACIFIC_DEFAULT),
                                   max_total_wal_size='268435456'), C1)
    m, cluster = sharded_window(opts, LAB_SHARES, limit=3600.0)
    fams = cluster.families[0]
    assert all(f[3] >= 1 for f in fams.values())  # every family went through a cycle
    assert m.wal_cover is not None and 1 <= m.wal_cover < 1.05 and not m.window_short
    assert m.seconds < 450  # 512 MiB at 1.34 MB/s: about 400 s (1152 MiB: 900 s)
    assert steady_check.saw_compaction(m)


def test_a_steady_window_counts_from_the_end_of_its_first_compaction() -> None:
    """The first compaction below L0 after the restart takes in L0 files
    this config did not write (the options' before it, the flush of the WAL
    replayed at start): the window counts from its end, until the busiest
    family compacted again, within the limit from the warm-up's end."""
    opts = SearchSpace.render(parse_options(PACIFIC_DEFAULT), dataclasses.replace(
        C1, write_buffer_size=1 * MiB, min_write_buffer_number_to_merge=2,
        max_write_buffer_number=40))
    m, cluster = sharded_window(opts, LAB_SHARES, limit=3600.0)
    fams = cluster.families[0]
    assert m.settled is not None and m.settled > 0
    # the busiest family's first compaction came before the count, and one
    # more (at least) in it
    assert m.busiest_cf is not None and m.compactions is not None and m.compactions >= 1
    assert fams[m.busiest_cf][3] >= m.compactions + 1
    assert steady_check.saw_compaction(m)
    # a limit that ends the window before its counted cycle: not steady, and
    # the limit holds, --duration (20 s) or not
    short, _ = sharded_window(opts, LAB_SHARES, limit=m.settled + 1.0)
    assert short.settled is not None and not steady_check.saw_compaction(short)
    assert short.settled + short.seconds <= m.settled + 2.0
    # a re-based window survives a failover's reload (the mgr's store holds it)
    rec = WindowRecord(100.0, bytes=5, before={}, kv_before={}, reference_bytes=0,
                       settled=42.0)
    assert WindowRecord.from_json(rec.to_json()) == rec
    assert 'settled' not in WindowRecord(100.0).to_json()


def test_the_slow_baseline_is_steady_within_its_first_window() -> None:
    m, _ = sharded_window(SLOW_BASE, LAB_SHARES, limit=600.0, duration=20.0)
    # 768 KiB of WAL covers every family's cycle: done at --duration
    assert 20.0 <= m.seconds <= 21.0
    assert m.wal_cover is not None and m.wal_cover > 20 and not m.window_short
    assert steady_check.saw_compaction(m)


def test_a_steady_window_goes_on_until_one_compaction_weighs_little() -> None:
    """Its edges may take one compaction in or leave one out: the window goes
    on until one (8 MiB) weighs at most COMPACTION_SHARE of its RocksDB bytes
    (5.36 MB a second: about 52 s, not --duration's 20), within its limit;
    the forecast's steady_length counts the same from the window's figures."""
    m, _ = sharded_window(SLOW_BASE, LAB_SHARES, limit=600.0, level_bytes=8 * MiB)
    share = perf_counters.compaction_share(m)
    assert m.compaction_unit == 8 * MiB and share is not None
    assert 0.029 <= share <= window.COMPACTION_SHARE
    assert 50.0 <= m.seconds <= 54.0 and steady_check.saw_compaction(m)
    assert window.steady_length([(candidate(SLOW_BASE), [m])], 20.0, 600.0) \
        == pytest.approx(m.seconds, rel=0.05)
    # the limit holds: steady, with one compaction weighing more
    capped, _ = sharded_window(SLOW_BASE, LAB_SHARES, limit=30.0, level_bytes=8 * MiB)
    assert capped.seconds + (capped.settled or 0.0) <= 31.0
    assert steady_check.saw_compaction(capped)
    assert (perf_counters.compaction_share(capped) or 0.0) > window.COMPACTION_SHARE


def test_the_preconditioning_left_is_its_overwrite_pass_at_its_rate_within_its_limit() -> None:
    # the timed session at the defaults: the pass took 1,209 s of the 1,800 s
    # the forecast had counted, and the cut came right after it
    assert precondition_left(None, 1800.0, 1000, 4) == 1800.0
    pre = PreconditionRecord(filled=10, fill_seconds=10.0, overwritten=250, seconds=100.0)
    assert precondition_left(pre, 1800.0, 1000, 4) == 300.0  # 750 blocks at 0.4 s each
    assert precondition_left(pre, 300.0, 1000, 4) == 190.0  # the limit first
    pre.overwritten = 1000  # the pass over, no RocksDB figures: at most the limit
    assert precondition_left(pre, 1800.0, 1000, 4) == 1690.0
    # with them (iops run 5 counted to the limit here: the compaction came 5
    # min later): 3 L0 files short of 4, each 110 MiB of WAL at 1 MiB/s
    pre.kv_bytes, pre.flushes = {'wal': 110 << 20}, 1
    pre.busiest_cf, pre.shape = 'O-0', {'O-0': [(0, 1, 0.0)]}
    assert precondition_left(pre, 1800.0, 1000, 4) == pytest.approx(330.0)
    assert precondition_left(pre, 350.0, 1000, 4) == 240.0  # the limit first
