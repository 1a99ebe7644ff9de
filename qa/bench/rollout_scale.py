#!/usr/bin/python3
"""What `ceph rocks-autotune apply --dry-run` and the restart gate cost the
mgr on a large cluster: mon commands, tells, mgr.get calls, Python time and
memory, by cluster size (issue 22 item 9).

    qa/bench/rollout_scale.py [--sizes 100,500,1000,2000] [--osds-per-host 20]
                              [--rev REV [--rev REV ...]] [--fake-rev REV]
                              [--timeout 600] [--save FILE] [--append]

No cluster: the module's real command method (`cmd_apply(options=NEW_TUNING,
device_class='ssd', dry_run=True)`, Ceph's real mgr_module.py over
tests/unit/mgr_mock.py) and its real MgrCluster run over tests/unit/scale_mgr.py,
a fake of the mgr's Python API with N OSDs on N/20 hosts, one size-3 pool of
about 100 PGs per OSD, and a config dump with an entry at every osd.N (as
Quincy and later OSDs set osd_mclock_max_capacity_iops_*).  The gate is
gate.restart_blockers(cluster, 0) plus gate.data_threats(cluster),
what the rollout runs before each restart.  Then a rollout itself (`apply`,
not a dry run) over the same fake: its first save, then its first OSDs
stepped one at a time as the serve loop steps and publishes (each restart
done at once by the fake): each OSD's calls, its writes to the mgr's KV
store and the largest value written (the mon refuses a config-key value
over 64 KiB), and the size of its status.

Each size runs in a process of its own, so its peak RSS (ru_maxrss) is its
own: first the command alone (calls, process time, RSS), then again under
tracemalloc (peak Python memory; tracemalloc slows it, so its time is not
used).  "in the fake" is process time spent inside scale_mgr: decoding what
`get` hands out (the real mgr builds those objects in C++, on the module's
thread) and answering mon commands (the mon's work on a real cluster).

`--rev REV` measures the module as it is at a commit: its src/pybind/mgr
and tests/unit (mgr_mock, fake_cluster) from `git archive` into a temporary
directory (the checkout is not touched); without it, the working tree.
Given more than once (`--rev OLD --rev NEW`), each is measured in turn and
the section compares them, OLD first.  The fake (scale_mgr.py) is the same
for all: the working tree's, or with `--fake-rev REV` the one at REV.
`--timeout` caps each size; a size cut short reports what it had measured.
`--save FILE` writes the section, `--append` puts it at the end of
doc/bench/module-cost.md (`--out`), in place of the one already there
(qa/bench/module_cost.py keeps it when it rewrites the file).
"""
import argparse
import datetime
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from typing import Any, Dict, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNIT = os.path.join(REPO, 'tests', 'unit')
CEPH_MGR = '/usr/share/ceph/mgr'
DOC = os.path.join(REPO, 'doc', 'bench', 'module-cost.md')
HEADING = '## Rollout plan and gate at scale'
GATE_OSD = 0
STEPPED = 3  # a rollout's first OSDs, restarted one at a time; the last is shown


def log(msg: str) -> None:
    print(f'[{time.strftime("%H:%M:%S")}] {msg}', file=sys.stderr, flush=True)


def git(*args: str) -> str:
    try:
        return subprocess.run(['git', '-C', REPO, *args], text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL).stdout.strip()
    except OSError:
        return ''


def commit_of(rev: Optional[str]) -> str:
    """What was measured: REV's short hash, or HEAD's with '+' when the working
    tree has changes to tracked files."""
    if rev:
        return git('rev-parse', '--short', rev) or rev
    head = git('rev-parse', '--short', 'HEAD')
    if not head:
        return 'unknown'
    return head + ('+' if git('status', '--porcelain', '--untracked-files=no') else '')


def export(rev: str, into: str, *paths: str) -> str:
    """`paths` as they are at REV, under `into` (made if missing); returns `into`."""
    os.makedirs(into, exist_ok=True)
    archive = subprocess.run(['git', '-C', REPO, 'archive', rev, *paths],
                             stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(['tar', '-x', '-C', into], input=archive, check=True)
    return into


# ------------------------------------------------------------ one size (child)

def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def emit(row: Dict[str, Any]) -> None:
    print(json.dumps(row), flush=True)


def measure(osds: int, hosts: int, src: str, unit: str, fake: str, traced: bool) -> None:
    """In the child: one size, each result printed as a JSON line as soon as it is known.
    `unit`: where mgr_mock and fake_cluster come from (the module's own revision);
    `fake`: the directory scale_mgr comes from."""
    sys.path[:0] = [fake, unit, src]
    sys.path.append(CEPH_MGR)
    import mgr_mock
    mgr_mock.install()
    import scale_mgr
    from rocks_autotune.gate import data_threats, restart_blockers
    from rocks_autotune.rocksdb_options import NEW_TUNING

    t = time.process_time()
    mgr = scale_mgr.ScaleMgr(osds, hosts)
    emit({'what': 'fake', 'osds': osds, 'hosts': hosts, 'pgs': mgr.pg_num,
          'build_s': time.process_time() - t, 'rss_mib': _rss_mib()})

    def apply(mod: Any) -> Any:
        return mod.cmd_apply(options=NEW_TUNING, device_class='ssd', dry_run=True)

    def gate(mod: Any) -> Any:
        cluster = mod.cluster
        return restart_blockers(cluster, GATE_OSD), data_threats(cluster)

    for what, run in (('apply', apply), ('gate', gate)):
        mod = scale_mgr.module_over(mgr)
        mgr.reset_counts()
        t, wall = time.process_time(), time.time()
        out = run(mod)
        row = dict(mgr.counts(), what=what, process_s=time.process_time() - t,
                   wall_s=time.time() - wall, rss_mib=_rss_mib(), load=os.getloadavg()[0])
        if what == 'apply':
            row.update(retval=out.retval, stderr=out.stderr[:300],
                       planned=sum(1 for line in out.stdout.splitlines()
                                   if line.lstrip()[:1].isdigit() and '. osd.' in line))
        else:
            row['answer'] = [list(x) for x in out]
        emit(row)
    if traced:
        for what, run in (('apply', apply), ('gate', gate)):
            mod = scale_mgr.module_over(mgr)
            tracemalloc.start()
            run(mod)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            emit({'what': f'{what}-traced', 'peak_mib': peak / 2 ** 20,
                  'load': os.getloadavg()[0]})
    rollout(scale_mgr.module_over(mgr), mgr, NEW_TUNING)


def rollout(mod: Any, mgr: Any, options: str) -> None:
    """The apply itself (its first save), then its first STEPPED OSDs one at a
    time, as the serve loop steps and publishes: each OSD's calls, and what
    it writes to the mgr's KV store (each value the mon's config-key limit bounds)."""
    writes: List[int] = mod.mock_store_writes  # the mock mon's (mgr_mock)
    mgr.reset_counts()
    t = time.process_time()
    out = mod.cmd_apply(options=options, device_class='ssd')
    emit(dict(mgr.counts(), what='start', retval=out.retval, stderr=out.stderr[:300],
              process_s=time.process_time() - t, kv_writes=len(writes),
              kv_max=max(writes, default=0), load=os.getloadavg()[0]))
    if out.retval:
        return
    for k in range(STEPPED):
        mgr.reset_counts()
        del writes[:]
        t, steps = time.process_time(), 0
        r = mod.rollout.r
        while r.osds[k].status != 'done' and r.state == 'running' and steps < 50:
            mod.clock.advance(mod.rollout.step())
            mod.publish()
            steps += 1
        emit(dict(mgr.counts(), what=f'osd-{k}', osd=r.osds[k].osd, status=r.osds[k].status,
                  message=r.message[:300], steps=steps, process_s=time.process_time() - t,
                  kv_writes=len(writes), kv_max=max(writes, default=0),
                  load=os.getloadavg()[0]))
    t = time.process_time()
    status = json.dumps(mod.rollout.status())
    text = mod.cmd_status().stdout
    emit({'what': 'status', 'json_bytes': len(status), 'text_bytes': len(text),
          'process_s': time.process_time() - t,
          'kv_max': max(len(v) for v in mod.mock_store.values()),
          'kv_keys': len(mod.mock_store), 'load': os.getloadavg()[0]})


# ------------------------------------------------------------ the table (parent)

def run_size(osds: int, hosts: int, src: str, unit: str, fake: str, traced: bool,
             timeout: float) -> Dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), '--one', str(osds), '--hosts', str(hosts),
           '--src', src, '--unit', unit, '--fake', fake] + ([] if traced else ['--no-tracemalloc'])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    capped = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        capped = True
    rows: Dict[str, Any] = {'capped': capped, 'rc': proc.returncode}
    for line in out.splitlines():
        if line.startswith('{'):
            r = json.loads(line)
            rows[r['what']] = r
    return rows


def _top(counts: Dict[str, int]) -> str:
    return ', '.join(f'{k} {v}' for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _mib(b: Dict[str, int]) -> str:
    return f'{sum(b.values()) / 2 ** 20:.0f}'


def _cut(res: Dict[str, Any], timeout: float) -> str:
    return f' (cut at {timeout:.0f} s)' if res['capped'] else ''


def _peak(traced: Optional[Dict[str, Any]], cut: str) -> str:
    return f'{traced["peak_mib"]:.0f}' if traced else 'not measured' + cut


ROLLOUT_INTRO = ('A rollout (`cmd_apply(options=NEW_TUNING, device_class=\'ssd\')`, not a dry '
                 'run), stepped and published as the serve loop does, each restart done at '
                 f'once by the fake: the apply\'s first save, then OSD number {STEPPED} in '
                 'restart order, from its `next` step to up on the options (what each OSD '
                 'costs; the first also has the `check` step). KV: what the rollout store '
                 'writes to the mgr\'s KV store (config-key set; the mon\'s limit for a value is '
                 '64 KiB); status: `status -f json`\'s `rollout` and the plain `status` text '
                 'after those OSDs.')
ROLLOUT_COLUMNS = ('apply: KV writes, largest KiB | OSD steps | mon commands | by prefix | tells | '
                   'mgr.get | by name | JSON handed out MiB | KV writes | largest KiB | process s '
                   '| of it in the fake s | status JSON MiB, text bytes | KV keys, largest KiB '
                   '| load |')


def _rollout_cells(res: Dict[str, Any], cut: str) -> str:
    """A size's rollout row after its leading cells."""
    st, o, s = res.get('start'), res.get(f'osd-{STEPPED - 1}'), res.get('status')
    if st is None or st.get('retval'):
        why = st['stderr'][:80] if st else f'not measured{cut}'
        return f' {why} |' + ' |' * 14
    head = f' {st["kv_writes"]}, {st["kv_max"] / 1024:.1f} |'
    if o is None:
        return head + f' not measured{cut} |' + ' |' * 13
    return head + (
        f' {o["steps"]} ({o["status"]}) | {sum(o["mon"].values())} | {_top(o["mon"])} | '
        f'{sum(o["tell"].values())} | {sum(o["get"].values())} | {_top(o["get"])} | '
        f'{_mib(o["bytes"])} | {o["kv_writes"]} | {o["kv_max"] / 1024:.1f} | '
        f'{o["process_s"]:.2f} | {o["fake_seconds"]:.2f} | ' +
        (f'{s["json_bytes"] / 2 ** 20:.1f}, {s["text_bytes"]} | '
         f'{s["kv_keys"]}, {s["kv_max"] / 1024:.1f} |' if s else ' | |') +
        f' {o["load"]:.1f} |')


def compare(runs: List[Dict[str, Any]], command: str, fake: str, timeout: float) -> str:
    """The section: each size at each commit, then each commit's full tables."""
    now = datetime.datetime.now().isoformat(timespec='seconds')
    commits = ', '.join(r['commit'] for r in runs)
    lines = [HEADING, '',
             f'Command: `{command}`; date {now}; commits {commits} (in that order); fake mgr: '
             f'tests/unit/scale_mgr.py at {fake}; {os.cpu_count()} cores; load average (1 min) '
             'in each row, taken as that row was measured. Each size at each commit runs in a '
             'process of its own; seconds are its Python process time (time.process_time), not '
             'wall time; peak Python memory is tracemalloc\'s peak over a second run of the same '
             'call (not measured where that run was cut at the timeout); peak RSS is the '
             'process\'s ru_maxrss after the call.', '',
             '`apply --dry-run` (`cmd_apply(options=NEW_TUNING, device_class=\'ssd\', '
             'dry_run=True)`):', '',
             '| OSDs | commit | rc, OSDs planned | mon commands | tells | mgr.get | process s '
             '| tracemalloc peak MiB | peak RSS MiB | load |',
             '|---|---|---|---|---|---|---|---|---|---|']
    gate = ['', f'Restart gate for osd.{GATE_OSD} (gate.restart_blockers + '
            'gate.data_threats), after the apply:', '',
            '| OSDs | commit | mon commands | tells | mgr.get | process s '
            '| tracemalloc peak MiB | load |',
            '|---|---|---|---|---|---|---|---|']
    sizes = [res['osds'] for res in runs[0]['results']]
    for i, n in enumerate(sizes):
        for run in runs:
            res = run['results'][i]
            cut = _cut(res, timeout)
            a, g = res.get('apply'), res.get('gate')
            if a is None:
                lines.append(f'| {n} | {run["commit"]} | not measured{cut} (rc {res["rc"]}) |'
                             + ' |' * 7)
            else:
                lines.append(
                    f'| {n} | {run["commit"]} | {a["retval"]}, {a["planned"]} | '
                    f'{sum(a["mon"].values())} | {sum(a["tell"].values())} | '
                    f'{sum(a["get"].values())} | {a["process_s"]:.2f} | '
                    f'{_peak(res.get("apply-traced"), cut)} | {a["rss_mib"]:.0f} | '
                    f'{a["load"]:.1f} |')
            if g is None:
                gate.append(f'| {n} | {run["commit"]} | not measured{cut} |' + ' |' * 5)
            else:
                gate.append(
                    f'| {n} | {run["commit"]} | {sum(g["mon"].values())} | '
                    f'{sum(g["tell"].values())} | {sum(g["get"].values())} | '
                    f'{g["process_s"]:.3f} | {_peak(res.get("gate-traced"), cut)} | '
                    f'{g["load"]:.1f} |')
    roll = ['', ROLLOUT_INTRO, '', '| OSDs | commit | ' + ROLLOUT_COLUMNS,
            '|---|---|' + '---|' * ROLLOUT_COLUMNS.count('|')]
    for i, n in enumerate(sizes):
        for run in runs:
            res = run['results'][i]
            roll.append(f'| {n} | {run["commit"]} |' + _rollout_cells(res, _cut(res, timeout)))
    text = '\n'.join(lines + gate + roll) + '\n'
    for run in runs:
        text += '\n' + render(run['results'], command, run['commit'], timeout,
                              f'### In detail at {run["commit"]}', header=False)
    return text


def render(results: List[Dict[str, Any]], command: str, commit: str, timeout: float,
           heading: str = HEADING, header: bool = True) -> str:
    now = datetime.datetime.now().isoformat(timespec='seconds')
    lines = [heading, '']
    if header:
        lines += [f'Command: `{command}`; date {now}; commit {commit}; '
                  f'{os.cpu_count()} cores; load average (1 min) in each row, taken as that row '
                  'was measured. Python process time (time.process_time), not wall time.', '']
    lines += ['`apply --dry-run` (`cmd_apply(options=NEW_TUNING, device_class=\'ssd\', '
              'dry_run=True)` through MgrCluster over tests/unit/scale_mgr.py):', '',
              '| OSDs | hosts | PGs | rc, OSDs planned | mon commands | by prefix | tells | '
              'mgr.get | by name | JSON handed out MiB | process s | of it in the fake s | '
              'tracemalloc peak MiB | RSS MiB: fake built / peak | load |',
              '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    gate = ['', f'Restart gate for osd.{GATE_OSD} (gate.restart_blockers + '
            'gate.data_threats), same fake, after the apply above:', '',
            '| OSDs | mon commands | by prefix | tells | mgr.get | by name | '
            'JSON handed out MiB | process s | tracemalloc peak MiB | load |',
            '|---|---|---|---|---|---|---|---|---|---|']
    roll = ['', ROLLOUT_INTRO, '', '| OSDs | ' + ROLLOUT_COLUMNS,
            '|---|' + '---|' * ROLLOUT_COLUMNS.count('|')]
    for res in results:
        fake = res.get('fake', {})
        n, h = res['osds'], res['hosts']
        a = res.get('apply')
        cut = _cut(res, timeout)
        if a is None:
            lines.append(f'| {n} | {h} | {fake.get("pgs", "?")} | not measured{cut} '
                         f'(rc {res["rc"]}) |' + ' |' * 10 + f' {os.getloadavg()[0]:.1f} |')
        else:
            at = res.get('apply-traced')
            lines.append(
                f'| {n} | {h} | {fake["pgs"]} | {a["retval"]}, {a["planned"]} | '
                f'{sum(a["mon"].values())} | {_top(a["mon"])} | {sum(a["tell"].values())} | '
                f'{sum(a["get"].values())} | {_top(a["get"])} | {_mib(a["bytes"])} | '
                f'{a["process_s"]:.2f} | {a["fake_seconds"]:.2f} | '
                f'{_peak(at, cut)} | '
                f'{fake["rss_mib"]:.0f} / {a["rss_mib"]:.0f} | {a["load"]:.1f} |')
        roll.append(f'| {n} |' + _rollout_cells(res, cut))
        g = res.get('gate')
        if g is None:
            gate.append(f'| {n} | not measured{cut} |' + ' |' * 7 + f' {os.getloadavg()[0]:.1f} |')
        else:
            gt = res.get('gate-traced')
            gate.append(
                f'| {n} | {sum(g["mon"].values())} | {_top(g["mon"])} | '
                f'{sum(g["tell"].values())} | {sum(g["get"].values())} | {_top(g["get"])} | '
                f'{_mib(g["bytes"])} | {g["process_s"]:.3f} | '
                f'{_peak(gt, cut)} | {g["load"]:.1f} |')
    return '\n'.join(lines + gate + roll) + '\n'


def write_doc(path: str, text: str) -> None:
    """The section at the end of `path`, in place of the one already there."""
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        old = ''
    at = old.find('\n' + HEADING + '\n')
    head = (old[:at] if at >= 0 else old).rstrip('\n')
    with open(path, 'w') as f:
        f.write((head + '\n\n' if head else '') + text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sizes', default='100,500,1000,2000', help='OSD counts, comma separated')
    ap.add_argument('--osds-per-host', type=int, default=20)
    ap.add_argument('--rev', action='append',
                    help='measure the module at this commit (git archive); more than once '
                    'to compare')
    ap.add_argument('--fake-rev', help='take tests/unit/scale_mgr.py from this commit')
    ap.add_argument('--timeout', type=float, default=600, help='seconds per size')
    ap.add_argument('--no-tracemalloc', action='store_true')
    ap.add_argument('--save', help='write the section to this file')
    ap.add_argument('--append', action='store_true',
                    help='put the section at the end of --out, in place of the one there')
    ap.add_argument('--out', default=DOC)
    ap.add_argument('--json', help='write the raw results here')
    # the child's
    ap.add_argument('--one', type=int, help=argparse.SUPPRESS)
    ap.add_argument('--hosts', type=int, help=argparse.SUPPRESS)
    ap.add_argument('--src', help=argparse.SUPPRESS)
    ap.add_argument('--unit', help=argparse.SUPPRESS)
    ap.add_argument('--fake', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one is not None:
        measure(a.one, a.hosts, a.src, a.unit, a.fake, not a.no_tracemalloc)
        return
    command = 'qa/bench/rollout_scale.py ' + ' '.join(shlex.quote(x) for x in sys.argv[1:])
    runs = []
    with tempfile.TemporaryDirectory(prefix='rollout-scale-') as tmp:
        fake = os.path.join(tmp, 'fake')
        if a.fake_rev:
            export(a.fake_rev, fake, 'tests/unit/scale_mgr.py')
            fake = os.path.join(fake, 'tests', 'unit')
        else:
            os.makedirs(fake)
            shutil.copy(os.path.join(UNIT, 'scale_mgr.py'), fake)
        for i, rev in enumerate(a.rev or [None]):
            if rev:
                into = export(rev, os.path.join(tmp, str(i)), 'src/pybind/mgr', 'tests/unit')
                src, unit = (os.path.join(into, 'src', 'pybind', 'mgr'),
                             os.path.join(into, 'tests', 'unit'))
            else:
                src, unit = os.path.join(REPO, 'src', 'pybind', 'mgr'), UNIT
            results = []
            for n in (int(x) for x in a.sizes.split(',') if x):
                h = max(1, n // a.osds_per_host)
                log(f'{rev or "working tree"}: {n} OSDs on {h} hosts ...')
                res = run_size(n, h, src, unit, fake, not a.no_tracemalloc, a.timeout)
                res.update(osds=n, hosts=h)
                ap_ = res.get('apply', {})
                log(f'{n} OSDs: rc {res["rc"]}{" (cut)" if res["capped"] else ""}, apply '
                    f'{ap_.get("process_s", float("nan")):.2f} s, '
                    f'{sum(ap_.get("mon", {}).values())} mon commands')
                results.append(res)
            runs.append({'rev': rev, 'commit': commit_of(rev), 'results': results})
    if len(runs) > 1:
        text = compare(runs, command, commit_of(a.fake_rev) if a.fake_rev else 'the working tree',
                       a.timeout)
    else:
        text = render(runs[0]['results'], command, runs[0]['commit'], a.timeout)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({'command': command, 'runs': runs}, f, indent=1)
    if a.save:
        with open(a.save, 'w') as f:
            f.write(text)
    if a.append:
        write_doc(a.out, text)
    print(text)


if __name__ == '__main__':
    main()
