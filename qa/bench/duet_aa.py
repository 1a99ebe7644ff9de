#!/usr/bin/env python3
"""A/A noise of two confirmation designs side by side: sequential and duet (issue 24).

A bench, not a test.  Both designs run the same options on both arms, so
every ratio between the arms is noise; they run in the same process,
interleaved by round (in each round the two designs in a random order), on
the same keyspace under the same client load (workload.ClientWorkload over
librados), so what the shared machine does falls on both alike:

- sequential (today's confirmation): one OSD (--seq-osd), arm A then arm A'
  in a random order, each a restart through the orchestrator, a warm-up and
  a window of the load (as client_aa.py); the round's ratio is A'/A; each
  window also reads the duet's other OSD, which it does not restart (the
  reference): `seq/ref` is that ratio of the OSD's figure over the
  reference's in the same window, which takes out what falls on both;
- duet: OSDs X and Y (--osds X,Y) both restarted, one at a time through the
  same restart helper (X first in even rounds, Y first in odd ones), then one
  warm-up and one window of the load, each OSD's figures taken over that same
  window; the round's ratio is Y/X.

The load's objects are in PGs that both X and Y serve, half (by object
count) in PGs whose primary is X and half in PGs whose primary is Y (the
placement is checked with the workload's own helpers: client_objects picks
names by placement.pg_of; the PGs' up sets come from `pg dump pgs_brief`).
Every measured OSD (X, Y and --seq-osd, which must be one of them) serves
every object, so the load's bytes are the client bytes each takes.

Per OSD and window it reads `perf dump` and `dump_objectstore_kv_stats`
(RocksDB's statistics options are set at each measured OSD, as a session
does) before and after the window, and the OSD process's CPU ticks from
/proc/<pid>/stat (pid from its pid file) just around it; the figures:
BlueStore's kv_sync_lat, kv_commit_lat and txc commit latency (commit_lat),
the OSD's op_w_process_latency (its primary writes) and subop_w_latency
(its replica writes), CPU ms per write the OSD took (op_w + subop_w), and
RocksDB's write-amp (WAL + flush + compaction bytes per client byte).  The
sequential design also has the client's IOPS; the duet has none (a
replicated write completes when every replica commits: IOPS is shared).

Prints a JSON line per window (with the load average at its end), then a
summary: per design and metric the per-round log ratios, their standard
deviation, their mean (in the duet, the systematic difference between the
two OSDs that crossover would cancel) and how many rounds fed them.

Run it inside the lab's release (librados must match the cluster):

    qa/lab/ceph-lab exec -- python3 qa/bench/duet_aa.py --osds 0,1 --seq-osd 1 --rounds 10 \\
      > duet.jsonl

and the tables of a run, no lab needed:

    python3 qa/bench/duet_aa.py --table duet.jsonl

With --b-options it is an A/B duet with crossover instead (no sequential
design): in rounds 1, 3, 5, ... X runs arm A and Y arm B, in rounds 2, 4,
6, ... X runs B and Y runs A.  Arm A is --options (default: no
bluestore_rocksdb_options set at the OSD, the release's default), arm B is
--b-options.  Before each window
both OSDs are restarted, one at a time (X first in rounds 1, 2, 5, 6, ..., Y
first in rounds 3, 4, 7, 8, ..., so restart order is balanced against the
arms), each after its arm's options are set (or removed) at osd.N, and the
running value (`ceph config show osd.N bluestore_rocksdb_options`) is checked
against what was set (for A without --options: `ceph config get`, the
default).  Per round and figure the log ratio B/A over the same window; the
summary has its mean over the rounds (the effect), its sd, and the mean of
Y/X (the OSD-difference term crossover cancels):

    qa/lab/ceph-lab exec -- python3 qa/bench/duet_aa.py --osds 0,1 --rounds 20 \\
      --b-options "$(cat tiny.txt)" > duet-ab.jsonl

Like client_aa.py it writes --precondition bytes of the load first (and,
with --fill, the session's two passes), and at the end removes its objects
and the options it set (the OSDs keep running what they last restarted with).
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from benchlib import (ClientLoad, ceph, ceph_json, counter, drive_until, perf, restart, sample,
                      stat_cpu, write_once)
from rocks_autotune import rocksdb_stats
from rocks_autotune.canary import OPTIONS
from rocks_autotune.cluster import PgInfo, PoolInfo
from rocks_autotune.perf_counters import rocksdb_write_amp
from rocks_autotune.placement import pg_of
from rocks_autotune.workload import NAMESPACE, ClientWorkload, client_objects

# figure -> (section, counter) of `perf dump`, time averages over the window, in ms;
# BlueStore's "commit_lat" is txc_commit_lat on Tentacle (commit_lat before)
LATENCIES = {'kv_sync_lat_ms': [('bluestore', 'kv_sync_lat')],
             'kv_commit_lat_ms': [('bluestore', 'kv_commit_lat')],
             'commit_lat_ms': [('bluestore', 'txc_commit_lat'), ('bluestore', 'commit_lat')],
             'op_w_process_lat_ms': [('osd', 'op_w_process_latency')],
             'subop_w_lat_ms': [('osd', 'subop_w_latency')]}
COUNTS = [('osd', 'op_w'), ('osd', 'subop_w')]
# RocksDB's perf context as Ceph's RocksDBStore adds it up per submitted
# batch when rocksdb_perf is true (`rocksdb` section of `perf dump`, each a
# time average {avgcount, sum, avgtime} in seconds): figure -> counter, its
# sum over the window in microseconds per write the OSD took (op_w + subop_w,
# the writes of cpu_ms_per_write)
PERF_CONTEXT = {'memtable_us_per_write': 'rocksdb_write_memtable_time',
                'wal_us_per_write': 'rocksdb_write_wal_time',
                'delay_us_per_write': 'rocksdb_write_delay_time',
                'pre_post_us_per_write': 'rocksdb_write_pre_and_post_time'}
# RocksDBStore's own submit latencies (time averages over the window, in ms):
# submit_sync_latency is BlueStore's kv_sync_thread's synced batch (WAL write
# and fsync included), submit_latency the unsynced submits
SUBMITS = {'submit_sync_lat_ms': ('rocksdb', 'submit_sync_latency'),
           'submit_lat_ms': ('rocksdb', 'submit_latency')}
PER_OSD = (list(LATENCIES) + ['cpu_ms_per_write', 'write_amp'] + list(PERF_CONTEXT)
           + list(SUBMITS))
METRICS = {'seq': ['iops'] + PER_OSD, 'duet': PER_OSD, 'seq/ref': PER_OSD}
SEQ, DUET = 'seq', 'duet'
# the sequential design's OSD over the reference (the duet's other OSD, read
# over the same window and not restarted for it): runs that read one
SEQ_REF = 'seq/ref'


class DuetLoad(ClientLoad):
    """The client load in PGs both `pair` OSDs serve, half of the objects in
    PGs whose primary is the first, half in PGs whose primary is the second."""

    def __init__(self, pair: Tuple[int, int], seq_osd: int, prefix: str, space: int,
                 object_size: int, threads: int, pool: str = '', seed: int = 0,
                 options: Optional[Dict[str, str]] = None) -> None:
        super().__init__(seq_osd, prefix, space, object_size, threads, pool, seed, options,
                         also=pair)
        self.pair = pair
        self.placement: Dict[str, Any] = {}

    def objects(self, pools: Dict[int, PoolInfo], pgs: List[PgInfo]) -> List[str]:
        x, y = self.pair
        shared: Dict[int, List[PgInfo]] = {}
        for pg in pgs:
            if x in pg.up and y in pg.up and x in pg.acting and y in pg.acting:
                shared.setdefault(pg.pool, []).append(pg)
        by_name = {p.name: p for p in pools.values()}
        if self.wanted_pool:
            pool = by_name[self.wanted_pool]
        else:
            chosen = sorted((p for p in pools.values() if not p.erasure and shared.get(p.id)),
                            key=lambda p: (-len(shared[p.id]), p.id))
            if not chosen:
                raise SystemExit(f'no replicated pool has a PG on both osd.{x} and osd.{y}')
            pool = chosen[0]
        both = shared.get(pool.id, [])

        def seeds(primary: int) -> List[int]:
            return sorted(int(pg.pgid.split('.')[1], 16) for pg in both
                          if pg.acting[0] == primary)
        xs, ys = seeds(x), seeds(y)
        if not xs or not ys:
            raise SystemExit(f'pool {pool.name}: osd.{x} is primary of {len(xs)} and osd.{y} '
                             f'of {len(ys)} of the PGs both serve; a duet needs both')
        n = min(len(xs), len(ys))
        xs, ys = xs[:n], ys[:n]  # as many PGs of each primary
        count = self.space // self.object_size
        names = (client_objects(f'{self.prefix}x', count // 2, pool.pg_num, xs)
                 + client_objects(f'{self.prefix}y', count - count // 2, pool.pg_num, ys))
        acting = {int(pg.pgid.split('.')[1], 16): pg.acting for pg in both}
        # checked again, name by name, as Ceph places it
        on = [acting[pg_of(nm, pool.pg_num, NAMESPACE)] for nm in names]
        assert all(x in a and y in a for a in on)
        self.pool, self.seeds = pool, xs + ys
        self.placement = {
            'pool': pool.name, 'size': pool.size, 'pg_num': pool.pg_num,
            'pgs_both_serve': len(both), 'pgs_of_pool': sum(1 for p in pgs if p.pool == pool.id),
            'primary_pgs_in_shared': {f'osd.{o}': sum(1 for pg in both if pg.acting[0] == o)
                                      for o in sorted({pg.acting[0] for pg in both})},
            'pgs_used': {f'osd.{x}_primary': xs, f'osd.{y}_primary': ys},
            'objects': len(names),
            'objects_by_primary': {f'osd.{o}': sum(1 for a in on if a[0] == o) for o in (x, y)},
            'acting_sets': sorted({','.join(map(str, a)) for a in on})}
        return names


def pid_of(osd: int) -> int:
    path = subprocess.run(['ceph-conf', '--name', f'osd.{osd}', '--show-config-value',
                           'pid_file'], check=True, text=True, capture_output=True
                          ).stdout.strip()
    with open(path) as f:
        return int(f.read().strip())


def cpu_seconds(pid: int) -> float:
    return stat_cpu(f'/proc/{pid}/stat')[1]


def n_of(before: Dict[str, Any], after: Dict[str, Any], key: Tuple[str, str]) -> int:
    """How many times a time average was added to over the window."""
    return int(counter(after['perf'], [key])['avgcount']
               - counter(before['perf'], [key])['avgcount'])


def per_osd(before: Dict[str, Any], after: Dict[str, Any], client_bytes: int) -> Dict[str, Any]:
    """One OSD's figures over a window from its samples before and after."""
    out: Dict[str, Any] = {}
    for fig, keys in LATENCIES.items():
        a, b = counter(before['perf'], keys), counter(after['perf'], keys)
        n = b['avgcount'] - a['avgcount']
        out[fig] = (b['sum'] - a['sum']) / n * 1000.0 if n > 0 else None
        out[fig.replace('_lat_ms', '_n')] = n
    writes = sum(counter(after['perf'], [k]) - counter(before['perf'], [k]) for k in COUNTS)
    out['writes'] = writes
    out['cpu_s'] = round(after['cpu'] - before['cpu'], 3)
    out['cpu_ms_per_write'] = (after['cpu'] - before['cpu']) * 1000.0 / writes if writes else None
    for fig, name in PERF_CONTEXT.items():
        keys = [('rocksdb', name)]
        a, b = counter(before['perf'], keys), counter(after['perf'], keys)
        secs = b['sum'] - a['sum']
        out[fig.replace('_us_per_write', '_s')] = round(secs, 6)
        out[fig] = secs * 1e6 / writes if writes else None
    out['perf_context_n'] = n_of(before, after, ('rocksdb', PERF_CONTEXT['memtable_us_per_write']))
    for fig, key in SUBMITS.items():
        a, b = counter(before['perf'], [key]), counter(after['perf'], [key])
        n = b['avgcount'] - a['avgcount']
        out[fig] = (b['sum'] - a['sum']) / n * 1000.0 if n > 0 else None
        out[fig.replace('_lat_ms', '_n')] = n
    d = rocksdb_stats.delta(rocksdb_stats.counts(before['kv']), rocksdb_stats.counts(after['kv']))
    out['write_amp'] = rocksdb_write_amp(d.wal_bytes, d.flush_bytes, d.compaction_bytes,
                                         client_bytes)
    out.update(wal_mib=round(d.wal_bytes / 2**20, 2), flush_mib=round(d.flush_bytes / 2**20, 2),
               compaction_mib=round(d.compaction_bytes / 2**20, 2), flushes=d.flushes,
               compactions=d.compactions, pid=after['pid'])
    return out


def window(load: ClientWorkload, osds: Sequence[int], warmup: float,
           seconds: float) -> Dict[str, Any]:
    """A warm-up, then one window of the load, every OSD of `osds` read over it."""
    load_start = round(os.getloadavg()[0], 2)
    drive_until(load, time.time() + warmup)
    before: Dict[int, Dict[str, Any]] = {
        o: {'perf': perf(o), 'kv': sample(o), 'pid': pid_of(o)} for o in osds}
    for o in osds:  # CPU read last before the window and first after it
        before[o]['cpu'] = cpu_seconds(before[o]['pid'])
    t0 = time.time()
    nbytes, secs = drive_until(load, t0 + seconds)
    cpu_after = {o: cpu_seconds(before[o]['pid']) for o in osds}
    after = {o: {'perf': perf(o), 'kv': sample(o), 'pid': pid_of(o), 'cpu': cpu_after[o]}
             for o in osds}
    for o in osds:
        if after[o]['pid'] != before[o]['pid']:
            raise SystemExit(f'osd.{o} restarted during a window')
    return {'iops': nbytes / load.block_size / secs, 'client_mib': round(nbytes / 2**20, 1),
            'client_writes': nbytes // load.block_size, 'window_s': round(time.time() - t0, 1),
            'osd': {str(o): per_osd(before[o], after[o], nbytes) for o in osds},
            'load_start': load_start, 'load': round(os.getloadavg()[0], 2)}


def log_ratios(rows: List[Dict[str, Any]], design: str, metric: str
               ) -> List[Tuple[int, Optional[float]]]:
    """Per round, log of the ratio of `metric` between the design's arms:
    sequential A'/A on its OSD; seq/ref the same, each window's figure over
    the reference's in it; duet Y/X over the same window (None when either
    figure is missing or zero)."""
    out: List[Tuple[int, Optional[float]]] = []
    kind = SEQ if design == SEQ_REF else design
    for rnd in sorted({r['round'] for r in rows if r['design'] == kind}):
        got = [r for r in rows if r['design'] == kind and r['round'] == rnd]
        if design in (SEQ, SEQ_REF):
            arms = {r['arm']: r for r in got}
            if len(arms) < 2:
                continue
            osd = str(arms['A']['seq_osd'])

            def fig(r: Dict[str, Any]) -> Any:
                own = r['iops'] if metric == 'iops' else r['osd'][osd].get(metric)
                if design == SEQ:
                    return own
                # over the reference's figure in the same window
                ref = r['osd'].get(str(r.get('ref')), {}).get(metric)
                return own / ref if own and ref else None
            a, b = fig(arms['A']), fig(arms["A'"])
        else:
            r = got[0]
            a, b = r['osd'][str(r['x'])].get(metric), r['osd'][str(r['y'])].get(metric)
        out.append((rnd, math.log(b / a) if a and b else None))
    return out


def ab_log_ratios(rows: List[Dict[str, Any]], metric: str
                  ) -> List[Tuple[int, Optional[float], int]]:
    """Per round of an A/B duet, log of `metric`'s ratio B/A over the same
    window (whichever OSD ran B), and the OSD that ran B."""
    out: List[Tuple[int, Optional[float], int]] = []
    for r in sorted((r for r in rows if r['design'] == DUET and 'b_osd' in r),
                    key=lambda r: r['round']):
        a, b = r['osd'][str(r['a_osd'])].get(metric), r['osd'][str(r['b_osd'])].get(metric)
        out.append((r['round'], math.log(b / a) if a and b else None, r['b_osd']))
    return out


def ab_summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per figure of an A/B duet: the effect (mean log ratio B/A) and its
    ratio, the sd of the per-round log ratios, effect/sd, the sd about each
    arm assignment's own mean (pooled: the noise with the OSD term taken
    out), the standard error of the effect from it, and the OSD term (mean
    log ratio Y/X, which the crossover cancels)."""
    out: Dict[str, Any] = {}
    for metric in PER_OSD:
        got = [(v, b) for _, v, b in ab_log_ratios(rows, metric) if v is not None]
        logs = [v for v, _ in got]
        yx = [v for _, v in log_ratios([r for r in rows if 'b_osd' in r], DUET, metric)
              if v is not None]
        m: Dict[str, Any] = {'rounds': len(logs), 'log_ratios': [round(v, 4) for v in logs]}
        m['effect'] = round(statistics.mean(logs), 4) if logs else None
        m['ratio'] = round(math.exp(statistics.mean(logs)), 4) if logs else None
        m['sd'] = round(statistics.stdev(logs), 4) if len(logs) > 1 else None
        m['effect_over_sd'] = (round(statistics.mean(logs) / statistics.stdev(logs), 2)
                               if len(logs) > 1 and statistics.stdev(logs) > 0 else None)
        groups = [[v for v, b in got if b == o] for o in sorted({b for _, b in got})]
        for o, g in zip(sorted({b for _, b in got}), groups):
            m[f'effect_b_on_osd.{o}'] = round(statistics.mean(g), 4)
        df = len(logs) - sum(1 for g in groups if g)
        ss = sum((v - statistics.mean(g)) ** 2 for g in groups if g for v in g)
        m['sd_within_assignment'] = round(math.sqrt(ss / df), 4) if df > 0 else None
        m['se'] = (round(math.sqrt(ss / df) / math.sqrt(len(logs)), 4)
                   if df > 0 else None)
        m['osd_term'] = round(statistics.mean(yx), 4) if yx else None
        out[metric] = m
    return out


def summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for design in (SEQ, DUET) + ((SEQ_REF,) if any('ref' in r for r in rows) else ()):
        kind = SEQ if design == SEQ_REF else design
        per: Dict[str, Any] = {}
        for metric in METRICS[design]:
            logs = [v for _, v in log_ratios(rows, design, metric) if v is not None]
            per[metric] = {
                'sd': round(statistics.stdev(logs), 4) if len(logs) > 1 else None,
                'mean': round(statistics.mean(logs), 4) if logs else None,
                'rounds': len(logs), 'log_ratios': [round(v, 4) for v in logs]}
            if design == DUET:  # apart by which OSD was restarted first
                groups = []
                for first in ('x', 'y'):
                    rnds = {r['round'] for r in rows if r['design'] == DUET
                            and r['first'] == r[first]}
                    sub = [v for rnd, v in log_ratios(rows, design, metric)
                           if v is not None and rnd in rnds]
                    groups.append(sub)
                    per[metric][f'mean_{first}_first'] = (round(statistics.mean(sub), 4)
                                                          if sub else None)
                # the sd about each order's own mean (pooled): the noise of a
                # duet that always restarts the same OSD first
                df = sum(len(g) for g in groups) - sum(1 for g in groups if g)
                ss = sum((v - statistics.mean(g)) ** 2 for g in groups if g for v in g)
                per[metric]['sd_within_order'] = round(math.sqrt(ss / df), 4) if df > 0 else None
        out[design] = {'metrics': per,
                       'load': [r['load'] for r in rows if r['design'] == kind],
                       'median_iops': round(statistics.median(
                           r['iops'] for r in rows if r['design'] == kind))
                       if any(r['design'] == kind for r in rows) else None}
    return out


def present(rows: List[Dict[str, Any]], names: Sequence[str]) -> List[str]:
    """The figures of `names` a run recorded (an older run has none of the
    RocksDB perf-context ones): its tables show only those."""
    return [m for m in names if m == 'iops'
            or any(m in o for r in rows for o in r['osd'].values())]


def median_of(values: Any) -> Optional[float]:
    """The median of the values that are there (None if none is)."""
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def fmt(v: Optional[float], digits: int = 3) -> str:
    return '-' if v is None else f'{v:.{digits}f}'


def effect(sd: Optional[float]) -> str:
    """The effect a 5-round confirmation finds about 9 times in 10 at this
    sd: the 3% margin plus two sd per round (as client_aa.py reports it)."""
    return '-' if sd is None else f'{math.exp(math.log1p(0.03) + 2 * sd) - 1:+.1%}'


def table(path: str) -> None:
    """Markdown tables of a run's JSON lines: per design the per-round log
    ratios with the load beside each window, then the sd per metric."""
    lines = [json.loads(line) for line in open(path) if line.strip()]
    for r in lines:
        if 'placement' in r:
            p = r['placement']
            design = ('A/B with crossover (X on A and Y on B in odd-numbered rounds, '
                      'swapped in even-numbered ones)' if 'b_options' in r
                      else f'sequential osd.{r["seq_osd"]}')
            print(f'{r["date"]}, {r["version"]}; duet osd.{r["x"]} (X) and osd.{r["y"]} (Y), '
                  f'{design}; {r["warmup_s"]:g}-s warm-up, '
                  f'{r["window_s"]:g}-s windows')
            print(f'pool {p["pool"]} (size {p["size"]}, {p["pg_num"]} PGs): osd.{r["x"]} and '
                  f'osd.{r["y"]} both serve {p["pgs_both_serve"]} of its {p["pgs_of_pool"]} PGs; '
                  f'primaries among them {p["primary_pgs_in_shared"]}; used '
                  + ', '.join(f'{len(v)} PGs with {k}' for k, v in p['pgs_used'].items())
                  + f'; {p["objects"]} objects, by primary {p["objects_by_primary"]}; '
                  f'acting sets {p["acting_sets"]}')
        if 'precondition_mib' in r:
            print(f'preconditioning: {r["precondition_mib"]} MiB in {r["seconds"]} s '
                  f'(load {r["load"]})')
        if 'stopped' in r:
            print(f'stopped: {r["stopped"]}')
    rows = [r for r in lines if 'design' in r]
    if any('b_osd' in r for r in rows):
        ab_table(lines, rows)
        return
    for design in (SEQ, DUET):
        mine = [r for r in rows if r['design'] == design]
        if not mine:
            continue
        names = present(mine, METRICS[design])
        print(f'\n{design}: per-round log ratio (' +
              ("A'/A on osd." + str(mine[0]['seq_osd']) if design == SEQ else
               f'osd.{mine[0]["y"]}/osd.{mine[0]["x"]}, same window') + ')\n')
        extra = 'load (A / A\')' if design == SEQ else 'first restarted | IOPS | load'
        print('| round | ' + ' | '.join(names) + f' | {extra} |')
        print('|---' * (len(names) + (2 if design == SEQ else 4)) + '|')
        by = {m: dict(log_ratios(rows, design, m)) for m in names}
        for rnd in sorted(by[names[0]]):
            cells = [fmt(by[m].get(rnd)) for m in names]
            got = [r for r in mine if r['round'] == rnd]
            if design == SEQ:
                arms = {r['arm']: r for r in got}
                tail = ' / '.join(str(arms[k]['load']) for k in ('A', "A'"))
            else:
                tail = f'osd.{got[0]["first"]} | {got[0]["iops"]:.0f} | {got[0]["load"]}'
            print(f'| {rnd + 1} | ' + ' | '.join(cells) + f' | {tail} |')
    s = summary(rows)
    print('\nsd of the per-round log ratio (mean; rounds)\n')
    print('| metric | sequential sd | duet sd | duet sd within restart order | '
          'duet mean (Y/X) | duet mean, X first | duet mean, Y first | rounds (seq / duet) '
          '| 5-round effect (seq / duet) |')
    print('|---|---|---|---|---|---|---|---|---|')
    for m in present(rows, METRICS[SEQ]):
        q = s[SEQ]['metrics'].get(m, {})
        d = s[DUET]['metrics'].get(m, {})
        print(f'| {m} | {fmt(q.get("sd"), 4)} | {fmt(d.get("sd"), 4)} | '
              f'{fmt(d.get("sd_within_order"), 4)} | {fmt(d.get("mean"), 4)} | '
              f'{fmt(d.get("mean_x_first"), 4)} | '
              f'{fmt(d.get("mean_y_first"), 4)} | {q.get("rounds", 0)} / {d.get("rounds", 0)} '
              f'| {effect(q.get("sd"))} / {effect(d.get("sd"))} |')
    if SEQ_REF in s:
        print('\nsequential over the reference (each window\'s figure over the duet\'s other '
              'OSD\'s, read over the same window and not restarted for it): sd of the '
              'per-round log ratio\n')
        print('| metric | sequential sd | seq/ref sd | duet sd | rounds | '
              '5-round effect (seq / seq/ref / duet) |')
        print('|---|---|---|---|---|---|')
        for m in METRICS[SEQ_REF]:
            q, f, d = (s[k]['metrics'].get(m, {}) for k in (SEQ, SEQ_REF, DUET))
            if not (q.get('rounds') or f.get('rounds') or d.get('rounds')):
                continue  # a figure this run did not record
            print(f'| {m} | {fmt(q.get("sd"), 4)} | {fmt(f.get("sd"), 4)} | '
                  f'{fmt(d.get("sd"), 4)} | {f.get("rounds", 0)} | {effect(q.get("sd"))} / '
                  f'{effect(f.get("sd"))} / {effect(d.get("sd"))} |')
    for design in (SEQ, DUET):
        loads = s[design]['load']
        mine = [r for r in rows if r['design'] == design]
        if loads:
            took = [t for r in mine for t in r['restart_s']]
            osds = [o for r in mine for o in r['osd'].values()]
            print(f'\n{design}: {len(loads)} windows, load average {min(loads)}-{max(loads)} '
                  f'(median {round(statistics.median(loads), 2)}), '
                  f'median IOPS {s[design]["median_iops"]}; '
                  f'{len(took)} restarts of {min(took)}-{max(took)} s; '
                  f'{sum(1 for o in osds if o["flushes"])} of {len(osds)} OSD windows saw a '
                  f'flush, {sum(1 for o in osds if o["compactions"])} a compaction below L0')


def ab_table(lines: List[Dict[str, Any]], rows: List[Dict[str, Any]]) -> None:
    """The tables of an A/B duet: per round the log ratio B/A of each figure
    and who ran B, then per figure the effect, its noise and the OSD term."""
    head = [r for r in lines if 'placement' in r][0]
    print(f'\narm A: {head["a_options"] or "no bluestore_rocksdb_options at the OSD (default)"}'
          f'\narm B: {head["b_options"]}')
    names = present(rows, PER_OSD)
    print('\nduet A/B: per-round log ratio B/A, same window\n')
    print('| round | ' + ' | '.join(names) + ' | B on | first restarted | IOPS | load |')
    print('|---' * (len(names) + 5) + '|')
    by = {m: {rnd: v for rnd, v, _ in ab_log_ratios(rows, m)} for m in names}
    for r in sorted(rows, key=lambda r: r['round']):
        cells = [fmt(by[m].get(r['round'])) for m in names]
        print(f'| {r["round"] + 1} | ' + ' | '.join(cells) + f' | osd.{r["b_osd"]} | '
              f'osd.{r["first"]} | {r["iops"]:.0f} | {r["load"]} |')
    s = ab_summary(rows)
    x, y = head['x'], head['y']
    print(f'\neffect: mean over the rounds of the log ratio B/A; sd of the per-round log '
          f'ratio; OSD term: mean log ratio osd.{y}/osd.{x} (Y/X), which the crossover '
          f'cancels\n')
    print(f'| metric | effect (log B/A) | B/A | sd | effect/sd | sd within assignment | '
          f'se of the effect | effect, B on osd.{x} | effect, B on osd.{y} | OSD term '
          f'(log Y/X) | rounds |')
    print('|---' * 11 + '|')
    for m in names:
        d = s[m]
        print(f'| {m} | {fmt(d["effect"], 4)} | {fmt(d["ratio"], 3)}x | {fmt(d["sd"], 4)} | '
              f'{fmt(d["effect_over_sd"], 2)} | {fmt(d["sd_within_assignment"], 4)} | '
              f'{fmt(d["se"], 4)} | {fmt(d.get(f"effect_b_on_osd.{x}"), 4)} | '
              f'{fmt(d.get(f"effect_b_on_osd.{y}"), 4)} | {fmt(d["osd_term"], 4)} | '
              f'{d["rounds"]} |')
    loads = [r['load'] for r in rows]
    took = [t for r in rows for t in r['restart_s']]
    print(f'\n{len(rows)} windows, load average {min(loads)}-{max(loads)} (median '
          f'{round(statistics.median(loads), 2)}; at the warm-up\'s start '
          f'{min(r["load_start"] for r in rows)}-{max(r["load_start"] for r in rows)}), '
          f'median IOPS {round(statistics.median(r["iops"] for r in rows))}; '
          f'{len(took)} restarts of {min(took)}-{max(took)} s, every running value checked')
    for arm in ('A', 'B'):
        osds = [r['osd'][str(r[f'{arm.lower()}_osd'])] for r in rows]
        print(f'arm {arm}: {sum(1 for o in osds if o["flushes"])} of {len(osds)} OSD windows '
              f'saw a flush ({sum(o["flushes"] for o in osds)} flushes), '
              f'{sum(1 for o in osds if o["compactions"])} a compaction '
              f'({sum(o["compactions"] for o in osds)}); per OSD window, medians: WAL '
              f'{statistics.median(o["wal_mib"] for o in osds):.2f} MiB, flush '
              f'{statistics.median(o["flush_mib"] for o in osds):.2f} MiB, compaction '
              f'{statistics.median(o["compaction_mib"] for o in osds):.2f} MiB, CPU '
              f'{statistics.median(o["cpu_ms_per_write"] for o in osds):.4f} ms per write, '
              f'kv_sync_lat {statistics.median(o["kv_sync_lat_ms"] for o in osds):.3f} ms, '
              f'write-amp {statistics.median(o["write_amp"] for o in osds):.3f}')
        extra = [m for m in names if m in PERF_CONTEXT or m in SUBMITS]
        if extra:
            print(f'arm {arm}, RocksDB\'s figures per OSD window, medians: ' + ', '.join(
                f'{m} {fmt(median_of(o.get(m) for o in osds), 4)}' for m in extra))
    if any(m in PERF_CONTEXT or m in SUBMITS for m in names):
        detect_table(names, s, rows)


def detect_table(names: Sequence[str], s: Dict[str, Any], rows: List[Dict[str, Any]]) -> None:
    """Per figure: the effect, t (effect over its standard error), rounds with
    B above A, and the smallest effect a 10-round duet would detect at 90%
    power (one-sided 5%) at this run's sd within assignment."""
    print('\nper figure: t = effect / se; smallest effect (log) 10 rounds detect at 90% power '
          '= (1.645 + 1.28) * sd within assignment / sqrt(10)\n')
    print('| metric | effect (log B/A) | B/A | sd within assignment | t | rounds with B above A '
          '| 10-round detectable effect (log) | as a ratio |')
    print('|---' * 8 + '|')
    for m in names:
        d = s[m]
        sd, se = d['sd_within_assignment'], d['se']
        t = d['effect'] / se if d['effect'] is not None and se else None
        det = (1.645 + 1.28) * sd / math.sqrt(10) if sd is not None else None
        above = sum(1 for _, v, _ in ab_log_ratios(rows, m) if v is not None and v > 0)
        print(f'| {m} | {fmt(d["effect"], 4)} | {fmt(d["ratio"], 3)}x | {fmt(sd, 4)} | '
              f'{fmt(t, 2)} | {above} of {d["rounds"]} | {fmt(det, 4)} | '
              f'{"-" if det is None else f"{math.exp(det):.3f}x"} |')


def set_arm(osd: int, options: str) -> Tuple[float, str]:
    """Set (or, for '', remove) bluestore_rocksdb_options at osd.N, restart
    it and check its running value; the restart's seconds and that value."""
    if options:
        ceph('config', 'set', f'osd.{osd}', OPTIONS, options)
    else:
        ceph('config', 'rm', f'osd.{osd}', OPTIONS)
    want = options or ceph('config', 'get', f'osd.{osd}', OPTIONS).strip()
    t = time.time()
    restart(osd)
    took = round(time.time() - t, 1)
    running = ceph('config', 'show', f'osd.{osd}', OPTIONS).strip()
    if running != want:
        raise SystemExit(f'osd.{osd} runs {OPTIONS}={running!r}, not {want!r}')
    return took, running


def ab_main(a: argparse.Namespace, x: int, y: int) -> None:
    """The A/B duet with crossover (--b-options)."""
    rows: List[Dict[str, Any]] = []
    cl = DuetLoad((x, y), y, f'duetab{int(time.time())}', a.space, a.object_size,
                  a.threads, a.pool, seed=a.seed)
    with cl:
        try:
            print(json.dumps({'placement': cl.placement, 'x': x, 'y': y,
                              'a_options': a.options, 'b_options': a.b_options,
                              'warmup_s': a.warmup, 'window_s': a.window,
                              'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                              'version': ceph_json('version').get('version')}), flush=True)
            for o in (x, y):
                set_arm(o, a.options)
            precondition(cl.load, a)
            longest = 0.0
            for rnd in range(a.rounds):
                if a.until and rnd and too_late(a.until, longest):
                    print(json.dumps({'stopped': f'round {rnd + 1} would end after {a.until}'}),
                          flush=True)
                    break
                t_round = time.time()
                b_osd, a_osd = (y, x) if rnd % 2 == 0 else (x, y)
                order = [x, y] if (rnd // 2) % 2 == 0 else [y, x]
                took_each = []
                for o in order:
                    took, _ = set_arm(o, a.b_options if o == b_osd else a.options)
                    took_each.append(took)
                rows.append(dict(window(cl.load, [x, y], a.warmup, a.window),
                                 design=DUET, round=rnd, x=x, y=y, first=order[0],
                                 a_osd=a_osd, b_osd=b_osd, restart_s=took_each,
                                 running_checked=True))
                print(json.dumps(rows[-1]), flush=True)
                longest = max(longest, time.time() - t_round)
        finally:
            for o in (x, y):
                ceph('config', 'rm', f'osd.{o}', OPTIONS)
    print(json.dumps({'summary': {'ab': ab_summary(rows), 'rounds': len(rows),
                                  'window_s': a.window, 'warmup_s': a.warmup,
                                  'removed': cl.removed}}), flush=True)


def too_late(until: str, longest: float) -> bool:
    """Whether a round as long as `longest` would end after UTC HH:MM."""
    hh, mm = (int(v) for v in until.split(':'))
    now = time.gmtime()
    return (hh * 60 + mm) * 60 - (now.tm_hour * 3600 + now.tm_min * 60 + now.tm_sec) < longest


def precondition(load: Any, a: argparse.Namespace) -> None:
    """The keyspace written once before the first round, each part's record printed."""
    passes, pre = write_once(load, a.fill, a.precondition)
    if passes:
        print(json.dumps(passes), flush=True)
    print(json.dumps(pre), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--osds', default='0,1', help='the duet\'s OSDs X,Y')
    ap.add_argument('--seq-osd', type=int, default=None,
                    help='the sequential design\'s OSD (one of --osds; default: Y)')
    ap.add_argument('--rounds', type=int, default=6)
    ap.add_argument('--warmup', type=float, default=10)
    ap.add_argument('--window', type=float, default=20)
    ap.add_argument('--space', type=int, default=1 << 30)
    ap.add_argument('--object-size', type=int, default=1 << 20)
    ap.add_argument('--threads', type=int, default=16)
    ap.add_argument('--pool', default='')
    ap.add_argument('--precondition', type=int, default=1 << 30,
                    help='bytes of 4 KiB writes at random offsets written once before the '
                    'first round (after --fill\'s passes, if given)')
    ap.add_argument('--fill', action='store_true',
                    help='before the first round, the session\'s preconditioning passes')
    ap.add_argument('--options', default='',
                    help='bluestore_rocksdb_options every arm runs (default: the OSDs\')')
    ap.add_argument('--b-options', default='',
                    help='an A/B duet with crossover instead: arm B\'s '
                    'bluestore_rocksdb_options (arm A runs --options, default: none set)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--until', default='',
                    help='UTC HH:MM: start no round that would end after it (by the '
                    'longest round so far)')
    ap.add_argument('--table', metavar='JSONL', help='no lab: the tables of a run\'s output')
    a = ap.parse_args()
    if a.table:
        table(a.table)
        return
    x, y = (int(v) for v in a.osds.split(','))
    if a.b_options:
        if x == y:
            raise SystemExit('--osds must be two distinct OSDs')
        ab_main(a, x, y)
        return
    seq_osd = y if a.seq_osd is None else a.seq_osd
    if seq_osd not in (x, y) or x == y:
        raise SystemExit('--seq-osd must be one of two distinct --osds')
    # the sequential windows also read the duet's other OSD, not restarted
    # for them: a reference over the same seconds (the 'seq/ref' figures)
    ref = x if seq_osd == y else y
    rng = random.Random(a.seed)
    rows: List[Dict[str, Any]] = []
    cl = DuetLoad((x, y), seq_osd, f'duet{int(time.time())}', a.space, a.object_size,
                  a.threads, a.pool, seed=a.seed,
                  options={OPTIONS: a.options} if a.options else None)
    with cl:
        print(json.dumps({'placement': cl.placement, 'x': x, 'y': y, 'seq_osd': seq_osd,
                          'warmup_s': a.warmup, 'window_s': a.window,
                          'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                          'version': ceph_json('version').get('version')}), flush=True)
        for o in (x, y):
            restart(o)
        precondition(cl.load, a)
        longest = 0.0
        for rnd in range(a.rounds):
            if a.until and rnd and too_late(a.until, longest):
                print(json.dumps({'stopped': f'round {rnd + 1} would end after {a.until}'}),
                      flush=True)
                break
            t_round = time.time()
            designs = [SEQ, DUET]
            rng.shuffle(designs)
            for design in designs:
                if design == SEQ:
                    arms = ['A', "A'"]
                    rng.shuffle(arms)
                    for arm in arms:
                        t = time.time()
                        restart(seq_osd)
                        took = round(time.time() - t, 1)
                        rows.append(dict(window(cl.load, [seq_osd, ref], a.warmup, a.window),
                                         design=SEQ, round=rnd, arm=arm, seq_osd=seq_osd,
                                         ref=ref, restart_s=[took]))
                        print(json.dumps(rows[-1]), flush=True)
                else:
                    order = [x, y] if rnd % 2 == 0 else [y, x]
                    took_each = []
                    for o in order:
                        t = time.time()
                        restart(o)
                        took_each.append(round(time.time() - t, 1))
                    rows.append(dict(window(cl.load, [x, y], a.warmup, a.window),
                                     design=DUET, round=rnd, x=x, y=y, first=order[0],
                                     restart_s=took_each))
                    print(json.dumps(rows[-1]), flush=True)
            longest = max(longest, time.time() - t_round)
    print(json.dumps({'summary': dict(summary(rows), rounds=len({r['round'] for r in rows}),
                                      window_s=a.window, warmup_s=a.warmup,
                                      removed=cl.removed)}), flush=True)


if __name__ == '__main__':
    main()
