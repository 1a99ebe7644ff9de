#!/usr/bin/env python3
"""RocksDB's write bytes per client byte on every OSD, in short and steady windows.

A lab measurement for the steady-state write-amplification model: for each
of five bluestore_rocksdb_options strings, set on ALL OSDs of a lab of its
own (`ceph config set osd.N`, or `config rm` for the release's default, then
each OSD restarted through the orchestrator: benchlib.Lab.apply), under
fio's rbd engine (4 KiB random writes, iodepth 16, inside the lab's root
through `ceph-lab exec`) on a filled image of a size-3 pool (benchlib.fio_image,
as run-bench's client check), after a 10-s warm-up:

- short: one 60-s window;
- steady: right after it, fio in chunks of at most 60 s until every OSD's
  RocksDB did at least one compaction below L0 (any column family) and its
  WAL bytes exceed write_buffer_size x min_write_buffer_number_to_merge x
  level0_file_num_compaction_trigger x 12 (column families) of the config,
  at most --steady-limit (900) s; with --steady-min, at least that long
  (equal windows for strings whose L0 cycles differ in length).

Per (config, window, OSD) one JSON line in qa/bench/results/wear-windows.jsonl,
written as each window ends: seconds, the OSD's client bytes (osd.op_w_in_bytes
delta: the writes it took as primary; its replica writes, osd.subop_w_in_bytes,
are recorded beside them), RocksDB's own WAL, flush and compaction-write bytes
and its flushes and compactions below L0 (rocksdb_stats from `dump_objectstore_kv_stats`,
RocksDB's statistics on at every OSD: benchlib.stats_on), BlueFS
bytes_written_wal/sst/slow deltas and db_used_bytes at the end, fio's IOPS
(cluster-wide) and write completion latency p99 over the window (fio's clat
histogram, json+ bins of every chunk merged), the load average, and the
entries and dups of the PG logs each OSD holds at the window's edges.
--osd-set sets a Ceph option for one config's passes (trimming those logs
stopped: doc/bench/wear-floor.md). --canary N sets each config on osd.N
alone, as a session does, the others staying on --fill-on's: its ratio
beside the peers' under the same load.

Configurations: `default` (Tentacle's release default: the option removed;
its string from `ceph config help`), `tiny` (benchlib.BLOG_SMALL, the
small-memtable string of doc/bench/tiny-vs-default-rbd-rocksdb.md's command
line), `pacific` (rocksdb_options.PACIFIC_DEFAULT: the string the host's
16.2.15 `ceph-conf -D` gave the run in wear-windows.jsonl), `new_tuning` and
`new_tuning_lz4` (rocksdb_options); and SPACE_CONFIGS, candidates of the
module's search space that reach the steady condition within minutes here.

With --client module the load is the module's own instead of fio's:
workload.ClientWorkload (4 KiB writes at random offsets of 4-MiB objects
through librados, the module's default writes in flight), over --image-mib
of objects in every PG of the same pool, filled and overwritten once as a
session preconditions its canary; each chunk a run of this script inside the
lab's root (--module-load); `fio_iops` is then that load's IOPS and no
latency is kept.  The claim a session makes is measured under
that load on one canary; this measures it on every OSD.  The canary holds a
replica of every one of the load's objects (client_space), an OSD here
image x 3 / OSDs: --per-osd-mib sizes the image so that each OSD holds what
the canary did (in the wear model, compaction per flushed byte grows with
the DB: wear_model.shape).

Command line of the run in qa/bench/results/wear-windows.jsonl:

    BENCH_LAB_DIR=/var/tmp/wear/lab BENCH_LAB_MON_PORT=21800 \\
        python3 qa/bench/wear_windows.py --up --image-mib 4096 --until 15:00

and its table: `python3 qa/bench/wear_windows.py --table qa/bench/results/wear-windows.jsonl`.
The run in qa/bench/results/wear-windows-space.jsonl (the blog string, then SPACE_CONFIGS):

    BENCH_LAB_DIR=/var/tmp/wearfit/lab BENCH_LAB_MON_PORT=21800 \\
        python3 qa/bench/wear_windows.py --up --image-mib 4096 --until 18:40 \\
        --out qa/bench/results/wear-windows-space.jsonl --configs tiny,space
"""
import argparse
import datetime
import functools
import json
import math
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib  # noqa: E402
from benchlib import FIO_IMAGE, Lab, log  # noqa: E402
from rocks_autotune import perf_counters, rocksdb_stats  # noqa: E402
from rocks_autotune.rocksdb_options import (NEW_TUNING, NEW_TUNING_LZ4,  # noqa: E402
                                            PACIFIC_DEFAULT, parse_options, parse_sharding,
                                            parse_size)
from rocks_autotune.cluster import RadosIo  # noqa: E402
from rocks_autotune.session_settings import Settings  # noqa: E402
from rocks_autotune.space import MiB, Candidate, SearchSpace, cycle_bytes  # noqa: E402
from rocks_autotune.workload import FILL_WRITE, NAMESPACE, ClientWorkload  # noqa: E402
from wear_model_check import SHARDING  # noqa: E402

POOL = 'ratbench'  # run_bench's pool
OUT = os.path.join(benchlib.RESULTS, 'wear-windows.jsonl')
COLUMN_FAMILIES = 12
# Candidates of the module's search space small enough to reach the steady
# condition within --steady-limit on the lab, rendered over the blog string
# as a session renders one over its canary's options (SearchSpace.render):
# 64 memtables each, above the lab's sharding's own merge count of 32 (L, P)
# as the space's rules ask.  (write_buffer_size MiB, merge, L0 trigger,
# max_bytes_for_level_base MiB, multiplier, compression)
SPACE = [(4, 1, 2, 256, 8, 'none'), (4, 1, 4, 256, 10, 'lz4'), (8, 1, 2, 512, 8, 'none'),
         (16, 1, 2, 1024, 8, 'lz4'), (8, 2, 4, 256, 4, 'snappy'), (16, 2, 2, 512, 6, 'none'),
         (4, 2, 8, 512, 10, 'lz4')]
SPACE_CONFIGS = {f'wb{w}_m{m}_t{t}_{comp}': SearchSpace.render(
    parse_options(benchlib.BLOG_SMALL), Candidate(64, w * MiB, m, t, b * MiB, x, comp))
    for w, m, t, b, x, comp in SPACE}
BLUEFS = {'bluefs_wal_bytes': ('bluefs', 'bytes_written_wal'),
          'bluefs_sst_bytes': ('bluefs', 'bytes_written_sst'),
          'bluefs_slow_bytes': ('bluefs', 'bytes_written_slow')}


def steady_wal(options: str) -> int:
    """WAL bytes a steady window must exceed on every OSD: the old rule
    (flush x L0 trigger x 12 families), at most every family's L0 cycle as
    the module counts it, the WAL limit's early flushes included
    (space.cycle_bytes over Tentacle's sharding)."""
    opts = parse_options(options)
    cycle = cycle_bytes(parse_sharding(SHARDING), SearchSpace.candidate_from_options(opts),
                        parse_size(opts.get('max_total_wal_size', '0')))
    return min(cycle, benchlib.flush_bytes(options) * benchlib.l0_trigger(options)
               * COLUMN_FAMILIES)


def fio_chunk(lab: Lab, seconds: float, depth: Optional[int] = None) -> Dict[str, Any]:
    """fio's rbd engine as benchlib.fio_rbd runs it (`depth` writes in flight,
    default 16), with json+ output: writes, seconds, its own p99 and the write
    clat histogram (ns -> count)."""
    n = max(1, int(round(seconds)))
    out = lab.lab('exec', '--', 'fio', '--name=ratbench', '--ioengine=rbd',
                  '--clientname=admin', f'--pool={POOL}', f'--rbdname={FIO_IMAGE}',
                  '--rw=randwrite', '--bs=4k', f'--iodepth={depth or 16}', '--numjobs=1',
                  '--time_based', f'--runtime={n}', '--output-format=json+',
                  timeout=max(600.0, n * 3))
    r = benchlib.parse_fio(out)
    clat = json.loads(out[out.index('{'):])['jobs'][0]['write']['clat_ns']
    return dict(r, p99_ns=float(clat['percentile']['99.000000']),
                bins={int(k): int(v) for k, v in clat.get('bins', {}).items()})


def run_module_load(lab: Lab, image_mib: int, what: str, timeout: float,
                    depth: Optional[int] = None) -> Dict[str, Any]:
    """This script's --module-load `what` inside the lab's root: its JSON line."""
    out = lab.lab('exec', '--', 'python3', os.path.abspath(__file__), '--image-mib',
                  str(image_mib), '--module-load', what,
                  *(['--depth', f'load={depth}'] if depth else []), timeout=timeout)
    return dict(json.loads(out.strip().splitlines()[-1]))


def module_chunk(lab: Lab, seconds: float, image_mib: int,
                 depth: Optional[int] = None) -> Dict[str, Any]:
    """The module's client load for `seconds` (`depth` writes in flight, default
    client_threads'): writes and seconds (no latency histogram: the module's
    load keeps none)."""
    r = run_module_load(lab, image_mib, str(max(1, int(round(seconds)))),
                        max(600.0, seconds * 3), depth)
    return dict(r, p99_ns=None, bins={})


def module_fill(lab: Lab, image_mib: int) -> float:
    """The module's objects written end to end, then every block once: seconds."""
    t = time.time()
    log(f'module load: {run_module_load(lab, image_mib, "fill", 4 * 3600.0)}')
    return time.time() - t


def module_load(what: str, image_mib: int, depth: Optional[int] = None) -> None:
    """Inside the lab's root (--module-load): the module's ClientWorkload over
    image_mib of its objects in every PG of POOL, `fill` or SECONDS of writes;
    prints one JSON line."""
    import rados
    cluster = rados.Rados(conffile=os.environ.get('CEPH_CONF', ''))
    cluster.connect()
    try:
        ioctx = cluster.open_ioctx(POOL)
        ioctx.set_namespace(NAMESPACE)
        names = [f'wear.{i}' for i in range(image_mib * MiB // FILL_WRITE)]
        # a new seed a chunk, or every chunk would write the same offsets
        load = ClientWorkload(RadosIo(ioctx, POOL, NAMESPACE), names, FILL_WRITE,
                              in_flight=depth or Settings().client_threads, seed=time.time_ns())
        if what == 'fill':
            out = dict(benchlib.fill_all(load), **benchlib.overwrite_all(load))
        elif what.startswith('read:'):  # the session's read probe, over every object
            probe = None
            while probe is None:
                probe = load.read_probe(float(what[5:]))
            out = probe.to_json()
        else:
            nbytes, secs = benchlib.drive_until(load, time.time() + float(what))
            out = {'writes': nbytes // load.block_size, 'seconds': secs}
        ioctx.close()
    finally:
        cluster.shutdown()
    print(json.dumps(out))


# a run of the load: (lab, seconds) -> writes, seconds, p99_ns, bins
Chunk = Callable[[Lab, float], Dict[str, Any]]


def p99_us(bins: Dict[int, int]) -> Optional[float]:
    """The 99th percentile of a merged fio clat histogram, in microseconds."""
    total = sum(bins.values())
    if not total:
        return None
    cum = 0
    for ns in sorted(bins):
        cum += bins[ns]
        if cum >= 0.99 * total:
            return ns / 1000.0
    return None


def cf_totals(before: rocksdb_stats.Counts, after: rocksdb_stats.Counts) -> Tuple[int, int]:
    """Flushes and compactions below L0 over every column family."""
    fl = cp = 0
    for cf, (f1, c1, *_) in after['c'].items():
        f0, c0, *_ = before['c'].get(cf, [0, 0])
        fl += int(f1) - int(f0)
        cp += int(c1) - int(c0)
    return fl, cp


ONODE_GAUGES = ('onodes', 'onode_extents', 'onode_blobs', 'onode_reshard')


def read_osd(lab: Lab, osd: int) -> Dict[str, Any]:
    dump = lab.perf_dump(osd)
    kv = benchlib.kv_counts(lab, osd)
    if kv is None:
        raise RuntimeError(f'osd.{osd} gives no RocksDB statistics')
    return {'snap': perf_counters.snapshot(dump), 'kv': kv,
            'db_used_bytes': int(dump['bluefs']['db_used_bytes']),
            # replica writes, which op_w_in_bytes (this OSD as primary) leaves out
            'subop_w_in_bytes': int(dump['osd']['subop_w_in_bytes']),
            # the extent maps in its onode cache: their size decides how many
            # bytes a 4 KiB write rewrites, and how often one key is rewritten
            'onode': {k: dump['bluestore'].get(k) for k in ONODE_GAUGES}}


def delta(before: Dict[str, Any], after: Dict[str, Any], key: Tuple[str, str]) -> int:
    """A perf counter's change between two perf_counters.snapshot()s."""
    return int(after[key[0]][key[1]]) - int(before[key[0]][key[1]])


def pg_logs(lab: Lab, pool: str) -> Dict[int, Tuple[int, int]]:
    """Per OSD, the log entries and dups of the pool's PGs it holds (acting):
    what trimming a PG's log writes (an entry's delete, a dup's put and
    delete) starts once its log reaches the OSD's target."""
    dump = lab.ceph_json('pg', 'dump', 'pgs')
    stats = dump['pg_stats'] if isinstance(dump, dict) else dump
    pool_id = str(lab.ceph_json('osd', 'pool', 'get', pool, 'size')['pool_id'])
    out: Dict[int, Tuple[int, int]] = {}
    for p in stats:
        if p['pgid'].split('.')[0] == pool_id:
            for o in p['acting']:
                n, d = out.get(o, (0, 0))
                out[o] = (n + int(p['log_size']), d + int(p['log_dups_size']))
    return out


def loadavg() -> List[float]:
    return [round(x, 2) for x in os.getloadavg()]


def window(lab: Lab, osds: List[int], name: str, options: str, kind: str,
           limit: float, wal_needed: int, deadline: float, common: Dict[str, Any],
           min_seconds: float = 0.0, chunk: Chunk = fio_chunk) -> List[Dict[str, Any]]:
    """One window over every OSD: `short` one chunk of the load (`chunk`:
    fio's or the module's) of `limit` s; `steady` chunks until every OSD
    compacted below L0 and its WAL passed `wal_needed`, and `min_seconds`
    passed, at most `limit` s (or `deadline`)."""
    load0 = loadavg()
    t0 = time.time()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')
    before = {o: read_osd(lab, o) for o in osds}
    logs0 = pg_logs(lab, POOL)
    writes = secs = 0.0
    bins: Dict[int, int] = {}
    chunk_p99: List[float] = []
    reached: Optional[bool] = None
    cut = False
    while True:
        left = min(limit - (time.time() - t0), deadline - time.time())
        if left < 5:
            cut = deadline - time.time() < 5 and limit - (time.time() - t0) >= 5
            break
        rest = min_seconds - (time.time() - t0)  # chunks end at min_seconds
        r = chunk(lab, left if kind == 'short'
                  else min(60.0, left, rest if rest >= 5 else 60.0))
        writes += r['writes']
        secs += r['seconds']
        if r['p99_ns'] is not None:
            chunk_p99.append(round(r['p99_ns'] / 1000.0, 1))
        for k, v in r['bins'].items():
            bins[k] = bins.get(k, 0) + v
        if kind == 'short':
            break
        now = {o: benchlib.kv_counts(lab, o) for o in osds}
        ok = []
        for o in osds:
            kv = now[o]
            if kv is None:
                ok.append(False)
                continue
            d = rocksdb_stats.delta(before[o]['kv'], kv)
            ok.append(cf_totals(before[o]['kv'], kv)[1] >= 1 and d.wal_bytes > wal_needed)
        log(f'{name} steady {time.time() - t0:.0f} s: osds reached {ok}, load {loadavg()}')
        reached = reached or all(ok)
        if reached and time.time() - t0 >= min_seconds - 5:
            break
    if kind == 'steady' and reached is None:
        reached = False
    after = {o: read_osd(lab, o) for o in osds}
    seconds = time.time() - t0
    logs1 = pg_logs(lab, POOL)
    load1 = loadavg()
    rows = []
    for o in osds:
        b, a = before[o], after[o]
        kd = rocksdb_stats.delta(b['kv'], a['kv'])
        flushes, compactions = cf_totals(b['kv'], a['kv'])
        client = delta(b['snap'], a['snap'], perf_counters.CLIENT_BYTES)
        rocks = kd.wal_bytes + kd.flush_bytes + kd.compaction_bytes
        row: Dict[str, Any] = dict(
            common, config=name, options=options, window=kind, osd=o, started=started,
            seconds=round(seconds, 1), client_bytes=client,
            subop_w_in_bytes=a['subop_w_in_bytes'] - b['subop_w_in_bytes'],
            rocksdb_wal_bytes=kd.wal_bytes, rocksdb_flush_bytes=kd.flush_bytes,
            rocksdb_compaction_bytes=kd.compaction_bytes,
            # what the flushes and compactions compressed, before: their ratio
            rocksdb_compressed_raw_bytes=kd.compressed_raw,
            flushes=flushes, compactions=compactions, busiest_cf=kd.busiest_cf,
            busiest_cf_flushes=kd.flushes, busiest_cf_compactions=kd.compactions,
            **{k: delta(b['snap'], a['snap'], key)
               for k, key in BLUEFS.items()},
            db_used_bytes_end=a['db_used_bytes'],
            **{f'{k}_end': a['onode'][k] for k in ONODE_GAUGES},
            pg_log_entries=[logs0.get(o, (0, 0))[0], logs1.get(o, (0, 0))[0]],
            pg_log_dups=[logs0.get(o, (0, 0))[1], logs1.get(o, (0, 0))[1]],
            write_amp=rocks / client if client else None,
            fio_iops=round(writes / secs, 1) if secs else None,
            fio_seconds=round(secs, 1), fio_writes=int(writes),
            fio_write_clat_p99_us=p99_us(bins), fio_chunk_p99_us=chunk_p99,
            steady_wal_needed=wal_needed if kind == 'steady' else None,
            steady_reached=reached,
            osd_reached=(kd.wal_bytes > wal_needed and compactions >= 1)
            if kind == 'steady' else None,
            cut_by_deadline=cut, load_avg_start=load0, load_avg_end=load1)
        rows.append(row)
    return rows


def until(hhmm: str, now: datetime.datetime) -> float:
    """--until's HH:MM (UTC) as a time after `now`: a time already past today is tomorrow's."""
    h, m = (int(x) for x in hhmm.split(':'))
    deadline = now.replace(hour=h, minute=m, second=0, microsecond=0).timestamp()
    return deadline + 86400 if deadline < now.timestamp() else deadline


def run(a: argparse.Namespace) -> None:
    deadline = until(a.until, datetime.datetime.now(datetime.timezone.utc)) if a.until \
        else time.time() + 10 * 86400
    lab = Lab()
    osds: List[int] = []
    osd_opts = sorted({k for sets in a.osd_set.values() for k in sets})  # --osd-set's
    if a.up:
        lab.up(flash=True, fresh=True)
    try:
        osds = sorted(json.load(open(os.path.join(lab.dir, 'lab.json')))['osds'])
        default = lab.release_default()
        configs = {'default': ('', default), 'tiny': (benchlib.BLOG_SMALL,) * 2,
                   'pacific': (PACIFIC_DEFAULT,) * 2,
                   'new_tuning': (NEW_TUNING,) * 2, 'new_tuning_lz4': (NEW_TUNING_LZ4,) * 2,
                   **{n: (o, o) for n, o in SPACE_CONFIGS.items()}}
        configs.update({n: (o, o) for n, o in a.config})  # --config NAME=OPTIONS
        # in --configs' order, a name repeated for interleaved passes (A,B,A,B)
        order = [(n, configs[n]) for n in configs]
        if a.configs:
            order = [(n, configs[n]) for x in a.configs.split(',')
                     for n in (SPACE_CONFIGS if x == 'space' else [x])]
        for o in osds:
            benchlib.stats_on(lab, o)
        benchlib.make_pool(lab, POOL, a.pg_num)
        module = a.client == 'module'
        if a.per_osd_mib:  # the pool spreads the image's bytes x REPLICAS over the OSDs
            a.image_mib = -(-a.per_osd_mib * len(osds) // benchlib.REPLICAS)
        facts = lab.facts()
        log(f'lab: {facts}')
        if a.fill_on:  # its memtables from the start, not the default's 1 GiB of WAL
            for o in osds:
                lab.apply(o, configs[a.fill_on][0])
        if a.filled:  # a run before on this lab (--keep-lab) filled the same image
            fill = 0.0
        elif module:
            fill = module_fill(lab, a.image_mib)
        else:
            benchlib.ensure_fio(lab)
            fill = benchlib.fio_image(lab, POOL, a.image_mib << 20)
        log(f'{a.image_mib} MiB filled and overwritten once in {fill:.0f} s ({a.client})')
        chunk = functools.partial(module_chunk, image_mib=a.image_mib) if module else fio_chunk
        aged: Dict[str, Any] = {}
        if a.age:  # a young DB's L1 still grows: its first windows compact less
            aged = chunk(lab, a.age, depth=a.depth.get(a.fill_on))
            log(f'aged: {a.age:.0f} s of the load on {a.fill_on or "what the OSDs ran"}, '
                f'{aged.get("writes")} writes')
        common = {'lab': lab.dir, 'version': facts['version'], 'commit': facts['commit'],
                  'osds': len(osds), 'image_mib': a.image_mib, 'image_fill_seconds': round(fill),
                  'per_osd_mib': round(a.image_mib * benchlib.REPLICAS / len(osds)),
                  'pg_num': a.pg_num,
                  'steady_min': a.steady_min, 'client': a.client, 'aged_seconds': a.age,
                  'aged_writes': aged.get('writes')}
        passes: Dict[str, int] = {}
        for name, (setting, options) in order:
            passes[name] = passes.get(name, 0) + 1
            if deadline - time.time() < 240:
                log(f'{name}: left out, too close to --until')
                continue
            for opt in osd_opts:
                val = a.osd_set.get(name, {}).get(opt)
                lab.ceph('config', *(('set', 'osd', opt, val) if val else ('rm', 'osd', opt)))
            t = time.time()
            # the option set at osd.N (removed for default), then a restart;
            # --canary: on that OSD alone, as a session sets its canary
            applied = osds if a.canary is None else [a.canary]
            for o in applied:
                lab.apply(o, setting)
            restart = round(time.time() - t, 1)
            got = lab.ceph('config', 'show', f'osd.{applied[0]}', benchlib.OPTION).strip()
            log(f'{name}: osd.{",".join(map(str, applied))} restarted in {restart} s; '
                f'osd.{applied[0]} runs {got}')
            load = functools.partial(chunk, depth=a.depth.get(name))
            load(lab, a.warmup)
            for kind, limit in (('short', a.short), ('steady', a.steady_limit)):
                rows = window(lab, osds, name, options, kind, limit, steady_wal(options),
                              deadline, dict(common, restart_seconds=restart,
                                             option_running=got, warmup=a.warmup,
                                             osd_set=a.osd_set.get(name, {}),
                                             canary=a.canary, depth=a.depth.get(name),
                                             config_pass=passes[name]), a.steady_min, load)
                if kind == 'steady' and a.read_probe:  # as a session's, writes stopped
                    probe = run_module_load(lab, a.image_mib, f'read:{a.read_probe}', 600.0)
                    for r in rows:
                        r.update({f'read_{k}': probe[k] for k in ('iops', 'mean_ms', 'p99_ms')})
                with open(a.out, 'a') as f:
                    for r in rows:
                        f.write(json.dumps(r) + '\n')
                log(f'{name} {kind}: {rows[0]["seconds"]} s, IOPS {rows[0]["fio_iops"]}, '
                    f'write-amp {[round(r["write_amp"] or 0, 3) for r in rows]}, '
                    f'reached {rows[0]["steady_reached"]}, load {rows[0]["load_avg_end"]}')
    finally:
        try:
            for opt in osd_opts:
                lab.ceph('config', 'rm', 'osd', opt)  # --osd-set's, as before the run
            for o in osds:
                benchlib.restore(lab, o)
        except Exception as e:  # the lab goes down anyway
            log(f'restore failed: {e}')
        if not a.keep_lab:
            lab.down()


def med(xs: List[Optional[float]]) -> Optional[float]:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def table(path: str) -> str:
    """Per config and window kind: medians over OSDs."""
    rows = [json.loads(x) for x in open(path) if x.strip()]
    groups: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r['config'], r['window']), []).append(r)

    def div(a: Any, b: Any) -> Optional[float]:
        return a / b if a is not None and b else None

    def f(v: Optional[float], fmt: str) -> str:
        return '–' if v is None else fmt.format(v)

    out = ['| config | window | OSDs | write-amp (wal+flush+compaction)/client | flush/wal '
           '| compaction/flush | IOPS | p99 µs | seconds | steady reached | load avg (end) |',
           '|---|---|---|---|---|---|---|---|---|---|---|']
    for (name, kind), rs in groups.items():
        wa = med([div(r['rocksdb_wal_bytes'] + r['rocksdb_flush_bytes']
                      + r['rocksdb_compaction_bytes'], r['client_bytes']) for r in rs])
        fw = med([div(r['rocksdb_flush_bytes'], r['rocksdb_wal_bytes']) for r in rs])
        cf = med([div(r['rocksdb_compaction_bytes'], r['rocksdb_flush_bytes']) for r in rs])
        reached = rs[0]['steady_reached']
        out.append(f'| {name} | {kind} | {len(rs)} | {f(wa, "{:.3f}")} | {f(fw, "{:.3f}")} '
                   f'| {f(cf, "{:.3f}")} | {f(med([r["fio_iops"] for r in rs]), "{:.0f}")} '
                   f'| {f(med([r["fio_write_clat_p99_us"] for r in rs]), "{:.0f}")} '
                   f'| {f(med([r["seconds"] for r in rs]), "{:.0f}")} '
                   f'| {"–" if reached is None else "yes" if reached else "no"} '
                   f'| {"/".join(str(x) for x in rs[0]["load_avg_end"])} |')
    return '\n'.join(out)


def t_interval(ratios: List[float]) -> str:
    """The geometric mean of `ratios` and its 95% t interval (log scale)."""
    from scipy import stats  # here only, as benchlib.aa_sd
    logs = [math.log(x) for x in ratios]
    n, m = len(logs), statistics.mean(logs)
    h = stats.t.ppf(0.975, n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return f'{math.exp(m):.3f}x [{math.exp(m - h):.3f}, {math.exp(m + h):.3f}] (df {n - 1})'


def pairs(path: str) -> str:
    """Each later config over the first, pass by pass (each OSD's write-amp
    over its own, fio's IOPS), then over the passes; the first config
    against itself across passes (its A/A-like spread)."""
    rows = [json.loads(x) for x in open(path) if x.strip()]
    a, *others = dict.fromkeys(r['config'] for r in rows)

    def get(c: str, p: int, w: str) -> List[Dict[str, Any]]:
        return sorted((r for r in rows if r['config'] == c and r['config_pass'] == p
                       and r['window'] == w), key=lambda r: r['osd'])
    out: List[str] = []
    for b in others:
        out += [f'| pass | steady write-amp {b}/{a}, per OSD | steady IOPS | short write-amp '
                f'| short IOPS | steady seconds {a} / {b} | load avg, 1 min, over the pair |',
                '|---|---|---|---|---|---|---|']
        medians, iops, cut = [], [], []
        for p in sorted({r['config_pass'] for r in rows if r['config'] == b}):
            sa, sb = get(a, p, 'steady'), get(b, p, 'steady')
            ha, hb = get(a, p, 'short'), get(b, p, 'short')
            if not (sa and sb and ha and hb):
                continue
            # a window its limit ended before the steady rule held (files
            # before the field: unknown, not counted as cut)
            cut += [f'{r["config"]} in pass {p}'
                    for r in (sa[0], sb[0]) if r.get('steady_reached') is False]
            wr = [y['write_amp'] / x['write_amp'] for x, y in zip(sa, sb)]
            hr = [y['write_amp'] / x['write_amp'] for x, y in zip(ha, hb)]
            loads = [v for r in (ha[0], sa[0], hb[0], sb[0])
                     for v in (r['load_avg_start'][0], r['load_avg_end'][0])]
            # --canary: its own ratio (the others ran the first config in both)
            can = sa[0].get('canary')
            medians.append(statistics.median(wr) if can is None
                           else wr[[x['osd'] for x in sa].index(can)])
            iops.append(sb[0]['fio_iops'] / sa[0]['fio_iops'])
            out.append(f'| {p} | {", ".join(f"{x:.3f}" for x in wr)} | {iops[-1]:.3f} '
                       f'| {", ".join(f"{x:.3f}" for x in hr)} '
                       f'| {hb[0]["fio_iops"] / ha[0]["fio_iops"]:.3f} '
                       f'| {sa[0]["seconds"]:.0f} / {sb[0]["seconds"]:.0f} '
                       f'| {min(loads):.1f}-{max(loads):.1f} |')
        if len(medians) >= 2:
            what = 'medians' if can is None else f'osd.{can}'
            out += ['', f'{b}/{a}, steady write-amp over the passes\' {what}: '
                    f'{t_interval(medians)}; steady IOPS: {t_interval(iops)}']
        if cut:  # write-amp counts only at steady state
            out += ['', 'not at steady state: the steady window of ' + ', '.join(cut)
                    + ' ended at its limit before the steady rule held']
        out.append('')
    own = [get(a, p, 'steady') for p in sorted({r['config_pass'] for r in rows
                                                if r['config'] == a})]
    own = [x for x in own if x]
    if len(own) >= 2:
        io = [x[0]['fio_iops'] for x in own]
        wa = [x[i]['write_amp'] / own[0][i]['write_amp'] for x in own[1:]
              for i in range(min(len(x), len(own[0])))]
        out.append(f'{a} against itself, steady: IOPS max/min {max(io) / min(io):.2f}; '
                   f'write-amp per OSD over its first pass\' {min(wa):.3f}-{max(wa):.3f}')
    return '\n'.join(out)


def reads(path: str) -> str:
    """The read probes after the steady windows (--read-probe), pass by
    pass, each later config over the first; the first against itself."""
    rows = [json.loads(x) for x in open(path) if x.strip()]
    probes = {(r['config'], r['config_pass']): r for r in rows
              if r['window'] == 'steady' and r.get('read_p99_ms')}
    first = next(iter(dict.fromkeys(c for c, _ in probes)), None)
    out = ['| config | pass | read p99 ms | mean ms | IOPS | p99 / the first\'s, same pass '
           '| mean / | IOPS / |', '|---|---|---|---|---|---|---|---|']
    for (c, p), r in probes.items():
        base = probes.get((first, p))
        ratio = ['–'] * 3 if base is None or c == first else [
            f'{r[k] / base[k]:.2f}' for k in ('read_p99_ms', 'read_mean_ms', 'read_iops')]
        out.append(f'| {c} | {p} | {r["read_p99_ms"]:.1f} | {r["read_mean_ms"]:.2f} '
                   f'| {r["read_iops"]:.0f} | {" | ".join(ratio)} |')
    own = [r for (c, _), r in probes.items() if c == first]
    if len(own) >= 2:
        out += ['', f'{first} against itself: ' + '; '.join(
            f'{k} max/min {max(x[f"read_{k}"] for x in own) / min(x[f"read_{k}"] for x in own):.2f}'
            for k in ('p99_ms', 'mean_ms', 'iops'))]
    return '\n'.join(out)


def terms(path: str) -> str:
    """Each steady window, OSD by OSD: RocksDB's flush and
    compaction bytes per WAL byte (the parts a config changes; the WAL per
    client byte it does not), the WAL limits the window passed, and the
    GiB the OSD took in over the file's windows before it (its DB's age
    since the fill: the fill and what ran between windows not counted), and
    the bytes its flushes and compactions compressed per byte they wrote
    (– without compression, or in a file from before that count)."""
    out = ['| started | config | pass | window | steady-min | osd | seconds | WAL limits '
           '| flush / WAL | compaction / WAL | DB used MiB | GiB before | compressed |',
           '|---' * 13 + '|']
    before: Dict[int, int] = {}
    for r in (json.loads(x) for x in open(path) if x.strip()):
        wal, took = r['rocksdb_wal_bytes'], before.get(r['osd'], 0)
        before[r['osd']] = took + r['client_bytes'] + r['subop_w_in_bytes']
        if r['window'] == 'short' or not wal:
            continue
        raw = r.get('rocksdb_compressed_raw_bytes')
        sst = r['rocksdb_flush_bytes'] + r['rocksdb_compaction_bytes']
        limit = parse_size(parse_options(r['options']).get('max_total_wal_size', '0'))
        out.append(f'| {r["started"][11:19]} | {r["config"]} | {r["config_pass"]} '
                   f'| {r["window"]} | {r.get("steady_min", 0):.0f} | {r["osd"]} '
                   f'| {r["seconds"]:.0f} | {f"{wal / limit:.1f}" if limit else "–"} '
                   f'| {r["rocksdb_flush_bytes"] / wal:.3f} '
                   f'| {r["rocksdb_compaction_bytes"] / wal:.3f} '
                   f'| {r["db_used_bytes_end"] >> 20} | {took / 2 ** 30:.1f} '
                   f'| {f"{raw / sst:.2f}" if raw and sst else "–"} |')
    return '\n'.join(out)


def named_config(text: str) -> Tuple[str, str]:
    name, sep, options = text.partition('=')
    if not sep or not name or not options:
        raise argparse.ArgumentTypeError(f'{text!r}: NAME=OPTIONS')
    return name, options


def osd_setting(text: str) -> Tuple[str, str, str]:
    name, _, setting = text.partition(':')
    opt, sep, val = setting.partition('=')
    if not name or not opt or not sep or not val:
        raise argparse.ArgumentTypeError(f'{text!r}: NAME:OPTION=VALUE')
    return name, opt, val


def named_depth(text: str) -> Tuple[str, int]:
    name, sep, n = text.partition('=')
    if not name or not sep or not n.isdigit() or int(n) < 1:
        raise argparse.ArgumentTypeError(f'{text!r}: NAME=WRITES (1 or more)')
    return name, int(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or '').split('\n')[0])
    ap.add_argument('--up', action='store_true', help='bring the lab up fresh first')
    ap.add_argument('--keep-lab', action='store_true', help='leave the lab up at the end')
    ap.add_argument('--table', metavar='FILE', help='no lab: print the markdown table of FILE')
    ap.add_argument('--pairs', metavar='FILE', help='no lab: the second config over the '
                    'first in FILE, pass by pass')
    ap.add_argument('--terms', metavar='FILE', help='no lab: flush and compaction per WAL '
                    'byte of each steady window in FILE')
    ap.add_argument('--out', default=OUT, help='JSONL appended to (default %(default)s)')
    ap.add_argument('--configs', default='', help='only these, comma-separated, in order '
                    '(space: every SPACE_CONFIGS one)')
    ap.add_argument('--config', action='append', default=[], type=named_config,
                    metavar='NAME=OPTIONS', help='a named option string, set on every OSD '
                    '(repeatable); name it in --configs, repeated for interleaved passes')
    ap.add_argument('--image-mib', type=int, default=4096)
    ap.add_argument('--per-osd-mib', type=int, default=0, metavar='MIB',
                    help='instead of --image-mib: the keyspace each OSD holds (image x 3 / '
                    'OSDs), as a session\'s canary holds all of its client_space')
    ap.add_argument('--pg-num', type=int, default=32, help='the pool\'s PGs (default '
                    '%(default)s; a session\'s canary held 50 of the demo pool\'s 64)')
    ap.add_argument('--fill-on', metavar='NAME', help='set config NAME on every OSD before '
                    'the fill (a restart from the release default replays up to 1 GiB of WAL)')
    ap.add_argument('--warmup', type=float, default=10.0)
    ap.add_argument('--short', type=float, default=60.0)
    ap.add_argument('--steady-limit', type=float, default=900.0)
    ap.add_argument('--filled', action='store_true', help='the lab\'s image is filled '
                    'already (a run before with the same image, --keep-lab): no fill')
    ap.add_argument('--age', type=float, default=0.0, metavar='SECONDS',
                    help='after the fill, this long of the load on --fill-on\'s string before '
                    'the first window, as a session\'s canary ran for an hour before its '
                    'steady pair')
    ap.add_argument('--steady-min', type=float, default=0.0, metavar='SECONDS',
                    help='a steady window runs at least this long, steady or not')
    ap.add_argument('--until', default='', help='HH:MM UTC: no window runs past it')
    ap.add_argument('--client', choices=('fio', 'module'), default='fio',
                    help="the load: fio's rbd engine, or the module's own (default %(default)s)")
    ap.add_argument('--osd-set', action='append', default=[], type=osd_setting,
                    metavar='NAME:OPTION=VALUE', help='a Ceph option set for every OSD '
                    'before config NAME\'s passes, removed before the others\' (repeatable)')
    ap.add_argument('--canary', type=int, metavar='OSD', help='set each config on '
                    'osd.OSD alone, restarting it alone, the others on --fill-on\'s (a '
                    'session\'s design, under this load; every OSD measured)')
    ap.add_argument('--depth', action='append', default=[], type=named_depth,
                    metavar='NAME=WRITES', help='writes in flight in config NAME\'s windows '
                    '(repeatable; fio\'s iodepth, default 16, or the module\'s, default '
                    'its client_threads)')
    ap.add_argument('--read-probe', type=float, default=0.0, metavar='SECONDS',
                    help='--client module: after each steady window, the session\'s read '
                    'probe over every object for SECONDS, writes stopped')
    ap.add_argument('--reads', metavar='FILE', help='no lab: the read probes of FILE, '
                    'pass by pass')
    ap.add_argument('--module-load', metavar='fill|SECONDS|read:SECONDS',
                    help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.depth = dict(a.depth)
    if a.read_probe and a.client != 'module':
        ap.error('--read-probe needs --client module (the session\'s probe)')
    if a.canary is not None and not a.fill_on:
        ap.error('--canary needs --fill-on: what the other OSDs run')
    sets: Dict[str, Dict[str, str]] = {}
    for name, opt, val in a.osd_set:
        sets.setdefault(name, {})[opt] = val
    a.osd_set = sets
    if a.module_load:
        module_load(a.module_load, a.image_mib, a.depth.get('load'))
        return
    if a.reads:
        print(reads(a.reads))
        return
    if a.table or a.pairs or a.terms:
        print(table(a.table) if a.table else pairs(a.pairs) if a.pairs else terms(a.terms))
        return
    run(a)


if __name__ == '__main__':
    main()
