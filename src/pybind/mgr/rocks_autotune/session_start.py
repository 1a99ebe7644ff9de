"""What a session starts with: start's checks, its first record (the canary's
originals), the rescue record; reads the cluster, changes nothing.
Design: doc/dev/internals.rst, dev-internals-session-start."""
import uuid
from dataclasses import replace
from typing import Any, Dict, Optional, Sequence, Tuple

from . import measurement_plan
from .canary import ANNEX, CFS, OPTIONS, Canary
from .canary_record import CanaryRecord
from .cluster import Cluster, ClusterError, PgInfo, PoolInfo
from .gate import choose_canary
from .session_settings import Params, Settings, StartRefused
from .measurement_plan import SEQUENTIAL, SPLIT, MeasurementPlan
from .rocksdb_options import parse_options, parse_sharding
from .space import SearchSpace
from .store import SessionState, StartRecord
from .workload import CLIENT, ClientRecord, client_pool, sample, split_refusal, up_osds


def first_state(cluster: Cluster, params: Params, settings: Settings,
                now: float) -> SessionState:
    """A new session's record, after the start's checks; sets params.osd to
    the canary chosen."""
    if settings.wear and params.workload != CLIENT:
        # only the client load preconditions the DB and drives it through
        # steady windows; osd bench writes below the PG layer, live at
        # whatever rate the cluster has
        raise StartRefused(f'the wear objective needs the client workload, which '
                           f'writes the DB into a steady state and measures its write-amp '
                           f'there, not {params.workload}: use --workload client or '
                           '--objective iops')
    osd, reason = choose_canary(cluster, params)
    canary, originals, base, annexed = read_canary(cluster, osd)
    # what differs by release is read from the cluster, not assumed
    release_default = cluster.option_default('bluestore_rocksdb_options')
    sharding = cluster.config_get(f'osd.{osd}', CFS)
    try:
        # the warm start and the memtable cap read it as a candidate
        SearchSpace.candidate_from_options(parse_options(release_default))
        parse_sharding(sharding)
    except ValueError as e:
        raise StartRefused(f'cannot read this release\'s RocksDB defaults: {e}')
    if params.workload != CLIENT and settings.measurement_design == SPLIT:
        raise StartRefused(f'measurement_design split needs the client workload, not '
                           f'{params.workload}: set it to auto or sequential')
    client = client_record(cluster, osd, settings) if params.workload == CLIENT else None
    params.osd = osd
    return SessionState(
        id=str(uuid.uuid4()), params=replace(params), reason=reason, originals=originals,
        base_options=base, annexed=annexed, release_default=release_default, sharding=sharding,
        seed=settings.seed, started=now, settings=replace(settings),
        noout_at_start=cluster.has_noout(osd), client_pool=client.pool if client else None,
        state='running', phase='prepare', phase_started=now, message='starting',
        canary=CanaryRecord(originals, annexed, canary.entries()),
        plan=measurement_plan.plan_for(client), client=client)


def client_record(cluster: Cluster, osd: int, settings: Settings) -> ClientRecord:
    """The client load's record, after the checks that it has somewhere to
    write, room, and quota there."""
    pgs = cluster.pgs()
    try:
        pool, seeds, without = client_pool(cluster.pools(), pgs, [osd],
                                           settings.client_pool)
    except ValueError as e:
        raise StartRefused(f'the client workload has nowhere to write: {e}; name a '
                           'pool with the client_pool option, or use --workload osd-bench')
    count = settings.client_space // settings.client_object_size
    split = design_of(cluster, osd, pool, pgs, without, count, settings)
    if pool.room is not None and settings.client_space > pool.room:
        raise StartRefused(
            f'the client workload\'s keyspace (client_space, '
            f'{settings.client_space / 2**30:.2f} GiB) would take pool {pool.name!r}\'s '
            f'fullest OSD past its nearfull ratio: the pool has room for '
            f'{pool.room / 2**30:.2f} GiB (ceph df\'s MAX AVAIL, to nearfull); lower '
            'client_space or name a pool with more room with client_pool')
    full = over_quota(pool, settings.client_space, count)
    if full:
        raise StartRefused(
            f'the client workload\'s keyspace ({count} objects, client_space '
            f'{settings.client_space / 2**30:.2f} GiB) would fill pool {pool.name!r} to its '
            f'quota, and a full pool stops every client\'s writes to it: {full}; lower '
            'client_space or name another pool with client_pool')
    return ClientRecord(pool.name, pool.pg_num, sample(seeds), count, **split)


def read_canary(cluster: Cluster, osd: int) -> Tuple[Canary, Dict[str, Any], str, bool]:
    """The canary, its originals (how to restore it), the options it runs
    and whether it has an annex."""
    canary = Canary(cluster, osd)
    originals = canary.snapshot()
    try:
        base = canary.running_base()
    except ValueError as e:
        raise StartRefused(f'osd.{osd} runs RocksDB options this module cannot parse: {e}')
    return canary, originals, base, bool(cluster.config_get(f'osd.{osd}', ANNEX).strip())


def over_quota(pool: PoolInfo, space: int, objects: int) -> str:
    """Why `objects` objects of `space` bytes would not fit under the pool's
    quotas ('' when they would)."""
    if pool.quota_bytes is not None and space > pool.quota_bytes:
        return f'its quota leaves {pool.quota_bytes / 2**30:.2f} GiB (ceph osd pool get-quota)'
    if pool.quota_objects is not None and objects > pool.quota_objects:
        return f'its quota leaves {pool.quota_objects} objects (ceph osd pool get-quota)'
    return ''


def design_of(cluster: Cluster, osd: int, pool: PoolInfo, pgs: Sequence[PgInfo],
              without: Sequence[int], count: int, settings: Settings) -> Dict[str, Any]:
    """The client load's measurement design (ClientRecord fields): split
    where the pool has room and PGs without the canary (unless sequential is
    asked for), else sequential; for a split, group R's PGs, their OSD count
    and whether one shares the canary's CRUSH host (C/R then reads C's
    effect minus R's: doc/bench/split-ab-rocksdb.md).  StartRefused when
    split is asked for and cannot be made."""
    wanted = settings.measurement_design
    if wanted == SEQUENTIAL:
        return {'design': SEQUENTIAL, 'design_why': 'measurement_design is sequential'}
    ref = sample(without)
    why_not = split_refusal(ref, pool.pg_num, count)
    if not why_not and pool.room is not None and 2 * settings.client_space > pool.room:
        why_not = (f'its room ({pool.room / 2**30:.2f} GiB to nearfull) does not take two '
                   f'keyspaces of client_space')
    full = '' if why_not else over_quota(pool, 2 * settings.client_space, 2 * count)
    if full:
        why_not = f'{full}: not two keyspaces of client_space'
    if why_not:
        if wanted == SPLIT:
            raise StartRefused(f'measurement_design split: pool {pool.name!r} cannot hold a '
                               f'reference group: {why_not}; name another pool with '
                               'client_pool, or set measurement_design to auto or sequential')
        return {'design': SEQUENTIAL, 'design_why': f'pool {pool.name!r}: {why_not}'}
    ref_osds = up_osds(pgs, pool.id, ref)
    hosts = dict(cluster.crush_order())
    shared = bool(hosts.get(osd)) and any(hosts.get(o) == hosts[osd] for o in ref_osds)
    return {'design': SPLIT, 'ref_seeds': ref, 'ref_osds': len(ref_osds),
            'shared_host': shared,
            'design_why': (f'pool {pool.name!r} has {len(without)} of its {pool.pg_num} PGs '
                           f'without osd.{osd}' + (' (measurement_design is split)'
                                                   if wanted == SPLIT else ''))}


def check_running(cluster: Cluster, osd: int) -> None:
    """The canary runs the options the monitors give it (its baseline)."""
    given = cluster.config_get(f'osd.{osd}', OPTIONS)
    try:
        running: Optional[str] = cluster.config_get_running(osd, OPTIONS)
    except ClusterError:
        running = None  # it did not answer: the restarts will tell
    if running is not None and running != given:
        raise StartRefused(
            f'osd.{osd} runs bluestore_rocksdb_options {running!r}, not the {given!r} the '
            'monitors give it: it has not restarted since they changed, or they are set '
            'at a class mask (osd/class:<class>), which an OSD does not read when it opens '
            'BlueStore (seen on Tentacle 20.2.4; Ceph tracker 65228); restart it, or set '
            f'the options at osd.{osd}, then start again')


def rescue_state(start: StartRecord, why: str, now: float) -> SessionState:
    """The record of a session whose state is unreadable but whose start
    record is not: it restores the canary (config, the gated restart, the
    noout it may have set) and ends failed."""
    pool = start.client_pool
    return SessionState(
        **vars(start), state='running', phase='restore', phase_started=now,
        message='restoring the canary: ' + why, error=why, abort=True,
        # the client load's objects go too (the pool is all a rescue knows of them)
        client=None if pool is None else ClientRecord(pool, 0, [], None),
        plan=MeasurementPlan(SEQUENTIAL),
        # what was there is lost with the state: it may run a candidate,
        # under the noout it set
        canary=CanaryRecord(start.originals, start.annexed, None,
                            noout_ours=not start.noout_at_start, running_dirty=True))
