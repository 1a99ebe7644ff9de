"""rocksdb_stats: RocksDB's own figures from a real Tentacle OSD's answer."""
import dataclasses
import json
import os

import pytest

from rocks_autotune import placement, rocksdb_stats
from rocks_autotune.rocksdb_stats import KvStats, Level, counts

# `ceph tell osd.1 dump_objectstore_kv_stats` on the lab (Tentacle 20.2), with
# rocksdb_perf, rocksdb_collect_extended_stats and _compaction_stats set, after
# 90 s of `rados bench` 4 KiB writes
REAL = os.path.join(os.path.dirname(__file__), 'data', 'kv_stats_tentacle.txt')


def real() -> str:
    with open(REAL) as f:
        return f.read()


def test_reads_the_tickers_and_every_column_family_of_a_real_answer() -> None:
    s = rocksdb_stats.parse(real())
    assert s.tickers.get(rocksdb_stats.WAL_BYTES) == 90664109
    assert s.tickers.get(rocksdb_stats.FLUSH_BYTES) == 0
    assert s.tickers.get(rocksdb_stats.COMPACT_WRITE_BYTES) == 524225
    # a histogram's SUM: the bytes compressed (LZ4, Tentacle's default), before
    assert s.tickers.get(rocksdb_stats.COMPRESSED_RAW) == 1691060
    # Tentacle's sharding: m, p, O, L, P and default (empty shards are listed too)
    assert {'default', 'p-0', 'O-0', 'O-1', 'O-2', 'L', 'P'} <= set(s.levels)
    assert s.levels['default'][0] == Level(files=3, size=int(14.28 * 1024), compactions=1)
    assert s.shape()['O-2'] == [(0, 2, int(108.26 * 1024))]


def test_the_answer_is_two_documents_with_repeated_keys() -> None:
    text = real()
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    # what plain json would keep of the statistics: the last line only
    first = json.JSONDecoder().raw_decode(text)[0]
    assert len(first) < 5


def test_perf_off_is_a_clear_error() -> None:
    # what an OSD without rocksdb_perf answers (the tell's output is empty)
    with pytest.raises(ValueError, match='rocksdb_perf'):
        rocksdb_stats.parse('{\n    "rocksdb": {"compact": 0}\n}\n')


def _stats(flushes: int, below: int, other: int = 0, files: int = 1) -> KvStats:
    return KvStats(
        tickers={rocksdb_stats.WAL_BYTES: 1000 * flushes, rocksdb_stats.FLUSH_BYTES: 100 * flushes,
                 rocksdb_stats.COMPACT_WRITE_BYTES: 500 * below},
        levels={'O-0': {0: Level(files, 10, flushes), 1: Level(1, 1000, below)},
                'p-0': {0: Level(1, 10, other)}})


def test_a_window_counts_the_busiest_families_compactions_below_l0() -> None:
    d = rocksdb_stats.delta(counts(_stats(2, 0)), counts(_stats(9, 2, other=3)))
    assert (d.busiest_cf, d.flushes, d.compactions) == ('O-0', 7, 2)
    assert (d.wal_bytes, d.flush_bytes, d.compaction_bytes) == (7000, 700, 1000)
    # the bytes compressed: 0 unless both reads counted them
    assert d.compressed_raw == 0
    before, after = _stats(2, 0), _stats(9, 2)
    before.tickers[rocksdb_stats.COMPRESSED_RAW] = 3000
    after.tickers[rocksdb_stats.COMPRESSED_RAW] = 5500
    assert rocksdb_stats.delta(counts(before), counts(after)).compressed_raw == 2500
    # another family's flushes do not make the busiest one's compaction
    d = rocksdb_stats.delta(counts(_stats(2, 0)), counts(_stats(3, 0, other=9)))
    assert (d.busiest_cf, d.compactions) == ('p-0', 0)


def test_a_windows_compaction_unit_is_the_largest_compacting_familys_l0_and_l1() -> None:
    # what a compaction below L0 writes: the L0 and L1 bytes, at the window's
    # end, of the largest family that compacted in it (here O-0: 10 + 1000)
    d = rocksdb_stats.delta(counts(_stats(2, 0)), counts(_stats(9, 2)))
    assert d.unit == 1010
    # a family that only flushed is no compaction's
    after = _stats(9, 2)
    after.levels['p-0'] = {0: Level(1, 10, 3), 1: Level(1, 5000, 0)}
    assert rocksdb_stats.delta(counts(_stats(2, 0)), counts(after)).unit == 1010
    after.levels['p-0'][1] = Level(1, 5000, 1)
    assert rocksdb_stats.delta(counts(_stats(2, 0)), counts(after)).unit == 5010
    # none compacted: none
    assert rocksdb_stats.delta(counts(_stats(2, 1)), counts(_stats(5, 1))).unit == 0


def test_a_window_without_a_flush_has_no_busiest_family() -> None:
    d = rocksdb_stats.delta(counts(_stats(2, 1)), counts(_stats(2, 1)))
    assert (d.busiest_cf, d.flushes, d.compactions) == ('', 0, 0)


@pytest.mark.parametrize('name,pg_num,ns,seed', [
    # `ceph osd map rbd NAME [NS]` on the lab: pool 2, pg_num 32; and a pool of 7
    ('foo', 32, '', 0x6), ('rocks_autotune.abc.17', 32, '', 0x15),
    ('x123456789012345678', 32, '', 0x4), ('benchmark_data_host_1234_object99', 32, '', 0x14),
    ('rocks_autotune.abc.17', 32, 'rocks_autotune', 0x16),
    ('x123456789012', 32, 'rocks_autotune', 0xb),
    ('a', 7, '', 0), ('bb', 7, '', 3), ('ccc', 7, '', 5), ('dddd', 7, '', 2),
    ('eeeee', 7, '', 0)])
def test_an_objects_pg_is_the_one_ceph_osd_map_names(name: str, pg_num: int, ns: str,
                                                     seed: int) -> None:
    assert placement.pg_of(name, pg_num, ns) == seed


def test_what_a_window_keeps_of_a_read_is_small() -> None:
    # the session's head holds it (a window's start): the mgr's store bounds the
    # head, and a real read's every ticker would take 7 KB of it
    s = rocksdb_stats.parse(real())
    kept = json.dumps(counts(s))
    assert len(kept) < 400 and len(json.dumps(dataclasses.asdict(s))) > 6000
    assert set(counts(s)['t']) == set(rocksdb_stats.TICKERS)
    # each family's L0 and L1 bytes, from the table's Size column (a
    # compaction's size at a window's edge)
    assert counts(s)['c']['O-0'][2] == sum(lv.size for n, lv in s.levels['O-0'].items() if n <= 1)
    assert min(c[2] for cf, c in counts(s)['c'].items() if cf != 'L') > 1000
