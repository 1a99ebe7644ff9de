"""A fake of the mgr's Python API, at the size of a large cluster, for
MgrCluster (rocks_autotune/cluster.py) to run on unchanged.

`ScaleMgr(osds=2000, hosts=100)` answers what MgrCluster asks the mgr:

* `get(name)`: osd_map, osd_map_tree, osd_map_crush, osd_stats,
  osd_metadata, pg_summary, pg_stats, health, in the shapes Ceph dumps them
  (Pacific and Tentacle agree on what is read here).  Every call hands out a
  fresh object decoded from cached JSON: the real mgr builds a new Python
  object from its C++ maps on every call, so a module that calls `get` in a
  loop pays for it here too.
* `mon_command(dict)`: config dump/get/set/rm/help, osd ok-to-stop,
  osd add-noout/rm-noout, osd set/unset, osd dump/tree/metadata,
  config-key dump.  Config follows the mon's rules: sections global < osd <
  osd.N, the later winning whatever its mask; within a section a mask on a
  CRUSH location beats a class mask, which beats none; then the option's
  default (a small table).
* `send_command(result, 'osd', id, json, '')`: tells (config get, perf dump,
  bench, dump_objectstore_kv_stats), answered at once; what an OSD runs is
  what was in effect when it (last) started: `restart(osd)` picks up the
  config (its options, and rocksdb_perf: the kv stats are a Tentacle OSD's,
  verbatim, when it was on); perf dump counts what osd bench wrote since.
* `daemon_action('restart', 'osd.N')`: the orchestrator's restart, done at once.

The cluster: N OSDs of one device class, OSD i on host i % H (as OSDs
created on all hosts at once get their ids), one replicated pool of size 3
with about 100 PGs per OSD (pg_num a power of two) or `pg_num` PGs, each PG
on three hosts;
the config dump carries what a deployed cluster has beside ours: a few
global, mon and mgr entries, an osd/class mask, an osd/host mask, and (as
Quincy and later OSDs set at their first start) osd_mclock_max_capacity_iops
at every osd.N.

Everything is counted: mon commands by prefix, tells by prefix, `get` by
name, the bytes of JSON handed out, and the process time spent inside the
fake (`fake_seconds`: building answers the mon would build, and decoding
what `get` hands out, which the real mgr pays in C++).  `budget` bounds the
mon commands + tells: past it a call raises CallBudgetExceeded (not a
ClusterError, so nothing in the module catches it), which keeps a test of a
call count fast when the code under test is O(OSDs).
"""
import errno
import functools
import json
import math
import os
import random
import time
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, TypeVar

from rocks_autotune.rocksdb_options import PACIFIC_DEFAULT

# a small table of options: default, level, can_update_at_runtime, type
OPTION_TABLE: Dict[str, Tuple[str, str, bool, str]] = {
    'bluestore_rocksdb_options': (PACIFIC_DEFAULT, 'advanced', False, 'str'),
    'bluestore_rocksdb_options_annex': ('', 'advanced', False, 'str'),
    'bluestore_rocksdb_cfs': (
        'm(3) p(3,0-12) O(3,0-13)=block_cache={type=binned_lru} L P', 'dev', False, 'str'),
    'osd_bench_small_size_max_iops': ('100', 'advanced', True, 'float'),
    'osd_memory_target': ('4294967296', 'basic', True, 'size'),
    'osd_max_backfills': ('1', 'advanced', True, 'uint'),
    'osd_mclock_max_capacity_iops_ssd': ('21500.000000', 'basic', True, 'float'),
    'osd_mclock_max_capacity_iops_hdd': ('315.000000', 'basic', True, 'float'),
    'osd_mclock_profile': ('balanced', 'advanced', True, 'str'),
    'public_network': ('', 'advanced', False, 'str'),
    'cluster_network': ('', 'advanced', False, 'str'),
    'container_image': ('ceph/daemon-base:latest-pacific-devel', 'basic', False, 'str'),
    'mon_allow_pool_delete': ('false', 'advanced', True, 'bool'),
    'auth_allow_insecure_global_id_reclaim': ('true', 'advanced', True, 'bool'),
    'log_to_file': ('false', 'basic', True, 'bool'),
    # RocksDB's statistics, which a session turns on (canary.STATS_OPTIONS)
    'rocksdb_perf': ('false', 'advanced', False, 'bool'),
    'rocksdb_collect_extended_stats': ('false', 'advanced', False, 'bool'),
    'rocksdb_collect_compaction_stats': ('false', 'advanced', False, 'bool'),
}
# what a tell answers from the config in effect when the OSD started; with
# rocksdb_perf the DB was opened keeping its statistics
RUNNING_NAMES = ('bluestore_rocksdb_options', 'bluestore_rocksdb_options_annex', 'rocksdb_perf')
# `dump_objectstore_kv_stats` of a Tentacle OSD with the statistics on, verbatim
KV_STATS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                        'kv_stats_tentacle.txt')
# what osd bench writes at on each OSD (4 KiB blocks), and the DB bytes per byte
BENCH_IOPS = 20000.0
WAL_PER_BYTE, SST_PER_BYTE = 0.25, 2.0
# CRUSH type ids (Ceph's default map): the lower, the more precise a mask
CRUSH_TYPES = ['osd', 'host', 'chassis', 'rack', 'row', 'pdu', 'pod', 'room', 'datacenter',
               'zone', 'region', 'root']
FLAGS = 'sortbitwise,recovery_deletes,purged_snapdirs,pglog_hardlimit'
SECTION_ORDER = ('mon', 'mgr', 'osd', 'mds', 'client')
STAMP = '2026-11-20T08:00:00.000000+0000'
EPOCH = 4200
POOL = 1
ROOT_ID = -1

Mask = Tuple[Tuple[str, str], ...]  # ((location_type, value)?, ('class', c)?)
F = TypeVar('F', bound=Callable[..., Any])


class CallBudgetExceeded(Exception):
    """More mon commands + tells than the fake's budget allows."""


def _timed(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(self: 'ScaleMgr', *args: Any, **kwargs: Any) -> Any:
        t = time.process_time()
        try:
            return fn(self, *args, **kwargs)
        finally:
            self.fake_seconds += time.process_time() - t
    return wrapper  # type: ignore[return-value]


def parse_who(who: str) -> Tuple[str, Mask]:
    """`ceph config set`'s who as (section, mask), the mask as Ceph keeps it:
    a CRUSH location first, then a device class."""
    section, *parts = who.split('/')
    loc: List[Tuple[str, str]] = []
    cls: List[Tuple[str, str]] = []
    for p in parts:
        kind, _, value = p.partition(':')
        (cls if kind == 'class' else loc).append((kind, value))
    if len(loc) > 1 or len(cls) > 1 or any(not v for _, v in loc + cls):
        raise ValueError(f'invalid mask {who!r}')
    return section, tuple(loc + cls)


def mask_str(mask: Mask) -> str:
    return '/'.join(f'{k}:{v}' for k, v in mask)


def precision(mask: Mask) -> int:
    """MaskedOption::get_precision: 0 is the most precise."""
    for kind, _ in mask:
        if kind != 'class' and kind in CRUSH_TYPES:
            return CRUSH_TYPES.index(kind)
    return len(CRUSH_TYPES) + (0 if mask else 1)


def _section_key(section: str) -> Tuple[int, int, str]:
    """`config dump`'s order: global, then per type the type's own section and its ids."""
    if section == 'global':
        return (0, 0, '')
    kind = section.split('.')[0]
    rank = SECTION_ORDER.index(kind) + 1 if kind in SECTION_ORDER else len(SECTION_ORDER) + 1
    return (rank, 0 if '.' not in section else 1, section)


class ScaleMgr:
    """The mgr's Python API over a simulated cluster of `osds` OSDs on `hosts` hosts."""

    def __init__(self, osds: int = 2000, hosts: int = 100, device_class: str = 'ssd',
                 pgs_per_osd: int = 100, size: int = 3, per_osd_config: bool = True,
                 seed: int = 1, budget: Optional[int] = None,
                 pg_num: Optional[int] = None) -> None:
        if osds < 1 or not 1 <= hosts <= osds:
            raise ValueError(f'{osds} OSDs on {hosts} hosts')
        self.n = osds
        self.host_names = [f'ceph-node{h:03d}' for h in range(hosts)]
        self.host_of = [i % hosts for i in range(osds)]  # OSD -> host index
        self.host_osds: List[List[int]] = [list(range(h, osds, hosts)) for h in range(hosts)]
        self.device_class = device_class
        self.size = size
        self.pg_num = pg_num or 1 << max(0, round(math.log2(max(1.0, osds * pgs_per_osd
                                                                / size))))
        self.up = [True] * osds
        self.in_ = [True] * osds
        self.up_from = [EPOCH - 100 + (i % 50) for i in range(osds)]
        self.osd_flags: List[set] = [set() for _ in range(osds)]
        self.global_flags: List[str] = FLAGS.split(',')
        self.crash_store: Dict[str, str] = {}
        self.module_options: Dict[Tuple[str, str], Any] = {}
        self.budget = budget
        # counts
        self.mon_calls: Counter = Counter()
        self.tell_calls: Counter = Counter()
        self.get_calls: Counter = Counter()
        self.bytes_out: Counter = Counter()  # 'get', 'mon', 'tell'
        self.fake_seconds = 0.0
        # PG placement: three OSDs on three hosts per PG
        rng = random.Random(seed)
        self.pgs: List[List[int]] = []
        nh = hosts
        for _ in range(self.pg_num):
            if nh >= size:
                hs: List[int] = []
                while len(hs) < size:
                    h = int(rng.random() * nh)
                    if h not in hs:
                        hs.append(h)
                acting = [self.host_osds[h][int(rng.random() * len(self.host_osds[h]))]
                          for h in hs]
            else:
                acting = rng.sample(range(osds), min(size, osds))
            self.pgs.append(acting)
        self.pgs_of: List[List[int]] = [[] for _ in range(osds)]  # OSD -> its PGs' indices
        for n, acting in enumerate(self.pgs):
            for o in set(acting):
                self.pgs_of[o].append(n)
        self.num_pgs = [0] * osds
        for acting in self.pgs:
            for o in acting:
                self.num_pgs[o] += 1
        # config: name -> {(section, mask): value}
        self.config: Dict[str, Dict[Tuple[str, Mask], str]] = {}
        self._seed_config(per_osd_config, rng)
        self.running: List[Dict[str, str]] = [
            {name: self.effective(f'osd.{i}', name) for name in RUNNING_NAMES}
            for i in range(osds)]
        self.written = [0] * osds  # bytes osd bench wrote since the OSD started
        self.clock: Any = None  # the module's FakeClock (module_over): a bench takes its time
        self._cache: Dict[str, str] = {}
        self.warm()

    # ------------------------------------------------------------ counting

    @property
    def mon_total(self) -> int:
        return sum(self.mon_calls.values())

    @property
    def tell_total(self) -> int:
        return sum(self.tell_calls.values())

    def reset_counts(self) -> None:
        self.mon_calls.clear()
        self.tell_calls.clear()
        self.get_calls.clear()
        self.bytes_out.clear()
        self.fake_seconds = 0.0

    def counts(self) -> Dict[str, Any]:
        return {'mon': dict(self.mon_calls), 'tell': dict(self.tell_calls),
                'get': dict(self.get_calls), 'bytes': dict(self.bytes_out),
                'fake_seconds': self.fake_seconds}

    def _charge(self) -> None:
        if self.budget is not None and self.mon_total + self.tell_total > self.budget:
            raise CallBudgetExceeded(
                f'{self.mon_total} mon commands + {self.tell_total} tells, over the budget of '
                f'{self.budget}: mon {dict(self.mon_calls)}, tell {dict(self.tell_calls)}')

    # ------------------------------------------------------------ config

    def _seed_config(self, per_osd: bool, rng: random.Random) -> None:
        seed = [
            ('global', 'container_image',
             'ceph/ceph@sha256:0560b16bec6e84345f29fb6693cd2430884e6efff16a95d5bdd0bb06d7661c45'),
            ('global', 'public_network', '10.10.0.0/16'),
            ('global', 'cluster_network', '10.20.0.0/16'),
            ('global', 'log_to_file', 'true'),
            ('mon', 'auth_allow_insecure_global_id_reclaim', 'false'),
            ('mgr', 'mgr/cephadm/container_init', 'True'),
            ('mgr', 'mgr/cephadm/migration_current', '5'),
            ('mgr', 'mgr/dashboard/ssl_server_port', '8443'),
            ('mgr', 'mgr/orchestrator/orchestrator', 'cephadm'),
            ('osd', 'osd_max_backfills', '2'),
            (f'osd/class:{self.device_class}', 'osd_memory_target', '8589934592'),
            (f'osd/host:{self.host_names[0]}', 'osd_memory_target', '6442450944'),
        ]
        for who, name, value in seed:
            section, mask = parse_who(who)
            self.config.setdefault(name, {})[(section, mask)] = value
        if per_osd:
            name = f'osd_mclock_max_capacity_iops_{self.device_class}'
            if name in OPTION_TABLE:
                entries = self.config.setdefault(name, {})
                for i in range(self.n):
                    entries[(f'osd.{i}', ())] = f'{rng.uniform(18000, 42000):.6f}'

    def location(self, who: str) -> Dict[str, str]:
        """What masks are matched against for an entity: class and CRUSH location."""
        kind, _, ident = who.partition('.')
        if kind != 'osd' or not ident.isdigit() or int(ident) >= self.n:
            return {}
        i = int(ident)
        return {'class': self.device_class, 'host': self.host_names[self.host_of[i]],
                'root': 'default'}

    def _sections(self, who: str) -> List[str]:
        kind, _, ident = who.partition('.')
        return ['global'] + ([kind] if kind != 'global' else []) + ([who] if ident else [])

    def effective(self, who: str, name: str) -> str:
        """The value the mon gives `who` (config get): the last section that
        has a matching entry, its most precise one; else the default."""
        entries = self.config.get(name, {})
        loc = self.location(who)
        value: Optional[str] = None
        for section in self._sections(who):
            best: Optional[Tuple[int, str]] = None
            for (sec, mask), v in entries.items():
                if sec == section and all(loc.get(k) == val for k, val in mask):
                    if best is None or precision(mask) < best[0]:
                        best = (precision(mask), v)
            if best is not None:
                value = best[1]
        if value is not None:
            return value
        return OPTION_TABLE[name][0] if name in OPTION_TABLE else ''

    def restart(self, osd: int) -> None:
        """The OSD restarts: it runs the config now in effect."""
        self.running[osd] = {name: self.effective(f'osd.{osd}', name) for name in RUNNING_NAMES}
        self.written[osd] = 0  # its counters count from its start
        self.up_from[osd] = self._epoch_bump()
        self.up[osd] = True

    def daemon_action(self, action: str, name: str) -> Any:
        """The orchestrator's restart (MgrCluster.restart_osd): done at once."""
        import orchestrator
        if action != 'restart' or not name.startswith('osd.'):
            raise ValueError(f'mock orchestrator: no {action} {name}')
        self.restart(int(name[len('osd.'):]))
        return orchestrator.OrchResult(f'Scheduled to restart {name}')

    def set_up(self, osd: int, up: bool) -> None:
        self.up[osd] = up
        if up:
            self.up_from[osd] = self._epoch_bump()
        self._cache.clear()

    def _epoch_bump(self) -> int:
        self._cache.clear()
        return max(self.up_from) + 1

    def _dump(self) -> List[Dict[str, Any]]:
        rows: List[Dict[str, Any]] = []
        for name, entries in self.config.items():
            for (section, mask), value in entries.items():
                level, runtime = (OPTION_TABLE[name][1:3] if name in OPTION_TABLE
                                  else ('advanced', True))
                loc = [(k, v) for k, v in mask if k != 'class']
                cls = [v for k, v in mask if k == 'class']
                rows.append({'section': section, 'name': name, 'value': value,
                             'level': level, 'can_update_at_runtime': runtime,
                             'mask': mask_str(mask),
                             'location_type': loc[0][0] if loc else '',
                             'location_value': loc[0][1] if loc else '',
                             'device_class': cls[0] if cls else ''})
        rows.sort(key=lambda r: (_section_key(r['section']), r['name']))
        return rows

    # ------------------------------------------------------------ maps

    def _addr(self, osd: int, port: int) -> Dict[str, Any]:
        h = self.host_of[osd]
        ip = f'10.10.{h // 250}.{h % 250 + 1}'
        p = 6800 + 2 * ((osd // len(self.host_names)) % 40) + port
        return {'addrvec': [{'type': 'v2', 'addr': f'{ip}:{p}', 'nonce': 1000 + osd},
                            {'type': 'v1', 'addr': f'{ip}:{p + 1}', 'nonce': 1000 + osd}]}

    def _osd_map(self) -> Dict[str, Any]:
        osds = []
        for i in range(self.n):
            state = ['exists'] + (['up'] if self.up[i] else []) + sorted(self.osd_flags[i])
            pub = self._addr(i, 0)
            entry = {'osd': i, 'uuid': f'6a1c{i:04x}-3b1e-4c57-9a7e-0c1d{i:08x}',
                     'up': int(self.up[i]), 'in': int(self.in_[i]),
                     'weight': 1.0 if self.in_[i] else 0.0, 'primary_affinity': 1.0,
                     'last_clean_begin': 0, 'last_clean_end': 0, 'up_from': self.up_from[i],
                     'up_thru': EPOCH - 2, 'down_at': 0, 'lost_at': 0,
                     'public_addrs': pub, 'cluster_addrs': self._addr(i, 100),
                     'heartbeat_back_addrs': self._addr(i, 200),
                     'heartbeat_front_addrs': self._addr(i, 300),
                     'public_addr': pub['addrvec'][1]['addr'] + f'/{1000 + i}',
                     'cluster_addr': '', 'heartbeat_back_addr': '', 'heartbeat_front_addr': '',
                     'state': state}
            osds.append(entry)
        pool = {'pool': POOL, 'pool_name': 'rbd', 'create_time': '2026-01-05T10:00:00.000000+0000',
                'flags': 1, 'flags_names': 'hashpspool', 'type': 1, 'size': self.size,
                'min_size': self.size - 1, 'crush_rule': 0, 'peering_crush_bucket_count': 0,
                'object_hash': 2, 'pg_autoscale_mode': 'on', 'pg_num': self.pg_num,
                'pg_placement_num': self.pg_num, 'pg_placement_num_target': self.pg_num,
                'pg_num_target': self.pg_num, 'pg_num_pending': self.pg_num,
                'last_change': str(EPOCH - 500), 'auid': 0, 'snap_mode': 'selfmanaged',
                'snap_seq': 0, 'snap_epoch': 0, 'pool_snaps': [], 'removed_snaps': '[]',
                'quota_max_bytes': 0, 'quota_max_objects': 0, 'tiers': [], 'tier_of': -1,
                'read_tier': -1, 'write_tier': -1, 'cache_mode': 'none',
                'erasure_code_profile': '', 'expected_num_objects': 0,
                'fast_read': False, 'options': {}, 'application_metadata': {'rbd': {}}}
        return {'epoch': EPOCH, 'fsid': '2d8e1f3a-5c4b-11f0-9e2a-0cc47a6b1a10',
                'created': '2026-01-05T09:58:00.000000+0000', 'modified': STAMP,
                'last_up_change': STAMP, 'last_in_change': STAMP,
                'flags': ','.join(self.global_flags), 'flags_num': 5799936,
                'flags_set': list(self.global_flags), 'crush_version': 211,
                'full_ratio': 0.95, 'backfillfull_ratio': 0.9, 'nearfull_ratio': 0.85,
                'cluster_snapshot': '', 'pool_max': POOL, 'max_osd': self.n,
                'require_min_compat_client': 'luminous', 'min_compat_client': 'jewel',
                'require_osd_release': 'pacific', 'pools': [pool], 'osds': osds,
                'osd_xinfo': [{'osd': i, 'down_stamp': '0.000000', 'laggy_probability': 0,
                               'laggy_interval': 0, 'features': 4540138297136906239,
                               'old_weight': 0, 'last_purged_snaps_scrub': STAMP,
                               'dead_epoch': 0} for i in range(self.n)],
                'pg_upmap': [], 'pg_upmap_items': [], 'pg_temp': [], 'primary_temp': [],
                'blocklist': {}, 'erasure_code_profiles': {'default': {
                    'k': '2', 'm': '2', 'plugin': 'jerasure', 'technique': 'reed_sol_van'}},
                'removed_snaps_queue': [], 'new_removed_snaps': [], 'new_purged_snaps': [],
                'crush_node_flags': {}, 'device_class_flags': {},
                'stretch_mode': {'stretch_mode_enabled': False, 'stretch_bucket_count': 0,
                                 'degraded_stretch_mode': 0, 'recovering_stretch_mode': 0,
                                 'stretch_mode_bucket': 0}}

    def _host_id(self, h: int) -> int:
        return -3 - 2 * h  # Ceph numbers a host bucket and its class shadow in turn

    def _tree(self) -> Dict[str, Any]:
        """`osd_map_tree` (`ceph osd tree -f json`): depth first, root, host, its OSDs."""
        nodes: List[Dict[str, Any]] = [{
            'id': ROOT_ID, 'name': 'default', 'type': 'root', 'type_id': 11,
            'children': [self._host_id(h) for h in reversed(range(len(self.host_names)))]}]
        for h, name in enumerate(self.host_names):
            members = self.host_osds[h]
            nodes.append({'id': self._host_id(h), 'name': name, 'type': 'host', 'type_id': 1,
                          'pool_weights': {}, 'children': sorted(members, reverse=True)})
            for i in members:
                nodes.append({'id': i, 'device_class': self.device_class, 'name': f'osd.{i}',
                              'type': 'osd', 'type_id': 0, 'crush_weight': 3.49309,
                              'depth': 2, 'pool_weights': {}, 'exists': 1,
                              'status': 'up' if self.up[i] else 'down',
                              'reweight': 1.0 if self.in_[i] else 0.0,
                              'primary_affinity': 1.0})
        return {'nodes': nodes, 'stray': []}

    def _crush(self) -> Dict[str, Any]:
        buckets = [{'id': ROOT_ID, 'name': 'default', 'type_id': 11, 'type_name': 'root',
                    'weight': 228923 * self.n, 'alg': 'straw2', 'hash': 'rjenkins1',
                    'items': [{'id': self._host_id(h), 'weight': 228923 * len(m), 'pos': p}
                              for p, (h, m) in enumerate(zip(range(len(self.host_names)),
                                                             self.host_osds))]},
                   {'id': -2, 'name': f'default~{self.device_class}', 'type_id': 11,
                    'type_name': 'root', 'weight': 228923 * self.n, 'alg': 'straw2',
                    'hash': 'rjenkins1',
                    'items': [{'id': self._host_id(h) - 1, 'weight': 228923 * len(m), 'pos': p}
                              for p, (h, m) in enumerate(zip(range(len(self.host_names)),
                                                             self.host_osds))]}]
        for h, name in enumerate(self.host_names):
            for shadow in (0, 1):
                buckets.append({
                    'id': self._host_id(h) - shadow,
                    'name': name + (f'~{self.device_class}' if shadow else ''),
                    'type_id': 1, 'type_name': 'host',
                    'weight': 228923 * len(self.host_osds[h]), 'alg': 'straw2',
                    'hash': 'rjenkins1',
                    'items': [{'id': i, 'weight': 228923, 'pos': p}
                              for p, i in enumerate(self.host_osds[h])]})
        return {'devices': [{'id': i, 'name': f'osd.{i}', 'class': self.device_class}
                            for i in range(self.n)],
                'types': [{'type_id': t, 'name': n} for t, n in enumerate(CRUSH_TYPES)],
                'buckets': buckets,
                'rules': [{'rule_id': 0, 'rule_name': 'replicated_rule', 'type': 1,
                           'steps': [{'op': 'take', 'item': -1, 'item_name': 'default'},
                                     {'op': 'chooseleaf_firstn', 'num': 0, 'type': 'host'},
                                     {'op': 'emit'}]}],
                'tunables': {'choose_local_tries': 0, 'choose_local_fallback_tries': 0,
                             'choose_total_tries': 50, 'chooseleaf_descend_once': 1,
                             'chooseleaf_vary_r': 1, 'chooseleaf_stable': 1,
                             'straw_calc_version': 1, 'allowed_bucket_algs': 54,
                             'profile': 'jewel', 'optimal_tunables': 1},
                'choose_args': {}}

    def _osd_stats(self) -> Dict[str, Any]:
        stats = []
        nh = len(self.host_names)
        for i in range(self.n):
            kb = 3662913536
            used = kb // 3 + (i * 7919) % 100000
            stats.append({
                'osd': i, 'up_from': self.up_from[i], 'seq': self.up_from[i] << 32 | 1234,
                'num_pgs': self.num_pgs[i], 'num_osds': 1, 'num_per_pool_osds': 1,
                'num_per_pool_omap_osds': 1, 'kb': kb, 'kb_used': used, 'kb_used_data': used,
                'kb_used_omap': 1024, 'kb_used_meta': 2 << 20, 'kb_avail': kb - used,
                'statfs': {'total': kb << 10, 'available': (kb - used) << 10,
                           'internally_reserved': 0, 'allocated': used << 10,
                           'data_stored': used << 10, 'data_compressed': 0,
                           'data_compressed_allocated': 0, 'data_compressed_original': 0,
                           'omap_allocated': 1 << 20, 'internal_metadata': 2 << 30},
                'hb_peers': sorted({(i + k * nh + d) % self.n
                                    for k in range(1, 4) for d in range(1, 7)} - {i}),
                'snap_trim_queue_len': 0, 'num_snap_trimming': 0, 'num_shards_repaired': 0,
                'op_queue_age_hist': {'histogram': [], 'upper_bound': 1},
                'perf_stat': {'commit_latency_ms': 1.0, 'apply_latency_ms': 1.0,
                              'commit_latency_ns': 1000000, 'apply_latency_ns': 1000000},
                'alerts': [], 'network_ping_times': []})
        return {'osd_stats': stats, 'pg_stats_sum': {}, 'osd_stats_sum': {}}

    def _pg_state(self, acting: List[int]) -> str:
        if all(self.up[o] for o in acting):
            return 'active+clean'
        return 'active+undersized+degraded'

    def _pg_stats_json(self) -> str:
        """`pg_stats` as JSON, written directly: 65536 PGs as dicts and then
        json.dumps would take most of a second, which is the fake's, not the mgr's."""
        parts = []
        for j, acting in enumerate(self.pgs):
            up = [o for o in acting if self.up[o]]
            ids = ','.join(map(str, up))
            primary = up[0] if up else -1
            objects = 100 + j % 50
            parts.append(
                f'{{"pgid":"{POOL}.{j:x}","version":"{EPOCH - 10}\'{1000 + j % 977}",'
                f'"reported_seq":{50000 + j % 1000},"reported_epoch":{EPOCH},'
                f'"state":"{self._pg_state(acting)}","last_fresh":"{STAMP}",'
                f'"last_change":"{STAMP}","last_active":"{STAMP}","last_clean":"{STAMP}",'
                f'"up":[{ids}],"acting":[{ids}],"up_primary":{primary},'
                f'"acting_primary":{primary},"stat_sum":{{"num_bytes":{4194304 * objects},'
                f'"num_objects":{objects},"num_object_copies":{self.size * objects}}},'
                f'"last_scrub_stamp":"{STAMP}","last_deep_scrub_stamp":"{STAMP}"}}')
        return '{"pg_stats":[' + ','.join(parts) + ']}'

    def _pg_summary(self) -> Dict[str, Any]:
        by_osd: Dict[str, Counter] = {str(i): Counter() for i in range(self.n)}
        total: Counter = Counter()
        for acting in self.pgs:
            state = self._pg_state(acting)
            total[state] += 1
            for o in acting:
                by_osd[str(o)][state] += 1
        return {'by_osd': {k: dict(v) for k, v in by_osd.items()},
                'by_pool': {str(POOL): dict(total)}, 'all': dict(total)}

    def _health(self) -> Dict[str, Any]:
        checks: Dict[str, Any] = {}
        down = [i for i in range(self.n) if not self.up[i]]
        if down:
            checks['OSD_DOWN'] = {'severity': 'HEALTH_WARN', 'muted': False, 'summary': {
                'message': f'{len(down)} osds down', 'count': len(down)},
                'detail': [{'message': f'osd.{i} is down'} for i in down]}
        flagged = [i for i in range(self.n) if self.osd_flags[i]]
        if flagged:
            checks['OSD_FLAGS'] = {'severity': 'HEALTH_WARN', 'muted': False, 'summary': {
                'message': f'{len(flagged)} OSDs or CRUSH {{nodes, device-classes}} have '
                           '{NOUP,NODOWN,NOIN,NOOUT} flags set', 'count': len(flagged)},
                'detail': [{'message': f'osd.{i} has flags {",".join(sorted(self.osd_flags[i]))}'}
                           for i in flagged]}
        extra = [f for f in self.global_flags if f in ('noout', 'noup', 'nodown', 'noin')]
        if extra:
            checks['OSDMAP_FLAGS'] = {'severity': 'HEALTH_WARN', 'muted': False, 'summary': {
                'message': f'{",".join(extra)} flag(s) set', 'count': len(extra)}, 'detail': []}
        status = 'HEALTH_WARN' if checks else 'HEALTH_OK'
        return {'json': json.dumps({'status': status, 'checks': checks, 'mutes': []})}

    def _osd_metadata(self) -> Dict[str, Any]:
        return {str(i): {'id': i, 'arch': 'x86_64', 'ceph_release': 'pacific',
                         'ceph_version': 'ceph version 16.2.15 pacific (stable)',
                         'hostname': self.host_names[self.host_of[i]],
                         'osd_objectstore': 'bluestore', 'bluestore_bdev_type': 'ssd',
                         'default_device_class': self.device_class,
                         'devices': f'nvme{i // len(self.host_names)}n1', 'rotational': '0'}
                for i in range(self.n)}

    _BUILDERS = {'osd_map': '_osd_map', 'osd_map_tree': '_tree', 'osd_map_crush': '_crush',
                 'osd_stats': '_osd_stats', 'pg_summary': '_pg_summary', 'health': '_health',
                 'osd_metadata': '_osd_metadata'}

    def _json(self, name: str) -> Optional[str]:
        if name not in self._BUILDERS and name != 'pg_stats':
            return None
        if name not in self._cache:
            self._cache[name] = (self._pg_stats_json() if name == 'pg_stats' else
                                 json.dumps(getattr(self, self._BUILDERS[name])()))
        return self._cache[name]

    def warm(self) -> None:
        """Write every answer's JSON now (the constructor does), so that what is
        timed next is the decoding a `get` costs, not the fake building its state;
        a change to the OSDs (up, down, noout) drops them, to be rebuilt when asked."""
        for name in list(self._BUILDERS) + ['pg_stats', 'config dump']:
            if name == 'config dump':
                self._cache[name] = json.dumps(self._dump())
            else:
                self._json(name)

    def _changed(self) -> None:
        self._cache.clear()

    # ------------------------------------------------------------ the mgr's API

    @_timed
    def get(self, name: str) -> Any:
        self.get_calls[name] += 1
        text = self._json(name)
        if text is None:  # the mgr logs "unknown data" and answers None
            return None
        self.bytes_out['get'] += len(text)
        return json.loads(text)

    def get_module_option_ex(self, module: str, key: str, default: Any = None) -> Any:
        return self.module_options.get((module, key), default)

    @_timed
    def mon_command(self, cmd: Dict[str, Any], inbuf: Optional[str] = None) -> Tuple[int, str,
                                                                                     str]:
        prefix = str(cmd.get('prefix', ''))
        self.mon_calls[prefix] += 1
        self._charge()
        r, out, err = self._mon(prefix, cmd)
        self.bytes_out['mon'] += len(out) + len(err)
        return r, out, err

    @_timed
    def send_command(self, result: Any, svc_type: str, svc_id: str, command: str, tag: str,
                     inbuf: Optional[str] = None, *args: Any, **kwargs: Any) -> None:
        cmd = json.loads(command)
        if svc_type == 'mon':
            prefix = str(cmd.get('prefix', ''))
            self.mon_calls[prefix] += 1
            self._charge()
            r, out, err = self._mon(prefix, cmd)
        else:
            self.tell_calls[str(cmd.get('prefix', ''))] += 1
            self._charge()
            r, out, err = self._tell(svc_type, svc_id, cmd)
        self.bytes_out['mon' if svc_type == 'mon' else 'tell'] += len(out) + len(err)
        result.complete(r, out, err)

    # ------------------------------------------------------------ the mon

    def _osd_ids(self, ids: Any) -> List[int]:
        out = []
        for x in ids if isinstance(ids, list) else [ids]:
            s = str(x)
            s = s[len('osd.'):] if s.startswith('osd.') else s
            if not s.isdigit() or int(s) >= self.n:
                raise KeyError(str(x))
            out.append(int(s))
        return out

    def _mon(self, prefix: str, cmd: Dict[str, Any]) -> Tuple[int, str, str]:
        json_out = cmd.get('format') in ('json', 'json-pretty')
        if prefix == 'config dump':
            if 'config dump' not in self._cache:
                self._cache['config dump'] = json.dumps(self._dump())
            if json_out:
                return 0, self._cache['config dump'], ''
            return 0, '\n'.join(f'{r["section"]:<8} {r["mask"]:<20} {r["name"]} {r["value"]}'
                                for r in self._dump()) + '\n', ''
        if prefix == 'config get':
            who, key = str(cmd.get('who', '')), cmd.get('key')
            if key is None:
                return self._config_get_all(who, json_out)
            if key not in OPTION_TABLE and not str(key).startswith('mgr/'):
                return -errno.ENOENT, '', f'unrecognized key \'{key}\''
            if json_out:  # what MgrCluster.config_get notes: json prints nothing
                return 0, '', ''
            return 0, self.effective(who, str(key)) + '\n', ''
        if prefix == 'config set':
            return self._config_set(str(cmd.get('who', '')), str(cmd.get('name', '')),
                                    str(cmd.get('value', '')), bool(cmd.get('force')))
        if prefix == 'config rm':
            try:
                section, mask = parse_who(str(cmd.get('who', '')))
            except ValueError as e:
                return -errno.EINVAL, '', str(e)
            entries = self.config.get(str(cmd.get('name', '')), {})
            if entries.pop((section, mask), None) is not None:
                self._cache.pop('config dump', None)
            return 0, '', ''
        if prefix == 'config help':
            key = str(cmd.get('key', ''))
            if key not in OPTION_TABLE:
                return -errno.ENOENT, '', f'Option {key} not found'
            default, level, runtime, kind = OPTION_TABLE[key]
            return 0, json.dumps({
                'name': key, 'type': kind, 'level': level, 'desc': '', 'long_desc': '',
                'default': default, 'daemon_default': '', 'tags': [], 'services': [],
                'see_also': [], 'enum_values': [], 'min': '', 'max': '',
                'can_update_at_runtime': runtime, 'flags': []}), ''
        if prefix == 'config-key dump':
            key = str(cmd.get('key', ''))
            return 0, json.dumps({k: v for k, v in self.crash_store.items()
                                  if k.startswith(key)}), ''
        if prefix in ('osd ok-to-stop', 'osd add-noout', 'osd rm-noout'):
            try:
                ids = self._osd_ids(cmd.get('ids', []))
            except KeyError as e:
                return -errno.ENOENT, '', f'unrecognized osd {e.args[0]}'
            if prefix == 'osd ok-to-stop':
                return self._ok_to_stop(ids, int(cmd.get('max', 1)))
            for i in ids:
                (self.osd_flags[i].add if prefix == 'osd add-noout'
                 else self.osd_flags[i].discard)('noout')
            self._changed()
            return 0, '', ''
        if prefix in ('osd set', 'osd unset'):
            flag = str(cmd.get('key', ''))
            if prefix == 'osd set' and flag not in self.global_flags:
                self.global_flags.append(flag)
            elif prefix == 'osd unset' and flag in self.global_flags:
                self.global_flags.remove(flag)
            self._changed()
            return 0, '', f'{flag} is {"set" if prefix == "osd set" else "unset"}'
        if prefix in ('osd dump', 'osd tree', 'osd metadata'):
            name = {'osd dump': 'osd_map', 'osd tree': 'osd_map_tree',
                    'osd metadata': 'osd_metadata'}[prefix]
            text = self._json(name) or ''
            if prefix == 'osd metadata' and 'id' in cmd:
                text = json.dumps(json.loads(text).get(str(cmd['id'])))
            return 0, text, ''
        return -errno.EINVAL, '', f'mock mon: no command {prefix!r}'

    def _config_get_all(self, who: str, json_out: bool) -> Tuple[int, str, str]:
        """`config get WHO`: the options set for it (not the defaults), by name."""
        loc = self.location(who)
        sections = self._sections(who)
        out: Dict[str, Dict[str, Any]] = {}
        for name in sorted(self.config):
            win: Optional[Tuple[int, int, str, Mask, str]] = None
            for (section, mask), value in self.config[name].items():
                if section in sections and all(loc.get(k) == v for k, v in mask):
                    cand = (sections.index(section), -precision(mask), section, mask, value)
                    if win is None or cand[:2] > win[:2]:
                        win = cand
            if win is not None:
                runtime = OPTION_TABLE[name][2] if name in OPTION_TABLE else True
                out[name] = {'value': win[4], 'section': win[2], 'mask': mask_str(win[3]),
                             'can_update_at_runtime': runtime}
        if json_out:
            return 0, json.dumps(out), ''
        return 0, ''.join(f'{k} {v["value"]}\n' for k, v in out.items()), ''

    def _config_set(self, who: str, name: str, value: str, force: bool) -> Tuple[int, str, str]:
        if name not in OPTION_TABLE and not name.startswith('mgr/') and not force:
            return -errno.EINVAL, '', f'unrecognized config option \'{name}\''
        try:
            section, mask = parse_who(who)
        except ValueError as e:
            return -errno.EINVAL, '', str(e)
        self.config.setdefault(name, {})[(section, mask)] = value
        self._cache.pop('config dump', None)
        return 0, '', ''

    def _ok_to_stop(self, ids: List[int], most: int = 1) -> Tuple[int, str, str]:
        """Ok when every PG of these OSDs keeps min_size copies up without them;
        with `most` (--max) over their count, as the mgr: grown from the
        lowest id with up OSDs of its host, then of the others, by id, while
        that stays ok, up to `most`."""
        bad, ok = self._offline(set(ids))
        if not bad and most > len(ids):
            ids = sorted(ids)
            h = self.host_of[ids[0]]
            for level in (self.host_osds[h], range(self.n)):
                failed = 0
                for i in level:
                    if len(ids) < most and self.up[i] and i not in ids:
                        more = self._offline(set(ids + [i]))
                        if more[0]:
                            failed += 1
                        else:
                            ids.append(i)
                            ok = more[1]
                if failed or len(ids) >= most:
                    break
        names = ','.join(f'osd.{i}' for i in ids)
        if bad:
            return -errno.EBUSY, '', (f'unsafe to stop osd(s) at this time ({bad} PGs are or '
                                      'would become offline)')
        return 0, json.dumps({'ok_to_stop': True, 'osds': ids, 'num_ok_pgs': ok,
                              'num_not_ok_pgs': 0}), (
            f'{names} are ok to stop without reducing availability or risking data, provided '
            'there are no other concurrent failures or interventions.\n'
            f'{ok} PGs are likely to be degraded (but remain available) as a result.')

    def _offline(self, stopping: Set[int]) -> Tuple[int, int]:
        """The PGs of these OSDs that would go below min_size, and the others."""
        min_size = self.size - 1
        bad = ok = 0
        for n in {n for o in stopping for n in self.pgs_of[o]}:
            if sum(1 for o in self.pgs[n] if self.up[o] and o not in stopping) < min_size:
                bad += 1
            else:
                ok += 1
        return bad, ok

    # ------------------------------------------------------------ tells

    def _tell(self, svc_type: str, svc_id: str, cmd: Dict[str, Any]) -> Tuple[int, str, str]:
        if svc_type != 'osd' or not svc_id.isdigit() or int(svc_id) >= self.n:
            return -errno.ENOENT, '', f'no such daemon {svc_type}.{svc_id}'
        osd = int(svc_id)
        if not self.up[osd]:
            return -errno.ENXIO, '', f'problem getting command descriptions from osd.{osd}'
        prefix = cmd.get('prefix')
        if prefix == 'config get':
            var = str(cmd.get('var', ''))
            if var not in OPTION_TABLE:
                return -errno.ENOENT, '', f'Setting not found: \'{var}\''
            value = self.running[osd].get(var)
            if value is None:
                value = self.effective(f'osd.{osd}', var)
            return 0, json.dumps({var: value}), ''
        if prefix == 'perf dump':
            return 0, json.dumps(self._perf_dump(osd)), ''
        if prefix == 'bench':
            return self._bench(osd, cmd)
        if prefix == 'dump_objectstore_kv_stats':
            # without rocksdb_perf when it opened its DB, RocksDB kept no statistics
            if self.running[osd].get('rocksdb_perf') != 'true':
                return 0, '{}', ''
            if KV_STATS not in self._cache:
                with open(KV_STATS) as f:
                    self._cache[KV_STATS] = f.read()
            return 0, self._cache[KV_STATS], ''
        return -errno.EINVAL, '', f'mock osd: no command {prefix!r}'

    def _perf_dump(self, osd: int) -> Dict[str, Any]:
        """The sections of `perf dump` a window reads, from what osd bench wrote."""
        b = self.written[osd]
        syncs = b // (25 << 12)  # 25 writes of 4 KiB a kv sync

        def lat(n: int, seconds: float) -> Dict[str, Any]:
            return {'avgcount': n, 'sum': n * seconds, 'avgtime': seconds if n else 0.0}
        return {
            'bluefs': {'db_total_bytes': 64 << 30, 'db_used_bytes': (1 << 30) + b,
                       'bytes_written_wal': int(b * WAL_PER_BYTE),
                       'bytes_written_sst': int(b * SST_PER_BYTE), 'bytes_written_slow': 0,
                       'files_written_sst': int(b * SST_PER_BYTE) >> 26},
            'osd': {'op_w': b >> 12, 'op_w_in_bytes': b, 'op_w_latency': lat(b >> 12, 0.002)},
            'bluestore': {'kv_sync_lat': lat(syncs, 0.001), 'kv_commit_lat': lat(syncs, 0.0002),
                          'kv_flush_lat': lat(syncs, 0.0008)},
            'rocksdb': {'submit_latency': lat(syncs, 0.00005)}}

    def _bench(self, osd: int, cmd: Dict[str, Any]) -> Tuple[int, str, str]:
        """`ceph tell osd.N bench`: written at BENCH_IOPS, at once."""
        count, size = int(cmd.get('count', 1 << 30)), int(cmd.get('size', 4 << 20))
        if size <= 0 or count < size:
            return -errno.EINVAL, '', 'block size must be positive and at most the total'
        self.written[osd] += count
        elapsed = count / size / BENCH_IOPS
        if self.clock is not None:
            self.clock.advance(elapsed)
        return 0, json.dumps({'bytes_written': count, 'blocksize': size,
                              'elapsed_sec': elapsed, 'bytes_per_sec': count / elapsed,
                              'iops': count / size / elapsed}), ''


def module_over(mgr: ScaleMgr) -> Any:
    """The rocks_autotune module as the unit tests build it (mgr_mock.make_module:
    Ceph's real mgr_module.py over a mock of its C++ side, loaded), talking to
    `mgr` through its real MgrCluster."""
    import mgr_mock
    from rocks_autotune.cluster import MgrCluster
    m = mgr_mock.make_module()
    m.cluster = MgrCluster(mgr)
    mgr.clock = m.clock
    return m
