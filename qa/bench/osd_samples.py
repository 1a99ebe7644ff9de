#!/usr/bin/env python3
"""Every OSD's BlueFS and client byte counters beside a session (issue 42's
fourth bar): is the canary's write-amp, in its windows, what the peers write
on the same options under the same load at the same time?

    qa/bench/osd_samples.py --poll [--every 60] > samples.jsonl   # until killed
    qa/bench/osd_samples.py --table samples.jsonl [--history history.json] [--parts N]

--poll runs `ceph` as the environment has it (e.g. inside `qa/lab/ceph-lab
exec --`): a line per OSD per look, BlueFS's `bytes_written_wal` and
`bytes_written_sst`, `op_w_in_bytes` + `subop_w_in_bytes` (what it took in:
the client's data and, on a replica, the primary's transaction) and the load.
--table sums, per OSD, the spans between looks (one across a restart, where
a counter fell, is left out) into SST bytes per WAL byte and WAL bytes per
byte taken in, over the session's spans of `--history` from its first
window's start (the preconditioning left out) or over the whole file (in
`--parts` equal parts of that time, a row per OSD each); with
`--history`, beside them the canary's own windows that ran the baseline
(its BlueFS figures, the module's `sst_bytes` over `wal_bytes`).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from statistics import median
from typing import Any, Dict, List, Optional, Tuple

COUNTERS = {'wal': ('bluefs', 'bytes_written_wal'), 'sst': ('bluefs', 'bytes_written_sst'),
            'op_w': ('osd', 'op_w_in_bytes'), 'subop_w': ('osd', 'subop_w_in_bytes')}
# gauges, as they stand at a look: the DB's size and the data BlueStore holds
# (does an OSD's DB grow through the session, as a new keyspace fills?)
GAUGES = {'db_used': ('bluefs', 'db_used_bytes'), 'stored': ('bluestore', 'stored')}


def ceph_json(*args: str) -> Any:
    return json.loads(subprocess.run(['ceph', *args, '-f', 'json'], text=True, check=True,
                                     timeout=60, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL).stdout)


def poll(every: float) -> None:
    while True:
        try:
            osds = ceph_json('osd', 'ls')
        except (subprocess.SubprocessError, ValueError):
            osds = []  # the mon busy: the next look goes on
        for osd in osds:
            try:
                dump = ceph_json('tell', f'osd.{osd}', 'perf', 'dump')
            except (subprocess.SubprocessError, ValueError):
                continue  # down or restarting: the next look's span is left out
            row = {k: dump[s][c] for k, (s, c) in COUNTERS.items()}
            row.update({k: dump.get(s, {}).get(c) for k, (s, c) in GAUGES.items()})
            print(json.dumps(dict(row, t=time.time(), osd=osd, load=os.getloadavg()[0])),
                  flush=True)
        time.sleep(every)


def spans(rows: List[Dict[str, Any]], since: float, until: float
          ) -> Dict[int, Dict[str, float]]:
    """Per OSD, the counters' growth summed over its spans inside [since, until]."""
    out: Dict[int, Dict[str, float]] = {}
    last: Dict[int, Dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: r['t']):
        prev, last[r['osd']] = last.get(r['osd']), r
        if prev is None or prev['t'] < since or r['t'] > until:
            continue
        grew = {k: r[k] - prev[k] for k in COUNTERS}
        if min(grew.values()) < 0:
            continue  # restarted in between
        acc = out.setdefault(r['osd'], dict.fromkeys(COUNTERS, 0.0))
        for k, v in grew.items():
            acc[k] += v
    return out


def gauges(rows: List[Dict[str, Any]], osd: int, at: float) -> str:
    """The DB's and the stored data's GiB at `osd`'s last look by `at` ('-': not polled)."""
    seen = [r for r in rows if r['osd'] == osd and r['t'] <= at]
    last = max(seen, key=lambda r: r['t']) if seen else {}
    return ' | '.join('-' if last.get(k) is None else f'{last[k] / 2**30:.2f}'
                      for k in GAUGES)


def canary_windows(history: List[Dict[str, Any]]) -> Tuple[float, List[Tuple[str, float]]]:
    """The first window's start, and the canary's baseline windows (label, SST/WAL)."""
    first = min(t['started'] for t in history if t.get('started'))
    wins = []
    for t in history:
        m = t.get('measurement') or {}
        if (t['kind'] == 'baseline' or t.get('arm') == 'baseline') and m.get('wal_bytes'):
            label = f"{t['kind']} {t['index']}" + (' steady' if t.get('steady') else '')
            wins.append((label, m['sst_bytes'] / m['wal_bytes']))
    return first, wins


def table(rows: List[Dict[str, Any]], history: Optional[List[Dict[str, Any]]],
          parts: int = 1) -> str:
    since, wins = (canary_windows(history) if history else (0.0, []))
    since = max(since, min(r['t'] for r in rows))
    step = (max(r['t'] for r in rows) - since) / parts
    out = ['| minutes | OSD | GiB WAL | SST / WAL | WAL / byte taken in | DB GiB | stored GiB '
           '| load (median) |', '|---|---|---|---|---|---|---|---|']
    for p in range(parts):
        start, end = since + p * step, since + (p + 1) * step
        loads = [r['load'] for r in rows if start <= r['t'] <= end]
        if not loads:
            continue  # no look in this part
        load = median(loads)
        for osd, a in sorted(spans(rows, start, end).items()):
            out.append(f"| {(start - since) / 60:.0f}-{(end - since) / 60:.0f} | osd.{osd} | "
                       f"{a['wal'] / 2**30:.2f} | {a['sst'] / a['wal']:.3f} | "
                       f"{a['wal'] / (a['op_w'] + a['subop_w']):.3f} | "
                       f"{gauges(rows, osd, end)} | {load:.1f} |")
    if wins:
        ratios = [r for _, r in wins]
        out += ['', f'the canary\'s {len(wins)} baseline windows, SST / WAL: '
                f'{min(ratios):.3f}-{max(ratios):.3f} (median {median(ratios):.3f})']
        out += [f'  {label}: {r:.3f}' for label, r in wins]
    return '\n'.join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--poll', action='store_true')
    ap.add_argument('--every', type=float, default=60.0)
    ap.add_argument('--table', metavar='SAMPLES')
    ap.add_argument('--history', metavar='HISTORY_JSON')
    ap.add_argument('--parts', type=int, default=1, help='the time after the first window '
                    'in this many equal parts, a table each')
    a = ap.parse_args()
    if a.poll:
        poll(a.every)
        return 0
    if not a.table:
        ap.error('--poll or --table SAMPLES')
    with open(a.table) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    history = None
    if a.history:
        with open(a.history) as f:
            history = json.load(f)
    print(table(rows, history, a.parts))
    return 0


if __name__ == '__main__':
    sys.exit(main())
