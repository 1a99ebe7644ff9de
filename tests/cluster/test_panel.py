"""The panel in the real mgr: the URL from `ceph mgr services`, the API, metrics,
read-only answers, hostile clients (the mgr's memory and the panel's service),
rebinding, the standby's pointer, and the page in headless Chromium after a
real session (with a screenshot under build/)."""
import http.client
import json
import os
import re
import shlex
import socket
import subprocess
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlsplit

import pytest

from conftest import MON_PORT, REPO, Lab, ShortSession

BROWSER = os.path.join(REPO, 'tests', 'cluster', 'browser')
SCREENSHOT = os.path.join(REPO, 'build', 'panel', 'panel.png')


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


# ---------------------------------------------------------------- hostile clients
# The panel listens on the mgr's address with no authentication: whoever can
# reach it must not cost ceph-mgr its memory, nor the panel its service.
# (The limits: http_server.PanelServer; its unit tests: tests/unit/test_http_server.py.)

MiB = 1 << 20
HEAD_LIMIT = 16 << 10
HEAD_DEADLINE = 5  # seconds from the accept


def mgr_rss(lab: Lab) -> int:
    """The active mgr's resident set, in bytes."""
    with open(f'/proc/{lab.pid(f"mgr.{active_mgr(lab)}")}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) * 1024
    raise AssertionError('no VmRSS')


class PeakRss:
    """The mgr's highest VmRSS while the block runs (sampled every 20 ms)."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    def __enter__(self) -> 'PeakRss':
        self.before = self.peak = mgr_rss(self.lab)
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._sample, daemon=True)
        self._t.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, mgr_rss(self.lab))

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._t.join()

    @property
    def rise(self) -> int:
        return self.peak - self.before


def connect(base: str, timeout: float = 30) -> socket.socket:
    u = urlsplit(base)
    return socket.create_connection((u.hostname or '', u.port or 0), timeout=timeout)


def answer(s: socket.socket) -> int:
    r = http.client.HTTPResponse(s)
    r.begin()
    r.read()
    return r.status


def timed_get(base: str, path: str = '/metrics') -> Tuple[int, float]:
    t0 = time.monotonic()
    status = request(base, 'GET', path)[0]
    return status, time.monotonic() - t0


def closed_by_server(s: socket.socket, wait: float) -> bool:
    s.settimeout(wait)
    try:
        while s.recv(65536):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def still_open(socks: List[socket.socket], until: float) -> List[socket.socket]:
    """Those the server has not closed by `until` (time.monotonic())."""
    return [s for s in socks if not closed_by_server(s, max(0.01, until - time.monotonic()))]


@pytest.fixture
def sockets() -> Iterator[List[socket.socket]]:
    socks: List[socket.socket] = []
    yield socks
    for s in socks:
        s.close()


def test_a_200_mib_request_line_costs_the_mgr_no_memory(lab: Lab) -> None:
    url = panel_url(lab)
    chunk = b'a' * MiB
    with PeakRss(lab) as rss, connect(url, timeout=60) as s:
        s.sendall(b'GET /')
        try:
            for _ in range(200):
                s.sendall(chunk)
            s.sendall(b' HTTP/1.1\r\nHost: x\r\n\r\n')
        except (BrokenPipeError, ConnectionResetError):
            pass  # the answer must be there all the same
        status = answer(s)
    print(f'\nmgr RSS {rss.before / MiB:.0f} MiB, peak {rss.peak / MiB:.0f} MiB '
          f'during a 200 MiB request line')
    assert status == 414
    assert rss.rise < 50 * MiB, f'the mgr grew {rss.rise / MiB:.0f} MiB'
    assert timed_get(url)[0] == 200


def test_oversize_heads_and_bodies_are_refused(lab: Lab) -> None:
    url = panel_url(lab)
    for head, want in (
            (b'GET /' + b'a' * HEAD_LIMIT + b' HTTP/1.1\r\nHost: x\r\n\r\n', 414),
            (b'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'b' * HEAD_LIMIT
             + b'\r\n\r\n', 431),
            # announced, never sent: refused on the head alone
            (b'POST /api/status HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n'
             % (100 * MiB), 413)):
        t0 = time.monotonic()
        with connect(url) as s:
            s.sendall(head)
            assert answer(s) == want and time.monotonic() - t0 < 2, want


def test_50_slow_sockets_do_not_starve_the_panel(lab: Lab,
                                                 sockets: List[socket.socket]) -> None:
    url = panel_url(lab)
    stop = threading.Event()

    def trickle() -> None:  # a header line at a time, never the blank line
        while not stop.wait(0.2):
            for s in sockets:
                try:
                    s.send(b'X-A: b\r\n')
                except OSError:
                    pass

    for _ in range(50):
        sockets.append(connect(url))
        sockets[-1].sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\n')
    opened = time.monotonic()
    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    try:
        time.sleep(1)
        status, took = timed_get(url)
        print(f'\nGET /metrics beside 50 slow sockets: {status} in {took:.2f}s')
        assert status == 200 and took < 2
        assert not [s for s in sockets if closed_by_server(s, 0.01)]  # all still held
        left = still_open(sockets, opened + HEAD_DEADLINE + 2)
        assert not left, f'{len(left)} slow sockets outlived the head deadline'
    finally:
        stop.set()
        t.join()


def test_idle_connections_are_closed(lab: Lab, sockets: List[socket.socket]) -> None:
    url = panel_url(lab)
    sockets.extend(connect(url) for _ in range(50))
    opened = time.monotonic()
    status, took = timed_get(url)
    assert status == 200 and took < 2
    left = still_open(sockets, opened + HEAD_DEADLINE + 2)
    assert not left, f'{len(left)} idle sockets outlived the deadline'


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
    lab.wait_mgrs('a standby mgr (this test needs one)', lambda: lab.standbys() >= 1, 60)
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


def test_page_in_headless_chromium_after_a_real_session(
        lab: Lab, short_session: ShortSession) -> None:
    st = short_session.status
    osd = short_session.osd
    assert st['state'] == 'done', st
    # the panel shows the last session: no test may have started another since
    assert lab.status()['id'] == st['id'], 'a later session replaced the short one'
    url = panel_url(lab)
    history = short_session.history
    api = get_json(url, '/api/trials')
    assert [t['index'] for t in api['trials']] == [t['index'] for t in history]
    api_st = get_json(url, '/api/status')
    # `best` and the panel: the confirmation's answer; when it recommends, the
    # canary, then each other OSD of its class at its own mask (the lab's are ssd)
    best = short_session.best
    assert api_st['best']['answer'] == best['answer']
    assert api_st['best']['commands'] == best['commands']
    ssd = sorted(lab.json('osd', 'crush', 'class', 'ls-osd', 'ssd'))
    others = [f'osd.{i}' for i in ssd if i != osd]
    assert best['masks'] == others and best['osds'] == ssd and osd in ssd, best
    if best['keeps_current']:
        assert st['best'] is None and best['commands'] == []
    else:
        assert api_st['best']['trial'] == st['best']['index']
        assert [a[3] for a in map(shlex.split, best['commands'])
                if a[4] == 'bluestore_rocksdb_options'] == [f'osd.{osd}'] + others
        assert api_st['best']['osds'] == ssd
    metrics = request(url, 'GET', '/metrics')[2].decode()
    lat = st['baseline']['kv_sync_lat_ms'] / 1000
    m = re.search(r'^rocks_autotune_baseline_kv_sync_latency_seconds (\S+)$', metrics, re.M)
    assert m and float(m.group(1)) == pytest.approx(lat)
    assert re.search(r'^rocks_autotune_trials_done 4(\.0)?$', metrics, re.M)
    # what the session could see, and how it measured
    m = re.search(r'^rocks_autotune_noise_sd (\S+)$', metrics, re.M)
    assert m and float(m.group(1)) == pytest.approx(st['noise']['sd'])
    assert re.search(r'^rocks_autotune_measurement_design\{design="sequential"\} 1(\.0)?$',
                     metrics, re.M)
    # the lab's rbd pool is size 3 on 3 OSDs: no PG leaves the canary out, so no split
    plan = best['measurement_plan']
    assert (plan['design'], best['canary']) == ('sequential', osd), best
    assert 'leave the canary out' in plan['why'], plan

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
    # the confirmation: a row per candidate, the answer, its per-round charts
    assert report['confirm_rows'] == len(st['confirmation']['arms'])
    assert report['answer'].lower().startswith(best['summary'][:20].lower())
    # the first card: an ended session's answer, the lines `status` prints
    assert report['headline'].splitlines() == api_st['summary'] != []
    assert report['noise_note'].lower().startswith(st['noise_line'][:30].lower())
    # the lab's rbd pool gives no PG without the canary: the page says sequential, and why
    assert report['design_note'].startswith('Measurement design: sequential ('), report
    assert 'leave the canary out' in report['design_note'], report
    ro = report['rounds_objective']
    assert ro['canvas'] and ro['colours']['margin']['matching'] > 50, ro  # the margin line
    assert report['rounds_write_amp']['colours']['budget']['matching'] > 50  # the budget line
    if not best['keeps_current']:
        assert f'ceph config set osd.{osd} bluestore_rocksdb_options' in report['commands']
        assert f'ceph config set {others[0]} bluestore_rocksdb_options' in report['commands']
    # the charts drew their data, not only axes: series colours on the canvases
    conv, trade = report['convergence'], report['tradeoff']
    assert conv['canvas'] and conv['painted'] > 0 and trade['canvas'] and trade['painted'] > 0
    assert conv['colours']['best']['matching'] > 50, conv  # the best-so-far line
    assert conv['colours']['baseline']['matching'] > 10, conv  # baseline points
    assert trade['colours']['budget']['matching'] > 50, trade  # the budget line
    assert 'best so far' in conv['legend'] and 'feasible' in trade['legend']
    assert 'Ceph default' in trade['legend']  # the lab's canary runs Ceph's default
    assert os.path.getsize(SCREENSHOT) > 20000
