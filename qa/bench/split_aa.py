#!/usr/bin/env python3
"""A/A noise of a split client load: the canary's PGs against PGs without it.

A bench, not a test (issue 24).  The duet and the reference OSD (duet_aa.py,
in git history at 543f784) take out what the machine does to both OSDs over a
window, but
only for the OSD's own figures, and those the mgr can read (BlueStore's
latencies) stay noisy; the quiet one (CPU per write) it cannot read on
another host.  The client's own figures are the objective the admin cares
about, and the module's load is its own client: here it writes, over the
same window and with the same writes in flight, to two groups of objects of
one pool, one in PGs the canary serves (C) and one in PGs it does not (R).
What the machine does falls on both; what the canary's options do falls on
C only.  The figure: per window, C's IOPS over R's (with as many writes in
flight on each, the inverse ratio of their mean latencies).

The pool is made for the run (--pool-name, replicated, size 2, so that on a
3-OSD lab a third of its PGs leave the canary out) and removed at the end.
Per round, two arms (A, A') in a random order, each a restart of the canary
through the orchestrator, a warm-up and a window; both arms run the same
options, so every ratio between them is noise.  Prints a JSON line per
window (with the load average), then per figure the sd of the paired log
ratio A'/A: C's IOPS alone (today's sequential design), R's (the machine's
share: the canary was not restarted for it) and C/R (the split design).

    qa/lab/ceph-lab exec -- python3 qa/bench/split_aa.py --osd 1 --rounds 12 > split.jsonl
    python3 qa/bench/split_aa.py --table split.jsonl

With --b-config NAME=VALUE (repeatable) it is an A/B instead: arm B runs
with those set at osd.N (set before its restart, removed before arm A's,
or with --a-config set to arm A's own values),
so that an effect known to fall on the canary alone (e.g. an injected
dispatch delay) shows whether C/R sees it; per figure the effect is the
mean over rounds of the log ratio B/A.  Each running value is checked after
every restart (`config show` against what was set, or for arm A `config
get`), and every window reads the canary's RocksDB (what it wrote, the
flushes and compactions of its busiest column family, the write-stall time
of its perf context), so that an A/B on bluestore_rocksdb_options shows
whether arm B flushed and stalled in each window:

    qa/lab/ceph-lab exec -- python3 qa/bench/split_aa.py --osd 1 --rounds 10 --warmup 20 \
      --window 30 --overwrite --b-config "bluestore_rocksdb_options=$(cat b.txt)" > ab.jsonl
"""
import argparse
import json
import math
import os
import random
import statistics
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from benchlib import (ceph, ceph_json, counter, drive_until, fill_all, overwrite_all, perf,
                      restart, sample)
from rocks_autotune import rocksdb_stats
from rocks_autotune.canary import STATS_OPTIONS
from rocks_autotune.cluster import PgInfo, PoolInfo, RadosIo
from rocks_autotune.workload import (CLEANUP_SECONDS, NAMESPACE, ClientWorkload, client_objects,
                                     client_pool)

FIGURES = ('iops_c', 'iops_r', 'c_over_r')


def cluster_layout() -> Tuple[Dict[int, PoolInfo], List[PgInfo]]:
    dump = ceph_json('osd', 'dump')
    pools = {p['pool']: PoolInfo(id=p['pool'], name=p['pool_name'], size=p['size'],
                                 min_size=p['min_size'], erasure=p.get('type') == 3,
                                 pg_num=p['pg_num']) for p in dump['pools']}
    brief = ceph_json('pg', 'dump', 'pgs_brief')
    brief = brief.get('pg_stats', brief) if isinstance(brief, dict) else brief
    pgs = [PgInfo(pgid=p['pgid'], pool=int(p['pgid'].split('.')[0]), acting=p['acting'],
                  up=p['up']) for p in brief]
    return pools, pgs


class SplitLoad:
    """The session's client load at osd.N, split as its split design splits
    it: half the objects in PGs of the pool that osd serves (C), half in PGs
    it does not (R); `c` and `r` drive each group with `threads` writes in
    flight.  RocksDB's statistics are on at osd.N meanwhile; on exit the
    objects and those options are removed."""

    def __init__(self, osd: int, prefix: str, space: int, object_size: int, threads: int,
                 pool: str, seed: int) -> None:
        self.osd = osd
        self.prefix = prefix
        self.space = space
        self.object_size = object_size
        self.threads = threads
        self.wanted_pool = pool
        self.seed = seed

    def objects(self, pools: Dict[int, PoolInfo], pgs: List[PgInfo]) -> List[str]:
        # the module's choice of the two groups (its split design's)
        try:
            self.pool, c, r = client_pool(pools, pgs, [self.osd], self.wanted_pool)
        except ValueError as e:
            raise SystemExit(f'no split: {e}')
        if not r:
            raise SystemExit(f'pool {self.pool.name}: osd.{self.osd} is in {len(c)} PGs and '
                             f'out of {len(r)}: a split needs both')
        half = self.space // self.object_size // 2
        self.c_names = client_objects(f'{self.prefix}c', half, self.pool.pg_num, c)
        self.r_names = client_objects(f'{self.prefix}r', half, self.pool.pg_num, r)
        self.placement = {'pool': self.pool.name, 'pg_num': self.pool.pg_num,
                          'pgs_with_osd': len(c), 'pgs_without': len(r), 'objects_each': half}
        return self.c_names + self.r_names

    def __enter__(self) -> 'SplitLoad':
        import rados
        for name in STATS_OPTIONS:
            ceph('config', 'set', f'osd.{self.osd}', name, 'true')
        names = self.objects(*cluster_layout())
        self.rados = rados.Rados(conffile=os.environ.get('CEPH_CONF', ''))
        self.rados.connect()
        self.ioctx = self.rados.open_ioctx(self.pool.name)
        self.ioctx.set_namespace(NAMESPACE)
        io = RadosIo(self.ioctx, self.pool.name, NAMESPACE)
        # the whole keyspace, to remove it on exit
        self.load = ClientWorkload(io, names, self.object_size, in_flight=self.threads,
                                   seed=self.seed)
        self.c = ClientWorkload(io, self.c_names, self.object_size, in_flight=self.threads,
                                seed=self.seed)
        self.r = ClientWorkload(io, self.r_names, self.object_size, in_flight=self.threads,
                                seed=self.seed + 1)
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.load.cleanup(CLEANUP_SECONDS)
        finally:
            self.ioctx.close()
            self.rados.shutdown()
            for name in STATS_OPTIONS:
                ceph('config', 'rm', f'osd.{self.osd}', name)


def drive_both(load: SplitLoad, seconds: float) -> Dict[str, Tuple[int, float]]:
    """Both groups written at once for `seconds`: bytes and writing time of each."""
    got: Dict[str, Tuple[int, float]] = {}
    end = time.time() + seconds

    def run(name: str, w: ClientWorkload) -> None:
        got[name] = drive_until(w, end)
    ts = [threading.Thread(target=run, args=a) for a in (('c', load.c), ('r', load.r))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return got


# RocksDB's write stalls as the canary's perf dump adds them up (rocksdb_perf
# on): the perf context's write_delay_time, summed over the submitted batches
DELAY = ('rocksdb', 'rocksdb_write_delay_time')


def window(load: SplitLoad, warmup: float, seconds: float) -> Dict[str, Any]:
    """A warm-up, then one window of both groups; the canary's RocksDB read
    over the window: what it wrote (benchlib.sample, as the duet bench read
    it), the flushes of its busiest column family and the write-stall time."""
    drive_both(load, warmup)
    kv0, perf0 = sample(load.osd), perf(load.osd)
    got = drive_both(load, seconds)
    kv1, perf1 = sample(load.osd), perf(load.osd)
    iops = {k: b / load.c.block_size / s for k, (b, s) in got.items()}
    d = rocksdb_stats.delta(rocksdb_stats.counts(kv0), rocksdb_stats.counts(kv1))
    return {'iops_c': iops['c'], 'iops_r': iops['r'], 'c_over_r': iops['c'] / iops['r'],
            'wal_mib': round(d.wal_bytes / 2**20, 2), 'flush_mib': round(d.flush_bytes / 2**20, 2),
            'compaction_mib': round(d.compaction_bytes / 2**20, 2), 'flushes': d.flushes,
            'busiest_cf': d.busiest_cf, 'compactions': d.compactions,
            'delay_s': round(counter(perf1, [DELAY])['sum'] - counter(perf0, [DELAY])['sum'], 3),
            'load': round(os.getloadavg()[0], 2)}


def set_arm(osd: int, b_config: Dict[str, str], arm: str,
            a_config: Optional[Dict[str, str]] = None) -> None:
    """Arm B's settings set at osd.N (for arm A: `a_config`'s, the rest of
    B's names removed), the OSD restarted, and each running value checked
    against what was set (for a name removed: `config get`)."""
    a_config = a_config or {}
    mine = b_config if arm == 'B' else a_config
    for name in {**a_config, **b_config}:
        if name in mine:
            ceph('config', 'set', f'osd.{osd}', name, mine[name])
        else:
            ceph('config', 'rm', f'osd.{osd}', name)
    restart(osd)
    for name in {**a_config, **b_config}:
        want = mine[name] if name in mine else ceph('config', 'get', f'osd.{osd}', name).strip()
        running = ceph('config', 'show', f'osd.{osd}', name).strip()
        if running != want:
            raise SystemExit(f'osd.{osd} runs {name}={running!r} in arm {arm}, not {want!r}')


def sds(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per figure: the paired log ratios A'/A (an A/B run's: B/A) by round,
    their sd and mean (an A/B's effect) and the mean over its standard error."""
    other = 'B' if any(r['arm'] == 'B' for r in rows) else "A'"
    out: Dict[str, Any] = {}
    for f in FIGURES:
        logs = []
        for rnd in sorted({r['round'] for r in rows}):
            got = {r['arm']: r[f] for r in rows if r['round'] == rnd}
            if got.get('A') and got.get(other):
                logs.append(math.log(got[other] / got['A']))
        sd = statistics.stdev(logs) if len(logs) > 1 else None
        mean = statistics.mean(logs) if logs else None
        out[f] = {'sd': None if sd is None else round(sd, 4),
                  'mean': None if mean is None else round(mean, 4),
                  't': round(mean / (sd / math.sqrt(len(logs))), 2)
                  if sd and mean is not None else None,
                  'rounds': len(logs), 'log_ratios': [round(v, 4) for v in logs]}
    return out


def table(path: str) -> None:
    lines = [json.loads(x) for x in open(path) if x.strip()]
    rows = [r for r in lines if 'arm' in r]
    for r in lines:
        if 'placement' in r:
            print(f'{r["date"]}, {r["version"]}; osd.{r["osd"]}, {r["warmup_s"]:g}-s warm-up, '
                  f'{r["window_s"]:g}-s windows; {r["placement"]}'
                  + (f'; arm B sets at osd.{r["osd"]}: {r["b_config"]}' if r.get('b_config')
                     else '')
                  + (f'; arm A sets: {r["a_config"]}' if r.get('a_config') else ''))
        if 'filled' in r:
            print(f'group {r["group"]}: {r["fill_mib"]} MiB filled in {r["fill_seconds"]} s'
                  + (f', every block overwritten once in {r["overwrite_seconds"]} s '
                     f'(load {r["load"]})' if 'overwritten' in r else ''))
    kv = all('flushes' in r for r in rows)  # the runs that read the canary's RocksDB
    print('\n| round | arm | IOPS C | IOPS R | C/R |'
          + (' WAL MiB | flushes | flush MiB | compaction MiB | stall s |' if kv else '')
          + ' load |\n|---|---|---|---|---|' + ('---|' * 5 if kv else '') + '---|')
    for r in rows:
        print(f'| {r["round"] + 1} | {r["arm"]} | {r["iops_c"]:.0f} | {r["iops_r"]:.0f} | '
              f'{r["c_over_r"]:.3f} |'
              + (f' {r["wal_mib"]:.1f} | {r["flushes"]} | {r["flush_mib"]:.1f} | '
                 f'{r["compaction_mib"]:.1f} | {r["delay_s"]:.2f} |' if kv else '')
              + f' {r["load"]} |')
    if kv:
        for arm in sorted({r['arm'] for r in rows}):
            mine = [r for r in rows if r['arm'] == arm]
            print(f'\narm {arm}: {sum(1 for r in mine if r["flushes"])} of {len(mine)} windows '
                  f'saw a flush of the busiest column family ({sum(r["flushes"] for r in mine)} '
                  f'flushes), {sum(1 for r in mine if r["compactions"])} a compaction below L0; '
                  f'medians: flush {statistics.median(r["flush_mib"] for r in mine):.1f} MiB, '
                  f'compaction {statistics.median(r["compaction_mib"] for r in mine):.1f} MiB, '
                  f'stall {statistics.median(r["delay_s"] for r in mine):.2f} s per window'
                  + ('; every running value checked'
                     if all(r.get('running_checked') for r in mine) else ''))
    s = sds(rows)
    if any(r['arm'] == 'B' for r in rows):
        print('\nper-round log ratio B/A: its mean (the effect), sd and mean/se\n\n'
              '| figure | effect (log B/A) | B/A | sd | t | rounds |\n|---|---|---|---|---|---|')
        for f in FIGURES:
            m = s[f]
            print(f'| {f} | {m["mean"]:.4f} | {math.exp(m["mean"]):.3f}x | {m["sd"]:.4f} | '
                  f'{m["t"]} | {m["rounds"]} |')
        loads = [r['load'] for r in rows]
        print(f'\n{len(rows)} windows, load average {min(loads)}-{max(loads)} '
              f'(median {round(statistics.median(loads), 2)})')
        return
    print('\nsd of the per-round log ratio A\'/A\n\n| figure | sd | rounds |\n|---|---|---|')
    names = {'iops_c': "C's IOPS (the canary's PGs: today's sequential design)",
             'iops_r': "R's IOPS (PGs without the canary: the machine's share)",
             'c_over_r': 'C/R (the split design)'}
    for f in FIGURES:
        sd: Optional[float] = s[f]['sd']
        print(f'| {names[f]} | {"-" if sd is None else f"{sd:.4f}"} | {s[f]["rounds"]} |')
    loads = [r['load'] for r in rows]
    if loads:
        print(f'\n{len(rows)} windows, load average {min(loads)}-{max(loads)} '
              f'(median {round(statistics.median(loads), 2)})')


def coupling(paths: List[str]) -> None:
    """Per A/B run: each figure's effect with its standard error (sd over the
    square root of the rounds) and mean +- 2 se as a ratio, and what C/R adds
    to C's own effect.  In logs C/R's effect is C's minus R's, so what C/R
    overstates (or understates) C's effect by is R's effect: what arm B did to
    the PGs without the canary through the machine they share."""
    print('| run | figure | effect (log B/A) | se | mean +- 2 se, as B/A | rounds below 0 |\n'
          '|---|---|---|---|---|---|')
    notes = []
    for path in paths:
        rows = [r for r in (json.loads(x) for x in open(path) if x.strip()) if 'arm' in r]
        s = sds(rows)
        name = os.path.basename(path)
        for f in FIGURES:
            m = s[f]
            se = m['sd'] / math.sqrt(m['rounds'])
            print(f'| {name} | {f} | {m["mean"]:+.4f} | {se:.4f} | '
                  f'{math.exp(m["mean"] - 2 * se):.3f}x-{math.exp(m["mean"] + 2 * se):.3f}x | '
                  f'{sum(1 for v in m["log_ratios"] if v < 0)} of {m["rounds"]} |')
        c, cr = s['iops_c']['mean'], s['c_over_r']['mean']
        notes.append(f'{name}: C/R {cr:+.4f} = C {c:+.4f} minus R {s["iops_r"]["mean"]:+.4f}; '
                     f'C/R over C in logs {cr / c:.2f}' if c else f'{name}: C moved 0')
    print('\n' + '\n'.join(notes))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--osd', type=int, default=1)
    ap.add_argument('--rounds', type=int, default=8)
    ap.add_argument('--warmup', type=float, default=10)
    ap.add_argument('--window', type=float, default=20)
    ap.add_argument('--space', type=int, default=512 << 20, help='bytes, both groups')
    ap.add_argument('--object-size', type=int, default=1 << 20)
    ap.add_argument('--threads', type=int, default=8, help='writes in flight per group')
    ap.add_argument('--pool-name', default='splitaa')
    ap.add_argument('--pg-num', type=int, default=32)
    ap.add_argument('--overwrite', action='store_true',
                    help='after the fill, overwrite every 4 KiB block of each group once '
                         '(benchlib.overwrite_all: the session\'s second pass)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--until', default='', help='UTC HH:MM: start no round after it')
    ap.add_argument('--b-config', action='append', default=[], metavar='NAME=VALUE',
                    help='an A/B run: arm B runs with NAME=VALUE set at osd.N')
    ap.add_argument('--a-config', action='append', default=[], metavar='NAME=VALUE',
                    help='an A/B run from a baseline of its own: arm A runs with NAME=VALUE '
                         'set at osd.N (default: removed, the cluster\'s value)')
    ap.add_argument('--table', metavar='JSONL', help='no lab: the tables of a run')
    ap.add_argument('--coupling', nargs='+', metavar='JSONL',
                    help='no lab: per A/B run, each figure\'s effect with its se, and what '
                         'C/R adds to C\'s own effect (R\'s)')
    a = ap.parse_args()
    if a.coupling:
        coupling(a.coupling)
        return
    if a.table:
        table(a.table)
        return
    p = a.pool_name
    ceph('osd', 'pool', 'create', p, str(a.pg_num), str(a.pg_num), 'replicated')
    try:
        ceph('osd', 'pool', 'set', p, 'size', '2', '--yes-i-really-mean-it')
        ceph('osd', 'pool', 'set', p, 'min_size', '1')
        ceph('osd', 'pool', 'application', 'enable', p, 'rados')
        restart(a.osd)  # also waits for every PG active+clean
        rng = random.Random(a.seed)
        with SplitLoad(a.osd, f'split{int(time.time())}', a.space, a.object_size, a.threads,
                       pool=p, seed=a.seed) as load:
            b_config = dict(kv.split('=', 1) for kv in a.b_config)
            a_config = dict(kv.split('=', 1) for kv in a.a_config)
            print(json.dumps({'placement': load.placement, 'osd': a.osd, 'b_config': b_config,
                              'a_config': a_config,
                              'warmup_s': a.warmup, 'window_s': a.window,
                              'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                              'version': ceph_json('version').get('version')}), flush=True)
            for w in (load.c, load.r):  # every object written end to end first
                passes = fill_all(w)
                if a.overwrite:  # then every 4 KiB block once: a preconditioned keyspace
                    passes.update(overwrite_all(w))
                print(json.dumps(dict(passes, group='c' if w is load.c else 'r')), flush=True)
            for rnd in range(a.rounds):
                if a.until and rnd and time.strftime('%H:%M', time.gmtime()) >= a.until:
                    break
                arms = ['A', 'B' if b_config else "A'"]
                rng.shuffle(arms)
                for arm in arms:
                    set_arm(a.osd, b_config, arm, a_config)
                    print(json.dumps(dict(window(load, a.warmup, a.window), round=rnd,
                                          arm=arm, running_checked=bool(b_config))),
                          flush=True)
    finally:
        for kv in a.b_config + a.a_config:
            ceph('config', 'rm', f'osd.{a.osd}', kv.split('=', 1)[0])
        ceph('osd', 'pool', 'rm', p, p, '--yes-i-really-really-mean-it')


if __name__ == '__main__':
    main()
