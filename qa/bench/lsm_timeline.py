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
import time
from typing import Any, Dict, List, Optional, Tuple

from benchlib import (ClientLoad, ceph, fill_all, overwrite_all, parse_fio, restart,
                      sample)
from rocks_autotune import rocksdb_stats
from rocks_autotune.canary import OPTIONS


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
