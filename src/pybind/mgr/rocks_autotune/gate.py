"""Before anything changes: the canary's choice, the one health policy (at
start and before every trial), and the one safety gate of every restart.
Nothing here changes the cluster."""
from dataclasses import dataclass
from typing import Callable, Collection, Dict, Iterable, List, Optional, Sequence, Tuple

from .cluster import NO_OSD, Cluster, ClusterError, Crash, PoolInfo
from .health import HEALTH_PREFIX, osd_list, osds_are
from .session_settings import Params, StartRefused


# the most lines of one kind (an OSD down, an OSD skipped) a reason names:
# the session keeps its reasons, which must not grow with the cluster
NAMED = 5


def at_most(lines: List[str], what: str) -> List[str]:
    if len(lines) <= NAMED:
        return lines
    return lines[:NAMED] + [f'{len(lines) - NAMED} more {what} likewise']


@dataclass
class Health:
    """What look() saw before a restart (or the start)."""
    status: str
    threats: List[str]
    others: List[str]  # check codes
    own_crashes: List[Crash]  # the session's, excused or not (others' crashes beside them)

    def blockers(self, force: bool) -> List[str]:
        if self.others and not force:
            return self.threats + [f'cluster health is {self.status} '
                                   f'({", ".join(self.others)}) and --force was not given']
        return list(self.threats)


# OSD map flags under which a restart is unsafe, --force or not: an OSD
# restarted under noup is never marked up again, and under nodown one that
# dies is not marked down, so its PGs wait on it
RESTART_FLAGS = ('noup', 'nodown')


def flag_threats(cluster: Cluster) -> List[str]:
    """noup or nodown set on the cluster, an OSD, a CRUSH node or a device class."""
    out = [f'the cluster has {f} set' for f in cluster.osdmap_flags() if f in RESTART_FLAGS]
    flagged = [f'{who} has {", ".join(bad)} set'
               for who, flags in sorted(cluster.osd_flags().items())
               if (bad := [f for f in flags if f in RESTART_FLAGS])]
    return out + at_most(flagged, 'OSDs or CRUSH nodes')


def data_threats(cluster: Cluster) -> List[str]:
    """What blocks a restart, --force or not: an OSD down, PGs not active+clean, noup/nodown."""
    with cluster.one_view():  # the OSD map, which each check reads, read once
        threats = osds_are([i.id for i in cluster.osd_states().values() if not i.up], 'down')
        if not cluster.pgs_active_clean():
            threats.append('not all PGs are active+clean')
        return threats + flag_threats(cluster)


def look(cluster: Cluster, osd: Optional[int],
         own_crash: Callable[[Crash], bool] = lambda crash: False) -> Health:
    """The health policy: what threatens data blocks a restart, --force or not;
    others' checks only without --force, but not an admin's noout on the
    canary `osd` (None: not chosen yet) nor the job's own crashes (`own_crash`)."""
    with cluster.one_view():  # the OSD map, which each check reads, read once
        status, checks = cluster.health()
        others = [c for c in checks if not c.startswith(HEALTH_PREFIX)]  # raised by others
        threats = data_threats(cluster)
        if 'OSD_FLAGS' in others and osd is not None and \
                cluster.osd_flags() == {f'osd.{osd}': ['noout']}:
            # an admin's noout on the canary (the session's own is cleared
            # before this look) asks for what the session wants anyway
            others.remove('OSD_FLAGS')
    own: List[Crash] = []
    if 'RECENT_CRASH' in others:
        try:
            crashes = cluster.recent_crashes()
        except ClusterError:
            crashes = []  # unknown: the check stands
        own = [c for c in crashes if own_crash(c)]
        if crashes and len(own) == len(crashes):
            others.remove('RECENT_CRASH')
    return Health(status, threats, others, own)


def restart_blockers(cluster: Cluster, osd: int, single_copy_ok: bool = False,
                     together: Sequence[int] = ()) -> List[str]:
    """The safety gate of every restart: why restarting `osd` now (with its
    batch, `together`) could hurt; empty: it may.  An OSD down may always restart."""
    with cluster.one_view():  # the OSD map, which each check reads, read once
        osds = cluster.osd_states()
        batch = [osd, *together]
        if not any(i in osds and osds[i].up for i in batch):
            return []
        who = f'osd.{osd}' if not together else osd_list(batch) + ' together'
        reasons = osds_are([i.id for i in osds.values() if i.id not in batch and not i.up],
                           'down')
        inactive = cluster.inactive_pgs()
        if inactive:
            reasons.append(f'{inactive} PG(s) are inactive')
        reasons += flag_threats(cluster)
        if not single_copy_ok:
            thin = next(filter(None, thin_pools_of(cluster, batch, batch).values()), [])
            if thin:
                reasons.append(f'restarting {who} leaves ' + '; '.join(thin))
        ok, why = cluster.ok_to_stop(*batch)
        if not ok:
            reasons.append(f'ceph osd ok-to-stop {who} says no: {why}')
        return reasons


def thin_pools(cluster: Cluster, osd: int) -> List[str]:
    """Lines for the pools where restarting `osd` leaves a PG with fewer than two copies."""
    return thin_pools_of(cluster, [osd])[osd]


def thin_pools_of(cluster: Cluster, osds: Iterable[int],
                  together: Collection[int] = ()) -> Dict[int, List[str]]:
    """thin_pools of each OSD, from one read of the PGs and pools; `together`:
    OSDs restarted with each (a batch), whose copies are gone with its own."""
    wanted = set(osds)
    pools = cluster.pool_states()
    # osd -> pool -> copies each of its PGs keeps while the OSD restarts
    left: Dict[int, Dict[int, List[int]]] = {osd: {} for osd in wanted}
    # only a pool whose layout leaves no copy to spare can leave a clean PG
    # thin: without one, the PG stats (a large read) are not needed
    layout_thin = {p.id for p in pools.values() if _thin(p, p.size - 1)}
    for pg in cluster.pgs() if layout_thin else []:
        if pg.pool not in layout_thin:
            continue
        for osd in wanted.intersection(pg.acting + pg.up):
            copies = len({o for o in pg.acting if o not in (osd, NO_OSD) and o not in together})
            if _thin(pools[pg.pool], copies):
                left[osd].setdefault(pg.pool, []).append(copies)
    return {osd: [_thin_line(pools[pid], kept) for pid, kept in sorted(by_pool.items())]
            for osd, by_pool in left.items()}


def _thin(p: PoolInfo, copies: int) -> bool:
    """A PG of this pool with `copies` left can lose none more (an erasure-coded
    one needs k shards), or (erasure-coded, min_size <= k) takes writes with none to spare."""
    return copies - (p.k if p.erasure else 1) < 1 or (p.erasure and p.min_size <= p.k)


def _thin_line(p: PoolInfo, kept: List[int]) -> str:
    if p.erasure:
        layout = f'erasure-coded k={p.k} m={p.m}, min_size {p.min_size}'
        what = ('with no shard to spare' if min(kept) <= p.k
                else 'taking writes with no shard to spare (min_size = k)')
    else:
        layout = f'replicated, size {p.size}, min_size {p.min_size}'
        what = 'on one copy' if min(kept) == 1 else 'with no copy'
    return f"pool '{p.name}' ({layout}): {len(kept)} PG(s) {what}"


def choose_canary(cluster: Cluster, params: Params) -> Tuple[int, str]:
    """Check that the session may start and pick its canary.  Changes nothing."""
    params.validate()
    osds = cluster.osds()
    # bad input first: the admin fixes a typo before waiting for the cluster
    if params.osd is not None and params.osd not in osds:
        raise StartRefused(f'osd.{params.osd} does not exist')
    blockers = look(cluster, params.osd).blockers(params.force)
    if blockers:
        raise StartRefused('; '.join(blockers))

    thin: Dict[int, List[str]] = {}

    def unusable(o: int) -> str:
        info = osds[o]
        if not info.up:
            return f'osd.{o} is down'
        if not info.in_:
            return f'osd.{o} is out'
        thin[o] = thin_pools(cluster, o)
        if thin[o] and not params.allow_single_copy:
            return f'restarting osd.{o} leaves ' + '; '.join(thin[o])
        ok, why = cluster.ok_to_stop(o)
        if not ok:
            return f'ceph osd ok-to-stop osd.{o} says no: {why}'
        return ''

    def refused(whys: List[str]) -> StartRefused:
        if any(thin.values()) and not params.allow_single_copy:  # what to do about it, once
            whys.append('pick an OSD outside these pools with --osd, give them more redundancy '
                        '(replicated: size 3; erasure-coded: m >= 2 and min_size > k), or pass '
                        '--allow-single-copy to accept it')
        return StartRefused('; '.join(whys))

    def allowed(o: int) -> str:
        return ('' if not thin.get(o) else
                '; --allow-single-copy: every restart of it leaves ' + '; '.join(thin[o]))

    if params.osd is not None:
        why = unusable(params.osd)
        if why:
            raise refused([why])
        return params.osd, f'osd.{params.osd} was asked for' + allowed(params.osd)
    # fastest device class first (that is where tuning pays), then the OSD
    # whose restarts disturb the fewest PGs
    rank = {'nvme': 0, 'ssd': 1, 'hdd': 2}
    order = sorted(osds.values(), key=lambda i: (rank.get(i.device_class, 3), i.num_pgs, i.id))
    skipped: List[str] = []
    for info in order:
        why = unusable(info.id)
        if not why:
            return info.id, (f'osd.{info.id} chosen: up and in, ok-to-stop, '
                             f'device class {info.device_class or "unknown"}, '
                             f'fewest PGs ({info.num_pgs}) among the fastest class'
                             + allowed(info.id)
                             + ''.join(f'; skipped: {w}' for w in at_most(skipped, 'OSDs')))
        skipped.append(why)
    raise refused(['no OSD can be the canary: ' + '; '.join(at_most(skipped, 'OSDs'))])
