"""What the tuner needs from a Ceph cluster: `Cluster` (MgrCluster), over the
mgr's API; the unit tests put a fake with the same members in its place."""
import errno
import json
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from . import rocksdb_stats
from .rocksdb_stats import KvStats


class ClusterError(Exception):
    """A cluster call failed; the message is fit to show an admin."""


class NoOrchestrator(ClusterError):
    """No orchestrator backend is set: restarts are the admin's job (manual mode)."""


@dataclass
class OsdInfo:
    id: int
    up: bool
    in_: bool
    up_from: int
    device_class: str
    num_pgs: int
    destroyed: bool = False  # `ceph osd destroy`: its id kept, its data gone


@dataclass
class Crash:
    """A crash report, as the crash module keeps it."""
    id: str      # what `ceph crash archive` takes
    entity: str  # the daemon: osd.N, mon.a, ...
    time: float  # when it crashed (epoch seconds), by the daemon host's clock


# a PG in any of these is moving data, holds a bad copy, or serves no I/O;
# anything else beside active+clean (scrubbing, snaptrim) is background work
NOT_CLEAN = frozenset({
    'degraded', 'undersized', 'remapped', 'backfilling', 'backfill_wait',
    'backfill_toofull', 'backfill_unfound', 'recovering', 'recovery_wait',
    'recovery_toofull', 'recovery_unfound', 'forced_recovery', 'forced_backfill',
    'inconsistent', 'repair', 'failed_repair', 'peered', 'peering', 'activating',
    'down', 'incomplete', 'stale', 'unknown', 'creating', 'laggy', 'wait', 'premerge'})
# the per-OSD flags OSD_FLAGS reports (the cluster-wide ones are OSDMAP_FLAGS)
OSD_FLAG_NAMES = frozenset({'noup', 'nodown', 'noin', 'noout'})
# where the crash module keeps its reports: its own store, held by the mon
CRASH_KEYS = 'mgr/crash/crash/'
CRASH_WARN_DEFAULT = 14 * 86400  # the crash module's warn_recent_interval


def pg_state_clean(state: str) -> bool:
    """A pg_summary state: active and clean, doing nothing that matters to data."""
    parts = set(state.split('+'))
    return {'active', 'clean'} <= parts and not parts & NOT_CLEAN


def crash_time(stamp: str) -> float:
    """A crash report's UTC timestamp in epoch seconds; the crash module reads
    'T' or ' ' between date and time."""
    t = datetime.strptime(stamp.rstrip('Z').replace(' ', 'T'), '%Y-%m-%dT%H:%M:%S.%f')
    return t.replace(tzinfo=timezone.utc).timestamp()


@dataclass
class PoolInfo:
    id: int
    name: str
    size: int
    min_size: int
    erasure: bool = False
    pg_num: int = 0
    k: int = 0  # erasure-coded: the data chunks, the shards a PG needs to be read
    m: int = 0  # erasure-coded: the coding chunks
    # bytes a client can still write before the fullest OSD passes nearfull:
    # MAX AVAIL x (nearfull - u) / (full - u), u the fullest OSD's use; None: unknown
    room: Optional[int] = None
    # what its quotas leave to write (bytes, objects); None: no quota or use unknown
    quota_bytes: Optional[int] = None
    quota_objects: Optional[int] = None
    full: bool = False  # marked full by the mons: every client's writes wait


@dataclass
class PgInfo:
    pgid: str
    pool: int
    acting: List[int]  # the OSDs serving its I/O; NO_OSD where an EC shard has none
    up: List[int] = field(default_factory=list)  # where CRUSH maps it (acting once clean)


# pg_pool_t::TYPE_ERASURE, as the osd map dumps a pool's type (1 is replicated)
POOL_TYPE_ERASURE = 3
# CRUSH_ITEM_NONE: a hole in an erasure-coded PG's acting set
NO_OSD = 0x7fffffff

# config entries by `who` as `ceph config set` takes it (osd, osd/class:ssd,
# osd/host:node1, osd.3, ...), then by option name
ConfigEntries = Dict[str, Dict[str, str]]
# what config masks are matched against, per OSD: 'class' -> its device
# class, and each CRUSH bucket type above it -> the bucket's name
Location = Dict[str, str]
# the sections an OSD reads before its own, least precise first (the mon's order)
OSD_SECTIONS = ('global', 'osd')


@dataclass
class ConfigEntry:
    """One entry of `ceph config dump`."""
    section: str
    name: str
    value: str
    mask: List[Tuple[str, str]]  # (CRUSH bucket type or 'class', value)

    @property
    def who(self) -> str:
        return '/'.join([self.section] + [f'{kind}:{value}' for kind, value in self.mask])

    def matches(self, loc: Location) -> bool:
        return all(loc.get(kind) == value for kind, value in self.mask)

    def precision(self) -> int:
        """Within a section, a CRUSH location beats a device class beats none."""
        return sum(1 if kind == 'class' else 2 for kind, _ in self.mask)


class ConfigSnapshot:
    """The mons' config and the OSDs' locations, read once for a plan over
    thousands of OSDs; the value an OSD gets follows the mon's precedence
    (osd.N, osd, global; the more precise mask), else `defaults`."""

    def __init__(self, entries: Sequence[ConfigEntry],
                 locations: Callable[[], Dict[int, Location]],
                 defaults: Optional[Dict[str, str]] = None) -> None:
        self._locate = locations
        self.defaults = dict(defaults or {})
        self._own: Dict[Tuple[str, str], str] = {}
        self._by_section: Dict[str, List[ConfigEntry]] = {}
        for e in entries:
            self._own[(_norm_who(e.who), e.name)] = e.value
            self._by_section.setdefault(e.section, []).append(e)

    @cached_property
    def locations(self) -> Dict[int, Location]:
        """Read on first use: own() needs none, so a rollout's step that reads
        its OSD's own mask does not read every OSD's location."""
        return self._locate()

    def own(self, who: str, name: str) -> Optional[str]:
        """The value set at exactly this `who` (section and mask), or None."""
        return self._own.get((_norm_who(who), name))

    def _reaching(self, osd: int, names: Sequence[str]) -> List[Tuple[int, ConfigEntry]]:
        loc = self.locations.get(osd, {})
        return [(rank, e) for rank, section in enumerate(OSD_SECTIONS + (f'osd.{osd}',))
                for e in self._by_section.get(section, [])
                if e.name in names and e.matches(loc)]

    def entries(self, osd: int, names: Sequence[str]) -> ConfigEntries:
        """The entries of these options that reach osd.N (global, osd, osd.N;
        unmasked or with a mask that matches it)."""
        out: ConfigEntries = {}
        for _, e in self._reaching(osd, names):
            out.setdefault(e.who, {})[e.name] = e.value
        return out

    def effective(self, osd: int, name: str) -> str:
        """The value the mon gives osd.N (`config get`), its default included."""
        reaching = self._reaching(osd, [name])
        if not reaching:
            return self.defaults[name]
        return max(reaching, key=lambda re: (re[0], re[1].precision()))[1].value


def _norm_who(who: str) -> str:
    """A `who` with its masks in one order, as the mon keeps them."""
    section, mask = split_who(who)
    return '/'.join([section] + [f'{kind}:{value}' for kind, value in sorted(mask)])


def _osd_state(o: Dict[str, Any]) -> OsdInfo:
    return OsdInfo(id=o['osd'], up=bool(o['up']), in_=bool(o['in']), up_from=o.get('up_from', 0),
                   device_class='', num_pgs=0, destroyed='destroyed' in o.get('state', []))


def _quota_left(quota: Any, used: Any) -> Optional[int]:
    """What a pool quota (0: none) leaves of `used`: None with no quota or use unknown."""
    if not isinstance(quota, int) or quota <= 0 or not isinstance(used, int):
        return None
    return max(0, quota - used)


def _count(v: Any, default: int) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def split_who(who: str) -> Tuple[str, List[Tuple[str, str]]]:
    """`ceph config set`'s `who` as (section, mask): 'osd/host:node1/class:ssd'
    -> ('osd', [('host', 'node1'), ('class', 'ssd')])."""
    section, *masks = who.split('/')
    return section, [(kind, value) for kind, _, value in (m.partition(':') for m in masks)]


def _mask(entry: Dict[str, Any]) -> List[Tuple[str, str]]:
    """A `config dump` entry's mask: (CRUSH bucket type or 'class', value) pairs."""
    mask = []
    if entry.get('location_type'):
        mask.append((str(entry['location_type']), str(entry.get('location_value', ''))))
    if entry.get('device_class'):
        mask.append(('class', str(entry['device_class'])))
    return mask


class MgrBase:
    """The mgr's Python API as MgrCluster's parts use it: mon commands, tell, CRUSH tree."""

    def __init__(self, mgr: Any) -> None:
        self.mgr = mgr
        self._view = threading.local()  # one_view()'s maps, per thread

    def _get(self, name: str) -> Any:
        """mgr.get(name); within one_view(), the map as this thread first read it."""
        maps = getattr(self._view, 'maps', None)
        if maps is None:
            return self.mgr.get(name)
        if name not in maps:
            maps[name] = self.mgr.get(name)
        return maps[name]

    @contextmanager
    def one_view(self) -> Iterator[None]:
        """Within, each of the mgr's maps is read once: checks that each read
        the OSD map see one map and decode it once (11 MB of JSON at 10,000
        OSDs).  For reads only: an action's effect is not seen within."""
        if getattr(self._view, 'maps', None) is not None:  # nested: the outer one's
            yield
            return
        self._view.maps = {}
        try:
            yield
        finally:
            self._view.maps = None

    def _mon_ok(self, **cmd: Any) -> str:
        r, out, err = self.mgr.mon_command(cmd)
        if r != 0:
            raise ClusterError(f'{cmd["prefix"]} failed: {err or out} ({r})')
        return out

    def _tell(self, osd: int, cmd: Dict[str, Any], timeout: float = 60) -> Any:
        out, err = self._tell_text(osd, cmd, timeout)
        try:
            return json.loads(out)
        except ValueError:
            # seen when the OSD dies with the command in flight: r == 0, no output
            raise ClusterError(f'osd.{osd} {cmd["prefix"]} gave no usable answer: '
                               f'{(err or out)[:200]!r}')

    def _tell_text(self, osd: int, cmd: Dict[str, Any], timeout: float = 60) -> Tuple[str, str]:
        from mgr_module import CommandResult
        result = CommandResult('')
        self.mgr.send_command(result, 'osd', str(osd), json.dumps(cmd), '')
        # a canary that dies mid-command may never answer: bound the wait
        if not result.ev.wait(timeout):
            raise ClusterError(f'osd.{osd} {cmd["prefix"]} got no answer in {timeout:.0f}s')
        r, out, err = result.wait()
        if r != 0:
            raise ClusterError(f'osd.{osd} {cmd["prefix"]} failed: {err or out} ({r})')
        return out, err

    def _tree(self) -> Tuple[Dict[int, Dict[str, Any]], List[Dict[str, Any]]]:
        """The CRUSH tree: each child's parent node, and the nodes in order."""
        nodes = self._get('osd_map_tree').get('nodes', [])
        return {c: n for n in nodes for c in n.get('children', [])}, nodes

    @staticmethod
    def _ancestors(osd: int, parent: Dict[int, Dict[str, Any]],
                   bound: int) -> List[Dict[str, Any]]:
        """The buckets above an OSD, nearest first."""
        out = []
        node = parent.get(osd)
        for _ in range(bound):  # bounded: a malformed map must not loop
            if node is None:
                break
            out.append(node)
            node = parent.get(node['id'])
        return out


class MgrReads(MgrBase):
    """What the cluster is: OSDs, PGs, pools, health, flags, crashes, counters."""

    def osds(self) -> Dict[int, OsdInfo]:
        osds = self.osd_states()
        for dev in self._get('osd_map_crush').get('devices', []):
            if dev['id'] in osds:
                osds[dev['id']].device_class = dev.get('class', '')
        for s in self._get('osd_stats')['osd_stats']:
            if s['osd'] in osds:
                osds[s['osd']].num_pgs = s.get('num_pgs', 0)
        return osds

    def osd_states(self) -> Dict[int, OsdInfo]:
        """osds() from the OSD map alone (no device class nor PG count)."""
        return {o['osd']: _osd_state(o) for o in self._get('osd_map')['osds']}

    def osd_state(self, osd: int) -> Optional[OsdInfo]:
        """osd_states() of one OSD (None: not in the map)."""
        return next((_osd_state(o) for o in self._get('osd_map')['osds']
                     if o['osd'] == osd), None)

    def health(self) -> Tuple[str, List[str]]:
        """Status and codes of the health checks raised, muted ones left out."""
        h = json.loads(self._get('health')['json'])
        checks = {code: c for code, c in h.get('checks', {}).items() if not c.get('muted')}
        # recomputed from the checks kept, so the two always agree
        severities = {c.get('severity') for c in checks.values()}
        status = ('HEALTH_ERR' if 'HEALTH_ERR' in severities
                  else 'HEALTH_WARN' if checks else 'HEALTH_OK')
        return status, sorted(checks)

    def pgs_active_clean(self) -> bool:
        """Every PG is active and clean (pg_state_clean)."""
        summary = self._get('pg_summary')['all']
        return sum(summary.values()) > 0 and all(
            pg_state_clean(state) for state, n in summary.items() if n)

    def inactive_pgs(self) -> int:
        summary = self._get('pg_summary')['all']
        return sum(n for state, n in summary.items() if 'active' not in state.split('+'))

    def ok_to_stop(self, osd: int, *together: int) -> Tuple[bool, str]:
        """May `osd` (and those stopping `together` with it) stop now?"""
        r, out, err = self.mgr.mon_command({'prefix': 'osd ok-to-stop',
                                            'ids': [str(i) for i in (osd, *together)]})
        return r == 0, (err or out).strip()

    def ok_to_stop_max(self, osd: int, most: int) -> List[int]:
        """The OSDs that may stop together with `osd`, up to `most` of them (the
        mgr adds up ones near it in the CRUSH tree, as cephadm's upgrade asks);
        empty when `osd` may not stop."""
        r, out, _ = self.mgr.mon_command({'prefix': 'osd ok-to-stop', 'ids': [str(osd)],
                                          'max': most, 'format': 'json'})
        if r != 0:
            return []
        try:
            return [int(i) for i in json.loads(out)['osds']]
        except (ValueError, KeyError, TypeError):
            return []

    def pools(self) -> Dict[int, PoolInfo]:
        osd_map = self._get('osd_map')
        stats = {p.get('id'): p.get('stats', {})
                 for p in (self._get('df') or {}).get('pools', [])}
        full, nearfull = osd_map.get('full_ratio'), osd_map.get('nearfull_ratio')
        used = max((s['kb_used'] / s['kb'] for s in self._get('osd_stats')['osd_stats']
                    if s.get('kb') and 'kb_used' in s), default=None)
        out = self._pool_states(osd_map)
        for p in osd_map.get('pools', []):
            pool = out[p['pool']]
            use = stats.get(pool.id, {})
            avail = use.get('max_avail')
            if isinstance(avail, int) and full and nearfull and used is not None:
                head = float(full) - used
                pool.room = (int(avail * min(1.0, max(0.0, float(nearfull) - used) / head))
                             if head > 0 else 0)
            pool.quota_bytes = _quota_left(p.get('quota_max_bytes'), use.get('stored'))
            pool.quota_objects = _quota_left(p.get('quota_max_objects'), use.get('objects'))
        return out

    def pool_states(self) -> Dict[int, PoolInfo]:
        """pools() from the OSD map alone: layout and full flag, no room nor quotas."""
        return self._pool_states(self._get('osd_map'))

    @staticmethod
    def _pool_states(osd_map: Dict[str, Any]) -> Dict[int, PoolInfo]:
        profiles = osd_map.get('erasure_code_profiles', {})
        out = {}
        for p in osd_map.get('pools', []):
            size = int(p['size'])
            pool = PoolInfo(id=p['pool'], name=str(p.get('pool_name', p['pool'])), size=size,
                            min_size=int(p['min_size']), pg_num=_count(p.get('pg_num'), 0))
            pool.full = 'full' in str(p.get('flags_names', '')).split(',')
            if p.get('type') == POOL_TYPE_ERASURE:
                profile = profiles.get(p.get('erasure_code_profile', ''), {})
                # an unreadable profile counts as no shard to spare (k = size)
                pool.erasure = True
                pool.k = _count(profile.get('k'), size)
                pool.m = _count(profile.get('m'), size - pool.k)
            out[pool.id] = pool
        return out

    def pgs(self) -> List[PgInfo]:
        """Every PG, with its up and acting OSDs (read once for all OSDs)."""
        return [PgInfo(pgid=s['pgid'], pool=int(s['pgid'].split('.')[0]),
                       acting=list(s.get('acting', [])), up=list(s.get('up', [])))
                for s in self._get('pg_stats')['pg_stats']]

    def osdmap_flags(self) -> List[str]:
        return sorted(str(f) for f in self._get('osd_map')['flags_set'])

    def crush_order(self) -> List[Tuple[int, str]]:
        """Every OSD in `ceph osd tree`'s order, with its host ('' when none);
        OSDs not in the tree last."""
        parent, nodes = self._tree()

        def host(osd: int) -> str:
            return next((str(n['name']) for n in self._ancestors(osd, parent, len(nodes))
                         if n.get('type') == 'host'), '')
        listed = list(dict.fromkeys(n['id'] for n in nodes if n['id'] >= 0))
        return [(o, host(o)) for o in listed + sorted(set(self.osds()) - set(listed))]

    def osd_flags(self) -> Dict[str, List[str]]:
        """Who has noup/nodown/noin/noout set, and which: what OSD_FLAGS
        reports, keyed 'osd.N', 'crush node NAME' or 'device class NAME'."""
        osd_map = self._get('osd_map')
        flagged = {f"osd.{o['osd']}": sorted(OSD_FLAG_NAMES.intersection(o.get('state', [])))
                   for o in osd_map['osds']}
        # `ceph osd set-group`: on a CRUSH node (a host in maintenance) or a device class
        for section, kind in (('crush_node_flags', 'crush node'),
                              ('device_class_flags', 'device class')):
            for name, flags in osd_map.get(section, {}).items():
                flagged[f'{kind} {name}'] = sorted(flags)
        return {who: flags for who, flags in flagged.items() if flags}

    def has_noout(self, osd: int) -> bool:
        return 'noout' in self.osd_flags().get(f'osd.{osd}', [])

    def recent_crashes(self) -> List[Crash]:
        """The crashes RECENT_CRASH counts (not archived, recent)."""
        # `crash ls` is the crash module's command, not the mon's, and its
        # Python API differs by release; its store is the same on both
        dump = json.loads(self._mon_ok(prefix='config-key dump', key=CRASH_KEYS))
        window = float(self.mgr.get_module_option_ex('crash', 'warn_recent_interval',
                                                     CRASH_WARN_DEFAULT))
        since = time.time() - window
        crashes = []
        for key, raw in dump.items():
            try:
                report = json.loads(raw)
                crash = Crash(id=str(report['crash_id']), entity=str(report['entity_name']),
                              time=crash_time(report['timestamp']))
            except (ValueError, KeyError, TypeError, AttributeError):
                # unreadable: someone else's, as far as anyone can tell
                crashes.append(Crash(id=key[len(CRASH_KEYS):], entity='', time=0.0))
                continue
            if 'archived' not in report and crash.time > since:
                crashes.append(crash)
        return crashes

    def perf_dump(self, osd: int) -> Dict[str, Any]:
        return self._tell(osd, {'prefix': 'perf dump'})

    def kv_stats(self, osd: int) -> KvStats:
        """RocksDB's statistics and compaction tables (rocksdb_stats.py)."""
        out, err = self._tell_text(osd, {'prefix': 'dump_objectstore_kv_stats'})
        try:
            return rocksdb_stats.parse(out)
        except ValueError as e:
            raise ClusterError(f'osd.{osd} dump_objectstore_kv_stats: {e} {err[:200]!r}')


class MgrConfig(MgrReads):
    """The config database: what is set where (masks matched against the
    OSDs' classes and CRUSH locations), and what an OSD runs."""

    def _config_dump(self) -> List[ConfigEntry]:
        return [ConfigEntry(section=str(e.get('section')), name=str(e.get('name')),
                            value=str(e.get('value')), mask=_mask(e))
                for e in json.loads(self._mon_ok(prefix='config dump', format='json'))]

    def config_snapshot(self, defaults: Sequence[str] = ()) -> ConfigSnapshot:
        """The whole config and OSD locations, with the release's defaults of `defaults`."""
        return ConfigSnapshot(self._config_dump(), self._locations,
                              {name: self.option_default(name) for name in defaults})

    def config_get_own(self, who: str, name: str) -> Optional[str]:
        return ConfigSnapshot(self._config_dump(), dict).own(who, name)

    def _locations(self) -> Dict[int, Location]:
        parent, nodes = self._tree()
        out: Dict[int, Location] = {}
        for osd, info in self.osds().items():
            loc = {'class': info.device_class} if info.device_class else {}
            for node in self._ancestors(osd, parent, len(nodes)):
                loc.setdefault(str(node['type']), str(node['name']))
            out[osd] = loc
        return out

    def config_entries(self, osd: int, names: Sequence[str]) -> ConfigEntries:
        return self.config_snapshot().entries(osd, names)

    def config_get(self, who: str, name: str) -> str:
        """The value in effect for `who` (default included)."""
        # plain output: the value and a newline (format=json prints nothing here)
        return self._mon_ok(prefix='config get', who=who, key=name).rstrip('\n')

    def config_get_running(self, osd: int, name: str) -> str:
        """The value the OSD process runs with (`ceph tell`): the mon's view
        differs until a restart, or for good under a local override."""
        # a short bound: this is polled while the canary starts
        answer = self._tell(osd, {'prefix': 'config get', 'var': name, 'format': 'json'},
                            timeout=10)
        if not isinstance(answer, dict) or name not in answer:
            raise ClusterError(f'osd.{osd} config get {name} gave no value: {answer!r:.200}')
        return str(answer[name])

    def config_set(self, who: str, name: str, value: str) -> None:
        self._mon_ok(prefix='config set', who=who, name=name, value=value)

    def config_rm(self, who: str, name: str) -> None:
        self._mon_ok(prefix='config rm', who=who, name=name)

    def option_default(self, name: str) -> str:
        """The running release's default for a Ceph option (`ceph config help`)."""
        try:
            return str(json.loads(self._mon_ok(prefix='config help', key=name,
                                               format='json'))['default'])
        except (ValueError, KeyError, TypeError) as e:
            raise ClusterError(f'config help {name} gave no default: {e}')


class MgrActions(MgrBase):
    """What the module does to the cluster: noout, restarts, bench, client I/O."""

    def set_noout(self, osd: int, on: bool) -> None:
        self._mon_ok(prefix='osd add-noout' if on else 'osd rm-noout', ids=[f'osd.{osd}'])

    def restart_osd(self, osd: int) -> str:
        """Restart through the orchestrator; NoOrchestrator when none is set."""
        import orchestrator
        try:
            completion = self.mgr.daemon_action('restart', f'osd.{osd}')
        except orchestrator.NoOrchestrator as e:
            raise NoOrchestrator(str(e))
        except ImportError as e:  # mgr.remote: the backend module is not enabled
            raise NoOrchestrator(f'the orchestrator backend is not enabled ({e})')
        try:
            return str(orchestrator.raise_if_exception(completion))
        except orchestrator.NoOrchestrator as e:
            raise NoOrchestrator(str(e))
        except Exception as e:
            raise ClusterError(f'orchestrator could not restart osd.{osd}: {e}')

    def bench(self, osd: int, count: int, size: int, object_size: int,
              object_num: int) -> Dict[str, Any]:
        # a chunk is a few seconds: the bound is for a canary slowed to a crawl
        return self._tell(osd, {'prefix': 'bench', 'count': count, 'size': size,
                                'object_size': object_size, 'object_num': object_num,
                                'format': 'json'}, timeout=300)

    def client_io(self, pool: str, namespace: str) -> 'RadosIo':
        """A librados client of one pool's namespace (the client workload's)."""
        try:
            ioctx = self.mgr.rados.open_ioctx(pool)
        except Exception as e:  # rados.Error, and the handle's own connect
            raise ClusterError(f'cannot open pool {pool!r}: {e}')
        ioctx.set_namespace(namespace)
        # FULL_TRY: a write to a full pool fails at once rather than wait, and
        # a delete, which frees space, goes through
        ioctx.set_osdmap_full_try()
        return RadosIo(ioctx, pool, namespace)


class MgrCluster(MgrConfig, MgrActions):
    """The cluster over the mgr's Python API (mon commands, tell, orchestrator)."""


Cluster = MgrCluster


class RadosIo:
    """A client's objects in one namespace of one pool; ClusterError when the
    cluster refuses.  Thread-safe (librados is).  Writes are asynchronous
    without a callback (one would call into Python from librados' threads):
    the caller waits on each."""

    def __init__(self, ioctx: Any, pool: str, namespace: str) -> None:
        self.ioctx = ioctx
        self.where = f'{pool}/{namespace}'

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        import rados
        try:
            return fn(*args)
        except rados.Error as e:
            raise ClusterError(f'{what} in {self.where}: {e}')

    def read(self, obj: str, length: int, offset: int) -> bytes:
        return bytes(self._call(f'reading {obj}', self.ioctx.read, obj, length, offset))

    def aio_remove(self, obj: str) -> Callable[[], None]:
        """Start removing an object (one already gone is not an error): the
        call returned waits for it (ClusterError if it failed)."""
        return self._waiter(f'removing {obj}', self.ioctx.aio_remove, obj, gone_ok=True)

    def aio_write(self, obj: str, data: bytes, offset: int) -> Callable[[], None]:
        """Start a write: the call returned waits for it (ClusterError if it failed)."""
        return self._waiter(f'writing {obj}', self.ioctx.aio_write, obj, data, offset)

    def _waiter(self, what: str, start: Any, *args: Any,
                gone_ok: bool = False) -> Callable[[], None]:
        done = self._call(what, start, *args)

        def wait() -> None:
            done.wait_for_complete()  # without the GIL
            r = done.get_return_value()
            if r < 0 and not (gone_ok and r == -errno.ENOENT):
                raise ClusterError(f'{what} in {self.where}: {os.strerror(-r)}')
        return wait

    def objects(self) -> List[str]:
        return self._call('listing', lambda: [o.key for o in self.ioctx.list_objects()])


ClientIo = RadosIo
