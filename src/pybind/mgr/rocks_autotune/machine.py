"""The step engine a tuning session and a rollout share: one handler per step,
its move checked against MOVES and made here, the record saved after every step.
Design: doc/dev/internals.rst, dev-internals-machine."""
import logging
import threading
import time
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Set, Tuple, Union

from . import health
from .cluster import ClusterError
from .pause_record import PauseRecord
from .store import StoreError
from .views import ProgressEvent

log = logging.getLogger(__name__)

# failed steps in a row before the job gives up
MAX_CLUSTER_ERRORS = 5


@dataclass(frozen=True)
class Go:
    """A move to `phase` (its message, if any, the job's), the next step
    after `delay` seconds."""
    phase: Enum
    message: str = ''
    delay: float = 0.0


@dataclass(frozen=True)
class Pause:
    """Wait in the phase for what the job cannot change (health, someone
    else's config change, the gate): `said`, then the reasons, is the
    message; `on` and `osd` (the OSD held back, if any) say which health
    check it raises.  A `timed` pause ends after unhealthy_timeout."""
    reasons: List[str]
    said: str = 'paused'
    on: str = 'health'
    osd: Optional[int] = None
    timed: bool = True


@dataclass(frozen=True)
class End:
    """The job, its cleanup done, ends as `ending` (the record's final
    state); the job then says so in `Phases.ended`."""
    ending: str
    message: str = ''
    delay: float = 0.0


# what a handler returns: seconds until the next step in the same phase, or a move
Move = Union[float, Go, Pause, End]
Handler = Callable[[float], Move]


class Head(Protocol):
    """The engine's fields of a job's record: what it reads and moves."""
    id: str
    state: str
    phase: str
    phase_started: float
    message: str
    pause: Optional[PauseRecord]
    cluster_errors: int
    ended: Optional[float]


class Phases:
    """A job's phases: each one's step, and the end of a pause that lasted
    too long."""

    def table(self) -> Dict[Any, Handler]:
        """Each phase's step: (now) -> its move."""
        raise NotImplementedError

    def timed_out(self, pause: Pause) -> Move:
        """A timed pause lasted unhealthy_timeout: the move that ends it."""
        raise NotImplementedError

    def ended(self, end: End) -> None:
        """The job has ended as `end` says (its state set): what it says then."""


class Machine:
    kind = ''                                     # 'session', 'rollout': health and logs
    MOVES: Mapping[Any, Tuple[Any, ...]] = {}     # phase -> the phases it may move to
    END: Enum                                     # the phase of an ended job
    ACTIVE: Tuple[str, ...] = ()                  # the record's states in which it steps
    settings: Any                                 # the job's: poll, unhealthy_timeout
    phases: Phases

    def __init__(self, state: Any, save: Callable[[Any], None],
                 clock: Callable[[], float] = time.time) -> None:
        # the record: the session's SessionState, the rollout's RolloutRecord
        self.head: Head = state
        self._save = save
        self.clock = clock
        self.write_error = ''  # why the last save failed ('' it did not)
        # requests from the command thread, taken by the next step
        self._requests_lock = threading.Lock()
        self._requests: Set[str] = set()

    # -- what a job says

    def _phase(self) -> Enum:
        """The record's phase as the job's enum."""
        raise NotImplementedError

    def _take(self, requests: Set[str]) -> None:
        """Apply the commands' requests to the record."""

    def _interrupt(self, now: float) -> Optional[Move]:
        """Before the phase's handler (an abort): the step's move, or None."""
        return None

    def _after_error(self) -> None:
        """A step failed: drop what it may have left half done in memory."""

    def progress_event(self) -> ProgressEvent:
        """The job's progress event in `ceph -s`."""
        raise NotImplementedError

    def _give_up(self, error: str) -> Move:
        """Repeated failed steps: the move of the job's own way out."""
        raise NotImplementedError

    # -- the engine

    @property
    def active(self) -> bool:
        return self.head.state in self.ACTIVE

    def health_checks(self) -> Dict[str, Any]:
        return health.job_checks(self.kind, self.head, self.active, self.write_error)

    def resume_after_failover(self) -> None:
        """A new mgr took over: a pause is timed again on its own clock."""
        if self.head.pause is not None:
            self.head.pause = replace(self.head.pause, since=self.clock())

    def note_internal_error(self, e: Exception) -> None:
        """A step raised past its own handling (a bug): say so in the message."""
        self.head.message = f'internal error: {e}'

    def request(self, what: str) -> None:
        with self._requests_lock:
            self._requests.add(what)

    def step(self) -> float:
        """Do one piece of work; return seconds until the next step."""
        if not self.active:
            return 60.0
        st = self.head
        wait = max(self.settings.poll, 10.0)
        if self.write_error and not self._persist():
            return wait
        with self._requests_lock:
            requests, self._requests = self._requests, set()
        self._take(requests)
        try:
            now = self.clock()
            move = self._interrupt(now)
            if move is None:
                phase = self._phase()
                handler = self.phases.table().get(phase)
                if handler is None:
                    raise ValueError(f'no step in phase {phase.value!r}')
                move = handler(now)
            delay = self._make(move, now)
            st.cluster_errors = 0
        except StoreError:
            # a save inside the step (before a change): nothing after it ran
            delay = 0.0
        except Exception as e:
            # a cluster call that failed, or a bug: retry a few times, then give up
            if not isinstance(e, ClusterError):
                log.exception('%s step failed in phase %s', self.kind, st.phase)
            self._after_error()
            st.cluster_errors += 1
            st.message = f'step failed ({st.cluster_errors}x): {e}'
            if st.cluster_errors >= MAX_CLUSTER_ERRORS:
                st.cluster_errors = 0
                self._make(self._give_up(f'giving up after repeated errors: {e}'), self.clock())
            delay = 5.0
        return delay if self._persist() else wait

    def _make(self, move: Move, now: float) -> float:
        """Make the handler's move; the seconds until the next step."""
        st = self.head
        if isinstance(move, Pause):
            since = now if st.pause is None else st.pause.since
            if move.timed and now - since > self.settings.unhealthy_timeout:
                return self._make(self.phases.timed_out(move), now)
            st.pause = PauseRecord(move.on, move.reasons, move.osd, since)
            st.message = f'{move.said}: ' + '; '.join(move.reasons)
            return max(self.settings.poll, 5.0)
        st.pause = None
        if isinstance(move, Go):
            self._enter(move.phase, move.message)
            return move.delay
        if isinstance(move, End):
            self._enter(self.END, move.message)
            st.state = move.ending
            st.ended = self.clock()
            self.phases.ended(move)
            return move.delay
        return move

    def _enter(self, phase: Enum, message: str = '') -> None:
        old = self._phase()
        if phase != old and phase not in self.MOVES[old]:
            raise AssertionError(f'no move from {old.value} to {phase.value}')
        self.head.phase = phase.value
        self.head.phase_started = self.clock()
        if message:
            self.head.message = message

    def _persist(self) -> bool:
        """Save the record; on a failed write, keep why and say so."""
        try:
            self._save(self.head)
        except StoreError as e:
            self.write_error = str(e)
            self.head.message = f'paused: cannot save the {self.kind} state: {e}'
            return False
        self.write_error = ''
        return True
