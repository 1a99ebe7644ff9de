#!/usr/bin/env python3
"""The A/A noise a session measures itself, under the split design and the
sequential one, in alternating sessions on one lab.

A bench, not a test (issue 24).  split_aa.py measured the split load's noise
with a load of its own; this runs the module: each session starts on the
bench's lab with `measurement_design` set to split or sequential and, with
`--grid`, a warm-up and window of its own (each arm, a design and a
warm-up:window pair and its client threads, 16 unless the pair says
another (10:20:4), in turn, the order reversed every other pass so that
no arm always runs first; `--designs split` measures one design alone),
preconditions its keyspace, measures its baseline runs in A/A pairs (each
run a restart of the canary, the warm-up and a window) and is stopped once
`status` has the noise (power.aa_noise: the per-pair log ratios of the
figure the confirmation judges, C/R under split, the canary's client IOPS
under sequential).  Prints a JSON line per session (its pairs, the load
average at start and end), then per arm the per-round sd over all its
pairs, sqrt(mean(d^2)) as the session computes it, with its 90%
chi-square interval.  Each row keeps its baseline runs' figures (`runs`,
from `history -f json`), and the table splits each split arm's noise into
C's IOPS, R's and how they moved together; rows saved before that take
their runs from `--history`, dumps of `history -f json` saved while the run
ran.

The pool is made for the run (replicated, size 2, so that on a 3-OSD lab
about a third of its PGs leave the canary out: group R's; `--pg-num`, 32
by default, the autoscaler off; `--pool`, `--size` and `--application` make
another, e.g. the demo's) and removed at the end, with the module options
the run sets.  The head row keeps the canary's bluestore_rocksdb_options,
the PGs without it and the command line.  `--compare` pools the rows of
one or more runs by arm and gives the ratio of every two arms' sds with
its F interval.

    python3 qa/bench/design_aa.py --up --sessions 4 > aa.jsonl
    python3 qa/bench/design_aa.py --up --designs split --grid 10:20,20:60 --sessions 3 \
        --baseline-runs 10 > grid.jsonl
    python3 qa/bench/design_aa.py --table aa.jsonl
    python3 qa/bench/design_aa.py --table grid.jsonl --history grid-history.jsonl
    python3 qa/bench/design_aa.py --osd 0 --designs split --grid 10:20:16,10:20:4 \
        --sessions 2 --baseline-runs 8 --space 1073741824 --precondition 600 --pg-num 64 \
        --size 3 --pool rocks_autotune_demo --application rbd --chunk 5 --objective wear \
        --no-single-copy --limit 2400 > demo-20s.jsonl   # on the demo's canary string
    python3 qa/bench/design_aa.py --compare demo.jsonl demo-20s.jsonl --rounds

On the bench's lab ($BENCH_LAB_DIR, default /var/tmp/rat-bench-lab;
$BENCH_LAB_MON_PORT, default 21700): --up brings a fresh flash-like one up
first and takes it down at the end; without it the lab must be up.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from benchlib import Lab, aa_sd, baseline_trials, log
from rocks_autotune import power
from rocks_autotune.store import ENDED

POOL = 'designaa'
GUARD, MOST = 0.03, 60  # --compare --rounds: the IOPS guard, and the most rounds tried
Arm = Tuple[str, int, int, int]  # design, warm-up s, window s, client threads
THREADS = 16  # client_threads' default until 512 (client-depth.md): what rows without `threads` ran
# a baseline run's figures kept in a session's row (`runs`): C's and R's own
# IOPS beside C/R, and what RocksDB did in the window (and `trial_seconds`,
# the whole run's: restart, warm-up and window)
RUN_FIGURES = ('c_over_r', 'iops_c', 'iops_r', 'iops', 'seconds', 'flush_bytes',
               'compaction_bytes', 'op_w_lat_ms', 'kv_sync_lat_ms')


def settings(args: argparse.Namespace) -> Dict[str, Any]:
    """The module options of the run: its baseline runs, window and a small
    keyspace; the confirmation never runs (the session is stopped first)."""
    return {'warmup': args.warmup, 'baseline_runs': args.baseline_runs,
            'client_space': args.space, 'client_object_size': 1 << 20,
            'precondition_limit': args.precondition, 'client_pool': args.pool,
            'bench_chunk_seconds': args.chunk, 'max_window_factor': 1.5}


def session(lab: Lab, arm: Arm, args: argparse.Namespace) -> Dict[str, Any]:
    """One session up to its noise; its row."""
    design, warmup, duration, threads = arm
    for k, v in (('measurement_design', design), ('warmup', warmup),
                 ('client_threads', threads)):
        lab.ceph('config', 'set', 'mgr', f'mgr/rocks_autotune/{k}', str(v))
    time.sleep(3)  # the active mgr sees the mon's config a moment later
    load0, t0 = os.getloadavg()[0], time.time()
    lab.ceph('rocks-autotune', 'start', '--osd', str(args.osd), '--trials', '1',
             '--duration', str(duration),
             *(['--objective', args.objective] if args.objective else []),
             *(['--allow-single-copy'] if args.allow_single_copy else []))
    st: Dict[str, Any] = {}
    loads: List[Tuple[int, float]] = []  # (s since start, load average), 30 s apart
    while time.time() - t0 < args.limit:
        st = lab.ceph_json('rocks-autotune', 'status')
        if len(loads) < (time.time() - t0) / 30:
            loads.append((round(time.time() - t0), round(os.getloadavg()[0], 2)))
        if st.get('noise') or st.get('state') in ENDED:
            break
        time.sleep(5)
    if st.get('state') not in ENDED:
        lab.ceph('rocks-autotune', 'stop')
        while lab.ceph_json('rocks-autotune', 'status').get('state') not in ENDED:
            time.sleep(5)
    noise = st.get('noise') or {}
    history = lab.ceph_json('rocks-autotune', 'history', '-f', 'json')
    if args.history_out:
        with open(args.history_out, 'a') as f:
            f.write(json.dumps({'arm': arm, 'status': st, 'history': history}) + '\n')
    return {'design': design, 'warmup': warmup, 'duration': duration, 'threads': threads,
            'precondition': st.get('precondition'), 'loads': loads,
            'ran': (st.get('design') or {}).get('design'),
            'reference_pgs': (st.get('design') or {}).get('reference_pgs'),
            'objective': noise.get('objective'), 'per_pair': noise.get('per_pair') or [],
            'window': noise.get('window'), 'seconds': round(time.time() - t0),
            'load_start': load0, 'load_end': os.getloadavg()[0],
            'runs': baseline_runs(history),
            'error': st.get('error') or ''}


def baseline_runs(history: Any) -> List[Dict[str, Any]]:
    """The baseline runs of a session's `history -f json`, in the order
    they ran: their RUN_FIGURES and the run's seconds."""
    return [dict({k: t['measurement'].get(k) for k in RUN_FIGURES},
                 trial_seconds=t.get('seconds')) for t in baseline_trials(history)]


def pair_logs(runs: Sequence[Dict[str, Any]], fig: str) -> List[float]:
    """A figure's log ratio in each A/A pair (2nd run over 1st), paired as
    the session pairs its objective (power.aa_noise)."""
    noise = power.aa_noise([r.get(fig) for r in runs])
    return list(noise.per_pair) if noise else []


def attach_runs(sessions: List[Dict[str, Any]], dumps: List[Any]) -> None:
    """Give each session row without `runs` the baseline runs of the
    `history -f json` dump (saved beside the run while it ran) whose C/R
    pairs are the row's own pairs."""
    found = [(runs, pair_logs(runs, 'c_over_r')) for runs in map(baseline_runs, dumps)]
    for r in sessions:
        if r.get('runs') or not r['per_pair']:
            continue
        for runs, logs in found:
            if len(logs) == len(r['per_pair']) and all(
                    abs(x - y) < 1e-9 for x, y in zip(logs, r['per_pair'])):
                r['runs'] = runs
                break


def schedule(args: argparse.Namespace) -> List[Arm]:
    """Every arm (design, warm-up, window) `--sessions` times, the order
    reversed every other pass so that no arm always runs first."""
    pairs = args.grid or [(args.warmup, args.duration, args.threads)]
    arms = [(d, w, n, t) for d in args.designs for w, n, t in pairs]
    return [a for i in range(args.sessions) for a in (arms if i % 2 == 0 else arms[::-1])]


def run(args: argparse.Namespace) -> None:
    lab = Lab()
    if args.up:
        lab.up(flash=True)
    try:
        measure(lab, args)
    finally:
        if args.up:
            lab.down()


def measure(lab: Lab, args: argparse.Namespace) -> None:
    for k, v in settings(args).items():
        lab.ceph('config', 'set', 'mgr', f'mgr/rocks_autotune/{k}', str(v))
    pool, pg = args.pool, str(args.pg_num)
    lab.ceph('osd', 'pool', 'create', pool, pg, pg, 'replicated', '--size', str(args.size))
    lab.ceph('osd', 'pool', 'set', pool, 'min_size', str(max(1, args.size - 1)))
    # the PGs without the canary are group R's: the autoscaler must not change them
    lab.ceph('osd', 'pool', 'set', pool, 'pg_autoscale_mode', 'off')
    lab.ceph('osd', 'pool', 'application', 'enable', pool, args.application)
    while not lab.active_clean():
        time.sleep(3)
    opts = lab.ceph_json('tell', f'osd.{args.osd}', 'config', 'get', 'bluestore_rocksdb_options')
    pgs = lab.ceph_json('pg', 'ls-by-pool', pool)['pg_stats']
    print(json.dumps({'facts': lab.facts(), 'settings': settings(args),
                      'duration': args.duration, 'osd': args.osd, 'pg_num': args.pg_num,
                      'pool': pool, 'size': args.size,
                      'pgs_without_canary': sum(args.osd not in p['up'] for p in pgs),
                      'objective': args.objective, 'allow_single_copy': args.allow_single_copy,
                      'canary_rocksdb_options': opts['bluestore_rocksdb_options'],
                      'schedule': schedule(args), 'argv': sys.argv}), flush=True)
    try:
        for i, arm in enumerate(schedule(args), 1):
            log(f'session {i}: {arm[0]}, warm-up {arm[1]} s, {arm[2]}-s window, '
                f'{arm[3]} client threads')
            print(json.dumps(session(lab, arm, args)), flush=True)
    finally:
        for k in [*settings(args), 'measurement_design', 'client_threads']:
            lab.ceph('config', 'rm', 'mgr', f'mgr/rocks_autotune/{k}', check=False)
        lab.ceph('osd', 'pool', 'rm', pool, pool, '--yes-i-really-really-mean-it', check=False)


def read(path: str, history: Optional[str] = None
         ) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """A run's head and session rows, each row with its arm's warm-up,
    window and client threads (rows before --grid kept one warm-up and
    window, in the head; rows before threads ran THREADS)."""
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    head, sessions = rows[0], rows[1:]
    if history:
        with open(history) as f:
            attach_runs(sessions, [json.loads(line) for line in f if line.strip()])
    for r in sessions:
        r.setdefault('warmup', head['settings']['warmup'])
        r.setdefault('duration', head['duration'])
        r.setdefault('threads', THREADS)
    return head, sessions


def arm_of(r: Dict[str, Any]) -> Arm:
    return r['design'], r['warmup'], r['duration'], r['threads']


def run_seconds(sessions: Sequence[Dict[str, Any]]) -> Optional[float]:
    """The median seconds of the sessions' baseline runs (restart, warm-up
    and window), each session's first left out: it holds the preconditioning."""
    secs = [x['trial_seconds'] for r in sessions for x in (r.get('runs') or [])[1:]
            if x.get('trial_seconds')]
    return statistics.median(secs) if secs else None


def table(path: str, history: Optional[str] = None) -> str:
    head, sessions = read(path, history)
    st = head['settings']
    out = [f'{head["facts"]["version"]}, osd.{head["osd"]}, '
           f'{st["baseline_runs"]} baseline runs a session'
           # runs before --pg-num made 32 and did not say so
           + (f', a pool of {head["pg_num"]} PGs' if 'pg_num' in head else ''),
           '', '| design | warm-up s | window s (ran) | threads | objective | sessions | pairs '
           '| per-round sd | 90% interval | run s (median) | s a session | load at start-end |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    arms = sorted(set(map(arm_of, sessions)),
                  key=lambda a: (a[0] != 'split', a[1], a[2], -a[3]))
    for arm in arms:
        mine = [r for r in sessions if arm_of(r) == arm]
        ds: List[float] = [d for r in mine for d in r['per_pair']]
        if not ds:
            continue
        sd, lo, hi = aa_sd(ds)
        loads = [x for r in mine for x in (r['load_start'], r['load_end'])]
        objs = sorted({str(r['objective']) for r in mine})
        ran = [r['window'] for r in mine if r.get('window')]
        run_s = run_seconds(mine)
        out.append(f'| {arm[0]} | {arm[1]} | {arm[2]}'
                   + (f' ({statistics.median(ran):.0f})' if ran else '')
                   + f' | {arm[3]} | {", ".join(objs)} | {len(mine)} | {len(ds)} | {sd:.3f} | '
                   f'{lo:.3f}-{hi:.3f} | ' + (f'{run_s:.0f}' if run_s else '-') + ' | '
                   + ', '.join(str(r['seconds']) if 'seconds' in r else '-' for r in mine)
                   + f' | {min(loads):.1f}-{max(loads):.1f} |')
    bad = [r for r in sessions if r['ran'] != r['design'] or r['error']]
    if bad:
        out.append(f'\n{len(bad)} session(s) ran another design or failed: '
                   + '; '.join(f'{r["design"]}: ran {r["ran"]} {r["error"]}' for r in bad))
    split = [r for r in sessions if r['design'] == 'split' and r.get('runs')]
    if split:
        out += ['', decomposition(split, arms)]
    return '\n'.join(out)


def compare(paths: Sequence[str], rounds: bool = False, level: float = 0.90) -> str:
    """The arms of one or more runs, their sessions pooled by arm: each
    arm's per-round sd and, for every two arms, the ratio of their sds with
    its F interval at `level` (each sd on as many degrees of freedom as it
    has pairs: A/A pairs have a known mean, 0).  With `rounds`, the rounds
    an equally fast candidate needs to pass the IOPS guard (GUARD) 9 times
    in 10 at each sd (power.rounds_for; minutes of CPU the first time)."""
    from scipy.stats import f
    sessions = [r for p in paths for r in read(p)[1]]
    arms = sorted(set(map(arm_of, sessions)), key=lambda a: (a[0] != 'split', a[1], a[2], -a[3]))
    sds = {a: [d for r in sessions if arm_of(r) == a for d in r['per_pair']] for a in arms}
    sds = {a: ds for a, ds in sds.items() if ds}
    name = {a: f'{a[0]} {a[1]}:{a[2]}:{a[3]}' for a in sds}
    out = ['| arm (design warm-up:window:threads) | sessions | pairs | per-round sd '
           '| 90% interval |' + (f' rounds at the sd ({GUARD:.0%} guard, at most {MOST}) |'
                                 if rounds else ''),
           '|---|---|---|---|---|' + ('---|' if rounds else '')]
    for a, ds in sds.items():
        sd, lo, hi = aa_sd(ds, level)
        n = power.rounds_for(0.0, sd, -GUARD, MOST) if rounds else None
        out.append(f'| {name[a]} | {sum(arm_of(r) == a for r in sessions)} | {len(ds)} | '
                   f'{sd:.3f} | {lo:.3f}-{hi:.3f} |'
                   + (f' {n or f"over {MOST}"} |' if rounds else ''))
    out += ['', f'| arms | sd ratio | {level:.0%} F interval |', '|---|---|---|']
    tail = (1 - level) / 2
    for i, a in enumerate(sds):
        for b in list(sds)[i + 1:]:
            r = aa_sd(sds[a])[0] / aa_sd(sds[b])[0]
            na, nb = len(sds[a]), len(sds[b])
            out.append(f'| {name[a]} / {name[b]} | {r:.2f} | '
                       f'{r / math.sqrt(f.ppf(1 - tail, na, nb)):.2f}-'
                       f'{r / math.sqrt(f.ppf(tail, na, nb)):.2f} |')
    return '\n'.join(out)


def finalist_rounds(history: Sequence[Dict[str, Any]]) -> Dict[str, List[float]]:
    """Each finalist's per-round log ratio of C/R to the baseline's in its
    confirmation (`history -f json`; steady windows, and rounds without the
    baseline's window, left out)."""
    by_round: Dict[int, Dict[str, float]] = {}
    for t in history:
        cr = (t.get('measurement') or {}).get('c_over_r')
        if t['kind'] == 'confirm' and not t.get('steady') and cr:
            by_round.setdefault(t['round'], {})[t['arm']] = cr
    return {a: [math.log(r[a] / r['baseline']) for r in by_round.values()
                if a in r and 'baseline' in r]
            for a in sorted({a for r in by_round.values() for a in r} - {'baseline'})}


def histories(paths: Sequence[str], rounds: int = 10, level: float = 0.90) -> str:
    """Real sessions' noise of C/R (their `history -f json`, split design):
    each session's A/A sd (its baseline runs' pairs, as it planned from
    them) beside the sd its confirmation rounds showed (each finalist's
    per-round log ratio to the baseline, about its mean; power.pooled_sd),
    then both pooled over the sessions with their F test, and the chance an
    equally fast candidate clears the IOPS guard (GUARD) over `rounds`
    rounds at each (power.confirm_rate)."""
    from scipy.stats import f
    out = ['| session | A/A pairs | A/A sd | planned | rounds | rounds\' sd |',
           '|---|---|---|---|---|---|']
    aa_all: List[float] = []
    arms_all: List[List[float]] = []
    for path in paths:
        with open(path) as fh:
            history = json.load(fh)
        noise = power.aa_noise([t['measurement'].get('c_over_r')
                                for t in baseline_trials(history)])
        arms = list(finalist_rounds(history).values())
        seen = power.pooled_sd(arms)
        if noise is None and seen is None:
            continue
        aa_all += noise.per_pair if noise else []
        arms_all += arms
        out.append(f'| {os.path.basename(path)} | {noise.pairs if noise else 0} | '
                   + (f'{noise.sd:.3f} | {noise.planned_sd:.3f}' if noise else '- | -')
                   + f' | {sum(map(len, arms))} | ' + (f'{seen[0]:.3f} |' if seen else '- |'))
    pooled = power.pooled_sd(arms_all)
    if not aa_all or pooled is None:
        return '\n'.join(out + ['', 'no session with both A/A pairs and rounds of C/R'])
    aa, lo, hi = aa_sd(aa_all, level)
    sd, df = pooled
    ratio = sd / aa
    tail = (1 - level) / 2
    f_lo = ratio / math.sqrt(f.ppf(1 - tail, df, len(aa_all)))
    f_hi = ratio / math.sqrt(f.ppf(tail, df, len(aa_all)))
    return '\n'.join(out + [
        '', f'pooled A/A sd {aa:.3f} ({level:.0%} {lo:.3f}-{hi:.3f}) over {len(aa_all)} pairs; '
        f'rounds\' sd {sd:.3f} on {df} df; rounds / A/A {ratio:.2f} ({level:.0%} F interval '
        f'{f_lo:.2f}-{f_hi:.2f})',
        f'an equally fast candidate passes the {GUARD:.0%} guard over {rounds} rounds '
        f'{power.confirm_rate(0.0, aa, rounds, -GUARD):.0%} of the time at the pooled A/A sd, '
        f'{power.confirm_rate(0.0, sd, rounds, -GUARD):.0%} at the rounds\''])


def finalists(paths: Sequence[str]) -> str:
    """Whether a finalist's search window foretells its rounds: per finalist of
    real sessions (their `history -f json`, split design), its search
    window's C/R over the geometric mean of the session's baseline runs'
    (log), beside its rounds' mean log ratio to the baseline; then their
    correlation over the finalists (scipy's pearsonr)."""
    from scipy.stats import pearsonr
    out = ['| session | finalist | search window (log) | rounds\' mean (log) | rounds |',
           '|---|---|---|---|---|']
    pairs: List[Tuple[float, float]] = []
    for path in paths:
        with open(path) as fh:
            history = json.load(fh)
        base = [math.log(cr) for t in baseline_trials(history)
                if (cr := (t.get('measurement') or {}).get('c_over_r'))]
        options = {t['arm']: t['options'] for t in history if t['kind'] == 'confirm'}
        for arm, rounds in finalist_rounds(history).items():
            window = next(((t.get('measurement') or {}).get('c_over_r') for t in history
                           if t['kind'] == 'candidate' and t['options'] == options[arm]), None)
            if not base or not window or len(rounds) < 3:
                continue
            pairs.append((math.log(window) - sum(base) / len(base), sum(rounds) / len(rounds)))
            out.append(f'| {os.path.basename(path)} | {arm} | {pairs[-1][0]:+.3f} | '
                       f'{pairs[-1][1]:+.3f} | {len(rounds)} |')
    if len(pairs) < 3:
        return '\n'.join(out + ['', 'fewer than 3 finalists with a search window and 3 rounds'])
    r, p = pearsonr(*zip(*pairs))
    windows, rounds_ = (sum(x) / len(pairs) for x in zip(*pairs))
    said = (f'{len(pairs)} finalists: correlation {r:+.2f} (p {p:.2f}); search windows '
            f'{windows:+.3f} on average, their rounds {rounds_:+.3f}')
    return '\n'.join(out + ['', said])


def decomposition(sessions: List[Dict[str, Any]], arms: Sequence[Arm]) -> str:
    """Per arm, what the split's A/A noise is made of: the pairs' sd of
    C's IOPS, of R's and of C/R, and how much C and R moved together (their
    log ratios' correlation): what the machine does moves both and C/R
    cancels it; what is left is C's own (the canary's restart, its
    options) and R's own.  C/R takes R's move whole; the slope of C's log
    ratio on R's (least squares through 0) is how much of it C shared, and
    C less that slope times R, the slope fitted on the arm's other
    sessions, is what a reference weighted by a slope measured beforehand
    would have left (out of sample: no session is judged by its own fit).
    Last, how C/R's pairs moved with the canary's own kv_sync latency's:
    a part of the noise the canary's commit path carries."""
    out = ['| warm-up s | window s | threads | pairs | C sd | R sd | C/R sd '
           '| C, R correlation | mean pair (drift) | C on R slope | C - slope x R sd '
           '| C/R, canary kv_sync correlation |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for arm in [a for a in arms if a[0] == 'split']:
        runs = [r['runs'] for r in sessions if arm_of(r) == arm]
        if not runs:
            continue
        # each session's (C, R) pair log ratios, kept apart for the out-of-sample fit
        each = [list(zip(pair_logs(x, 'iops_c'), pair_logs(x, 'iops_r'))) for x in runs]
        pairs = [p for s in each for p in s]
        c, rr = [p[0] for p in pairs], [p[1] for p in pairs]
        cr, kv = ([d for x in runs for d in pair_logs(x, fig)]
                  for fig in ('c_over_r', 'kv_sync_lat_ms'))
        if not (c and cr):  # runs without C's and R's figures
            continue
        corr = statistics.correlation(c, rr) if len(c) > 2 else None
        kv_corr = statistics.correlation(cr, kv) if len(kv) == len(cr) > 2 else None
        slope = c_on_r(pairs)
        left = left_by_others(each)
        out.append(f'| {arm[1]} | {arm[2]} | {arm[3]} | {len(cr)} | {aa_sd(c)[0]:.3f} | '
                   f'{aa_sd(rr)[0]:.3f} | {aa_sd(cr)[0]:.3f} | '
                   + (f'{corr:.2f}' if corr is not None else '-')
                   + f' | {statistics.mean(cr):+.3f} | '
                   + (f'{slope:.2f}' if slope is not None else '-') + ' | '
                   + (f'{aa_sd(left)[0]:.3f}' if left else '-') + ' | '
                   + (f'{kv_corr:.2f}' if kv_corr is not None else '-') + ' |')
    return '\n'.join(out)


def c_on_r(pairs: Sequence[Tuple[float, float]]) -> Optional[float]:
    """The least-squares slope through 0 of C's pair log ratios on R's
    (None without an R that moved)."""
    rr = sum(r * r for _, r in pairs)
    return sum(c * r for c, r in pairs) / rr if rr else None


def left_by_others(each: Sequence[Sequence[Tuple[float, float]]]) -> List[float]:
    """Each session's C pair log ratios less the slope (c_on_r) fitted on
    the other sessions' pairs times its R's: none for a session whose
    others give no slope."""
    out: List[float] = []
    for i, mine in enumerate(each):
        b = c_on_r([p for j, s in enumerate(each) if j != i for p in s])
        if b is not None:
            out += [c - b * r for c, r in mine]
    return out


def designs(text: str) -> List[str]:
    """--designs: split, sequential or both, each once."""
    out = text.split(',')
    if not out or len(set(out)) != len(out) or not set(out) <= {'split', 'sequential'}:
        raise argparse.ArgumentTypeError(f'{text!r}: split, sequential or split,sequential')
    return out


def grid(text: str) -> List[Tuple[int, int, int]]:
    """--grid: warm-up:window[:client threads], comma-separated (10:20,20:60:4);
    without threads, THREADS."""
    try:
        out = [(w, n, *(t or [THREADS])) for w, n, *t in
               ([int(v) for v in x.split(':')] for x in text.split(','))]
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r}: warm-up:window[:threads], e.g. 10:20,20:60:4')
    if (len(set(out)) != len(out) or any(len(a) != 3 for a in out)
            or any(w < 0 or n < 1 or t < 1 for w, n, t in out)):
        raise argparse.ArgumentTypeError(f'{text!r}: each arm once, warm-up >= 0, window >= 1, '
                                         'threads >= 1')
    return [(w, n, t) for w, n, t in out]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--osd', type=int, default=1)
    ap.add_argument('--sessions', type=int, default=4, help='sessions of each design')
    ap.add_argument('--baseline-runs', type=int, default=6, help='baseline runs (pairs x 2)')
    ap.add_argument('--warmup', type=int, default=10)
    ap.add_argument('--duration', type=int, default=20, help='the window (s)')
    ap.add_argument('--space', type=int, default=64 << 20, help='client_space (bytes)')
    ap.add_argument('--precondition', type=int, default=60, help='precondition_limit (s)')
    ap.add_argument('--pg-num', type=int, default=32,
                    help="the run's pool's PGs (about a third leave the canary out: group R)")
    ap.add_argument('--threads', type=int, default=THREADS, help='client_threads (no --grid)')
    ap.add_argument('--pool', default=POOL, help="the run's pool, made and removed by the run")
    ap.add_argument('--size', type=int, default=2, help="the pool's size (min_size size - 1)")
    ap.add_argument('--application', default='rados', help="the pool's application")
    ap.add_argument('--chunk', type=float, default=2, help='bench_chunk_seconds')
    ap.add_argument('--objective', default='', help='start --objective (default: none)')
    ap.add_argument('--no-single-copy', dest='allow_single_copy', action='store_false',
                    help='start without --allow-single-copy')
    ap.add_argument('--history-out', default='',
                    help="append each session's status and `history -f json` here")
    ap.add_argument('--limit', type=float, default=1800, help='s a session may take')
    ap.add_argument('--grid', type=grid, help='warm-up:window[:client threads] (s) measured '
                    'in turn, e.g. 10:20,20:60:4 (default: --warmup, --duration, --threads)')
    ap.add_argument('--designs', type=designs, default=['split', 'sequential'],
                    help='the designs measured, comma-separated (split,sequential)')
    ap.add_argument('--up', action='store_true', help='a fresh lab first, down at the end')
    ap.add_argument('--table', metavar='JSONL', help='no lab: the table of a run')
    ap.add_argument('--history', metavar='JSONL', help='with --table: `history -f json` '
                    'dumps saved while a run ran, one a line, for the runs of rows '
                    'saved without them')
    ap.add_argument('--compare', metavar='JSONL', nargs='+', help='no lab: the arms of '
                    'these runs, pooled by arm, and the ratio of every two arms\' sds')
    ap.add_argument('--rounds', action='store_true', help='with --compare: the rounds an '
                    'equally fast candidate needs at each sd (slow: minutes of CPU)')
    ap.add_argument('--histories', metavar='JSON', nargs='+', help='no lab: real sessions\' '
                    '`history -f json`: their A/A and rounds\' noise of C/R, pooled')
    ap.add_argument('--finalists', action='store_true', help='with --histories: each '
                    'finalist\'s search window beside its rounds, and their correlation')
    return ap


def main() -> None:
    args = parser().parse_args()
    if args.histories:
        print(finalists(args.histories) if args.finalists else histories(args.histories))
        return
    if args.table or args.compare:
        print(table(args.table, args.history) if args.table else compare(args.compare, args.rounds))
        return
    run(args)


if __name__ == '__main__':
    main()
