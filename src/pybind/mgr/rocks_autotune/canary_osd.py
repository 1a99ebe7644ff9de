"""What a session does to one canary OSD: its trial's config at osd.N, its
gated restarts (restart.py), its window (window.py), the watch for someone
else's config changes (canary.py) and its restore, on its own record
(canary_record.CanaryRecord); the trial in flight comes with each call.
"""
import logging
from contextlib import suppress
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, List, Optional, Set

from .canary import STATS_OPTIONS, Canary, ours
from .cluster import Cluster, ClusterError
from .confirm import BASELINE
from .session_settings import Params, Settings
from .measurement_plan import SPLIT
from .placement import pg_of
from .restart import Restarter
from .canary_record import CanaryRecord
from .trial import Trial
from .window import Precondition, Window
from .workload import (BENCH_LIMIT_OPTION, BENCH_LIMIT_VALUE, CLIENT, NAMESPACE, OSD_BENCH,
                       LIVE, BenchWorkload, ClientRecord, ClientWorkload, ReadProbe, Workload,
                       client_objects, pg_seed)

log = logging.getLogger(__name__)


def runs_candidate(cur: Trial) -> bool:
    """The trial sets a candidate's options (else the canary's own run)."""
    return cur.kind == 'candidate' or (cur.kind == 'confirm' and cur.arm != BASELINE)


@dataclass(frozen=True)
class SessionLoad:
    """The session's client load record (None: none runs), id and seed
    (object names, random stream)."""
    client: Optional[ClientRecord]
    id: str
    seed: int


class CanaryOsd:
    def __init__(self, cluster: Cluster, osd: int, rec: CanaryRecord, load: SessionLoad,
                 params: Params, settings: Settings, save: Callable[[], None],
                 clock: Callable[[], float]) -> None:
        self.cluster, self.osd, self.rec, self.load = cluster, osd, rec, load
        self.params, self.settings, self.clock = params, settings, clock
        self.config = Canary(cluster, osd)
        self.restarter = Restarter(cluster, osd, self.rec, save,
                                   settings.restart_timeout, settings.manual_restart_timeout,
                                   single_copy_ok=params.allow_single_copy)
        self.bench = (BenchWorkload(cluster, osd, object_size=settings.bench_object_size,
                                    object_num=settings.bench_object_num,
                                    chunk_seconds=settings.bench_chunk_seconds)
                      if params.workload == OSD_BENCH else None)
        self.precondition = (Precondition(cluster, osd, lambda: self.client,
                                          settings.precondition_limit, self.rec)
                             if params.workload == CLIENT else None)
        self.window = Window(cluster, osd, None if params.workload == LIVE else self._load,
                             settings, params.duration, self.rec)

    # ------------------------------------------------------------ its load

    def _load(self) -> Workload:
        """The window's load: the osd bench, or the client load."""
        return self.client if self.bench is None else self.bench

    @cached_property
    def client(self) -> ClientWorkload:
        """The client load, built on its first use: hashing its names and
        opening its pool stay off the path that loads a session."""
        c, sid = self.load.client, self.load.id[:8]
        if c is None or c.count is None:  # a rescue's runs no load
            raise ValueError('a client session without its client record')
        st = self.settings
        names = client_objects(sid, c.count, c.pg_num, c.seeds)
        # the split design's group R (session_start.design_of), as many objects
        ref = client_objects(f'{sid}r', c.count, c.pg_num,
                             c.ref_seeds or []) if c.design == SPLIT else []
        return ClientWorkload(self.cluster.client_io(c.pool, NAMESPACE), names,
                              st.client_object_size, in_flight=st.client_threads,
                              chunk_seconds=st.bench_chunk_seconds, seed=self.load.seed,
                              clock=self.clock, reference=ref)

    def read_probe(self, seconds: float) -> Optional[ReadProbe]:
        """A chunk of ClientWorkload.read_probe over the objects whose PG's
        primary is the canary: a read goes to the primary alone, so the others
        would time other OSDs."""
        c = self.load.client
        if self.params.workload != CLIENT or c is None:
            raise ValueError('a read probe without a client load')
        pools = {p.id for p in self.cluster.pool_states().values() if p.name == c.pool}
        led = {pg_seed(pg) for pg in self.cluster.pgs()
               if pg.pool in pools and pg.acting[:1] == [self.osd]}
        objects = [o for o in self.client.objects if pg_of(o, c.pg_num, NAMESPACE) in led]
        return self.client.read_probe(seconds, objects)

    def precondition_due(self) -> Optional[Precondition]:
        """The client load that writes its DB into a steady state, until it has."""
        pre = self.rec.precondition
        return None if pre is not None and pre.done else self.precondition

    # ------------------------------------------------------------ its config

    def prepare(self) -> None:
        """Before the first trial: an osd bench session's bench limit, and
        RocksDB's statistics from the first restart on."""
        if self.params.workload == OSD_BENCH:
            self.config.set_bench_limit(BENCH_LIMIT_VALUE)
        self.config.collect_rocksdb_stats()

    def foreign(self, mine: Optional[Trial] = None) -> Set[str]:
        """Someone else's config changes since the start, kept in
        `config_changes`; the names at osd.N they hold (none for a rescue,
        which does not know what was there).  `mine`: the trial in flight,
        whose candidate may be set there (none in a recovery or a restore)."""
        rec = self.rec
        if rec.config_seen is None:
            return set()
        applied = [o for o in (rec.last_applied, mine.options if mine is not None
                               and runs_candidate(mine) else None) if o is not None]
        rec.config_changes, held = self.config.foreign(rec.config_seen, ours(
            rec.originals, applied, rec.annexed, self.params.workload == OSD_BENCH))
        return held

    def config_changes(self, mine: Optional[Trial]) -> List[str]:
        """Someone else's changes that stand now (the candidates embed the
        base of the start: a trial's restart waits on them)."""
        self.foreign(mine)
        return self.rec.config_changes

    def set_up(self, trial: Trial, now: float) -> None:
        """Its trial's config at the mask (a candidate's, or the originals),
        and its restart recorded."""
        if runs_candidate(trial):
            self.rec.last_applied = trial.options
            self.config.apply(trial.options, self.rec.annexed)
        else:
            self._originals(set())
        self._begin('candidate' if runs_candidate(trial) else 'baseline', now)

    def _begin(self, purpose: str, now: float) -> None:
        self.rec.restarted = False
        self.restarter.begin(purpose, now)

    def _originals(self, held: Set[str]) -> None:
        """Its originals, as a baseline or a recovery runs them, but for the
        names someone else holds and what `prepare` set: every window, the
        baseline's too, runs with those until the session's end."""
        ours = set(STATS_OPTIONS) | ({BENCH_LIMIT_OPTION} if self.params.workload == OSD_BENCH
                                     else set())
        self.config.restore(self.rec.originals, held | ours)

    def recover(self, now: float) -> None:
        """A failed trial's recovery: the originals (leaving someone else's
        change in place: the next trial pauses on it), the restart recorded."""
        self._originals(self.foreign())
        self._begin('recovery', now)

    # ------------------------------------------------------------ its restarts

    def clear_stale_noout(self) -> bool:
        """Clear our noout left by a failed-over mgr's unfinished step: only a
        restart needs it, and our own flag must not read as an unhealthy cluster."""
        if self.rec.noout_ours and self.cluster.has_noout(self.osd):
            self.restarter.clear_noout()
            return True
        return False

    def restart_done(self) -> None:
        self.rec.restarted = True

    @property
    def up_seconds(self) -> Optional[float]:
        """How long its last restart took to come up on what was set (None:
        not timed: an admin's, or a restart taken over by a new mgr)."""
        r = self.rec.restart
        return None if r is None else r.up_seconds

    # ------------------------------------------------------------ its restore

    def restore(self, now: float) -> bool:
        """The originals' config at once, but for someone else's values;
        whether a gated restart onto them follows (noout set for it)."""
        rec = self.rec
        held = self.foreign()
        self.config.restore(rec.originals, held)
        if held:
            log.warning('osd.%d: left as someone else set them: %s', self.osd, ', '.join(held))
        rec.window = None
        if not rec.running_dirty:
            rec.restarted = True
            return False
        self.restarter.set_noout()  # kept while it waits for its restart
        self._begin('restore', now)
        return True

    def restore_where_failed(self) -> List[str]:
        """Where restoring cannot go on: its config put back as far as the
        cluster lets, noout cleared; what is left, a line each, for the alert."""
        rec = self.rec
        held: Set[str] = set()
        try:
            held = self.foreign()
            self.config.restore(rec.originals, held)
            restored = self.config.is_restored(rec.originals, held)
        except ClusterError:
            restored = False
        with suppress(ClusterError):
            self.restarter.clear_noout()
        detail = []
        if rec.running_dirty:
            detail.append(f'osd.{self.osd} may still run a candidate: restart it to load '
                          'the restored options')
        for name, value in rec.originals.items():
            detail.append(f'original osd.{self.osd} {name}: '
                          + ('(not set)' if value is None else value)
                          + (' (left: someone else has set it since)' if name in held
                             else '' if restored else ' (NOT restored: set it back by hand)'))
        return detail
