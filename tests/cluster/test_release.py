"""The module on the lab's release beside what an admin has on: prometheus and
the dashboard in the same mgr (on Tentacle, the same interpreter: conftest's
NEIGHBOURS, on through the short session), muted health checks, and the
release's own defaults read from the cluster."""
import json
import re
from typing import Any, Dict

from conftest import NEIGHBOURS, RELEASE, Lab, ShortSession


def test_beside_prometheus_and_dashboard(short_session: ShortSession) -> None:
    """The short session ran with prometheus (and on Tentacle, in the same
    interpreter, the dashboard) on in the mgr: theirs answered before it and
    after, ours after it, and no module failed."""
    s = short_session
    if RELEASE != 'pacific':
        assert 'dashboard' in s.services  # Tentacle: the shared interpreter
    assert set(NEIGHBOURS) | {'rocks_autotune'} <= set(s.services), s.services
    for when in ('before', 'after'):
        status, body = s.pages[f'prometheus {when}']
        assert status == 200 and b'ceph_health_status' in body, (when, status, body[:300])
        if 'dashboard' in NEIGHBOURS:
            status, body = s.pages[f'dashboard {when}']
            assert status == 200 and b'<html' in body.lower(), (when, status, body[:300])
    assert s.status['state'] == 'done', s.status
    status, body = s.pages['ours /api/status']
    assert status == 200 and json.loads(body)['state'] == 'done', (status, body[:300])
    status, body = s.pages['ours /metrics']
    assert status == 200 and b'rocks_autotune_state{state="done"} 1' in body, body[:300]
    assert 'MGR_MODULE_ERROR' not in s.health_checks, s.health_checks


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
