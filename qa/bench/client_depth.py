#!/usr/bin/env python3
"""How fast the module's client load writes the canary's WAL, by
client_threads (its writes in flight): every steady window is bound by that
rate (a cycle is so many MiB of WAL).

On the bench's lab (4 OSDs, as the demo's; a pool of 64 PGs), each round
takes each setting in turn (interleaved, paired by round): set
client_threads, start a session on osd.0, wait until its preconditioning
writes 4 KiB at random (the fill done), count the canary's RocksDB WAL bytes
(rocksdb.wal.bytes), BlueFS's and its writes as primary over --seconds, then
abort the session (the canary restored).  Prints each window with the load
average, and each setting's WAL rate over the first setting's, by round.

    BENCH_LAB_DIR=/var/tmp/depth/lab BENCH_LAB_MON_PORT=21800 \\
        python3 qa/bench/client_depth.py [--threads 16,128,512] [--rounds 2] \\
        [--seconds 45] [--space-mib 1024] [--out F.jsonl]
"""
import argparse
import json
import os
import time
from typing import Any, Dict, List, Sequence

from benchlib import Lab, kv_counts, log, rocksdb_stats
from rocks_autotune.store import ENDED

POOL = 'depthbench'


def window(lab: Lab, threads: int, seconds: float, osd: int = 0) -> Dict[str, Any]:
    """One setting's window, in a session of its own (aborted after)."""
    lab.set_module_options({'client_threads': str(threads)})
    lab.ceph('rocks-autotune', 'start', '--osd', str(osd), '--trials', '3')
    lab.wait('the preconditioning\'s 4-KiB writes', lambda: (
        (lab.ceph_json('rocks-autotune', 'status').get('precondition') or {})
        .get('overwritten', 0) > 0), timeout=900)
    time.sleep(5)  # past the switch from the fill's writes
    kv0, p0, t0 = kv_counts(lab, osd), lab.perf_dump(osd), time.time()
    time.sleep(seconds)
    kv1, p1, t1 = kv_counts(lab, osd), lab.perf_dump(osd), time.time()
    phase = lab.ceph_json('rocks-autotune', 'status').get('phase')
    lab.ceph('rocks-autotune', 'abort')
    lab.wait('the session\'s end', lambda: lab.ceph_json(
        'rocks-autotune', 'status').get('state') in ENDED, timeout=600)
    t = t1 - t0
    wal = rocksdb_stats.delta(kv0, kv1).wal_bytes if kv0 and kv1 else 0

    def grew(section: str, name: str) -> float:
        return (p1[section][name] - p0[section][name]) / t
    return {'threads': threads, 'seconds': t, 'phase_after': phase,
            'rocksdb_wal_mib_s': wal / t / 2**20,
            'bluefs_wal_mib_s': grew('bluefs', 'bytes_written_wal') / 2**20,
            'primary_writes_s': grew('osd', 'op_w'), 'load': os.getloadavg()[0]}


def ratios(rows: Sequence[Dict[str, Any]]) -> List[str]:
    """Each round's WAL rates over its first setting's."""
    out = []
    for r in sorted({x['round'] for x in rows}):
        rs = [x for x in rows if x['round'] == r]
        base = rs[0]['rocksdb_wal_mib_s']
        out.append(f'round {r}: ' + ', '.join(
            f'{x["threads"]} {x["rocksdb_wal_mib_s"] / base:.2f}x' for x in rs if base))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--threads', default='16,128,512', help='client_threads settings, first: base')
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--seconds', type=float, default=45.0)
    ap.add_argument('--space-mib', type=int, default=1024, help='client_space')
    ap.add_argument('--out', default='', help='append each window as a JSON line')
    args = ap.parse_args()
    settings = [int(t) for t in args.threads.split(',')]
    lab = Lab()
    log(f'lab up (4 OSDs) in {lab.dir}')
    lab.lab('up', '--osds', '4')
    if POOL not in lab.ceph('osd', 'pool', 'ls').split():
        lab.ceph('osd', 'pool', 'create', POOL, '64', '64', 'replicated')
        lab.ceph('osd', 'pool', 'application', 'enable', POOL, 'rbd')
    was = lab.set_module_options({'client_pool': POOL, 'client_space': str(args.space_mib << 20),
                                  'precondition_limit': '1800', 'client_threads': '16'})
    rows: List[Dict[str, Any]] = []
    try:
        for r in range(1, args.rounds + 1):
            for threads in settings:
                row = dict(window(lab, threads, args.seconds), round=r)
                log(f'round {r}, client_threads {threads}: RocksDB WAL '
                    f'{row["rocksdb_wal_mib_s"]:.2f} MiB/s, BlueFS WAL '
                    f'{row["bluefs_wal_mib_s"]:.2f} MiB/s, {row["primary_writes_s"]:.0f} '
                    f'primary writes/s, load {row["load"]:.1f}')
                rows.append(row)
                if args.out:
                    with open(args.out, 'a') as f:
                        f.write(json.dumps(row) + '\n')
    finally:
        lab.put_back_module_options(was)
    print('\n'.join(ratios(rows)))


if __name__ == '__main__':
    main()
