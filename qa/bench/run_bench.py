#!/usr/bin/python3
"""Is the tuned config better than the default, and than the experts'?

    qa/bench/run-bench [--quick] [--flash|--hdd|--both] [--reps 3] [--trials 8]

Per mode (flash-like, HDD-like BlueStore), on a fresh lab of its own
(/var/tmp/rat-bench-lab, mon port 40700, torn down at the end):

1. a real tuning session: `ceph rocks-autotune start --osd 0 --trials T
   --duration D`; its best feasible options (`ceph rocks-autotune best`)
   are configuration `tuned` (the module's CPU/RSS is sampled meanwhile);
2. configurations default (the lab release's, from `ceph config help`),
   new_tuning and new_tuning_lz4 (seed 000) and tuned, interleaved
   A B C D A B C D ..., `--reps` rounds; each one is set on osd.0 only,
   osd.0 restarted through the orchestrator (wait for a new up_from and
   active+clean), then two windows measured from
   osd.0's perf counters by rocks_autotune.metrics:
   - osd_bench: 4 KiB osd bench on osd.0 (the tuner's workload), warm-up
     then `--window` seconds, longer until 2 memtable flushes (3x at most);
   - rados_bench: `rados bench -b 4096 -t 16` on a size-3 pool, same window
     rule; IOPS is the cluster-wide figure rados bench prints, client bytes
     for write-amp are osd.0's op_w_in_bytes;
3. writes doc/bench/results-<mode>.md (tables, command, date, lab facts),
   doc/bench/<mode>.png and doc/bench/windows-<mode>.json (every window).
   --quick (1 round, 2 trials, short windows) writes to build/bench/ instead.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

import benchlib
import module_cost
from benchlib import Lab, WindowSpec, log
from rocks_autotune.rocksdb_options import NEW_TUNING, NEW_TUNING_LZ4

CANARY = 0
POOL = 'ratbench'
NAMES = ['default', 'new_tuning', 'new_tuning_lz4', 'tuned']
WORKLOADS = [('osd_bench', 'canary `osd bench` (4 KiB random writes into 16 x 4 MiB objects, '
              'IOPS of osd.0)'),
             ('rados_bench', '`rados bench -b 4096 -t 16` on a size-3 pool (cluster-wide IOPS; '
              'counters of osd.0)')]


def ensure_matplotlib() -> None:
    if subprocess.run(['/usr/bin/python3', '-c', 'import matplotlib'],
                      stderr=subprocess.DEVNULL).returncode:
        log('installing python3-matplotlib')
        env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
        subprocess.run(['apt-get', 'install', '-y', '-q', '--no-install-recommends',
                        'python3-matplotlib'], check=True, env=env)


def run_session(lab: Lab, trials: int, duration: float, mode: str, out_dir: str,
                command: str) -> Dict[str, Any]:
    """A real tuning session; its best options, history and the module's cost."""
    pid = lab.mgr_pid()
    sampler = module_cost.Sampler(pid)
    log(f'tuning session: {trials} trials, {duration:.0f}s windows')
    lab.ceph('rocks-autotune', 'start', '--osd', str(CANARY), '--trials', str(trials),
             '--duration', str(int(duration)))
    t0 = time.time()
    last = ''
    while True:
        time.sleep(5)
        sampler.poll()
        st = lab.ceph_json('rocks-autotune', 'status')
        line = f'{st.get("phase")} {st.get("message")}'
        if line != last:
            log(f'  session: {line}')
            last = line
        if st['state'] not in ('running', 'stopping', 'restoring'):
            break
        if time.time() - t0 > 3600:
            raise RuntimeError('tuning session did not end within an hour')
    cost = sampler.result()
    history = json.loads(lab.ceph('rocks-autotune', 'history', '-f', 'json'))
    best_out = lab.ceph('rocks-autotune', 'best', '-f', 'json', check=False)
    best = json.loads(best_out) if best_out.strip() else None
    secs = [t['seconds'] for t in history if t.get('seconds')]
    res = {'state': st['state'], 'status': st, 'history': history, 'best': best,
           'wall_seconds': time.time() - t0, 'cost': cost,
           'seconds_per_trial': (f'median {benchlib.metrics.median(secs):.0f} s, max '
                                 f'{max(secs):.0f} s over {len(secs)} runs' if secs else '?')}
    with open(os.path.join(out_dir, f'session-cost-{mode}.json'), 'w') as f:
        json.dump({'command': command, 'mode': mode, 'trials': trials, 'duration': duration,
                   'date': datetime.datetime.now().isoformat(timespec='seconds'),
                   'cost': cost, 'seconds_per_trial': res['seconds_per_trial']}, f, indent=1)
    return res


def make_pool(lab: Lab) -> None:
    if POOL not in lab.ceph_json('osd', 'pool', 'ls'):
        lab.ceph('osd', 'pool', 'create', POOL, '32', '32', 'replicated', '--size', '3')
        lab.ceph('osd', 'pool', 'set', POOL, 'min_size', '2')
        lab.ceph('osd', 'pool', 'application', 'enable', POOL, 'rados')
    lab.wait('active+clean', lab.active_clean)


def plot(windows: List[Dict[str, Any]], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    cols = [('iops', 'IOPS'), ('kv_sync_lat_ms', 'kv_sync_lat (ms)'),
            ('write_amp', 'DB write-amp')]
    fig, axes = plt.subplots(len(WORKLOADS), len(cols), figsize=(13, 7), squeeze=False)
    for i, (wl, _) in enumerate(WORKLOADS):
        ws = [w for w in windows if w['workload'] == wl]
        summ = benchlib.summarize(ws, NAMES)
        for j, (key, label) in enumerate(cols):
            ax = axes[i][j]
            meds = [summ[n][key].median or 0 for n in NAMES]
            ax.bar(range(len(NAMES)), meds, color=['#999', '#6a9', '#8bd', '#e83'])
            for k, n in enumerate(NAMES):
                vals = summ[n][key].values
                ax.plot([k] * len(vals), vals, 'k.', ms=5)
            ax.set_xticks(range(len(NAMES)))
            ax.set_xticklabels(NAMES, fontsize=8)
            ax.set_title(f'{wl}: {label}', fontsize=9)
    fig.suptitle(title + ' (bars: median; dots: each window)', fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def verdicts(summary: Dict[str, Dict[str, benchlib.Stat]],
             ws: List[Dict[str, Any]]) -> List[str]:
    r = benchlib.ratio
    t, d, n = summary['tuned'], summary['default'], summary['new_tuning']

    def paired(base: str, key: str) -> Optional[float]:
        return benchlib.paired_ratios(ws, ['tuned'], base, key)['tuned']
    checks = [('tuned >= 1.5x default IOPS', r(t['iops'].median, d['iops'].median),
               paired('default', 'iops'), 1.5, '>='),
              ('tuned >= 1.1x New Tuning IOPS', r(t['iops'].median, n['iops'].median),
               paired('new_tuning', 'iops'), 1.1, '>='),
              ('tuned write-amp <= 1.10x default',
               r(t['write_amp'].median, d['write_amp'].median),
               paired('default', 'write_amp'), 1.10, '<=')]
    out = ['Judged on the paired ratios (same round), which interleaving is for; the '
           'ratio of the medians is shown too: where they disagree, drift between rounds '
           'is larger than the effect.', '']
    for label, v, pv, lim, op in checks:
        ok = pv is not None and (pv >= lim if op == '>=' else pv <= lim)
        out.append(f'- {label}: **{"met" if ok else "missed"}** (paired by round '
                   f'{"–" if pv is None else f"{pv:.2f}x"}; ratio of the medians '
                   f'{"–" if v is None else f"{v:.2f}x"})')
    return out


def cpu_lines(windows: List[Dict[str, Any]]) -> List[str]:
    """Median per configuration of where osd.0's CPU went in its osd bench windows."""
    ws = [w for w in windows if w['workload'] == 'osd_bench' and w.get('cpu')]
    if not ws:
        return []
    out = ['## CPU during the osd bench windows (/proc, % of one core, median)', '',
           '| configuration | osd.0 total | bstore_kv_sync | bstore_kv_final | admin_socket '
           '(runs osd bench) | rocksdb:low / high | machine busy (2 cores = 100%) |',
           '|---|---|---|---|---|---|---|']
    for n in NAMES:
        mine = [w['cpu'] for w in ws if w['config'] == n]
        if not mine:
            continue

        def med(f: Any) -> str:
            return f'{benchlib.metrics.median([f(c) for c in mine]):.0f}'

        def th(name: str) -> Any:
            return lambda c: sum(v for k, v in c['threads_core_pct'].items()
                                 if k.startswith(name))
        out.append(f'| {n} | {med(lambda c: c["process_core_pct"])} | {med(th("bstore_kv_sync"))}'
                   f' | {med(th("bstore_kv_final"))} | {med(th("admin_socket"))} | '
                   f'{med(th("rocksdb:low"))} / {med(th("rocksdb:high"))} | '
                   f'{med(lambda c: c["machine_busy_pct"])} |')
    return out + ['', 'Only the 8 busiest thread names of each window are kept, so a '
                  'thread shown as 0 may have been just below them.', '']


def report(mode: str, windows: List[Dict[str, Any]], sess: Dict[str, Any],
           facts: Dict[str, Any], configs: Dict[str, str], a: argparse.Namespace,
           command: str, spec: WindowSpec, rspec: WindowSpec, started: str, png: str,
           finished: Optional[str] = None) -> str:
    best = sess.get('best') or {}
    lines = [f'# Benchmark: {mode}-like BlueStore — default vs New Tuning vs tuned', '',
             f'Command: `{command}`', '',
             f'Started {started}, finished '
             f'{finished or datetime.datetime.now().isoformat(timespec="seconds")}. Lab: fresh, '
             f'{facts["osds"]} OSDs on 8 GiB sparse files on one VM with {facts["cores"]} '
             f'cores shared with other developers\' labs (load average '
             f'{facts["load_avg_at_start"]:.1f} at the start; per window in the JSON); '
             f'{facts["version"]}.', '',
             f'Order: {a.reps} round(s) of {" → ".join(NAMES)}, each configuration set on '
             f'osd.{CANARY} only and osd.{CANARY} restarted before its windows (osd bench '
             'window, then rados bench window). Median over the rounds; spread = '
             '(max − min) / median; ratios are of the medians.', '',
             '## The tuning session inside the bench', '',
             f'`ceph rocks-autotune start --osd {CANARY} --trials {a.trials} --duration '
             f'{a.duration:.0f}`: ended `{sess["state"]}` after {sess["wall_seconds"]:.0f} s; '
             f'seconds per trial (restart + warm-up + window): {sess["seconds_per_trial"]}. '
             f'Best: trial {best.get("trial", "–")} ({best.get("kind", "none")}), '
             f'session ratios to its baseline {best.get("ratios", {})}.', '',
             f'`tuned` = `{configs["tuned"]}`', '']
    target_lines: List[str] = []
    for wl, desc in WORKLOADS:
        ws = [w for w in windows if w['workload'] == wl]
        summ = benchlib.summarize(ws, NAMES)
        short = sum(1 for w in ws if w['window_short'])
        ww = spec if wl == 'osd_bench' else rspec
        lines += [f'## {wl}: {desc}', '',
                  f'Window: warm-up {ww.warmup:.0f} s, {ww.duration:.0f} s'
                  + (f', extended up to {ww.max_factor:.0f}x until {ww.min_flushes:.0f} '
                     'flushes' if ww.max_factor > 1 else ', not extended') + '.', '',
                  benchlib.render_table(summ, NAMES, 'default', 'new_tuning'), '',
                  'Paired: each round\'s value over the default\'s in the same round, median '
                  'over the rounds (drift between rounds cancels):', '',
                  benchlib.render_paired(ws, NAMES, 'default'), '',
                  f'{len(ws)} windows, {short} with fewer than {spec.min_flushes:.0f} '
                  'memtable flushes: there the DB bytes are mostly WAL and the write-amp '
                  'leaves out SST writes still to come (flushes column).', '']
        if wl == 'osd_bench':
            target_lines = verdicts(summ, ws)
    lines += cpu_lines(windows)
    lines += ['## Targets (canary osd bench)', ''] + target_lines + [
        '', f'Plot: `{os.path.relpath(png, benchlib.REPO)}`. Every window: '
        f'`windows-{mode}.json` next to this file.', '']
    lines += ['## Configurations', ''] + [f'- `{n}`: `{configs[n]}`' for n in NAMES]
    return '\n'.join(lines) + '\n'


def run_mode(mode: str, a: argparse.Namespace, command: str) -> None:
    out_dir = os.path.join(benchlib.REPO, 'build', 'bench') if a.quick else benchlib.DOC
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(os.path.join(benchlib.REPO, 'build', 'bench'), exist_ok=True)
    spec = WindowSpec(warmup=a.warmup, duration=a.window)
    rspec = WindowSpec(warmup=5, duration=a.rados_window, max_factor=1.0)
    started = datetime.datetime.now().isoformat(timespec='seconds')
    lab = Lab()
    lab.up(flash=(mode == 'flash'), fresh=True)
    windows: List[Dict[str, Any]] = []
    wpath = os.path.join(out_dir, f'windows-{mode}.json')
    try:
        facts = lab.facts()
        sess = run_session(lab, a.trials, a.duration, mode,
                           os.path.join(benchlib.REPO, 'build', 'bench'), command)
        tuned: Optional[str] = (sess['best'] or {}).get('options')
        if not tuned:
            log('the session found no feasible options: tuned = the default')
        default = lab.release_default()  # the lab's release's, as the module reads it
        configs = {'default': default, 'new_tuning': NEW_TUNING,
                   'new_tuning_lz4': NEW_TUNING_LZ4, 'tuned': tuned or default}
        benchlib.raise_bench_limit(lab, CANARY)
        make_pool(lab)
        for rep, name in benchlib.interleave(NAMES, a.reps):
            opts = configs[name]
            restart = lab.apply(CANARY, opts)
            prof: Dict[str, Any] = {}
            m = benchlib.osd_bench_window(lab, CANARY, opts, spec, profile=prof)
            windows.append(dict(benchlib.window_row(name, rep, 'osd_bench', m),
                                restart_seconds=restart, load_avg=os.getloadavg()[0],
                                cpu=prof))
            log(f'round {rep} {name} osd_bench: IOPS {m.iops:.0f} kv_sync '
                f'{m.kv_sync_lat_ms:.3f} ms wa {m.write_amp:.3f} flushes {m.flushes:.1f}')
            m2, iops = benchlib.rados_bench_window(lab, CANARY, POOL, opts, rspec,
                                                   f'{mode}-{rep}-{name}')
            windows.append(dict(benchlib.window_row(name, rep, 'rados_bench', m2, iops),
                                load_avg=os.getloadavg()[0]))
            log(f'round {rep} {name} rados_bench: IOPS {iops:.0f} kv_sync '
                f'{m2.kv_sync_lat_ms or 0:.3f} ms wa {m2.write_amp:.3f} '
                f'flushes {m2.flushes:.1f}')
            with open(wpath, 'w') as f:
                json.dump({'command': command, 'configs': configs, 'windows': windows,
                           'facts': facts, 'started': started,
                           'finished': datetime.datetime.now().isoformat(timespec='seconds'),
                           'session_wall_seconds': sess['wall_seconds'],
                           'session': {k: sess[k] for k in ('state', 'best', 'history',
                                                            'seconds_per_trial')}},
                          f, indent=1)
        png = os.path.join(out_dir, f'{mode}.png')
        plot(windows, png, f'{mode}-like BlueStore, osd.{CANARY}, {a.reps} round(s)')
        text = report(mode, windows, sess, facts, configs, a, command, spec, rspec, started,
                      png)
        with open(os.path.join(out_dir, f'results-{mode}.md'), 'w') as f:
            f.write(text)
        print(text)
    finally:
        try:
            benchlib.restore(lab, CANARY)
            lab.ceph('osd', 'pool', 'rm', POOL, POOL, '--yes-i-really-really-mean-it',
                     check=False)
        finally:
            if not a.keep_lab:
                lab.down()


def rebuild(mode: str, a: argparse.Namespace, path: str) -> None:
    with open(path) as f:
        d = json.load(f)
    out_dir = os.path.dirname(os.path.abspath(path))
    md = os.path.join(out_dir, f'results-{mode}.md')
    if 'facts' not in d:
        # windows files of the first runs lack the run's facts: take them from
        # the results file that same run wrote
        import re
        with open(md) as f:
            old = f.read()

        def grab(rx: str) -> str:
            m = re.search(rx, old)
            if not m:
                raise SystemExit(f'{md}: no {rx!r}')
            return m.group(1)
        d['started'] = grab(r'Started (\S+), finished')
        d['finished'] = grab(r'finished (\S+)\. Lab')
        d['session_wall_seconds'] = float(grab(r'ended `\w+` after (\d+) s'))
        d['facts'] = {'osds': int(grab(r'fresh, (\d+) OSDs')),
                      'cores': int(grab(r'with (\d+) cores')),
                      'load_avg_at_start': float(grab(r'load average ([\d.]+) at the start')),
                      'version': grab(r'; (ceph version [^\n]*?)\.\n')}
    sess = d['session']
    sess['wall_seconds'] = d['session_wall_seconds']
    spec = WindowSpec(warmup=a.warmup, duration=a.window)
    rspec = WindowSpec(warmup=5, duration=a.rados_window, max_factor=1.0)
    png = os.path.join(out_dir, f'{mode}.png')
    plot(d['windows'], png, f'{mode}-like BlueStore, osd.{CANARY}, {a.reps} round(s)')
    text = report(mode, d['windows'], sess, d['facts'], d['configs'], a, d['command'], spec,
                  rspec, d['started'], png, d['finished'])
    with open(md, 'w') as f:
        f.write(text)
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true',
                    help='1 round, 2 trials, short windows; results in build/bench/')
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--flash', action='store_true', help='flash-like BlueStore (default)')
    g.add_argument('--hdd', action='store_true', help='HDD-like BlueStore')
    g.add_argument('--both', action='store_true', help='flash, then HDD')
    ap.add_argument('--reps', type=int, default=None, help='rounds (default 3; quick 1)')
    ap.add_argument('--trials', type=int, default=None, help='session trials (8; quick 2)')
    ap.add_argument('--duration', type=float, default=None,
                    help='session window seconds (20; quick 8)')
    ap.add_argument('--window', type=float, default=None, help='bench window s (30; quick 8)')
    ap.add_argument('--warmup', type=float, default=None, help='bench warm-up s (10; quick 3)')
    ap.add_argument('--rados-window', type=float, default=None,
                    help='rados bench window s, not extended (30; quick 6): at ~1k IOPS on '
                    'the lab, 2 flushes of the default would take minutes per window')
    ap.add_argument('--keep-lab', action='store_true')
    ap.add_argument('--from-json', metavar='WINDOWS_JSON',
                    help='no lab: rewrite results-<mode>.md and the plot from a windows file '
                    'of an earlier run (its arguments must be given again)')
    a = ap.parse_args()
    for k, full, quick in (('reps', 3, 1), ('trials', 8, 2), ('duration', 20, 8),
                           ('window', 30, 8), ('warmup', 10, 3),
                           ('rados_window', 30, 6)):
        if getattr(a, k) is None:
            setattr(a, k, quick if a.quick else full)
    if os.geteuid() != 0:
        ap.error('run as root: the bench builds a lab')
    ensure_matplotlib()
    command = 'qa/bench/run-bench ' + ' '.join(sys.argv[1:])
    modes = ['flash', 'hdd'] if a.both else ['hdd'] if a.hdd else ['flash']
    if a.from_json:
        rebuild(modes[0], a, a.from_json)
        return
    for mode in modes:
        run_mode(mode, a, command.strip())


if __name__ == '__main__':
    main()
