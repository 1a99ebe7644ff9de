"""The foundation on a real cluster: the module in the real mgr, and real restarts."""
import os

from conftest import Lab


def test_module_is_enabled_and_answers_idle(lab: Lab) -> None:
    assert 'rocks_autotune' in lab.json('mgr', 'module', 'ls')['enabled_modules']
    # loaded from the working tree through the lab's module path
    link = os.path.join(lab.dir, 'mgr-modules', 'rocks_autotune')
    assert os.path.realpath(link).endswith('src/pybind/mgr/rocks_autotune')
    st = lab.status()
    assert st['state'] in ('idle', 'done', 'aborted', 'stopped', 'failed')
    assert lab.ceph('rocks-autotune', 'status').stdout.startswith('state: ')


def test_orch_ps_lists_the_lab_daemons(lab: Lab) -> None:
    names = {d['daemon_type'] + '.' + d['daemon_id'] for d in lab.json('orch', 'ps')}
    assert {'mon.a', 'mgr.x', 'osd.0', 'osd.1', 'osd.2'} <= names


def test_orch_daemon_restart_really_restarts_the_osd(lab: Lab) -> None:
    pid, up_from = lab.pid('osd.1'), lab.osd(1)['up_from']
    out = lab.ceph('orch', 'daemon', 'restart', 'osd.1').stdout
    assert 'osd.1' in out
    assert lab.pid('osd.1') != pid
    assert not os.path.exists(f'/proc/{pid}/cmdline') or \
        b'ceph-osd' not in open(f'/proc/{pid}/cmdline', 'rb').read()
    lab.wait('osd.1 up with a new up_from',
             lambda: lab.osd(1)['up'] == 1 and lab.osd(1)['up_from'] > up_from, 120)
    lab.wait('active+clean', lab.active_clean, 180)


def test_orch_refuses_what_the_lab_does_not_manage(lab: Lab) -> None:
    r = lab.ceph('orch', 'daemon', 'restart', 'mon.a', check=False)
    assert r.returncode != 0 and 'OSDs only' in r.stderr
