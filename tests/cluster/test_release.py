"""The module on the lab's release beside what an admin has on: prometheus and
the dashboard in the same mgr (on Tentacle, the same interpreter), muted
health checks, and the release's own defaults read from the cluster."""
import os
import re
from typing import Any, Dict, Iterator

import pytest

from conftest import Lab
from test_panel import get_json, panel_url, request, services

MON_PORT = int(os.environ.get('CEPH_LAB_MON_PORT', '21100'))
RELEASE = os.environ.get('CEPH_LAB_RELEASE', 'tentacle')
# the lab's ports for the neighbours (its panels use MON_PORT + 10 ..., the
# panel's rebind test MON_PORT + 20).  Pacific's lab leaves the dashboard out
# (ceph-lab's LEFT_OUT_MODULES: with it, Debian 12's PyO3 cryptography breaks
# `restful` in Pacific's sub-interpreters); on Tentacle every module shares
# the main interpreter, the case this test is for.
NEIGHBOURS = {'prometheus': MON_PORT + 23}
if RELEASE != 'pacific':
    NEIGHBOURS['dashboard'] = MON_PORT + 22


def http_ok(url: str, path: str) -> bytes:
    status, _, body = request(url, 'GET', path)
    assert status == 200, (url, path, status, body[:300])
    return body


@pytest.fixture
def neighbours(lab: Lab) -> Iterator[Dict[str, str]]:
    for name, port in NEIGHBOURS.items():
        lab.ceph('config', 'set', 'mgr', f'mgr/{name}/server_addr', '127.0.0.1', '--force')
        lab.ceph('config', 'set', 'mgr', f'mgr/{name}/server_port', str(port), '--force')
    if 'dashboard' in NEIGHBOURS:
        lab.ceph('config', 'set', 'mgr', 'mgr/dashboard/ssl', 'false', '--force')
    try:
        for name in NEIGHBOURS:
            lab.enable_module(name)
        lab.wait_mgrs('dashboard and prometheus in `ceph mgr services`',
                      lambda: set(NEIGHBOURS) <= set(services(lab)), 180)
        yield services(lab)
    finally:
        for name in NEIGHBOURS:
            lab.ceph('mgr', 'module', 'disable', name, check=False)


def test_beside_prometheus_and_dashboard(lab: Lab, neighbours: Dict[str, str]) -> None:
    if RELEASE != 'pacific':
        assert 'dashboard' in neighbours  # Tentacle: the shared interpreter
    ours = panel_url(lab)
    # theirs answer
    metrics = http_ok(neighbours['prometheus'], '/metrics').decode()
    assert 'ceph_health_status' in metrics
    if 'dashboard' in NEIGHBOURS:
        assert b'<html' in http_ok(neighbours['dashboard'], '/').lower()
    # ours answers, and a short real session runs while they are on
    before = {e['name']: e['value'] for e in lab.own_config('osd.2')}
    lab.ceph('rocks-autotune', 'start', '--osd', '2', '--trials', '1', '--duration', '4')
    st = lab.wait_ended(600)
    assert st['state'] == 'done', st
    assert get_json(ours, '/api/status')['state'] == 'done'
    ours_metrics = http_ok(ours, '/metrics').decode()
    assert 'rocks_autotune_state{state="done"} 1' in ours_metrics
    assert {e['name']: e['value'] for e in lab.own_config('osd.2')} == before
    # and theirs still do, with no module failed
    assert 'ceph_health_status' in http_ok(neighbours['prometheus'], '/metrics').decode()
    if 'dashboard' in NEIGHBOURS:
        assert b'<html' in http_ok(neighbours['dashboard'], '/').lower()
    checks = lab.json('health')['checks']
    assert 'MGR_MODULE_ERROR' not in checks, checks


def test_a_muted_warning_does_not_block_start(lab: Lab) -> None:
    lab.wait('HEALTH_OK', lambda: lab.json('health')['status'] == 'HEALTH_OK', 120)
    out: Dict[str, Any] = {}

    def start() -> bool:
        r = lab.ceph('rocks-autotune', 'start', '--osd', '0', '--trials', '1',
                     '--duration', '4', check=False)
        assert r.returncode == 0 or 'OSDMAP_FLAGS' in r.stderr, r.stderr
        out['r'] = r
        return r.returncode == 0

    def refused() -> bool:
        if start():  # the mgr's health digest lags the mon's by a few seconds
            lab.ceph('rocks-autotune', 'abort')
            lab.wait_ended(300)
            return False
        return True

    lab.ceph('osd', 'set', 'noscrub')
    try:
        lab.wait('start refused while OSDMAP_FLAGS is raised', refused, 60)
        assert '--force' in out['r'].stderr
        lab.ceph('health', 'mute', 'OSDMAP_FLAGS')
        lab.wait('start accepted with the warning muted', start, 30)
        assert 'osd.0' in out['r'].stdout
        lab.ceph('rocks-autotune', 'abort')
        st = lab.wait_ended(300)
        assert st['state'] == 'aborted', st
    finally:
        lab.ceph('health', 'unmute', 'OSDMAP_FLAGS', check=False)
        lab.ceph('osd', 'unset', 'noscrub')


def test_session_reads_the_releases_defaults(lab: Lab) -> None:
    """What the session recorded is what this release's `ceph config help` says."""
    st: Dict[str, Any] = lab.status()
    default = lab.json('config', 'help', 'bluestore_rocksdb_options')['default']
    cfs = lab.ceph('config', 'get', 'osd.0', 'bluestore_rocksdb_cfs').stdout.strip()
    assert st['release_default'] == default
    assert st['sharding'] == cfs
    version = lab.json('version')['version']
    assert re.search(rf'\b{RELEASE}\b', version), version
