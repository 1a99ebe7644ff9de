"""`best`: the commands that apply the best options, where they reach, and that
they survive being pasted into a shell."""
import copy
from dataclasses import replace
import json
import os
import shlex
import subprocess
from typing import Any, Dict, List

import pytest

import mgr_mock

mgr_mock.install()
from rocks_autotune import health, report, views  # noqa: E402
from rocks_autotune.cluster import OsdInfo  # noqa: E402
from rocks_autotune.paired_stats import Ratios  # noqa: E402
from rocks_autotune.store import SessionState  # noqa: E402
from rocks_autotune.workload import OSD_BENCH  # noqa: E402

# values an options string can carry (a canary's own options are whatever an
# admin set): each one breaks out of naive single quotes
HOSTILE = [
    "compression=kNoCompression,x='a'",
    "x=a' $(touch {canary_file}) '",
    "max_write_buffer_number=4,y=$(touch {canary_file})",
    "z=`touch {canary_file}`;touch {canary_file}",
    "w=\"q\" && touch {canary_file} || true # '",
    "v=a\\'b\nc",
]


@pytest.fixture(scope='module')
def session() -> Dict[str, Any]:
    """A finished session's state (osd.1 the canary), its confirmation recommending."""
    m = mgr_mock.make_module()
    assert m.cmd_start(workload=OSD_BENCH, osd=1, trials=2, duration=5).retval == 0
    mgr_mock.drive(m)
    snap = m.panel_snapshot
    assert snap.status['best'] is not None
    return {'state': snap.state}


def recommending(state: SessionState, options: str) -> SessionState:
    """A copy of the state whose recommended candidate runs `options`."""
    state = copy.deepcopy(state)
    assert state.confirm is not None and state.confirm.result is not None
    for a in state.confirm.arms:
        if a.arm == state.confirm.result.recommended:
            a.options = options
    return state


def osds(classes: Dict[int, str]) -> Dict[int, OsdInfo]:
    return {i: OsdInfo(id=i, up=True, in_=True, up_from=1, device_class=c, num_pgs=10)
            for i, c in classes.items()}


def argv_in_sh(command: str, tmp: str) -> List[str]:
    """The arguments `ceph` gets when the line is run by /bin/sh (`ceph` a stub)."""
    script = 'ceph() { printf "%s\\0" ceph "$@"; }\n' + command + '\n'
    p = subprocess.run(['/bin/sh', '-c', script], cwd=tmp, capture_output=True, timeout=10)
    assert p.returncode == 0, p.stderr
    return p.stdout.decode().split('\0')[:-1]


@pytest.mark.parametrize('value', HOSTILE)
@pytest.mark.parametrize('annexed', [False, True])
def test_commands_survive_a_shell_whatever_the_value(session: Dict[str, Any], value: str,
                                                     annexed: bool, tmp_path: Any) -> None:
    canary_file = os.path.join(str(tmp_path), 'pwned')
    value = value.format(canary_file=canary_file)
    state = replace(recommending(session['state'], value), annexed=annexed)
    where = report.reach(1, osds({0: 'ssd', 1: 'ssd', 2: 'hdd'}))
    b = report.best_summary(state, where)
    assert b is not None
    want = []
    for who in ('osd.1', 'osd.0'):  # the canary first
        want.append(['ceph', 'config', 'set', who, 'bluestore_rocksdb_options', value])
        if annexed:
            want.append(['ceph', 'config', 'set', who, 'bluestore_rocksdb_options_annex', ''])
    ran = [argv_in_sh(c, str(tmp_path)) for c in b['commands']]
    assert not os.path.exists(canary_file), 'the shell ran part of the value'
    assert ran == want
    assert [shlex.split(c) for c in b['commands']] == want
    # the plain text carries the same lines
    text = report.best_text(state, where)
    for c in b['commands']:
        assert '  ' + c in text


def test_the_commands_reach_each_osd_of_the_canarys_device_class(
        session: Dict[str, Any]) -> None:
    cluster = osds({0: 'ssd', 1: 'ssd', 2: 'hdd', 3: 'ssd', 5: 'hdd', 7: 'nvme'})
    where = report.reach(1, cluster)
    assert (where['masks'], where['device_class'], where['osds']) == (
        ['osd.0', 'osd.3'], 'ssd', [0, 1, 3])
    # not the class mask: a restarted OSD would not run options set there
    assert "each OSD's own mask (osd.N), not osd/class:ssd" in where['note']
    b = report.best_summary(session['state'], where)
    assert b is not None
    assert [shlex.split(c)[3] for c in b['commands']] == ['osd.1', 'osd.0', 'osd.3']
    assert (b['masks'], b['osds'], b['canary']) == (['osd.0', 'osd.3'], [0, 1, 3], 1)
    text = report.best_text(session['state'], where)
    assert 'then on the OSDs of class ssd (3 OSDs: osd.0-1, osd.3)' in text
    assert 'note: the commands set them at each OSD' in text
    assert report.reach(7, cluster)['osds'] == [7]


def test_a_canary_without_a_class_falls_back_to_osd_and_says_so(
        session: Dict[str, Any]) -> None:
    cluster = osds({0: '', 1: '', 2: 'hdd'})
    where = report.reach(1, cluster)
    assert (where['masks'], where['osds']) == (['osd'], [0, 1, 2])
    assert 'osd.1 has no device class' in where['note']
    b = report.best_summary(session['state'], where)
    assert b is not None
    assert shlex.split(b['commands'][-1])[3] == 'osd'
    text = report.best_text(session['state'], where)
    assert 'note: osd.1 has no device class' in text and 'every OSD (3 OSDs' in text
    gone = report.reach(9, cluster)  # a canary since removed from the map
    assert gone['masks'] == ['osd'] and 'osd.9 is not in the OSD map' in gone['note']


def test_osd_list_folds_runs() -> None:
    assert health.osd_list([3, 0, 1, 2, 7, 9, 10]) == 'osd.0-3, osd.7, osd.9-10'
    assert health.osd_list([4]) == 'osd.4'
    assert health.osd_list([]) == 'none'
    # bounded: what a job stores may name thousands of OSDs
    assert health.osd_list(range(0, 100, 2)).endswith('osd.38 and 30 more')


# ---------------------------------------------------------------- the module's `best`

def test_best_reads_the_osd_map_when_asked() -> None:
    m = mgr_mock.make_module()
    m.cluster.info[2].device_class = 'hdd'
    assert m.cmd_start(workload=OSD_BENCH, osd=1, trials=2, duration=5).retval == 0
    mgr_mock.drive(m)
    r = m.cmd_best(format='json')
    assert r.retval == 0
    b = json.loads(r.stdout)
    assert (b['masks'], b['device_class'], b['osds']) == (['osd.0'], 'ssd', [0, 1])
    assert [shlex.split(c)[3] for c in b['commands']] == ['osd.1', 'osd.0']
    assert all(shlex.split(c)[5] == b['options'] for c in b['commands'])
    text = m.cmd_best().stdout
    assert 'the OSDs of class ssd (2 OSDs: osd.0-1)' in text
    # the class changed after the session: `best` follows the cluster, not the session
    m.cluster.info[2].device_class = 'ssd'
    b = json.loads(m.cmd_best(format='json').stdout)
    assert b['osds'] == [0, 1, 2] and len(b['commands']) == 3
    # and the panel shows the same commands and OSDs
    from rocks_autotune import panel
    m.publish()
    st = json.loads(panel.Panel(lambda: m.panel_snapshot).handle('GET', '/api/status').body)
    assert st['best']['commands'] == b['commands']
    assert (st['best']['masks'], st['best']['osds']) == (['osd.0', 'osd.2'], [0, 1, 2])


def test_a_ratio_without_its_interval_says_so_never_inf() -> None:
    text = views.ratio_text(Ratios(1.04, None, None, 1, [1.04], [1]))
    assert 'inf' not in text and text == '1.04x (not enough rounds for an interval yet)'
    assert views.ratio_text(Ratios(1.04, 0.98, 1.1, 5, [], [])) == '1.04x [0.98, 1.10]'
    assert views.ratio_text(Ratios(None, None, None, 0, [], [])) == '-'
