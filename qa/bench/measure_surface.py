#!/usr/bin/python3
"""Measure a response surface on the lab for qa/bench/optimizer_efficiency.py.

    qa/bench/measure_surface.py [--points 24] [--seed 7] [--warmup 8] [--duration 15]
                                [--keep-lab] [--reuse-lab] [--out qa/bench/results/surface.json]

On a fresh flash-like lab (/var/tmp/rat-bench-lab, mon port 21700) the canary
osd.0 runs, one after the other: Pacific's default, seed 000's New Tuning and
its LZ4 variant, then `--points` random safe candidates of the project's
SearchSpace (base: Pacific's default string), with the default measured again
every 8 points to show drift.  Each point is the tuner's own bench window:
options set on osd.0 only, orchestrator restart, osd bench warm-up, then
4 KiB osd bench for `--duration` seconds (longer until 2 memtable flushes,
at most 3x), measured by rocks_autotune.perf_counters.  The file is rewritten after
every point, so a partial run keeps what it measured.
"""
import argparse
import datetime
import json
import os
import sys
import time
from typing import Any, Dict, List

import benchlib
from benchlib import Lab, WindowSpec, log

from rocks_autotune.optimizer import random_points
from rocks_autotune.rocksdb_options import (NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT,
                                            parse_options)
from rocks_autotune.space import SearchSpace

CANARY = 0


def plan(n: int, seed: int) -> List[Dict[str, Any]]:
    """The points to measure, in order (references first, default every 8)."""
    base = parse_options(PACIFIC_DEFAULT)
    space = SearchSpace(base=base)
    pts: List[Dict[str, Any]] = [
        {'name': 'default', 'options': PACIFIC_DEFAULT},
        {'name': 'new_tuning', 'options': NEW_TUNING},
        {'name': 'new_tuning_lz4', 'options': NEW_TUNING_LZ4}]
    rnd = [x for x in random_points(space, 50 * n, seed) if space.point_is_safe(x)][:n]
    for i, x in enumerate(rnd):
        c = space.from_point(x)
        pts.append({'name': f'random{i:02d}', 'options': SearchSpace.render(base, c)})
        if (i + 1) % 8 == 0:
            pts.append({'name': 'default', 'options': PACIFIC_DEFAULT})
    for p in pts:
        p['candidate'] = SearchSpace.candidate_from_options(parse_options(p['options'])).to_dict()
    return pts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--points', type=int, default=24)
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--warmup', type=float, default=8)
    ap.add_argument('--duration', type=float, default=15)
    ap.add_argument('--keep-lab', action='store_true', help='leave the lab up at the end')
    ap.add_argument('--reuse-lab', action='store_true', help='use the lab if it is up')
    ap.add_argument('--out', default=os.path.join(benchlib.RESULTS, 'surface.json'))
    a = ap.parse_args()
    lab = Lab()
    lab.up(flash=True, fresh=not a.reuse_lab)
    spec = WindowSpec(warmup=a.warmup, duration=a.duration)
    doc: Dict[str, Any] = {
        'command': 'qa/bench/measure_surface.py ' + ' '.join(sys.argv[1:]),
        'date': datetime.datetime.now().isoformat(timespec='seconds'),
        'lab': lab.facts(), 'canary': CANARY, 'window': spec.__dict__,
        'how': ('each point: bluestore_rocksdb_options set on osd.0 only, orchestrator '
                'restart, wait up + active+clean, osd bench warm-up, then 4 KiB osd bench '
                '(16 x 4 MiB objects) for the window, measured by rocks_autotune.perf_counters '
                'from perf dump deltas of osd.0'),
        'points': []}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    try:
        benchlib.raise_bench_limit(lab, CANARY)
        for i, p in enumerate(plan(a.points, a.seed)):
            t0 = time.time()
            try:
                restart = lab.apply(CANARY, p['options'])
                m = benchlib.osd_bench_window(lab, CANARY, p['options'], spec)
            except (RuntimeError, ValueError) as e:
                log(f'point {i} {p["name"]} failed: {e}')
                doc['points'].append(dict(p, error=str(e)))
                continue
            doc['points'].append(dict(p, measurement=m.to_dict(), restart_seconds=restart,
                                      load_avg=os.getloadavg()[0]))
            log(f'point {i} {p["name"]}: IOPS {m.iops:.0f} kv_sync {m.kv_sync_lat_ms:.3f} ms '
                f'wa {m.write_amp:.3f} flushes {m.flushes:.1f} ({time.time() - t0:.0f}s)')
            with open(a.out + '.tmp', 'w') as f:
                json.dump(doc, f, indent=1)
            os.replace(a.out + '.tmp', a.out)
    finally:
        benchlib.restore(lab, CANARY)
        if not a.keep_lab:
            lab.down()


if __name__ == '__main__':
    main()
