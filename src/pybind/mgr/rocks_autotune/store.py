"""Where a session is kept: the mgr's KV store, in values that stay small.

    session              the head: the session's moving parts (phase, flags,
                         alerts, the trial in flight) and how many trials
    session.start        what it started with, written once: the canary's
                         originals, the parameters and settings, the base
                         options; readable on its own, so an unreadable head
                         still tells how to restore the canary
    session.trial.N      one trial each
    session.originals    the start record again, while the session may have
                         changed the canary (removed when it ends): with an
                         unreadable head, it tells how to restore the canary,
                         and its absence that there is nothing to restore

A rollout (rollout.py: `apply`, `revert`) is kept beside it, the last one
only, ended or not:

    rollout              its head: kind, state, phase, flags, alerts, the
                         restart in flight, what it sets at each mask and
                         what was there before, and every option string
                         these and the OSD records name (once each)
    rollout.osds.N       the OSDs in restart order, ROLLOUT_CHUNK a value,
                         each naming its rollout (a save cut short before
                         the head is seen, not misread)

No value comes near mon_config_key_max_entry_size (64 KiB) at 500 trials.
Every write is checked (a store that refuses a value may only log it): a
failure raises StoreError, and the session pauses until a write succeeds.
Version 1 (one JSON value under `session`) is read and migrated.
"""
import json
from typing import Any, Callable, Dict, List, Mapping, Optional, cast

try:
    from typing import TypedDict
except ImportError:  # pragma: no cover - Python < 3.8 (Pacific's el8 images)
    from typing_extensions import TypedDict  # type: ignore

HEAD_KEY = 'session'
START_KEY = 'session.start'
ORIGINALS_KEY = 'session.originals'
ENDED = ('done', 'stopped', 'aborted', 'failed')
TRIAL_KEY = 'session.trial.{}'
# well below mon_config_key_max_entry_size (64 KiB): a value this big is a bug
MAX_VALUE = 48 << 10
STATE_VERSION = 2
# the fields of the start record; everything else but the trials is the head
START_FIELDS = ('id', 'params', 'reason', 'originals', 'base_options', 'annexed',
                'release_default', 'sharding', 'seed', 'started', 'settings', 'noout_at_start')


class StartRecord(TypedDict):
    """What a session started with; written once (START_FIELDS)."""
    id: str
    params: Dict[str, Any]  # preflight.Params
    reason: str
    originals: Dict[str, Optional[str]]  # canary.Originals
    base_options: str
    annexed: bool
    release_default: str
    sharding: str
    seed: int
    started: float
    settings: Dict[str, Any]  # session.Settings
    noout_at_start: bool


class RestartRecord(TypedDict):
    """A restart in flight (restart.py)."""
    purpose: str  # candidate | baseline | recovery | restore
    stage: str  # restart.Stage
    since: float
    up_from: Optional[int]
    expect: str  # the options the process must report
    ran: str  # or, going back, those it ran before ('' none): restart.Restarter.begin


class RestartState(TypedDict):
    """What restart.Restarter keeps in its owner's state (a session's, a rollout's)."""
    restart: Optional[RestartRecord]
    manual: bool  # no orchestrator: the admin restarts the OSD
    noout_ours: bool  # the noout on the OSD being restarted is ours
    running_dirty: bool  # the process may run a candidate
    alerts: Dict[str, Dict[str, Any]]


class _Head(RestartState):
    version: int
    state: str  # running | stopping | restoring | done | stopped | aborted | failed
    phase: str  # session.Phase
    trials: List[Dict[str, Any]]  # session.Trial, as dicts
    current: Optional[Dict[str, Any]]  # the trial in flight
    baseline: Optional[Dict[str, Any]]  # metrics.Baseline
    ended: Optional[float]
    phase_started: float
    message: str
    error: str
    abort: bool
    paused_since: Optional[float]
    window: Optional[Dict[str, Any]]  # trial.Window's running totals
    iops_estimate: Optional[float]
    cluster_errors: int
    # the watched config that reached the canary at the start (canary.entries),
    # None when unknown (a rescued session); someone else's changes since
    config_seen: Optional[Dict[str, Dict[str, str]]]
    config_changes: List[str]
    last_applied: Optional[str]  # the last candidate string set at osd.N


class SessionState(StartRecord, _Head, total=False):
    """The persisted session (version STATE_VERSION); `final` once it ends."""
    final: str
    other_checks: List[str]  # others' health checks at the last look (preflight.Health)
    confirm: Dict[str, Any]  # the confirmation, once the search is done (confirm.plan)


Get = Callable[[str], Optional[str]]
Put = Callable[[str, Optional[str]], None]


class StoreError(Exception):
    """A write to the mgr's store failed or did not stick."""


def migrate_v1(state: Dict[str, Any]) -> Dict[str, Any]:
    """Today's state from a version-1 one (one blob, written before issue 11)."""
    s = dict(state)
    preexisting = bool(s.pop('noout_preexisting', False))
    s.pop('up_from', None)
    # v1 set noout before every restart and cleared it unless it was there before
    s.update(version=STATE_VERSION, noout_ours=not preexisting, noout_at_start=preexisting,
             restart=None, settings=s.get('settings'), config_seen=None, config_changes=[],
             last_applied=None)
    # a restart in flight had no record of what it waits for: redo it
    if s['phase'] in ('restart', 'wait_up'):
        s['phase'] = 'apply'
    elif s['phase'] == 'restore_wait':
        s['phase'] = 'restore'
    return s


class SessionStore:
    def __init__(self, get: Get, put: Put) -> None:
        self._get = get
        self._put = put
        self._start_of = ''          # the session whose start record is written
        self._originals_of = ''      # the session whose originals key is there
        self._trials: List[str] = []  # what each trial key holds now

    def _write(self, key: str, value: Optional[str]) -> None:
        if value is not None and len(value) > MAX_VALUE:
            raise StoreError(f'{key} would be {len(value)} bytes, over {MAX_VALUE}')
        try:
            self._put(key, value)  # raises when the mon did not take it
        except Exception as e:  # any failure is a failed write
            size = 'a removal' if value is None else f'{len(value)} bytes'
            raise StoreError(f'writing {key} ({size}) failed: {e}')

    def save(self, state: Mapping[str, Any]) -> None:
        """Write what changed: the start record once, changed trials, the head last."""
        start = json.dumps({k: state.get(k) for k in START_FIELDS})
        if self._start_of != state['id']:
            self._write(START_KEY, start)
            self._start_of = state['id']
            self._trials = []
        if state['state'] not in ENDED and self._originals_of != state['id']:
            self._write(ORIGINALS_KEY, start)
            self._originals_of = state['id']
        trials = [json.dumps(t) for t in state['trials']]
        for i, t in enumerate(trials):
            if i >= len(self._trials) or self._trials[i] != t:
                self._write(TRIAL_KEY.format(i), t)
                self._trials[i:i + 1] = [t]
        head = {k: v for k, v in state.items() if k not in START_FIELDS and k != 'trials'}
        head.update(version=STATE_VERSION, id=state['id'], n_trials=len(trials))
        self._write(HEAD_KEY, json.dumps(head))
        if state['state'] in ENDED and self._originals_of:
            # the head says it ended: nothing is left to restore
            self._write(ORIGINALS_KEY, None)
            self._originals_of = ''

    def load(self) -> Optional[Dict[str, Any]]:
        """The saved session, None when there is none; ValueError when unreadable."""
        raw = self._get(HEAD_KEY)
        if not raw:
            return None
        head = json.loads(raw)
        if not isinstance(head, dict):
            raise ValueError('session head is not a record')
        if head.get('version') == 1:
            return migrate_v1(head)
        if head.get('version') != STATE_VERSION:
            raise ValueError(f'session state has an unknown version {head.get("version")!r}')
        start = self.load_start()
        if start is None or start.get('id') != head.get('id'):
            raise ValueError('session start record is missing or of another session')
        trials = []
        for i in range(int(head['n_trials'])):
            raw_trial = self._get(TRIAL_KEY.format(i))
            if raw_trial is None:
                raise ValueError(f'session trial {i} is missing')
            trials.append(raw_trial)
        state = dict(head, **start)
        del state['n_trials']
        state['trials'] = [json.loads(t) for t in trials]
        self._start_of = state['id']
        self._originals_of = '' if state['state'] in ENDED else state['id']
        self._trials = trials
        return state

    def _load_record(self, key: str) -> Optional[Dict[str, Any]]:
        raw = self._get(key)
        if not raw:
            return None
        record = json.loads(raw)
        if not isinstance(record, dict):
            raise ValueError(f'{key} is not a record')
        return record

    def load_start(self) -> Optional[Dict[str, Any]]:
        """The start record (None if absent); ValueError when unreadable."""
        return self._load_record(START_KEY)

    def load_originals(self) -> Optional[StartRecord]:
        """The start record of a session that may have changed the canary and
        has not ended (None: nothing to restore); ValueError when unreadable."""
        record = self._load_record(ORIGINALS_KEY)
        if record is not None and set(record) != set(START_FIELDS):
            raise ValueError(f'{ORIGINALS_KEY} does not hold a start record')
        return cast(Optional[StartRecord], record)

    def keep_corrupt(self, raw: str) -> None:
        """Set an unreadable head aside (where the admin can read it) and drop it."""
        self._write(HEAD_KEY + '.corrupt', raw)
        self._write(HEAD_KEY, None)


# ---------------------------------------------------------------- rollouts

ROLLOUT_KEY = 'rollout'
ROLLOUT_OSDS_KEY = 'rollout.osds.{}'
ROLLOUT_VERSION = 1
# OSD records a value: each is small (its option strings are indices into the head's)
ROLLOUT_CHUNK = 200
# who (osd/class:ssd, osd.3) -> option -> value (None: none set there)
Masks = Dict[str, Dict[str, Optional[str]]]


class RolloutOsd(TypedDict):
    """An OSD of a rollout, in restart order."""
    osd: int
    host: str
    status: str  # pending | restarting | done | failed
    # before the rollout changed anything: what the mon gave it (options,
    # annex), and what its process ran ('running')
    before: Dict[str, str]
    back_to: str  # revert: what it ran before the apply ('' unknown, or an apply)
    error: str
    put_back: str  # a failed OSD's return to its prior options: '' | done | failed


class RolloutPlan(TypedDict):
    """What `apply` or `revert` will do (rollout_plan.py), as --dry-run shows it."""
    kind: str  # apply | revert
    options: Optional[str]  # apply: the options rolled out
    source: str  # where they come from
    target: str  # the OSDs, in words
    sets: Masks  # what is set at each mask (None: removed), in restart order
    priors: Masks  # what was there before, at every mask the rollout touches
    notes: List[str]  # why the plan sets its values where it does
    osds: List[RolloutOsd]
    of: Optional[str]  # revert: the id of the rollout it undoes


class RolloutState(RolloutPlan, RestartState):
    """A persisted rollout (ROLLOUT_VERSION)."""
    version: int
    id: str
    state: str  # running | done | aborted | failed
    phase: str  # rollout.Phase
    message: str
    error: str
    abort: bool  # abort asked: stop after the OSD in flight
    changed: bool  # the config has been (or is being) changed
    current: Optional[int]  # the OSD in flight: its index in osds
    started: float
    phase_started: float
    ended: Optional[float]
    paused_since: Optional[float]
    cluster_errors: int
    settings: Dict[str, float]  # rollout.RolloutSettings


def _pack(masks: Masks, index: Callable[[str], int]) -> Dict[str, Dict[str, Optional[int]]]:
    return {who: {name: None if v is None else index(v) for name, v in names.items()}
            for who, names in masks.items()}


def _unpack(packed: Dict[str, Dict[str, Optional[int]]], values: List[str]) -> Masks:
    return {who: {name: None if i is None else values[i] for name, i in names.items()}
            for who, names in packed.items()}


class RolloutStore:
    """The last rollout in the mgr's KV store; every write checked, as the session's."""

    def __init__(self, get: Get, put: Put) -> None:
        self._get = get
        self._put = put
        self._written: Dict[str, str] = {}  # what each key holds now (written or read)
        # the option strings of rollout `_id`: appended to, never reordered, so
        # that OSD records written before a head that did not follow still read
        self._id = ''
        self._values: List[str] = []

    def _write(self, key: str, value: Optional[str]) -> None:
        if value is not None and len(value) > MAX_VALUE:
            raise StoreError(f'{key} would be {len(value)} bytes, over {MAX_VALUE}')
        try:
            self._put(key, value)
        except Exception as e:  # any failure is a failed write
            size = 'a removal' if value is None else f'{len(value)} bytes'
            raise StoreError(f'writing {key} ({size}) failed: {e}')

    def _write_changed(self, key: str, value: str) -> None:
        if self._written.get(key) != value:
            self._write(key, value)
            self._written[key] = value

    def save(self, state: Mapping[str, Any]) -> None:
        """Write what changed: the OSD records, then the head."""
        if state['id'] != self._id:
            self._id, self._values = state['id'], []
        values = list(self._values)
        seen = {v: i for i, v in enumerate(values)}

        def index(v: str) -> int:
            if v not in seen:
                seen[v] = len(values)
                values.append(v)
            return seen[v]
        osds = [dict(o, before={k: index(v) for k, v in o['before'].items()})
                for o in state['osds']]
        config = {'sets': _pack(state['sets'], index), 'priors': _pack(state['priors'], index)}
        chunks = [json.dumps({'id': state['id'], 'osds': osds[i:i + ROLLOUT_CHUNK]})
                  for i in range(0, len(osds), ROLLOUT_CHUNK)]
        for i, chunk in enumerate(chunks):
            self._write_changed(ROLLOUT_OSDS_KEY.format(i), chunk)
        head = {k: v for k, v in state.items() if k not in ('sets', 'priors', 'osds')}
        head.update(version=ROLLOUT_VERSION, n_chunks=len(chunks), values=values, **config)
        self._write_changed(ROLLOUT_KEY, json.dumps(head))
        self._values = values

    def load(self) -> Optional[Dict[str, Any]]:
        """The saved rollout, None when there is none; ValueError when unreadable."""
        raw = self._get(ROLLOUT_KEY)
        if not raw:
            return None
        head = json.loads(raw)
        if not isinstance(head, dict) or head.get('version') != ROLLOUT_VERSION:
            raise ValueError('rollout state has an unknown format')
        values = head.pop('values')
        osds: List[Dict[str, Any]] = []
        raw_chunks = []
        for i in range(int(head.pop('n_chunks'))):
            raw_chunk = self._get(ROLLOUT_OSDS_KEY.format(i))
            chunk = json.loads(raw_chunk) if raw_chunk else None
            if not isinstance(chunk, dict) or chunk.get('id') != head.get('id'):
                raise ValueError(f'rollout OSD records {i} are missing or of another rollout')
            raw_chunks.append(str(raw_chunk))
            osds += chunk['osds']
        state = dict(head, sets=_unpack(head['sets'], values),
                     priors=_unpack(head['priors'], values),
                     osds=[dict(o, before={k: values[v] for k, v in o['before'].items()})
                           for o in osds])
        self._id, self._values = str(state['id']), list(values)
        self._written = {ROLLOUT_KEY: raw}
        self._written.update({ROLLOUT_OSDS_KEY.format(i): c for i, c in enumerate(raw_chunks)})
        return state

    def keep_corrupt(self, raw: str) -> None:
        """Set an unreadable head aside (where the admin can read it) and drop it."""
        self._write(ROLLOUT_KEY + '.corrupt', raw)
        self._write(ROLLOUT_KEY, None)
        self._written.pop(ROLLOUT_KEY, None)
