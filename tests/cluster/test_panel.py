"""The panel in the real mgr: the URL from `ceph mgr services`, the API, metrics,
read-only answers, rebinding, the standby's pointer, and the page in headless
Chromium after a real session (with a screenshot under build/)."""
import http.client
import json
import os
import re
import socket
import subprocess
import time
from typing import Any, Dict, Optional, Tuple
from urllib.parse import urlsplit

import pytest

from conftest import REPO, Lab

BROWSER = os.path.join(REPO, 'tests', 'cluster', 'browser')
SCREENSHOT = os.path.join(REPO, 'build', 'panel', 'panel.png')
MON_PORT = int(os.environ.get('CEPH_LAB_MON_PORT', '40100'))


def services(lab: Lab) -> Dict[str, str]:
    return lab.json('mgr', 'services')


def panel_url(lab: Lab, timeout: float = 60) -> str:
    lab.wait('the panel in `ceph mgr services`', lambda: 'rocks_autotune' in services(lab),
             timeout)
    return services(lab)['rocks_autotune']


def request(base: str, method: str, path: str,
            body: Optional[bytes] = None) -> Tuple[int, Dict[str, str], bytes]:
    u = urlsplit(base)
    c = http.client.HTTPConnection(u.hostname or '', u.port, timeout=30)
    try:
        c.request(method, path, body=body)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def get_json(base: str, path: str) -> Any:
    status, headers, body = request(base, 'GET', path)
    assert status == 200, (path, status, body)
    assert headers['content-type'].startswith('application/json')
    return json.loads(body)


def refused(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(5)
        return s.connect_ex((host, port)) != 0


def active_mgr(lab: Lab) -> str:
    return str(lab.json('mgr', 'stat')['active_name'])


def test_url_listed_and_api_answers(lab: Lab) -> None:
    url = panel_url(lab)
    u = urlsplit(url)
    # ceph-lab gives each lab's mgrs their own ports (mon port + 10 + mgr number)
    assert u.scheme == 'http' and u.hostname == '127.0.0.1', url
    assert MON_PORT + 10 <= (u.port or 0) < MON_PORT + 14, url
    st = get_json(url, '/api/status')
    assert st['state'] in ('idle', 'running', 'stopping', 'restoring', 'done', 'stopped',
                           'aborted', 'failed')
    cli = lab.status()
    assert st['state'] == cli['state']
    tr = get_json(url, '/api/trials')
    assert isinstance(tr['trials'], list)
    status, headers, body = request(url, 'GET', '/metrics')
    # (CherryPy drops the spaces in the header)
    assert status == 200 and re.match(r'text/plain;\s*version=0\.0\.4', headers['content-type'])
    assert f'rocks_autotune_state{{state="{cli["state"]}"}} 1' in body.decode()
    status, headers, body = request(url, 'GET', '/')
    assert status == 200 and b'static/vendor/uplot/uPlot.iife.min.js' in body
    assert request(url, 'GET', '/static/vendor/uplot/uPlot.iife.min.js')[0] == 200


def test_read_only_and_strict(lab: Lab) -> None:
    url = panel_url(lab)
    before = lab.json('config', 'dump')
    for method in ('POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'):
        for path in ('/', '/api/status', '/api/trials', '/metrics'):
            status, headers, _ = request(url, method, path, b'{"state": "aborted"}')
            assert status == 405 and headers['allow'] == 'GET', (method, path, status)
    for path in ('/api/start', '/api/', '/static/../module.py', '/admin'):
        assert request(url, 'GET', path)[0] == 404, path
    for q in ('since=x', 'verdict=nope', 'nope=1', 'since=%ff', 'limit=1&limit=2'):
        status, _, body = request(url, 'GET', f'/api/trials?{q}')
        assert status == 400 and json.loads(body)['status'] == 400, q
    assert lab.json('config', 'dump') == before
    # the lab's real admin key never appears, whatever is asked
    key = lab.ceph('auth', 'get-key', 'client.admin').stdout.strip()
    assert re.match(r'A[Qg]', key), key  # AES keys; Tentacle makes type-2 keys ('Ag')
    for path in ('/', '/api/status', '/api/trials', '/metrics', '/static/app.js', '/nope',
                 '/api/trials?x=1'):
        body = request(url, 'GET', path)[2].decode()
        assert key not in body and not re.search(r'A[Qgw][A-Za-z0-9+/]{30,}', body), path


def test_rebinds_when_the_port_changes(lab: Lab) -> None:
    url = panel_url(lab)
    mgr = active_mgr(lab)
    opt = f'mgr/rocks_autotune/{mgr}/server_port'
    old = urlsplit(url).port
    assert old is not None
    new = MON_PORT + 20
    lab.ceph('config', 'set', 'mgr', opt, str(new))
    try:
        lab.wait('the new URL', lambda: services(lab).get('rocks_autotune', '').endswith(
            f':{new}/'), 60)
        moved = services(lab)['rocks_autotune']
        assert get_json(moved, '/api/status')['state']
        assert refused('127.0.0.1', old)
    finally:
        lab.ceph('config', 'set', 'mgr', opt, str(old))
    lab.wait('the old URL back', lambda: services(lab).get('rocks_autotune') == url, 60)
    assert get_json(url, '/api/status')['state'] and refused('127.0.0.1', new)


# needs a standby mgr: runs in the two-mgr tier (tox -e faults)
@pytest.mark.faults
def test_standby_points_at_the_active_mgr(lab: Lab) -> None:
    assert lab.json('mgr', 'stat')['num_standby'] >= 1, 'this test needs a standby mgr'
    url = panel_url(lab)
    standby = [m['name'] for m in lab.json('mgr', 'dump')['standbys']][0]
    port = int(lab.ceph('config', 'get', 'mgr',
                        f'mgr/rocks_autotune/{standby}/server_port').stdout.strip())
    base = f'http://127.0.0.1:{port}/'
    lab.wait('the standby panel', lambda: not refused('127.0.0.1', port), 60)
    status, _, body = request(base, 'GET', '/')
    assert status == 200 and f'href="{url}"' in body.decode()
    status, headers, body = request(base, 'GET', '/api/status')
    assert status == 503 and json.loads(body)['active'] == url
    assert request(base, 'POST', '/api/status')[0] == 405


def run_session(lab: Lab) -> Dict[str, Any]:
    if lab.status()['state'] in ('running', 'stopping', 'restoring'):
        lab.wait('the session in flight to end',
                 lambda: lab.status()['state'] not in ('running', 'stopping', 'restoring'), 900)
    lab.ceph('rocks-autotune', 'start', '--osd', '0', '--trials', '3', '--duration', '4')
    lab.wait('the session to end',
             lambda: lab.status()['state'] in ('done', 'stopped', 'aborted', 'failed'), 900)
    st = lab.status()
    assert st['state'] == 'done', st
    return st


def test_page_in_headless_chromium_after_a_real_session(lab: Lab) -> None:
    st = run_session(lab)
    url = panel_url(lab)
    history = json.loads(lab.ceph('rocks-autotune', 'history', '-f', 'json').stdout)
    api = get_json(url, '/api/trials')
    assert [t['index'] for t in api['trials']] == [t['index'] for t in history]
    api_st = get_json(url, '/api/status')
    assert api_st['best']['trial'] == st['best']['index']
    metrics = request(url, 'GET', '/metrics')[2].decode()
    lat = st['baseline']['kv_sync_lat_ms'] / 1000
    m = re.search(r'^rocks_autotune_baseline_kv_sync_latency_seconds (\S+)$', metrics, re.M)
    assert m and float(m.group(1)) == pytest.approx(lat)
    assert re.search(r'^rocks_autotune_trials_done 3(\.0)?$', metrics, re.M)

    os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
    if os.path.exists(SCREENSHOT):
        os.unlink(SCREENSHOT)
    t0 = time.time()
    p = subprocess.run(['node', os.path.join(BROWSER, 'panel_e2e.mjs'), url, SCREENSHOT],
                       cwd=BROWSER, text=True, capture_output=True, timeout=180)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout.strip().splitlines()[-1])
    print(f'\npanel screenshot: {SCREENSHOT} ({time.time() - t0:.0f}s in Chromium)')
    assert 'error' not in report, report['error']
    assert report['status'] == 200 and report['uplot'], report
    assert not report['failed'], report['failed']  # every asset served locally
    assert all(r.startswith(url) for r in report['requests']), report['requests']  # no CDN
    assert not report['console'], report['console']  # no script error, no console error
    # one table row per trial, in order
    assert report['rendered'] == report['rows'] == len(history)
    assert report['row_indexes'] == [t['index'] for t in history]
    assert 'write_buffer_size' in report['header'] and 'compression' in report['header']
    assert report['compare_rows'] == 3
    assert 'ceph config set osd.0 bluestore_rocksdb_options' in report['commands']
    # the charts drew their data, not only axes: series colours on the canvases
    conv, trade = report['convergence'], report['tradeoff']
    assert conv['canvas'] and conv['painted'] > 0 and trade['canvas'] and trade['painted'] > 0
    assert conv['colours']['best']['matching'] > 50, conv  # the best-so-far line
    assert conv['colours']['baseline']['matching'] > 10, conv  # baseline points
    assert trade['colours']['budget']['matching'] > 50, trade  # the budget line
    assert 'best so far' in conv['legend'] and 'feasible' in trade['legend']
    assert 'Ceph default' in trade['legend']  # the lab's canary runs Ceph's default
    assert os.path.getsize(SCREENSHOT) > 20000
