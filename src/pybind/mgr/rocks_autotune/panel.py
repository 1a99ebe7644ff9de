"""The web panel's content: pure functions from a Snapshot (the module's copy
after a step: a request never waits for one) to HTTP answers for
http_server.py.  Read-only: GET only, and nothing here reaches the cluster."""
import functools
import html
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import parse_qsl

from . import report, views
from .confirm import ArmResult, RoundsNoise, Verdict
from .rocksdb_options import NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT, parse_options
from .perf_counters import Baseline, Measurement, write_amps
from .views import TimeSaid, View
from .space import Candidate, SearchSpace
from .store import SessionState
from .trial import Trial

STATES = ('idle', 'running', 'stopping', 'restoring', 'done', 'stopped', 'aborted', 'failed')
STATIC_DIR = Path(__file__).absolute().parent / 'static'
STATIC_TYPES = {'.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
                '.html': 'text/html; charset=utf-8'}
VERDICTS = ('baseline', 'feasible', 'infeasible', 'measured', 'failed')

# marked on the charts (with the release's default) where a trial ran these tuned values
SEED_MARKERS: Tuple[Tuple[str, str], ...] = (
    ('new_tuning', NEW_TUNING), ('new_tuning_lz4', NEW_TUNING_LZ4))

# belt and braces: the state holds no secrets, and nothing like one may leave through the panel
_SECRET_KEY = re.compile(r'(key|secret|passw|token|auth)', re.I)
# base64 of a cephx key starts with its type (u16, little endian): 1 (AES,
# every release) gives 'AQ', 2 (Tentacle's new keys) 'Ag', 3 'Aw'
_CEPHX = re.compile(r'A[Qgw][A-Za-z0-9+/]{30,}={0,2}')

SECURITY_HEADERS = {
    'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store',
    # everything is served from here: no CDN, no inline script
    'Content-Security-Policy': ("default-src 'self'; script-src 'self'; "
                                "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                "frame-ancestors 'none'"),
}


@dataclass
class Snapshot:
    """What the panel shows: the session's status() and a copy of its state."""
    status: Dict[str, Any] = field(default_factory=lambda: {'state': 'idle'})
    state: Optional[SessionState] = None
    reach: Optional[Dict[str, Any]] = None  # report.reach: where the best's commands go
    time: Optional[TimeSaid] = None  # the status's `time`

    @classmethod
    def of(cls, view: Optional[View], load_error: str = '',
           reach: Optional[Dict[str, Any]] = None) -> 'Snapshot':
        """What the panel needs from a session's view (None: no session)."""
        status: Dict[str, Any] = {'state': 'idle'} if view is None else dict(view.status)
        if load_error:
            status['error'] = load_error
        return cls(status, None if view is None else view.record, reach,
                   None if view is None else view.time)

    @property
    def trials(self) -> List[Trial]:
        return [] if self.state is None else list(self.state.trials)


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = 'text/plain; charset=utf-8'
    headers: Dict[str, str] = field(default_factory=dict)

    def all_headers(self) -> Dict[str, str]:
        return {**SECURITY_HEADERS, 'Content-Type': self.content_type, **self.headers}


class BadQuery(ValueError):
    """A query string the endpoint cannot accept: answered with 400."""


def clean(obj: Any) -> Any:
    """JSON-safe and secret-free: non-finite floats -> None, key-like fields dropped."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items() if not _SECRET_KEY.search(str(k))}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, str):
        return _CEPHX.sub('[redacted]', obj)
    return obj


Markers = List[Tuple[str, Candidate]]


def markers(release_default: str) -> Markers:
    """The tuned values of the release's default and the seed's options, parsed once."""
    return [(name, SearchSpace.candidate_from_options(parse_options(opts)))
            for name, opts in (('default', release_default),) + SEED_MARKERS]


def marker(candidate: Candidate, refs: Markers) -> str:
    """'default' / 'new_tuning' / 'new_tuning_lz4' if a trial ran those tuned values."""
    return next((name for name, c in refs if candidate == c), '')


def release_default(state: Optional[SessionState]) -> str:
    """The default options of the release the session ran on (it read them at start)."""
    return (state.release_default if state else '') or PACIFIC_DEFAULT


def budget_write_amp(state: Optional[SessionState]) -> Optional[float]:
    """The write-amp a feasible trial may not exceed: budget x the baseline's."""
    return state.params.budget * state.baseline.write_amp if state and state.baseline else None


def trial_rows(trials: List[Trial], default: str) -> List[Dict[str, Any]]:
    """Every recorded trial, with what the charts need; `best_so_far`: the lowest
    score of the feasible and baseline windows up to and including this one."""
    rows = []
    best: Optional[float] = None
    refs = markers(default)
    for n, t in enumerate(trials, 1):
        if t.verdict in ('feasible', 'baseline') and t.score is not None:
            best = t.score if best is None else min(best, t.score)
        saved = t.to_json()  # the fields a row shows, in this order
        rows.append(dict({'n': n}, **{k: saved[k] for k in (
            'index', 'kind', 'verdict', 'candidate', 'options', 'measurement', 'score', 'told',
            'error', 'crashes', 'seconds', 'round', 'arm', 'started')},
            marker=marker(t.candidate, refs), best_so_far=best))
    return rows


def status_json(snap: Snapshot) -> Dict[str, Any]:
    # the confirmation's answer (`best -f json`), once it stands
    st = snap.state
    best = None if st is None else report.best_summary(st, snap.reach)
    if st is not None and best is not None:
        rec = views.recommended_trial(st)
        best['marker'] = '' if rec is None else marker(rec.candidate, markers(release_default(st)))
    cur = st.current if st else None
    return clean(dict(snap.status, best=best, budget_write_amp=budget_write_amp(st),
                      current=cur and {'index': cur.index, 'kind': cur.kind},
                      trials_planned=st.params.trials if st else None))


def trials_json(snap: Snapshot, query: Mapping[str, str]) -> Dict[str, Any]:
    """`/api/trials[?verdict=V][&since=N][&limit=N]`: N are trial ordinals (1-based)."""
    verdict = query.get('verdict')
    if verdict not in (None,) + VERDICTS:
        raise BadQuery(f'verdict must be one of {", ".join(VERDICTS)}')
    since, limit = _int_param(query, 'since') or 0, _int_param(query, 'limit')
    st, trials = snap.state, snap.trials
    base = st.baseline if st else None
    rows = [dict(r, ratios=base and ratios(t.measurement, base))
            for t, r in zip(trials, trial_rows(trials, release_default(st)))
            if r['n'] > since and verdict in (None, t.verdict)][:limit]
    return clean({'state': snap.status.get('state'), 'total': len(trials),
                  'budget_write_amp': budget_write_amp(st),
                  'baseline': base and base.to_json(), 'trials': rows})


def ratios(m: Optional[Measurement], base: Baseline) -> Dict[str, Optional[float]]:
    """A measurement's figures over the baseline's medians (None where either lacks one)."""
    wa, base_wa = write_amps(m, base) if m else (None, None)
    iops, lat = (m.iops, m.kv_sync_lat_ms) if m else (None, None)
    return {'iops': iops / base.iops if iops and base.iops else None,
            'kv_sync_lat': lat / base.kv_sync_lat_ms if lat and base.kv_sync_lat_ms else None,
            'write_amp': wa / base_wa if wa is not None and base_wa else None}


def _int_param(query: Mapping[str, str], name: str) -> Optional[int]:
    raw = query.get(name)
    if raw is None:
        return None
    if not re.fullmatch(r'[0-9]{1,6}', raw):
        raise BadQuery(f'{name} must be a non-negative integer')
    return int(raw)


@dataclass(frozen=True)
class Seen:
    """What a metric reads: the status, the record (None: idle), its verdict standing and so far."""
    status: Dict[str, Any]
    state: Optional[SessionState]
    answer: Optional[Verdict]
    confirmed: Optional[Verdict]

    def arms(self) -> List[ArmResult]:
        return self.confirmed.arms if self.confirmed else []

    def chosen(self) -> Optional[ArmResult]:
        return self.answer.chosen if self.answer else None

    def noise(self) -> Optional[RoundsNoise]:
        return self.confirmed.seen if self.confirmed else None


# a metric's samples: (labels, value) pairs; a None value is left out, rather than a made-up 0
Samples = Callable[[Seen], Iterable[Tuple[str, Optional[float]]]]


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _one(value: Callable[[Seen], Any]) -> Samples:
    return lambda m: [('', _num(value(m)))]


def _at(*keys: str) -> Samples:
    """One sample: the number at `keys` down the status."""
    return _one(lambda m: functools.reduce(lambda v, k: (v or {}).get(k), keys[1:],
                                           m.status.get(keys[0])))


def _state(m: Seen) -> Iterable[Tuple[str, Optional[float]]]:
    return [(f'{{state="{s}"}}', int(s == m.status.get('state', 'idle'))) for s in STATES]


def _latency_s(m: Seen) -> Optional[float]:
    b = m.state.baseline if m.state else None
    return None if b is None else b.kv_sync_lat_ms / 1000.0


def _ratios(m: Seen) -> Iterable[Tuple[str, Optional[float]]]:
    return [(f'{{arm="{a.arm}",trial="{a.trial}",figure="{fig}",stat="{stat}"}}',
             _num(getattr(getattr(a, fig).ratio, stat)))
            for a in m.arms() for fig in ('objective', 'kv_sync_lat', 'write_amp')
            for stat in ('median', 'low', 'high')]


def _steady(key: str) -> Samples:
    return lambda m: [(f'{{arm="{a.arm}",trial="{a.trial}"}}',
                       _num(getattr(a.steady, key) if a.steady else None)) for a in m.arms()]


def _compaction_seen(m: Seen) -> Iterable[Tuple[str, Optional[float]]]:
    return [(f'{{arm="{a.arm}",trial="{a.trial}",side="{side}"}}',
             None if a.steady is None or (v := a.steady.seen(side)) is None else float(v))
            for a in m.arms() for side in ('arm', 'baseline')]


def _design(m: Seen) -> Iterable[Tuple[str, Optional[float]]]:
    c = m.state.confirm if m.state and m.confirmed else None
    return [(f'{{design="{c.measurement_plan.design}"}}', 1.0)] if c else []


# every gauge of /metrics, in the order served; an idle mgr serves the first only
METRICS: List[Tuple[str, str, Samples]] = [
    ('state', 'The tuning session state (1 for the current one)', _state),
    ('canary_osd', 'Id of the canary OSD', _at('osd')),
    ('trials_done', 'Candidate trials measured or failed', _at('trials_done')),
    ('trials_planned', 'Candidate trials the session runs', _at('params', 'trials')),
    ('baseline_runs_done', 'Baseline runs measured', _at('baseline_runs_done')),
    ('progress_ratio', 'Share of the session done (0-1)', _at('progress')),
    ('baseline_kv_sync_latency_seconds', 'Average bluestore kv_sync latency of the baseline',
     _one(_latency_s)),
    ('baseline_iops', 'Bench IOPS of the baseline', _at('baseline', 'iops')),
    ('baseline_write_amp', 'DB write amplification of the baseline (DB bytes per client byte)',
     _at('baseline', 'write_amp')),
    ('write_amp_budget', 'Highest write amplification a feasible trial may have',
     _one(lambda m: budget_write_amp(m.state))),
    ('recommends', '1 if the confirmation recommends a candidate, 0: keep the current options',
     _one(lambda m: None if m.answer is None else float(m.chosen() is not None))),
    ('best_trial', 'Index of the search trial recommended',
     _one(lambda m: None if (a := m.chosen()) is None else a.trial)),
    ('noise_sd', 'Per-round sd of the objective\'s log-ratio over the baseline\'s A/A pairs',
     _at('noise', 'sd')),
    ('planned_detectable_gain_ratio',
     'The gain the planned confirmation rounds confirm 9 times in 10 at that noise',
     _at('noise', 'plan', 'detectable')),
    ('confirmation_noise_sd',
     'Per-round sd of the objective\'s log-ratio the confirmation rounds showed',
     _one(lambda m: None if (n := m.noise()) is None else n.sd)),
    ('detectable_gain_ratio', 'The gain the confirmation\'s rounds confirm 9 times in 10 at '
     'the noise they showed: a smaller one goes unseen',
     _one(lambda m: None if (n := m.noise()) is None else n.detectable)),
    ('measurement_design', 'How the confirmation measures (measurement_plan.py): 1 for its '
     'design', _design),
    ('confirmed_ratio', 'A confirmed candidate\'s ratio to the baseline of the same round: '
     'median over the rounds and interval (90%, wider when the confirmation looks after '
     'several rounds); write-amp from the rounds\' short windows, shown, not judged', _ratios),
    ('steady_write_amp_ratio', 'A candidate\'s write-amp at steady state over the baseline\'s '
     '(median over its steady pairs)', _steady('ratio')),
    ('steady_objective_ratio', 'A candidate\'s objective over the baseline\'s over the same '
     'steady windows (median over its pairs): beside the rounds\' claim, not judged',
     _steady('objective')),
    ('steady_compaction_seen', 'Whether each side\'s steady window reached steady state (a '
     'compaction after its first and its column families\' cycle of WAL bytes; 0 on the '
     'baseline: the ratio is no steady figure; on the arm: unknown)', _compaction_seen),
]


def metrics_text(snap: Snapshot) -> str:
    """Prometheus text exposition (format 0.0.4) of METRICS, `rocks_autotune_*`."""
    st = snap.state
    seen = Seen(snap.status, st, None if st is None else views.final_answer(st),
                None if st is None else views.answer(st))
    out = []
    idle = snap.status.get('state', 'idle') == 'idle'
    for name, help_, samples in METRICS[:1 if idle else None]:
        rows = [f'rocks_autotune_{name}{labels} {v!r}' for labels, v in samples(seen)
                if v is not None and math.isfinite(v)]
        if rows:
            out += [f'# HELP rocks_autotune_{name} {help_}',
                    f'# TYPE rocks_autotune_{name} gauge'] + rows
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------- dispatch

def parse_query(qs: str) -> Dict[str, str]:
    """The query string as a dict; BadQuery for anything malformed or repeated."""
    try:  # no field at all is no query (older Pythons read it as malformed: bpo-45874)
        pairs = parse_qsl(qs, keep_blank_values=True, strict_parsing=True,
                          errors='strict', max_num_fields=20) if qs else []
    except (ValueError, UnicodeDecodeError) as e:
        raise BadQuery(f'malformed query string: {e}')
    out: Dict[str, str] = {}
    for k, v in pairs:
        if k in out:
            raise BadQuery(f'query parameter {k!r} given twice')
        out[k] = v
    return out


def _json(obj: Any, status: int = 200) -> Response:
    return Response(status, json.dumps(obj, allow_nan=False).encode(),
                    'application/json; charset=utf-8')


def _error(status: int, message: str, json_api: bool, headers: Optional[Dict[str, str]] = None,
           **more: Any) -> Response:
    r = (_json(dict({'error': message, 'status': status}, **more), status) if json_api
         else Response(status, (message + '\n').encode()))
    r.headers.update(headers or {})
    return r


class Panel:
    """Routes a request to a view.  `snapshot` is called once per request."""

    # path -> query parameters it accepts (the page and static files: none)
    ROUTES: Dict[str, Tuple[str, ...]] = {
        '/api/status': (), '/api/trials': ('verdict', 'since', 'limit'), '/metrics': ()}

    def __init__(self, snapshot: Callable[[], Snapshot],
                 standby_uri: Optional[Callable[[], str]] = None) -> None:
        self.snapshot = snapshot
        # URL path -> file: the page, and each file shipped under static/ (no path from a request)
        self.static = {f'/static/{f.relative_to(STATIC_DIR).as_posix()}': f
                       for f in STATIC_DIR.rglob('*') if f.suffix in STATIC_TYPES}
        self.static['/'] = self.static['/index.html'] = STATIC_DIR / 'index.html'
        # set on a standby mgr: every answer points at the active one
        self.standby_uri = standby_uri

    def handle(self, method: str, path: str, query_string: str = '') -> Response:
        json_api = path.startswith('/api/')
        if path not in self.ROUTES and path not in self.static:
            return _error(404, f'not found: {path}', json_api)
        if method != 'GET':
            return _error(405, f'{method} is not allowed: the panel is read-only', json_api,
                          {'Allow': 'GET'})
        try:
            query = parse_query(query_string)
            unknown = sorted(set(query) - set(self.ROUTES.get(path, ())))
            if unknown:
                raise BadQuery(f'unknown query parameter(s) for {path}: {", ".join(unknown)}')
            if self.standby_uri is not None:
                return self._standby(path, json_api, self.standby_uri())
            return self._get(path, query)
        except BadQuery as e:
            return _error(400, str(e), json_api)

    def _standby(self, path: str, json_api: bool, uri: str) -> Response:
        """What a standby mgr says: where the active one (`uri`) serves the panel."""
        if path in ('/', '/index.html'):
            link = html.escape(uri)
            body = (f'<p>This mgr is a standby. The rocks_autotune panel is served by the '
                    f'active mgr at <a href="{link}">{link}</a>.</p>' if uri else
                    '<p>This mgr is a standby, and no active mgr serves the panel yet.</p>')
            return Response(200, ('<!DOCTYPE html><html><head><meta charset="utf-8">'
                                  '<title>rocks_autotune (standby)</title></head><body>'
                                  f'<h1>rocks_autotune</h1>{body}</body></html>').encode(),
                            STATIC_TYPES['.html'])
        where = f'the active mgr serves {uri}' if uri else 'no active mgr serves the panel yet'
        return _error(503, 'this mgr is a standby; ' + where, json_api,
                      {'Link': f'<{uri}>; rel="alternate"'} if uri else None, active=uri or None)

    def _get(self, path: str, query: Mapping[str, str]) -> Response:
        if path in self.static:
            f = self.static[path]
            return Response(200, f.read_bytes(), STATIC_TYPES[f.suffix])
        snap = self.snapshot()
        if path == '/api/status':
            return _json(status_json(snap))
        if path == '/api/trials':
            return _json(trials_json(snap, query))
        # /metrics
        return Response(200, metrics_text(snap).encode(),
                        'text/plain; version=0.0.4; charset=utf-8')
