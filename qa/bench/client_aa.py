#!/usr/bin/env python3
"""The client load's own noise: the same options against themselves (A/A).

A bench, not a test.  Measures what a session's window would under the
client workload (workload.ClientWorkload over librados, the objects a
session writes, in the canary's PGs): per round, two arms in a random order,
each a restart of the canary through the orchestrator, a warm-up and a
window of the load; both arms run the same options, so every ratio between
them is noise.  Prints per round each arm's IOPS and RocksDB's WAL, flush
and compaction bytes per client byte, then the standard deviation of the
paired log ratio of IOPS (what the confirmation's interval is built from),
the effect a 5-round confirmation could detect at that noise, the same
deviation of write-amp over the rounds where both windows saw a compaction
below L0, and the load average beside each figure.

Run it inside the lab's release (librados must match the cluster):

    qa/lab/ceph-lab exec -- python3 qa/bench/client_aa.py --osd 1 --rounds 6

It sets the RocksDB statistics options (and --options) at osd.N, as a
session does; writes the keyspace first (--fill: the session's two passes;
--precondition: bytes of random writes), and removes its objects and options
at the end (the OSD keeps running what it was last restarted with).  A
steady-state A/A of write-amp under options that compact within a window:

    qa/lab/ceph-lab exec -- python3 qa/bench/client_aa.py --osd 1 --rounds 6 \
      --space 4294967296 --object-size 4194304 --fill --precondition 0 \
      --options "<tiny>" --window 180

With --trace S each arm is instead S seconds of the load right after the
restart, read in --chunk slices (bytes, time, and the OSD's kv_sync and
commit latency counters at each slice's end), so that the A/A noise of any
warm-up and window that fit in S is computed from the same restarts, paired
by round: which part of the noise is the restart's (it falls as the
warm-up grows) and which the window's (it falls as the window grows).

    qa/lab/ceph-lab exec -- python3 qa/bench/client_aa.py --osd 1 --rounds 12 \
      --trace 100 > trace.jsonl
    python3 qa/bench/client_aa.py --grid trace.jsonl
"""
import argparse
import json
import math
import os
import random
import statistics
import time
from typing import Any, Dict, List, Optional, Tuple

from benchlib import ClientLoad, ceph_json, drive_until, restart, sample, write_once
from rocks_autotune import rocksdb_stats
from rocks_autotune.canary import OPTIONS
from rocks_autotune.workload import ClientWorkload

# BlueStore latencies a --trace reads at every slice (the names it may have
# by release: Tentacle's txc_commit_lat is older releases' commit_lat)
TRACED = {'kv_sync_lat': ('kv_sync_lat',), 'commit_lat': ('txc_commit_lat', 'commit_lat')}


def window(load: ClientWorkload, osd: int, warmup: float, seconds: float) -> Dict[str, Any]:
    drive_until(load, time.time() + warmup)
    before = sample(osd)
    nbytes, secs = drive_until(load, time.time() + seconds)
    d = rocksdb_stats.delta(rocksdb_stats.counts(before), rocksdb_stats.counts(sample(osd)))
    # RocksDB's own bytes per client byte (every write lands on the OSD):
    # WAL, flush and compaction apart, and their sum, the write-amp compared
    return {'iops': nbytes / load.block_size / secs, 'wal_mib': d.wal_bytes / 2**20,
            'wal': d.wal_bytes / nbytes, 'flush': d.flush_bytes / nbytes,
            'compaction': d.compaction_bytes / nbytes,
            'write_amp': (d.wal_bytes + d.flush_bytes + d.compaction_bytes) / nbytes,
            'flushes': d.flushes, 'compactions': d.compactions,
            'load': round(os.getloadavg()[0], 2)}


def counters(osd: int) -> Dict[str, Any]:
    """The OSD's BlueStore latency counters now (sum and count)."""
    dump = ceph_json('tell', f'osd.{osd}', 'perf', 'dump', 'bluestore')['bluestore']
    out = {}
    for fig, names in TRACED.items():
        c = next(dump[n] for n in names if n in dump)
        out[fig] = [c['sum'], c['avgcount']]
    return out


def trace(load: ClientWorkload, osd: int, seconds: float, chunk: float) -> Dict[str, Any]:
    """`seconds` of the load from just after a restart, in `chunk` slices:
    each slice's end (seconds since the trace began), bytes, time writing,
    and the cumulative latency counters at its end."""
    t0 = time.time()
    slices: List[Dict[str, Any]] = [{'t': 0.0, 'bytes': 0, 'secs': 0.0, 'c': counters(osd)}]
    while time.time() - t0 < seconds:
        nbytes, secs = drive_until(load, min(t0 + seconds, time.time() + chunk))
        slices.append({'t': round(time.time() - t0, 2), 'bytes': nbytes, 'secs': round(secs, 3),
                       'c': counters(osd)})
    return {'trace': slices, 'load': round(os.getloadavg()[0], 2)}


def traced(row: Dict[str, Any], warmup: float, window: float, block: int = 4096
           ) -> Dict[str, Optional[float]]:
    """A trace's figures over the window [warmup, warmup + window]: the
    slices whose middle falls in it (a slice lasts --chunk and a little more,
    a perf dump's time, so the window's ends are within a slice of those
    asked): IOPS, and each traced latency's mean in ms."""
    sl = row['trace']
    inside = [i for i in range(1, len(sl))
              if warmup <= (sl[i - 1]['t'] + sl[i]['t']) / 2 <= warmup + window]
    if not inside:
        return {}
    first, last = inside[0], inside[-1]
    nbytes = sum(sl[i]['bytes'] for i in inside)
    secs = sum(sl[i]['secs'] for i in inside)
    out: Dict[str, Optional[float]] = {'iops': nbytes / block / secs if secs else None}
    for k in TRACED:
        (s0, n0), (s1, n1) = sl[first - 1]['c'][k], sl[last]['c'][k]
        out[k] = (s1 - s0) / (n1 - n0) * 1000.0 if n1 > n0 else None
    return out


def grid(path: str) -> None:
    """From a --trace run: per warm-up and window that fit in the trace, the
    sd over rounds of each figure's paired log ratio A'/A."""
    lines = [json.loads(x) for x in open(path) if x.strip()]
    rows = [r for r in lines if 'trace' in r]
    span = min(r['trace'][-1]['t'] for r in rows)
    rounds = sorted({r['round'] for r in rows})
    loads = [r['load'] for r in rows]
    print(f'{len(rounds)} rounds, {len(rows)} traces of {span:.0f} s; load average at the '
          f'traces\' ends {min(loads)}-{max(loads)} (median {statistics.median(loads)})\n')
    figs = ['iops'] + list(TRACED)
    print('| warm-up s | window s | ' + ' | '.join(f'sd {f}' for f in figs) + ' | rounds |')
    print('|---|---|' + '---|' * len(figs) + '---|')
    for warmup in (0, 10, 15, 20, 30, 45, 60, 90):
        for window in (10, 20, 30, 40, 60, 90):
            if warmup + window > span + 0.5:
                continue
            sds = []
            n = 0
            for f in figs:
                logs = []
                for rnd in rounds:
                    got = {r['arm']: traced(r, warmup, window).get(f)
                           for r in rows if r['round'] == rnd}
                    a, b = got.get('A'), got.get("A'")
                    if a and b:
                        logs.append(math.log(b / a))
                n = max(n, len(logs))
                sds.append(f'{statistics.stdev(logs):.4f}' if len(logs) > 1 else '-')
            print(f'| {warmup} | {window} | ' + ' | '.join(sds) + f' | {n} |')


def sd_of_log_ratio(rows: List[Dict[str, Any]], rounds: int, key: str,
                    steady_only: bool = False) -> Tuple[float, int]:
    """The standard deviation over rounds of log(A' / A) of `key`, and how
    many rounds fed it (steady_only: both windows saw a compaction below L0)."""
    logs = []
    for rnd in range(rounds):
        got = {x['arm']: x for x in rows if x['round'] == rnd}
        if len(got) < 2 or (steady_only and not all(x['compactions'] for x in got.values())):
            continue
        logs.append(math.log(got["A'"][key] / got['A'][key]))
    return (statistics.stdev(logs) if len(logs) > 1 else float('nan')), len(logs)


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
                    help='bytes of 4 KiB writes at random offsets written once before the '
                    'first round (after --fill\'s passes, if given)')
    ap.add_argument('--fill', action='store_true',
                    help='before the first round, the session\'s preconditioning passes: '
                    'every object written end to end, then every 4 KiB block overwritten once')
    ap.add_argument('--options', default='',
                    help='bluestore_rocksdb_options both arms run (default: the OSD\'s)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--trace', type=float, default=0,
                    help='each arm: this many seconds of the load after the restart, in '
                    '--chunk slices (instead of --warmup and --window)')
    ap.add_argument('--chunk', type=float, default=5)
    ap.add_argument('--grid', metavar='JSONL', help='no lab: the warm-up x window table '
                    'of a --trace run')
    a = ap.parse_args()
    if a.grid:
        grid(a.grid)
        return
    osd = a.osd
    rng = random.Random(a.seed)
    rows: List[Dict[str, Any]] = []
    with ClientLoad(osd, f'aa{int(time.time())}', a.space, a.object_size, a.threads,
                    seed=a.seed, options={OPTIONS: a.options} if a.options else None) as cl:
        restart(osd)
        write_once(cl.load, a.fill, a.precondition)
        for rnd in range(a.rounds):
            arms = ['A', "A'"]
            rng.shuffle(arms)
            for arm in arms:
                restart(osd)
                if a.trace:
                    print(json.dumps(dict(trace(cl.load, osd, a.trace, a.chunk), round=rnd,
                                          arm=arm)), flush=True)
                    continue
                rows.append(dict(window(cl.load, osd, a.warmup, a.window), round=rnd, arm=arm))
                print(json.dumps(rows[-1]), flush=True)
    if a.trace:
        return
    sd, _ = sd_of_log_ratio(rows, a.rounds, 'iops')
    sd_wa, n_wa = sd_of_log_ratio(rows, a.rounds, 'write_amp', steady_only=True)
    # a 5-round confirmation recommends only a candidate that beat the baseline
    # in every round by the 3% margin: at sd, an effect of about margin + 2 sd
    # passes a round 98% of the time, so 5 rounds about 9 times in 10
    print(json.dumps({'summary': {
        'rounds': a.rounds, 'window_s': a.window, 'warmup_s': a.warmup,
        'sd_log_iops_ratio': None if math.isnan(sd) else round(sd, 4),
        # write-amp only from rounds where both windows saw a compaction below L0
        'sd_log_write_amp_ratio': None if math.isnan(sd_wa) else round(sd_wa, 4),
        'write_amp_rounds': n_wa,
        'median_iops': round(statistics.median(x['iops'] for x in rows)),
        'detectable_effect_5_rounds': (None if math.isnan(sd) else
                                       round(math.exp(math.log1p(0.03) + 2 * sd) - 1, 3)),
        'load_avg': [x['load'] for x in rows]}}), flush=True)


if __name__ == '__main__':
    main()
