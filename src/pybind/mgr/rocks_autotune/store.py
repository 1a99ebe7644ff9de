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


class _Head(TypedDict):
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
    running_dirty: bool  # the process may run a candidate
    manual: bool
    noout_ours: bool
    paused_since: Optional[float]
    restart: Optional[RestartRecord]
    window: Optional[Dict[str, Any]]  # trial.Window's running totals
    iops_estimate: Optional[float]
    alerts: Dict[str, Dict[str, Any]]
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
