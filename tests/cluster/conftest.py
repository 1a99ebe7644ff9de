"""A real lab cluster for the cluster tier: brought up once, torn down at the end."""
import contextlib
import errno
import fcntl
import glob
import json
import math
import os
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

# a session's states once it is over
ENDED = ('done', 'stopped', 'aborted', 'failed')
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MON_PORT = int(os.environ.get('CEPH_LAB_MON_PORT', '21100'))
RELEASE = os.environ.get('CEPH_LAB_RELEASE', 'tentacle')
# what an admin has on beside the module, in the same mgr (on Tentacle, the
# same interpreter), on the lab's ports for them (its panels use MON_PORT +
# 10 ..., the panel's rebind test MON_PORT + 20).  Pacific's lab leaves the
# dashboard out (ceph-lab's LEFT_OUT_MODULES: with it, Debian 12's PyO3
# cryptography breaks `restful` in Pacific's sub-interpreters).
NEIGHBOURS = {'prometheus': MON_PORT + 23}
if RELEASE != 'pacific':
    NEIGHBOURS['dashboard'] = MON_PORT + 22
# the page each answers an admin with
NEIGHBOUR_PAGE = {'prometheus': '/metrics', 'dashboard': '/'}
LAB_CMD = os.path.join(REPO, 'qa', 'lab', 'ceph-lab')
DEMO_SH = os.path.join(REPO, 'qa', 'workunits', 'rocks_autotune', 'demo.sh')


class Lab:
    def __init__(self) -> None:
        self.dir = os.environ.get('CEPH_LAB_DIR', '/var/tmp/rocks-autotune-lab')
        # a chroot release's CLI: the wrappers `ceph-lab up` writes in the lab's bin
        self.env = dict(os.environ, CEPH_CONF=os.path.join(self.dir, 'ceph.conf'),
                        PATH=os.path.join(self.dir, 'bin') + os.pathsep + os.environ['PATH'])

    def run(self, *args: str, check: bool = True,
            timeout: float = 120) -> subprocess.CompletedProcess:
        p = subprocess.run(list(args), env=self.env, text=True, capture_output=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f'{" ".join(args)} -> {p.returncode}\n{p.stdout}{p.stderr}')
        return p

    def ceph(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run('ceph', '--connect-timeout', '30', *args, check=check)

    def json(self, *args: str) -> Any:
        return json.loads(self.ceph(*args, '-f', 'json').stdout)

    def osd(self, osd: int) -> Dict[str, Any]:
        return [o for o in self.json('osd', 'dump')['osds'] if o['osd'] == osd][0]

    def pid(self, name: str) -> int:
        with open(os.path.join(self.dir, 'run', f'{name}.pid')) as f:
            return int(f.read())

    def active_clean(self) -> bool:
        s = self.json('pg', 'stat')
        s = s.get('pg_summary', s)
        clean = sum(x['num'] for x in s['num_pg_by_state'] if x['name'] == 'active+clean')
        return clean == s['num_pgs'] > 0

    def pool_clean(self, pool: str) -> bool:
        """Every PG of `pool` active+clean in a report made at or after the
        pool's last change, and the rest active+clean.  `pg stat` alone says
        clean before the mgr has a new pool's PGs, or from reports made before
        a change that re-peers them (min_size)."""
        info = [p for p in self.json('osd', 'pool', 'ls', 'detail') if p['pool_name'] == pool][0]
        pgs = self.json('pg', 'ls-by-pool', pool)['pg_stats']
        return len(pgs) == info['pg_num'] and self.active_clean() and all(
            p['state'] == 'active+clean' and int(p['reported_epoch']) >= int(info['last_change'])
            for p in pgs)

    def enable_module(self, name: str, timeout: float = 120) -> None:
        """`ceph mgr module enable`, asked again while the mon answers ENOENT:
        enabling a module respawns the mgr, and the mon refuses the next one
        while the mgr map has no mgr that has reported the module (or that it
        can run).  Any other error fails at once."""
        got: List[subprocess.CompletedProcess] = []

        def answered() -> bool:
            got[:] = [self.ceph('mgr', 'module', 'enable', name, check=False)]
            return got[0].returncode != errno.ENOENT
        try:
            self.wait(f'the mon to take `mgr module enable {name}`', answered, timeout)
        except AssertionError as e:
            raise AssertionError(f'{e}; the mon last said: {got[0].stderr.strip()}\n'
                                 f'{self.mgr_state()}') from None
        if got[0].returncode != 0:
            raise AssertionError(f'mgr module enable {name} -> {got[0].returncode}\n'
                                 f'{got[0].stderr}')

    def mgr_state(self) -> str:
        """What a failed wait on the mgrs should show: the mgr map (active,
        available, modules reported, standbys, services), each lab mgr's
        process, the mgr crash reports in the lab's crash dir, and the
        health checks."""
        m = self.json('mgr', 'dump')
        lines = [f'mgr map e{m.get("epoch")}: active {m.get("active_name")!r}, available '
                 f'{m.get("available")}, {len(m.get("available_modules", []))} modules '
                 f'reported, standbys {[x["name"] for x in m.get("standbys", [])]}, '
                 f'services {m.get("services")}']
        run = os.path.join(self.dir, 'run')
        for name in sorted(f[:-4] for f in os.listdir(run) if f.startswith('mgr.')
                           and f.endswith('.pid')):
            try:
                pid = self.pid(name)
            except (OSError, ValueError):  # the daemon dropped its pid file as it went
                lines.append(f'{name}: no pid file')
                continue
            alive = os.path.exists(f'/proc/{pid}')
            lines.append(f'{name}: pid {pid}, {"running" if alive else "gone"}')
        # a module its main interpreter fails to load leaves a report at every
        # Tentacle mgr start (a dozen or so each time): counted per mgr, so a
        # mgr that started again shows; any other mgr crash is shown
        load_failures: Counter[str] = Counter()
        crash = os.path.join(self.dir, 'crash')
        for meta in sorted(glob.glob(os.path.join(crash, '*', 'meta')) +
                           glob.glob(os.path.join(crash, 'posted', '*', 'meta'))):
            with open(meta) as f:
                r = json.load(f)
            if not str(r.get('entity_name', '')).startswith('mgr.'):
                continue
            if r.get('mgr_module'):
                load_failures[r['entity_name']] += 1
            else:
                lines.append(f'crash {r.get("crash_id")} of {r.get("entity_name")}: '
                             f'{r.get("assert_msg") or r.get("backtrace", [])[:6]}')
        lines.append(f'module load reports: {dict(load_failures)}')
        lines.append(f'health checks {sorted(self.json("health")["checks"])}')
        return '\n'.join(lines)

    def own_config(self, who: str) -> List[Dict[str, Any]]:
        return [e for e in self.json('config', 'dump') if e['section'] == who]

    def wait(self, what: str, pred: Callable[[], bool], timeout: float = 300) -> None:
        deadline = time.time() + timeout
        while not pred():
            if time.time() > deadline:
                raise AssertionError(f'timed out after {timeout}s waiting for {what}')
            time.sleep(2)

    def wait_mgrs(self, what: str, pred: Callable[[], bool], timeout: float = 120) -> None:
        """wait() for something of the mgrs; a timeout shows mgr_state()."""
        try:
            self.wait(what, pred, timeout)
        except AssertionError as e:
            raise AssertionError(f'{e}\n{self.mgr_state()}') from None

    def standbys(self) -> int:
        return len(self.json('mgr', 'dump')['standbys'])

    def status(self, osds: bool = False) -> Dict[str, Any]:
        """`status -f json`; `osds`: with every OSD of the last rollout (--osds)."""
        return self.json('rocks-autotune', 'status', *(['--osds'] if osds else []))

    def wait_ended(self, timeout: float = 900,
                   each: Optional[Callable[[], None]] = None) -> Dict[str, Any]:
        """Wait for the session to end, calling `each` at every poll; its status."""
        def ended() -> bool:
            if each is not None:
                each()
            return self.status()['state'] in ENDED
        self.wait('the session to end', ended, timeout)
        return self.status()

    def mgr_timed(self, **cmd: Any) -> Dict[str, Any]:
        """A mgr command, timed from sending to answer (mgr_timer.py)."""
        r = self.run(LAB_CMD, 'exec', '--', '/usr/bin/python3',
                     os.path.join(REPO, 'tests', 'cluster', 'mgr_timer.py'), json.dumps(cmd))
        return dict(json.loads(r.stdout))

    def post_crashes(self, entity: str, since: float) -> List[str]:
        """Post the crash reports `entity` left in the lab's crash dir since
        `since`, as ceph-crash does (the lab runs none): a report whose
        `done` is written goes to `ceph crash post -i meta`, then moves to
        crash/posted.  Only that daemon's: every Tentacle mgr start leaves a
        report per module its main interpreter fails to load, which a real
        ceph-crash would post too.  Returns the crash ids posted."""
        crash = os.path.join(self.dir, 'crash')
        os.makedirs(os.path.join(crash, 'posted'), exist_ok=True)
        ids: List[str] = []
        for name in sorted(os.listdir(crash)):
            path = os.path.join(crash, name)
            if not os.path.exists(os.path.join(path, 'done')):
                continue  # not a report, or the daemon is still writing it
            with open(os.path.join(path, 'meta')) as f:
                report = json.load(f)
            if report.get('entity_name') != entity or os.path.getmtime(path) < since:
                continue
            self.ceph('crash', 'post', '-i', os.path.join(path, 'meta'))
            os.rename(path, os.path.join(crash, 'posted', name))
            ids.append(str(report['crash_id']))
        return ids

    def samples(self, since: float, until: float) -> List[Dict[str, Any]]:
        """The PG watcher's samples taken between two times."""
        with open(self.watch_file) as f:
            return [x for x in map(json.loads, f) if since <= x['t'] <= until]

    watch_file = ''
    watcher: Optional[subprocess.Popen] = None


def start_watcher(lab: Lab) -> None:
    """The PG watcher (pg_watcher.py) for the whole run, on the release's librados."""
    lab.watch_file = os.path.join(lab.dir, 'pg-watch.jsonl')
    if os.path.exists(lab.watch_file):
        os.unlink(lab.watch_file)
    lab.watcher = subprocess.Popen(
        [LAB_CMD, 'exec', '--', '/usr/bin/python3',
         os.path.join(REPO, 'tests', 'cluster', 'pg_watcher.py'), lab.watch_file],
        env=lab.env, start_new_session=True)
    lab.wait('the PG watcher\'s first sample', lambda: os.path.exists(lab.watch_file) and
             os.path.getsize(lab.watch_file) > 0, 60)


@contextlib.contextmanager
def own_lab(*up_args: str) -> Iterator[Lab]:
    """A tier's lab: its own for the whole run, fresh, down at the end.

    A lab left in the tier's directory by a run that did not finish still has
    its daemons and its mgr's stored session (a session it then resumes), so
    it is taken down first; and a second run on the same directory fails here,
    not halfway through with a session it did not start.  CEPH_LAB_KEEP=1
    keeps the lab at the end and reuses the one it finds.
    """
    lab = Lab()
    keep = os.environ.get('CEPH_LAB_KEEP') == '1'
    lock = open(lab.dir.rstrip('/') + '.lock', 'w')
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        pytest.fail(f'the lab in {lab.dir} is in use by another test run ({lock.name} is '
                    'locked); run one tier per lab directory', pytrace=False)

    def ceph_lab(*args: str) -> None:
        p = subprocess.run([LAB_CMD, *args], env=lab.env, text=True, capture_output=True)
        assert p.returncode == 0, f'ceph-lab {args[0]} failed:\n{p.stdout}{p.stderr}'
    try:
        if not keep:
            ceph_lab('down')
        ceph_lab('up', *up_args)
        yield lab
        if not keep:
            subprocess.run([LAB_CMD, 'down'], env=lab.env)
    finally:
        lock.close()


@pytest.fixture(scope='session')
def lab() -> Iterator[Lab]:
    with own_lab('--mgrs', os.environ.get('CEPH_LAB_MGRS', '1')) as lab:
        # short trials, two baseline runs (one A/A pair) and a one-round
        # confirmation of one candidate, the client load's keyspace 16 objects
        # and its preconditioning 2 s (every session spent 10 s in full: no
        # column family flushes that soon): the tests check behaviour, not
        # figures (a test that needs more sets them)
        for name, value in (('warmup', '2'), ('bench_chunk_seconds', '2'), ('baseline_runs', '2'),
                            ('max_window_factor', '1.5'), ('restart_timeout', '120'),
                            ('confirm_candidates', '1'), ('confirm_rounds', '1'),
                            ('steady_window_limit', '10'), ('client_space', str(16 << 20)),
                            ('client_object_size', str(1 << 20)), ('precondition_limit', '2')):
            lab.ceph('config', 'set', 'mgr', f'mgr/rocks_autotune/{name}', value)
        lab.wait('HEALTH_OK', lambda: lab.json('health')['status'] == 'HEALTH_OK', 120)
        # the faults tier's failover cases need the standby
        mgrs = int(os.environ.get('CEPH_LAB_MGRS', '1'))
        lab.wait_mgrs(f'{mgrs - 1} standby mgr(s)', lambda: lab.standbys() >= mgrs - 1)
        start_watcher(lab)
        yield lab
        if lab.watcher is not None:
            os.killpg(lab.watcher.pid, 15)
            lab.watcher.wait()


@dataclass
class ShortSession:
    """A short real session and what the cluster showed during and right
    after it, captured before any later test changes the cluster."""
    osd: int
    # qa/workunits/rocks_autotune/demo.sh ran it (the demo's session script:
    # start, progress lines, the final screen, `apply --dry-run` if it recommends)
    demo: subprocess.CompletedProcess
    second_start: subprocess.CompletedProcess  # while the first runs
    progress_seen: bool  # its progress event in `ceph -s` while it ran
    status: Dict[str, Any]
    history: List[Dict[str, Any]]
    best: Dict[str, Any]
    best_text: subprocess.CompletedProcess  # `best` as text
    apply_dry_run: subprocess.CompletedProcess  # `apply --dry-run` right after it
    own_before: List[Dict[str, Any]]  # the canary's own config entries
    own_after: List[Dict[str, Any]]
    running: str  # `config show` of the canary's bluestore_rocksdb_options after
    configured: str  # `config get` of it
    osd_state: List[str]
    health_checks: List[str]
    ceph_s: str
    # NEIGHBOURS were on through it: `ceph mgr services` once they were up,
    # and what each answered before the session and after it, and ours after
    # it, by 'NAME before', 'NAME after', 'ours PATH': (status, body)
    services: Dict[str, str]
    pages: Dict[str, Tuple[int, bytes]]


@contextlib.contextmanager
def neighbours_on(lab: Lab) -> Iterator[Dict[str, str]]:
    """NEIGHBOURS enabled in the lab's mgr, on their ports; `ceph mgr
    services` once they and our panel are listed.  Disabled at the end, and
    waited for our panel to be back (each enable and disable respawns the mgr)."""
    for name, port in NEIGHBOURS.items():
        lab.ceph('config', 'set', 'mgr', f'mgr/{name}/server_addr', '127.0.0.1', '--force')
        lab.ceph('config', 'set', 'mgr', f'mgr/{name}/server_port', str(port), '--force')
    if 'dashboard' in NEIGHBOURS:
        lab.ceph('config', 'set', 'mgr', 'mgr/dashboard/ssl', 'false', '--force')

    def services() -> Dict[str, str]:
        return dict(lab.json('mgr', 'services'))
    try:
        for name in NEIGHBOURS:
            lab.enable_module(name)
        lab.wait_mgrs(f'{", ".join(NEIGHBOURS)} and rocks_autotune in `ceph mgr services`',
                      lambda: set(NEIGHBOURS) | {'rocks_autotune'} <= set(services()), 180)
        yield services()
    finally:
        for name in NEIGHBOURS:
            lab.ceph('mgr', 'module', 'disable', name, check=False)
        lab.wait_mgrs('only our panel in `ceph mgr services`',
                      lambda: set(services()) & (set(NEIGHBOURS) | {'rocks_autotune'})
                      == {'rocks_autotune'}, 180)


@pytest.fixture(scope='session')
def short_session(lab: Lab) -> ShortSession:
    """One short session (osd.1, 4 trials of 4 s) run by the demo's script, once
    per lab, with NEIGHBOURS on: a real session takes minutes, and the tuner's
    end-to-end test, the panel's browser test, the rollout's first test and
    the test of the module beside the neighbours only read one that ran."""
    if lab.status()['state'] not in ENDED + ('idle',):
        lab.wait('the session in flight to end', lambda: lab.status()['state'] in ENDED, 900)
    with neighbours_on(lab) as services:
        return run_short_session(lab, services)


def run_short_session(lab: Lab, services: Dict[str, str]) -> ShortSession:
    from test_panel import request  # (test_panel imports this file)

    def pages(when: str) -> Dict[str, Tuple[int, bytes]]:
        got: Dict[str, Tuple[int, bytes]] = {}
        for name in NEIGHBOURS:
            status, _, body = request(services[name], 'GET', NEIGHBOUR_PAGE[name])
            got[f'{name} {when}'] = (status, body)
        return got
    osd = 1
    seen_pages = pages('before')
    # an annex of the admin's own, which the session must leave as it was
    lab.ceph('config', 'set', f'osd.{osd}', 'bluestore_rocksdb_options_annex',
             'compaction_readahead_size=2097152')
    before = lab.own_config(f'osd.{osd}')
    last = lab.status().get('id')
    demo = subprocess.Popen(['bash', DEMO_SH, '--osd', str(osd), '--trials', '4', '--duration',
                             '4'], env=lab.env, stdout=subprocess.PIPE, text=True)
    lab.wait('the session to start', lambda: lab.status().get('id') not in (None, last), 60)
    second = lab.ceph('rocks-autotune', 'start', check=False)
    seen = []

    def progress() -> None:
        seen.append(f'Tuning RocksDB on osd.{osd}' in lab.ceph('-s').stdout)
    status = lab.wait_ended(900, progress)
    # `ceph -s` is the mon's copy of the mgr's report, sent every
    # mgr_stats_period (1 s on the lab): a completed event can linger for one report
    deadline = time.time() + 30
    ceph_s = lab.ceph('-s').stdout
    while f'Tuning RocksDB on osd.{osd}' in ceph_s and time.time() < deadline:
        time.sleep(1)
        ceph_s = lab.ceph('-s').stdout
    out, _ = demo.communicate(timeout=120)
    seen_pages.update(pages('after'))
    for path in ('/api/status', '/metrics'):
        status_code, _, body = request(services['rocks_autotune'], 'GET', path)
        seen_pages[f'ours {path}'] = (status_code, body)
    got = ShortSession(
        osd=osd, demo=subprocess.CompletedProcess(demo.args, demo.returncode, out),
        second_start=second, progress_seen=any(seen), status=status,
        history=lab.json('rocks-autotune', 'history'),
        best=lab.json('rocks-autotune', 'best'),
        best_text=lab.ceph('rocks-autotune', 'best'),
        apply_dry_run=lab.ceph('rocks-autotune', 'apply', '--dry-run', check=False),
        own_before=before, own_after=lab.own_config(f'osd.{osd}'),
        running=lab.ceph('config', 'show', f'osd.{osd}',
                         'bluestore_rocksdb_options').stdout.strip(),
        configured=lab.ceph('config', 'get', f'osd.{osd}',
                            'bluestore_rocksdb_options').stdout.strip(),
        osd_state=lab.osd(osd)['state'], health_checks=list(lab.json('health')['checks']),
        ceph_s=ceph_s, services=services, pages=seen_pages)
    lab.ceph('config', 'rm', f'osd.{osd}', 'bluestore_rocksdb_options_annex')
    return got


# states that mean a PG has too few copies to serve I/O, not that it is
# peering (`stale` is not one: it says the primary has not reported since it
# went down, which every restart of a primary shows for a moment)
NO_IO = {'peered', 'down', 'incomplete'}
# every restart of an OSD, even one ok-to-stop allows, puts the PGs it serves
# through peering (on the lab the mgr shows a dozen PGs `peering` for up to
# 7 s, its PG stats being up to 5 s old); longer than this, a PG is stuck
PEERING_GRACE = 20.0


def lapses(samples: List[Dict[str, Any]]) -> List[str]:
    """The PGs the watcher saw without I/O: in a NO_IO state in any sample, or
    not active across samples spanning more than PEERING_GRACE."""
    found: List[str] = []
    since: Dict[str, float] = {}
    for x in samples:
        now = {pgid: state for pgid, state in x.get('inactive', [])}
        if 'inactive' in x:
            since = {pgid: t for pgid, t in since.items() if pgid in now}
        for pgid, state in now.items():
            start = since.setdefault(pgid, x['t'])
            if NO_IO & set(state.split('+')) or x['t'] - start > PEERING_GRACE:
                at = time.strftime('%H:%M:%S', time.localtime(x['t']))
                found.append(f'{pgid} {state} at {at} (not active for {x["t"] - start:.0f}s)')
    return found


@pytest.fixture(autouse=True)
def no_pg_inactive(request: pytest.FixtureRequest) -> Iterator[None]:
    """Through every lab test: no PG may lose I/O (see lapses()).

    Samples once a second for the whole test; a test longer than a few
    seconds must have been sampled, so a dead watcher fails it too.
    """
    if 'lab' not in request.fixturenames:
        yield
        return
    lab: Lab = request.getfixturevalue('lab')
    t0 = time.time()
    yield
    t1 = time.time()
    # the last sample of the test's time is written within a second
    deadline = t1 + 10
    while not lab.samples(t1, math.inf) and time.time() < deadline:
        time.sleep(0.2)
    samples = lab.samples(t0, t1)
    bad = lapses(samples)
    assert not bad, f'PGs lost availability during the test: {bad[:5]}'
    if t1 - t0 > 10:
        ok = [x for x in samples if 'inactive' in x]
        assert len(ok) >= (t1 - t0) / 4, \
            f'the PG watcher took {len(ok)} samples in {t1 - t0:.0f}s: is it running?'
