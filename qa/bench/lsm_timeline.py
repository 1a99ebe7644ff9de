#!/usr/bin/env python3
"""How a canary's LSM moves under the session's client load: a bench, not a test.

Runs the module's own client load (workload.ClientWorkload over librados,
the same objects a session would write) against one OSD of a lab for a
while, and every --sample seconds prints what RocksDB says
(rocksdb_stats.parse of `dump_objectstore_kv_stats`): bytes to the WAL,
flushed and compacted, and per column family its flushes (L0's count),
compactions below L0 and level shape.  It answers how long a window must be
for the busiest column family to go through an L0 compaction under given
options, and what preconditioning leaves behind.

Run it inside the lab's release (librados must match the cluster):

    qa/lab/ceph-lab exec -- python3 qa/bench/lsm_timeline.py --osd 1 --seconds 1200

It sets the three statistics options (and --options, if given) at osd.N,
restarts it through the orchestrator, and at the end removes its objects
and what it set (the OSD keeps running what it was restarted with unless
--restore restarts it again).  Prints JSON lines, then a summary.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'src', 'pybind', 'mgr'))

from benchlib import parse_fio  # noqa: E402
from rocks_autotune import rocksdb_stats  # noqa: E402
from rocks_autotune.canary import OPTIONS, STATS_OPTIONS  # noqa: E402
from rocks_autotune.cluster import PgInfo, PoolInfo, RadosIo  # noqa: E402
from rocks_autotune.workload import (CLEANUP_SECONDS, NAMESPACE, ClientWorkload,  # noqa: E402
                                     client_objects, client_pool)


def ceph(*args: str) -> str:
    return subprocess.run(['ceph', *args], check=True, text=True, capture_output=True,
                          timeout=300).stdout


def ceph_json(*args: str) -> Any:
    return json.loads(ceph(*args, '-f', 'json'))


def wait_up(osd: int, since: int, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        o = [x for x in ceph_json('osd', 'dump')['osds'] if x['osd'] == osd][0]
        st = ceph_json('pg', 'stat')
        s = st.get('pg_summary', st)
        clean = sum(x['num'] for x in s.get('num_pg_by_state', [])
                    if x['name'] == 'active+clean')
        if o['up'] and o['up_from'] > since and clean == s.get('num_pgs'):
            return
        time.sleep(2)
    raise SystemExit(f'osd.{osd} did not come back clean in {timeout:.0f}s')


def restart(osd: int) -> None:
    since = [x for x in ceph_json('osd', 'dump')['osds'] if x['osd'] == osd][0]['up_from']
    ceph('orch', 'daemon', 'restart', f'osd.{osd}')
    wait_up(osd, since)


def cluster_layout() -> Any:
    dump = ceph_json('osd', 'dump')
    pools = {p['pool']: PoolInfo(id=p['pool'], name=p['pool_name'], size=p['size'],
                                 min_size=p['min_size'], erasure=p.get('type') == 3,
                                 pg_num=p['pg_num']) for p in dump['pools']}
    brief = ceph_json('pg', 'dump', 'pgs_brief')
    brief = brief.get('pg_stats', brief) if isinstance(brief, dict) else brief
    pgs = [PgInfo(pgid=p['pgid'], pool=int(p['pgid'].split('.')[0]), acting=p['acting'],
                  up=p['up']) for p in brief]
    return pools, pgs


class ClientLoad:
    """The session's client load on one OSD, for a bench: RocksDB's statistics
    options (and `options`) set at osd.N (and at each of `also`), the objects
    a session would write (objects() says which); on exit the objects removed
    (`removed`: how many) and the options too."""

    def __init__(self, osd: int, prefix: str, space: int, object_size: int, threads: int,
                 pool: str = '', seed: int = 0, options: Optional[Dict[str, str]] = None,
                 also: Sequence[int] = ()) -> None:
        self.osd = osd
        self.osds = [osd] + [o for o in also if o != osd]
        self.prefix = prefix
        self.space = space
        self.object_size = object_size
        self.threads = threads
        self.wanted_pool = pool
        self.seed = seed
        self.options = dict({n: 'true' for n in STATS_OPTIONS}, **(options or {}))
        self.removed = 0

    def __enter__(self) -> 'ClientLoad':
        import rados
        for osd in self.osds:
            for name, value in self.options.items():
                ceph('config', 'set', f'osd.{osd}', name, value)
        pools, pgs = cluster_layout()
        names = self.objects(pools, pgs)
        self.rados = rados.Rados(conffile=os.environ.get('CEPH_CONF', ''))
        self.rados.connect()
        self.ioctx = self.rados.open_ioctx(self.pool.name)
        self.ioctx.set_namespace(NAMESPACE)
        self.load = ClientWorkload(RadosIo(self.ioctx, self.pool.name, NAMESPACE), names,
                                   self.object_size, threads=self.threads, seed=self.seed)
        return self

    def objects(self, pools: Dict[int, PoolInfo], pgs: List[PgInfo]) -> List[str]:
        """The objects a session would write (sets `pool` and `seeds`, the
        PGs of it the objects are in): in the PGs of the pool osd.N serves."""
        self.pool, self.seeds, _ = client_pool(pools, pgs, [self.osd], self.wanted_pool)
        return client_objects(self.prefix, self.space // self.object_size,
                              self.pool.pg_num, self.seeds)

    def __exit__(self, *exc: Any) -> None:
        try:
            self.removed = self.load.cleanup(CLEANUP_SECONDS)[0]
        finally:
            self.ioctx.close()
            self.rados.shutdown()
            for osd in self.osds:
                for name in self.options:
                    ceph('config', 'rm', f'osd.{osd}', name)


def sample(osd: int) -> rocksdb_stats.KvStats:
    return rocksdb_stats.parse(ceph('tell', f'osd.{osd}', 'dump_objectstore_kv_stats'))


def row(t: float, kv: rocksdb_stats.KvStats, start: rocksdb_stats.KvStats,
        nbytes: int, secs: float) -> Dict[str, Any]:
    before, now = rocksdb_stats.counts(start), rocksdb_stats.counts(kv)
    per_cf = {}
    for cf in sorted(kv.levels):
        d = rocksdb_stats.delta({'t': {}, 'c': {cf: before['c'].get(cf, [0, 0])}},
                                {'t': {}, 'c': {cf: now['c'][cf]}})
        per_cf[cf] = {'flushes': d.flushes, 'compactions': d.compactions,
                      'shape': kv.shape().get(cf, [])}
    d = rocksdb_stats.delta(before, now)
    return {'t': round(t, 1), 'client_mib': round(nbytes / 2**20, 1),
            'iops': round(nbytes / 4096 / secs) if secs else None,
            'wal_mib': round(d.wal_bytes / 2**20, 1),
            'flush_mib': round(d.flush_bytes / 2**20, 1),
            'compaction_mib': round(d.compaction_bytes / 2**20, 1),
            'busiest_cf': d.busiest_cf, 'busiest_flushes': d.flushes,
            'busiest_compactions': d.compactions, 'cfs': per_cf,
            'load': round(os.getloadavg()[0], 2)}


def fio_chunk(pool: str, image: str, seconds: float) -> Tuple[int, float]:
    """fio's rbd engine (4 KiB random overwrites, 16 in flight) on an image
    for `seconds`: bytes written and seconds taken."""
    out = subprocess.run(['fio', '--name=lsm', '--ioengine=rbd', '--clientname=admin',
                          f'--pool={pool}', f'--rbdname={image}', '--rw=randwrite',
                          '--bs=4k', '--iodepth=16', '--numjobs=1', '--time_based',
                          f'--runtime={max(1, int(round(seconds)))}',
                          '--output-format=json'],
                         check=True, text=True, capture_output=True,
                         timeout=seconds * 3 + 120).stdout
    r = parse_fio(out)
    return int(r['writes']) * 4096, r['seconds']


def per_byte(path: str) -> None:
    """Each sample of a run's output: the bytes RocksDB wrote to its WAL,
    flushed and compacted per client byte written since the sample before
    (client bytes: what the load wrote, all of which lands on the OSD)."""
    print(f'{path}:')
    print(f'{"t s":>7} {"writes/s":>9} {"WAL":>6} {"flush":>6} {"compact":>7} '
          f'{"busiest":>8} {"L1 MiB":>7} {"load":>5}')
    prev: Optional[Dict[str, Any]] = None
    for line in open(path):
        r = json.loads(line)
        if 't' not in r:
            continue
        if prev is not None and r['client_mib'] > prev['client_mib']:
            c = r['client_mib'] - prev['client_mib']
            cf = r['cfs'].get(r['busiest_cf'] or '', {})
            l1 = sum(size for n, _, size in cf.get('shape', []) if n == 1) / 2**20
            print(f'{r["t"]:7.0f} {r["iops"]:9.0f} '
                  f'{(r["wal_mib"] - prev["wal_mib"]) / c:6.3f} '
                  f'{(r["flush_mib"] - prev["flush_mib"]) / c:6.3f} '
                  f'{(r["compaction_mib"] - prev["compaction_mib"]) / c:7.3f} '
                  f'{r["busiest_cf"] or "-":>8} {l1:7.2f} {r["load"]:5.1f}')
        prev = r


def fill_all(load: ClientWorkload) -> Dict[str, Any]:
    """The session's first preconditioning pass, whole: every object end to end."""
    t, filled, nbytes = time.time(), 0, 0
    while filled < load.object_count:
        filled, b, _ = load.fill(filled, 60.0)
        nbytes += b
    return {'filled': filled, 'fill_mib': nbytes >> 20, 'fill_seconds': round(time.time() - t, 1)}


def overwrite_all(load: ClientWorkload) -> Dict[str, Any]:
    """Its second pass, whole: every 4 KiB block overwritten once."""
    t, done = time.time(), 0
    while done < load.block_count:
        done, _, _ = load.overwrite(done, 60.0)
    return {'overwritten': done, 'overwrite_seconds': round(time.time() - t, 1),
            'load': round(os.getloadavg()[0], 2)}


def drive_until(load: ClientWorkload, end: float) -> Tuple[int, float]:
    """The load, chunk after chunk, until `end` (time.time()): bytes written
    and time spent writing."""
    nbytes, secs = 0, 0.0
    while time.time() < end:
        b, s = load.drive(end - time.time(), None)
        nbytes += b
        secs += s
    return nbytes, secs


def write_once(load: ClientWorkload, fill: bool,
               nbytes: int) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Before the first round: the session's two passes if `fill`, then
    `nbytes` of the load; what each wrote (the passes' record, {} without)."""
    passes = dict(fill_all(load), **overwrite_all(load)) if fill else {}
    written, t = 0, time.time()
    while written < nbytes:
        written += load.drive(5.0, None)[0]
    return passes, {'precondition_mib': written >> 20, 'seconds': round(time.time() - t),
                    'load': round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--osd', type=int, default=1)
    ap.add_argument('--seconds', type=float, default=600)
    ap.add_argument('--sample', type=float, default=30)
    ap.add_argument('--options', default='', help='bluestore_rocksdb_options for the run')
    ap.add_argument('--space', type=int, default=1 << 30)
    ap.add_argument('--object-size', type=int, default=1 << 20)
    ap.add_argument('--threads', type=int, default=16)
    ap.add_argument('--pool', default='')
    ap.add_argument('--fill', action='store_true',
                    help='write every object end to end first (the first pass of a '
                         'session\'s preconditioning)')
    ap.add_argument('--overwrite', action='store_true',
                    help='then overwrite every 4 KiB block once, in the session\'s '
                         'scattered order (its second pass)')
    ap.add_argument('--per-byte', nargs='+', metavar='JSONL',
                    help='no lab: per sample of these runs\' output, the WAL, flush and '
                         'compaction bytes per client byte since the sample before')
    ap.add_argument('--fio-image', default='',
                    help='drive fio\'s rbd engine on this image of --pool (made and '
                         'filled by the caller) instead of the session\'s load')
    ap.add_argument('--restore', action='store_true', help='restart the OSD at the end')
    a = ap.parse_args()
    if a.per_byte:
        for path in a.per_byte:
            per_byte(path)
        return
    osd = a.osd
    with ClientLoad(osd, f'lsm{int(time.time())}', a.space, a.object_size, a.threads,
                    a.pool, options={OPTIONS: a.options} if a.options else None) as cl:
        restart(osd)
        load = cl.load
        fio = (lambda n: fio_chunk(cl.pool.name, a.fio_image, n)) if a.fio_image else None
        print(json.dumps({'osd': osd, 'pool': cl.pool.name,
                          'load': f'fio rbd {a.fio_image}' if fio else 'session',
                          'objects': 0 if fio else len(load.objects),
                          'pgs_of_canary': len(cl.seeds), 'options': ceph(
                              'config', 'get', f'osd.{osd}', OPTIONS).strip()}), flush=True)
        if a.fill and not fio:
            print(json.dumps(fill_all(load)), flush=True)
        if a.overwrite and not fio:
            print(json.dumps(overwrite_all(load)), flush=True)
        start = sample(osd)
        t0 = time.time()
        nbytes, secs = 0, 0.0
        rows: List[Dict[str, Any]] = []
        next_sample = a.sample
        while time.time() - t0 < a.seconds:
            left = a.seconds - (time.time() - t0)
            b, s = fio(min(a.sample, left)) if fio else load.drive(min(5.0, left), None)
            nbytes += b
            secs += s
            if time.time() - t0 >= next_sample:
                rows.append(row(time.time() - t0, sample(osd), start, nbytes, secs))
                print(json.dumps(rows[-1]), flush=True)
                next_sample += a.sample
    removed = cl.removed
    if a.restore:
        restart(osd)
    first: Optional[Dict[str, Any]] = next((x for x in rows if x['busiest_compactions']), None)
    print(json.dumps({'summary': {
        'seconds': round(time.time() - t0), 'removed': removed,
        'first_busiest_compaction_at': first['t'] if first else None,
        'final': rows[-1] if rows else None}}), flush=True)


if __name__ == '__main__':
    main()
