#!/usr/bin/env python3
"""The client load's own noise: the same options against themselves (A/A).

A bench, not a test.  Measures what a session's window would under the
client workload (workload.ClientWorkload over librados, the objects a
session writes, in the canary's PGs): per round, two arms in a random order,
each a restart of the canary through the orchestrator, a warm-up and a
window of the load; both arms run the same options, so every ratio between
them is noise.  Prints per round each arm's IOPS and RocksDB WAL bytes, then
the standard deviation of the paired log ratio of IOPS (what the
confirmation's interval is built from), the effect a 5-round confirmation
could detect at that noise, and the load average beside each figure.

Run it inside the lab's release (librados must match the cluster):

    qa/lab/ceph-lab exec -- python3 qa/bench/client_aa.py --osd 1 --rounds 6

It sets the RocksDB statistics options at osd.N (as a session does), writes
the keyspace once first (--precondition bytes), and removes its objects and
options at the end (the OSD keeps running what it was last restarted with).
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsm_timeline import ClientLoad, restart, sample  # noqa: E402

from rocks_autotune import rocksdb_stats  # noqa: E402
from rocks_autotune.workload import ClientWorkload  # noqa: E402


def window(load: ClientWorkload, osd: int, warmup: float, seconds: float) -> Dict[str, Any]:
    end = time.time() + warmup
    while time.time() < end:
        load.drive(end - time.time(), None)
    before = sample(osd)
    nbytes, secs = 0, 0.0
    end = time.time() + seconds
    while time.time() < end:
        b, s = load.drive(end - time.time(), None)
        nbytes += b
        secs += s
    d = rocksdb_stats.delta(rocksdb_stats.counts(before), rocksdb_stats.counts(sample(osd)))
    return {'iops': nbytes / load.block_size / secs, 'wal_mib': d.wal_bytes / 2**20,
            'flushes': d.flushes, 'compactions': d.compactions,
            'load': round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--osd', type=int, default=1)
    ap.add_argument('--rounds', type=int, default=6)
    ap.add_argument('--warmup', type=float, default=10)
    ap.add_argument('--window', type=float, default=20)
    ap.add_argument('--space', type=int, default=1 << 30)
    ap.add_argument('--object-size', type=int, default=1 << 20)
    ap.add_argument('--threads', type=int, default=16)
    ap.add_argument('--precondition', type=int, default=1 << 30,
                    help='bytes written once before the first round')
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    osd = a.osd
    rng = random.Random(a.seed)
    rows: List[Dict[str, Any]] = []
    with ClientLoad(osd, f'aa{int(time.time())}', a.space, a.object_size, a.threads,
                    seed=a.seed) as cl:
        restart(osd)
        written = 0
        while written < a.precondition:
            written += cl.load.drive(5.0, None)[0]
        for rnd in range(a.rounds):
            arms = ['A', "A'"]
            rng.shuffle(arms)
            for arm in arms:
                restart(osd)
                rows.append(dict(window(cl.load, osd, a.warmup, a.window), round=rnd, arm=arm))
                print(json.dumps(rows[-1]), flush=True)
    logs = []
    for rnd in range(a.rounds):
        got = {x['arm']: x['iops'] for x in rows if x['round'] == rnd}
        logs.append(math.log(got["A'"] / got['A']))
    sd = statistics.stdev(logs) if len(logs) > 1 else float('nan')
    # a 5-round confirmation recommends only a candidate that beat the baseline
    # in every round by the 3% margin: at sd, an effect of about margin + 2 sd
    # passes a round 98% of the time, so 5 rounds about 9 times in 10
    print(json.dumps({'summary': {
        'rounds': a.rounds, 'window_s': a.window, 'warmup_s': a.warmup,
        'sd_log_iops_ratio': round(sd, 4),
        'median_iops': round(statistics.median(x['iops'] for x in rows)),
        'detectable_effect_5_rounds': round(math.exp(math.log1p(0.03) + 2 * sd) - 1, 3),
        'load_avg': [x['load'] for x in rows]}}), flush=True)


if __name__ == '__main__':
    main()
