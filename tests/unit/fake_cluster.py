"""A simulated cluster and clock for the session state machine's unit tests.

It keeps what the session can observe (osd map, health, config masks, perf
counters, bench results) consistent with what the session did, and lets a
test break things: a candidate the OSD will not start on, a missing or
failing orchestrator, an unhealthy cluster, a canary that dies mid-window,
a flap (marked down and up, same process), an admin's own noout, pools of
any layout, someone else's config at any mask.  It records what `ok-to-stop`
said at every restart, so a test can assert that no restart happened while it
said no.

Config is kept by `who` as `ceph config set` takes it: `global`, `osd`,
`osd/class:ssd`, `osd/host:node1`, `osd.3`.  OSD i is on host `node<i>`
unless `place` puts several OSDs on a host, in a CRUSH order of its own.

A real cluster is never idle: PGs scrub and trim snapshots, warnings stand
for weeks, some are muted, flags are set on OSDs, CRUSH nodes or the whole
cluster, and daemons crash (reports posted late, archived by the admin).
"""
import contextlib
import dataclasses
import functools
import math
import random
import threading
import time
from typing import Any, Callable, ContextManager, Dict, List, Optional, Sequence, Set, Tuple

from rocks_autotune.cluster import (ClusterError, ConfigEntries, ConfigEntry, ConfigSnapshot,
                                    Crash, MgrCluster, NoOrchestrator, OsdInfo, PgInfo,
                                    PoolInfo, split_who)
from rocks_autotune import rocksdb_stats
from rocks_autotune.placement import pg_of
from rocks_autotune.rocksdb_options import (PACIFIC_DEFAULT, ColumnFamily, parse_options,
                                            parse_sharding)
from rocks_autotune.rocksdb_stats import KvStats, Level
from rocks_autotune.space import SearchSpace, flush_capacity

DEFAULTS = {'bluestore_rocksdb_options': PACIFIC_DEFAULT,
            'bluestore_rocksdb_options_annex': '',
            'bluestore_rocksdb_cfs': 'm(3) p(3,0-12) O(3,0-13)=block_cache={type=binned_lru} L P',
            'osd_bench_small_size_max_iops': '100', 'rocksdb_perf': 'false',
            'rocksdb_collect_extended_stats': 'false',
            'rocksdb_collect_compaction_stats': 'false'}
# What a FakeCluster runs unless told: Pacific's options on one column
# family, the one its RocksDB simulates (kv_stats), so that a steady window
# waits for the WAL bytes of that family's cycle (window.steady_bytes), not
# of eleven more that see no write.  The sharded canary: FakeCluster(defaults=
# DEFAULTS) and `shares`.
ONE_FAMILY = dict(DEFAULTS, bluestore_rocksdb_cfs='')
# Tentacle 20.2.4's defaults, as `ceph config help` gives them on the lab
TENTACLE_DEFAULTS = dict(
    DEFAULTS,
    bluestore_rocksdb_options=(
        'compression=kLZ4Compression,max_write_buffer_number=64,'
        'min_write_buffer_number_to_merge=6,compaction_style=kCompactionStyleLevel,'
        'write_buffer_size=16777216,max_background_jobs=4,'
        'level0_file_num_compaction_trigger=8,max_bytes_for_level_base=1073741824,'
        'max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,'
        'max_total_wal_size=1073741824,writable_file_max_buffer_size=0'),
    bluestore_rocksdb_cfs=('m(3) p(3,0-12) O(3,0-13)=block_cache={type=binned_lru} '
                           'L=min_write_buffer_number_to_merge=32 '
                           'P=min_write_buffer_number_to_merge=32'))


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


@functools.lru_cache(maxsize=None)
def model(options: str) -> Tuple[float, float]:
    """kv_sync latency (s) and DB bytes per client byte for an options string.

    Smaller memtables sync faster (the seed's skiplist finding); small
    flushes and a small L0/L1 raise write-amp.  Smooth, so an optimizer can
    learn it.
    """
    c = SearchSpace.candidate_from_options(parse_options(options))
    wbs_mib = c.write_buffer_size / (1 << 20)
    flush_mib = wbs_mib * c.min_write_buffer_number_to_merge
    lat = 0.0004 * (1 + 0.15 * math.log2(wbs_mib / 4)) * (1 + 0.02 * abs(
        math.log2(c.max_bytes_for_level_base / (1 << 30))))
    wa = 0.3 + 0.4 / math.sqrt(flush_mib / 8) + 0.1 * abs(
        c.level0_file_num_compaction_trigger - 8) / 8
    if c.compression != 'none':
        wa *= 0.8
        lat *= 1.05
    return lat, wa


class _PgMgr:
    """The mgr's `get` for what MgrCluster reads of PGs: the fake's PG states
    are read by the module's own code, as on a real cluster."""

    def __init__(self, summary: Dict[str, Any]) -> None:
        self.summary = summary

    def get(self, what: str) -> Dict[str, Any]:
        assert what == 'pg_summary'
        return self.summary


class FakeCluster:
    def __init__(self, clock: FakeClock, n_osds: int = 3,
                 defaults: Optional[Dict[str, str]] = None) -> None:
        self.clock = clock
        self.defaults = dict(defaults or ONE_FAMILY)
        self.epoch = 10
        self.up_at: Dict[int, Optional[float]] = {}
        self.info: Dict[int, OsdInfo] = {}
        for i in range(n_osds):
            self.info[i] = OsdInfo(id=i, up=True, in_=True, up_from=5, device_class='ssd',
                                   num_pgs=30 + i)
        self.config: Dict[Tuple[str, str], str] = {}
        self.running: Dict[int, str] = {i: self.defaults['bluestore_rocksdb_options']
                                        for i in range(n_osds)}
        self.noout: Dict[int, bool] = {}
        self.counters: Dict[int, Dict[str, float]] = {i: self._zero() for i in range(n_osds)}
        # RocksDB's state as the counters see it: bytes in the memtables since
        # the last flush, files in L0 (kept across restarts, as on disk)
        self.memtable: Dict[int, float] = {i: 0.0 for i in range(n_osds)}
        self.l0_files: Dict[int, int] = {i: 0 for i in range(n_osds)}
        self.compactions: Dict[int, int] = {i: 0 for i in range(n_osds)}
        self.extra_health: List[str] = []
        self.orchestrator = True
        self.restart_fails = False
        self.restart_delay = 3.0
        self.broken: Callable[[str], bool] = lambda options: False
        # False: an options string whose L0 never compacts (a steady window
        # of it sees no compaction, however long)
        self.compacts: Callable[[str], bool] = lambda options: True
        self.dies_on_bench: Optional[int] = None  # canary dies on this bench call
        self.bench_fails = ''  # bench calls fail with this error; the OSD stays up
        self.bench_calls = 0
        # how options perform (kv_sync latency, write-amp), and the noise of
        # each bench call (log-normal sigma of its latency, seeded)
        self.model: Callable[[str], Tuple[float, float]] = model
        self.noise = 0.0
        self.rng = random.Random(0)
        self.restarts: List[Tuple[int, str]] = []  # (osd, options it came up with)
        # None: computed (no, while another OSD is down); a tuple: forced
        self.ok_to_stop_answer: Optional[Tuple[bool, str]] = None
        # ok-to-stop --max: None computed (as the mgr's), a list forced; and each question
        self.ok_to_stop_max_answer: Optional[List[int]] = None
        self.ok_to_stop_max_asked: List[Tuple[int, int]] = []
        # (osd, what ok-to-stop said for it when the restart was issued)
        self.restart_gate: List[Tuple[int, bool]] = []
        self.before_restart: Callable[[int], None] = lambda osd: None
        self.inactive = 0  # PGs inactive for reasons of the test's making
        # pg_summary's states while every OSD is up (any down: all degraded)
        self.pg_states: Dict[str, int] = {'active+clean': 96}
        self.muted: Set[str] = set()  # `ceph health mute`: raised, but left out
        # noup/nodown/noin/noout that are not the canary's noout: by OSD
        # ('osd.2'), CRUSH node ('crush node host-a') or device class
        self.flags: Dict[str, Set[str]] = {}
        self.cluster_flags: Set[str] = set()  # noout, norebalance, noscrub...: OSDMAP_FLAGS
        self.kv_stats_off = False
        # None: RocksDB is one column family, O-0, that takes every write.
        # Else the share of the WAL's bytes each family of the OSD's sharding
        # takes (by RocksDB's name: 'O-1', 'P'), each flushing at its own
        # size (its own memtable options beating the running ones) and
        # compacting at the L0 trigger, or flushed by the WAL limit: osd ->
        # family -> [memtable bytes, L0 files, flushes, compactions, the WAL
        # position (wal_pos) of its oldest unflushed byte]
        self.shares: Optional[Dict[str, float]] = None
        # the L1 bytes kv_stats gives a family that compacted (`shares`' runs: the
        # size of one compaction, rocksdb_stats.KvDelta.unit)
        self.level_bytes = 0
        self.families: Dict[int, Dict[str, List[float]]] = {}
        self.wal_pos: Dict[int, float] = {}  # osd -> WAL bytes its families took in
        self.perf_on: Dict[int, bool] = {}  # opened its DB with rocksdb_perf
        self.client_fails = ''  # client writes and reads fail with this error
        # a 4 KiB read's latency (s) on an OSD running these options, and the
        # reads each OSD served (a read goes to its PG's primary alone)
        self.read_latency: Callable[[str], float] = lambda options: 0.002
        self.reads: Dict[int, int] = {}
        self.read_objects: Set[str] = set()
        self.remove_fails = ''  # client removes fail with this error
        # the client workload's objects, by (pool, namespace): name -> bytes written
        self.objects: Dict[Tuple[str, str], Dict[str, int]] = {}
        self.crash_log: List[Tuple[float, Crash]] = []  # (posted at, crash)
        self.archived: Set[str] = set()
        self.crash_when_broken = False  # a candidate that breaks the OSD crashes it
        self.crash_post_delay = 0.0  # ceph-crash posts a report this long after the crash
        self.hosts = {i: f'node{i}' for i in range(n_osds)}
        self.tree: List[int] = list(range(n_osds))  # `ceph osd tree`'s order
        self.pool_by_id: Dict[int, PoolInfo] = {}
        self.pg_list: List[PgInfo] = []
        self.pg_at: Dict[Tuple[int, int], PgInfo] = {}  # by (pool, seed): a write's PG
        self.config_reads = 0  # config snapshots taken (each one `config dump` on a cluster)
        self.add_pool('rbd', size=3, min_size=2)

    def add_pool(self, name: str, size: int, min_size: int, k: int = 0,
                 osds: Optional[Sequence[int]] = None, pgs: int = 4) -> PoolInfo:
        """A pool (erasure-coded when k is given: m = size - k) whose PGs
        rotate over `osds` (every OSD by default), `size` of them each."""
        pool = PoolInfo(id=len(self.pool_by_id) + 1, name=name, size=size, min_size=min_size,
                        erasure=bool(k), k=k, m=size - k if k else 0, pg_num=pgs)
        self.pool_by_id[pool.id] = pool
        on = list(osds if osds is not None else self.info)
        for i in range(pgs):
            acting = [on[(i + j) % len(on)] for j in range(min(size, len(on)))]
            pg = self.pg_at[(pool.id, i)] = PgInfo(pgid=f'{pool.id}.{i:x}', pool=pool.id,
                                                   acting=acting)
            self.pg_list.append(pg)
        return pool

    def place(self, hosts: Dict[str, List[int]]) -> None:
        """Put OSDs on hosts; the tree lists the hosts, and their OSDs, as given."""
        self.tree = [osd for osds in hosts.values() for osd in osds]
        for host, osds in hosts.items():
            for osd in osds:
                self.hosts[osd] = host

    @staticmethod
    def _zero() -> Dict[str, float]:
        return {k: 0.0 for k in ('wal', 'sst', 'slow', 'sst_files', 'client', 'sync_n',
                                 'sync_s', 'commit_n', 'commit_s', 'flush_n', 'flush_s',
                                 'op_w_n', 'op_w_s')}

    # -- simulation
    def _tick(self) -> None:
        for osd, at in list(self.up_at.items()):
            if at is not None and self.clock.now >= at:
                self.epoch += 1
                self.info[osd].up = True
                self.info[osd].up_from = self.epoch
                self.up_at[osd] = None

    def purge(self, osd: int) -> None:
        """`ceph osd purge`: the OSD is gone from the OSD map (its process too)."""
        self.kill(osd)
        del self.info[osd]
        self.up_at.pop(osd, None)
        self.noout.pop(osd, None)  # its flags go with it
        self.tree = [i for i in self.tree if i != osd]

    def kill(self, osd: int) -> None:
        """The OSD process dies (stays down until restarted)."""
        self.epoch += 1
        self.info[osd].up = False
        self.up_at[osd] = None

    def crash(self, entity: str, at: Optional[float] = None,
              delay: Optional[float] = None) -> Crash:
        """A daemon crashed (at `at`, default now); its report is posted
        `delay` later (default crash_post_delay), as ceph-crash does."""
        when = self.clock.now if at is None else at
        stamp = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(when))
        c = Crash(id=f'{stamp}.000000Z_{entity}-{len(self.crash_log)}', entity=entity,
                  time=when)
        self.crash_log.append(
            (when + (self.crash_post_delay if delay is None else delay), c))
        return c

    def archive(self, crash_id: str) -> None:
        """`ceph crash archive <id>`."""
        self.archived.add(crash_id)

    def pg_summary(self) -> Dict[str, Any]:
        self._tick()
        states = dict(self.pg_states)
        if not all(i.up for i in self.info.values()):
            states = {'active+undersized+degraded': sum(states.values())}
        if self.inactive:
            states['peering'] = self.inactive
        return {'all': states, 'by_pool': {}}

    def admin_restarts(self, osd: int) -> None:
        self._record_gate(osd)
        self._start(osd)

    def flap(self, osd: int) -> None:
        """Marked down and up again without a restart: up_from moves, the
        process (and the options it runs) stays."""
        self.epoch += 1
        self.info[osd].up = True
        self.info[osd].up_from = self.epoch

    def _record_gate(self, osd: int) -> None:
        self.before_restart(osd)
        self.restart_gate.append((osd, self.ok_to_stop(osd)[0]))

    def _start(self, osd: int) -> None:
        self.kill(osd)
        # as on the lab's Tentacle: BlueStore is opened before the monitors
        # give the OSD what is set at a class mask (canary.CLASS_MASK_NOTE)
        options = self.config_get(f'osd.{osd}', 'bluestore_rocksdb_options', at_start=True)
        if self.broken(options):
            if self.crash_when_broken:
                self.crash(f'osd.{osd}')
            return  # never comes up
        self.running[osd] = options
        # RocksDB's statistics exist when the DB was opened with rocksdb_perf
        self.perf_on[osd] = self.config_get(f'osd.{osd}', 'rocksdb_perf') == 'true'
        self.memtable[osd] = 0.0  # the WAL is replayed and flushed at open
        for fam in self.families.get(osd, {}).values():
            fam[0] = 0.0
        self.restarts.append((osd, options))
        self.up_at[osd] = self.clock.now + self.restart_delay

    # -- Cluster protocol
    def osds(self) -> Dict[int, OsdInfo]:
        self._tick()
        return {k: OsdInfo(**vars(v)) for k, v in self.info.items()}

    def osd_states(self) -> Dict[int, OsdInfo]:
        return self.osds()

    def osd_state(self, osd: int) -> Optional[OsdInfo]:
        return self.osds().get(osd)

    def health(self) -> Tuple[str, List[str]]:
        self._tick()
        checks = list(self.extra_health)
        if not all(i.up for i in self.info.values()):
            checks += ['OSD_DOWN', 'PG_DEGRADED']
        if any(self.noout.values()) or any(self.flags.values()):
            checks.append('OSD_FLAGS')
        if self.cluster_flags:
            checks.append('OSDMAP_FLAGS')
        if self.recent_crashes():
            checks.append('RECENT_CRASH')
        # as MgrCluster.health: muted checks are left out
        checks = [c for c in checks if c not in self.muted]
        return ('HEALTH_OK' if not checks else 'HEALTH_WARN'), sorted(checks)

    def pgs_active_clean(self) -> bool:
        return MgrCluster(_PgMgr(self.pg_summary())).pgs_active_clean()

    def inactive_pgs(self) -> int:
        return MgrCluster(_PgMgr(self.pg_summary())).inactive_pgs()

    def osd_flags(self) -> Dict[str, List[str]]:
        flagged = {k: set(v) for k, v in self.flags.items() if v}
        for osd, on in self.noout.items():
            if on:
                flagged.setdefault(f'osd.{osd}', set()).add('noout')
        return {k: sorted(v) for k, v in flagged.items()}

    def recent_crashes(self) -> List[Crash]:
        return [c for at, c in self.crash_log
                if at <= self.clock.now and c.id not in self.archived]

    def ok_to_stop(self, osd: int, *together: int) -> Tuple[bool, str]:
        """No, while another OSD is down; and (PGs of size 3 on three hosts)
        for OSDs of more than one host together."""
        self._tick()
        if self.ok_to_stop_answer is not None:
            return self.ok_to_stop_answer
        stopping = {osd, *together}
        down = [i for i, info in self.info.items() if i not in stopping and not info.up]
        if down and any(self.info[i].up for i in stopping):
            return False, f'{len(down)} PGs are already too degraded, would become inactive'
        if len({self.hosts[i] for i in stopping}) > 1:
            return False, 'PGs would become inactive: OSDs of more than one host'
        return True, ''

    def ok_to_stop_max(self, osd: int, most: int) -> List[int]:
        """As the mgr's (DaemonServer::_maximize_ok_to_stop_set): `osd` if it
        may stop, then the up OSDs beside it in the CRUSH tree, by id, that
        may stop with it, up to `most`; any class, in the rollout or not."""
        self.ok_to_stop_max_asked.append((osd, most))
        if self.ok_to_stop_max_answer is not None:
            return list(self.ok_to_stop_max_answer)
        if not self.ok_to_stop(osd)[0]:
            return []
        out = [osd]
        for i in sorted(self.info):
            if len(out) < most and i != osd and self.info[i].up and self.ok_to_stop(*out, i)[0]:
                out.append(i)
        return out

    def pools(self) -> Dict[int, PoolInfo]:
        return {k: PoolInfo(**vars(v)) for k, v in self.pool_by_id.items()}

    def pool_states(self) -> Dict[int, PoolInfo]:
        return {k: dataclasses.replace(v, room=None, quota_bytes=None, quota_objects=None)
                for k, v in self.pool_by_id.items()}

    def pgs(self) -> List[PgInfo]:
        return [PgInfo(p.pgid, p.pool, list(p.acting), list(p.acting)) for p in self.pg_list]

    def osdmap_flags(self) -> List[str]:
        return sorted(self.cluster_flags)

    def one_view(self) -> ContextManager[None]:
        return contextlib.nullcontext()  # nothing here is costly to read twice

    def config_snapshot(self, defaults: Sequence[str] = ()) -> ConfigSnapshot:
        self.config_reads += 1
        entries = []
        for (who, name), value in self.config.items():
            section, mask = split_who(who)
            entries.append(ConfigEntry(section, name, value, mask))
        locations = {i: {'class': info.device_class, 'host': self.hosts[i], 'root': 'default'}
                     for i, info in self.info.items()}
        return ConfigSnapshot(entries, lambda: locations,
                              {n: self.defaults[n] for n in defaults})

    def _rank(self, who: str, osd: int) -> Optional[Tuple[int, int]]:
        """How an entry at `who` ranks for osd.N (None: it does not apply).

        As the mon does: osd.N over osd over global; in a section, a CRUSH
        location mask over a class mask over none.
        """
        section, *masks = who.split('/')
        sections = ['global', 'osd', f'osd.{osd}']
        if section not in sections:
            return None
        where = {'class': self.info[osd].device_class, 'host': self.hosts[osd],
                 'root': 'default'}
        for m in masks:
            kind, _, value = m.partition(':')
            if where.get(kind) != value:
                return None
        return sections.index(section), max((1 if m.startswith('class:') else 2
                                             for m in masks), default=0)

    def config_get_own(self, who: str, name: str) -> Optional[str]:
        return self.config.get((who, name))

    def crush_order(self) -> List[Tuple[int, str]]:
        return [(i, self.hosts[i]) for i in self.tree]

    def config_entries(self, osd: int, names: Sequence[str]) -> ConfigEntries:
        out: ConfigEntries = {}
        for (who, name), value in self.config.items():
            if name in names and self._rank(who, osd) is not None:
                out.setdefault(who, {})[name] = value
        return out

    def config_get(self, who: str, name: str, at_start: bool = False) -> str:
        osd = int(who.split('.')[1])  # the session asks for osd.N only
        ranked = [(rank, value) for (w, n), value in self.config.items()
                  if n == name and (rank := self._rank(w, osd)) is not None
                  and not (at_start and '/class:' in w)]
        return max(ranked)[1] if ranked else self.defaults[name]

    def option_default(self, name: str) -> str:
        return self.defaults[name]

    def config_set(self, who: str, name: str, value: str) -> None:
        self.config[(who, name)] = value

    def config_rm(self, who: str, name: str) -> None:
        self.config.pop((who, name), None)

    def set_noout(self, osd: int, on: bool) -> None:
        self.noout[osd] = on

    def has_noout(self, osd: int) -> bool:
        return self.noout.get(osd, False)

    def config_get_running(self, osd: int, name: str) -> str:
        self._tick()
        if not self.info[osd].up:
            raise ClusterError(f'osd.{osd} is down')
        if name == 'bluestore_rocksdb_options':
            return self.running[osd]
        return self.config_get(f'osd.{osd}', name)

    def restart_osd(self, osd: int) -> str:
        if not self.orchestrator:
            raise NoOrchestrator('No orchestrator configured')
        if self.restart_fails:
            raise ClusterError('orchestrator could not restart')
        self._record_gate(osd)
        self._start(osd)
        return f'Restarted osd.{osd}'

    def perf_dump(self, osd: int) -> Dict[str, Any]:
        self._tick()
        if not self.info[osd].up:
            raise ClusterError(f'osd.{osd} is down')
        c = self.counters[osd]
        return {
            'bluefs': {'bytes_written_wal': c['wal'], 'bytes_written_sst': c['sst'],
                       'bytes_written_slow': c['slow'], 'files_written_sst': c['sst_files']},
            'osd': {'op_w_in_bytes': c['client'],
                    'op_w_latency': {'avgcount': c['op_w_n'], 'sum': c['op_w_s']}},
            'bluestore': {
                'kv_sync_lat': {'avgcount': c['sync_n'], 'sum': c['sync_s']},
                'kv_commit_lat': {'avgcount': c['commit_n'], 'sum': c['commit_s']},
                'kv_flush_lat': {'avgcount': c['flush_n'], 'sum': c['flush_s']}},
        }

    def kv_stats(self, osd: int) -> KvStats:
        """RocksDB's figures as its one column family would give them: the
        flushes (L0's count) and L0 compactions (L1's) of the simulation;
        a ClusterError while rocksdb_perf is off (kv_stats_off)."""
        self._tick()
        if not self.info[osd].up:
            raise ClusterError(f'osd.{osd} is down')
        if self.kv_stats_off or not self.perf_on.get(osd) or self.config_get(
                f'osd.{osd}', 'rocksdb_collect_compaction_stats') != 'true':
            raise ClusterError(f'osd.{osd} dump_objectstore_kv_stats: RocksDB perf is disabled')
        c = self.counters[osd]
        flushes = int(c['sst_files']) - self.compactions[osd]
        tickers = {rocksdb_stats.WAL_BYTES: int(c['wal']),
                   rocksdb_stats.FLUSH_BYTES: int(c['sst'] / 2),
                   rocksdb_stats.COMPACT_WRITE_BYTES: int(c['sst'] / 2)}
        if self.shares is not None:
            return KvStats(tickers=tickers, levels={
                cf: {0: Level(files=int(f[1]), size=0, compactions=int(f[2])),
                     1: Level(files=min(1, int(f[3])),
                              size=self.level_bytes if f[3] else 0, compactions=int(f[3]))}
                for cf, f in sorted(self.families.get(osd, {}).items())})
        return KvStats(
            tickers=tickers,
            levels={'O-0': {0: Level(files=self.l0_files[osd], size=0, compactions=flushes),
                            1: Level(files=min(1, self.compactions[osd]), size=0,
                                     compactions=self.compactions[osd])}})

    def client_io(self, pool: str, namespace: str) -> 'FakeIo':
        return FakeIo(self, pool, namespace)

    def _flush(self, osd: int, wal: float) -> None:
        """Memtables fill with what the WAL carried; each full merge group is
        flushed to an L0 file, and L0 compacts (one more file) at its trigger."""
        cand = SearchSpace.candidate_from_options(parse_options(self.running[osd]))
        if self.shares is not None:
            self._flush_families(osd, wal, cand)
            return
        flush = cand.write_buffer_size * cand.min_write_buffer_number_to_merge
        self.memtable[osd] += wal
        while self.memtable[osd] >= flush:
            self.memtable[osd] -= flush
            self.counters[osd]['sst_files'] += 1
            self.l0_files[osd] += 1
            if (self.l0_files[osd] >= cand.level0_file_num_compaction_trigger
                    and self.compacts(self.running[osd])):
                self.l0_files[osd] = 0
                self.counters[osd]['sst_files'] += 1
                self.compactions[osd] += 1

    def _flush_families(self, osd: int, wal: float, cand: Any) -> None:
        """`shares`: each family's memtables fill with its share of the WAL;
        a family whose oldest unflushed byte is more than the WAL limit back
        is flushed however little it holds (RocksDB's max_total_wal_size, or
        with 0 its own: 4 x every family's memtables)."""
        assert self.shares is not None
        sharding = parse_sharding(self.config_get(f'osd.{osd}', 'bluestore_rocksdb_cfs'))
        defs = {cf.name: cf for cf in sharding}
        space = SearchSpace(base=parse_options(self.running[osd]), column_families=sharding)
        limit = space.max_total_wal_size or 4 * space.memtable_bytes(
            cand.max_write_buffer_number, cand.write_buffer_size)
        fams = self.families.setdefault(osd, {})
        start = self.wal_pos.get(osd, 0.0)
        pos = self.wal_pos[osd] = start + wal

        def flushed(f: List[float]) -> None:
            f[1] += 1
            f[2] += 1
            self.counters[osd]['sst_files'] += 1
            if f[1] >= cand.level0_file_num_compaction_trigger and self.compacts(
                    self.running[osd]):
                f[1] = 0
                f[3] += 1
                self.counters[osd]['sst_files'] += 1

        for name, share in self.shares.items():
            d = defs[name.split('-')[0]]
            # one shard's flush size: the session's own arithmetic (space.flush_capacity)
            flush = flush_capacity([ColumnFamily(d.name, 1, d.memtable)], cand)
            f = fams.setdefault(name, [0.0, 0, 0, 0, start])
            if f[0] <= 0:
                f[4] = start
            f[0] += wal * share
            while f[0] >= flush:
                f[0] -= flush
                f[4] = pos
                flushed(f)
            if f[0] > 0 and pos - f[4] > limit:
                f[0] = 0.0
                f[4] = pos
                flushed(f)

    def _write(self, osd: int, nbytes: int, lat: float) -> None:
        """What `nbytes` of writes do to an OSD's counters (at 25 per kv sync)."""
        _, wa = self.model(self.running[osd])
        syncs = max(1.0, nbytes / 4096 / 25)
        c = self.counters[osd]
        c['wal'] += nbytes * 0.25
        c['sst'] += nbytes * (wa - 0.25)
        self._flush(osd, nbytes * 0.25)
        c['sync_n'] += syncs
        c['sync_s'] += syncs * lat
        c['commit_n'] += syncs
        c['commit_s'] += syncs * lat * 0.2
        c['flush_n'] += syncs
        c['flush_s'] += syncs * lat * 0.8

    def bench(self, osd: int, count: int, size: int, object_size: int,
              object_num: int) -> Dict[str, Any]:
        self._tick()
        self.bench_calls += 1
        if self.dies_on_bench == self.bench_calls:
            self.kill(osd)
        if not self.info[osd].up:
            raise ClusterError(f'osd.{osd} is down')
        if self.bench_fails:
            raise ClusterError(self.bench_fails)
        lat, _ = self.model(self.running[osd])
        if self.noise:
            lat *= math.exp(self.rng.gauss(0.0, self.noise))
        ops = count // size
        elapsed = max(1.0, ops / 25) * lat  # no rounding: a short chunk is not faster
        self._write(osd, count, lat)
        self.clock.advance(elapsed)
        return {'bytes_written': count, 'blocksize': size, 'elapsed_sec': elapsed,
                'iops': ops / elapsed}


class AioFromSync:
    """A fake ClientIo's aio_write and aio_remove, of its write and remove:
    each done when waited on (librados' completes later; its error then)."""

    def aio_write(self, obj: str, data: bytes, offset: int) -> Callable[[], None]:
        return lambda: self.write(obj, data, offset)  # type: ignore[attr-defined]

    def aio_remove(self, obj: str) -> Callable[[], None]:
        return lambda: self.remove(obj)  # type: ignore[attr-defined]


class FakeIo(AioFromSync):
    """ClientIo of the fake: a write is a client's write to every OSD up of
    the object's PG, its latency the slowest one's model."""

    def __init__(self, cluster: FakeCluster, pool: str, namespace: str) -> None:
        self.c = cluster
        self.where = (pool, namespace)
        self.lock = threading.Lock()

    def write(self, obj: str, data: bytes, offset: int) -> None:
        with self.lock:
            c = self.c
            c._tick()
            if self.c.client_fails:
                raise ClusterError(self.c.client_fails)
            objs = c.objects.setdefault(self.where, {})
            objs[obj] = objs.get(obj, 0) + len(data)
            lat = 0.0
            # the OSDs of the object's PG (the split design's group R must
            # not reach the canary)
            pool = next(p for p in c.pool_by_id.values() if p.name == self.where[0])
            seed = pg_of(obj, pool.pg_num, self.where[1])
            pg = c.pg_at[(pool.id, seed)]
            for osd, info in c.info.items():
                if info.up and osd in pg.acting:
                    one = c.model(c.running[osd])[0]
                    lat = max(lat, one)
                    c._write(osd, len(data), one)
            # one at a time, each ten kv syncs long: few enough writes per window
            # that a session's unit test stays fast
            c.clock.advance(lat * 10)
        # the other writers' turn (a real write waits on the OSDs): else the
        # first thread started runs a whole chunk alone
        time.sleep(0)

    def read(self, obj: str, length: int, offset: int) -> bytes:
        """A read served by the object's PG's primary, in its options' read_latency."""
        with self.lock:
            c = self.c
            c._tick()
            if c.client_fails:
                raise ClusterError(c.client_fails)
            pool = next(p for p in c.pool_by_id.values() if p.name == self.where[0])
            primary = c.pg_at[(pool.id, pg_of(obj, pool.pg_num, self.where[1]))].acting[0]
            if not c.info[primary].up:
                raise ClusterError(f'reading {obj}: osd.{primary} is down')
            c.reads[primary] = c.reads.get(primary, 0) + 1
            c.read_objects.add(obj)
            c.clock.advance(c.read_latency(c.running[primary]))
        time.sleep(0)
        return bytes(length)

    def remove(self, obj: str) -> None:
        with self.lock:
            if self.c.remove_fails:
                raise ClusterError(self.c.remove_fails)
            self.c.objects.get(self.where, {}).pop(obj, None)

    def objects(self) -> List[str]:
        with self.lock:
            return sorted(self.c.objects.get(self.where, {}))
