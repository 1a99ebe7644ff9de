"""Shared code of the benches in qa/bench: the lab, measurement windows, the
pure parts (interleaving, medians, ratios, tables) the unit tests cover, and
the ceph CLI and client-load passes of the bench run inside a lab's release.

Measurements reuse the tuner's own code: perf counter snapshots and
deltas are rocks_autotune.perf_counters, the osd bench chunks are
rocks_autotune.workload.BenchWorkload, option strings come from
rocks_autotune.rocksdb_options / space.  Nothing here is imported by the module.
"""
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'src', 'pybind', 'mgr'))

from rocks_autotune import paired_stats, perf_counters, rocksdb_options, rocksdb_stats  # noqa: E402
from rocks_autotune.canary import STATS_OPTIONS  # noqa: E402
from rocks_autotune.perf_counters import Measurement  # noqa: E402
from rocks_autotune.rocksdb_options import parse_options  # noqa: E402
from rocks_autotune.space import SearchSpace  # noqa: E402
from rocks_autotune.workload import (BENCH_LIMIT_OPTION, BENCH_LIMIT_VALUE,  # noqa: E402
                                     BenchWorkload, ClientWorkload)


def repo_commit() -> str:
    """The checkout's commit, '+' when it has uncommitted changes: the module
    code a run measured (seeds of one bench may run days apart)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(['git', '-C', REPO, *args], text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
        except OSError:  # no git (the Tentacle root has none)
            return ''
    head = git('rev-parse', '--short', 'HEAD')
    return head + ('+' if git('status', '--porcelain', '--untracked-files=no') else '') \
        if head else 'unknown'


# the benches' own lab: `down` and rebuilt by run-bench, so never point these
# at a lab someone else uses (ceph-lab's variables, other defaults)
LAB_DIR = os.environ.get('BENCH_LAB_DIR', '/var/tmp/rat-bench-lab')
LAB_PORT = int(os.environ.get('BENCH_LAB_MON_PORT', '21700'))
CEPH_LAB = os.path.join(REPO, 'qa', 'lab', 'ceph-lab')
DOC = os.path.join(REPO, 'doc', 'bench')
# raw data (JSON lines) of the benches: doc/ holds the pages that read them
RESULTS = os.path.join(REPO, 'qa', 'bench', 'results')
OPTION = 'bluestore_rocksdb_options'
# the --start-options of tiny-vs-default-rbd-rocksdb.md
BLOG_SMALL = rocksdb_options.BLOG_SMALL
MODULE_PREFIX = 'mgr/rocks_autotune/'


def log(msg: str) -> None:
    print(f'[{time.strftime("%H:%M:%S")}] {msg}', file=sys.stderr, flush=True)


# ---------------------------------------------------------------- pure parts

def interleave(names: Sequence[str], reps: int) -> List[Tuple[int, str]]:
    """(repetition, configuration) in the order they run: A B C D A B C D ...

    Every configuration runs once per round, so slow drift of the machine
    (other labs, page cache, DB growth) reaches all of them alike.
    """
    if reps < 1:
        raise ValueError(f'reps must be >= 1, not {reps}')
    if len(set(names)) != len(names):
        raise ValueError(f'configuration names repeat: {list(names)}')
    return [(r, n) for r in range(reps) for n in names]


def flush_bytes(options: str) -> int:
    """write_buffer_size x min_write_buffer_number_to_merge of an option string."""
    c = SearchSpace.candidate_from_options(parse_options(options))
    return c.write_buffer_size * c.min_write_buffer_number_to_merge


def l0_trigger(options: str) -> int:
    """level0_file_num_compaction_trigger of an option string (RocksDB's if absent)."""
    return SearchSpace.candidate_from_options(parse_options(options)) \
        .level0_file_num_compaction_trigger


@dataclass
class Stat:
    median: Optional[float]
    spread: Optional[float]  # (max - min) / median, perf_counters.spread
    n: int
    values: List[float] = field(default_factory=list)

    @classmethod
    def of(cls, xs: Sequence[Optional[float]]) -> 'Stat':
        vals = [float(x) for x in xs if x is not None]
        if not vals:
            return cls(None, None, 0, [])
        return cls(statistics.median(vals), perf_counters.spread(vals), len(vals), vals)


def aa_sd(pairs: Sequence[float], level: float = 0.90) -> Tuple[float, float, float]:
    """A/A pairs' per-round sd, sqrt(mean(d^2)) as a session computes it
    (power.aa_noise), and its chi-square interval at `level`: how well
    len(pairs) pairs of mean zero know it."""
    from scipy.stats import chi2  # here only: the scripts run in a lab's root import benchlib too
    n = len(pairs)
    sd = math.sqrt(sum(d * d for d in pairs) / n)
    tail = (1 - level) / 2
    return sd, sd * math.sqrt(n / chi2.ppf(1 - tail, n)), sd * math.sqrt(n / chi2.ppf(tail, n))


def baseline_trials(trials: Optional[Sequence[Mapping[str, Any]]]) -> List[Mapping[str, Any]]:
    """A session's measured baseline runs, in the order they ran, from its
    trials (`history -f json`, or a saved session's `trials`)."""
    return [t for t in trials or [] if t.get('kind') == 'baseline' and t.get('measurement')]


def baseline_measurements(trials: Optional[Sequence[Mapping[str, Any]]]) -> List[Dict[str, Any]]:
    """The measurements of a session's baseline runs (baseline_trials)."""
    return [t['measurement'] for t in baseline_trials(trials)]


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None or b == 0:
        return None
    return a / b


# The columns of a results table: key in a window's dict, header, format.
METRICS: List[Tuple[str, str, str]] = [
    ('iops', 'IOPS', '{:.0f}'),
    ('kv_sync_lat_ms', 'kv_sync_lat ms', '{:.3f}'),
    ('db_mib', 'DB MiB written', '{:.0f}'),
    ('write_amp', 'write-amp', '{:.3f}'),
    ('flushes', 'flushes', '{:.1f}'),
]


def summarize(windows: List[Dict[str, Any]], names: Sequence[str]
              ) -> Dict[str, Dict[str, Stat]]:
    """Per configuration, per metric: median and spread over its windows."""
    out: Dict[str, Dict[str, Stat]] = {}
    for n in names:
        ws = [w for w in windows if w['config'] == n]
        out[n] = {k: Stat.of([w.get(k) for w in ws]) for k, _, _ in METRICS}
    return out


def _fmt(fmt: str, v: Optional[float]) -> str:
    return '–' if v is None else fmt.format(v)


def _pct(v: Optional[float]) -> str:
    return '–' if v is None else f'{100 * v:.0f}%'


def _x(v: Optional[float]) -> str:
    return '–' if v is None else f'{v:.2f}x'


def render_table(summary: Dict[str, Dict[str, Stat]], names: Sequence[str],
                 default: str, reference: str) -> str:
    """Markdown: median (spread) per metric, then ratios of the medians to
    `default` and to `reference` (IOPS, kv_sync_lat, write-amp)."""
    head = ['configuration', 'n'] + [f'{h} (spread)' for _, h, _ in METRICS]
    for base in (default, reference):
        head += [f'IOPS / {base}', f'kv_sync_lat / {base}', f'write-amp / {base}']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for n in names:
        s = summary[n]
        row = [n, str(s['iops'].n or s['write_amp'].n)]
        for k, _, fmt in METRICS:
            row.append(f'{_fmt(fmt, s[k].median)} ({_pct(s[k].spread)})')
        for base in (default, reference):
            b = summary[base]
            for k in ('iops', 'kv_sync_lat_ms', 'write_amp'):
                row.append(_x(ratio(s[k].median, b[k].median)))
        lines.append('| ' + ' | '.join(row) + ' |')
    return '\n'.join(lines)


def paired_ratios(windows: List[Dict[str, Any]], names: Sequence[str], base: str,
                  key: str) -> Dict[str, Optional[float]]:
    """Per configuration: median over rounds of (its value / `base`'s value in
    the same round).  Pairs by round, so drift between rounds cancels."""
    by = {(w['rep'], w['config']): w.get(key) for w in windows}
    out: Dict[str, Optional[float]] = {}
    for n in names:
        rs = [ratio(v, by.get((rep, base))) for (rep, c), v in by.items() if c == n]
        vals = [r for r in rs if r is not None]
        out[n] = statistics.median(vals) if vals else None
    return out


def render_paired(windows: List[Dict[str, Any]], names: Sequence[str], base: str) -> str:
    keys = [('iops', 'IOPS'), ('kv_sync_lat_ms', 'kv_sync_lat'), ('write_amp', 'write-amp')]
    cols = {k: paired_ratios(windows, names, base, k) for k, _ in keys}
    lines = ['| configuration | ' + ' | '.join(f'{h} / {base} (paired)' for _, h in keys)
             + ' |', '|---|' + '---|' * len(keys)]
    for n in names:
        lines.append(f'| {n} | ' + ' | '.join(_x(cols[k][n]) for k, _ in keys) + ' |')
    return '\n'.join(lines)


def recount(w: Dict[str, Any]) -> Dict[str, Any]:
    """A window recorded before write-amp was counted by RocksDB's bytes
    (no write_amp_by), counted as a window is now (perf_counters.measure)
    from the RocksDB bytes it stored; as it was otherwise."""
    parts = [w.get(k) for k in ('rocksdb_wal_bytes', 'flush_bytes', 'compaction_bytes')]
    if 'write_amp_by' in w or None in parts:
        return w
    wal, flush, compaction = (float(p or 0) for p in parts)
    counted = perf_counters.rocksdb_write_amp(wal, flush, compaction,
                                              float(w.get('client_bytes') or 0))
    if counted is None:
        return w
    return dict(w, write_amp=counted, write_amp_by=perf_counters.ROCKSDB,
                bluefs_write_amp=w['write_amp'])


def window_row(config: str, rep: int, workload: str, m: Measurement,
               iops: Optional[float] = None) -> Dict[str, Any]:
    """One measured window as a flat JSON-ready dict."""
    d = m.to_dict()
    d.update(config=config, rep=rep, workload=workload, db_mib=m.db_bytes / (1 << 20))
    if iops is not None:
        d['iops'] = iops
    return d


# ---------------------------------------------------------------- the claim

def claim_of(best: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """What a session's answer (`ceph rocks-autotune best -f json`) claims, and
    the options the bench runs as `tuned`.

    A recommendation claims its arm's confirmed figures: the objective better
    than the baseline by at least its interval's low end (the median the best
    guess), write-amp within the budget.  Keep current claims that no
    candidate is better by more than the margin: the bench checks that on
    the confirmation's best-ranked candidate (c1; the next one if c1 failed,
    i.e. broke the canary).  None: no answer (the session ended before its
    confirmation, or it predates the confirmation); `options` None: keep
    current with no candidate the bench could run.
    """
    if not best or 'answer' not in best:
        return None
    cands = list(best.get('candidates') or [])  # c1, c2, ...: the model's order
    if best['keeps_current']:
        arm = next((c for c in cands if c['verdict'] != 'failed'), None)
    else:
        arm = next((c for c in cands if c['arm'] == best['arm']), None)
        if arm is None:
            raise ValueError(f'best recommends {best["arm"]!r}, not among its candidates')
    out = {k: best[k] for k in ('answer', 'summary', 'complete', 'objective', 'direction',
                                'margin', 'budget', 'level', 'rounds', 'rounds_done')}
    out.update({k: None for k in ('arm', 'trial', 'verdict', 'options', 'ratio',
                                  'write_amp', 'kv_sync_lat')})
    out['candidates'] = len(cands)
    if arm is not None:
        out.update(arm=arm['arm'], trial=arm['trial'], verdict=arm['verdict'],
                   options=arm['options'], ratio=arm['objective'],
                   write_amp=arm['write_amp'], kv_sync_lat=arm['kv_sync_lat'])
    return out


def as_measurement(w: Mapping[str, Any]) -> Measurement:
    """A window row as the session's statistics read it (paired_stats): its
    figures, those it lacks None (or their default)."""
    return Measurement(**{f.name: w.get(f.name, None if f.default is MISSING else f.default)
                          for f in fields(Measurement)})


def bench_ratio(windows: List[Dict[str, Any]], config: str, base: str,
                key: str, workload: str = 'osd_bench') -> Dict[str, Any]:
    """`config` over `base` in the `workload` windows, paired by round: the
    median ratio and the 90% interval, by the session's own statistics
    (rocks_autotune.paired_stats: the median of the log-ratios, the
    signed-rank interval, open below its 5 rounds; write-amp only where
    neither window was short)."""
    rounds: Dict[int, Dict[str, Optional[Measurement]]] = {}
    for w in windows:
        if w['workload'] == workload:
            rounds.setdefault(w['rep'], {})[w['config']] = as_measurement(w)
    pairs = paired_stats.paired_at([rounds[r] for r in sorted(rounds)], config, base, key)
    reps = sorted(rounds)
    s = paired_stats.Summary.of([v for _, v in pairs], at=[reps[i] + 1 for i, _ in pairs])
    return asdict(s.ratio)


def check_claim(claim: Optional[Mapping[str, Any]], bench: Optional[float],
                bench_write_amp: Optional[float],
                bench_interval: Tuple[Optional[float], Optional[float]] = (None, None)
                ) -> Dict[str, Any]:
    """Did the bench find what the session claimed?

    `bench`: the bench's paired median ratio tuned / default of the claim's
    objective, `bench_interval` its 90% interval (open ends: too few rounds);
    `bench_write_amp`: the median ratio of write-amp.  `held`: for a
    recommendation, the bench's ratio is at least the claimed interval's low
    end (the claim: better by at least that; for an objective where lower is
    better, at most its high end).  Keep current says the session could not
    confirm a gain beyond the margin; it is contradicted only when the bench
    confirms one (its interval clear of 1 + the margin), and cannot be
    checked by a bench with no interval of its own.
    None: nothing to check.  `inside`: the bench's ratio lies within the
    claimed interval (an open end reaches any value); `write_amp_within`: the
    bench's write-amp ratio is within the session's budget.
    """
    out: Dict[str, Any] = {'held': None, 'inside': None, 'write_amp_within': None,
                           'bench': bench, 'bench_write_amp': bench_write_amp, 'why': ''}
    if claim is None:
        out['why'] = 'no confirmed answer to check'
        return out
    if claim['ratio'] is None:
        out['why'] = 'keep current, with no candidate the bench could measure'
        return out
    budget = claim['budget']
    if bench_write_amp is not None:
        out['write_amp_within'] = bench_write_amp <= budget
    if bench is None:
        out['why'] = 'the bench has no paired ratio for the objective'
        return out
    low, high = claim['ratio']['low'], claim['ratio']['high']
    out['inside'] = (low is None or bench >= low) and (high is None or bench <= high)
    lower = claim['direction'] == paired_stats.LOWER  # a latency: lower is better
    if claim['answer'] == 'recommend':
        lim, end = (high, 'high') if lower else (low, 'low')
        if lim is None:
            out['why'] = 'the claim has no interval to check against'
            return out
        held = bench <= lim if lower else bench >= lim
        ops = ('<=', '>') if lower else ('>=', '<')
        what = f'(the claim\'s {end} end)'
    else:
        lim = 1.0 / (1.0 + claim['margin']) if lower else 1.0 + claim['margin']
        # the end of the bench's interval on the side of a gain
        edge = bench_interval[1] if lower else bench_interval[0]
        what = f'= {"1 / " if lower else ""}(1 + the {claim["margin"]:.0%} margin)'
        if edge is None:
            out['why'] = ('keep current: the bench has no interval of its own (it takes 5 '
                          'rounds) to confirm a gain with')
            return out
        held = edge >= lim if lower else edge <= lim
        ops = ('>=', '<') if lower else ('<=', '>')
        out['held'] = held
        out['why'] = (f'bench interval\'s {"high" if lower else "low"} end {edge:.2f}x '
                      f'{ops[0] if held else ops[1]} {lim:.2f}x {what}')
        return out
    out['held'] = held
    out['why'] = f'bench {bench:.2f}x {ops[0] if held else ops[1]} {lim:.2f}x {what}'
    return out


def tally(checks: Sequence[Mapping[str, Any]]) -> str:
    """'N of M claims held' over the checks that had a claim to check."""
    done = [c for c in checks if c['held'] is not None]
    held = sum(1 for c in done if c['held'])
    left = len(checks) - len(done)
    return (f'{held} of {len(done)} claim{"" if len(done) == 1 else "s"} held'
            + (f' ({left} run{"" if left == 1 else "s"} with no claim to check)'
               if left else ''))


# ---------------------------------------------------------------- the lab

class Lab:
    """The bench's own lab (never anyone else's): ceph-lab with our dir and port."""

    def __init__(self, lab_dir: str = LAB_DIR, port: int = LAB_PORT) -> None:
        self.dir = lab_dir
        self.port = port
        self.env = dict(os.environ, CEPH_LAB_DIR=lab_dir, CEPH_LAB_MON_PORT=str(port),
                        CEPH_CONF=os.path.join(lab_dir, 'ceph.conf'),
                        # a chroot release's CLI wrappers (see ceph-lab env), but
                        # where this runs inside the root already (ceph-lab demo)
                        PATH=os.environ['PATH'] if os.environ.get('CEPH_LAB_INSIDE_ROOT')
                        == '1' else os.path.join(lab_dir, 'bin') + os.pathsep
                        + os.environ['PATH'])

    # -- ceph-lab
    def lab(self, *args: str, timeout: float = 900) -> str:
        p = subprocess.run([CEPH_LAB, *args], env=self.env, text=True, timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode:
            raise RuntimeError(f'ceph-lab {" ".join(args)} failed: {p.stderr[-2000:]}')
        return p.stdout

    def up(self, flash: bool, fresh: bool = True) -> None:
        if fresh:
            self.lab('down')
        log(f'lab up ({"flash" if flash else "hdd"}-like) in {self.dir}')
        try:
            self.lab('up', '--flash' if flash else '--hdd')
        except RuntimeError as e:
            # seen once: the mon port still held for a few seconds right after
            # the previous lab's down; start over once
            log(f'lab up failed, retrying once in 15 s: {str(e)[-300:]}')
            self.lab('down')
            time.sleep(15)
            self.lab('up', '--flash' if flash else '--hdd')

    def down(self) -> None:
        log(f'lab down ({self.dir})')
        self.lab('down')

    def facts(self) -> Dict[str, Any]:
        with open(os.path.join(self.dir, 'lab.json')) as f:
            st = json.load(f)
        return {'osds': len(st['osds']), 'flash': st['flash'],
                'version': self.ceph('version').strip(), 'cores': os.cpu_count(),
                'load_avg_at_start': os.getloadavg()[0], 'commit': repo_commit()}

    # -- ceph CLI
    def run(self, *args: str, timeout: float = 120, check: bool = True) -> str:
        p = subprocess.run(list(args), env=self.env, text=True, timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check and p.returncode:
            raise RuntimeError(f'{" ".join(args)} failed ({p.returncode}): '
                               f'{p.stdout[-1000:]}{p.stderr[-1000:]}')
        return p.stdout

    def ceph(self, *args: str, timeout: float = 120, check: bool = True) -> str:
        return self.run('ceph', '--connect-timeout', '30', *args, timeout=timeout, check=check)

    def ceph_json(self, *args: str, timeout: float = 120) -> Any:
        return json.loads(self.ceph(*args, '-f', 'json', timeout=timeout))

    def release_default(self) -> str:
        """The lab's release's default bluestore_rocksdb_options (as the module reads it)."""
        return str(self.ceph_json('config', 'help', 'bluestore_rocksdb_options')['default'])

    def perf_dump(self, osd: int) -> Dict[str, Any]:
        return self.ceph_json('tell', f'osd.{osd}', 'perf', 'dump')  # type: ignore[no-any-return]

    def bench(self, osd: int, count: int, size: int, object_size: int,
              object_num: int) -> Dict[str, Any]:
        """The `Cluster.bench` that workload.BenchWorkload drives."""
        return self.ceph_json('tell', f'osd.{osd}', 'bench', str(count), str(size),  # type: ignore
                              str(object_size), str(object_num), timeout=300)

    def up_from(self, osd: int) -> Tuple[bool, int]:
        for o in self.ceph_json('osd', 'dump')['osds']:
            if o['osd'] == osd:
                return bool(o['up']), int(o['up_from'])
        raise RuntimeError(f'no osd.{osd}')

    def active_clean(self) -> bool:
        st = self.ceph_json('pg', 'stat')
        s = st.get('pg_summary', st)
        total = s.get('num_pgs', 0)
        clean = sum(x['num'] for x in s.get('num_pg_by_state', [])
                    if x['name'] == 'active+clean')
        return bool(total) and clean == total

    def wait(self, what: str, pred: Any, timeout: float = 300) -> None:
        deadline = time.time() + timeout
        while True:
            try:
                if pred():
                    return
            except (RuntimeError, ValueError, subprocess.TimeoutExpired):
                pass
            if time.time() > deadline:
                raise RuntimeError(f'timed out after {timeout:.0f}s waiting for {what}')
            time.sleep(1)

    def apply(self, osd: int, options: str) -> float:
        """Set the options on osd.N only ('': remove them, the cluster's value),
        restart it through the orchestrator and wait until it is up again (new
        up_from) and all PGs are active+clean.  Returns the seconds it took."""
        t0 = time.time()
        if options:
            self.ceph('config', 'set', f'osd.{osd}', OPTION, options)
        else:
            self.ceph('config', 'rm', f'osd.{osd}', OPTION)
        _, before = self.up_from(osd)
        self.ceph('orch', 'daemon', 'restart', f'osd.{osd}')

        def back() -> bool:
            up, uf = self.up_from(osd)
            return up and uf != before
        self.wait(f'osd.{osd} back up', back)
        self.wait('active+clean', self.active_clean)
        return time.time() - t0

    def set_module_options(self, values: Mapping[str, str]) -> Dict[str, Optional[str]]:
        """Set mgr/rocks_autotune/<name> for each; returns what to put back
        (the value set before, None where none was: the module's default)."""
        dump = self.ceph_json('config', 'dump')
        was: Dict[str, Optional[str]] = {}
        for name, value in values.items():
            key = f'{MODULE_PREFIX}{name}'
            was[name] = next((str(o['value']) for o in dump
                              if o.get('section') == 'mgr' and o.get('name') == key), None)
            self.ceph('config', 'set', 'mgr', key, value)
        # the active mgr sees the mon's config a moment later; a session
        # takes its settings at its start
        time.sleep(3)
        return was

    def put_back_module_options(self, was: Mapping[str, Optional[str]]) -> None:
        for name, value in was.items():
            key = f'{MODULE_PREFIX}{name}'
            if value is None:
                self.ceph('config', 'rm', 'mgr', key, check=False)
            else:
                self.ceph('config', 'set', 'mgr', key, value, check=False)

    def mgr_pid(self, mid: str = 'x') -> int:
        with open(os.path.join(self.dir, 'run', f'mgr.{mid}.pid')) as f:
            return int(f.read().strip())


# ---------------------------------------------------------------- /proc

TICK = os.sysconf('SC_CLK_TCK')


def stat_cpu(path: str) -> Tuple[str, float]:
    """(comm, utime + stime seconds) of a /proc stat file."""
    with open(path) as f:
        s = f.read()
    comm = s[s.index('(') + 1:s.rindex(')')]
    fields = s[s.rindex(')') + 2:].split()
    return comm, (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu(pid: int) -> Dict[int, Tuple[str, float]]:
    """tid -> (thread name, CPU seconds so far) of a process."""
    out: Dict[int, Tuple[str, float]] = {}
    for t in glob.glob(f'/proc/{pid}/task/*/stat'):
        try:
            out[int(t.split('/')[4])] = stat_cpu(t)
        except (OSError, ValueError):
            pass  # thread exited
    return out


def machine_busy() -> Tuple[float, float]:
    """(busy jiffies, total jiffies) of all CPUs, from /proc/stat."""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


class CpuProfile:
    """Per-thread-name CPU of a process and the machine's busy share over a window."""

    def __init__(self, pid: int) -> None:
        self.pid, self.t0 = pid, time.time()
        self.th0, self.m0 = thread_cpu(pid), machine_busy()

    def result(self) -> Dict[str, Any]:
        secs = time.time() - self.t0
        th1, m1 = thread_cpu(self.pid), machine_busy()
        by: Dict[str, float] = {}
        for tid, (comm, cpu) in th1.items():
            by[comm] = by.get(comm, 0.0) + cpu - self.th0.get(tid, (comm, 0.0))[1]
        pct = {c: round(100 * v / secs, 1) for c, v in by.items() if v > 0}
        return {'process_core_pct': round(sum(pct.values()), 1),
                'threads_core_pct': dict(sorted(pct.items(), key=lambda kv: -kv[1])[:8]),
                'machine_busy_pct': round(100 * (m1[0] - self.m0[0])
                                          / max(1, m1[1] - self.m0[1]), 1)}


# ---------------------------------------------------------------- windows

@dataclass
class WindowSpec:
    warmup: float = 10.0
    duration: float = 30.0
    min_flushes: float = 2.0
    max_factor: float = 3.0  # extend a window up to duration x this for min_flushes
    # and for this many L0 compaction cycles (perf_counters.l0_cycles), as the
    # session's confirmation windows do: write-amp then compares at steady state
    min_cycles: float = 0.0
    # > 0: the window lasts until the canary's busiest column family went
    # through a compaction below L0, by RocksDB's own counts (as the session's
    # confirmation windows), at most this long; short without one
    steady_limit: float = 0.0


def osd_pid(lab: Lab, osd: int) -> int:
    with open(os.path.join(lab.dir, 'run', f'osd.{osd}.pid')) as f:
        return int(f.read().strip())


def osd_bench_window(lab: Lab, osd: int, options: str, spec: WindowSpec,
                     profile: Optional[Dict[str, Any]] = None) -> Measurement:
    """The tuner's bench window, from outside: warm up, snapshot, osd bench in
    chunks for `duration` (longer until `min_flushes` memtable flushes and
    `min_cycles` L0 compaction cycles, up to `max_factor` x), snapshot."""
    wl = BenchWorkload(lab, osd)  # type: ignore[arg-type]
    fb = flush_bytes(options)
    trigger = l0_trigger(options)
    est: Optional[float] = None
    t0 = time.time()
    while time.time() - t0 < spec.warmup:
        n, s = wl.drive(spec.warmup - (time.time() - t0), est)
        est = n / wl.block_size / s if s > 0 else est
    before = perf_counters.snapshot(lab.perf_dump(osd))
    prof = CpuProfile(osd_pid(lab, osd)) if profile is not None else None
    start = time.time()
    nbytes, nsecs = 0, 0.0
    while True:
        elapsed = time.time() - start
        if elapsed >= spec.duration:
            after = perf_counters.snapshot(lab.perf_dump(osd))
            if ((perf_counters.wal_bytes(before, after) / fb >= spec.min_flushes
                 and perf_counters.l0_cycles(before, after, fb, trigger) >= spec.min_cycles)
                    or elapsed >= spec.duration * spec.max_factor):
                break
        n, s = wl.drive(max(1.0, spec.duration - elapsed), est)
        est = n / wl.block_size / s if s > 0 else est
        nbytes += n
        nsecs += s
    if prof is not None and profile is not None:
        profile.update(prof.result())
    return perf_counters.measure(before, after, seconds=time.time() - start, flush_bytes=fb,
                                 min_flushes=spec.min_flushes, bench_bytes=nbytes,
                                 bench_seconds=nsecs, trigger=trigger, min_cycles=spec.min_cycles)


def kv_counts(lab: Lab, osd: int) -> Optional[rocksdb_stats.Counts]:
    """RocksDB's counts at osd.N now (None when it gives none: RocksDB's
    statistics off, see stats_on)."""
    try:
        text = lab.ceph('tell', f'osd.{osd}', 'dump_objectstore_kv_stats')
        return rocksdb_stats.counts(rocksdb_stats.parse(text))
    except (RuntimeError, ValueError):
        return None


def stats_on(lab: Lab, osd: int) -> None:
    """RocksDB's statistics at osd.N (from its next restart), as a session sets them."""
    for name in STATS_OPTIONS:
        lab.ceph('config', 'set', f'osd.{osd}', name, 'true')


# fio's rbd engine, run inside the lab's release (`ceph-lab exec`): a client
# on all OSDs, 4 KiB random overwrites of an RBD image filled first
FIO_IMAGE = 'ratbench'


def ensure_fio(lab: Lab) -> None:
    """fio (with its rbd engine) where the lab's release runs: Debian's fio
    package, installed once (in the chroot for a chroot release)."""
    if 'rbd' in lab.lab('exec', '--', 'sh', '-c', 'fio --enghelp 2>/dev/null || true'):
        return
    log('installing fio where the lab\'s release runs')
    apt = ['apt-get', '-q', '-o', 'Acquire::Check-Valid-Until=false']
    lab.lab('exec', '--', *apt, 'update', timeout=900)
    lab.lab('exec', '--', 'env', 'DEBIAN_FRONTEND=noninteractive', *apt, 'install', '-y',
            '--no-install-recommends', 'fio', timeout=900)


def fio_rbd(lab: Lab, pool: str, seconds: float, rw: str, bs: str,
            size: Optional[int] = None) -> Dict[str, float]:
    """One fio run of the rbd engine on the bench's image: its writes and
    the seconds they took (from fio's JSON)."""
    args = ['fio', '--name=ratbench', '--ioengine=rbd', '--clientname=admin',
            f'--pool={pool}', f'--rbdname={FIO_IMAGE}', f'--rw={rw}', f'--bs={bs}',
            '--iodepth=16', '--numjobs=1', '--output-format=json']
    if size is None:
        args += ['--time_based', f'--runtime={max(1, int(round(seconds)))}']
    else:
        args += [f'--size={size}']
    # a pass over the image (size) runs at the lab's pace: up to an hour
    out = lab.lab('exec', '--', *args, timeout=3600.0 if size else max(600.0, seconds * 3))
    return parse_fio(out)


def parse_fio(out: str) -> Dict[str, float]:
    """Writes and seconds of the first job of fio's JSON output (fio may print
    lines before the JSON)."""
    doc = json.loads(out[out.index('{'):])
    w = doc['jobs'][0]['write']
    return {'writes': float(w['total_ios']), 'seconds': float(w['runtime']) / 1000.0}


def fio_image(lab: Lab, pool: str, size: int) -> float:
    """The image fio writes into, created and brought to the shape of an
    image in use as a session's preconditioning brings its objects: written
    once end to end, then every 4 KiB block overwritten once in random
    order (fio's random map), so that every window overwrites extents
    already split; seconds it took."""
    t0 = time.time()
    lab.run('rbd', 'create', '--size', f'{size >> 20}M', f'{pool}/{FIO_IMAGE}')
    fio_rbd(lab, pool, 0, 'write', '4M', size=size)
    fio_rbd(lab, pool, 0, 'randwrite', '4k', size=size)
    return time.time() - t0


def fio_rbd_window(lab: Lab, osd: int, pool: str, options: str,
                   spec: WindowSpec) -> Tuple[Measurement, float]:
    """A client on all OSDs (fio's rbd engine, 4 KiB random writes, 16 in
    flight) and the canary's counters over the window (client bytes: its
    osd.op_w_in_bytes) with RocksDB's own flush and compaction bytes; IOPS
    is the cluster-wide figure fio reports.  Warm-up, then chunks until
    `duration` and, with `steady_limit`, until the canary's busiest column
    family compacted below L0 (at most `steady_limit`; short without one)."""
    fb = flush_bytes(options)
    fio_rbd(lab, pool, spec.warmup, 'randwrite', '4k')
    before = perf_counters.snapshot(lab.perf_dump(osd))
    kv0 = kv_counts(lab, osd)
    start = time.time()
    writes, secs = 0.0, 0.0
    limit = max(spec.duration, spec.steady_limit)
    while True:
        elapsed = time.time() - start
        # chunks of at most a minute: the window ends soon after the compaction
        chunk = min(60.0, max(5.0, (spec.duration if elapsed < spec.duration else limit)
                              - elapsed))
        r = fio_rbd(lab, pool, chunk, 'randwrite', '4k')
        writes += r['writes']
        secs += r['seconds']
        after = perf_counters.snapshot(lab.perf_dump(osd))
        kv1 = kv_counts(lab, osd)
        kv = rocksdb_stats.delta(kv0, kv1) if kv0 is not None and kv1 is not None else None
        elapsed = time.time() - start
        if elapsed < spec.duration:
            continue
        if not spec.steady_limit or elapsed >= limit or (kv is not None and kv.compactions):
            break
    m = perf_counters.measure(before, after, seconds=time.time() - start, flush_bytes=fb,
                              min_flushes=spec.min_flushes, kv=kv,
                              trigger=l0_trigger(options) if spec.steady_limit else 0,
                              min_cycles=1.0 if spec.steady_limit else 0.0)
    return m, writes / secs if secs else 0.0


def raise_bench_limit(lab: Lab, osd: int) -> None:
    lab.ceph('config', 'set', f'osd.{osd}', BENCH_LIMIT_OPTION, str(BENCH_LIMIT_VALUE))


def restore(lab: Lab, osd: int) -> None:
    """Remove what the bench set on the canary (the lab sets neither option)."""
    for opt in (OPTION, BENCH_LIMIT_OPTION, *STATS_OPTIONS):
        lab.ceph('config', 'rm', f'osd.{osd}', opt, check=False)


REPLICAS = 3  # make_pool's size: an OSD holds REPLICAS / OSDs of the pool's bytes


def make_pool(lab: 'Lab', pool: str, pg_num: int = 32) -> None:
    """A size-REPLICAS rbd pool of `pg_num` PGs (kept if there), then active+clean."""
    if pool not in lab.ceph_json('osd', 'pool', 'ls'):
        lab.ceph('osd', 'pool', 'create', pool, str(pg_num), str(pg_num), 'replicated',
                 '--size', str(REPLICAS))
        lab.ceph('osd', 'pool', 'set', pool, 'min_size', '2')
        lab.ceph('osd', 'pool', 'application', 'enable', pool, 'rbd')
    lab.wait('active+clean', lab.active_clean)


# ---------------------------------------------------------------- inside a lab's release
# The bench run by `ceph-lab exec` (split_aa):
# the ceph CLI and librados of the lab's own release, no Lab.


def ceph(*args: str) -> str:
    return subprocess.run(['ceph', *args], check=True, text=True, capture_output=True,
                          timeout=300).stdout


def ceph_json(*args: str) -> Any:
    return json.loads(ceph(*args, '-f', 'json'))


def wait_up(osd: int, since: int, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        o = [x for x in ceph_json('osd', 'dump')['osds'] if x['osd'] == osd][0]
        st = ceph_json('pg', 'stat')
        s = st.get('pg_summary', st)
        clean = sum(x['num'] for x in s.get('num_pg_by_state', [])
                    if x['name'] == 'active+clean')
        if o['up'] and o['up_from'] > since and clean == s.get('num_pgs'):
            return
        time.sleep(2)
    raise SystemExit(f'osd.{osd} did not come back clean in {timeout:.0f}s')


def restart(osd: int) -> None:
    since = [x for x in ceph_json('osd', 'dump')['osds'] if x['osd'] == osd][0]['up_from']
    ceph('orch', 'daemon', 'restart', f'osd.{osd}')
    wait_up(osd, since)


def sample(osd: int) -> rocksdb_stats.KvStats:
    return rocksdb_stats.parse(ceph('tell', f'osd.{osd}', 'dump_objectstore_kv_stats'))


def perf(osd: int) -> Dict[str, Any]:
    return ceph_json('tell', f'osd.{osd}', 'perf', 'dump')  # type: ignore[no-any-return]


def counter(dump: Dict[str, Any], keys: Sequence[Tuple[str, str]]) -> Any:
    for sec, name in keys:
        if name in dump.get(sec, {}):
            return dump[sec][name]
    raise SystemExit(f'perf dump has none of {keys}')


def fill_all(load: ClientWorkload) -> Dict[str, Any]:
    """The session's first preconditioning pass, whole: every object end to end."""
    t, filled, nbytes = time.time(), 0, 0
    while filled < load.object_count:
        filled, b, _ = load.fill(filled, 60.0)
        nbytes += b
    return {'filled': filled, 'fill_mib': nbytes >> 20, 'fill_seconds': round(time.time() - t, 1)}


def overwrite_all(load: ClientWorkload) -> Dict[str, Any]:
    """Its second pass, whole: every 4 KiB block overwritten once."""
    t, done = time.time(), 0
    while done < load.block_count:
        done, _, _ = load.overwrite(done, 60.0)
    return {'overwritten': done, 'overwrite_seconds': round(time.time() - t, 1),
            'load': round(os.getloadavg()[0], 2)}


def drive_until(load: ClientWorkload, end: float) -> Tuple[int, float]:
    """The load, chunk after chunk, until `end` (time.time()): bytes written
    and time spent writing."""
    nbytes, secs = 0, 0.0
    while time.time() < end:
        b, s = load.drive(end - time.time(), None)
        nbytes += b
        secs += s
    return nbytes, secs
