"""The harness the session's tests run on: a session on a fake cluster and a
fake clock (no sleeps), and the read helpers the tests use, so that a test
says what it pins, not where the state keeps it.

A test reads a session as the module serves it (status, view, history, best:
below).  A test about the persisted state itself (what a failover reloads, a
rescue restores from, a state injected to test resumption) reads what was
saved through the helpers under "a saved state", which alone know its shape.
"""
import json
import math
from dataclasses import MISSING, fields
from typing import Any, Dict, List, Optional

from fake_cluster import FakeClock, FakeCluster
from rocks_autotune import panel, report, store, views
from rocks_autotune.canary import SAVED
from rocks_autotune.confirm import Arm, ArmResult, ConfirmRecord, Verdict
from rocks_autotune.measurement_plan import SEQUENTIAL, MeasurementPlan
from rocks_autotune.session_settings import Params
from rocks_autotune.paired_stats import Summary
from rocks_autotune.perf_counters import Measurement
from rocks_autotune.session import Session, Settings
from rocks_autotune.views import View
from rocks_autotune.workload import OSD_BENCH

# one candidate confirmed in one round (it can recommend nothing: see the
# confirmation's own tests for sessions that do)
# the mechanics' tests: two baseline runs (one A/A pair), a one-round confirmation
FAST = dict(warmup=2.0, restart_timeout=30.0, manual_restart_timeout=60.0,
            unhealthy_timeout=60.0, bench_chunk_seconds=2.0, baseline_runs=2,
            confirm_candidates=1, confirm_rounds=1, steady_window_limit=120.0,
            # the fake's writes are instant: more threads only cost their starts
            client_threads=2)


# ------------------------------------------------ the session as the module serves it
# The tests read a session as the module serves it: `status -f json`
# (Session.status), its View, `history -f json` and `best`, never through the
# persisted record, whose shape is the session's own.  A test about the
# persisted state itself (what a failover reloads, a corrupted record, a
# state injected to test resumption) reads what was saved (Harness.persisted)
# through the helpers under "a saved state".

def status(s: Session) -> Dict[str, Any]:
    """`ceph rocks-autotune status -f json`."""
    return s.status()


def view(s: Session) -> View:
    """What the serve thread publishes of a session for the module and the panel."""
    return s.view()


def trials(s: Session) -> List[Dict[str, Any]]:
    """`ceph rocks-autotune history -f json` (module.cmd_history: the trials of
    the panel's snapshot of the session's view)."""
    return [t.to_json() for t in panel.Snapshot.of(view(s)).trials]


def verdict(s: Session) -> Dict[str, Any]:
    """The confirmation's verdict so far, as `status -f json` shows it."""
    result: Dict[str, Any] = status(s)['confirmation']['result']
    return result


def phase(s: Session) -> str:
    return view(s).phase


def current(s: Session) -> Dict[str, Any]:
    """The measurement in flight, as `status -f json` shows it."""
    cur: Dict[str, Any] = status(s)['current']
    return cur


def best_summary(s: Session) -> Optional[Dict[str, Any]]:
    """What `ceph rocks-autotune best -f json` answers (module.cmd_best: from
    the panel's snapshot), None where it answers 'no answer'."""
    return report.best_summary(panel.Snapshot.of(view(s)).state)


def best_text(s: Session) -> str:
    """What plain `ceph rocks-autotune best` answers once there is an answer."""
    state = panel.Snapshot.of(view(s)).state
    assert state is not None
    assert views.final_answer(state) is not None
    return report.best_text(state)


def status_text(s: Session, detail: bool = False) -> str:
    """What plain `ceph rocks-autotune status` (--detail) answers (module.cmd_status:
    the panel's snapshot of the session's view)."""
    snap = panel.Snapshot.of(view(s))
    return report.status_text(snap.state, snap.status, detail, time=snap.time)


def measurement(**figures: Any) -> Measurement:
    """A window's measurement with `figures`, the others None (those with a
    default, it): what a test of the statistics gives them."""
    return Measurement(**dict({f.name: None for f in fields(Measurement)
                               if f.default is MISSING}, **figures))


def an_arm(arm: str = 'c1', trial: int = 1, verdict: str = 'passes', ratio: float = 1.0,
           **fields: Any) -> ArmResult:
    """An arm's result as a test sets it up: its figures `ratio` in each of 5 rounds."""
    fig = Summary.of([math.log(ratio)] * 5)
    return ArmResult(**dict(dict(
        arm=arm, verdict=verdict, why='', objective=fig, write_amp=fig, kv_sync_lat=fig,
        trial=trial, mean=0.0, predicted=None, restart_seconds=None, objective_verdict=verdict,
        steady=None), **fields))


def a_confirmation(*arms: ArmResult, record_arms: Optional[List[Arm]] = None,
                   **named: Any) -> ConfirmRecord:
    """A confirmation and its verdict as a test sets them up: the fields it names
    (the verdict's or the record's), the others a finished IOPS confirmation's."""
    mine = {f.name for f in fields(Verdict)}
    result = Verdict(**dict(dict(
        recommended=None, complete=True, rounds_done=5, baseline_restart_seconds=None,
        arms=list(arms), seen=None), **{k: v for k, v in named.items() if k in mine}))
    return ConfirmRecord(**dict(dict(
        arms=record_arms or [], rounds=5, margin=0.03, objective='iops', direction='higher',
        level=0.9, measurement_plan=MeasurementPlan(SEQUENTIAL), steady_pairs=1,
        steady_window_limit=60.0, budget=1.1, window=10.0, result=result),
        **{k: v for k, v in named.items() if k not in mine}))


# ------------------------------------------------ a saved state
# What a new mgr reloads, or a rescue restores from, read for what it says;
# only these helpers know where the state keeps it (store.py's records).

State = Dict[str, Any]


def canary_record(state: State) -> Dict[str, Any]:
    """The canary's part of a persisted state (how to restore it, its restart,
    its noout, its window)."""
    rec: Dict[str, Any] = state['canary']
    return rec


def saved_phase(state: State) -> str:
    """The phase a new mgr resumes in."""
    return str(state['phase'])


def measuring(state: State) -> Optional[str]:
    """What the trial in flight measures (its kind: baseline, candidate,
    confirm); None between trials."""
    cur = state['current']
    return None if cur is None else str(cur['kind'])


def kept_reading(state: State) -> bool:
    """The trial in flight keeps its window's reading, not yet recorded."""
    cur = state['current']
    return cur is not None and bool(cur['measurement'])


def rewound(state: State, n: int) -> State:
    """The state as it was with its first n trials recorded and none in
    flight (a state injected to test resumption)."""
    return dict(state, current=None, trials=state['trials'][:n])


def saved_originals(state: State) -> Dict[str, Optional[str]]:
    """The originals the session restores the canary to."""
    originals: Dict[str, Optional[str]] = canary_record(state)['originals']
    return originals


def rescue_originals(state: State) -> Dict[str, Optional[str]]:
    """The originals a rescue restores the canary to: the start record's,
    which stay readable when the head is not."""
    originals: Dict[str, Optional[str]] = state['originals']
    return originals


def may_run_candidate(state: State) -> bool:
    """The canary's process may run a candidate: a restore restarts it."""
    return bool(canary_record(state)['running_dirty'])


def noout_is_ours(state: State) -> bool:
    """The noout on the canary is the session's, to clear."""
    return bool(canary_record(state)['noout_ours'])


def measuring_a_candidate(s: Session) -> bool:
    return phase(s) == 'measure' and current(s)['kind'] == 'candidate'


class Harness:
    def __init__(self, **settings: Any) -> None:
        self.clock = FakeClock()
        self.cluster = FakeCluster(self.clock)
        self.settings = Settings(**dict(FAST, **settings))
        self.saved: List[str] = []
        self.session: Optional[Session] = None

    def save(self, state: Dict[str, Any]) -> None:
        self.saved.append(json.dumps(state.to_json()))

    def persisted(self, i: int = -1) -> Dict[str, Any]:
        """The persisted state itself, as saved (the last: what a new mgr
        reloads).  Only for the tests about it: the others read the session
        as the module serves it."""
        state: Dict[str, Any] = json.loads(self.saved[i])
        return state

    def config_of(self, osd: int) -> Dict[str, Optional[str]]:
        return {n: self.cluster.config_get_own(f'osd.{osd}', n) for n in SAVED}

    def start(self, **params: Any) -> Session:
        """A session on `osd`."""
        # the session's mechanics under the quick load (the client load's own: test_client_load)
        params.setdefault('workload', OSD_BENCH)
        params.setdefault('trials', 3)
        params.setdefault('duration', 10.0)
        self.session = Session.start(self.cluster, Params(**params), self.settings, self.save,
                                     self.clock)
        return self.session

    def run(self, until: Any = None, max_steps: int = 5000) -> Session:
        s = self.session
        assert s is not None
        for _ in range(max_steps):
            if not s.active or (until is not None and until(s)):
                return s
            self.clock.advance(s.step())
        raise AssertionError(f'session did not finish: {self.phase} {self.message}')

    def reload(self) -> Session:
        """What a new active mgr does: rebuild from the last saved state."""
        state = store.SessionState.from_json(self.persisted())
        Session.check_state(state)
        self.session = Session(state, self.cluster, self.save, self.clock)
        self.session.resume_after_failover()
        return self.session

    # the session as the module serves it (see status() above)
    def _s(self) -> Session:
        assert self.session is not None
        return self.session

    @property
    def status(self) -> Dict[str, Any]:
        return status(self._s())

    @property
    def state(self) -> str:
        return view(self._s()).state

    @property
    def phase(self) -> str:
        return phase(self._s())

    @property
    def message(self) -> str:
        return view(self._s()).message

    @property
    def error(self) -> str:
        return str(self.status['error'])

    @property
    def current(self) -> Dict[str, Any]:
        return current(self._s())

    @property
    def trials(self) -> List[Dict[str, Any]]:
        return trials(self._s())


def assert_restored(h: Harness, osd: int, before: Dict[str, Optional[str]]) -> None:
    assert h.config_of(osd) == before
    assert not h.cluster.has_noout(osd)
    assert h.cluster.osds()[osd].up
    # the process runs what the config says, i.e. the originals
    assert h.cluster.running[osd] == h.cluster.config_get(f'osd.{osd}',
                                                          'bluestore_rocksdb_options')
