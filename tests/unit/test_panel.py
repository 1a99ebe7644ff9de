"""The panel: pure views and routing, the CherryPy app over real HTTP, the mgr glue."""
import copy
import http.client
import json
import os
import re
import shlex
import socket
from typing import Any, Dict, List, Optional, Tuple

import pytest

import mgr_mock
from mgr_mock import Log

mgr_mock.install()
from rocks_autotune import module, panel  # noqa: E402
from rocks_autotune.http_server import PanelServer, url  # noqa: E402
from rocks_autotune.rocksdb_options import NEW_TUNING  # noqa: E402
from rocks_autotune.workload import OSD_BENCH  # noqa: E402

STATIC = os.path.join(os.path.dirname(module.__file__), 'static')

FAKE_KEY = 'AQBpZ2tm' + 'A' * 30 + '=='  # shaped like a cephx key
# shaped like Tentacle's new (type 2) cephx keys
FAKE_KEY_TYPE2 = 'AgDRbwFr' + 'B' * 47 + '='

make_mgr = mgr_mock.make_module


def run_to_end(m: Any) -> Any:
    mgr_mock.drive(m)
    assert m.session.s.state == 'done'
    return m


def run_session(trials: int = 6) -> Any:
    m = make_mgr()
    assert m.cmd_start(workload=OSD_BENCH, osd=1, trials=trials, duration=5).retval == 0
    return run_to_end(m)


@pytest.fixture(scope='module')
def done() -> panel.Snapshot:
    return run_session().panel_snapshot  # published by the module: with the OSD map's reach


def app(snap: panel.Snapshot) -> panel.Panel:
    return panel.Panel(lambda: snap)


def app_of(m: Any) -> panel.Panel:
    """The panel as the module serves it: its snapshot as last published."""
    return panel.Panel(lambda: m.panel_snapshot)


def get_json(p: panel.Panel, path: str, qs: str = '') -> Any:
    r = p.handle('GET', path, qs)
    assert r.status == 200, r.body
    assert r.content_type.startswith('application/json')
    return json.loads(r.body)


# ---------------------------------------------------------------- pure views

def test_idle_status_and_metrics() -> None:
    p = app(panel.Snapshot())
    assert get_json(p, '/api/status')['state'] == 'idle'
    assert get_json(p, '/api/trials') == {'state': 'idle', 'total': 0, 'budget_write_amp': None,
                                          'baseline': None, 'trials': []}
    text = p.handle('GET', '/metrics').body.decode()
    assert 'rocks_autotune_state{state="idle"} 1' in text
    assert 'rocks_autotune_state{state="running"} 0' in text
    assert 'rocks_autotune_trials_done' not in text


def test_status_has_baseline_the_confirmed_answer_and_commands(done: panel.Snapshot) -> None:
    st = get_json(app(done), '/api/status')
    assert st['state'] == 'done' and st['trials_done'] == 6 and st['trials_planned'] == 6
    # the 20 rounds' measurements and the recommended arm's steady pair
    assert st['confirm_done'] == 22
    b, best = st['baseline'], st['best']
    assert b['runs'] == 2 and b['kv_sync_lat_ms'] > 0
    assert st['budget_write_amp'] == pytest.approx(1.10 * b['write_amp'])
    # the answer's figures are the confirmation's: ratios to the baseline of each round
    assert best['answer'] == 'recommend' and best['objective'] == 'iops'
    arms = st['confirmation']['result']['arms']
    rec = [a for a in arms if a['arm'] == best['arm']][0]
    assert best['trial'] == rec['trial']
    assert best['ratios']['objective'] == rec['objective']['ratio']
    conf = [t for t in done.trials if t.kind == 'confirm' and not t.steady]
    per_round = [[t for t in conf if t.round == r] for r in range(5)]
    want = [next(t.measurement for t in ts if t.arm == best['arm']).iops
            / next(t.measurement for t in ts if t.arm == 'baseline').iops
            for ts in per_round]
    assert best['ratios']['objective']['per_round'] == pytest.approx(want)
    # write-amp judged at steady state: the ratio of its steady windows
    assert best['steady']['ratio'] <= 1.10 and best['steady']['verdict'] == 'recommended'
    assert len(best['candidates']) == 3
    # the search's leader is shown as such, apart from the answer
    assert st['leader']['verdict'] in ('feasible', 'baseline')
    # the canary, then each other OSD of its device class (the fake cluster's are all ssd)
    assert [shlex.split(c) for c in best['commands']] == [
        ['ceph', 'config', 'set', who, 'bluestore_rocksdb_options', best['options']]
        for who in ('osd.1', 'osd.0', 'osd.2')]
    assert best['osds'] == [0, 1, 2] and best['masks'] == ['osd.0', 'osd.2']


def test_the_reach_is_read_once_while_the_session_restores() -> None:
    # issue 45: each publish of the restore's polls read three maps of every
    # OSD for it; once the session has ended, each publish reads it again
    m = make_mgr()
    assert m.cmd_start(workload=OSD_BENCH, osd=1, trials=6, duration=5).retval == 0
    reads: List[int] = []
    osds = m.cluster.osds
    m.cluster.osds = lambda: reads.append(1) or osds()
    clock, s = m.cluster.clock, m.session
    while m.panel_snapshot.reach is None:  # the answer stands: its reach is read
        clock.advance(s.step())
        m.publish()
    assert s.active and reads
    del reads[:]
    m.publish()  # the restore's next polls' (and config_notify's)
    m.publish()
    assert reads == []
    mgr_mock.drive(m)
    assert not s.active and reads  # ended: each publish reads them (the idle loop's too)
    assert m.panel_snapshot.reach['osds'] == [0, 1, 2]


def test_trials_rows_best_so_far_and_markers(done: panel.Snapshot) -> None:
    tr = get_json(app(done), '/api/trials')
    rows = tr['trials']
    # 6 search trials, 20 rounds' measurements, the steady check's pair
    assert len(rows) == tr['total'] == len(done.trials) == 30
    assert [r['n'] for r in rows] == list(range(1, 31))
    bsf = [r['best_so_far'] for r in rows if r['best_so_far'] is not None]
    assert bsf == sorted(bsf, reverse=True) and len(bsf) == 30
    feasible = [r['score'] for r in rows if r['verdict'] in ('feasible', 'baseline')]
    assert bsf[-1] == min(feasible)
    # the fake canary runs Ceph's default; the optimizer's warm starts include New Tuning
    assert rows[0]['kind'] == 'baseline' and rows[0]['marker'] == 'default'
    assert 'new_tuning' in [r['marker'] for r in rows]
    for r in rows:
        assert set(r['candidate']) == set(panel.SearchSpace.candidate_from_options({}).to_dict())
        assert r['options'] and r['ratios']['write_amp'] is not None
        # a confirmation measurement says which round and arm it was
        assert (r['round'] is not None and bool(r['arm'])) == (r['kind'] == 'confirm')


def test_other_checks_and_the_canarys_crashes_are_shown() -> None:
    # issue 12: a forced session under a standing warning, and a candidate
    # that crashes the canary: the admin sees both, and the ids to archive
    m = make_mgr()
    m.cluster.broken = lambda options: 'max_write_buffer_number=128' in options
    m.cluster.crash_when_broken = True
    m.cluster.extra_health = ['POOL_NO_REDUNDANCY']
    assert m.cmd_start(workload=OSD_BENCH, osd=1, trials=4, duration=5, force=True).retval == 0
    run_to_end(m)
    ids = [c.id for c in m.cluster.recent_crashes()]
    p = app(panel.Snapshot.of(m.session.view()))
    st = get_json(p, '/api/status')
    assert ids and st['crashes'] == ids and st['other_checks'] == ['POOL_NO_REDUNDANCY']
    rows = get_json(p, '/api/trials')['trials']
    assert [r['crashes'] for r in rows if r['verdict'] == 'failed'] == [[i] for i in ids]
    text = m.cmd_status(detail=True).stdout
    assert 'other health checks: POOL_NO_REDUNDANCY (not blocking: --force)' in text
    assert all(f'ceph crash archive {i}' in text for i in ids)


def test_trials_query(done: panel.Snapshot) -> None:
    p = app(done)
    base = get_json(p, '/api/trials', 'verdict=baseline')['trials']
    assert [r['kind'] for r in base] == ['baseline', 'baseline']
    assert [r['n'] for r in get_json(p, '/api/trials', 'since=28')['trials']] == [29, 30]
    conf = get_json(p, '/api/trials', 'verdict=measured')['trials']
    assert len(conf) == 22 and {r['kind'] for r in conf} == {'confirm'}
    assert [r['n'] for r in get_json(p, '/api/trials', 'since=2&limit=3')['trials']] == [3, 4, 5]


def parse_metrics(text: str) -> Dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            name, value = line.rsplit(' ', 1)
            out[name] = float(value)
    return out


def test_metrics(done: panel.Snapshot) -> None:
    r = app(done).handle('GET', '/metrics')
    assert r.status == 200 and r.content_type.startswith('text/plain; version=0.0.4')
    text = r.body.decode()
    # every sample has HELP and TYPE, every name is ours
    for line in text.splitlines():
        assert re.match(r'(# (HELP|TYPE) )?rocks_autotune_[a-z_]+', line), line
    # each family's samples together, after its one HELP and one TYPE (the
    # text format's rule: a parser may drop a family seen twice)
    families = [line.split()[2] if line.startswith('#') else re.split(r'[{ ]', line)[0]
                for line in text.splitlines()]
    runs = [f for i, f in enumerate(families) if i == 0 or families[i - 1] != f]
    assert len(runs) == len(set(runs)), runs
    for f in set(families):
        assert text.count(f'# HELP {f} ') == text.count(f'# TYPE {f} gauge') == 1, f
    m = parse_metrics(text)
    st = done.status
    assert m['rocks_autotune_state{state="done"}'] == 1
    assert sum(v for k, v in m.items() if k.startswith('rocks_autotune_state{')) == 1
    assert m['rocks_autotune_trials_done'] == 6
    assert m['rocks_autotune_baseline_kv_sync_latency_seconds'] == pytest.approx(
        st['baseline']['kv_sync_lat_ms'] / 1000)
    assert m['rocks_autotune_baseline_iops'] == pytest.approx(st['baseline']['iops'])
    assert m['rocks_autotune_baseline_write_amp'] == pytest.approx(st['baseline']['write_amp'])
    # the answer: the confirmation's figures, never a search window's
    assert m['rocks_autotune_recommends'] == 1
    assert m['rocks_autotune_best_trial'] == st['best']['index']
    for a in st['confirmation']['result']['arms']:
        for fig in ('objective', 'kv_sync_lat', 'write_amp'):
            for stat in ('median', 'low', 'high'):
                key = (f'rocks_autotune_confirmed_ratio{{arm="{a["arm"]}",trial="{a["trial"]}",'
                       f'figure="{fig}",stat="{stat}"}}')
                # the rounds' short windows may pair no write-amp: no sample then
                assert m.get(key) == pytest.approx(a[fig]['ratio'][stat])
    # the steady check: the recommended arm's ratio, and each side's compaction
    best = st['confirmation']['result']['recommended']
    (arm,) = [a for a in st['confirmation']['result']['arms'] if a['arm'] == best]
    labels = f'arm="{best}",trial="{arm["trial"]}"'
    assert m[f'rocks_autotune_steady_write_amp_ratio{{{labels}}}'] == pytest.approx(
        arm['steady']['ratio'])
    assert m[f'rocks_autotune_steady_objective_ratio{{{labels}}}'] == pytest.approx(
        arm['steady']['objective'])
    for side in ('arm', 'baseline'):
        assert m[f'rocks_autotune_steady_compaction_seen{{{labels},side="{side}"}}'] == \
            float(arm['steady'][f'{side}_seen'])
    # what it could see: the baseline's A/A noise and its plan, the rounds' noise
    noise, seen = st['noise'], st['confirmation']['result']['seen']
    assert m['rocks_autotune_noise_sd'] == pytest.approx(noise['sd'])
    assert m['rocks_autotune_planned_detectable_gain_ratio'] == pytest.approx(
        noise['plan']['detectable'])
    assert m['rocks_autotune_confirmation_noise_sd'] == pytest.approx(seen['sd'])
    assert m['rocks_autotune_detectable_gain_ratio'] == pytest.approx(seen['detectable'])
    assert m['rocks_autotune_measurement_design{design="sequential"}'] == 1


def test_status_and_best_say_what_the_confirmation_could_see(done: panel.Snapshot) -> None:
    st = get_json(app(done), '/api/status')
    assert st['noise_line'].startswith('noise: IOPS sd ')
    best = st['best']
    assert best['seen'] == st['confirmation']['result']['seen'] and best['seen']['rounds'] > 0
    assert best['measurement_plan'] == {'design': 'sequential'} and best['canary'] == 1
    assert '(sequential, on osd.1)' in best['summary']


def test_non_finite_values_are_valid_json(done: panel.Snapshot) -> None:
    snap = panel.Snapshot(dict(done.status), copy.deepcopy(done.state))
    assert snap.state is not None
    snap.state.trials[3].measurement.write_amp = float('inf')
    rows = get_json(app(snap), '/api/trials')['trials']
    assert rows[3]['measurement']['write_amp'] is None
    assert 'inf' not in app(snap).handle('GET', '/metrics').body.decode().lower()


# ---------------------------------------------------------------- routing

ROUTES = ['/', '/index.html', '/api/status', '/api/trials', '/metrics', '/static/app.js',
          '/static/vendor/uplot/uPlot.iife.min.js']


@pytest.mark.parametrize('path', ROUTES)
@pytest.mark.parametrize('method', ['POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'])
def test_mutating_and_other_methods_are_405(done: panel.Snapshot, method: str,
                                            path: str) -> None:
    r = app(done).handle(method, path)
    assert r.status == 405 and r.all_headers()['Allow'] == 'GET'


@pytest.mark.parametrize('path', ['/api', '/api/', '/api/best', '/metrics/', '/static/',
                                  '/static/../panel.py', '/static/vendor/uplot/LICENSE',
                                  '/static/../../module.py', '/favicon.ico', '/admin'])
def test_unknown_paths_are_404(done: panel.Snapshot, path: str) -> None:
    for method in ('GET', 'POST'):
        assert app(done).handle(method, path).status == 404


@pytest.mark.parametrize('path,qs', [
    ('/api/trials', 'since=abc'), ('/api/trials', 'since=-1'), ('/api/trials', 'limit=1e3'),
    ('/api/trials', 'verdict=best'), ('/api/trials', 'since=1&since=2'),
    ('/api/trials', 'since=%ff'), ('/api/trials', 'since'), ('/api/trials', 'x=1'),
    ('/api/status', 'verbose=1'), ('/metrics', 'name[]=x'), ('/', 'a=1&&b'),
])
def test_malformed_queries_are_400(done: panel.Snapshot, path: str, qs: str) -> None:
    r = app(done).handle('GET', path, qs)
    assert r.status == 400, (path, qs, r.body)
    if path.startswith('/api/'):
        assert json.loads(r.body)['status'] == 400


def test_page_and_static_assets(done: panel.Snapshot) -> None:
    p = app(done)
    r = p.handle('GET', '/')
    html = r.body.decode()
    assert r.content_type.startswith('text/html')
    for ref in re.findall(r'(?:src|href)="(static/[^"]+)"', html):
        a = p.handle('GET', '/' + ref)
        assert a.status == 200 and a.body, ref
    assert 'static/vendor/uplot/uPlot.iife.min.js' in html and 'static/app.js' in html
    # no CDN, no inline script (the CSP forbids both)
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert '<script>' not in html
    js = p.handle('GET', '/static/vendor/uplot/uPlot.iife.min.js')
    assert js.content_type.startswith('text/javascript') and b'uPlot' in js.body[:200]
    assert "script-src 'self'" in r.all_headers()['Content-Security-Policy']


def js_function(name: str) -> str:
    """The text of one top-level function of app.js."""
    js = open(os.path.join(STATIC, 'app.js')).read()
    m = re.search(r'\n  function ' + name + r'\(.*?\n  \}\n', js, re.S)
    assert m, name
    return m.group(0)


def test_status_carries_the_rollout_the_page_draws() -> None:
    """/api/status has the last rollout's OSD counts as it goes, the OSD in
    flight named, pending -> restarting -> done one OSD at a time, and every
    field the page's renderRollout reads; the page has every element it fills."""
    m = make_mgr()
    assert m.cmd_apply(device_class='ssd', options=NEW_TUNING).retval == 0
    p = app_of(m)
    seen: List[Tuple[int, int, int, List[int]]] = []
    while True:
        ro = get_json(p, '/api/status')['rollout']
        c = ro['counts']
        now = (c['pending'], c['restarting'], c['done'], [o['osd'] for o in ro['notable']])
        if not seen or now != seen[-1]:
            seen.append(now)
        if ro['notable']:
            flight = ro['notable'][0]
        if not m.rollout.active:
            break
        m.cluster.clock.advance(m.rollout.step())
        m.publish()
    assert seen == [(3, 0, 0, []), (2, 1, 0, [0]), (2, 0, 1, []), (1, 1, 1, [1]), (1, 0, 2, []),
                    (0, 1, 2, [2]), (0, 0, 3, [])]
    assert ro['state'] == 'done' and ro['total'] == 3 and ro['notable_more'] == 0
    assert ro['counts'] == {'pending': 0, 'restarting': 0, 'done': 3, 'failed': 0, 'skipped': 0}
    code = js_function('renderRollout')
    for obj, fields in (('ro', ro), ('o', flight), ('c', ro['counts'])):
        read = set(re.findall(r'\b' + obj + r'\.(\w+)', code)) - {'length'}
        assert read and read <= set(fields), (obj, read - set(fields))
    html = p.handle('GET', '/').body.decode()
    for element in re.findall(r"\$\('([\w-]+)'\)", code):
        assert f'id="{element}"' in html, element
    assert 'renderRollout(st);' in open(os.path.join(STATIC, 'app.js')).read()


@pytest.mark.parametrize('key', [FAKE_KEY, FAKE_KEY_TYPE2], ids=['aes', 'type2'])
def test_no_secret_ever_leaves(done: panel.Snapshot, key: str) -> None:
    state = copy.deepcopy(done.state)
    status = json.loads(json.dumps(done.status))
    # even if one got into the state, say in a message, an error or a stray field
    status['message'] = f'ceph auth get-key client.admin gave {key}'
    status['keyring'] = f'[client.admin]\n\tkey = {key}\n'
    state.trials[2].error = f'osd said key={key}'
    status['params']['auth_key'] = key
    p = app(panel.Snapshot(status, state))
    for path in ROUTES:
        for qs in ('', 'x=1'):
            body = p.handle('GET', path, qs).body.decode()
            assert key not in body, path
            if path.startswith('/api/'):
                assert not re.search(r'A[Qgw][A-Za-z0-9+/]{30,}', body)
                keys = re.findall(r'"([^"]+)":', body)
                assert not [k for k in keys if re.search('key|secret|auth', k, re.I)], keys


def test_standby_points_at_the_active_mgr() -> None:
    active = 'http://10.0.0.1:9476/'
    p = panel.Panel(panel.Snapshot, standby_uri=lambda: active)
    r = p.handle('GET', '/')
    assert r.status == 200 and f'href="{active}"' in r.body.decode()
    r = p.handle('GET', '/api/status')
    assert r.status == 503 and json.loads(r.body)['active'] == active
    assert p.handle('GET', '/metrics').status == 503
    assert p.handle('POST', '/api/status').status == 405
    assert p.handle('GET', '/nope').status == 404
    none = panel.Panel(panel.Snapshot, standby_uri=lambda: '')
    assert 'no active mgr' in none.handle('GET', '/').body.decode()


def test_url_brackets_ipv6() -> None:
    assert url('::1', 9476) == 'http://[::1]:9476/'
    assert url('10.1.2.3', 80) == 'http://10.1.2.3:80/'
    assert url('mgr-host', 80) == 'http://mgr-host:80/'


# ---------------------------------------------------------------- over HTTP

def request(port: int, method: str, path: str,
            body: Optional[bytes] = None) -> Tuple[int, Dict[str, str], bytes]:
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        c.request(method, path, body=body)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(('127.0.0.1', port)) != 0


def test_cherrypy_app_over_http(done: panel.Snapshot) -> None:
    server = PanelServer(app(done), Log())
    assert server.ensure('127.0.0.1', 0) and server.bound
    port = server.bound[1]
    try:
        status, headers, body = request(port, 'GET', '/api/status')
        assert status == 200 and json.loads(body)['state'] == 'done'
        assert headers['content-type'].startswith('application/json')
        assert headers['server'] == 'rocks_autotune'
        assert request(port, 'GET', '/api/trials?limit=2')[0] == 200
        assert request(port, 'GET', '/metrics')[2].startswith(b'# HELP rocks_autotune_state')
        assert request(port, 'GET', '/')[0] == 200
        # CherryPy itself would answer 404 to a query it cannot decode: the panel says 400
        assert request(port, 'GET', '/api/trials?since=%ff')[0] == 400
        assert request(port, 'GET', '/api/trials?nope=1')[0] == 400
        s, h, _ = request(port, 'POST', '/api/status', b'{"state": "aborted"}')
        assert s == 405 and h['allow'] == 'GET'
        assert request(port, 'HEAD', '/metrics')[0] == 405
        assert request(port, 'DELETE', '/')[0] == 405
        s, _, b = request(port, 'GET', '/../../etc/passwd')
        assert s in (400, 404) and b'root:' not in b
        assert request(port, 'GET', '/nope')[0] == 404
    finally:
        server.stop()
    assert server.bound is None and refused(port)


def test_handler_error_is_a_bare_500() -> None:
    def broken() -> panel.Snapshot:
        raise RuntimeError('secret internals')
    server = PanelServer(panel.Panel(broken), Log())
    assert server.ensure('127.0.0.1', 0) and server.bound
    try:
        s, _, body = request(server.bound[1], 'GET', '/api/status')
        assert s == 500 and b'secret internals' not in body and b'Traceback' not in body
    finally:
        server.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


def test_module_serves_rebinds_and_stops() -> None:
    m = run_session(trials=2)
    uris: List[str] = []
    m.set_uri = uris.append
    m.get_mgr_ip = lambda: '127.0.0.1'
    p1, p2 = free_port(), free_port()
    m.mock_options['server_port'] = p1
    m.serve_panel()
    assert uris == [f'http://127.0.0.1:{p1}/']
    st = json.loads(request(p1, 'GET', '/api/status')[2])
    assert st['state'] == 'done' and st['trials_done'] == 2
    m.serve_panel()  # nothing changed: no rebind, no new URI
    assert uris == [f'http://127.0.0.1:{p1}/']
    m.mock_options['server_port'] = p2
    m.config_notify()
    assert uris[-1] == f'http://127.0.0.1:{p2}/'
    assert request(p2, 'GET', '/metrics')[0] == 200 and refused(p1)
    m.shutdown()
    assert refused(p2)


def test_module_survives_a_taken_port() -> None:
    m = make_mgr()
    uris: List[str] = []
    m.set_uri = uris.append
    m.get_mgr_ip = lambda: '127.0.0.1'
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        s.listen()
        m.mock_options['server_port'] = s.getsockname()[1]
        m.serve_panel()  # logged, not raised: the tuner must keep running
        assert uris == [] and m.http.bound is None
    m.serve_panel()  # freed: the next pass binds
    assert m.http.bound is not None and len(uris) == 1
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        s.listen()
        m.mock_options['server_port'] = s.getsockname()[1]
        m.config_notify()  # moved to a taken port: no stale URL left in `ceph mgr services`
        assert uris[-1] == '' and m.http.bound is None
    m.shutdown()


def test_default_port_is_none_of_cephs() -> None:
    assert module.DEFAULT_PORT not in (8080, 8443, 9283, 7000, 8003, 8765, 9464, 5000, 9287,
                                       3000, 9093, 9094, 9095, 9100, 9926)
    opts = {o['name']: o for o in module.RocksAutotune.MODULE_OPTIONS}
    assert opts['server_port']['default'] == module.DEFAULT_PORT
    assert opts['server_addr']['default'] == ''
    standby = {o['name'] for o in module.RocksAutotuneStandby.MODULE_OPTIONS}
    assert {'server_addr', 'server_port'} <= standby
