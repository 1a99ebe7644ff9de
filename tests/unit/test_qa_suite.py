"""The teuthology suite checks itself: it parses, and all it names exists.

No teuthology here: the yaml is read with PyYAML, the tasks are found as
files, and the two Python files that teuthology would import (the admin task
and the MgrTestCase test) are imported over small stubs of teuthology's and
ceph.git's qa modules.
"""
import os
import re
import signal
import subprocess
import sys
import time
import types
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

import pytest
import yaml  # type: ignore[import-untyped]

from test_doc import health_codes

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
QA = os.path.join(REPO, 'qa')
SUITES = os.path.join(QA, 'suites')
SUITE = os.path.join(SUITES, 'rados', 'rocks_autotune')
WORKUNITS = os.path.join(QA, 'workunits')
SRC = os.path.join(REPO, 'src', 'pybind', 'mgr', 'rocks_autotune')

# tasks that come from teuthology itself or from ceph.git's qa/tasks, which
# this repository does not carry (it holds only the module's own qa files)
EXTERNAL_TASKS = {
    'install': 'teuthology/task/install',
    'exec': 'teuthology/task/exec.py',
    'pexec': 'teuthology/task/pexec.py',
    'ceph': 'ceph.git qa/tasks/ceph.py',
    'workunit': 'ceph.git qa/tasks/workunit.py',
    'cephfs_test_runner': 'ceph.git qa/tasks/cephfs_test_runner.py',
}
# scripts the suite need not run: the shared helpers, and the lab's demo
NOT_IN_SUITE = {'common.sh', 'demo.sh'}
# Tentacle's tested distributions (docs.ceph.com/en/tentacle/start/os-recommendations),
# with the Python each has: scikit-optimize 0.10.2 needs 3.8 or later
TENTACLE_DISTROS = {('ubuntu', '22.04'): (3, 10), ('centos', '9.stream'): (3, 9)}


def walk(top: str) -> Iterator[str]:
    """Every file under top, following the suite's symlinks (`.qa` excluded)."""
    for d, dirs, files in os.walk(top, followlinks=True):
        dirs[:] = sorted(x for x in dirs if x != '.qa')
        for f in sorted(files):
            yield os.path.join(d, f)


def suite_yamls() -> List[str]:
    return [p for p in walk(SUITES) if p.endswith('.yaml')]


def load(path: str) -> Any:
    with open(path) as f:
        return yaml.safe_load(f)


def fragments() -> List[Tuple[str, Dict[str, Any]]]:
    return [(p, load(p) or {}) for p in walk(SUITE) if p.endswith('.yaml')]


def tasks() -> Iterator[Tuple[str, str, Any]]:
    for path, doc in fragments():
        for item in doc.get('tasks') or []:
            assert isinstance(item, dict) and len(item) == 1, (path, item)
            (name, config), = item.items()
            yield path, name, config


# ---------------------------------------------------------------- the tree


def test_every_yaml_parses() -> None:
    found = suite_yamls()
    assert len(found) >= 8
    for path in found:
        doc = load(path)
        assert doc is None or isinstance(doc, dict), path


def test_every_symlink_resolves() -> None:
    for d, dirs, files in os.walk(QA):
        for name in dirs + files:
            p = os.path.join(d, name)
            if os.path.islink(p):
                assert os.path.exists(p), f'dangling symlink {p} -> {os.readlink(p)}'
                if name == '.qa':
                    assert os.path.realpath(p) == os.path.realpath(QA), p


def test_every_suite_dir_has_a_qa_link() -> None:
    # each directory of a suite reaches qa/ through `.qa` (ceph.git's convention)
    for d, dirs, _ in os.walk(SUITES):
        if os.path.basename(d) != '.qa' and not os.path.islink(d):
            assert os.path.islink(os.path.join(d, '.qa')), d
        dirs[:] = [x for x in dirs if x != '.qa']


def test_convolution_markers() -> None:
    # `%`: every subdirectory is a facet; `+`: concatenate the directory's
    # files; `$`: pick one at random.  The markers are empty files.
    assert os.path.isfile(os.path.join(SUITE, '%'))
    for d, dirs, files in os.walk(SUITE, followlinks=True):
        dirs[:] = [x for x in dirs if x != '.qa']
        for marker in ('%', '+'):
            if marker in files:
                assert os.path.getsize(os.path.join(d, marker)) == 0, (d, marker)
        if d != SUITE:
            yamls = [f for f in files if f.endswith('.yaml')]
            assert yamls or dirs, f'facet {d} holds no yaml'
            assert not ('%' in files and '+' in files), d
    for facet in ('clusters', 'tasks', 'objectstore', 'distro$'):
        assert os.path.isdir(os.path.join(SUITE, facet)), facet
    assert os.path.isfile(os.path.join(SUITE, 'clusters', '+'))


def test_distro_facet_is_tentacles() -> None:
    # the suite's primary release is Tentacle: distro$ picks one of its tested
    # distributions (the pacific branch's copy names Pacific's: see README)
    facet = os.path.join(SUITE, 'distro$')
    found = set()
    for f in os.listdir(facet):
        if f.endswith('.yaml'):
            doc = load(os.path.join(facet, f))
            assert set(doc) == {'os_type', 'os_version'}, (f, doc)
            assert isinstance(doc['os_version'], str), (f, doc)  # "22.04", not 22.04
            found.add((doc['os_type'], doc['os_version']))
    assert found == set(TENTACLE_DISTROS), found
    assert all(py >= (3, 8) for py in TENTACLE_DISTROS.values())


def test_readme_names_the_supported_releases() -> None:
    # teuthology reads only the .yaml files of a suite: a README is inert
    text = open(os.path.join(SUITE, 'README')).read()
    for word in ('Tentacle 20.2', 'Pacific 16.2', '--ceph tentacle', '--ceph pacific',
                 'distro$', 'Ubuntu 22.04', 'CentOS 9 Stream'):
        assert word in text, word
    assert text.index('--ceph tentacle') < text.index('--ceph pacific')  # primary first


def test_pip_is_there_before_the_pip_install() -> None:
    for path, doc in fragments():
        names = [list(t)[0] for t in doc.get('tasks') or []]
        if 'pexec' in names:
            install = doc['tasks'][names.index('install')]['install'] or {}
            assert 'python3-pip' in install.get('extra_system_packages', []), path
            assert names.index('install') < names.index('pexec'), path


def test_cluster_fragment() -> None:
    roles: List[List[str]] = []
    for path, doc in fragments():
        if os.path.dirname(path) == os.path.join(SUITE, 'clusters'):
            roles += doc.get('roles') or []
    flat = [r for node in roles for r in node]
    count = {t: len([r for r in flat if r.startswith(t + '.')]) for t in ('mgr', 'mon', 'osd')}
    assert count['mgr'] == 2 and count['mon'] == 3 and count['osd'] >= 4, count
    assert 'client.0' in flat
    assert len(flat) == len(set(flat))


def test_tasks_install_and_run_ceph_first() -> None:
    names = {}
    for path, doc in fragments():
        if doc.get('tasks'):
            names[os.path.basename(path)] = [list(t)[0] for t in doc['tasks']]
    assert {'mgr_test.yaml', 'workunits.yaml', 'thrash_canary.yaml'} <= set(names)
    for f, order in names.items():
        assert order[0] == 'install' and 'ceph' in order, (f, order)
        assert order.index('ceph') < len(order) - 1, (f, order)


def task_exists(name: str) -> bool:
    mod = name.split('.')[0]  # `ceph.restart` is function restart of tasks/ceph.py
    return (os.path.isfile(os.path.join(QA, 'tasks', mod + '.py'))
            or os.path.isfile(os.path.join(QA, 'tasks', mod, '__init__.py')))


def test_every_task_exists() -> None:
    seen = set()
    for path, name, _ in tasks():
        seen.add(name)
        assert name in EXTERNAL_TASKS or task_exists(name), f'{path}: no task {name!r}'
    assert 'rocks_autotune' in seen and task_exists('rocks_autotune')


def test_every_test_module_exists() -> None:
    mods = []
    for path, name, config in tasks():
        if name == 'cephfs_test_runner':
            for mod in config['modules']:
                f = os.path.join(QA, *mod.split('.')) + '.py'
                assert os.path.isfile(f), f'{path}: no module {mod}'
                mods.append(mod)
    assert 'tasks.mgr.test_rocks_autotune' in mods


def workunit_paths() -> Set[str]:
    named = set()
    for path, name, config in tasks():
        if name == 'workunit':
            for client, units in config['clients'].items():
                assert re.fullmatch(r'client\.\d+|all', client), (path, client)
                for unit in units:
                    named.add(unit)
    return named


def test_every_workunit_exists_and_is_executable() -> None:
    named = workunit_paths()
    assert named
    for unit in named:
        p = os.path.join(WORKUNITS, unit)
        assert os.path.isfile(p) and os.access(p, os.X_OK), f'workunit {unit} missing or not +x'


def test_every_workunit_script_is_in_the_suite() -> None:
    named = workunit_paths()
    for f in os.listdir(os.path.join(WORKUNITS, 'rocks_autotune')):
        if f.endswith('.sh') and f not in NOT_IN_SUITE:
            assert f'rocks_autotune/{f}' in named, f'{f} is not run by the suite'


def test_every_script_runs_on_the_lab_the_suites_way() -> None:
    """tox -e teuthology runs the suite's workunits (qa/teuthology/workunits.yaml,
    in the suite's order) and thrash_canary.sh (thrash_canary.yaml) through
    vstart_runner; the cluster tiers run demo.sh (their short session)."""
    def scripts(name: str) -> List[str]:
        with open(os.path.join(QA, 'teuthology', name)) as f:
            return [t['local_workunit']['script'] for t in yaml.safe_load(f)['tasks']
                    if 'local_workunit' in t]
    suite = {}
    for path, name, config in tasks():
        if name == 'workunit':
            suite[os.path.basename(path)] = [u for units in config['clients'].values()
                                             for u in units]
    assert scripts('workunits.yaml') == suite['workunits.yaml']
    assert scripts('thrash_canary.yaml') == suite['thrash_canary.yaml']
    with open(os.path.join(REPO, 'tests', 'cluster', 'conftest.py')) as f:
        assert "'demo.sh'" in f.read()
    ran = set(scripts('workunits.yaml') + scripts('thrash_canary.yaml'))
    for f in os.listdir(os.path.join(WORKUNITS, 'rocks_autotune')):
        if f.endswith('.sh') and f not in NOT_IN_SUITE:
            assert f'rocks_autotune/{f}' in ran, f'{f} runs nowhere on the lab'


@pytest.mark.parametrize('script', sorted(os.listdir(os.path.join(WORKUNITS, 'rocks_autotune'))))
def test_workunit_is_valid_bash_on_the_ceph_cli(script: str) -> None:
    p = os.path.join(WORKUNITS, 'rocks_autotune', script)
    subprocess.run(['bash', '-n', p], check=True)
    text = '\n'.join(line for line in open(p) if not line.lstrip().startswith('#'))
    # the cluster is reached through `ceph` only: no lab, no daemons by hand
    for word in ('ceph-lab', 'systemctl', 'pkill', 'killall', 'kill -', 'CEPH_LAB_', 'rados '):
        assert word not in text, (script, word)


# ---------------------------------------------------------------- health codes


def test_log_ignorelist_covers_every_health_code() -> None:
    patterns: List[str] = []
    for path, doc in fragments():
        ceph = (doc.get('overrides') or {}).get('ceph') or {}
        patterns += ceph.get('log-ignorelist') or []
        for _, name, config in [(path, list(t)[0], list(t.values())[0])
                                for t in doc.get('tasks') or []]:
            if name == 'ceph' and config:
                patterns += config.get('log-ignorelist') or []
    assert patterns
    for code in sorted(health_codes()):
        for line in (f'Health check failed: rocks_autotune: something ({code})',
                     f'Health check update: rocks_autotune: something ({code})'):
            assert any(re.search(p, line) for p in patterns), f'{code} is not ignored'
    # and what every canary restart does to the rest of the cluster
    for code in ('OSD_DOWN', 'OSDMAP_FLAGS', 'PG_DEGRADED', 'PG_AVAILABILITY'):
        assert any(re.search(p, f'Health check failed: x ({code})') for p in patterns), code


# ---------------------------------------------------------------- the python


def stub(name: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


class FakeGreenlet:
    class Stopped(Exception):
        pass

    def __init__(self) -> None:
        self._exception = None
        self.stopped = False

    @property
    def is_stopped(self) -> bool:
        return self.stopped

    # gevent.Greenlet's own read-only attributes: the task must not set them
    # (a task attribute named `started` failed under vstart_runner)
    @property
    def started(self) -> bool:
        return False

    @property
    def dead(self) -> bool:
        return False

    @property
    def exception(self) -> Any:
        return self._exception

    def set_thrasher_exception(self, e: Exception) -> None:
        self._exception = e  # type: ignore[assignment]


class FakeMgrTestCase:
    MGRS_REQUIRED = 1
    mgr_cluster: Any = None


@pytest.fixture
def qa_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    saved = {k: v for k, v in sys.modules.items() if k == 'tasks' or k.startswith('tasks.')}
    for k in saved:
        del sys.modules[k]
    stub('tasks', __path__=[os.path.join(QA, 'tasks')])
    stub('tasks.thrasher', ThrasherGreenlet=FakeGreenlet)
    stub('tasks.mgr', __path__=[os.path.join(QA, 'tasks', 'mgr')])
    stub('tasks.mgr.mgr_test_case', MgrTestCase=FakeMgrTestCase)
    yield
    for k in [k for k in sys.modules if k == 'tasks' or k.startswith('tasks.')]:
        del sys.modules[k]
    sys.modules.update(saved)


def test_qa_python_compiles() -> None:
    for p in walk(os.path.join(QA, 'tasks')):
        if p.endswith('.py'):
            compile(open(p).read(), p, 'exec')


class FakeManager:
    def __init__(self, statuses: List[Dict[str, Any]]) -> None:
        self.statuses = statuses
        self.calls: List[Tuple[str, int]] = []

    def raw_cluster_cmd(self, *args: str) -> str:
        import json
        assert args[:2] == ('rocks-autotune', 'status')
        return json.dumps(self.statuses.pop(0))


class FakeDaemons:
    """teuthology's ctx.daemons (DaemonGroup): get_daemon(type, id, cluster)
    gives a handle whose stop()/restart() are recorded as kill/revive.  The
    CephManager's kill_osd/revive_osd are not used: they read its .config,
    which vstart_runner's LocalCephManager lacks."""

    def __init__(self, calls: List[Tuple[str, int]]) -> None:
        self.calls = calls

    def get_daemon(self, type_: str, id_: Any, cluster: str = 'ceph') -> Any:
        assert (type_, cluster) == ('osd', 'ceph')
        calls, osd = self.calls, int(id_)
        return types.SimpleNamespace(stop=lambda: calls.append(('kill', osd)),
                                     restart=lambda: calls.append(('revive', osd)))


def fake_ctx(calls: List[Tuple[str, int]]) -> Any:
    return types.SimpleNamespace(daemons=FakeDaemons(calls))


def st(phase: str, kind: str = 'candidate', index: int = 2, health: Tuple[str, ...] = (),
       state: str = 'running') -> Dict[str, Any]:
    return {'id': 's1', 'state': state, 'osd': 3, 'phase': phase,
            'current': {'index': index, 'kind': kind} if kind else None,
            'health': list(health)}


def test_admin_task_kills_once_and_answers_each_restart_once(qa_imports: None) -> None:
    import importlib
    ra = importlib.import_module('tasks.rocks_autotune')
    manual = ('ROCKS_AUTOTUNE_MANUAL_RESTART',)
    m = FakeManager([
        st('wait_up', health=manual),                      # trial 2 asks: restart
        st('wait_up', health=manual),                      # still waiting: once only
        st('measure'),                                     # kill it now
        st('measure'),                                     # killed already
        st('recover_wait', kind='recovery', health=manual),     # the recovery asks: restart
        st('restore_wait', kind='', health=manual),        # the final restore asks
        st('end', kind='', state='done', health=manual),   # ended: nothing to do
    ])
    admin = ra.RocksAutotuneAdmin(fake_ctx(m.calls), m, {'kill_canary': True})
    while m.statuses:
        admin.step()
    assert m.calls == [('revive', 3), ('kill', 3), ('revive', 3), ('revive', 3)]
    assert admin.killed == 3 and admin.restarts == 3


def test_admin_task_answers_each_rollout_restart_once(qa_imports: None) -> None:
    import importlib
    ra = importlib.import_module('tasks.rocks_autotune')
    manual = ('ROCKS_AUTOTUNE_MANUAL_RESTART',)

    def ro(phase: str, current: Any, health: Tuple[str, ...] = (),
           state: str = 'running') -> Dict[str, Any]:
        return {'state': 'idle', 'rollout': {'id': 'r1', 'kind': 'apply', 'state': state,
                                             'phase': phase, 'current': current,
                                             'health': list(health)}}
    m = FakeManager([
        ro('restart', 0),                          # held at the gate: nothing asked
        ro('wait', 0, manual),                     # osd.0's restart asked
        ro('wait', 0, manual),                     # still asked: answered once only
        ro('next', None),
        ro('wait', 1, manual),                     # osd.1's
        ro('put_back_wait', 1, manual),            # osd.1 failed: its put-back asked
        ro('end', None, manual, state='failed'),   # ended: nothing to do
    ])
    admin = ra.RocksAutotuneAdmin(fake_ctx(m.calls), m, {})
    while m.statuses:
        admin.step()
    assert m.calls == [('revive', 0), ('revive', 1), ('revive', 1)]
    assert admin.restarts == 3


def test_mgr_test_case_imports_over_stubs(qa_imports: None) -> None:
    import importlib
    t = importlib.import_module('tasks.mgr.test_rocks_autotune')
    case = t.TestRocksAutotune
    assert issubclass(case, FakeMgrTestCase)
    names = [n for n in dir(case) if n.startswith('test_')]
    assert {'test_short_session', 'test_abort_mid_trial', 'test_canary_killed_mid_trial',
            'test_release_is_supported_and_bad_input_changes_nothing'} <= set(names)
    mgrs = 0
    for path, doc in fragments():
        for node in doc.get('roles') or []:
            mgrs += len([r for r in node if r.startswith('mgr.')])
    assert case.MGRS_REQUIRED <= mgrs


def test_mgr_test_answers_each_restart_once(qa_imports: None) -> None:
    import importlib
    t = importlib.import_module('tasks.mgr.test_rocks_autotune')
    calls: List[Tuple[str, int]] = []
    case = t.TestRocksAutotune.__new__(t.TestRocksAutotune)
    case.ctx = fake_ctx(calls)
    # vstart_runner's LocalCephManager: a cluster name, no kill_osd/revive_osd to lean on
    case.mgr_cluster = types.SimpleNamespace(mon_manager=types.SimpleNamespace(cluster='ceph'))
    case.answered = set()
    manual = ('ROCKS_AUTOTUNE_MANUAL_RESTART',)
    for s in (st('wait_up', health=manual), st('wait_up', health=manual), st('measure'),
              st('recover_wait', kind='recovery', health=manual)):
        case._answer_restart(s)
    assert calls == [('revive', 3), ('revive', 3)]


class ExitingDaemon:
    """vstart_runner's LocalDaemon as the lab showed it at its worst: stop()
    returns once `ps` no longer shows the daemon's command line, while the
    process itself is still exiting (here: a shell that takes 0.6 s to exit
    after SIGTERM)."""

    def __init__(self) -> None:
        self.p = subprocess.Popen(['bash', '-c', 'trap "sleep 0.6; exit 0" TERM; '
                                   'while :; do sleep 0.05; done'])
        self.events: List[Tuple[str, bool]] = []
        self.starts_failing = 0  # this many starts exit at once
        self.started = False
        time.sleep(0.3)  # the trap is set

    def _get_pid(self) -> Optional[int]:
        return self.p.pid if self.p.poll() is None else None

    def running(self) -> bool:
        return self.started or self._get_pid() is not None

    def stop(self) -> None:
        self.p.send_signal(signal.SIGTERM)
        self.events.append(('stop', self.p.poll() is not None))

    def restart(self) -> None:
        self.events.append(('restart', self.p.poll() is not None))
        self.started = self.starts_failing == 0
        self.starts_failing = max(0, self.starts_failing - 1)


def test_a_daemon_is_started_again_only_once_its_old_process_exited(qa_imports: None) -> None:
    import importlib
    ra = importlib.import_module('tasks.rocks_autotune')
    d = ExitingDaemon()
    try:
        ra.restart_daemon(d)
        # stop() returned with the process still there; restart() came after it exited
        assert d.events == [('stop', False), ('restart', True)]
    finally:
        d.p.kill()
        d.p.wait()


def test_a_daemon_that_exits_as_it_starts_is_started_again(qa_imports: None,
                                                           monkeypatch: Any) -> None:
    # seen under CI's load: the new OSD found the old one's pidfile locked
    import importlib
    ra = importlib.import_module('tasks.rocks_autotune')
    monkeypatch.setattr(ra, 'START_CHECK', 0.01)
    d = ExitingDaemon()
    d.starts_failing = 2
    try:
        ra.restart_daemon(d)
        assert [e for e, _ in d.events] == ['stop', 'restart', 'restart', 'restart']
        assert d.running()
    finally:
        d.p.kill()
        d.p.wait()


def test_a_killed_daemon_is_gone_when_stop_daemon_returns(qa_imports: None) -> None:
    import importlib
    ra = importlib.import_module('tasks.rocks_autotune')
    d = ExitingDaemon()
    try:
        ra.stop_daemon(d)
        assert ra.exited(d.p.pid)
        assert not ra.exited(os.getpid())
    finally:
        d.p.kill()
        d.p.wait()


def test_admin_task_says_when_an_osd_it_started_exits_again(qa_imports: None) -> None:
    import importlib
    ra = importlib.import_module('tasks.rocks_autotune')
    proc = types.SimpleNamespace(finished=False, exitstatus=None)
    daemon = types.SimpleNamespace(stop=lambda: None, restart=lambda: None, proc=proc)
    ctx = types.SimpleNamespace(daemons=types.SimpleNamespace(
        get_daemon=lambda type_, id_, cluster='ceph': daemon))
    manual = ('ROCKS_AUTOTUNE_MANUAL_RESTART',)
    m = FakeManager([st('wait_up', health=manual), st('wait_up', health=manual),
                     st('wait_up', health=manual)])
    admin = ra.RocksAutotuneAdmin(ctx, m, {})
    admin.step()                      # restarts osd.3
    admin.step()                      # still running: nothing to say
    assert admin.restarts == 1 and admin.exits == []
    proc.finished, proc.exitstatus = True, 1   # the new ceph-osd exited at once
    admin.step()
    assert [(osd, status) for osd, status, _ in admin.exits] == [(3, 1)]
    assert admin.restarts == 1        # said, not restarted again: the module decides
