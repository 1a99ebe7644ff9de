#!/usr/bin/env python3
"""Issue 42's scenario bench: real sessions from the options admins run.

    qa/bench/scenarios.py run --start pacific --objective wear --seed 1
        one session on the demo's lab (`qa/lab/ceph-lab demo --keep-lab`),
        then its `status`, `history` and `best` (-f json), the demo's log and
        the machine's load a minute apart, saved as
        qa/bench/results/scenario-<start>-<objective>-seed<N>*; the lab is
        taken down.  CEPH_LAB_DIR and CEPH_LAB_MON_PORT pick the lab, as for
        ceph-lab, so that two can run side by side.
    qa/bench/scenarios.py table qa/bench/results/scenario-*-status.json
        a line per saved session: the answer, the finalist, its C/R IOPS
        rounds, the A/A noise, what the rounds could detect, the time and
        the load (doc/bench/scenarios.md's rows).
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Mapping, Optional

from benchlib import CEPH_LAB, RESULTS, repo_commit

STARTS = ('blog', 'pacific', 'new-tuning', 'new-tuning-lz4', 'default')
NAME = re.compile(r'scenario-(?P<start>[a-z0-9-]+?)-(?P<objective>iops|wear)-seed(?P<seed>\d+)')


def run(start: str, objective: str, seed: int, out: str) -> int:
    """One demo session; its records saved under `out` (never over a saved
    run's); the demo's exit code."""
    base = os.path.join(out, f'scenario-{start}-{objective}-seed{seed}')
    if glob.glob(base + '[.-]*'):
        sys.exit(f'scenarios.py: {base}* exists: move it aside (e.g. to -runN) first')
    done = threading.Event()

    def sample_load() -> None:  # beside every figure: what else the machine ran
        with open(base + '-load.log', 'w') as f:
            while not done.wait(60):
                f.write(time.strftime('%H:%M:%S ', time.gmtime())
                        + ' '.join(f'{x:.2f}' for x in os.getloadavg()) + '\n')
                f.flush()

    sampler = threading.Thread(target=sample_load, daemon=True)
    sampler.start()
    try:
        with open(base + '.log', 'w') as log:
            log.write(f'# scenarios.py at {repo_commit()}\n')
            log.flush()
            rc = subprocess.call([CEPH_LAB, 'demo', '--start', start, '--objective', objective,
                                  '--set', f'seed={seed}', '--keep-lab'],
                                 stdout=log, stderr=subprocess.STDOUT)
        lab = os.environ.get('CEPH_LAB_DIR', '')  # the demo's before/after, if it ran
        for ext in ('jsonl', 'log'):
            if lab and os.path.exists(f'{lab}-before-after.{ext}'):
                shutil.copy(f'{lab}-before-after.{ext}', f'{base}-before-after.{ext}')
        for what in ('status', 'history', 'best'):
            with open(f'{base}-{what}.json', 'w') as f:
                subprocess.call([CEPH_LAB, 'exec', '--', 'ceph', 'rocks-autotune', what,
                                 '--format', 'json'], stdout=f, stderr=subprocess.DEVNULL)
    finally:
        done.set()
        sampler.join()
        subprocess.call([CEPH_LAB, 'down'], stdout=subprocess.DEVNULL)
    return rc


def finalist(c: Mapping[str, Any]) -> str:
    """A candidate's LSM shape as the scenario table writes it."""
    return (f'{c["max_write_buffer_number"]} x {c["write_buffer_size"] / 2**20:.0f} MiB '
            f'merged by {c["min_write_buffer_number_to_merge"]}, '
            f'L0 {c["level0_file_num_compaction_trigger"]}, '
            f'level base {c["max_bytes_for_level_base"] / 2**30:.1f} GiB, '
            f'x{c["max_bytes_for_level_multiplier"]}, {c["compression"]}')


def loads(path: str) -> Optional[List[float]]:
    """The 1-minute load averages a run's -load.log sampled (None: no log)."""
    try:
        with open(path) as f:
            return [float(x[1]) for x in map(str.split, f) if len(x) > 1]
    except OSError:
        return None


def row(status: Mapping[str, Any], name: str, load: Optional[List[float]]) -> Dict[str, Any]:
    """What one saved session answered and what its design could see."""
    m = NAME.search(name)  # a suffix (-run1: a run kept beside) stays in 'name'
    conf = status.get('confirmation') or {}
    result = conf.get('result') or {}
    noise = status.get('noise') or {}
    plan = noise.get('plan') or {}
    out: Dict[str, Any] = {
        'name': name.replace('-status.json', ''),
        'start': m['start'] if m else '', 'objective': status.get('objective', ''),
        'seed': int(m['seed']) if m else None, 'answer': status.get('message', ''),
        'minutes': round((status['ended'] - status['started']) / 60)
        if status.get('ended') and status.get('started') else None,
        'aa_sd': noise.get('sd'), 'planned_sd': plan.get('sd'),
        'seen': result.get('seen'), 'rounds': conf.get('rounds'),
        'load': (min(load), statistics.median(load), max(load)) if load else None,
        'arms': []}
    for a in result.get('arms') or []:
        ratio = a['objective'].get('ratio') or {}
        cand = next((c['candidate'] for c in conf.get('arms', []) if c['arm'] == a['arm']), None)
        out['arms'].append({'arm': a['arm'], 'verdict': a['verdict'], 'why': a.get('why', ''),
                            'finalist': finalist(cand) if cand else '',
                            'per_round': ratio.get('per_round') or [],
                            'low': ratio.get('low'), 'high': ratio.get('high')})
    return out


def render(r: Mapping[str, Any]) -> str:
    answer = re.split(r'; | \(split', r['answer'])[0]  # --json has all of it
    lines = [f'{r["name"]}: {answer}']
    for a in r['arms']:
        rounds = ', '.join(f'{x:.2f}' for x in a['per_round'])
        band = (f' [{a["low"]:.2f}, {a["high"]:.2f}]'
                if a['low'] is not None and a['high'] is not None else '')
        lines.append(f'  {a["arm"]} ({a["finalist"]}): {a["verdict"]}; C/R {rounds}{band} '
                     f'over {len(a["per_round"])} of {r["rounds"]} rounds')
    if r['aa_sd'] is not None and r['planned_sd'] is not None:
        seen = r['seen']
        lines.append(f'  A/A sd {r["aa_sd"]:.3f} a round (planned {r["planned_sd"]:.3f})' + (
            f'; the rounds {seen["sd"]:.3f}: {seen["rounds"]} rounds confirm '
            f'+{100 * seen["detectable"]:.0f}% 9 times in 10'
            if seen and r['objective'] == 'iops' else ''))
    ld = r['load']
    took = f'{r["minutes"]} min' if r['minutes'] is not None else 'not ended'
    lines.append(f'  {took}' + (f', load {ld[0]:.0f}-{ld[2]:.0f}, median ~{ld[1]:.0f}'
                                if ld else ''))
    return '\n'.join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run', help='one session on a fresh demo lab')
    r.add_argument('--start', choices=STARTS, required=True)
    r.add_argument('--objective', choices=('iops', 'wear'), required=True)
    r.add_argument('--seed', type=int, default=0)
    r.add_argument('--out', default=RESULTS, help='where its records go (default %(default)s)')
    t = sub.add_parser('table', help='a line per saved session')
    t.add_argument('status', nargs='+', help='saved scenario-*-status.json files')
    t.add_argument('--json', action='store_true', help='the rows as JSON')
    a = ap.parse_args()
    if a.cmd == 'run':
        sys.exit(run(a.start, a.objective, a.seed, a.out))
    rows = []
    for path in a.status:
        try:
            with open(path) as f:
                status = json.load(f)
        except ValueError:  # a session whose lab did not answer at the end
            print(f'{path}: no status saved', file=sys.stderr)
            continue
        rows.append(row(status, os.path.basename(path),
                        loads(path.replace('-status.json', '-load.log'))))
    print(json.dumps(rows, indent=1) if a.json else '\n'.join(render(x) for x in rows))


if __name__ == '__main__':
    main()
