#!/usr/bin/env python3
"""How well `status` forecasts a session's time (issue 42): poll a running
session's `status -f json` once a minute, then compare each look's expected
time left (`time.expected_seconds`: the search, a finalist's rounds weighed
by the chance of one, `time.finalist_chance`, and its steady windows by
that and the chance its rounds pass it, `time.pass_chance`), the
search's alone (`time.keep_seconds`) and the upper bound
(`time.left_seconds`) with the time the session really took.

    qa/bench/forecast_check.py --poll > forecast.jsonl   # until the session ends
    qa/bench/forecast_check.py --table forecast.jsonl

--poll runs `ceph` as the environment has it (e.g. inside `qa/lab/ceph-lab
exec --`); each line records the load average beside the look.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List

# rocks_autotune.store.ENDED: --poll runs inside the release's root, without the module
ENDED = ('done', 'stopped', 'aborted', 'failed')


def poll(every: float) -> None:
    while True:
        p = subprocess.run(['ceph', 'rocks-autotune', 'status', '-f', 'json'], text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if p.returncode == 0:
            s = json.loads(p.stdout)
            t = s.get('time') or {}
            print(json.dumps({'t': time.time(), 'state': s.get('state'), 'phase': s.get('phase'),
                              'started': s.get('started'), 'ended': s.get('ended'),
                              'expected_left': t.get('expected_seconds'),
                              'max_left': t.get('left_seconds'),
                              'keep_left': t.get('keep_seconds'),
                              'finalist_left': t.get('finalist_seconds'),
                              'chance': t.get('finalist_chance'),
                              'passes': t.get('pass_chance'),
                              'load': os.getloadavg()[0]}), flush=True)
            if s.get('state') in ENDED:
                return
        time.sleep(every)


def table(rows: List[Dict[str, Any]]) -> str:
    rows = [r for r in rows if r.get('started')]  # looks before the start: the lab's idle
    ended = [r['ended'] for r in rows if r.get('ended')]
    if not ended:
        return 'the session had not ended by the last look'
    start, end = rows[0]['started'], ended[-1]
    none = [r['t'] - start for r in rows
            if r['state'] == 'running' and r.get('expected_left') is None]
    out = [f'session: {end - start:.0f} s'
           + (f'; {len(none)} look(s) said no expected time, the last at {max(none):.0f} s'
              if none else ''),
           '| elapsed (s) | phase | expected left (s) | at most (s) | really left (s) '
           '| forecast / real | chance of a finalist | keep branch / real | load avg |',
           '|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        if r['state'] != 'running' or r.get('expected_left') is None:
            continue
        gone = r['t'] - start
        chance = '' if r.get('chance') is None else f'{r["chance"]:.2f}'
        keep = ('' if r.get('keep_left') is None
                else f'{(gone + r["keep_left"]) / (end - start):.2f}')
        out.append(f'| {gone:.0f} | {r["phase"]} | {r["expected_left"]:.0f} | '
                   f'{r["max_left"]:.0f} | {end - r["t"]:.0f} | '
                   f'{(gone + r["expected_left"]) / (end - start):.2f} | {chance} | {keep} | '
                   f'{r["load"]:.1f} |')
    return '\n'.join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--poll', action='store_true', help='poll the session until it ends')
    ap.add_argument('--every', type=float, default=60.0, help='seconds between looks')
    ap.add_argument('--table', metavar='JSONL', help='the forecasts against the real time')
    args = ap.parse_args()
    if args.poll:
        poll(args.every)
    elif args.table:
        with open(args.table) as f:
            print(table([json.loads(line) for line in f if line.strip()]))
    else:
        ap.error('--poll or --table')
        sys.exit(2)


if __name__ == '__main__':
    main()
