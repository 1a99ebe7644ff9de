"""The split measurement design (issue 24): the client load writes the
canary's PGs (C) and, over the same window, as many objects in PGs of the
same pool that leave it out (R); the confirmation and the A/A noise judge
C/R, and the answers give C's own ratio and R's beside it."""
import json
import math
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import pytest

from rocks_autotune import confirm, measurement_plan, perf_counters, placement, views
from rocks_autotune.session_settings import StartRefused
from rocks_autotune.measurement_plan import BASELINE, SEQUENTIAL, SPLIT
from rocks_autotune.perf_counters import Measurement
from rocks_autotune.space import SearchSpace
from rocks_autotune.store import HEAD_KEY, SessionStore
from rocks_autotune.trial import Trial
from rocks_autotune.workload import (GROUP_PGS, MIN_REFERENCE_PGS, NAMESPACE, ClientRecord,
                                     ClientWorkload, client_objects, client_pool, pg_seed, sample,
                                     split_refusal, up_osds)
from fake_cluster import AioFromSync, FakeCluster
from session_harness import Harness, best_summary, best_text, status_text, trials
from test_measurement_plan import windows

# a size-2 pool over the fake's 3 OSDs: PG i is on osd.(i%3) and osd.(i+1)%3,
# so osd.0 is out of PGs 1, 4, 7, 10 and 13
SPLIT_POOL = 'split'
WITHOUT_0 = [1, 4, 7, 10, 13]


def split_harness(**settings: Any) -> Harness:
    h = Harness(**dict(dict(client_space=16 << 20, client_object_size=1 << 20,
                            precondition_limit=60.0, client_pool=SPLIT_POOL), **settings))
    h.cluster.add_pool(SPLIT_POOL, size=2, min_size=1, pgs=16)
    return h


# ------------------------------------------------ the groups and the pool's PGs

def test_the_pool_gives_the_pgs_with_the_canary_and_those_without() -> None:
    h = split_harness()
    pool, seeds, without = client_pool(h.cluster.pools(), h.cluster.pgs(), [0], SPLIT_POOL)
    assert pool.name == SPLIT_POOL and without == WITHOUT_0
    assert sorted(seeds + without) == list(range(16))
    # R's OSDs: those of its PGs' up sets, never the canary
    assert up_osds(h.cluster.pgs(), pool.id, without) == [1, 2]


def test_the_reference_group_is_named_in_its_own_pgs_only() -> None:
    c = client_objects('abcd1234', 40, 16, [0, 2, 3])
    r = client_objects('abcd1234r', 40, 16, WITHOUT_0)
    assert {placement.pg_of(n, 16, NAMESPACE) for n in r} <= set(WITHOUT_0)
    assert not set(c) & set(r)


@pytest.mark.parametrize('without,pg_num,count,why', [
    (list(range(MIN_REFERENCE_PGS - 1)), 32, 16, 'fewer than the 4 a reference group needs'),
    (list(range(4)), 1 << 20, 64, 'would hash about 16777216 names'),
    (list(range(4)), 32, 16, '')])
def test_a_split_needs_enough_pgs_and_names(without: List[int], pg_num: int, count: int,
                                            why: str) -> None:
    got = split_refusal(without, pg_num, count)
    assert (why in got and got) if why else got == ''


def test_a_group_is_at_most_group_pgs_of_its_pgs_evenly_spread() -> None:
    assert sample([9, 3, 5]) == [3, 5, 9]
    seeds = list(range(0, 3 * 65536, 3))
    got = sample(seeds)
    assert len(got) == GROUP_PGS and got == sample(seeds[::-1]) and set(got) <= set(seeds)
    # an even stride: each of GROUP_PGS equal slices of the seeds gives one
    assert [g // (3 * 65536 // GROUP_PGS) for g in got] == list(range(GROUP_PGS))


class CountingIo(AioFromSync):
    """A ClientIo that counts each object's writes, from every thread."""

    def __init__(self) -> None:
        self.writes: Dict[str, int] = {}
        self.by: Set[Tuple[str, str]] = set()  # (object, the thread that wrote it)
        # writes started and not yet waited on, by group ('c'/'r'), and the most
        self.pending: Dict[str, int] = {}
        self.most: Dict[str, int] = {}
        self.lock = threading.Lock()

    def aio_write(self, obj: str, data: bytes, offset: int) -> Callable[[], None]:
        """Counted in flight from its start to its wait."""
        with self.lock:
            self.pending[obj[0]] = self.pending.get(obj[0], 0) + 1
            self.most[obj[0]] = max(self.most.get(obj[0], 0), self.pending[obj[0]])

        def wait() -> None:
            self.write(obj, data, offset)
            with self.lock:
                self.pending[obj[0]] -= 1
        return wait

    def write(self, obj: str, data: bytes, offset: int) -> None:
        with self.lock:
            self.writes[obj] = self.writes.get(obj, 0) + 1
            self.by.add((obj, threading.current_thread().name))
        time.sleep(0.001)  # a write's wait: the other threads run meanwhile

    def read(self, obj: str, length: int, offset: int) -> bytes:
        return bytes(length)

    def remove(self, obj: str) -> None:
        pass

    def objects(self) -> List[str]:
        return []


def test_a_split_load_drives_both_groups_and_returns_cs_bytes() -> None:
    io = CountingIo()
    c, r = ['c.0', 'c.1'], ['r.0', 'r.1', 'r.2']
    load = ClientWorkload(io, c, 1 << 20, in_flight=2, chunk_seconds=0.2, reference=r)
    nbytes, secs = load.drive(0.2, None)
    # as many writes in flight on each group, each group's from a thread of its own
    on = {g: {t for o, t in io.by if o.startswith(g)} for g in 'cr'}
    assert len(on['c']) == len(on['r']) == 1 and not on['c'] & on['r']
    assert io.most == {'c': 2, 'r': 2}
    on_c = sum(n for o, n in io.writes.items() if o in c)
    on_r = sum(n for o, n in io.writes.items() if o in r)
    assert on_c and on_r and secs > 0
    assert nbytes == on_c * 4096 and load.last_reference == on_r * 4096
    # the fill writes C's objects whole, then R's; the overwrite pass C's blocks
    assert load.object_count == 5 and load.block_count == 2 * 256
    io.writes.clear()
    assert load.fill(0, 5.0)[:2] == (5, 5 << 20)
    assert sorted(io.writes) == sorted(c + r)
    # without a group R, nothing is said of one
    alone = ClientWorkload(io, c, 1 << 20, in_flight=2, chunk_seconds=0.1)
    alone.drive(0.1, None)
    assert alone.last_reference is None


# ------------------------------------------------ the measurement's fields

def _dump(client: float) -> Dict[str, Any]:
    lat = {'avgcount': 0, 'sum': 0.0}
    return {'bluefs': {'bytes_written_wal': 0, 'bytes_written_sst': 0,
                       'bytes_written_slow': 0, 'files_written_sst': 0},
            'osd': {'op_w_in_bytes': client, 'op_w_latency': lat},
            'bluestore': {'kv_sync_lat': lat, 'kv_commit_lat': lat, 'kv_flush_lat': lat}}


def test_a_split_window_records_c_r_and_c_over_r() -> None:
    m = perf_counters.measure(_dump(0), _dump(0), seconds=10, flush_bytes=1, min_flushes=0,
                              bench_bytes=4096 * 300, bench_seconds=10.0,
                              reference_bytes=4096 * 200)
    assert m.iops == m.iops_c == pytest.approx(30.0)
    assert m.iops_r == pytest.approx(20.0) and m.c_over_r == pytest.approx(1.5)
    plain = perf_counters.measure(_dump(0), _dump(0), seconds=10, flush_bytes=1,
                                  min_flushes=0, bench_bytes=4096 * 300, bench_seconds=10.0)
    assert plain.iops_c is None and plain.iops_r is None and plain.c_over_r is None


def test_write_amp_counts_cs_bytes_alone() -> None:
    # R's writes never reach the canary: its RocksDB bytes are per C's bytes
    m = perf_counters.measure(_dump(0), _dump(0), seconds=10, flush_bytes=1, min_flushes=0,
                              bench_bytes=1000, bench_seconds=10.0, reference_bytes=9000)
    assert m.client_bytes == 1000


def test_a_measurement_saved_before_the_split_design_loads() -> None:
    m = perf_counters.measure(_dump(0), _dump(0), seconds=10, flush_bytes=1, min_flushes=0,
                              bench_bytes=4096, bench_seconds=1.0)
    old = {k: v for k, v in m.to_dict().items() if k not in ('iops_c', 'iops_r', 'c_over_r')}
    got = Measurement.from_dict(old)
    assert got.iops == m.iops and got.c_over_r is None and got.iops_c is None


# ------------------------------------------------ judging: C/R paired by round

# the fields of a measurement the judging here does not read
_REST = dict(seconds=20.0, client_bytes=1, db_bytes=1, wal_bytes=1, kv_commit_lat_ms=None,
             kv_flush_lat_ms=None, kv_syncs=1, flushes=1.0)


def _m(c: float, r: float) -> Dict[str, Any]:
    return {'iops': c, 'iops_c': c, 'iops_r': r, 'c_over_r': c / r, 'write_amp': 2.0,
            'window_short': False, 'kv_sync_lat_ms': 1.0}


DEFAULT = SearchSpace.candidate_from_options({})


def confirmed(r: int, arm: str, m: Dict[str, Any], steady: str = '') -> Trial:
    return Trial(index=0, kind='confirm', candidate=DEFAULT, options='', verdict='measured',
                 measurement=Measurement.from_dict({**_REST, **m}), round=r, arm=arm,
                 steady=steady)


def test_the_split_confirmation_judges_c_over_r_by_round_and_reports_c_and_r() -> None:
    plan = measurement_plan.plan_for(ClientRecord(SPLIT_POOL, 16, [], 1, design=SPLIT,
                                                  ref_seeds=WITHOUT_0, shared_host=True,
                                                  design_why='test'))
    trial = Trial(index=3, kind='candidate', candidate=DEFAULT, options='o')
    rec = confirm.plan([(trial, 0.0)], 5, 0.03, 'client', plan, 1.5)
    assert (rec.objective, rec.direction) == ('c_over_r', 'higher')
    # the machine is twice as fast in even rounds (both groups alike); the
    # candidate's C is 20% up on the baseline's, its R 5% down (a shared host)
    ts = []
    for r in range(5):
        speed = 2.0 if r % 2 == 0 else 1.0
        for arm, (c, ref) in ((BASELINE, (100.0, 100.0)), ('c1', (120.0, 95.0))):
            ts.append(confirmed(r, arm, _m(c * speed, ref * speed)))
    rec.orders = [[BASELINE, 'c1']] * 5
    conf = confirm.Confirmation(rec, ts, 0, None)
    # its objective passed: the steady check's pair comes next, under the
    # split load too (one window each, C's write-amp)
    nxt = conf.next()
    assert nxt is not None and nxt[2] == 'c1' and nxt[1] in ('c1', BASELINE)
    for arm in (BASELINE, 'c1'):
        # a steady window's: counted from the end of a compaction, its WAL
        # covered its families' cycle
        ts.append(confirmed(0, arm, dict(_m(100.0, 100.0), wal_cover=1.0, settled=30.0),
                            steady='c1'))
    assert conf.next() is None
    result = conf.update(complete=True)
    (arm,) = result.arms
    # per round, log of (120/95) over (100/100): the machine's factor cancels
    assert arm.objective.median == pytest.approx(math.log(120 / 95))
    assert arm.objective.low == pytest.approx(math.log(120 / 95))
    assert arm.iops_c is not None and arm.iops_c.median == pytest.approx(math.log(1.2))
    assert arm.iops_r is not None and arm.iops_r.ratio.median == pytest.approx(0.95)
    assert result.recommended == 'c1'
    # C's and R's figures go with the verdict to the store and back
    saved = json.dumps(result.to_json())
    assert list(json.loads(saved)['arms'][0])[-2:] == ['iops_c', 'iops_r']
    assert json.dumps(confirm.Verdict.from_json(json.loads(saved)).to_json()) == saved
    line = views.answer_line(rec, 0)
    assert "C's IOPS 1.20x" in line and "R's 0.95x" in line, line
    assert '(split, on osd.0: C/R' in line, line
    assert "C/R reads C's effect minus R's" in line, line
    # a sequential plan judges IOPS and gives no groups
    seq = confirm.plan([(trial, 0.0)], 5, 0.03, 'client', measurement_plan.plan_for(None), 1.5)
    assert seq.objective == 'iops' and seq.measurement_plan.design == SEQUENTIAL


def test_the_aa_noise_is_measured_on_the_figure_judged() -> None:
    h = split_harness()
    s = h.start(osd=0, allow_single_copy=True, workload='client', trials=1)
    h.run()
    assert s.s.state == 'done', s.s.error
    st = h.status
    base = [t['measurement'] for t in trials(s) if t['kind'] == 'baseline']
    assert st['noise']['objective'] == 'c_over_r'
    want = abs(math.log(base[1]['c_over_r'] / base[0]['c_over_r']))
    assert st['noise']['sd'] == pytest.approx(want)


# ------------------------------------------------ choosing the design

def test_auto_runs_split_where_the_pool_has_pgs_without_the_canary() -> None:
    h = split_harness()
    before = h.config_of(0)
    s = h.start(osd=0, allow_single_copy=True, workload='client', trials=1)
    c = s.s.client
    assert c.design == SPLIT and c.ref_seeds == WITHOUT_0 and c.ref_osds == 2
    # the fake's OSDs each have a host of their own
    assert c.shared_host is False
    h.run()
    assert s.s.state == 'done', s.s.error
    st = h.status
    assert st['design']['design'] == SPLIT and st['design']['note'] == ''
    assert "has 5 of its 16 PGs without osd.0" in st['design']['why']
    assert st['confirmation']['measurement_plan']['design'] == SPLIT
    for t in trials(s):
        m = t['measurement']
        assert m['iops_c'] > 0 and m['iops_r'] > 0 and m['c_over_r'] > 0, t
    # R's writes reached osd.1 and osd.2, never the canary (the fake's writes
    # go to the object's PG): C's bytes are all the canary's client took
    prefix = s.s.id[:8]
    assert c.removed > 0 and h.cluster.objects[(SPLIT_POOL, NAMESPACE)] == {}
    b = best_summary(s)
    assert b is not None and b['measurement_plan']['design'] == SPLIT
    assert all('iops_c' in c and 'iops_r' in c for c in b['candidates']), b['candidates']
    best = best_text(s)
    assert f"measurement design: split (pool {SPLIT_POOL!r} has 5" in best, best
    assert "C's IOPS" in best and "R's" in best, best
    text = status_text(s, detail=True)
    assert f'measurement design: split (pool {SPLIT_POOL!r} has 5' in text, text
    assert 'and as many in 5 without it (group R, on 2 OSDs)' in text, text
    assert prefix and h.config_of(0) == before


def test_the_search_scores_a_split_window_on_c_over_r() -> None:
    """A window where the machine sped both groups up by 1.5x scores as the
    baseline under split (C/R unchanged) and as 1.5x better on C alone."""
    base = perf_counters.Baseline.of([Measurement.from_dict({**_REST, **_m(100, 100)})] * 2,
                                     'client')
    assert base.c_over_r == pytest.approx(1.0)
    faster = Measurement.from_dict({**_REST, **_m(150, 150)})
    assert perf_counters.score(faster, base, 'client', SPLIT) == pytest.approx(0.0)
    assert perf_counters.score(faster, base, 'client') == pytest.approx(-math.log(1.5))
    # a baseline saved before the split design has no C/R: no score, not C's
    old = perf_counters.Baseline(**{k: v for k, v in base.to_json().items() if k != 'c_over_r'})
    with pytest.raises(ValueError, match='C/R'):
        perf_counters.score(faster, old, 'client', SPLIT)


def test_a_split_sessions_candidates_are_scored_on_c_over_r() -> None:
    h = split_harness()
    s = h.start(osd=0, allow_single_copy=True, workload='client', trials=2)
    h.run()
    assert s.s.state == 'done', s.s.error
    base = s.s.baseline.c_over_r
    scored = [t for t in trials(s) if t['kind'] == 'candidate' and t.get('score') is not None]
    assert scored and base > 0
    for t in scored:
        want = -math.log(t['measurement']['c_over_r'] / base)
        assert t['score'] == pytest.approx(want), t


def test_the_split_load_writes_r_only_where_the_canary_is_not() -> None:
    h = split_harness()
    seen: Dict[str, int] = {}

    def look(s: Any) -> bool:
        if s.s.phase == 'measure':
            seen.update(h.cluster.objects.get((SPLIT_POOL, NAMESPACE), {}))
            return True
        return False
    s = h.start(osd=0, allow_single_copy=True, workload='client', trials=1)
    h.run(until=look)
    prefix = s.s.id[:8]
    r = [n for n in seen if n.startswith(prefix + 'r.')]
    c = [n for n in seen if n.startswith(prefix + '.')]
    assert r and c
    assert {placement.pg_of(n, 16, NAMESPACE) for n in r} <= set(WITHOUT_0)
    assert not {placement.pg_of(n, 16, NAMESPACE) for n in c} & set(WITHOUT_0)


def test_a_pool_of_7300_pgs_on_12_osds_keeps_the_head_small_all_session() -> None:
    # issue 45: the canary's 1,825 PGs and the 5,475 without it took the head
    # to 43,886 bytes at the start, past the store's 48 KiB mid-session
    h = split_harness(client_pool='big')
    h.cluster = FakeCluster(h.clock, n_osds=12)
    h.cluster.add_pool('big', size=3, min_size=2, pgs=7300)
    heads: List[int] = []
    store = SessionStore(lambda k: None, lambda k, v: heads.append(len(v or ''))
                         if k == HEAD_KEY else None)
    h.save = store.save  # type: ignore[method-assign]
    s = h.start(osd=0, workload='client', trials=1)
    c = s.s.client
    assert (len(c.seeds), len(c.ref_seeds)) == (GROUP_PGS, GROUP_PGS)
    pgs = {pg_seed(pg): pg.up for pg in h.cluster.pgs() if pg.pool == 2}
    assert all(0 in pgs[p] for p in c.seeds) and not any(0 in pgs[p] for p in c.ref_seeds)
    assert c.ref_osds == 11 and 'has 5475 of its 7300 PGs without osd.0' in c.design_why
    seen: Dict[str, int] = {}
    h.run(until=lambda s: bool(seen.update(h.cluster.objects.get(('big', NAMESPACE), {})))
          or s.s.phase == 'measure')
    h.run()
    assert s.s.state == 'done', s.s.error
    # the sampled PGs hold every object of their group, the count asked for
    prefix = s.s.id[:8]
    for group, seeds in (('.', c.seeds), ('r.', c.ref_seeds)):
        names = [n for n in seen if n.startswith(prefix + group)]
        assert len(names) == c.count and {placement.pg_of(n, 7300, NAMESPACE)
                                          for n in names} <= set(seeds)
    assert max(heads) < 16 << 10, heads


def test_r_on_the_canarys_host_is_said() -> None:
    h = split_harness()
    h.cluster.place({'node-a': [0, 1], 'node-b': [2]})
    s = h.start(osd=0, allow_single_copy=True, workload='client', trials=1)
    assert s.s.client.shared_host is True
    assert "C/R reads C's effect minus R's" in h.status['design']['note']


@pytest.mark.parametrize('design,pool,workload,want,why', [
    # rbd's PGs all hold osd.0
    ('auto', 'rbd', 'client', SEQUENTIAL, "pool 'rbd': 0 of its 4 PGs leave the canary out"),
    ('sequential', SPLIT_POOL, 'client', SEQUENTIAL, 'measurement_design is sequential'),
    ('auto', SPLIT_POOL, 'osd-bench', SEQUENTIAL, 'the osd-bench workload writes no client'),
])
def test_the_design_falls_back_to_sequential_and_says_why(design: str, pool: str, workload: str,
                                                          want: str, why: str) -> None:
    h = split_harness(measurement_design=design, client_pool=pool)
    s = h.start(osd=0, allow_single_copy=True, workload=workload)
    assert h.status['design']['design'] == want and why in h.status['design']['why']
    assert measurement_plan.plan_for(s.s.client).design == want


def test_a_split_with_too_little_room_falls_back_under_auto() -> None:
    h = split_harness()
    h.cluster.pool_by_id[2].room = 20 << 20  # one keyspace of 16 MiB, not two
    s = h.start(osd=0, allow_single_copy=True, workload='client')
    assert s.s.client.design == SEQUENTIAL
    assert 'does not take two keyspaces' in s.s.client.design_why
    # a quota that takes one keyspace, not two, as well
    h = split_harness()
    h.cluster.pool_by_id[2].quota_bytes = 20 << 20
    s = h.start(osd=0, allow_single_copy=True, workload='client')
    assert s.s.client.design == SEQUENTIAL
    assert ('its quota leaves 0.02 GiB (ceph osd pool get-quota): not two keyspaces'
            in s.s.client.design_why)


@pytest.mark.parametrize('pool,workload,room,message', [
    ('rbd', 'client', None, "pool 'rbd' cannot hold a reference group: 0 of its 4 PGs"),
    (SPLIT_POOL, 'osd-bench', None, 'measurement_design split needs the client workload'),
    (SPLIT_POOL, 'client', 20 << 20, r'its room \(0.02 GiB to nearfull\) does not take two'),
])
def test_split_asked_for_where_it_cannot_run_is_refused_and_changes_nothing(
        pool: str, workload: str, room: Optional[int], message: str) -> None:
    h = split_harness(measurement_design='split', client_pool=pool)
    # room for one keyspace of 16 MiB, not for two
    h.cluster.pool_by_id[2].room = room
    before = h.config_of(0)
    with pytest.raises(StartRefused, match=message):
        h.start(osd=0, allow_single_copy=True, workload=workload)
    assert h.saved == [] and h.config_of(0) == before


def test_the_split_plan_is_windowed_as_sequential() -> None:
    plan = measurement_plan.plan_for(ClientRecord(SPLIT_POOL, 16, [], 1, design=SPLIT,
                                                  ref_seeds=[1, 2, 3, 4]))
    assert plan.reference_pgs == 4
    for order in ([BASELINE, 'c1'], ['c1', BASELINE]):
        assert windows(plan, order) == order
