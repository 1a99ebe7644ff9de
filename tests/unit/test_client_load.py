"""The client workload: objects in PGs the canary serves, written through a
librados client (the fake's), removed at the end; RocksDB's own figures in
every window; the stats options on the canary for the session only."""
import inspect
import json
import re
import statistics
import threading
from typing import Any

import pytest

from fake_cluster import AioFromSync, FakeClock, FakeCluster, FakeIo
from rocks_autotune import placement, window, workload
from rocks_autotune.canary import STATS_OPTIONS
from rocks_autotune.cluster import ClusterError, PgInfo, PoolInfo
from rocks_autotune.session_settings import Params, StartRefused
from rocks_autotune.workload import (NAMESPACE, ClientRecord, ClientWorkload, client_objects,
                                     client_pool)
from rocks_autotune.session import Session
from rocks_autotune.store import StartRecord
from session_harness import Harness, assert_restored, status_text


def test_a_client_session_writes_only_in_the_canarys_pgs_and_removes_it_all() -> None:
    h = Harness(client_space=64 << 20, client_object_size=1 << 20, precondition_limit=60.0)
    h.cluster.add_pool('other', size=3, min_size=2, osds=[1, 2], pgs=8)
    before = h.config_of(0)
    seen = {}

    def look(s: Any) -> bool:
        # every option the session sets, and the objects, while it measures
        if s.s.phase == 'measure':
            seen.update(h.config_of(0))
            seen['objects'] = dict(h.cluster.objects.get(('rbd', NAMESPACE), {}))
        return False
    s = h.start(osd=0, workload='client')
    h.run(until=look)
    assert s.s.state == 'done'
    assert all(seen[n] == 'true' for n in STATS_OPTIONS)
    c = s.s.client
    # rbd: the fake's 4 PGs all hold osd.0; `other`'s 8 never do
    assert (c.pool, c.pg_num, c.seeds, c.count) == ('rbd', 4, [0, 1, 2, 3], 64)
    written = seen['objects']
    assert 10 < len(written) <= 64
    assert all(name.startswith(s.s.id[:8] + '.') for name in written)
    # gone at the end, and the count of what went kept
    assert h.cluster.objects[('rbd', NAMESPACE)] == {}
    assert c.removed >= len(written)
    # RocksDB's figures in every window, the flushes and compactions counted
    for t in h.trials:
        m = t['measurement']
        assert m['busiest_cf'] in ('O-0', '') and m['compactions'] is not None
        assert m['rocksdb_wal_bytes'] > 0 and m['iops'] > 0
    assert_restored(h, 0, before)


def test_the_client_load_names_objects_only_in_the_pgs_given() -> None:
    names = client_objects('abcd1234', 200, 32, [3, 17])
    assert len(names) == 200 and len(set(names)) == 200
    assert {placement.pg_of(n, 32, NAMESPACE) for n in names} == {3, 17}
    # the same names each time: a new active mgr writes the same keyspace
    assert client_objects('abcd1234', 200, 32, [3, 17]) == names


def _pools() -> Any:
    pools = {1: PoolInfo(1, 'a', 3, 2, pg_num=4), 2: PoolInfo(2, 'b', 3, 2, pg_num=8),
             3: PoolInfo(3, 'ec', 3, 2, erasure=True, k=2, m=1, pg_num=8)}
    pgs = ([PgInfo(f'1.{i:x}', 1, [0, 1, 2], [0, 1, 2]) for i in range(4)]
           + [PgInfo(f'2.{i:x}', 2, [1, 2], [1, 2] if i % 2 else [0, 1]) for i in range(8)]
           + [PgInfo(f'3.{i:x}', 3, [0, 1, 2], [0, 1, 2]) for i in range(8)])
    return pools, pgs


def test_the_pool_is_the_replicated_one_with_most_of_the_canarys_pgs() -> None:
    pools, pgs = _pools()
    assert client_pool(pools, pgs, [0]) == (pools[1], [0, 1, 2, 3], [])
    # the PGs without the canary come too: a split's group R
    assert client_pool(pools, pgs, [0], 'b') == (pools[2], [0, 2, 4, 6], [1, 3, 5, 7])
    assert client_pool(pools, pgs, [2])[0] == pools[1]


def test_for_two_osds_the_pgs_are_those_both_serve() -> None:
    pools, pgs = _pools()
    # in pool b, osd.0 is in the even PGs only, osd.2 in the odd ones only
    assert client_pool(pools, pgs, [1, 2], 'b') == (pools[2], [1, 3, 5, 7], [])
    assert client_pool(pools, pgs, [0, 1], 'b') == (pools[2], [0, 2, 4, 6], [])
    assert client_pool(pools, pgs, [0, 2]) == (pools[1], [0, 1, 2, 3], [])
    with pytest.raises(ValueError, match="osd.0 and osd.2 serve no PG of pool 'b' together"):
        client_pool(pools, pgs, [0, 2], 'b')


@pytest.mark.parametrize('osd,wanted,message', [
    (0, 'nope', "no pool named 'nope'"),
    (0, 'ec', "serves no PG of pool 'ec'"),
    (3, '', 'serves no PG of a replicated pool')])
def test_a_pool_that_will_not_do_is_named(osd: int, wanted: str, message: str) -> None:
    pools, pgs = _pools()
    with pytest.raises(ValueError, match=message):
        client_pool(pools, pgs, [osd], wanted)


def test_start_refuses_when_the_client_load_has_nowhere_to_write() -> None:
    h = Harness(client_pool='missing')
    before = h.config_of(0)
    with pytest.raises(StartRefused, match="nowhere to write: no pool named 'missing'"):
        h.start(osd=0, workload='client')
    assert h.saved == [] and h.config_of(0) == before


def test_start_refuses_a_keyspace_that_would_take_osds_past_nearfull() -> None:
    h = Harness(client_space=8 << 20, client_object_size=1 << 20)
    for pool in h.cluster.pool_by_id.values():
        pool.room = 4 << 20
    before = h.config_of(0)
    with pytest.raises(StartRefused, match=r"keyspace \(client_space, 0.01 GiB\) would take "
                       r"pool 'rbd''s fullest OSD past its nearfull ratio: the pool has room "
                       r"for 0.00 GiB"):
        h.start(osd=0, workload='client')
    assert h.saved == [] and h.config_of(0) == before
    for pool in h.cluster.pool_by_id.values():
        pool.room = 8 << 20
    assert h.start(osd=0, workload='client').s.state == 'running'


def test_start_refuses_a_keyspace_over_the_pools_quota() -> None:
    # issue 45: the load wrote until the mons marked the pool full, which
    # paused every client's writes to it
    h = Harness(client_space=8 << 20, client_object_size=1 << 20)
    rbd = h.cluster.pool_by_id[1]
    before = h.config_of(0)
    for quota, said in (({'quota_bytes': 4 << 20}, '0.00 GiB'),
                        ({'quota_objects': 7}, '7 objects')):
        for k, v in quota.items():
            setattr(rbd, k, v)
        with pytest.raises(StartRefused, match=r"keyspace \(8 objects, client_space 0.01 GiB\) "
                           r"would fill pool 'rbd' to its quota, and a full pool stops every "
                           rf"client's writes to it: its quota leaves {said}"):
            h.start(osd=0, workload='client')
        assert h.saved == [] and h.config_of(0) == before
        rbd.quota_bytes = rbd.quota_objects = None
    rbd.quota_objects = 8
    assert h.start(osd=0, workload='client').s.state == 'running'


def test_a_failing_client_write_fails_the_trial_and_the_session_restores() -> None:
    h = Harness(client_space=8 << 20, client_object_size=1 << 20,
                on_failure='stop', precondition_limit=60.0)
    before = h.config_of(0)
    h.start(osd=0, workload='client')
    h.run(until=lambda s: s.s.phase == 'measure')
    h.cluster.client_fails = 'pool full'
    h.run()
    failed = [t for t in h.trials if t['verdict'] == 'failed']
    assert failed and 'pool full' in failed[0]['error']
    assert_restored(h, 0, before)


def test_without_rocksdbs_figures_a_window_counts_from_bluefs() -> None:
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, precondition_limit=60.0)
    h.cluster.kv_stats_off = True
    s = h.start(osd=0, workload='client', trials=1)
    h.run()
    assert s.s.state == 'done'
    m = h.trials[0]['measurement']
    assert m['compactions'] is None and m['flushes'] > 0


def test_a_write_that_hangs_fails_the_chunk(monkeypatch: Any) -> None:
    release = threading.Event()

    class Hung(FakeIo):
        def write(self, obj: str, data: bytes, offset: int) -> None:
            release.wait(10)  # an OSD that never answers (librados waits without end)
    monkeypatch.setattr(workload, 'HUNG_WRITE', 0.2)
    io = Hung(FakeCluster(FakeClock()), 'rbd', NAMESPACE)
    load = ClientWorkload(io, ['a'], 1 << 20, in_flight=2)
    try:
        with pytest.raises(ClusterError, match='did not complete'):
            load.drive(0.1, None)
    finally:
        release.set()


class Recorded(AioFromSync):
    """ClientIo that keeps every write (object, offset, length) and counts a
    fixed time per write on the clock it is given."""

    def __init__(self, clock: FakeClock, fail_on: str = '') -> None:
        self.clock = clock
        self.fail_on = fail_on
        self.writes: list = []
        self.reads = []
        self.lock = threading.Lock()

    def write(self, obj: str, data: bytes, offset: int) -> None:
        with self.lock:
            if obj == self.fail_on:
                raise ClusterError(f'writing {obj}: EIO')
            self.writes.append((obj, offset, len(data)))
            self.clock.advance(1.0)

    def read(self, obj: str, length: int, offset: int) -> bytes:
        """The n-th read takes read_seconds(n) on the clock."""
        with self.lock:
            if obj == self.fail_on:
                raise ClusterError(f'reading {obj}: EIO')
            self.clock.advance(self.read_seconds(len(self.reads)))
            self.reads.append((obj, offset, length))
        return bytes(length)

    reads: list
    read_seconds: Any = staticmethod(lambda n: 0.001)


def test_fill_writes_each_object_end_to_end_and_goes_on_where_it_stopped() -> None:
    clock = FakeClock()
    io = Recorded(clock)
    names = [f'o.{i}' for i in range(6)]
    load = ClientWorkload(io, names, 10 << 20, in_flight=1, chunk_seconds=5.0,
                          clock=clock)  # type: ignore[arg-type]
    # one thread, a second per write, three writes per object: two objects
    # are started within the 5-s chunk, and each is finished once started
    filled, nbytes, secs = load.fill(0, 100.0)
    assert filled == 2 and nbytes == 2 * (10 << 20) and secs == 6.0
    assert io.writes[:3] == [('o.0', 0, 4 << 20), ('o.0', 4 << 20, 4 << 20),
                             ('o.0', 8 << 20, 2 << 20)]
    while filled < len(names):
        filled, _, _ = load.fill(filled, 100.0)
    assert sorted({w[0] for w in io.writes}) == names
    assert all(sum(w[2] for w in io.writes if w[0] == n) == 10 << 20 for n in names)
    assert load.fill(filled, 100.0) == (6, 0, 0.0)  # nothing left to fill


@pytest.mark.parametrize('n', [1, 2, 7, 1024, 3 * 5 * 7 * 64])
def test_the_scattered_order_takes_every_block_once_and_neighbours_far_apart(n: int) -> None:
    order = workload.scattered(n)
    assert sorted(order(i) for i in range(n)) == list(range(n))
    if n >= 1024:
        assert min(abs(order(i + 1) - order(i)) for i in range(n - 1)) > n // 8


def test_overwrite_writes_every_block_once_in_chunks() -> None:
    clock = FakeClock()
    io = Recorded(clock)
    load = ClientWorkload(io, ['o.0', 'o.1'], 64 << 10, in_flight=3, chunk_seconds=5.0,
                          clock=clock)  # type: ignore[arg-type]
    assert load.block_count == 32
    done, chunks = 0, 0
    while done < load.block_count:
        done, nbytes, _ = load.overwrite(done, 100.0)
        chunks += 1
    assert chunks > 1 and done == 32
    assert sorted((o, off) for o, off, n in io.writes) == sorted(
        (o, b * 4096) for o in ('o.0', 'o.1') for b in range(16))
    assert all(n == 4096 for _, _, n in io.writes)


def test_no_two_blocks_the_load_writes_are_alike() -> None:
    # BlueStore keeps each block's checksum in RocksDB: blocks alike would
    # make those compress as a client's data never does
    clock = FakeClock()
    blocks: list = []

    class Kept(Recorded):
        def write(self, obj: str, data: bytes, offset: int) -> None:
            super().write(obj, data, offset)
            blocks.extend(data[i:i + 4096] for i in range(0, len(data), 4096))

    load = ClientWorkload(Kept(clock), ['o.0', 'o.1'], 64 << 10, in_flight=2,
                          chunk_seconds=5.0, clock=clock,
                          reference=['r.0'])  # type: ignore[arg-type]
    filled = done = 0
    while filled < load.object_count:
        filled = load.fill(filled, 100.0)[0]
    while done < load.block_count:
        done = load.overwrite(done, 100.0)[0]
    load.drive(5.0, None)
    assert len(blocks) > 3 * 16 + 32 + 2
    assert len(set(blocks)) == len(blocks)


def test_a_failed_fill_write_fails_the_chunk() -> None:
    clock = FakeClock()
    load = ClientWorkload(Recorded(clock, fail_on='o.1'), ['o.0', 'o.1'], 1 << 20,
                          in_flight=2, clock=clock)  # type: ignore[arg-type]
    with pytest.raises(ClusterError, match='writing o.1: EIO'):
        load.fill(0, 10.0)


def test_preconditioning_that_runs_out_of_time_while_filling_says_so() -> None:
    h = Harness(client_space=256 << 20, client_object_size=65536, precondition_limit=1.0)
    s = h.start(osd=0, workload='client', trials=1)
    h.run()
    p = s.canary.rec.precondition
    assert p is not None
    assert p.done and p.steady is False and p.bytes == 0
    assert re.search(r'not steady after 1s of load \(precondition_limit\): \d+ of 4096 '
                     r'objects filled', p.why)


def test_status_names_the_keyspace_and_what_became_of_it() -> None:
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, precondition_limit=60.0)
    s = h.start(osd=0, workload='client', trials=1)
    text = status_text(s, detail=True)
    assert 'client load: 8 objects in pool rbd, namespace rocks_autotune, in 4 of its ' \
           '4 PGs the canary is in' in text and 'removed' not in text
    # status -f json shows what is known, as the head keeps it (SessionState.head_json)
    assert set(s.status()['client']) == {'pool', 'pg_num', 'seeds', 'count', 'removed',
                                         'design', 'design_why'}
    h.run()
    assert ClientRecord.from_json(json.loads(h.saved[-1])['client']) == s.s.client
    assert (f'; {s.s.client.removed} removed at the end'
            in status_text(s, detail=True))


# small memtables, so that the fake's RocksDB flushes and compacts under the
# fake client load within a test's time
SMALL = ('write_buffer_size=1048576,max_write_buffer_number=4,'
         'min_write_buffer_number_to_merge=1,level0_file_num_compaction_trigger=2,'
         'compression=kNoCompression')


def test_preconditioning_writes_the_keyspace_until_the_busiest_family_has_a_lower_level() -> None:
    h = Harness(client_space=4 << 20, client_object_size=1 << 20, precondition_limit=600.0)
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options', SMALL)
    h.cluster.running[0] = SMALL
    s = h.start(osd=0, workload='client', trials=1)
    phases = []
    h.run(until=lambda s: phases.append(s.s.phase) or False)
    assert s.s.state == 'done'
    # once, before the first baseline window, and never again
    first = phases.index('precondition')
    assert 'measure' not in phases[:first] and phases.count('precondition') > 1
    assert all(p != 'precondition' for p in phases[phases.index('measure'):])
    p = s.canary.rec.precondition
    assert p is not None
    assert p.done and p.steady and p.bytes >= 4 << 20 and p.compactions >= 1
    assert p.shape['O-0'][-1][0] == 1  # a level below L0 holds files
    # RocksDB's own bytes over the run, kept for the wear model's levels
    kv = p.kv_bytes
    assert kv['wal'] > 0 and kv['flush'] > 0 and kv['compaction'] > 0
    # every object written end to end first, then every block overwritten once
    assert p.filled == 4 and p.fill_bytes == 4 << 20
    assert p.overwritten == 1024
    text = status_text(s, detail=True)
    assert re.search(r'preconditioning \(done\): 4 objects filled \(4 MiB in \d+s\), then '
                     r'\d+ MiB written in 4 KiB writes in \d+s \(1024 blocks overwritten once\); '
                     r'O-0 flushed most \(\d+ flushes, \d+ compactions below L0\)', text)
    assert 'LSM: O-0 L1:1/' in text


def test_preconditioning_counts_the_wal_rate_of_its_load_after_the_overwrite_pass() -> None:
    # a window's load, not the overwrite pass's (C alone: 2.5x a split window's
    # rate on the lab), says how long a search window takes before one ran
    h = Harness(client_space=4 << 20, client_object_size=1 << 20, precondition_limit=600.0)
    late = SMALL.replace('trigger=2', 'trigger=12')  # no compaction within the pass
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options', late)
    h.cluster.running[0] = late
    s = h.start(osd=0, workload='client', trials=1)
    h.run()
    p = s.canary.rec.precondition
    assert p is not None and p.done and p.steady and p.kv_bytes is not None
    assert p.bytes > 4 << 20 and 0 < p.drive_wal < p.kv_bytes['wal']
    assert 0 < p.drive_seconds < p.seconds


def test_preconditioning_stops_at_its_limit_and_says_the_db_was_not_steady() -> None:
    h = Harness(client_space=4 << 20, client_object_size=1 << 20, precondition_limit=4.0)
    s = h.start(osd=0, workload='client', trials=1)
    h.run()
    p = s.canary.rec.precondition
    assert p is not None
    assert p.done and p.steady is False and 3.5 <= p.seconds <= 6
    assert re.search(r'not steady after 4s of load \(precondition_limit\): \d+ of 1024 '
                     r'blocks overwritten', p.why)
    assert 'preconditioning (done, not steady)' in status_text(s, detail=True)
    assert s.s.state == 'done'


def test_preconditioning_stops_once_every_block_is_written_if_compaction_is_out_of_reach(
        ) -> None:
    # the harness's options: a flush every 16 MiB of WAL or more, a compaction
    # at 4 L0 files, more WAL than the 4-MiB keyspace's load writes in 600 s
    h = Harness(client_space=4 << 20, client_object_size=1 << 20, precondition_limit=600.0)
    s = h.start(osd=0, workload='client', trials=1)
    h.run()
    p = s.canary.rec.precondition
    assert p is not None
    assert p.done and p.steady is False and p.overwritten == 1024 and p.seconds < 300
    assert re.search(r'the busiest column family holds 0 of the 4 L0 files that start a '
                     r'compaction, at \d+ MiB of WAL or more a flush: at least \d+ min more '
                     r'at the [\d.]+ MiB/s written, past precondition_limit 600s', p.why), p.why
    assert s.s.state == 'done'


def test_a_bench_session_does_not_precondition() -> None:
    h = Harness()
    s = h.start(osd=0, trials=1)
    h.run()
    assert s.canary.rec.precondition is None


def test_status_says_how_long_a_steady_window_takes_and_what_is_left() -> None:
    h = Harness(client_space=4 << 20, client_object_size=1 << 20,
                precondition_limit=600.0, steady_window_limit=300.0)
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options', SMALL)
    h.cluster.running[0] = SMALL
    s = h.start(osd=0, workload='client', trials=2)
    t = s.time_said()
    assert t.steady_window is None and not t.no_flush_seen
    assert t.left_seconds >= 600  # the preconditioning, at most
    # what it spent comes off what it may still take, and once it overwrites,
    # the rest of its pass at its rate (1024 blocks of 4 KiB)
    h.run(until=lambda s: s.canary.rec.precondition is not None
          and s.canary.rec.precondition.seconds > 0)
    p = s.canary.rec.precondition
    assert p is not None
    assert not p.done
    assert s.time_said().left_seconds == pytest.approx(
        t.left_seconds - 600.0 + window.precondition_left(p, 600.0, 1024, 2))
    assert window.precondition_left(p, 600.0, 1024, 2) <= 600.0 - p.seconds - p.fill_seconds
    h.run(until=lambda s: s.s.baseline is not None)
    t = s.time_said()
    # SMALL compacts at 2 flushes: the baseline's windows counted its flush
    # rate; a steady window runs to a first compaction, then counts a cycle
    base = [x['measurement'] for x in h.trials if x['verdict'] == 'baseline']
    rate = sum(m['cf_flushes'] for m in base) / sum(m['seconds'] for m in base)
    assert t.steady_window == pytest.approx(2 * 1.25 * 2 / rate)
    # the confirmation rounds' windows: the baseline runs' length (their
    # noise's), whatever a steady window takes; the steady check's at most the limit
    assert t.confirm_window == pytest.approx(
        max(10.0, statistics.median(m['seconds'] for m in base)))
    assert t.steady_window_limit == 300.0 and t.steady_windows_left == 2
    text = status_text(s, detail=True)
    assert f'a steady-state window of the current options takes about ' \
           f'{t.steady_window:.0f}s here' in text
    assert re.search(r'at most about \d+ min left', text)
    left = t.left_seconds
    n = len(s.s.trials)
    h.run(until=lambda s: len(s.s.trials) == n + 1)
    assert s.time_said().left_seconds < left
    # a window in flight: what it has run comes off, second for second
    h.run(until=lambda s: s.s.phase == 'measure')
    before = s.time_said().left_seconds
    h.clock.advance(4.0)
    assert s.time_said().left_seconds == pytest.approx(before - 4.0)


def test_a_steady_window_said_is_never_shorter_than_the_window() -> None:
    # 256-KiB memtables compacting at one flush: a cycle in a few seconds,
    # but a steady window lasts --duration at least, and status says that
    tiny = SMALL.replace('write_buffer_size=1048576', 'write_buffer_size=262144').replace(
        'level0_file_num_compaction_trigger=2', 'level0_file_num_compaction_trigger=1')
    h = Harness(client_space=4 << 20, client_object_size=1 << 20,
                precondition_limit=20.0, steady_window_limit=300.0)
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options', tiny)
    h.cluster.running[0] = tiny
    s = h.start(osd=0, workload='client', trials=2, duration=12.0)
    h.run(until=lambda s: s.s.baseline is not None)
    base = [x['measurement'] for x in h.trials if x['verdict'] == 'baseline']
    rate = sum(m['cf_flushes'] for m in base) / sum(m['seconds'] for m in base)
    assert 1.25 / rate < 12.0 / 2
    assert s.time_said().steady_window == pytest.approx(12.0)
    assert 'a steady-state window of the current options takes about 12s here' in \
        status_text(s, detail=True)


def test_with_no_flush_in_any_window_the_status_says_windows_will_be_short() -> None:
    h = Harness(client_space=4 << 20, client_object_size=1 << 20,
                precondition_limit=20.0, steady_window_limit=30.0)
    s = h.start(osd=0, workload='client', trials=2)
    h.run(until=lambda s: s.s.baseline is not None)
    t = s.time_said()
    base = [x['measurement']['seconds'] for x in h.trials if x['verdict'] == 'baseline']
    assert t.no_flush_seen and t.steady_window is None
    assert t.confirm_window == pytest.approx(max(10.0, statistics.median(base)))
    assert t.confirm_window < 30.0
    text = status_text(s, detail=True)
    assert 'saw a flush' in text and 'judged on the objective alone' in text
    assert 'at most 2 steady window(s) of up to 30s each' in text


def test_a_session_that_fails_to_restore_still_removes_its_objects() -> None:
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, precondition_limit=20.0)
    s = h.start(osd=0, workload='client', trials=2)
    h.run(until=lambda s: s.s.phase == 'measure')
    assert h.cluster.objects[('rbd', NAMESPACE)]

    def refused(who: str, name: str) -> None:
        raise ClusterError('mon refused')
    h.cluster.config_rm = refused  # type: ignore[method-assign]  # the restore cannot go on
    s.request('abort')
    h.run()
    assert s.s.state == 'failed' and 'ROCKS_AUTOTUNE_RESTORE_FAILED' in s.health_checks()
    assert h.cluster.objects[('rbd', NAMESPACE)] == {} and s.s.client.removed > 0


def test_the_default_workload_is_the_client_load_and_bench_is_named_osd_bench() -> None:
    import mgr_mock
    mgr_mock.install()
    from rocks_autotune.module import RocksAutotune
    assert Params().workload == workload.DEFAULT_WORKLOAD == 'client'
    # the command's own default (a literal: the CLI's help shows it) is the same
    assert inspect.signature(RocksAutotune.cmd_start).parameters['workload'].default == 'client'
    with pytest.raises(StartRefused, match=r"not 'bench' \(now named osd-bench\)"):
        Params(workload='bench').validate()
    Params(workload='osd-bench').validate()


def test_a_rescued_session_removes_the_client_objects_its_lost_head_recorded() -> None:
    # issue 45: the rescue forgot them, left in the user's pool unannounced
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, precondition_limit=20.0)
    before = h.config_of(0)
    s = h.start(osd=0, workload='client', trials=2)
    h.run(until=lambda s: s.s.phase == 'measure')
    assert h.cluster.objects[('rbd', NAMESPACE)]
    start = StartRecord.from_json(s.s.start_json())
    assert start.client_pool == 'rbd'
    h.session = Session.rescue(start, 'unreadable', h.cluster, h.settings, h.save, h.clock)
    h.run()
    r = h.session.s
    assert r.state == 'failed' and r.client.removed > 0
    shown = h.session.status()['client']
    assert set(shown) == {'pool', 'pg_num', 'seeds', 'count', 'removed', 'tried', 'left',
                          'remove_error'}
    assert h.cluster.objects[('rbd', NAMESPACE)] == {}
    assert_restored(h, 0, before)
    text = status_text(h.session, detail=True)
    assert (f"client load: the lost session's objects in pool rbd, namespace {NAMESPACE}; "
            f"{r.client.removed} removed at the end") in text


def test_a_pool_that_becomes_full_ends_the_session_and_its_objects_go() -> None:
    # issue 45: writes to a full pool wait for good (the mons stop them), and
    # the cleanup waited too, holding the serve thread
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, precondition_limit=20.0)
    before = h.config_of(0)
    s = h.start(osd=0, workload='client', trials=2)
    h.run(until=lambda s: s.s.phase == 'measure')
    h.cluster.pool_by_id[1].full = True  # its quota reached: the writes fail (hang) there
    h.cluster.client_fails = 'writing x in rbd/rocks_autotune: [errno 122] Disk quota exceeded'
    s.step()
    assert s.s.phase == 'restore' and "pool 'rbd' is full" in s.s.message
    h.run()
    assert s.s.state == 'failed' and "pool 'rbd' is full" in s.s.error
    assert [t['verdict'] for t in h.trials if t['kind'] == 'candidate'] == []
    assert h.cluster.objects[('rbd', NAMESPACE)] == {} and s.s.client.removed > 0
    assert_restored(h, 0, before)


def test_a_full_pool_seen_before_a_trial_ends_the_session_before_it() -> None:
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, precondition_limit=20.0)
    s = h.start(osd=0, workload='client', trials=2)
    h.run(until=lambda s: s.s.phase == 'apply' and s.s.trials)
    trials = len(s.s.trials)
    h.cluster.pool_by_id[1].full = True
    s.step()
    assert s.s.phase == 'restore' and "pool 'rbd' is full" in s.s.message
    h.run()
    assert s.s.state == 'failed' and len(s.s.trials) == trials


def test_objects_left_at_the_end_are_named_and_tried_again_until_they_go() -> None:
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, precondition_limit=20.0)
    s = h.start(osd=0, workload='client', trials=2)
    h.run(until=lambda s: s.s.phase == 'measure')
    h.cluster.remove_fails = 'PG 1.0 is inactive'
    s.request('abort')
    h.run()
    c = s.s.client
    assert s.s.state == 'aborted' and c.removed is None
    assert 'PG 1.0 is inactive' in c.remove_error and h.cluster.objects[('rbd', NAMESPACE)]
    text = status_text(s, detail=True)
    assert 'not all removed (PG 1.0 is inactive): tried again every 5 min' in text, text
    tried = c.tried
    s.tidy()  # the end's own try was just now: not yet
    assert c.removed is None and c.tried == tried
    h.cluster.remove_fails = ''
    h.clock.advance(workload.CLEANUP_RETRY)
    s.tidy()
    assert c.removed > 0 and c.remove_error == ''
    assert h.cluster.objects[('rbd', NAMESPACE)] == {}
    assert f"{c.removed} removed at the end" in status_text(s, detail=True)


def test_the_read_probe_reads_c_alone_in_chunks_and_gives_the_p99() -> None:
    clock = FakeClock()
    io = Recorded(clock)
    # 2 reads in 100 take 10 ms, the others 1 ms: the p99 is 10 ms
    io.read_seconds = lambda n: 0.010 if n % 100 >= 98 else 0.001  # type: ignore[assignment]
    load = ClientWorkload(io, ['c.0', 'c.1'], 1 << 20, in_flight=1, chunk_seconds=5.0,
                          clock=clock, reference=['r.0'])  # type: ignore[arg-type]
    # 12 s in chunks of at most 5: nothing until the last
    got = [load.read_probe(12.0) for _ in range(3)]
    assert got[:2] == [None, None]
    p = got[2]
    assert p is not None and p.reads == len(io.reads) and p.seconds == pytest.approx(12, abs=0.02)
    assert p.iops == pytest.approx(p.reads / p.seconds)
    assert p.p99_ms == pytest.approx(10.0) and p.mean_ms == pytest.approx(1.18, rel=0.01)
    # 4 KiB at block offsets of C's objects, never R's
    assert {o for o, _, _ in io.reads} == {'c.0', 'c.1'}
    assert all(n == 4096 and off % 4096 == 0 and off < 1 << 20 for _, off, n in io.reads)
    # the next call starts another probe
    io.reads.clear()
    assert load.read_probe(12.0) is None and 0 < len(io.reads) < p.reads
    # of the objects given, if any: none reads nothing, at once
    assert load.read_probe(1.0, ['c.1']) is not None
    none = load.read_probe(12.0, [])
    assert none == workload.ReadProbe(0, 0.0, 0.0, 0.0, 0.0)


def test_a_read_that_fails_drops_the_probe() -> None:
    clock = FakeClock()
    io = Recorded(clock)
    load = ClientWorkload(io, ['c.0'], 1 << 20, in_flight=2, chunk_seconds=5.0,
                          clock=clock)  # type: ignore[arg-type]
    assert load.read_probe(8.0) is None
    io.fail_on = 'c.0'
    with pytest.raises(ClusterError, match='reading c.0: EIO'):
        load.read_probe(8.0)
    io.fail_on = ''
    # started again: 8 s more, not 3
    assert load.read_probe(8.0) is None and load.read_probe(8.0) is not None


def test_pipelined_keeps_depth_in_flight_and_waits_for_every_one() -> None:
    flight, most, waited = [0], [0], []

    def item(i: int) -> Any:
        def start() -> Any:
            flight[0] += 1
            most[0] = max(most[0], flight[0])

            def wait() -> None:
                flight[0] -= 1
                waited.append(i)
            return wait
        return [(start, 10)]
    left = iter(range(7))  # going() holds for 7 items
    assert workload.pipelined(map(item, range(100)), 3,
                              lambda: next(left, None) is not None) == (7, 70)
    assert most[0] == 3 and flight[0] == 0 and waited == list(range(7))


def test_a_fills_writes_in_flight_hold_in_flight_bytes_at_most(monkeypatch: Any) -> None:
    monkeypatch.setattr(workload, 'IN_FLIGHT_BYTES', 8 << 20)
    flight, most = [0], [0]

    class Counted(Recorded):
        def aio_write(self, obj: str, data: bytes, offset: int) -> Any:
            flight[0] += 1
            most[0] = max(most[0], flight[0])

            def wait() -> None:
                flight[0] -= 1
                self.write(obj, data, offset)
            return wait

        def write(self, obj: str, data: bytes, offset: int) -> None:
            # a short write: at 1 s a write the 512 in flight would take the
            # shared fake clock past the join's hang limit while the worker
            # still runs, and _run would call it hung (a race, CI stop 86)
            self.writes.append((obj, offset, len(data)))
            self.clock.advance(0.01)
    clock = FakeClock()
    load = ClientWorkload(Counted(clock), [f'o.{i}' for i in range(8)], 4 << 20, in_flight=512,
                          clock=clock)  # type: ignore[arg-type]
    assert load.fill(0, 100.0)[0] > 2
    assert most[0] == 2  # two 4-MiB writes, not 512
    load.overwrite(0, 1.0)
    assert most[0] == 512  # 4-KiB writes: client_threads of them


def test_radosio_waits_on_each_op_and_only_a_removal_may_find_its_object_gone() -> None:
    import errno
    from rocks_autotune.cluster import RadosIo

    class Done:
        def __init__(self, r: int) -> None:
            self.r, self.waited = r, False

        def wait_for_complete(self) -> None:
            self.waited = True

        def get_return_value(self) -> int:
            return self.r

    class Ioctx:  # librados' answer to every op: `r`
        r = 0

        def aio_write(self, obj: str, data: bytes, offset: int) -> Done:
            return Done(self.r)

        def aio_remove(self, obj: str) -> Done:
            return Done(self.r)
    ioctx = Ioctx()
    io = RadosIo(ioctx, 'rbd', NAMESPACE)
    io.aio_write('a', b'x', 0)()
    ioctx.r = -errno.ENOENT
    io.aio_remove('a')()  # already gone: removed all the same
    with pytest.raises(ClusterError, match='writing a in rbd/rocks_autotune'):
        io.aio_write('a', b'x', 0)()
    ioctx.r = -errno.EIO
    with pytest.raises(ClusterError, match='removing a in rbd/rocks_autotune: Input/output error'):
        io.aio_remove('a')()
