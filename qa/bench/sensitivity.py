#!/usr/bin/env python3
"""Sensitivity and specificity of a tuning session: from a baseline known to
be slow, from the release's default, and from the options admins really run
(`--order` names them: STARTS below), under either objective (`--objective
iops|wear`, issue 42's scenarios).

A bench, not a test (issue 24).  Per baseline and seed, on the bench's lab:

1. the baseline set at the canary (osd.1): the slow string (SLOW, below;
   `--slow` replaces it) with `ceph config set osd.1
   bluestore_rocksdb_options`, or the default (the option removed); the
   canary restarted through the orchestrator;
2. a real session under the split design (`measurement_design split`, a
   size-2 pool of its own, a small preconditioned keyspace), module option
   `seed` the seed: `ceph rocks-autotune start --osd 1 --trials T
   --duration D --allow-single-copy`; its answer (`best -f json`);
3. the bench's own paired check of what the answer claims (benchlib.claim_of:
   the recommended options, or for keep current the confirmation's
   best-ranked candidate): split_aa.py inside the lab's release
   (`ceph-lab exec`), arm A the baseline and arm B those options at the
   canary, `--rounds` rounds in a random order each, a fresh pool and
   keyspace, its own restarts, warm-up and windows; the ratio B/A of C/R
   (and of C's IOPS alone) paired by round, median and 90% signed-rank
   interval by the session's own statistics (paired_stats);
4. benchlib.check_claim: a recommendation held when the bench's median is
   at least the claimed interval's low end; keep current held unless the
   bench's own interval clears 1 + the margin.

Prints a JSON line per row (the session's answer, status, the check's
windows, the load average), then with --table the table of one or more runs
(each lab its own file: run labs side by side with their own
$BENCH_LAB_DIR and $BENCH_LAB_MON_PORT):

    BENCH_LAB_DIR=/var/tmp/sens1 BENCH_LAB_MON_PORT=21800 \\
      python3 qa/bench/sensitivity.py --up --seed 1 --order slow,default > s1.jsonl
    python3 qa/bench/sensitivity.py --table s1.jsonl s2.jsonl s3.jsonl

--up brings a fresh flash-like lab up first and takes it down at the end;
without it the lab must be up.  What the run sets (module options, the
canary's option string, the pool) is removed at the end.
"""
import argparse
import json
import os
import time
from dataclasses import asdict
from typing import Any, Dict, List, Optional, Tuple

from benchlib import (BLOG_SMALL, CEPH_LAB, OPTION, Lab, aa_sd, as_measurement,
                      baseline_measurements, check_claim, claim_of, log)

from rocks_autotune import paired_stats
from rocks_autotune.rocksdb_options import (NEW_TUNING, NEW_TUNING_LZ4,
                                            PACIFIC_DEFAULT, parse_options,
                                            render_options)
from rocks_autotune.store import ENDED

POOL = 'sensitivity'
OSD = 1
HERE = os.path.dirname(os.path.abspath(__file__))

# A carried-over shape that stalls at steady state: 64 KiB memtables, two at
# most, flushed alone, one background job, L0 compacted at one file and
# writes slowed to 256 KiB/s at three (stopped at four), a 4 MiB L1.  The
# search keeps its untuned keys (the slowdown/stop triggers, the delayed
# write rate, the one job) and may change the tuned ones; the split A/B that
# measured it against the default: doc/bench/sensitivity.md.
SLOW = ('compression=kLZ4Compression,max_write_buffer_number=2,'
        'min_write_buffer_number_to_merge=1,compaction_style=kCompactionStyleLevel,'
        'write_buffer_size=65536,max_background_jobs=1,level0_file_num_compaction_trigger=1,'
        'level0_slowdown_writes_trigger=3,level0_stop_writes_trigger=4,'
        'delayed_write_rate=262144,max_bytes_for_level_base=4194304,'
        'max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,'
        'max_total_wal_size=1073741824,writable_file_max_buffer_size=0')


# The blog string on a lab scaled as a small cluster could be (issue 43): its
# WAL capped at 128 MiB instead of 1 GiB, every other key the same, so an L0
# cycle (trigger x min(flush capacity, max_total_wal_size)) fits in a steady
# window at the lab's WAL rate; candidates rendered over it keep the cap.
BLOG_SMALL_WAL128 = render_options({**parse_options(BLOG_SMALL),
                                    'max_total_wal_size': str(128 << 20)})


# the starting points by name ('': the release's default, the option removed;
# slow: --slow); pacific: Pacific's default pinned in the config after an
# upgrade; new-tuning(-lz4): seed 000's
STARTS = {'slow': None, 'default': '', 'pacific': PACIFIC_DEFAULT, 'new-tuning': NEW_TUNING,
          'new-tuning-lz4': NEW_TUNING_LZ4, 'blog-small': BLOG_SMALL,
          'blog-small-wal128': BLOG_SMALL_WAL128}


def module_options(args: argparse.Namespace, seed: int) -> Dict[str, str]:
    return {k: str(v) for k, v in {
        'seed': seed, 'measurement_design': 'split', 'client_pool': POOL,
        'client_space': args.space, 'client_object_size': 1 << 20,
        'precondition_limit': args.precondition, 'warmup': args.warmup,
        'baseline_runs': args.baseline_runs, 'confirm_candidates': args.candidates,
        'confirm_rounds': args.confirm_rounds, 'bench_chunk_seconds': 2,
        'max_window_factor': 1.5, 'steady_window_limit': args.steady_limit}.items()}


def session(lab: Lab, args: argparse.Namespace, seed: int) -> Dict[str, Any]:
    """A session to its end: its answer and last status."""
    was = lab.set_module_options(module_options(args, seed))
    t0, load0 = time.time(), os.getloadavg()[0]
    st: Dict[str, Any] = {}
    last = ''
    try:
        lab.ceph('rocks-autotune', 'start', '--osd', str(OSD), '--trials', str(args.trials),
                 '--duration', str(args.duration), '--allow-single-copy',
                 '--objective', args.objective)
        while time.time() - t0 < args.limit:
            st = lab.ceph_json('rocks-autotune', 'status')
            line = f'{st.get("phase")}: {st.get("message")}'
            if line != last:
                log(f'  session: {line}')
                last = line
            if st.get('state') in ENDED:
                break
            time.sleep(10)
        if st.get('state') not in ENDED:
            log(f'  session over {args.limit:.0f} s: stopped')
            lab.ceph('rocks-autotune', 'stop')
            while lab.ceph_json('rocks-autotune', 'status').get('state') not in ENDED:
                time.sleep(5)
    finally:
        lab.put_back_module_options(was)
    out = lab.ceph('rocks-autotune', 'best', '-f', 'json', check=False)
    trials = lab.ceph('rocks-autotune', 'history', '-f', 'json', check=False)
    return {'state': st.get('state'), 'message': st.get('message'),
            'design': st.get('design'), 'noise': st.get('noise'),
            'best': json.loads(out) if out.strip() else None,
            # every trial with its measurement: what the steady windows saw
            'trials': json.loads(trials) if trials.strip() else None,
            'seconds': round(time.time() - t0), 'load_start': load0,
            'load_end': os.getloadavg()[0]}


def check(lab: Lab, args: argparse.Namespace, baseline: str, options: str,
          seed: int) -> List[Dict[str, Any]]:
    """split_aa's A/B at the canary, arm A `baseline`, arm B `options`: its lines."""
    cmd = ['exec', '--', 'python3', os.path.join(HERE, 'split_aa.py'), '--osd', str(OSD),
           '--rounds', str(args.rounds), '--warmup', str(args.check_warmup),
           '--window', str(args.check_window), '--space', str(2 * args.space),
           '--overwrite', '--seed', str(seed), '--pool-name', f'{POOL}ab',
           '--b-config', f'{OPTION}={options}']
    if baseline:
        cmd += ['--a-config', f'{OPTION}={baseline}']
    out = lab.lab(*cmd, timeout=args.limit)
    return [json.loads(x) for x in out.splitlines() if x.startswith('{')]


def bench_figures(lines: List[Dict[str, Any]]) -> Dict[str, Any]:
    """B/A per figure, paired by round as the session pairs its rounds
    (paired_stats.summary): median and 90% interval."""
    rows = [r for r in lines if 'arm' in r]
    rounds = [{r['arm']: as_measurement(r) for r in rows if r['round'] == rnd}
              for rnd in sorted({r['round'] for r in rows})]
    return {fig: asdict(paired_stats.summary(rounds, 'B', 'A', fig).ratio)
            for fig in ('c_over_r', 'iops_c', 'iops_r')}


def row(lab: Lab, args: argparse.Namespace, name: str, seed: int) -> Dict[str, Any]:
    baseline = args.slow if name == 'slow' else STARTS[name] or ''
    log(f'{name} baseline, seed {seed}, objective {args.objective}')
    lab.apply(OSD, baseline)  # '': the release's default
    s = session(lab, args, seed)
    claim = claim_of(s['best'])
    r: Dict[str, Any] = {'baseline': name, 'seed': seed, 'session': s, 'claim': claim,
                         'objective': args.objective}
    if claim and claim['options']:
        log(f'  check: {claim["arm"]} against the {name} baseline, {args.rounds} rounds')
        try:
            lines = check(lab, args, baseline, claim['options'], seed)
        except RuntimeError as e:  # the session's row is kept
            r['check_error'] = str(e)[-2000:]
            log(f'  check failed: {e}')
        else:
            figs = bench_figures(lines)
            cr = figs['c_over_r']
            r.update(check_lines=lines, bench=figs,
                     held=check_claim(claim, cr['median'], None, (cr['low'], cr['high'])))
    lab.apply(OSD, '')
    return r


def run(args: argparse.Namespace) -> None:
    lab = Lab()
    if args.up:
        lab.up(flash=True)
    try:
        lab.ceph('osd', 'pool', 'create', POOL, '32', '32', 'replicated', '--size', '2')
        lab.ceph('osd', 'pool', 'set', POOL, 'min_size', '1')
        lab.ceph('osd', 'pool', 'application', 'enable', POOL, 'rados')
        lab.wait('active+clean', lab.active_clean)
        print(json.dumps({'facts': lab.facts(), 'slow': args.slow,
                          'module_options': module_options(args, args.seed),
                          'trials': args.trials, 'duration': args.duration,
                          'rounds': args.rounds, 'check_warmup': args.check_warmup,
                          'check_window': args.check_window,
                          'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}),
              flush=True)
        for name in args.order:
            print(json.dumps(row(lab, args, name, args.seed)), flush=True)
    finally:
        lab.ceph('config', 'rm', f'osd.{OSD}', OPTION, check=False)
        lab.ceph('osd', 'pool', 'rm', POOL, POOL, '--yes-i-really-really-mean-it', check=False)
        if args.up:
            lab.down()


def _objective(r: Dict[str, Any]) -> str:
    """A row's objective, where it is not iops (rows saved before it was kept: iops).
    Under wear the bench's check is its IOPS side (the guard) alone: its
    steady write-amp is the session's own steady check's."""
    return f' ({r["objective"]})' if r.get('objective', 'iops') != 'iops' else ''


def _ratio(r: Optional[Dict[str, Any]]) -> str:
    if not r or r.get('median') is None:
        return '-'

    def end(v: Optional[float]) -> str:
        return 'open' if v is None else f'{v:.3f}'
    return f'{r["median"]:.3f}x [{end(r.get("low"))}, {end(r.get("high"))}]'


def wanted(r: Dict[str, Any]) -> str:
    """Did the session do what the bench wants of it?  From the slow
    baseline (and, for wear, the blog's small memtables): recommend, and the
    bench agree (sensitivity); from the
    default: keep current, or recommend what the bench agrees with
    (specificity)."""
    answer = (r.get('claim') or {}).get('answer')
    held = (r.get('held') or {}).get('held')
    if r['baseline'] == 'slow' or (r['baseline'] == 'blog-small'
                                   and r.get('objective') == 'wear'):
        return 'yes' if answer == 'recommend' and held else 'no: a gain missed' \
            if answer != 'recommend' else 'no: the bench disagrees'
    if answer == 'recommend' and not held:
        return 'no: a gain the bench does not confirm'
    return 'yes' if answer else 'no answer'


def noise_table(rows: List[Dict[str, Any]]) -> str:
    """The sessions' own A/A noise (their baseline runs' pairs), pooled by
    baseline: the options under test are part of the noise."""
    out = ['| baseline | sessions | A/A pairs | per-round sd | 90% interval |',
           '|---|---|---|---|---|']
    for base in dict.fromkeys(r['baseline'] for r in sorted(rows, key=by_baseline)):
        mine = [r for r in rows if r['baseline'] == base]
        pairs = [d for r in mine for d in (r['session'].get('noise') or {}).get('per_pair') or []]
        if pairs:
            sd, lo, hi = aa_sd(pairs)
            out.append(f'| {base} | {len(mine)} | {len(pairs)} | {sd:.3f} | {lo:.3f}-{hi:.3f} |')
    return '\n'.join(out)


def by_baseline(row: Dict[str, Any]) -> Tuple[bool, int]:
    """The tables' order: the slow baseline first, then by seed."""
    return row['baseline'] != 'slow', row['seed']


def read(paths: List[str]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """The runs' heads and their sessions' rows."""
    heads, rows = [], []
    for p in paths:
        with open(p) as f:
            lines = [json.loads(x) for x in f if x.strip()]
        heads += [x for x in lines if 'facts' in x]
        rows += [x for x in lines if 'baseline' in x]
    return heads, rows


def baseline_runs(paths: List[str]) -> str:
    """Each session's baseline runs in the order they ran (the A/A pairs are
    1st-2nd, 3rd-4th, ...): C/R and the RocksDB compaction each window saw,
    where the noise of the baseline's own options shows; then its steady
    windows (the steady check's pairs)."""
    rows = sorted(read(paths)[1], key=by_baseline)
    out = ['| baseline | seed | C/R by run | compaction MiB by run |', '|---|---|---|---|']
    for r in rows:
        runs = baseline_measurements(r['session'].get('trials'))
        if not runs:
            out.append(f'| {r["baseline"]} | {r["seed"]} | not saved | not saved |')
            continue
        out.append(f'| {r["baseline"]} | {r["seed"]} | '
                   + ' '.join(f'{m["c_over_r"]:.2f}' if m.get('c_over_r') else '-' for m in runs)
                   + ' | ' + ' '.join(f'{(m.get("compaction_bytes") or 0) / 2**20:.0f}'
                                      for m in runs) + ' |')
    out += ['', '| baseline | seed | steady window of | s | RocksDB WAL GiB | busiest family '
            '| its flushes, compactions | write-amp | C/R |',
            '|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        for t in r['session'].get('trials') or []:
            m = t.get('measurement')
            if t.get('steady') and m:
                wal = (m.get('rocksdb_wal_bytes') or 0) / 2**30
                out.append(f'| {r["baseline"]} | {r["seed"]} | {t.get("arm")} | '
                           f'{m["seconds"]:.0f} | {wal:.2f} | '
                           f'{m.get("busiest_cf") or "-"} | {m.get("cf_flushes")}, '
                           f'{m.get("compactions")} | {m.get("write_amp") or 0:.3f} | '
                           f'{m.get("c_over_r") or 0:.3f} |')
    return '\n'.join(out)


def table(paths: List[str]) -> str:
    heads, rows = read(paths)
    out = []
    for h in heads:
        out.append(f'{h["date"]} {h["facts"]["version"]}, commit {h["facts"]["commit"]}: '
                   f'{h["trials"]} trials, {h["duration"]}-s windows; module options '
                   f'{h["module_options"]}; check {h["rounds"]} rounds, '
                   f'{h["check_warmup"]}-s warm-up, {h["check_window"]}-s windows')
    out += ['', '| baseline | seed | session answer | noise sd, could confirm | '
            'claimed C/R (arm) | bench C/R, 90% | bench C | held | as wanted | session s | '
            'load |', '|---|---|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=by_baseline):
        s, c = r['session'], r.get('claim') or {}
        seen = (s.get('best') or {}).get('seen') or {}
        noise = (f'{seen["sd"]:.3f}, +{seen["detectable"]:.0%}'
                 if seen.get('sd') is not None and seen.get('detectable') is not None else '-')
        held = r.get('held') or {}
        loads = [s['load_start'], s['load_end']] + [
            x['load'] for x in r.get('check_lines', []) if 'arm' in x]
        out.append(
            f'| {r["baseline"]}{_objective(r)} | {r["seed"]} | {c.get("answer") or s["state"]} | '
            f'{noise} | '
            f'{_ratio(c.get("ratio"))} ({c.get("arm") or "-"}: {c.get("verdict") or "-"}) | '
            f'{_ratio((r.get("bench") or {}).get("c_over_r"))} | '
            f'{_ratio((r.get("bench") or {}).get("iops_c"))} | '
            f'{"-" if held.get("held") is None else ("yes" if held["held"] else "no")} | '
            f'{wanted(r)} | {s["seconds"]} | {min(loads):.1f}-{max(loads):.1f} |')
    out += ['', noise_table(rows), '']
    for r in rows:
        held = r.get('held') or {}
        arm = next((a for a in ((r['session'].get('best') or {}).get('candidates') or [])
                    if a['arm'] == (r.get('claim') or {}).get('arm')), None)
        out.append(f'- {r["baseline"]}, seed {r["seed"]}: '
                   + (f'{arm["arm"]} {arm["verdict"]} ({arm["why"]}); ' if arm else '')
                   + (held.get('why') or r.get('check_error') or 'not checked'))
    return '\n'.join(out)


def starts(text: str) -> List[str]:
    names = text.split(',')
    unknown = [n for n in names if n not in STARTS]
    if unknown:
        raise argparse.ArgumentTypeError(f'unknown baseline(s) {", ".join(unknown)}: '
                                         f'one of {", ".join(STARTS)}')
    return names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=1, help="the session's optimizer seed")
    ap.add_argument('--order', type=starts, default=['slow', 'default'],
                    help='baselines in order: ' + ', '.join(STARTS))
    ap.add_argument('--objective', choices=('iops', 'wear'), default='iops',
                    help="the sessions' objective (start --objective)")
    ap.add_argument('--slow', default=SLOW, help='the slow baseline string')
    ap.add_argument('--trials', type=int, default=4)
    ap.add_argument('--duration', type=int, default=20, help="the session's window (s)")
    ap.add_argument('--warmup', type=int, default=10, help="the session's warm-up (s)")
    ap.add_argument('--baseline-runs', type=int, default=6)
    ap.add_argument('--candidates', type=int, default=1, help='confirm_candidates')
    ap.add_argument('--confirm-rounds', type=int, default=8)
    ap.add_argument('--space', type=int, default=64 << 20, help='client_space (bytes)')
    ap.add_argument('--precondition', type=int, default=120, help='precondition_limit (s)')
    ap.add_argument('--steady-limit', type=int, default=45,
                    help='steady_window_limit (s): how long a confirmation window may wait '
                         'for a compaction')
    ap.add_argument('--rounds', type=int, default=5, help="the check's rounds")
    ap.add_argument('--check-warmup', type=float, default=20)
    ap.add_argument('--check-window', type=float, default=30)
    ap.add_argument('--limit', type=float, default=3600, help='s a session or check may take')
    ap.add_argument('--up', action='store_true', help='a fresh lab first, down at the end')
    ap.add_argument('--table', nargs='+', metavar='JSONL', help='no lab: the table of runs')
    ap.add_argument('--baseline-runs-table', nargs='+', metavar='JSONL',
                    help="no lab: each session's baseline runs, in order, and its steady windows")
    args = ap.parse_args()
    if args.table:
        print(table(args.table))
        return
    if args.baseline_runs_table:
        print(baseline_runs(args.baseline_runs_table))
        return
    assert os.path.exists(CEPH_LAB)
    run(args)


if __name__ == '__main__':
    main()
