"""Where a session (and the last rollout) is kept: the mgr's KV store, in values
that stay small, every write checked.
Design: doc/dev/internals.rst, dev-internals-store."""
import copy
import json
from contextlib import suppress
from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Type, TypeVar, cast

from .canary_record import CanaryRecord
from .confirm import ConfirmRecord
from .measurement_plan import MeasurementPlan
from .pause_record import PauseRecord
from .record import Record, encode, make
from .session_settings import Params, Settings
from .perf_counters import Baseline
from .power import Noise
from .rollout_record import ROLLOUT_VERSION, Masks, RolloutOsd, RolloutRecord
from .trial import Trial
from .window import SteadyCap
from .workload import ClientRecord

HEAD_KEY = 'session'
START_KEY = 'session.start'
ORIGINALS_KEY = 'session.originals'
# a stop or abort asked of the session or rollout with this id: written before
# the command is acknowledged, so a mgr that takes over after it still obeys
REQUEST_KEY = 'request'


class Ending(str, Enum):
    """How a session ends: its state once ended (set in session._end only)."""
    DONE = 'done'        # ran to its answer
    STOPPED = 'stopped'  # stopped by request, restored
    ABORTED = 'aborted'  # aborted (by request, or by the cluster's state), restored
    FAILED = 'failed'    # restoring the canary could not go on (RESTORE_FAILED says what is left)


ENDED = tuple(e.value for e in Ending)
ACTIVE = ('running', 'stopping', 'restoring')  # a session's states while it steps
TRIAL_KEY = 'session.trial.{}'
CONFIRM_KEY = 'session.confirm'
# well below mon_config_key_max_entry_size (64 KiB): a value this big is a bug
MAX_VALUE = 48 << 10
STATE_VERSION = 12
S = TypeVar('S', bound='StartRecord')


@dataclass
class StartRecord(Record):
    """What a session started with (START_KEY, ORIGINALS_KEY): a rescue's
    whole record."""
    id: str
    params: Params
    reason: str
    originals: Dict[str, Optional[str]]  # canary.Originals
    base_options: str
    annexed: bool
    release_default: str
    sharding: str
    seed: int
    started: float
    settings: Optional[Settings]  # None: unreadable (a rescue runs on the module's)
    noout_at_start: bool  # an admin's noout: not ours to clear
    client_pool: Optional[str]  # the client load's (None: none): a rescue removes its objects

    @property
    def osd(self) -> int:
        """The canary's id: params.osd, chosen before the record is made."""
        return cast(int, self.params.osd)

    def start_json(self) -> Dict[str, Any]:
        """The start record as JSON (a session's: its start fields)."""
        return self.json_of(_START)

    @classmethod
    def from_json(cls: Type[S], saved: Any) -> S:
        try:  # by hand: unreadable settings read as None (a rescue runs on the module's)
            settings: Optional[Settings] = Settings.from_dict(saved['settings'])
        except ValueError:
            settings = None
        # canaries_at_start (before STATE_VERSION 9) copied these fields: a
        # session started before the upgrade is still rescued
        return make(cls, {k: v for k, v in saved.items() if k != 'canaries_at_start'},
                    settings=settings)


_START = tuple(f.name for f in fields(StartRecord))


@dataclass
class SessionState(StartRecord):
    """The persisted session (STATE_VERSION): start record, head, trials, confirmation."""
    settings: Settings  # (Session.check_state: not None)
    state: str  # running | stopping | restoring | done | stopped | aborted | failed
    phase: str  # session.Phase
    phase_started: float
    message: str
    canary: CanaryRecord  # params.osd's
    plan: MeasurementPlan  # how the canary measures a confirmation
    client: Optional[ClientRecord]
    trials: List[Trial] = field(default_factory=list)
    current: Optional[Trial] = None  # the trial in flight
    baseline: Optional[Baseline] = None
    ended: Optional[float] = None
    error: str = ''
    abort: bool = False
    pause: Optional[PauseRecord] = None  # the pause in effect (machine.Pause)
    # a restore that could not go on: what it left, a line each
    restore_failed: Optional[List[str]] = None
    cluster_errors: int = 0
    # someone else's changes that stand at the canary (each once)
    config_changes: List[str] = field(default_factory=list)
    final: Optional[str] = None  # the ending a restore was begun for (Ending)
    other_checks: Optional[List[str]] = None  # others' health checks at the last look (gate.Health)
    confirm: Optional[ConfirmRecord] = None  # the confirmation, once the search is done
    # the baseline's A/A noise and the confirmation's plan at it (power.noise; None: no pair)
    noise: Optional[Noise] = None
    # the most WAL bytes a steady window can write (window.steady_cap; None: no WAL counts)
    steady_cap: Optional[SteadyCap] = None
    # before any candidate is measured (Search._draw_prior): under wear the
    # chance one drawn is feasible, under iops the share whose steady window
    # can reach steady state; None before preconditioning or the WAL rate
    feasible_prior: Optional[float] = None
    reach_prior: Optional[float] = None
    # under wear, the share of those drawn that the WAL limit flushes (their
    # search window runs until their WAL passed it: Search.window_end)
    wal_flushed_prior: Optional[float] = None

    # left out while None: the head's not yet set; the confirmation, kept apart
    OMIT_NONE = ('final', 'other_checks', 'noise', 'steady_cap', 'feasible_prior',
                 'reach_prior', 'wal_flushed_prior', 'confirm')

    def head_json(self) -> Dict[str, Any]:
        """The head as JSON: not the start record, the trials nor the confirmation."""
        return {'version': STATE_VERSION, **self.json_of(_HEAD)}

    def to_json(self) -> Dict[str, Any]:
        """The whole record as JSON (the store spreads it over its keys)."""
        return {'version': STATE_VERSION, **super().to_json()}

    @classmethod
    def from_json(cls, saved: Any) -> 'SessionState':
        """ValueError (TypeError, KeyError): not a record this code wrote
        (Session.check_state checks what its types do not)."""
        if saved.get('version') != STATE_VERSION:
            raise ValueError(f'session state has an unknown version {saved.get("version")!r}')
        return super().from_json({k: v for k, v in saved.items() if k != 'version'})


_HEAD = tuple(f.name for f in fields(SessionState)
              if f.name not in _START + ('trials', 'confirm'))


@dataclass
class Request:
    """A stop or abort a command persisted for job `id` (REQUEST_KEY)."""
    id: str = ''  # '': none, or unreadable
    what: str = 'stop'  # stop | abort

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: Optional[str]) -> 'Request':
        with suppress(ValueError, TypeError):
            return cls(**json.loads(raw or ''))
        return cls()


Get = Callable[[str], Optional[str]]
Put = Callable[[str, Optional[str]], None]


class StoreError(Exception):
    """A write to the mgr's store failed or did not stick."""


class _Store:
    """Values in the mgr's KV store, every write checked."""
    HEAD = ''  # the key that names the others

    def __init__(self, get: Get, put: Put) -> None:
        self._get = get
        self._put = put

    def keep_corrupt(self) -> None:
        """Set an unreadable head aside, where the admin can read it."""
        raw = self._get(self.HEAD)
        if raw:
            self._write(self.HEAD + '.corrupt', raw)
            self._write(self.HEAD, None)

    def _write(self, key: str, value: Optional[str]) -> None:
        if value is not None and len(value) > MAX_VALUE:
            raise StoreError(f'{key} would be {len(value)} bytes, over {MAX_VALUE}')
        try:
            self._put(key, value)  # raises when the mon did not take it
        except Exception as e:  # any failure is a failed write
            size = 'a removal' if value is None else f'{len(value)} bytes'
            raise StoreError(f'writing {key} ({size}) failed: {e}')


class SessionStore(_Store):
    HEAD = HEAD_KEY

    def __init__(self, get: Get, put: Put) -> None:
        super().__init__(get, put)
        self._start_of = ''          # the session whose start record is written
        self._start = ''             # and what it holds
        self._originals_of = ''      # the session whose originals key is there
        self._trials: List[Trial] = []  # what each trial key holds now (copies)
        self._confirm = ''           # what the confirm key holds now

    def save(self, state: SessionState) -> None:
        """Write what changed, the head last.  A new session's first save that
        fails puts the last session's keys back: a refused start changes nothing."""
        if self._start_of == state.id:
            self._save(state)
            return
        keys = (START_KEY, ORIGINALS_KEY, CONFIRM_KEY, HEAD_KEY)
        before = {key: self._get(key) for key in keys}
        cache = (self._start_of, self._start, self._originals_of, self._trials, self._confirm)
        self._trials = []
        try:
            self._save(state)
        except StoreError:
            for key in keys:
                with suppress(Exception):  # the mon refused the new keys, it may refuse these
                    self._put(key, before[key])
            (self._start_of, self._start, self._originals_of, self._trials,
             self._confirm) = cache
            raise

    def _save(self, state: SessionState) -> None:
        start = json.dumps(state.start_json())
        # before the head: a rescue restores from it
        changed = self._start_of != state.id or self._start != start
        if changed:
            self._write(START_KEY, start)
            self._start_of, self._start = state.id, start
        if state.state not in ENDED and (changed or self._originals_of != state.id):
            self._write(ORIGINALS_KEY, start)
            self._originals_of = state.id
        trials = state.trials
        for i, t in enumerate(trials):
            # compared, not serialised: a step seldom changes a trial (one is
            # added, a crash named on one, the wear objective's rejudge)
            if i >= len(self._trials) or self._trials[i] != t:
                self._write(TRIAL_KEY.format(i), json.dumps(t.to_json()))
                self._trials[i:i + 1] = [copy.deepcopy(t)]
        # apart from the head, which a step rewrites: the confirmation is its
        # largest part and changes once a window
        confirm = json.dumps({'id': state.id, **(
            {} if state.confirm is None else {'confirm': state.confirm.to_json()})})
        if confirm != self._confirm:
            self._write(CONFIRM_KEY, confirm)
            self._confirm = confirm
        self._write(HEAD_KEY, json.dumps(dict(state.head_json(), id=state.id,
                                              n_trials=len(trials))))
        if state.state in ENDED and self._originals_of:
            # the head says it ended: nothing is left to restore
            self._write(ORIGINALS_KEY, None)
            self._originals_of = ''

    def load(self) -> Optional[SessionState]:
        """The saved session (None: none); ValueError (TypeError, KeyError): unreadable."""
        head = self._load_record(HEAD_KEY)
        if head is None:
            return None
        start = self._load_record(START_KEY)
        if start is None or start.get('id') != head.get('id'):
            raise ValueError('session start record is missing or of another session')
        trials = []
        for i in range(int(head.pop('n_trials'))):
            raw_trial = self._get(TRIAL_KEY.format(i))
            if raw_trial is None:
                raise ValueError(f'session trial {i} is missing')
            trials.append(json.loads(raw_trial))
        raw_confirm = self._get(CONFIRM_KEY) or '{}'
        confirm = json.loads(raw_confirm)
        if not isinstance(confirm, dict) or confirm.get('id') != start['id']:
            raise ValueError('session confirm record is missing or of another session')
        state = SessionState.from_json(dict(head, **start, trials=trials, confirm=confirm.get(
            'confirm')))
        # as loaded: the next save writes only what changed since
        self._confirm = raw_confirm
        self._start_of = state.id
        self._start = json.dumps(state.start_json())
        self._originals_of = '' if state.state in ENDED else state.id
        self._trials = copy.deepcopy(state.trials)
        return state

    def _load_record(self, key: str) -> Optional[Dict[str, Any]]:
        raw = self._get(key)
        if not raw:
            return None
        record = json.loads(raw)
        if not isinstance(record, dict):
            raise ValueError(f'{key} is not a record')
        return record

    def load_originals(self) -> Optional[StartRecord]:
        """The start record of a session that may have changed its canary and
        has not ended (None: nothing to restore); ValueError (TypeError): unreadable."""
        record = self._load_record(ORIGINALS_KEY)
        return None if record is None else StartRecord.from_json(record)


# ---------------------------------------------------------------- rollouts

ROLLOUT_KEY = 'rollout'
# a rollout's own keys, beside the head (which names its id): written before
# the head, so a save refused part way leaves the last rollout's record whole
ROLLOUT_OSDS_KEY = 'rollout.{id}.osds.{n}'
ROLLOUT_VALUE_KEY = 'rollout.{id}.value.{n}'
# a revert's are the apply's OSDs, not its own (fewer): kept apart from the records
ROLLOUT_CRASH_KEY = 'rollout.{id}.crash.{n}'
ROLLOUT_CRASH_CHUNK = 2000  # ids of up to 9 digits: 22 KB
# OSD records a value: each is small (its option strings are references to
# value keys, its error cut at MAX_ERROR), so a chunk stays under MAX_VALUE
ROLLOUT_CHUNK = 40
MAX_ERROR = 400
Ref = Callable[[Optional[str]], Optional[int]]  # a string's number among the values


def _record(o: RolloutOsd, state: RolloutRecord, ref: Ref) -> Dict[str, Any]:
    """An OSD record as stored: its strings by reference, its masks' values beside it."""
    who = f'osd.{o.osd}'
    rec = dict(encode(o), error=o.error[:MAX_ERROR],
               before={k: ref(v) for k, v in o.before.items()}, back_to=ref(o.back_to))
    for kind, masks in (('sets', state.sets), ('priors', state.priors)):
        if who in masks:
            rec[kind] = {n: ref(v) for n, v in masks[who].items()}
    return rec


_ROLLOUT_HEAD = tuple(f.name for f in fields(RolloutRecord)
                      if f.name not in ('sets', 'priors', 'osds', 'crash_osds'))


def _head(state: RolloutRecord, ref: Ref) -> Dict[str, Any]:
    """A rollout's head as stored: no OSD list, its strings by reference."""
    head = state.json_of(_ROLLOUT_HEAD)
    head['options'] = ref(state.options)
    for f, saved in zip(state.batch, head['batch']):
        if f.restart is not None:  # its strings may be anyone's, of any length
            saved['restart'] = dict(saved['restart'], expect=ref(f.restart.expect),
                                    ran=ref(f.restart.ran))
    return head


class RolloutStore(_Store):
    """The last rollout in the mgr's KV store, every write checked.

        rollout                     the head: state, phase, flags, pause, the
                                    restarts in flight, n_chunks, n_values,
                                    n_crash, and its id (no list of OSDs)
        rollout.<id>.osds.<n>       ROLLOUT_CHUNK OSD records in restart order,
                                    each with its osd.N's sets and priors
        rollout.<id>.value.<n>      every option string, once, written once
        rollout.<id>.crash.<n>      crash_osds, ROLLOUT_CRASH_CHUNK ids each

    Every value stays under MAX_VALUE at any OSD count and option length (a
    longer string is refused before anything changes).  The head is written
    last, so a rollout whose first save is refused leaves the last one's
    record, which its revert needs, whole (and removes what it wrote); once
    a new head is written, the previous rollout's keys are removed.
    """
    HEAD = ROLLOUT_KEY

    def __init__(self, get: Get, put: Put) -> None:
        super().__init__(get, put)
        self._written: Dict[str, str] = {}  # what each key holds now (written or read)
        # the option strings of rollout `_id`, append-only: value n is written once
        self._id = ''
        self._values: List[str] = []
        self._keys: List[str] = []  # the keys of the record the head names now
        # of rollout `_id`: each chunk's OSD records as last written (copies), crash_osds
        self._saved: List[List[RolloutOsd]] = []
        self._crash: List[int] = []

    def _write_changed(self, key: str, value: str) -> None:
        if self._written.get(key) != value:
            self._write(key, value)
            self._written[key] = value

    def save(self, state: RolloutRecord) -> None:
        """Write what changed: new option strings, the chunks whose OSD records
        changed (compared, not serialised: a step changes few), then the head."""
        rid = state.id
        fresh = rid != self._id
        seen: Dict[str, int] = {} if fresh else {v: i for i, v in enumerate(self._values)}

        def ref(v: Optional[str]) -> Optional[int]:
            return None if v is None else seen.setdefault(v, len(seen))
        osds = state.osds
        if fresh:  # the plan's masks, which no step changes: checked once
            masks = {f'osd.{o.osd}' for o in osds}
            for kind, them in (('sets', state.sets), ('priors', state.priors)):
                stray = set(them) - masks
                if stray:  # the record keeps masks per OSD: anything else is a bug
                    raise StoreError(f'rollout {kind} names masks of no OSD of it: '
                                     f'{sorted(stray)}')
        saved = [] if fresh else self._saved
        writes: Dict[str, str] = {}
        chunks: List[List[RolloutOsd]] = []  # what each chunk holds once written (copies)
        for n, i in enumerate(range(0, len(osds), ROLLOUT_CHUNK)):
            part = osds[i:i + ROLLOUT_CHUNK]
            if n < len(saved) and saved[n] == part:
                chunks.append(saved[n])
                continue
            chunks.append([replace(o, before=dict(o.before)) for o in part])
            writes[ROLLOUT_OSDS_KEY.format(id=rid, n=n)] = json.dumps(
                {'id': rid, 'osds': [_record(o, state, ref) for o in part]})
        crash = state.crash_osds
        n_crash = -(-len(crash) // ROLLOUT_CRASH_CHUNK)
        if fresh or crash != self._crash:
            for n, i in enumerate(range(0, len(crash), ROLLOUT_CRASH_CHUNK)):
                writes[ROLLOUT_CRASH_KEY.format(id=rid, n=n)] = json.dumps(
                    {'id': rid, 'osds': crash[i:i + ROLLOUT_CRASH_CHUNK]})
        head = _head(state, ref)
        values = list(seen)  # every string referred to, by its number
        head.update(version=ROLLOUT_VERSION, n_chunks=len(chunks), n_values=len(values),
                    n_crash=n_crash)
        for v in values:
            if len(v) > MAX_VALUE:  # before anything is written
                raise StoreError(f'an option string of {len(v)} bytes is over {MAX_VALUE}, '
                                 'the most one value of the store holds')
        keys = [ROLLOUT_VALUE_KEY.format(id=rid, n=i) for i in range(len(values))]
        writes = {**dict(zip(keys, values)), **writes}  # the strings first: chunks name them
        keys += [ROLLOUT_OSDS_KEY.format(id=rid, n=i) for i in range(len(chunks))]
        keys += [ROLLOUT_CRASH_KEY.format(id=rid, n=i) for i in range(n_crash)]
        self._commit(rid, keys, writes, json.dumps(head))
        self._values, self._crash, self._saved = values, list(crash), chunks

    def _commit(self, rid: str, keys: List[str], writes: Dict[str, str],
                raw_head: str) -> None:
        """Write `writes`, then the head; a first save refused removes its
        `keys`; the previous rollout's keys go once the head no longer names them."""
        try:
            for key, v in writes.items():
                self._write_changed(key, v)
            self._write_changed(ROLLOUT_KEY, raw_head)
        except StoreError:
            if rid != self._id:  # refused at its first save: its keys go
                for key in keys:
                    self._written.pop(key, None)
                    with suppress(Exception):  # the mon refused the keys, it may refuse this
                        self._put(key, None)
            raise
        mine = set(keys)
        old = [k for k in self._keys if k not in mine]
        self._id, self._keys = rid, keys
        for key in old:  # the previous rollout's: the head no longer names them
            # one left over is harmless, and dropped with the next rollout's
            with suppress(StoreError):
                self._write(key, None)
            self._written.pop(key, None)

    def load(self) -> Optional[RolloutRecord]:
        """The saved rollout (None: none); ValueError (TypeError): unreadable."""
        raw = self._get(ROLLOUT_KEY)
        if not raw:
            return None
        head = json.loads(raw)
        if not isinstance(head, dict) or head.get('version') != ROLLOUT_VERSION:
            raise ValueError('rollout state has an unknown format')
        rid = str(head.get('id'))
        keys = [ROLLOUT_VALUE_KEY.format(id=rid, n=i) for i in range(int(head.pop('n_values')))]
        values = []
        for key in keys:
            v = self._get(key)
            if v is None:
                raise ValueError(f'rollout value {key} is missing')
            values.append(v)
            self._written[key] = v

        def val(i: Optional[int]) -> Optional[str]:
            return None if i is None else values[i]
        osds: List[Dict[str, Any]] = []
        sets: Masks = {}
        priors: Masks = {}
        for i in range(int(head.pop('n_chunks'))):
            for rec in self._chunk(ROLLOUT_OSDS_KEY.format(id=rid, n=i), rid, keys):
                who = f'osd.{rec["osd"]}'
                for kind, into in (('sets', sets), ('priors', priors)):
                    if kind in rec:
                        into[who] = {n: val(v) for n, v in rec.pop(kind).items()}
                osds.append(dict(rec, before={k: val(v) for k, v in rec['before'].items()},
                                 back_to=val(rec['back_to']) or ''))
        crash = [osd for i in range(int(head.pop('n_crash')))
                 for osd in self._chunk(ROLLOUT_CRASH_KEY.format(id=rid, n=i), rid, keys)]
        state = dict(head, sets=sets, priors=priors, osds=osds, crash_osds=crash,
                     options=val(head['options']))

        def restart(rec: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
            return None if rec is None else dict(rec, expect=val(rec['expect']),
                                                 ran=val(rec['ran']) or '')
        state['batch'] = [dict(f, restart=restart(f.get('restart'))) for f in head['batch']]
        record = RolloutRecord.from_json(state)
        # the next save compares every chunk with what is stored (as written)
        self._id, self._values, self._keys, self._saved = rid, values, keys, []
        self._crash = crash
        self._written[ROLLOUT_KEY] = raw
        return record

    def _chunk(self, key: str, rid: str, keys: List[str]) -> List[Any]:
        """What one chunk of rollout `rid` holds (ValueError: missing, or another's)."""
        raw = self._get(key)
        chunk = json.loads(raw) if raw else None
        if not isinstance(chunk, dict) or chunk.get('id') != rid:
            raise ValueError(f'rollout chunk {key} is missing or of another rollout')
        keys.append(key)
        self._written[key] = str(raw)
        return list(chunk['osds'])
