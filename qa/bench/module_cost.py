#!/usr/bin/python3
"""What the module costs the ceph-mgr: CPU and memory from /proc, optimizer time.

    qa/bench/module_cost.py [--idle 60] [--no-lab] [--out doc/bench/module-cost.md]
                            [--json qa/bench/results/module-cost.json]

* Idle, on the bench lab (/var/tmp/rat-bench-lab, which must be up, e.g.
  during or after qa/bench/measure_surface.py --keep-lab): CPU of the mgr
  threads that belong to the module over `--idle` seconds.  The mgr names a
  module's serve thread after the module (`rocks_autotune`, and threads it
  starts, e.g. the panel's CherryPy, inherit that name) and its finisher
  `m-fin-rocks_aut`: their utime + stime from /proc/<mgr>/task/*/stat.  Then
  the whole mgr's CPU and RSS with the module enabled and disabled.
* During a session: qa/bench/run_bench.py samples the same threads over its
  tuning session and writes build/bench/session-cost-<mode>-seed<S>.json; each of
  those is included here.
* Optimizer, no cluster: TrialOptimizer (the session's warm start) with n
  trials already told: time of tell() (GP fit + acquisition, what the
  session pays once per trial) and of the ask() after it, n = 10, 50, 100.

`--json` gets the figures as measured (idle, sessions, optimizer).
`--out` is rewritten, except its "Rollout plan and gate at scale" section (from
qa/bench/rollout_scale.py --append), which is kept, at the end.
"""
import argparse
import datetime
import glob
import json
import os
import random
import statistics
import sys
import time
from typing import Any, Dict, List, Optional

import benchlib
from benchlib import Lab, log, stat_cpu, thread_cpu

MODULE_THREADS = ('rocks_autotune', 'm-fin-rocks_aut')
ROLLOUT_HEADING = '\n## Rollout plan and gate at scale\n'  # qa/bench/rollout_scale.py's


def rss_mib(pid: int) -> float:
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    raise ValueError('no VmRSS')


class Sampler:
    """Module-thread CPU, whole-process CPU and peak RSS of a pid over a window."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.t0 = time.time()
        self.threads0 = thread_cpu(pid)
        self.proc0 = stat_cpu(f'/proc/{pid}/stat')[1]
        self.rss0 = rss_mib(pid)
        self.rss_peak = self.rss0
        self.last = dict(self.threads0)

    def poll(self) -> None:
        self.rss_peak = max(self.rss_peak, rss_mib(self.pid))
        self.last.update(thread_cpu(self.pid))  # exited threads keep their last value

    def result(self) -> Dict[str, Any]:
        self.poll()
        secs = time.time() - self.t0
        mod = sum(cpu - self.threads0.get(tid, ('', 0.0))[1]
                  for tid, (comm, cpu) in self.last.items() if comm in MODULE_THREADS)
        proc = stat_cpu(f'/proc/{self.pid}/stat')[1] - self.proc0
        return {'seconds': secs, 'module_cpu_s': mod, 'module_core_pct': 100 * mod / secs,
                'mgr_cpu_s': proc, 'mgr_core_pct': 100 * proc / secs,
                'rss_start_mib': self.rss0, 'rss_peak_mib': self.rss_peak,
                'rss_end_mib': rss_mib(self.pid),
                'module_threads': sorted({c for c, _ in self.last.values()
                                          if c in MODULE_THREADS})}


def sample_for(pid: int, seconds: float) -> Dict[str, Any]:
    s = Sampler(pid)
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(min(2.0, max(0.0, end - time.time())))
        s.poll()
    return s.result()


def wait_mgr(lab: Lab) -> int:
    def ok() -> bool:
        return bool(lab.ceph_json('mgr', 'dump').get('available'))
    lab.wait('mgr available', ok, 180)
    return lab.mgr_pid()


def idle_cost(lab: Lab, seconds: float) -> Dict[str, Any]:
    pid = wait_mgr(lab)
    log(f'idle, module enabled: sampling mgr pid {pid} for {seconds:.0f}s')
    enabled = sample_for(pid, seconds)
    lab.ceph('mgr', 'module', 'disable', 'rocks_autotune')
    time.sleep(15)
    pid2 = wait_mgr(lab)
    log(f'idle, module disabled: sampling mgr pid {pid2} for {seconds:.0f}s')
    disabled = sample_for(pid2, seconds)
    lab.ceph('mgr', 'module', 'enable', 'rocks_autotune')
    time.sleep(15)
    pid3 = wait_mgr(lab)
    reenabled = sample_for(pid3, seconds / 2)
    return {'enabled': enabled, 'disabled': disabled, 'reenabled': reenabled,
            'mgr_respawned_on_disable': pid2 != pid,
            'load_avg': os.getloadavg()[0]}


def optimizer_times(ns: List[int], reps: int = 3) -> Dict[int, Dict[str, float]]:
    os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
    from rocks_autotune.optimizer import TrialOptimizer
    from rocks_autotune.rocksdb_options import (NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT,
                                                parse_options)
    from rocks_autotune.space import SearchSpace
    space = SearchSpace(base=parse_options(PACIFIC_DEFAULT))
    warm = [space.candidate_from_options(parse_options(s))
            for s in (PACIFIC_DEFAULT, PACIFIC_DEFAULT, NEW_TUNING, NEW_TUNING_LZ4)]
    out: Dict[int, Dict[str, float]] = {}
    for n in ns:
        tells, asks = [], []
        for r in range(reps):
            rng = random.Random(r)
            opt = TrialOptimizer(space, seed=r, warm_start=warm)
            hist = []
            probe = TrialOptimizer(space, seed=1000 + r, n_initial_points=10 ** 6)
            for _ in range(n - 1):  # random safe candidates with random scores
                c = probe.ask()
                probe.tell(c, 0.0)
                hist.append((c, rng.uniform(-0.5, 0.5)))
            opt.replay(hist)
            c = opt.ask()
            t = time.perf_counter()
            opt.tell(c, rng.uniform(-0.5, 0.5))
            tells.append(time.perf_counter() - t)
            t = time.perf_counter()
            opt.ask()
            asks.append(time.perf_counter() - t)
        out[n] = {'tell_s': statistics.median(tells), 'ask_s': statistics.median(asks),
                  'tell_max_s': max(tells)}
        log(f'optimizer at {n} trials: tell {out[n]["tell_s"]:.3f}s ask {out[n]["ask_s"]:.4f}s')
    return out


def session_costs() -> List[Dict[str, Any]]:
    out = []
    for path in sorted(glob.glob(os.path.join(benchlib.REPO, 'build', 'bench',
                                              'session-cost-*.json'))):
        with open(path) as f:
            out.append(json.load(f))
    return out


a_idle_json = os.path.join(benchlib.REPO, 'build', 'bench', 'idle-cost.json')


def _mtime(path: str) -> str:
    return datetime.datetime.fromtimestamp(os.path.getmtime(path)).isoformat(timespec='seconds')


def render(idle: Optional[Dict[str, Any]], sessions: List[Dict[str, Any]],
           opt: Dict[int, Dict[str, float]], command: str) -> str:
    lines = ['# Module cost', '',
             f'Command: `{command}`; date {datetime.datetime.now().isoformat(timespec="seconds")};'
             f' load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores '
             '(shared with other labs).', '']
    if idle:
        e, d = idle['enabled'], idle['disabled']
        lines += [
            '## Idle (no session), bench lab', '',
            f'Measured {idle.get("measured", "at " + _mtime(a_idle_json))} by '
            f'`{idle.get("command", "qa/bench/module_cost.py")}` (flash-like bench lab, while '
            'measure_surface.py ran osd bench on osd.0).', '',
            '| window | seconds | module threads CPU (% of a core) | whole mgr CPU '
            '(% of a core) | mgr RSS MiB (end) |', '|---|---|---|---|---|']
        for k in ('enabled', 'disabled', 'reenabled'):
            w = idle[k]
            lines.append(f'| module {k} | {w["seconds"]:.0f} | {w["module_core_pct"]:.3f} | '
                         f'{w["mgr_core_pct"]:.2f} | {w["rss_end_mib"]:.0f} |')
        lines += ['', f'/proc counts CPU in 1/{benchlib.TICK} s ticks: over '
                  f'{e["seconds"]:.0f} s one tick is {100 / benchlib.TICK / e["seconds"]:.3f}% '
                  'of a core, so 0.000 means less than that per thread. '
                  f'Module threads found: {e["module_threads"]}. Whole-mgr difference '
                  f'enabled - disabled: {e["mgr_core_pct"] - d["mgr_core_pct"]:+.2f}% of a core, '
                  f'RSS {e["rss_end_mib"] - d["rss_end_mib"]:+.0f} MiB (mgr respawned on '
                  f'disable: {idle["mgr_respawned_on_disable"]}).',
                  f'Target idle < 0.5% of a core: '
                  f'{"met" if e["module_core_pct"] < 0.5 else "missed"} '
                  f'({e["module_core_pct"]:.3f}% by the module\'s threads).', '']
    if sessions:
        lines += ['## During a tuning session', '']
    for sess in sessions:
        w = sess['cost']
        seed = f'seed {sess["seed"]}, ' if sess.get('seed') is not None else ''
        lines += [f'From `{sess["command"]}` ({sess["mode"]}, {seed}{sess["trials"]} trials, '
                  f'{sess["duration"]} s windows, {sess["date"]}): over {w["seconds"]:.0f} s '
                  f'the module\'s threads used {w["module_cpu_s"]:.1f} s of CPU '
                  f'({w["module_core_pct"]:.2f}% of a core; whole mgr {w["mgr_core_pct"]:.2f}%);'
                  f' mgr RSS {w["rss_start_mib"]:.0f} MiB at the start, peak '
                  f'{w["rss_peak_mib"]:.0f} MiB (the optimizer imports numpy/scipy/sklearn/skopt'
                  ' lazily at the first trial). Seconds per trial: '
                  f'{sess.get("seconds_per_trial", "?")}.', '']
    lines += ['## Optimizer time per trial (no cluster, one BLAS thread)', '',
              '| trials told | tell() = GP fit + acquisition, s (median of 3) | max s | '
              'ask() after it, s |', '|---|---|---|---|']
    for n, t in opt.items():
        lines.append(f'| {n} | {t["tell_s"]:.3f} | {t["tell_max_s"]:.3f} | {t["ask_s"]:.4f} |')
    return '\n'.join(lines) + '\n'


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--idle', type=float, default=60)
    ap.add_argument('--no-lab', action='store_true', help='optimizer times only')
    ap.add_argument('--idle-json', default=os.path.join(benchlib.REPO, 'build', 'bench',
                                                        'idle-cost.json'))
    ap.add_argument('--reuse-idle', action='store_true',
                    help='take the idle figures from --idle-json instead of measuring')
    ap.add_argument('--out', default=os.path.join(benchlib.DOC, 'module-cost.md'))
    ap.add_argument('--json', default=os.path.join(benchlib.RESULTS, 'module-cost.json'),
                    help='write the figures here')
    a = ap.parse_args()
    idle: Optional[Dict[str, Any]] = None
    if a.reuse_idle:
        with open(a.idle_json) as f:
            idle = json.load(f)
    elif not a.no_lab:
        idle = idle_cost(Lab(), a.idle)
        idle['measured'] = datetime.datetime.now().isoformat(timespec='seconds')
        idle['command'] = 'qa/bench/module_cost.py ' + ' '.join(sys.argv[1:])
        os.makedirs(os.path.dirname(a.idle_json), exist_ok=True)
        with open(a.idle_json, 'w') as f:
            json.dump(idle, f, indent=1)
    opt = optimizer_times([10, 50, 100])
    command = 'qa/bench/module_cost.py ' + ' '.join(sys.argv[1:])
    sessions = session_costs()
    text = render(idle, sessions, opt, command)
    with open(a.json, 'w') as f:
        json.dump({'command': command,
                   'date': datetime.datetime.now().isoformat(timespec='seconds'),
                   'load_avg': os.getloadavg()[0], 'cores': os.cpu_count(), 'idle': idle,
                   'sessions': sessions, 'optimizer': opt}, f, indent=1)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    kept = ''
    if os.path.exists(a.out):
        with open(a.out) as f:
            old = f.read()
        if ROLLOUT_HEADING in old:
            kept = old[old.index(ROLLOUT_HEADING):]
    with open(a.out, 'w') as f:
        f.write(text + kept)
    print(text)


if __name__ == '__main__':
    main()
