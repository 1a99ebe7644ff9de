#!/usr/bin/python3
"""Where the canary's time goes under the bench: per-thread CPU from /proc.

    qa/bench/profile_osd.py [--seconds 30] [--config default|new_tuning|...]
                            [--out doc/bench/profile-osd.md]

On the bench lab (/var/tmp/rat-bench-lab, must be up): optionally apply a
configuration to osd.0 (restart), then drive 4 KiB osd bench on osd.0 for
`--seconds` while sampling /proc/<osd pid>/task/*/stat (utime + stime per
thread, grouped by thread name) and /proc/stat (the whole machine's busy
share).  If bstore_kv_sync is far from 100% of a core while the machine is
saturated, RocksDB options (which act on the kv sync thread's work) cannot
move IOPS much: the bench is bound elsewhere.
"""
import argparse
import datetime
import os
import sys
import time
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

import benchlib
from benchlib import Lab, log
from benchlib import machine_busy, thread_cpu
from rocks_autotune.rocksdb_options import NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT
from rocks_autotune.workload import BenchWorkload

CANARY = 0
CONFIGS = {'default': PACIFIC_DEFAULT, 'new_tuning': NEW_TUNING,
           'new_tuning_lz4': NEW_TUNING_LZ4}


def by_comm(a: Dict[int, Tuple[str, float]], b: Dict[int, Tuple[str, float]]
            ) -> Dict[str, float]:
    out: Dict[str, float] = defaultdict(float)
    for tid, (comm, cpu) in b.items():
        out[comm] += cpu - a.get(tid, (comm, 0.0))[1]
    return dict(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seconds', type=float, default=30)
    ap.add_argument('--config', choices=sorted(CONFIGS), action='append', default=[],
                    help='a named configuration to apply and profile (repeatable)')
    ap.add_argument('--options', action='append', default=[],
                    help='an option string to apply and profile (repeatable)')
    ap.add_argument('--fresh-lab', choices=('flash', 'hdd'), default=None,
                    help='bring the bench lab up fresh first (and down at the end)')
    ap.add_argument('--append', action='store_true', help='append to --out')
    ap.add_argument('--out', default=os.path.join(benchlib.DOC, 'profile-osd.md'))
    a = ap.parse_args()
    lab = Lab()
    if a.fresh_lab:
        lab.up(flash=a.fresh_lab == 'flash', fresh=True)
    runs = [(c, CONFIGS[c]) for c in a.config] + [(o, o) for o in a.options]
    try:
        texts = [profile(lab, a, name, opts) for name, opts in runs or [('as left', None)]]
        with open(a.out, 'a' if a.append else 'w') as f:
            f.write(f'Command: `qa/bench/profile_osd.py {" ".join(sys.argv[1:])}`\n\n'
                    + '\n'.join(texts))
    finally:
        if a.fresh_lab:
            lab.down()


def profile(lab: Lab, a: argparse.Namespace, name: str, options: Optional[str]) -> str:
    if options:
        lab.apply(CANARY, options)
    benchlib.raise_bench_limit(lab, CANARY)
    with open(os.path.join(lab.dir, 'run', f'osd.{CANARY}.pid')) as f:
        pid = int(f.read().strip())
    wl = BenchWorkload(lab, CANARY)  # type: ignore[arg-type]
    wl.drive(5, None)  # warm-up
    t0, th0, m0 = time.time(), thread_cpu(pid), machine_busy()
    nbytes, nsecs, est = 0, 0.0, None
    while time.time() - t0 < a.seconds:
        n, s = wl.drive(a.seconds - (time.time() - t0), est)
        nbytes, nsecs = nbytes + n, nsecs + s
        est = n / wl.block_size / s if s > 0 else est
    secs = time.time() - t0
    th1, m1 = thread_cpu(pid), machine_busy()
    cpu = by_comm(th0, th1)
    busy = (m1[0] - m0[0]) / (m1[1] - m0[1])
    total = sum(cpu.values())
    rows: List[str] = [f'| {c} | {100 * v / secs:.1f} |'
                       for c, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v > 0][:12]
    text = '\n'.join([
        f'# Where osd.0 spends its CPU under the canary osd bench: {name[:40]}', '',
        f'{datetime.datetime.now().isoformat(timespec="seconds")}; options of osd.0: '
        f'`{options or "as left on the lab"}`.', '',
        f'{secs:.0f} s of 4 KiB osd bench: {nbytes / 4096 / nsecs:.0f} IOPS. osd.0 used '
        f'{100 * total / secs:.0f}% of a core in all; the whole machine ({os.cpu_count()} '
        f'cores, shared with other labs) was {100 * busy:.0f}% busy '
        f'(load average {os.getloadavg()[0]:.1f}).', '',
        '| thread (by name) | % of a core |', '|---|---|'] + rows) + '\n'
    print(text)
    log(f'profiled {name[:40]}')
    return text


if __name__ == '__main__':
    main()
