#!/usr/bin/python3
"""Does the tuning session's claim hold under an interleaved bench?

    qa/bench/run-bench [--quick] [--flash|--hdd|--both] [--seeds 0] [--reps 5] [--trials 8]
                       [--confirm-candidates K] [--confirm-rounds R] [--steady-limit S]
                       [--client-window S] [--image-mib M] [--start-options S]
                       [--configs default,start]

Per mode (flash-like, HDD-like BlueStore) and per seed, on a fresh lab of its
own ($BENCH_LAB_DIR, default /var/tmp/rat-bench-lab; mon port
$BENCH_LAB_MON_PORT, default 21700; taken down first and at the end):

1. (--start-options: osd.0 set to those options and restarted first, so
   that they are the session's baseline, run by the bench as `start`)
   a real tuning session under the module's default workload (its client
   load): module options seed (the seed), warmup (the bench's --warmup),
   steady_window_limit (--steady-limit) and, when given, confirm_candidates /
   confirm_rounds set for it and put back after (--quick also shrinks the
   client load's keyspace and preconditioning); `ceph rocks-autotune start
   --osd 0 --trials T --duration D`; its answer (`ceph rocks-autotune best -f json`): the
   recommended options, or keep current (the module's CPU/RSS is sampled
   meanwhile);
2. configurations default (the lab release's, from `ceph config help`),
   new_tuning and new_tuning_lz4 (seed 000) and tuned (the recommended
   options; when the answer is keep current, the confirmation's best-ranked
   candidate c1), interleaved A B C D A B C D ..., `--reps` rounds; each one
   is set on osd.0 only, osd.0 restarted through the orchestrator (wait for a
   new up_from and active+clean), then two windows measured from osd.0's perf
   counters by rocks_autotune.perf_counters (RocksDB's statistics on at osd.0 for
   the bench, as a session sets them):
   - osd_bench: 4 KiB osd bench on osd.0 (the quick workload), warm-up
     then `--window` seconds for every configuration, marked short when
     the configuration went through no L0 compaction cycle;
   - fio_rbd, the client check: fio's rbd engine (inside the lab's release,
     `ceph-lab exec`), 4 KiB random writes, 16 in flight, into an image of
     `--image-mib` on a size-3 pool, written end to end once before the
     first round: a client on all OSDs.  Warm-up, then at least
     `--client-window` seconds and until osd.0's busiest column family
     went through a compaction below L0 (RocksDB's own counts), at most
     `--steady-limit`; marked short without one, and a short window feeds
     no write-amp ratio.  IOPS is the cluster-wide figure fio reports;
     client bytes for write-amp are osd.0's op_w_in_bytes; RocksDB's WAL,
     flush and compaction bytes are kept apart;
3. the claim check (benchlib.check_claim), against the client check (the
   osd_bench windows for a run without one): a recommendation held when the
   bench's paired median IOPS ratio tuned / default is at least the claimed
   90% interval's low end (inside the interval, write-amp within the budget:
   reported too); keep current held unless the bench's own 90% interval for
   c1 clears 1 + the margin (not checked with fewer than 5 rounds);
4. writes doc/bench/results-<mode>.md (per seed: the claim, the bench's
   figures, held or not, tables, command, date, lab facts; "N of M claims
   held"), doc/bench/<mode>.png (<mode>-seed<S>.png with several seeds) and
   qa/bench/results/windows-<mode>.json (every window, every session's
   answer).  --quick (1 round, 2 trials, 1 candidate confirmed in 5 rounds,
   short windows) writes all of them to build/bench/ instead.
"""
import argparse
import dataclasses
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import benchlib
import module_cost
from benchlib import Lab, WindowSpec, log
from rocks_autotune import views
from rocks_autotune.paired_stats import Ratios
from rocks_autotune.perf_counters import OBJECTIVE_NAMES
from rocks_autotune.rocksdb_options import NEW_TUNING, NEW_TUNING_LZ4

CANARY = 0
POOL = 'ratbench'
SESSION_LIMIT = 3 * 3600  # seconds: a session with its confirmation, at most
NAMES = ['default', 'new_tuning', 'new_tuning_lz4', 'tuned']
# with --start-options: what osd.0 ran when the session started (its baseline)
START = 'start'
COLORS = {'default': '#999', 'new_tuning': '#6a9', 'new_tuning_lz4': '#8bd', 'tuned': '#e83',
          START: '#c6c'}
# the session's write-amp ratio for a candidate agrees with the client's when
# within this factor of it (issue 26)
AGREE = 1.15
# every workload a run may hold, in report order (rados_bench: runs before the client check)
WORKLOADS = [('osd_bench', 'canary `osd bench` (4 KiB random writes into 16 x 4 MiB objects, '
              'IOPS of osd.0)'),
             ('fio_rbd', 'the client check: fio\'s rbd engine, 4 KiB random writes (16 in '
              'flight) into a filled image on a size-3 pool (cluster-wide IOPS; counters of '
              'osd.0), until osd.0 compacts'),
             ('rados_bench', '`rados bench -b 4096 -t 16` on a size-3 pool (cluster-wide IOPS; '
              'counters of osd.0)')]
MEASURED = ('osd_bench', 'fio_rbd')  # what a run measures now
# the client load of a --quick session: behaviour, not a steady state
QUICK_CLIENT = {'client_space': str(64 << 20), 'precondition_limit': '30'}


def names_of(run: Dict[str, Any]) -> List[str]:
    """The run's configurations, in interleave order."""
    return list(run['configs'])


def baseline_of(run: Dict[str, Any]) -> str:
    """The configuration the session's baseline ran: the one osd.0 started on."""
    return START if START in run['configs'] else 'default'


def workloads_of(run: Dict[str, Any]) -> List[str]:
    return [wl for wl, _ in WORKLOADS if wl in run['specs']]


def reference(run: Dict[str, Any]) -> str:
    """The windows a claim is checked against: the client check when the run has it."""
    return 'fio_rbd' if any(w['workload'] == 'fio_rbd' for w in run['windows']) else 'osd_bench'


def ensure_matplotlib() -> None:
    if subprocess.run(['/usr/bin/python3', '-c', 'import matplotlib'],
                      stderr=subprocess.DEVNULL).returncode:
        log('installing python3-matplotlib')
        env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
        subprocess.run(['apt-get', 'install', '-y', '-q', '--no-install-recommends',
                        'python3-matplotlib'], check=True, env=env)


def module_options(a: argparse.Namespace, seed: int) -> Dict[str, str]:
    """The module options a session of the bench runs with (set before its
    start, put back after): the seed, the bench's warm-up (so that the
    session's windows and the bench's are warmed alike), and the
    confirmation's size when the command line gives it."""
    opts = {'seed': str(seed), 'warmup': str(int(round(a.warmup))),
            'steady_window_limit': str(int(a.steady_limit)), **(QUICK_CLIENT if a.quick else {})}
    if a.confirm_candidates is not None:
        opts['confirm_candidates'] = str(a.confirm_candidates)
    if a.confirm_rounds is not None:
        opts['confirm_rounds'] = str(a.confirm_rounds)
    for item in a.module_option or []:
        name, _, value = item.partition('=')
        opts[name] = value
    return opts


def run_session(lab: Lab, a: argparse.Namespace, mode: str, seed: int, out_dir: str,
                command: str) -> Dict[str, Any]:
    """A real tuning session: its answer (`best -f json`), history, status and
    the module's cost."""
    opts = module_options(a, seed)
    was = lab.set_module_options(opts)
    try:
        pid = lab.mgr_pid()
        sampler = module_cost.Sampler(pid)
        log(f'tuning session (seed {seed}): {a.trials} trials, {a.duration:.0f}s windows, '
            f'module options {opts}')
        lab.ceph('rocks-autotune', 'start', '--osd', str(CANARY), '--trials', str(a.trials),
                 '--duration', str(int(a.duration)))
        t0 = time.time()
        last = ''
        while True:
            time.sleep(5)
            sampler.poll()
            st = lab.ceph_json('rocks-autotune', 'status')
            line = (f'{st.get("phase")} trials {st.get("trials_done")}/{a.trials} '
                    f'confirmation {st.get("confirm_done", 0)}: {st.get("message")}')
            if line != last:
                log(f'  session: {line}')
                last = line
            if st['state'] not in ('running', 'stopping', 'restoring'):
                break
            if time.time() - t0 > SESSION_LIMIT:
                raise RuntimeError(f'tuning session did not end within {SESSION_LIMIT} s')
    finally:
        lab.put_back_module_options(was)
    cost = sampler.result()
    history = json.loads(lab.ceph('rocks-autotune', 'history', '-f', 'json'))
    # no answer (the session ended before its confirmation): ENOENT, no output
    best_out = lab.ceph('rocks-autotune', 'best', '-f', 'json', check=False)
    best = json.loads(best_out) if best_out.strip() else None
    secs = [t['seconds'] for t in history if t.get('seconds')]
    res = {'state': st['state'], 'message': st.get('message'), 'best': best,
           'history': history, 'module_options': opts, 'wall_seconds': time.time() - t0,
           'cost': cost,
           'seconds_per_trial': (f'median {statistics.median(secs):.0f} s, max '
                                 f'{max(secs):.0f} s over {len(secs)} runs' if secs else '?')}
    with open(os.path.join(data_dir(out_dir), f'session-cost-{mode}-seed{seed}.json'),
              'w') as f:
        json.dump({'command': command, 'mode': mode, 'seed': seed, 'trials': a.trials,
                   'duration': a.duration,
                   'date': datetime.datetime.now().isoformat(timespec='seconds'),
                   'cost': cost, 'seconds_per_trial': res['seconds_per_trial']}, f, indent=1)
    return res


def plot(windows: List[Dict[str, Any]], names: List[str], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    cols = [('iops', 'IOPS'), ('kv_sync_lat_ms', 'kv_sync_lat (ms)'),
            ('write_amp', 'DB write-amp')]
    wls = [wl for wl, _ in WORKLOADS if any(w['workload'] == wl for w in windows)]
    fig, axes = plt.subplots(len(wls), len(cols), figsize=(13, 7), squeeze=False)
    for i, wl in enumerate(wls):
        ws = [w for w in windows if w['workload'] == wl]
        summ = benchlib.summarize(ws, names)
        for j, (key, label) in enumerate(cols):
            ax = axes[i][j]
            meds = [summ[n][key].median or 0 for n in names]
            ax.bar(range(len(names)), meds, color=[COLORS[n] for n in names])
            for k, n in enumerate(names):
                vals = summ[n][key].values
                ax.plot([k] * len(vals), vals, 'k.', ms=5)
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, fontsize=8)
            ax.set_title(f'{wl}: {label}', fontsize=9)
    fig.suptitle(title + ' (bars: median; dots: each window)', fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def reference_of(names: Sequence[str]) -> str:
    """The tables' second reference: New Tuning, or (a run with --configs
    that left it out) the last configuration run."""
    return 'new_tuning' if 'new_tuning' in names else names[-1]


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


def cpu_lines(windows: List[Dict[str, Any]], names: List[str]) -> List[str]:
    """Median per configuration of where osd.0's CPU went in its osd bench windows."""
    ws = [w for w in windows if w['workload'] == 'osd_bench' and w.get('cpu')]
    if not ws:
        return []
    out = ['## CPU during the osd bench windows (/proc, % of one core, median)', '',
           '| configuration | osd.0 total | bstore_kv_sync | bstore_kv_final | admin_socket '
           '(runs osd bench) | rocksdb:low / high | machine busy (2 cores = 100%) |',
           '|---|---|---|---|---|---|---|']
    for n in names:
        mine = [w['cpu'] for w in ws if w['config'] == n]
        if not mine:
            continue

        def med(f: Any) -> str:
            return f'{statistics.median([f(c) for c in mine]):.0f}'

        def th(name: str) -> Any:
            return lambda c: sum(v for k, v in c['threads_core_pct'].items()
                                 if k.startswith(name))
        out.append(f'| {n} | {med(lambda c: c["process_core_pct"])} | {med(th("bstore_kv_sync"))}'
                   f' | {med(th("bstore_kv_final"))} | {med(th("admin_socket"))} | '
                   f'{med(th("rocksdb:low"))} / {med(th("rocksdb:high"))} | '
                   f'{med(lambda c: c["machine_busy_pct"])} |')
    return out + ['', 'Only the 8 busiest thread names of each window are kept, so a '
                  'thread shown as 0 may have been just below them.', '']


def _yn(v: Optional[bool]) -> str:
    return '–' if v is None else 'yes' if v else 'no'


def _fig(r: Optional[Dict[str, Any]]) -> str:
    """A ratio with its interval and rounds, as the session shows its own."""
    if not r or r.get('median') is None:
        return '–'
    return f'{views.ratio_text(Ratios(**r))}, {r["rounds"]} round(s)'


def tuned_what(claim: Optional[Dict[str, Any]], configs: Dict[str, str]) -> str:
    if claim is None or claim['options'] is None:
        if 'tuned' not in configs:
            return 'not run (--configs)'
        if configs['tuned'] != configs.get('default'):  # a run from before the confirmation
            return 'the search\'s best single window (no confirmation)'
        return 'the default (no candidate)'
    role = 'recommended' if claim['answer'] == 'recommend' else 'best-ranked'
    return f'{claim["arm"]} (trial {claim["trial"]}), {role}'


def claim_lines(run: Dict[str, Any]) -> List[str]:
    """The claim, the bench's figures for it, and whether it held: for the
    log and the report."""
    claim, check, bench = run['claim'], run['check'], run['bench']
    name = OBJECTIVE_NAMES.get(claim['objective'], claim['objective']) if claim else 'IOPS'
    if claim is not None:
        said = f'{claim["answer"]}: {claim["summary"]}'
    elif run['session'].get('best'):
        said = 'no confirmed answer (the session predates the confirmation)'
    else:
        said = f'no answer (the session ended `{run["session"]["state"]}`)'
    out = [f'session: {said}']
    if claim is not None and claim['ratio'] is not None:
        out.append(f'claim ({tuned_what(claim, run["configs"])}): {name} / baseline '
                   f'{_fig(claim["ratio"])}; write-amp {_fig(claim["write_amp"])} '
                   f'(budget {claim["budget"]:.2f}x, margin {claim["margin"]:.0%})')
    out.append(f'bench (tuned / {baseline_of(run)}, {reference(run)}, paired by round): {name} '
               f'{_fig(bench["objective"])}; write-amp {_fig(bench["write_amp"])}')
    held = {None: 'not checked', True: 'HELD', False: 'NOT HELD'}[check['held']]
    out.append(f'claim {held}: {check["why"]}; inside the claimed interval: '
               f'{_yn(check["inside"])}; write-amp within the budget: '
               f'{_yn(check["write_amp_within"])}')
    return out


def claims_table(runs: List[Dict[str, Any]]) -> List[str]:
    out = ['| seed | answer | `tuned` | claimed IOPS / default [90%] | claimed write-amp / '
           'default [90%] | bench IOPS / default (paired) [90%] | bench write-amp / default '
           '(paired) | claim held | bench inside the claimed interval | bench write-amp '
           'within the budget |', '|' + '---|' * 10]
    for run in runs:
        claim, check, bench = run['claim'], run['check'], run['bench']
        held = {None: f'– ({check["why"]})', True: '**held**',
                False: f'**not held** ({check["why"]})'}[check['held']]
        out.append(' | '.join([
            f'| {"–" if run["seed"] is None else run["seed"]}',
            claim['answer'] if claim else 'none',
            tuned_what(claim, run['configs']), _fig(claim and claim['ratio']),
            _fig(claim and claim['write_amp']), _fig(bench['objective']),
            _fig(bench['write_amp']), held, _yn(check['inside']),
            _yn(check['write_amp_within'])]) + ' |')
    return out


HOW_JUDGED = (
    'How a claim is judged.  The session\'s baseline is osd.0\'s options at its start: on '
    'the fresh lab, the release\'s default, the bench\'s `default`.  A recommendation claims '
    'that its IOPS beats the baseline by at least its 90% interval\'s low end: it **held** '
    'when the bench\'s paired median ratio tuned / default (tuned / start with '
    '--start-options; the client check, fio_rbd; in runs without it, canary osd bench; '
    'each round\'s tuned over the same round\'s baseline, the median of the '
    'log-ratios as the session computes its own) is at least that low end.  Keep current '
    'claims that no candidate beats the baseline by more than the margin: it held when the '
    'bench finds the confirmation\'s best-ranked candidate (c1, run as `tuned`) below 1 + '
    'the margin.  Also shown: whether the bench\'s ratio lies inside the claimed interval, '
    'and whether its write-amp ratio (rounds where neither window was short) stays within '
    'the session\'s budget.  The bench\'s own '
    'interval needs 5 rounds (`--reps 5`); with fewer it is open ([-inf, inf]).')


def session_lines(run: Dict[str, Any], a: argparse.Namespace) -> List[str]:
    sess, claim = run['session'], run['claim']
    if sess['state'] == NO_SESSION['state']:
        return ['None (`--no-session`): this run measured the bench\'s windows only.', '']
    best = sess.get('best') or {}
    opts = ', '.join(f'`{k}` {v}' for k, v in (sess.get('module_options') or {}).items())
    lines = [f'`ceph rocks-autotune start --osd {CANARY} --trials {a.trials} --duration '
             f'{a.duration:.0f}`' + (f' (module options: {opts})' if opts else '')
             + f': ended `{sess["state"]}` after {sess["wall_seconds"]:.0f} s; seconds per '
             f'measurement (restart + warm-up + window): {sess["seconds_per_trial"]}.', '']
    if claim is not None:
        name = OBJECTIVE_NAMES.get(best['objective'], best['objective'])
        lines += [f'Answer: {best["summary"]}.', '',
                  'Confirmed candidates (median ratio to the baseline of the same round '
                  f'[{best["level"]:.0%} interval]):', '']
        lines += [f'- {c["arm"]} (trial {c["trial"]}): {name} {_fig(c["objective"])}; '
                  f'kv_sync_lat {_fig(c["kv_sync_lat"])}; write-amp {_fig(c["write_amp"])}: '
                  f'{c["verdict"]}' + (f' ({c["why"]})' if c.get('why') else '')
                  for c in best['candidates']]
        lines.append('')
    elif best:  # a run from before the confirmation: the search's best single window
        lines += [f'Best (the search\'s, before the confirmation existed): trial '
                  f'{best.get("trial", "–")} ({best.get("kind", "none")}), single-window '
                  f'ratios to its baseline {best.get("ratios", {})}.', '']
    else:
        why = sess.get('message') or 'the session ended before its confirmation'
        lines += [f'No answer: {why}.', '']
    if 'tuned' in run['configs']:
        lines += [f'`tuned` = {tuned_what(claim, run["configs"])}: '
                  f'`{run["configs"]["tuned"]}`', '']
    else:  # --configs left it out: the pairs below set the candidates beside the bench
        lines += ['`tuned` was not run (`--configs`).', '']
    return lines


def run_section(mode: str, run: Dict[str, Any], a: argparse.Namespace, png: str) -> List[str]:
    """One seed's session, its interleaved bench, and the claim check."""
    windows, facts, configs = run['windows'], run['facts'], run['configs']
    specs = {wl: WindowSpec(**run['specs'][wl]) for wl in workloads_of(run)}
    names = names_of(run)
    seed = run['seed']
    lines = [f'## Seed {seed}' if seed is not None else '## The run', '',
             f'Started {run["started"]}, finished {run["finished"]}. Lab: fresh, '
             f'{facts["osds"]} OSDs on 8 GiB sparse files on one VM with {facts["cores"]} '
             f'cores shared with other developers\' labs (load average '
             f'{facts["load_avg_at_start"]:.1f} at the start; per window in the JSON); '
             f'{facts["version"]}; this repository at '
             f'{facts.get("commit", "a commit not recorded")}.', '',
             '### The tuning session', ''] + session_lines(run, a)
    for key, what in (('session_from', 'The session above is that'),
                      ('bench_from', 'The bench\'s windows below are those')):
        b = run.get(key)
        if b:
            lines += [f'{what} of an earlier run, `{b["path"]}` (started {b["started"]}, '
                      f'finished {b["finished"]}, on a fresh lab of {b["facts"]["osds"]} OSDs '
                      f'built the same way, load average {b["facts"]["load_avg_at_start"]:.1f} '
                      f'at its start; {b["facts"].get("commit", "commit not recorded")}): each '
                      'ratio is paired within its own run.', '']
    lines += ['### The claim and the bench', ''] + [f'- {x}' for x in claim_lines(run)] + ['']
    target_lines: List[str] = []
    for wl, desc in WORKLOADS:
        if wl not in specs:
            continue
        ws = [w for w in windows if w['workload'] == wl]
        summ = benchlib.summarize(ws, names)
        short = sum(1 for w in ws if w['window_short'])
        ww = specs[wl]
        until = f'{ww.min_flushes:.0f} flushes' + (
            f' and {ww.min_cycles:.0f} L0 compaction cycle(s)' if ww.min_cycles else '')
        if ww.steady_limit:
            until = 'a compaction below L0 of osd.0\'s busiest column family'
            how = f', then until {until}, at most {ww.steady_limit:.0f} s'
        elif ww.max_factor > 1:
            how = f', extended up to {ww.max_factor:.0f}x until {until}'
        else:
            how = ', not extended'
        lines += [f'### {wl}: {desc}', '',
                  f'Window: warm-up {ww.warmup:.0f} s, {ww.duration:.0f} s{how}.', '',
                  benchlib.render_table(summ, names, 'default', reference_of(names)), '',
                  'Paired: each round\'s value over the default\'s in the same round, median '
                  'over the rounds (drift between rounds cancels):', '',
                  benchlib.render_paired(ws, names, 'default'), '',
                  f'{len(ws)} windows, {short} short (they ended before {until}): there '
                  'write-amp leaves out SST writes still to come (flushes column).', '']
        if wl == 'osd_bench' and {'default', 'new_tuning', 'tuned'} <= set(names):
            target_lines = verdicts(summ, ws)
        elif wl == 'osd_bench':
            target_lines = [f'Not judged: they take default, new_tuning and tuned; this run had '
                            f'{", ".join(names)} (`--configs`).']
    lines += pair_lines(run) + cpu_lines(windows, names)
    lines += ['### Targets (canary osd bench)', ''] + target_lines + [
        '', f'Plot: `{os.path.relpath(png, benchlib.REPO)}`. Every window: '
        f'`{os.path.relpath(data_dir(os.path.dirname(png)), benchlib.REPO)}/windows-{mode}.json`.',
        '']
    lines += ['### Configurations', ''] + [f'- `{n}`: `{configs[n]}`' for n in names] + ['']
    return lines


def png_path(out_dir: str, mode: str, seed: Optional[int], seeds: int) -> str:
    return os.path.join(out_dir, f'{mode}.png' if seeds == 1 else f'{mode}-seed{seed}.png')


def report(mode: str, runs: List[Dict[str, Any]], a: argparse.Namespace, command: str,
           out_dir: str) -> str:
    seeds = [str(r['seed']) for r in runs if r['seed'] is not None]
    lines = [f'# Benchmark: {mode}-like BlueStore — does the session\'s claim hold?', '',
             f'Command: `{command}`', '',
             f'Per seed ({", ".join(seeds) or "the module default"}): a fresh lab, a real tuning '
             'session (module option `seed`), then on the same lab default, New Tuning, New Tuning '
             f'LZ4 and `tuned` (and `{START}` with --start-options) interleaved, {a.reps} '
             f'round(s) of {" → ".join(names_of(runs[0]) if runs else NAMES)}, each '
             f'configuration set on osd.{CANARY} only and osd.{CANARY} restarted before its '
             'windows (osd bench window, then the client check\'s fio window). Median over the '
             'rounds; '
             'spread = (max − min) / median.  `tuned` is the session\'s recommended options; '
             'when its answer is keep current, the confirmation\'s best-ranked candidate.', '',
             '## The claims', ''] + claims_table(runs) + [
             '', f'**{benchlib.tally([r["check"] for r in runs])}.**', '', HOW_JUDGED, '']
    for run in runs:
        png = png_path(out_dir, mode, run['seed'], len(runs))
        lines += run_section(mode, run, a, png)
    return '\n'.join(lines)


def judge(run: Dict[str, Any]) -> None:
    """The claim of the run's session, the bench's figures for it, the check."""
    run['claim'] = benchlib.claim_of(run['session'].get('best'))
    key = run['claim']['objective'] if run['claim'] else 'iops'
    ref, base = reference(run), baseline_of(run)
    run['bench'] = {'objective': benchlib.bench_ratio(run['windows'], 'tuned', base, key, ref),
                    'write_amp': benchlib.bench_ratio(run['windows'], 'tuned', base,
                                                      'write_amp', ref)}
    run['pairs'] = pairs(run, key)
    obj = run['bench']['objective']
    run['check'] = benchlib.check_claim(run['claim'], obj['median'],
                                        run['bench']['write_amp']['median'],
                                        (obj['low'], obj['high']))


def pairs(run: Dict[str, Any], key: str) -> List[Dict[str, Any]]:
    """Every confirmed candidate the bench also ran (its options those of a
    configuration other than the baseline's): the session's ratios to its
    baseline next to the bench's paired ratios of that configuration to the
    baseline's, and whether the write-amp ratios agree within AGREE."""
    best = run['session'].get('best') or {}
    configs, base = run['configs'], baseline_of(run)
    ref = reference(run)
    out = []
    for c in best.get('candidates') or []:
        name = next((n for n in names_of(run) if n not in (base, 'tuned')
                     and configs[n] == c.get('options')), None)
        if name is None:
            continue
        wa = benchlib.bench_ratio(run['windows'], name, base, 'write_amp', ref)
        said = (c.get('write_amp') or {}).get('median')
        agree = (None if said is None or wa['median'] is None
                 else abs(math.log(said / wa['median'])) <= math.log(AGREE))
        out.append({'arm': c['arm'], 'config': name, 'session_objective': c.get('objective'),
                    'session_write_amp': c.get('write_amp'),
                    'bench_objective': benchlib.bench_ratio(run['windows'], name, base, key,
                                                            ref),
                    'bench_write_amp': wa, 'write_amp_agrees': agree})
    return out


def pair_lines(run: Dict[str, Any]) -> List[str]:
    if not run.get('pairs'):
        return []
    base = baseline_of(run)
    out = ['### The session\'s confirmation against the client check, per candidate', '',
           f'Each confirmed candidate whose options are a configuration of the bench: its '
           f'ratios to the session\'s baseline, and the bench\'s paired ratios of that '
           f'configuration to `{base}` ({reference(run)}; write-amp over rounds where neither '
           f'window was short).  Agrees: the two write-amp ratios within {AGREE:.2f}x of '
           'each other.', '',
           '| candidate | configuration | session objective | session write-amp | bench '
           'objective | bench write-amp | write-amp agrees |', '|---|---|---|---|---|---|---|']
    for p in run['pairs']:
        out.append(f'| {p["arm"]} | `{p["config"]}` | {_fig(p["session_objective"])} | '
                   f'{_fig(p["session_write_amp"])} | {_fig(p["bench_objective"])} | '
                   f'{_fig(p["bench_write_amp"])} | {_yn(p["write_amp_agrees"])} |')
    return out + ['']


def windows_json(path: str, command: str, mode: str, runs: List[Dict[str, Any]]) -> None:
    keep = ('state', 'message', 'best', 'history', 'module_options', 'seconds_per_trial',
            'wall_seconds')
    out = []
    for r in runs:
        d = {k: v for k, v in r.items() if k != 'session'}
        d['session'] = {k: r['session'][k] for k in keep}
        out.append(d)
    with open(path, 'w') as f:
        json.dump({'command': command, 'mode': mode, 'seeds': [r['seed'] for r in runs],
                   'runs': out}, f, indent=1)


# a run's session when it ran none (--no-session)
NO_SESSION: Dict[str, Any] = {'state': 'not run', 'message': '--no-session', 'best': None,
                              'history': [], 'module_options': {}, 'seconds_per_trial': None,
                              'wall_seconds': 0.0}


def run_of(path: str, seed: int) -> Dict[str, Any]:
    """The run of `seed` (or the only run) in an earlier run's windows file."""
    with open(path) as f:
        runs = json.load(f)['runs']
    run = next((r for r in runs if r['seed'] == seed), runs[0] if len(runs) == 1 else None)
    if run is None:
        raise SystemExit(f'{path}: no run of seed {seed}')
    return run


def provenance(path: str, run: Dict[str, Any]) -> Dict[str, Any]:
    return {'path': os.path.basename(path), 'started': run['started'],
            'finished': run['finished'], 'facts': run['facts']}


def bench_of(path: str, seed: int, configs: Dict[str, str]) -> Dict[str, Any]:
    """The bench part of an earlier run (--bench-from): its windows of `seed`
    (or its only run), which must have run the same configurations."""
    run = run_of(path, seed)
    theirs = {n: o for n, o in run['configs'].items() if n != 'tuned'}
    ours = {n: o for n, o in configs.items() if n != 'tuned'}
    if theirs != ours:
        raise SystemExit(f'{path}: its configurations differ from this run\'s '
                         f'({sorted(theirs)} vs {sorted(ours)}, or their options)')
    return {'windows': [benchlib.recount(w) for w in run['windows']],
            'image_fill_seconds': run.get('image_fill_seconds'),
            'specs': run['specs'], 'bench_from': provenance(path, run)}


def run_seed(mode: str, seed: int, a: argparse.Namespace, command: str,
             specs: Dict[str, WindowSpec], wpath: str,
             done: List[Dict[str, Any]]) -> Dict[str, Any]:
    """On a fresh lab: a session with this seed, then its own interleaved bench."""
    started = datetime.datetime.now().isoformat(timespec='seconds')
    lab = Lab()
    lab.up(flash=(mode == 'flash'), fresh=True)
    try:
        facts = lab.facts()
        if a.start_options:
            # the session's baseline: osd.0 runs these when it starts
            lab.apply(CANARY, a.start_options)
        earlier = run_of(a.session_from, seed) if a.session_from else None
        sess = NO_SESSION if a.no_session else earlier['session'] if earlier else run_session(
            lab, a, mode, seed, os.path.join(benchlib.REPO, 'build', 'bench'), command)
        claim = benchlib.claim_of(sess['best'])
        if claim is None:
            log(f'no answer ({sess["state"]}: {sess["message"]}): tuned = the default')
        else:
            log(f'answer: {claim["summary"]}')
        default = lab.release_default()  # the lab's release's, as the module reads it
        configs = {'default': default, 'new_tuning': NEW_TUNING,
                   'new_tuning_lz4': NEW_TUNING_LZ4,
                   'tuned': (claim or {}).get('options') or default,
                   **({START: a.start_options} if a.start_options else {})}
        if a.configs:  # only these, in the bench's order
            configs = {n: o for n, o in configs.items() if n in a.configs}
        log(f'tuned = {tuned_what(claim, configs)}')
        run: Dict[str, Any] = {'seed': seed, 'facts': facts, 'started': started,
                               'finished': None, 'configs': configs, 'windows': [],
                               'specs': {wl: dataclasses.asdict(s) for wl, s in specs.items()},
                               'session': sess}
        if earlier:
            run['session_from'] = provenance(a.session_from, earlier)
        if a.bench_from:
            run.update(bench_of(a.bench_from, seed, configs))
            log(f'bench windows of seed {seed} from {a.bench_from}, measured '
                f'{run["bench_from"]["started"]} to {run["bench_from"]["finished"]}')
            judge(run)
            windows_json(wpath, command, mode, done + [run])
            return run
        benchlib.raise_bench_limit(lab, CANARY)
        benchlib.stats_on(lab, CANARY)
        benchlib.make_pool(lab, POOL)
        benchlib.ensure_fio(lab)
        run['image_fill_seconds'] = benchlib.fio_image(lab, POOL, a.image_mib << 20)
        log(f'image of {a.image_mib} MiB written, then each block overwritten once, in '
            f'{run["image_fill_seconds"]:.0f} s')
        for rep, name in benchlib.interleave(list(configs), a.reps):
            opts = configs[name]
            restart = lab.apply(CANARY, opts)
            prof: Dict[str, Any] = {}
            m = benchlib.osd_bench_window(lab, CANARY, opts, specs['osd_bench'], profile=prof)
            run['windows'].append(dict(benchlib.window_row(name, rep, 'osd_bench', m),
                                       restart_seconds=restart, load_avg=os.getloadavg()[0],
                                       cpu=prof))
            log(f'round {rep} {name} osd_bench: IOPS {m.iops:.0f} kv_sync '
                f'{m.kv_sync_lat_ms:.3f} ms wa {m.write_amp:.3f} flushes {m.flushes:.1f}')
            m2, iops = benchlib.fio_rbd_window(lab, CANARY, POOL, opts, specs['fio_rbd'])
            run['windows'].append(dict(benchlib.window_row(name, rep, 'fio_rbd', m2, iops),
                                       load_avg=os.getloadavg()[0]))
            mib = 1 << 20
            log(f'round {rep} {name} fio_rbd: {m2.seconds:.0f} s IOPS {iops:.0f} wa '
                f'{m2.write_amp:.3f} (WAL {(m2.rocksdb_wal_bytes or 0) / mib:.0f} MiB, flush '
                f'{(m2.flush_bytes or 0) / mib:.0f} MiB, compaction '
                f'{(m2.compaction_bytes or 0) / mib:.0f} MiB; {m2.busiest_cf or "-"} '
                f'{m2.cf_flushes} flushes, {m2.compactions} compactions)'
                + (' short' if m2.window_short else ''))
            run['finished'] = datetime.datetime.now().isoformat(timespec='seconds')
            judge(run)
            windows_json(wpath, command, mode, done + [run])
        for x in claim_lines(run):
            log(f'seed {seed}: {x}')
        return run
    finally:
        try:
            benchlib.restore(lab, CANARY)
            lab.ceph('osd', 'pool', 'rm', POOL, POOL, '--yes-i-really-really-mean-it',
                     check=False)
        finally:
            if not a.keep_lab:
                lab.down()


def data_dir(out_dir: str) -> str:
    """Where the windows' JSON goes beside pages written to `out_dir`: the
    results directory for doc/bench's, else the same directory."""
    return benchlib.RESULTS if out_dir == benchlib.DOC else out_dir


def run_mode(mode: str, a: argparse.Namespace, command: str) -> List[Dict[str, Any]]:
    out_dir = os.path.join(benchlib.REPO, 'build', 'bench') if a.quick else benchlib.DOC
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(os.path.join(benchlib.REPO, 'build', 'bench'), exist_ok=True)
    specs = window_specs(a)
    wpath = os.path.join(data_dir(out_dir), f'windows-{mode}.json')
    runs = resumed(wpath, command, a) if a.resume else []
    for seed in a.seeds:
        if any(r['seed'] == seed for r in runs):
            log(f'{mode} seed {seed}: done in {wpath}, kept')
            continue
        runs.append(run_seed(mode, seed, a, command, specs, wpath, runs))
    runs.sort(key=lambda r: a.seeds.index(r['seed']))
    for run in runs:
        plot(run['windows'], names_of(run), png_path(out_dir, mode, run['seed'], len(runs)),
             f'{mode}-like BlueStore, osd.{CANARY}, seed {run["seed"]}, {a.reps} round(s)')
    text = report(mode, runs, a, command, out_dir)
    with open(os.path.join(out_dir, f'results-{mode}.md'), 'w') as f:
        f.write(text)
    print(text)
    return runs


def resumed(wpath: str, command: str, a: argparse.Namespace) -> List[Dict[str, Any]]:
    """The finished runs of an earlier, interrupted run of the same command
    (`--resume`): a seed whose bench did every round is kept, any other is run
    again from the start on a fresh lab."""
    if not os.path.exists(wpath):
        return []
    with open(wpath) as f:
        d = json.load(f)
    if without_seeds(d.get('command', '')) != without_seeds(command):
        raise SystemExit(f'--resume: {wpath} was made by `{d.get("command")}`, not `{command}` '
                         '(only --seeds may differ)')
    kept = [r for r in d.get('runs', []) if r['seed'] in a.seeds
            and len(r['windows']) == len(r['configs']) * len(MEASURED) * a.reps]
    for r in kept:
        judge(r)  # by this code
    return kept


def without_seeds(command: str) -> str:
    """The command less its --seeds: a resumed run may ask for more seeds."""
    words, out = command.split(), []
    for i, w in enumerate(words):
        if w.startswith('--seeds=') or w == '--seeds' or (i and words[i - 1] == '--seeds'):
            continue
        out.append(w)
    return ' '.join(out)


def window_specs(a: argparse.Namespace) -> Dict[str, WindowSpec]:
    """osd bench windows one length for every configuration, short without an
    L0 compaction cycle; the client check's until osd.0 compacts."""
    return {'osd_bench': WindowSpec(warmup=a.warmup, duration=a.window, min_cycles=1.0,
                                    max_factor=1.0),
            'fio_rbd': WindowSpec(warmup=a.warmup, duration=a.client_window, min_flushes=1.0,
                                  max_factor=1.0, steady_limit=a.steady_limit)}


def old_run(d: Dict[str, Any], md: str, a: argparse.Namespace) -> Dict[str, Any]:
    """A windows file from before the seeds (one run, no claim) as a run."""
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
    sess = dict(d['session'], wall_seconds=d['session_wall_seconds'])
    # its windows as they were measured then: osd bench not held to an L0 cycle
    spec = window_specs(a)['osd_bench']
    spec.min_cycles = 0.0
    # rados bench windows, as the bench ran them then (30 s, not extended)
    rspec = WindowSpec(warmup=5, duration=30, max_factor=1.0)
    return {'seed': None, 'facts': d['facts'], 'started': d['started'],
            'finished': d['finished'], 'configs': d['configs'], 'windows': d['windows'],
            'specs': {'osd_bench': dataclasses.asdict(spec),
                      'rados_bench': dataclasses.asdict(rspec)},
            'session': sess}


def rebuild(mode: str, a: argparse.Namespace, path: str) -> None:
    with open(path) as f:
        d = json.load(f)
    out_dir = os.path.dirname(os.path.abspath(path))
    if out_dir == benchlib.RESULTS:  # its pages are doc/bench's
        out_dir = benchlib.DOC
    md = os.path.join(out_dir, f'results-{mode}.md')
    runs = d['runs'] if 'runs' in d else [old_run(d, md, a)]
    for run in runs:
        if a.bench_from:  # the bench's windows as that run has them now
            run.update(bench_of(a.bench_from, run['seed'], run['configs']))
        judge(run)  # again, by this code
        plot(run['windows'], names_of(run), png_path(out_dir, mode, run['seed'], len(runs)),
             f'{mode}-like BlueStore, osd.{CANARY}, seed {run["seed"]}, {a.reps} round(s)')
    text = report(mode, runs, a, d['command'], out_dir)
    with open(md, 'w') as f:
        f.write(text)
    print(text)


def seed_list(text: str) -> List[int]:
    try:
        seeds = [int(x) for x in text.split(',') if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a list of integers: {text!r}')
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f'give distinct seeds: {text!r}')
    return seeds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true',
                    help='1 round, 2 trials, 1 candidate confirmed in 5 rounds, short windows; '
                    'results in build/bench/')
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--flash', action='store_true', help='flash-like BlueStore (default)')
    g.add_argument('--hdd', action='store_true', help='HDD-like BlueStore')
    g.add_argument('--both', action='store_true', help='flash, then HDD')
    ap.add_argument('--seeds', type=seed_list, default=[0],
                    help='per mode, one session (module option seed) and its own bench per '
                    'seed, each on a fresh lab: e.g. 1,2,3 (default 0)')
    ap.add_argument('--reps', type=int, default=None,
                    help='rounds (default 5: fewer give the bench no interval of its own; '
                    'quick 1)')
    ap.add_argument('--trials', type=int, default=None, help='session trials (8; quick 2)')
    ap.add_argument('--duration', type=float, default=None,
                    help='session window seconds (20; quick 8)')
    ap.add_argument('--confirm-candidates', type=int, default=None,
                    help='module option confirm_candidates for the sessions (the module\'s '
                    'own, 3 by default; quick 1)')
    ap.add_argument('--confirm-rounds', type=int, default=None,
                    help='module option confirm_rounds for the sessions (the module\'s own, '
                    '5 by default; quick 5: fewer give no interval, so keep current)')
    ap.add_argument('--window', type=float, default=None,
                    help='osd bench window s, the same for every configuration (60: longer '
                    'than any confirmation window at the defaults, 45 s at most; quick 8)')
    ap.add_argument('--warmup', type=float, default=None,
                    help='bench warm-up s, also the session\'s (module option warmup) '
                    '(10; quick 3)')
    ap.add_argument('--client-window', type=float, default=None,
                    help='the client check\'s window s at least (60; quick 6), then until '
                    'osd.0 compacts')
    ap.add_argument('--steady-limit', type=float, default=None,
                    help='a client check window lasts at most this long, and so does a '
                    'confirmation window of the session (module option '
                    'steady_window_limit) (3600; quick 30)')
    ap.add_argument('--image-mib', type=int, default=None,
                    help='the client check\'s RBD image, written once before the first '
                    'round (4096; quick 256)')
    ap.add_argument('--start-options', default='',
                    help='bluestore_rocksdb_options osd.0 runs when the session starts (its '
                    'baseline; e.g. a trap like tiny memtables), run by the bench as `start`; '
                    'claims and candidates are then checked against `start`')
    ap.add_argument('--configs', type=lambda s: [x for x in s.split(',') if x], default=None,
                    help='run only these of the bench\'s configurations (default, '
                    'new_tuning, new_tuning_lz4, tuned, start), e.g. default,start; the '
                    'baseline\'s among them')
    ap.add_argument('--module-option', action='append', metavar='NAME=VALUE',
                    help='a module option for the sessions (repeatable), e.g. '
                    'precondition_limit=3600 on a busy machine')
    ap.add_argument('--no-session', action='store_true',
                    help='run no tuning session: the bench\'s windows only (for a later '
                    '--bench-from; a session and its bench can take longer than one sitting)')
    ap.add_argument('--session-from', metavar='WINDOWS_JSON',
                    help='no session: take the session of the same seed from an earlier run '
                    '(its windows file) and check it against this run\'s bench')
    ap.add_argument('--bench-from', metavar='WINDOWS_JSON',
                    help='no bench: take the bench\'s windows of the same seed from an '
                    'earlier run (e.g. one with --no-session) of the same configurations, and '
                    'check this run\'s session against them (with --from-json: the windows '
                    'that run has now, e.g. once it finished)')
    ap.add_argument('--keep-lab', action='store_true', help='leave the last seed\'s lab up')
    ap.add_argument('--resume', action='store_true',
                    help='keep the seeds that an earlier run of the same command (less '
                    '--resume; its --seeds may differ) finished, from its '
                    'windows-<mode>.json; run the others')
    ap.add_argument('--from-json', metavar='WINDOWS_JSON',
                    help='no lab: rewrite results-<mode>.md and the plots from a windows file '
                    'of an earlier run (its arguments must be given again)')
    a = ap.parse_args()
    for k, full, quick in (('reps', 5, 1), ('trials', 8, 2), ('duration', 20, 8),
                           ('window', 60, 8), ('warmup', 10, 3),
                           ('client_window', 60, 6), ('steady_limit', 3600, 30),
                           ('image_mib', 4096, 256), ('confirm_candidates', None, 1),
                           ('confirm_rounds', None, 5)):
        if getattr(a, k) is None:
            setattr(a, k, quick if a.quick else full)
    if a.configs is not None:
        known = NAMES + ([START] if a.start_options else [])
        base = START if a.start_options else 'default'
        if not set(a.configs) <= set(known) or base not in a.configs:
            ap.error(f'--configs: a comma-separated subset of {",".join(known)} that holds '
                     f'{base}, not {",".join(a.configs)}')
    modes = ['flash', 'hdd'] if a.both else ['hdd'] if a.hdd else ['flash']
    command = 'qa/bench/run-bench ' + ' '.join(x for x in sys.argv[1:] if x != '--resume')
    if a.from_json:
        ensure_matplotlib()
        rebuild(modes[0], a, a.from_json)
        return
    if os.geteuid() != 0:
        ap.error('run as root: the bench builds a lab')
    ensure_matplotlib()
    log(f'the bench\'s lab: {benchlib.LAB_DIR}, mon port {benchlib.LAB_PORT} (taken down '
        'and rebuilt per seed)')
    tallies = []
    for mode in modes:
        runs = run_mode(mode, a, command.strip())
        tallies.append(f'{mode}: {benchlib.tally([r["check"] for r in runs])}')
    for t in tallies:
        log(t)


if __name__ == '__main__':
    main()
