"""qa/lab/ceph-lab's pure parts: where the release root comes from and what it sees."""
import fcntl
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
from typing import Any

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def load_lab(monkeypatch: pytest.MonkeyPatch, lab_dir: str) -> Any:
    monkeypatch.setenv('CEPH_LAB_DIR', lab_dir)
    path = os.path.join(REPO, 'qa', 'lab', 'ceph-lab')
    loader = importlib.machinery.SourceFileLoader('ceph_lab', path)
    spec = importlib.util.spec_from_loader('ceph_lab', loader)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    loader.exec_module(mod)
    return mod


def test_mirror_is_the_one_apt_uses(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    deb822 = tmp_path / 'debian.sources'
    deb822.write_text('Types: deb\n# a comment\nURIs: http://mirror.example/debian\n'
                      'Suites: bookworm bookworm-updates\n')
    one_line = tmp_path / 'sources.list'
    one_line.write_text('# deb http://old.example/debian bookworm main\n'
                        'deb [arch=amd64] http://other.example/debian bookworm main\n'
                        'deb http://line.example/debian bookworm main\n')
    assert lab.host_mirror([str(tmp_path / 'missing'), str(deb822)]) == \
        'http://mirror.example/debian'
    assert lab.host_mirror([str(one_line)]) == 'http://line.example/debian'
    with pytest.raises(SystemExit):
        lab.host_mirror([str(tmp_path / 'missing')])


def test_root_sees_scratch_repo_and_lab_at_their_own_paths(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    lab = load_lab(monkeypatch, '/srv/labs/one')
    paths = lab.bind_paths()
    assert paths[:2] == ['/tmp', '/var/tmp']
    assert os.path.realpath(REPO) in paths or any(
        os.path.realpath(REPO).startswith(p + '/') for p in paths)
    # the lab's parent, never the lab dir itself (down removes it)
    assert '/srv/labs' in paths and '/srv/labs/one' not in paths
    nested = load_lab(monkeypatch, '/var/tmp/lab')
    assert nested.bind_paths().count('/var/tmp') == 1


def test_wrappers_run_the_roots_own_binaries(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    lab.write_wrappers('/roots/tentacle')
    text = (tmp_path / 'lab' / 'bin' / 'ceph').read_text()
    # an absolute path inside: the lab's bin/ is visible in the root too, and a
    # wrapper that found itself there would chroot again
    assert 'chroot /roots/tentacle' in text and '/usr/bin/ceph "$@"' in text
    assert os.access(tmp_path / 'lab' / 'bin' / 'rados', os.X_OK)
    assert lab.root_dir('pacific') is None
    assert lab.root_dir('tentacle').endswith('/tentacle')


def test_a_bind_follows_a_checkout_made_again_at_the_same_path(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """CI clones afresh at one path: a bind of the old clone shows an empty dir."""
    if os.geteuid() != 0:
        pytest.skip('bind mounts need root')
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    src, root = tmp_path / 'checkout', str(tmp_path / 'root')
    monkeypatch.setattr(lab, 'root_binds', lambda: [str(src)])
    seen = tmp_path / 'root' / str(src).lstrip('/')
    src.mkdir()
    (src / 'one').touch()
    try:
        lab.mount_root(root)
        assert (seen / 'one').exists()
        lab.mount_root(root)
        assert len(lab.mounts_under(root)) == 1
        # moved aside, then removed: each time the root sees the new one
        src.rename(tmp_path / 'aside')
        src.mkdir()
        (src / 'two').touch()
        lab.mount_root(root)
        assert (seen / 'two').exists() and not (seen / 'one').exists()
        shutil.rmtree(src)
        src.mkdir()
        (src / 'three').touch()
        lab.mount_root(root)
        assert (seen / 'three').exists()
        assert len(lab.mounts_under(root)) == 1
    finally:
        lab.unmount_root(root)


def test_roots_lock_holds_off_another_ceph_lab(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Any) -> None:
    # CI's tiers run two at a time: a second ceph-lab must wait for the first
    # to finish installing or binding before it touches the root
    monkeypatch.setenv('CEPH_LAB_ROOTS', str(tmp_path / 'roots'))
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    lock = tmp_path / 'roots' / '.lock'

    def free() -> bool:
        with open(lock) as other:  # another open file: what another process holds
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(other, fcntl.LOCK_UN)
            return True

    with lab.roots_lock():
        assert not free()
    assert free()


def load_cluster_conftest() -> Any:
    path = os.path.join(REPO, 'tests', 'cluster', 'conftest.py')
    spec = importlib.util.spec_from_file_location('cluster_conftest_under_test', path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.mark.parametrize('keep', [False, True])
def test_a_tier_takes_its_lab_fresh_and_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                              keep: bool) -> None:
    # a lab left by a run that was killed kept its daemons and its mgr's
    # session, which the next run resumed and then tripped over: a tier takes
    # down what it finds (unless told to keep it) and holds the directory
    conftest = load_cluster_conftest()
    calls = tmp_path / 'calls'
    fake = tmp_path / 'ceph-lab'
    fake.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    fake.chmod(0o755)
    monkeypatch.setattr(conftest, 'LAB_CMD', str(fake))
    monkeypatch.setenv('CEPH_LAB_DIR', str(tmp_path / 'lab'))
    if keep:
        monkeypatch.setenv('CEPH_LAB_KEEP', '1')
    else:
        monkeypatch.delenv('CEPH_LAB_KEEP', raising=False)
    with conftest.own_lab('--mgrs', '2') as lab:
        assert lab.dir == str(tmp_path / 'lab')
        with pytest.raises(pytest.fail.Exception, match='in use by another test run'):
            with conftest.own_lab():
                pass
    with conftest.own_lab():  # the lock went with the first
        pass
    expected = ['down', 'up --mgrs 2', 'down', 'down', 'up', 'down']
    assert calls.read_text().split('\n')[:-1] == (
        ['up --mgrs 2', 'up'] if keep else expected)


def test_a_failed_wait_on_the_mgrs_says_what_they_were_doing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # CI's tiers failed twice on the mgrs (a standby gone, a module enable)
    # with nothing left to read: the timeout itself must show the mgr map,
    # each mgr's process and its crash reports
    conftest = load_cluster_conftest()
    monkeypatch.setenv('CEPH_LAB_DIR', str(tmp_path))
    (tmp_path / 'run').mkdir()
    (tmp_path / 'run' / 'mgr.x.pid').write_text(f'{os.getpid()}\n')
    (tmp_path / 'run' / 'mgr.y.pid').write_text('999999999\n')  # no such process
    reports = {'a': {'entity_name': 'mgr.x', 'mgr_module': 'volumes'},
               'b': {'entity_name': 'mgr.y', 'mgr_module': 'crash'},
               'posted/c': {'entity_name': 'mgr.x', 'mgr_module': 'volumes'},
               'd': {'entity_name': 'mgr.y', 'crash_id': 'd1',
                     'backtrace': ['f0', 'f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7']},
               'e': {'entity_name': 'osd.0', 'crash_id': 'e1', 'backtrace': ['osd']}}
    for where, meta in reports.items():
        (tmp_path / 'crash' / where).mkdir(parents=True)
        (tmp_path / 'crash' / where / 'meta').write_text(json.dumps(meta))
    lab = conftest.Lab()
    answers = {('mgr', 'dump'): {'epoch': 7, 'active_name': 'x', 'available': True,
                                 'available_modules': [{'name': 'a'}], 'standbys': [],
                                 'services': {}},
               ('health',): {'checks': {'MGR_DOWN': {}}}}
    monkeypatch.setattr(lab, 'json', lambda *args: answers[args])
    with pytest.raises(AssertionError) as e:
        lab.wait_mgrs('a standby mgr', lambda: False, 0)
    text = str(e.value).split('\n')
    assert text[0] == 'timed out after 0s waiting for a standby mgr'
    assert text[1].startswith("mgr map e7: active 'x', available True, 1 modules reported, "
                              "standbys []")
    assert text[2:4] == [f'mgr.x: pid {os.getpid()}, running', 'mgr.y: pid 999999999, gone']
    assert text[4:] == ["crash d1 of mgr.y: ['f0', 'f1', 'f2', 'f3', 'f4', 'f5']",
                        "module load reports: {'mgr.x': 2, 'mgr.y': 1}",
                        "health checks ['MGR_DOWN']"]


def test_a_module_enable_is_asked_again_only_while_the_mon_says_enoent(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # enabling a module respawns the mgr; until the new one reports its
    # modules the mon answers ENOENT to the next enable, which is asked again.
    # Any other answer fails at once
    conftest = load_cluster_conftest()
    monkeypatch.setenv('CEPH_LAB_DIR', str(tmp_path))
    lab = conftest.Lab()
    answers = iter([(2, 'Error ENOENT: all mgr daemons do not support module'), (0, ''),
                    (22, 'Error EINVAL: no')])
    asked = []

    def ceph(*args: str, check: bool = True) -> Any:
        asked.append(args)
        rc, err = next(answers)
        return subprocess.CompletedProcess(args, rc, '', err)
    monkeypatch.setattr(lab, 'ceph', ceph)
    monkeypatch.setattr(conftest.time, 'sleep', lambda s: None)
    lab.enable_module('dashboard')
    assert asked == [('mgr', 'module', 'enable', 'dashboard')] * 2
    with pytest.raises(AssertionError, match='-> 22\nError EINVAL: no'):
        lab.enable_module('prometheus')
    assert len(asked) == 3


def test_install_steps_print_a_line_and_keep_their_output_in_a_log(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: pytest.CaptureFixture) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    lab.quiet('a stage', ['sh', '-c', 'echo from apt; echo to stderr >&2'])
    err = capsys.readouterr().err
    assert 'a stage: done in' in err and 'from apt' not in err
    log = open(lab.INSTALL_LOG).read()
    assert 'from apt' in log and 'to stderr' in log
    # a failure: the log's last lines and its path, then nothing after it runs
    with pytest.raises(SystemExit) as e:
        lab.quiet('a failing stage', ['sh', '-c', 'echo why it failed; exit 3'],
                  ['sh', '-c', 'echo never'])
    assert 'why it failed' in str(e.value) and lab.INSTALL_LOG in str(e.value)
    assert 'exited 3' in str(e.value) and 'never' not in open(lab.INSTALL_LOG).read()


def test_the_demo_canary_runs_the_blog_string_with_only_its_wal_scaled(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    from rocks_autotune.rocksdb_options import BLOG_SMALL, parse_options
    blog, demo = parse_options(BLOG_SMALL), parse_options(lab.demo_string())
    assert demo.pop('max_total_wal_size') == str(64 << 20) != blog.pop('max_total_wal_size')
    assert demo == blog
    # the scenario bench's other starting points: the same, only the WAL scaled
    from rocks_autotune import rocksdb_options as ro
    monkeypatch.setattr(lab, 'ceph', lambda *a, **k: json.dumps({'default': ro.NEW_TUNING}))
    for start, base in (('pacific', ro.PACIFIC_DEFAULT), ('new-tuning-lz4', ro.NEW_TUNING_LZ4),
                        ('default', ro.NEW_TUNING)):
        got = parse_options(lab.demo_string(start))
        assert got.pop('max_total_wal_size') == str(64 << 20), start
        assert got == {k: v for k, v in parse_options(base).items()
                       if k != 'max_total_wal_size'}, start
    # --wal: another cut, or (0) the string as an admin copied it
    assert parse_options(lab.demo_string('blog', 256 << 20))['max_total_wal_size'] == str(256 << 20)
    assert lab.demo_string('blog', 0) == BLOG_SMALL
    # the session the demo runs: the wear objective on its canary
    assert lab.DEMO_START[:4] == ['--osd', str(lab.DEMO_CANARY), '--objective', 'wear']


def test_the_demos_module_options_take_an_experiments_overrides(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    calls = []
    monkeypatch.setattr(lab, 'ceph', lambda *a, **k: calls.append(a) or '')
    monkeypatch.setattr(lab, 'wait_for', lambda *a: None)
    monkeypatch.setattr(lab, 'log', lambda *a: None)
    assert lab.demo_setup({'confirm_rounds': '10'}) == lab.DEMO_START
    iops = lab.demo_setup({}, 'pacific', 'iops')
    assert iops[iops.index('--objective') + 1] == 'iops' and len(iops) == len(lab.DEMO_START)
    set_ = {a[3]: a[4] for a in calls if a[:3] == ('config', 'set', 'mgr')}
    assert set_ == {f'mgr/rocks_autotune/{k}': v
                    for k, v in dict(lab.DEMO_OPTIONS, confirm_rounds='10').items()}
    # every OSD runs the start string, set at its own mask, restarted onto it
    blog = {a[2]: a[4] for a in calls[:len(calls) // 2] if a[:2] == ('config', 'set')
            and a[2].startswith('osd.')}
    assert blog == {f'osd.{i}': lab.demo_string() for i in range(lab.DEMO_OSDS)}
    assert [a[3] for a in calls if a[:3] == ('orch', 'daemon', 'restart')] == [
        f'osd.{i}' for i in range(lab.DEMO_OSDS)] * 2
    # the demo's keyspace leaves Ceph's full ratios alone; the module's 4 GiB raises them
    assert not [a for a in calls if a[0] == 'osd' and a[1].endswith('full-ratio')]
    lab.demo_setup({'client_space': str(4 << 30)})
    assert [a for a in calls if a[0] == 'osd' and a[1].endswith('full-ratio')] == [
        ('osd', 'set-backfillfull-ratio', '0.93'), ('osd', 'set-nearfull-ratio', '0.92')]


def test_a_demo_over_its_target_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    monkeypatch.setattr(os, 'cpu_count', lambda: 2)
    assert lab.over_target([('lab', 300.0), ('session', 1400.0)], [2.0]) is None
    busy = lab.over_target([('lab', 300.0), ('session', 2100.0)], [19.0, 21.0])
    assert busy is not None and 'by 10 min' in busy and 'session 2100s' in busy
    assert 'load averaged 20.0 on 2 cores' in busy and 'other work' in busy
    quiet = lab.over_target([('lab', 300.0), ('session', 2100.0)], [12.6])
    assert quiet is not None and 'other work' not in quiet and 'more rounds' in quiet
    large = lab.over_target([('lab', 41.0), ('session', 2759.0)], [15.8], str(4 << 30))
    assert large is not None and 'other work' not in large and 'client_space 4096 MiB' in large


def test_a_recommending_demo_measures_the_whole_lab_before_and_after(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    os.makedirs(tmp_path / 'lab')
    answers = {'answer': 'keep', 'options': 'a=1'}
    calls: list = []
    monkeypatch.setattr(lab, 'ceph', lambda *a, **k: calls.append(a) or json.dumps(answers))
    logged: list = []
    monkeypatch.setattr(lab, 'log', logged.append)
    assert lab.recommended() is None  # a keep: nothing to measure
    answers['answer'] = 'recommend'
    assert lab.recommended() == 'a=1'
    runs: list = []
    rc = {'bench': 0}

    def run(argv: list, **kw: Any) -> Any:
        runs.append(argv)
        return subprocess.CompletedProcess(argv, 0 if '--pairs' in argv else rc['bench'],
                                           stdout='| pass | ... |\n')
    monkeypatch.setattr(lab.subprocess, 'run', run)
    calls.clear()
    with open(str(tmp_path / 'lab') + '-before-after.jsonl', 'w') as f:
        f.write('{"an earlier demo": 1}\n')
    lab.before_after('b=2', 'a=1', 4 << 30, '3600')
    assert not os.path.exists(str(tmp_path / 'lab') + '-before-after.jsonl')  # not appended to
    bench = runs[0]
    assert bench[bench.index('--image-mib') + 1] == '4096'  # the session's client_space
    assert bench[bench.index('--steady-limit') + 1] == '3600'  # its steady_window_limit
    assert bench[1].endswith('qa/bench/wear_windows.py') and '--keep-lab' in bench
    assert bench[bench.index('--configs') + 1] == 'before,after'
    assert {bench[i + 1] for i, x in enumerate(bench) if x == '--config'} == {
        'before=b=2', 'after=a=1'}
    assert '| pass |' in capsys.readouterr().out
    assert 'one pass, not an interval' in logged[-1]
    # its rows outlive the lab (`down` removes the lab's directory)
    assert bench[bench.index('--out') + 1] == str(tmp_path / 'lab') + '-before-after.jsonl'
    assert os.path.exists(str(tmp_path / 'lab') + '-before-after.log')
    # the lab then runs the recommended string, set as apply sets it
    assert calls == [('config', 'set', f'osd.{i}', 'bluestore_rocksdb_options', 'a=1')
                     for i in range(lab.DEMO_OSDS)]
    # a bench that failed: said, with its log; the OSDs' settings all the same
    rc['bench'], runs[:], calls[:] = 1, [], []
    lab.before_after('b=2', 'a=1', 512 << 20, '900')
    assert len(runs) == 1 and 'failed' in logged[-1] and 'before-after.log' in logged[-1]
    assert len(calls) == lab.DEMO_OSDS


def test_a_demo_with_a_negative_wal_is_refused_before_anything_runs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    monkeypatch.setattr(lab, 'cmd_demo', lambda a: pytest.fail('the demo ran'))
    monkeypatch.setattr(lab.sys, 'argv', ['ceph-lab', 'demo', '--wal', '-1'])
    with pytest.raises(SystemExit) as e:
        lab.main()
    assert e.value.code == 2 and '--wal must be 0' in capsys.readouterr().err
    assert not os.path.exists(tmp_path / 'lab')


def test_a_demo_whose_client_space_is_not_in_bytes_is_refused_before_the_lab(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    monkeypatch.setattr(lab, 'cmd_up', lambda a: pytest.fail('the lab came up'))
    args = lab.argparse.Namespace(set=['client_space=4G'], wal=64, release='tentacle')
    with pytest.raises(SystemExit) as e:
        lab.cmd_demo(args)
    assert 'client_space=4G: a size in bytes' in str(e.value)


def test_a_demo_brings_its_lab_up_on_the_default_device_size(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # the demo calls cmd_up with a Namespace of its own: it must carry every
    # field `up` reads (743379e added osd_gib to `up` alone and broke the demo)
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    monkeypatch.setattr(lab, 'install', lambda: None)

    def created(osds: int, mgrs: int, flash: bool, osd_gib: int) -> None:
        raise SystemExit(f'created {osds} {mgrs} {flash} {osd_gib}')
    monkeypatch.setattr(lab, 'create_cluster', created)
    args = lab.argparse.Namespace(set=[], wal=64, release='tentacle')
    with pytest.raises(SystemExit) as e:
        lab.cmd_demo(args)
    assert str(e.value) == f'created {lab.DEMO_OSDS} 1 True {lab.OSD_GIB}'


def test_up_sizes_each_osds_device_and_refuses_one_too_small(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: Any) -> None:
    lab = load_lab(monkeypatch, str(tmp_path / 'lab'))
    os.makedirs(tmp_path / 'lab')
    lab.write_conf('fsid', True, 12)
    assert 'bluestore block size = 12G\n' in (tmp_path / 'lab' / 'ceph.conf').read_text()
    lab.write_conf('fsid', True)
    assert 'bluestore block size = 8G\n' in (tmp_path / 'lab' / 'ceph.conf').read_text()
    monkeypatch.setattr(lab, 'cmd_up', lambda a: pytest.fail('the lab came up'))
    monkeypatch.setattr(lab.sys, 'argv', ['ceph-lab', 'up', '--osd-gib', '2'])
    with pytest.raises(SystemExit) as e:
        lab.main()
    assert e.value.code == 2 and '--osd-gib must be at least 4' in capsys.readouterr().err
