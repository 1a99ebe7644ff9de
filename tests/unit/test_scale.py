"""`apply --dry-run` on a 2,000-OSD, 100-host cluster (issue 22 item 9):
O(hosts + 1) mon commands, not O(OSDs), and under 2 s of Python, through the
module's real command method and its real MgrCluster over scale_mgr, a fake
of the mgr's Python API.  A session's start at 10,000 OSDs on 500 hosts and
a pool of 65,536 PGs: what it saves is the size it is at 1,000 OSDs (issue
45).  A rollout's wait poll and a session's wait_up and measure polls at
2,000 OSDs: what they read, serialise and copy is what changed (issue 45;
counted, so 2,000 OSDs, 50 values of OSD records, show an O(OSDs) poll as
10,000 would, in a fifth of the time).
Then the fake itself: it must answer as the mon does, or the counts above
would be of the wrong work.

The figures by cluster size: qa/bench/rollout_scale.py.
"""
import copy
import errno
import json
import re
import random
import time
from typing import Any, Dict, List, Tuple

import pytest

import mgr_mock
import scale_mgr
from scale_mgr import CallBudgetExceeded, ScaleMgr

mgr_mock.install()
from rocks_autotune import cluster, gate, panel, session_start, views  # noqa: E402
from rocks_autotune.canary import ANNEX, OPTIONS  # noqa: E402
from rocks_autotune.cluster import MgrCluster  # noqa: E402
from rocks_autotune.session_settings import Params, Settings  # noqa: E402
from rocks_autotune.measurement_plan import SPLIT  # noqa: E402
from rocks_autotune.rocksdb_options import NEW_TUNING, PACIFIC_DEFAULT  # noqa: E402
from rocks_autotune.store import SessionState, SessionStore  # noqa: E402
from rocks_autotune.workload import GROUP_PGS, pg_seed  # noqa: E402
from rocks_autotune import store  # noqa: E402
from rocks_autotune.store import MAX_VALUE, ROLLOUT_KEY  # noqa: E402

# the unit tier runs these, not unit-tentacle: they bound the module's own
# work over a mock of thousands of OSDs, which no release's Python changes,
# and they are a third of the suite's time
pytestmark = pytest.mark.scale

OSDS, HOSTS = 2000, 100
# the bounds: mon commands + tells, and Python time, for one dry run
CALLS = HOSTS + 10
SECONDS = 2.0


def test_apply_dry_run_on_2000_osds_is_o_hosts_and_under_2_s() -> None:
    # past 10x the bound the fake stops the command: an O(OSDs) plan fails
    # here in a fraction of a second instead of running its thousands of calls
    mgr = ScaleMgr(OSDS, HOSTS, budget=10 * CALLS)
    mod = scale_mgr.module_over(mgr)
    t = time.process_time()
    try:
        r = mod.cmd_apply(options=NEW_TUNING, device_class='ssd', dry_run=True,
                          format='json')
    except CallBudgetExceeded as e:
        pytest.fail(f'apply --dry-run is O(OSDs): {e}')
    seconds = time.process_time() - t
    calls = mgr.mon_total + mgr.tell_total
    assert r.retval == 0, r.stderr
    assert calls <= CALLS, (f'{mgr.mon_total} mon commands {dict(mgr.mon_calls)} + '
                            f'{mgr.tell_total} tells {dict(mgr.tell_calls)} on {HOSTS} hosts')
    assert seconds < SECONDS, (f'{seconds:.2f} s of Python ({mgr.fake_seconds:.2f} s of it in '
                               f'the fake); mgr.get {dict(mgr.get_calls)}')
    # the plan: every OSD once, host by host in CRUSH order, nothing changed
    plan = json.loads(r.stdout)
    order = [o['osd'] for o in plan['osds']]
    assert sorted(order) == list(range(OSDS))
    hosts = [o['host'] for o in plan['osds']]
    assert hosts == [h for h in mgr.host_names for _ in range(OSDS // HOSTS)]
    assert all(o['host'] == mgr.host_names[o['osd'] % HOSTS] for o in plan['osds'])
    assert order[:3] == [0, HOSTS, 2 * HOSTS]  # osd.0, osd.100, osd.200 on ceph-node000
    assert list(plan['sets']) == [f'osd.{i}' for i in order]
    assert all(v == {OPTIONS: NEW_TUNING} for v in plan['sets'].values())
    assert all(o['before'][OPTIONS] == PACIFIC_DEFAULT for o in plan['osds'])
    assert not any(p in mgr.mon_calls for p in ('config set', 'config rm', 'osd add-noout'))


# ------------------------------------------------------------ a session's records

# what a start saves, at most, value by value: a constant, whatever the
# cluster's size (the client record's PG seeds are at most GROUP_PGS a group)
RECORD = 8 << 10


@pytest.fixture(scope='module')
def big() -> ScaleMgr:
    return ScaleMgr(10000, 500, pg_num=65536, per_osd_config=False)


def saved_start(mgr: ScaleMgr) -> Tuple[SessionState, Dict[str, int]]:
    """A client session's first record on `mgr`'s cluster, and the bytes of
    each value its first save writes (the store refuses one over MAX_VALUE)."""
    st = session_start.first_state(MgrCluster(mgr), Params(osd=7, workload='client'),
                                   Settings(), 100.0)
    kv: Dict[str, str] = {}
    SessionStore(kv.get, lambda k, v: kv.__setitem__(k, str(v))).save(st)
    return st, {k: len(v) for k, v in kv.items()}


def test_a_start_at_10000_osds_saves_what_it_saves_at_1000(big: ScaleMgr) -> None:
    # issue 45: the split design kept every PG of the pool without the
    # canary, and their OSDs: refused at 8,192 PGs ('session would be 54090
    # bytes'), at 65,536 PGs 507,696 bytes
    small = ScaleMgr(1000, 50, pg_num=8192)
    (_, at_small), (st, at_big) = saved_start(small), saved_start(big)
    assert max(at_big.values()) <= RECORD and max(at_small.values()) <= RECORD
    assert at_big['session'] <= at_small['session'] + 512, (at_small, at_big)
    c = st.client
    assert c.design == SPLIT and "has 65517 of its 65536 PGs without osd.7" in c.design_why
    # C is every PG of the canary's (it has fewer than GROUP_PGS); R a sample
    # of the others, spread over hundreds of OSDs, none the canary
    up = {pg_seed(pg): pg.up for pg in MgrCluster(big).pgs()}
    mine = sorted(s for s, osds in up.items() if 7 in osds)
    assert c.seeds == mine and len(mine) < GROUP_PGS
    assert len(c.ref_seeds) == GROUP_PGS and not any(7 in up[s] for s in c.ref_seeds)
    assert c.ref_osds == len({o for s in c.ref_seeds for o in up[s]}) > 500


def test_what_a_pause_or_a_start_says_of_the_osds_is_bounded(big: ScaleMgr) -> None:
    # a rack of 500 OSDs down, and all but one OSD out: the session keeps a
    # pause's reasons (its message, the alert) and the start's reason
    c = MgrCluster(big)
    down = range(1000, 1500)
    for o in down:
        big.set_up(o, False)
    try:
        for reasons in (gate.look(c, 7).blockers(True), gate.restart_blockers(c, 7, True)):
            assert reasons[0] == 'osd.1000-1499 are down', reasons  # one line, folded
    finally:
        for o in down:
            big.set_up(o, True)
    big.in_ = [False] * big.n
    big.in_[7] = True
    big._changed()
    try:
        osd, reason = gate.choose_canary(c, Params(workload='client'))
    finally:
        big.in_ = [True] * big.n
        big._changed()
    assert osd == 7 and reason.count('; skipped: ') == gate.NAMED + 1, reason
    assert re.search(r'; skipped: \d{4} more OSDs likewise$', reason), reason


def rollout_heads(osds: int, hosts: int, down: int) -> Dict[str, int]:
    """An apply to every OSD (10 PGs each: the PGs do not matter here); once its
    first OSD is done, `down` OSDs scattered over the other hosts go down: it
    pauses before the next, is aborted, and reverted.  Its head's size at each
    of these, every stored value checked under MAX_VALUE at each."""
    mgr = ScaleMgr(osds, hosts, pgs_per_osd=10)
    mod = scale_mgr.module_over(mgr)
    clock = mod.clock
    heads: Dict[str, int] = {}

    def look(when: str) -> None:
        big = max(mod.mock_store.items(), key=lambda kv: len(kv[1]))
        assert len(big[1]) < MAX_VALUE, f'{when}: {big[0]} is {len(big[1])} bytes'
        heads[when] = len(mod.mock_store[ROLLOUT_KEY])

    def step(n: int) -> None:
        for _ in range(n):
            clock.advance(mod.rollout.step())
            mod.publish()
    r = mod.cmd_apply(options=NEW_TUNING, device_class='ssd')
    assert r.retval == 0, r.stderr
    look('started')
    while mod.rollout.r.osds[0].status != 'done':
        step(1)
    # not on the first host: the next OSD in flight (osd.<hosts>) is held at the gate
    for i in random.Random(1).sample([i for i in range(osds) if i % hosts], down):
        mgr.set_up(i, False)
    step(4)
    assert mod.rollout.r.message.startswith('paused before'), mod.rollout.r.message
    look('paused')
    assert mod.cmd_abort().retval == 0
    step(2)
    assert mod.rollout.r.state == 'aborted', mod.rollout.r.message
    look('aborted')
    r = mod.cmd_revert()
    assert r.retval == 0, r.stderr
    step(2)
    look('reverting')
    return heads


def test_the_rollout_head_does_not_grow_with_the_osds_nor_the_osds_down() -> None:
    # issue 45: every OSD id of the plan and every OSD down were in it: past
    # MAX_VALUE at ~8,100 OSDs, or 2,000 with 1,500 down, and the apply wedged
    # (2,000 more OSDs put 16 KiB more in it: a byte an OSD fails here)
    small, large = rollout_heads(2000, 100, 1500), rollout_heads(4000, 200, 1500)
    # the same but for the ids' digits (osd.1234 and osd.123)
    assert all(abs(large[k] - small[k]) < 128 and large[k] < 4 << 10 for k in small), \
        (small, large)


def osd_restarts(mod: Any, mgr: ScaleMgr, k: int,
                 writes: List[int]) -> Tuple[Dict[str, int], Dict[str, int]]:
    """The rollout's OSD number k+1 (the OSDs before it done), from its `next`
    step to up on the options, as the serve loop steps and publishes: its mon
    commands and mgr.get calls, by name, and (into `writes`) its KV values."""
    r = mod.rollout.r
    while r.phase != 'next' or any(o.status not in ('done', 'skipped') for o in r.osds[:k]):
        mod.clock.advance(mod.rollout.step())
        mod.publish()
    mgr.reset_counts()
    del writes[:]
    while r.osds[k].status != 'done':
        assert r.state == 'running', r.message
        mod.clock.advance(mod.rollout.step())
        mod.publish()
    return dict(mgr.mon_calls), dict(mgr.get_calls)


def test_each_restart_of_a_10000_osd_rollout_costs_what_it_costs_at_any_size() -> None:
    # a step's mon commands, OSD map reads and KV writes do not grow with the
    # OSDs (their bytes do: the maps and the config dump are of every OSD);
    # the set step read every OSD's class, PG count and CRUSH location for
    # one OSD's mask (7 maps), the gate and the health policy the OSD map 7
    # times, and a revert's set step dumped the config twice
    mgr = ScaleMgr(10000, 500, pg_num=8192, per_osd_config=False)
    mod = scale_mgr.module_over(mgr)
    writes: List[int] = mod.mock_store_writes
    assert mod.cmd_apply(options=NEW_TUNING, device_class='ssd').retval == 0
    # the first save: the OSD records 40 a value, the crash ids 2,000 a value
    assert len(writes) <= 10000 // store.ROLLOUT_CHUNK + 10000 // store.ROLLOUT_CRASH_CHUNK + 4
    assert max(writes) < 16 << 10, max(writes)
    for kind in ('apply', 'revert'):
        mon, got = osd_restarts(mod, mgr, 0, writes)
        assert mon.pop('config dump') == 1 and mon.pop('config get', 0) <= 2, (kind, mon)
        assert sum(mon.values()) <= 4, (kind, mon)  # set or rm, ok-to-stop, noout on, off
        assert got.get('osd_map', 0) <= 4 and set(got) <= {'osd_map', 'pg_summary', 'health'}, \
            (kind, got)
        # the head at each step, the OSD's chunk of 40 records when it changes
        assert len(writes) <= 12 and max(writes) < 16 << 10, (kind, writes)
        if kind == 'apply':
            what_a_user_sees(mod)
            assert mod.cmd_abort().retval == 0
            mod.clock.advance(mod.rollout.step())
            assert mod.rollout.r.state == 'aborted', mod.rollout.r.message
            assert mod.cmd_revert().retval == 0
    # the restart gate and the health policy: the OSD map once each
    mgr.reset_counts()
    assert gate.restart_blockers(mod.cluster, 7) == []
    assert gate.look(mod.cluster, 7).blockers(False) == []
    assert mgr.get_calls == {'osd_map': 2, 'pg_summary': 2, 'health': 1}
    # what `status` says of 10,000 OSDs: one line of each kind, OSD ranges folded
    assert len(mod.cmd_status().stdout) < 2 << 10


def what_a_user_sees(mod: Any) -> None:
    """A 10,000-OSD apply, its first OSD done: its status (text, `-f json`,
    /api/status) and its progress event are bounded in the OSDs, even with
    thousands skipped (they held every OSD and its masks: 5.3 MiB of JSON at
    each publish, a 10,000-row table on the panel, 10,000 refs an update);
    every OSD is `status --osds`."""
    r = mod.rollout.r
    pending = [o for o in r.osds if o.status == 'pending']
    assert len(pending) == len(r.osds) - 1
    refs = [a[1]['refs'] for m, f, a, _ in mod.mock_remote if (m, f) == ('progress', 'update')]
    assert refs and max(len(x) for x in refs) <= views.SHOWN
    try:
        for o in pending[1::2]:  # as if their osd.N had been set by someone else
            o.status, o.error = 'skipped', (f'osd.{o.osd} bluestore_rocksdb_options is now '
                                            "'x', set by someone else since the plan")
        mod.publish()
        st = mod.cmd_status(format='json').stdout
        api = panel.Panel(lambda: mod.panel_snapshot).handle('GET', '/api/status').body
        assert len(st) < 64 << 10 and len(api) < 64 << 10, (len(st), len(api))
        ro = json.loads(st)['rollout']
        skipped = len(pending) // 2
        assert (ro['total'], ro['counts']['skipped'], ro['counts']['done']) == (10000, skipped, 1)
        assert len(ro['notable']) == views.SHOWN and ro['notable_more'] == skipped - views.SHOWN
        text = mod.cmd_status().stdout
        assert len(text) < 8 << 10 and f'and {skipped - views.SHOWN} more' in text, text
        every = json.loads(mod.cmd_status(format='json', osds=True).stdout)['rollout']
        assert [o['osd'] for o in every['osds']] == [o.osd for o in r.osds]
        assert len(every['sets']) == 10000
        assert len(mod.cmd_status(osds=True).stdout.splitlines()) > 10000
    finally:
        for o in pending:
            o.status, o.error = 'pending', ''
        mod.publish()


def at_a_wait_poll(osds: int, hosts: int, **kw: Any) -> Tuple[Any, ScaleMgr]:
    """The module rolling out to every OSD, its first OSD restarted and not up
    yet: each step now is a wait poll."""
    mgr = ScaleMgr(osds, hosts, **kw)
    mod = scale_mgr.module_over(mgr)
    assert mod.cmd_apply(options=NEW_TUNING, device_class='ssd').retval == 0
    while mod.rollout.r.phase != 'wait':
        mod.clock.advance(mod.rollout.step())
        mod.publish()
    mgr.set_up(mod.rollout.r.osds[0].osd, False)  # restarting
    mgr.warm()
    return mod, mgr


def wait_polls(mod: Any, n: int) -> None:
    """What the serve loop does at each: the step, then publish."""
    for _ in range(n):
        mod.clock.advance(mod.rollout.step())
        mod.publish()
    assert mod.rollout.r.phase == 'wait'


def counted_dumps(m: Any) -> List[int]:
    """The store's serialisations from now on, through the monkeypatch `m`:
    each text's length."""
    dumped: List[int] = []

    class Json:
        loads = staticmethod(json.loads)

        @staticmethod
        def dumps(obj: Any) -> str:
            text = json.dumps(obj)
            dumped.append(len(text))
            return text
    m.setattr(store, 'json', Json)
    return dumped


def test_a_wait_poll_costs_what_changed_not_the_osds(monkeypatch: Any) -> None:
    # issue 45: each poll serialised every OSD record to find the changed
    # chunk, deep-copied the record twice to publish it, and decoded three
    # maps of every OSD: 0.67 s of Python a poll at 10,000 OSDs
    mod, mgr = at_a_wait_poll(2000, 100, pgs_per_osd=10)
    copies: List[int] = []
    deepcopy = copy.deepcopy
    dumped = counted_dumps(monkeypatch)
    monkeypatch.setattr(copy, 'deepcopy', lambda x, *a: copies.append(1) or deepcopy(x, *a))
    mgr.reset_counts()
    wait_polls(mod, 3)
    # the head, once a poll (and unchanged: not written again)
    assert len(dumped) == 3 and sum(dumped) < 3 * (4 << 10), dumped[:5]
    assert copies == []
    assert mgr.get_calls == {'osd_map': 3}  # up and up_from: not the classes nor PG counts


def at_a_session_poll(mgr: ScaleMgr, phase: str, mod: Any = None) -> Any:
    """The module running an osd bench session on osd.7 of `mgr`, its first
    window recorded (or `mod`'s session, on), stepped to the next `phase`:
    wait_up, its canary restarting (down: each step is a poll), or measure,
    a window's chunk a step."""
    if mod is None:
        mod = scale_mgr.module_over(mgr)
        r = mod.cmd_start(osd=7, workload='osd-bench', trials=2, duration=60)
        assert r.retval == 0, r.stderr
    s = mod.session
    mgr.set_up(7, True)
    for _ in range(200):
        mod.clock.advance(s.step())
        mod.publish()
        if s.s.trials and s.s.phase == phase:
            break
    assert s.s.phase == phase, (s.s.phase, s.s.message, s.s.error)
    if phase == 'wait_up':
        mgr.set_up(7, False)  # restarting
    mgr.warm()
    return mod


def session_polls(mod: Any, n: int) -> None:
    """What the serve loop does at each: the step, then publish."""
    phase = mod.session.s.phase
    for _ in range(n):
        mod.clock.advance(mod.session.step())
        mod.publish()
    assert mod.session.s.phase == phase, mod.session.s.message


def test_a_session_poll_costs_what_changed_not_the_osds(monkeypatch: Any) -> None:
    # issue 45: each wait poll built an OsdInfo of every OSD to look at the
    # canary's, and each poll serialised every trial to find the changed one
    # and deep-copied the whole record to publish it
    mgr = ScaleMgr(2000, 100, per_osd_config=False)
    copied: List[Any] = []
    built: List[int] = []
    deepcopy, osd_info = copy.deepcopy, cluster.OsdInfo
    mod = None
    for phase in ('wait_up', 'measure'):
        mod = at_a_session_poll(mgr, phase, mod)
        with monkeypatch.context() as m:
            dumped = counted_dumps(m)
            m.setattr(copy, 'deepcopy', lambda x, *a: copied.append(x) or deepcopy(x, *a))
            m.setattr(cluster, 'OsdInfo', lambda **kw: built.append(1) or osd_info(**kw))
            mgr.reset_counts()
            del copied[:], built[:]
            session_polls(mod, 3)
        # a poll saves the start record, the confirmation and the head: no trial
        assert len(dumped) == 3 * 3 and max(dumped) < 8 << 10, (phase, dumped)
        assert not any(isinstance(x, dict) and 'trials' in x for x in copied), phase
        assert len(built) == (3 if phase == 'wait_up' else 0), phase  # the canary's
        # the canary's state from the OSD map; a window's chunk reads no map
        assert mgr.get_calls == ({'osd_map': 3} if phase == 'wait_up' else {}), phase


def test_the_restart_gate_reads_the_pools_from_the_osd_map(big: ScaleMgr) -> None:
    # their layout and full flag: not their use (df) nor every OSD's (osd_stats)
    big.reset_counts()
    assert gate.thin_pools(MgrCluster(big), 7) == []
    assert big.get_calls == {'osd_map': 1}


# ------------------------------------------------------------ the fake

@pytest.fixture
def small() -> ScaleMgr:
    return ScaleMgr(40, 4)


def mon(mgr: ScaleMgr, **cmd: Any) -> Any:
    r, out, err = mgr.mon_command(cmd)
    assert r == 0, err
    return out


def test_the_fake_builds_a_2000_osd_cluster_quickly() -> None:
    t = time.process_time()
    mgr = ScaleMgr(OSDS, HOSTS)
    assert time.process_time() - t < 2.0
    assert mgr.pg_num == 65536
    assert sum(mgr.num_pgs) == 3 * mgr.pg_num
    # each PG on three hosts
    assert all(len({i % HOSTS for i in acting}) == 3 for acting in mgr.pgs[:1000])


def test_the_maps_read_as_mgrcluster_reads_them(small: ScaleMgr) -> None:
    c = MgrCluster(small)
    osds = c.osds()
    assert sorted(osds) == list(range(40))
    assert all(o.up and o.in_ and o.device_class == 'ssd' and o.num_pgs > 0
               for o in osds.values())
    order = c.crush_order()
    assert order[:10] == [(i, 'ceph-node000') for i in range(0, 40, 4)]
    assert [h for _, h in order] == [f'ceph-node00{h}' for h in range(4) for _ in range(10)]
    pools = c.pools()
    assert [(p.size, p.min_size, p.erasure) for p in pools.values()] == [(3, 2, False)]
    assert c.health() == ('HEALTH_OK', [])
    assert c.pgs_active_clean() and c.inactive_pgs() == 0
    assert c.osd_flags() == {}
    assert c.recent_crashes() == []
    osd_map = small.get('osd_map')
    assert osd_map['flags'] == 'sortbitwise,recovery_deletes,purged_snapdirs,pglog_hardlimit'
    assert len(small.get('pg_stats')['pg_stats']) == small.pg_num
    assert small.get('no_such_thing') is None


def test_config_follows_the_mons_precedence(small: ScaleMgr) -> None:
    c = MgrCluster(small)
    # seeded: osd/class:ssd and osd/host:ceph-node000 masks on osd_memory_target
    assert c.config_get('osd.0', 'osd_memory_target') == '6442450944'  # host beats class
    assert c.config_get('osd.1', 'osd_memory_target') == '8589934592'  # class
    assert c.config_get('osd.1', OPTIONS) == PACIFIC_DEFAULT  # the default
    c.config_set('osd', OPTIONS, 'a=1')
    c.config_set('osd/class:ssd', OPTIONS, 'b=2')
    assert c.config_get('osd.1', OPTIONS) == 'b=2'  # a mask beats none, in one section
    c.config_set('osd.1', OPTIONS, 'c=3')
    c.config_set('osd/host:ceph-node001', OPTIONS, 'd=4')
    assert c.config_get('osd.1', OPTIONS) == 'c=3'  # osd.N beats any mask at osd
    assert c.config_get('osd.5', OPTIONS) == 'd=4'  # a location beats a class
    assert c.config_get('osd.2', OPTIONS) == 'b=2'
    c.config_set('global', OPTIONS, 'e=5')
    assert c.config_get('osd.2', OPTIONS) == 'b=2'  # osd beats global
    assert c.config_get_own('osd/class:ssd', OPTIONS) == 'b=2'
    assert c.config_get_own('osd/host:ceph-node002', OPTIONS) is None
    c.config_rm('osd.1', OPTIONS)
    assert c.config_get('osd.1', OPTIONS) == 'd=4'
    assert c.config_entries(1, [OPTIONS, ANNEX]) == {
        'global': {OPTIONS: 'e=5'}, 'osd': {OPTIONS: 'a=1'},
        'osd/class:ssd': {OPTIONS: 'b=2'}, 'osd/host:ceph-node001': {OPTIONS: 'd=4'}}
    assert c.option_default(OPTIONS) == PACIFIC_DEFAULT
    assert small.mon_command({'prefix': 'config set', 'who': 'osd', 'name': 'no_such_option',
                              'value': '1'})[0] == -errno.EINVAL
    assert small.mon_command({'prefix': 'config get', 'who': 'osd.1',
                              'key': 'no_such_option'})[0] == -errno.ENOENT


def test_the_config_dump_is_cephs(small: ScaleMgr) -> None:
    dump: List[Dict[str, Any]] = json.loads(mon(small, prefix='config dump', format='json'))
    keys = {'section', 'name', 'value', 'level', 'can_update_at_runtime', 'mask',
            'location_type', 'location_value', 'device_class'}
    assert all(set(e) == keys for e in dump)
    sections = [e['section'] for e in dump]
    assert sections[:4] == ['global'] * 4 and sections.index('mon') < sections.index('mgr') \
        < sections.index('osd') < sections.index('osd.0')
    assert sum(1 for s in sections if s.startswith('osd.')) == 40  # mclock capacity per OSD
    cls = next(e for e in dump if e['device_class'])
    assert (cls['section'], cls['mask'], cls['location_type']) == ('osd', 'class:ssd', '')
    host = next(e for e in dump if e['location_type'])
    assert (host['mask'], host['location_value']) == ('host:ceph-node000', 'ceph-node000')


def test_tells_answer_what_the_osd_started_with(small: ScaleMgr) -> None:
    c = MgrCluster(small)
    c.config_set('osd.3', OPTIONS, 'x=1')
    assert c.config_get_running(3, OPTIONS) == PACIFIC_DEFAULT
    small.restart(3)
    assert c.config_get_running(3, OPTIONS) == 'x=1'
    assert small.tell_calls == {'config get': 2}


def test_noout_ok_to_stop_and_a_down_osd(small: ScaleMgr) -> None:
    c = MgrCluster(small)
    assert c.ok_to_stop(0)[0]
    c.set_noout(0, True)
    assert c.has_noout(0) and c.osd_flags() == {'osd.0': ['noout']}
    assert c.health() == ('HEALTH_WARN', ['OSD_FLAGS'])
    c.set_noout(0, False)
    assert not c.has_noout(0)
    peer = next(o for o in small.pgs[0] if o != small.pgs[0][0])
    small.set_up(peer, False)
    assert not c.osds()[peer].up and not c.pgs_active_clean()
    ok, why = c.ok_to_stop(small.pgs[0][0])
    assert not ok and 'offline' in why
    assert small.mon_calls['osd ok-to-stop'] == 2


def test_every_call_is_counted_and_the_budget_stops_a_loop() -> None:
    mgr = ScaleMgr(40, 4, budget=5)
    c = MgrCluster(mgr)
    c.osds()
    assert mgr.get_calls == {'osd_map': 1, 'osd_map_crush': 1, 'osd_stats': 1}
    assert mgr.bytes_out['get'] > 40 * 1000
    with pytest.raises(CallBudgetExceeded):
        for i in range(6):
            c.config_get(f'osd.{i}', OPTIONS)
    assert mgr.mon_total == 6


def test_a_batch_of_20_costs_per_osd_what_one_restart_does_and_the_maps_once() -> None:
    # --max-parallel 20 at 10,000 OSDs on 500 hosts (20 a host, no PG on two of
    # a host): ok-to-stop --max 20 names the first OSD's host, one batch a host.
    # At the docs' 30-60 s a restart (45 s, doc/bench/module-cost.md), one at a
    # time is 10,000 x 45 s = 5.2 days; a batch waits for its slowest OSD and
    # its PGs, about one restart's time: 500 batches x 45 s = 6.3 hours
    mgr = ScaleMgr(10000, 500, pg_num=8192, per_osd_config=False)
    mod = scale_mgr.module_over(mgr)
    assert mod.cmd_apply(options=NEW_TUNING, device_class='ssd', max_parallel=20).retval == 0
    r = mod.rollout.r
    while r.phase != 'set':
        mod.clock.advance(mod.rollout.step())
    first = [r.osds[f.i].osd for f in r.batch]
    assert len(first) == 20 and {mgr.host_of[i] for i in first} == {mgr.host_of[first[0]]}
    mgr.reset_counts()
    heads: List[int] = []
    while r.phase != 'next':
        assert r.state == 'running', r.message
        mod.clock.advance(mod.rollout.step())
        mod.publish()
        heads.append(len(mod.rollout_store._written['rollout']))
    assert all(r.osds[i].status == 'done' for i in range(20))
    # the head keeps a restart record of each OSD in flight: 5 KiB at 20 (21 KiB
    # at MAX_PARALLEL, 100), under the store's 48 KiB a value
    assert max(heads) < 8 << 10, heads
    mon = dict(mgr.mon_calls)
    # each OSD's own: its mask set, config get twice (the mask's answer, the
    # restart's expectation), noout on and off; the batch's: one config dump,
    # one ok-to-stop (the gate's, of the 20 together; --max was asked at next)
    assert mon.pop('config dump') == 1 and mon.pop('osd ok-to-stop') == 1, mon
    assert sum(mon.values()) <= 5 * 20, mon
    # the OSD map once a step (the set step, the health policy, the gate, each
    # wait poll): not once an OSD
    assert mgr.get_calls.get('osd_map', 0) <= 8, dict(mgr.get_calls)
