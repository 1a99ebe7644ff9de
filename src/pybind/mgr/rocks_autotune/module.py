"""rocks_autotune: Bayesian tuning of BlueStore's RocksDB options on a canary OSD:
thin mgr glue over session.Session (tuning) and rollout.Rollout (apply, revert).
Design: doc/dev/internals.rst, dev-internals-module."""
import dataclasses
import errno
import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from mgr_module import HandleCommandResult, MgrModule, MgrStandbyModule, NotifyType, Option
from orchestrator import OrchestratorClientMixin

from . import health, options, panel, report, views
from .compat import CLICommand, CLIReadCommand, CLIWriteCommand
from .http_server import PanelServer, url
from .cluster import ClusterError, MgrCluster
from .session_settings import Params, StartRefused
from .machine import Machine
from .rollout import Rollout, RolloutSettings
from .rollout_record import RolloutPlan, RolloutRecord
from .rollout_plan import (NothingToRevert, RolloutRefused, at_a_time, in_flight, parse_osd_ids,
                           partial, plan_apply, plan_revert, recommendation, undo_commands)
from .options import OPTIONS
from .session import ACTIVE, Session, Settings
from .store import (HEAD_KEY, REQUEST_KEY, ROLLOUT_KEY, Request, RolloutStore, SessionStore,
                    StoreError)

LOADING = ('the module is loading the state the previous active mgr saved (a failover); '
           'try again in a moment')
BUSY = 'the module is busy with a step; try again in a moment'
# The panel's port: none of Ceph's (dashboard 8080/8443/7000, prometheus 9283,
# restful 8003, cephadm's 8765 and 9464, iscsi 5000/9287, the monitoring
# stack 3000/9093-9095/9100, ceph-exporter 9926).
DEFAULT_PORT = 9476
PANEL_OPTIONS = [
    Option('server_addr', type='str', default='', runtime=True,
           desc="the panel's address: empty means the mgr's own address; "
                '"::" or "0.0.0.0" for every interface'),
    Option('server_port', type='int', default=DEFAULT_PORT, min=0, max=65535, runtime=True,
           desc="the panel's port (HTTP: web page, /api/status, /api/trials, /metrics)"),
]


def panel_address(mod: Any) -> Tuple[str, int, str]:
    """(bind host, port, host for the URL) from this mgr's (localized) options."""
    addr = str(mod.get_localized_module_option('server_addr') or '')
    port = int(mod.get_localized_module_option('server_port', DEFAULT_PORT))
    if addr in ('', '::', '0.0.0.0'):
        ip = mod.get_mgr_ip()
        return (addr or ip), port, ip
    return addr, port, addr


def _an(kind: str) -> str:
    return ('an ' if kind[:1] in 'aeiou' else 'a ') + kind


def _error(code: int, message: str) -> HandleCommandResult:
    return HandleCommandResult(-code, '', message)


def _json(obj: Any, format: str) -> HandleCommandResult:
    """A reply for --format json, or json-pretty indented."""
    return HandleCommandResult(0, json.dumps(obj, indent=2 if format == 'json-pretty' else None),
                               '')


def running(*jobs: Optional[Machine]) -> Optional[Machine]:
    """The active session or rollout, the job the serve loop steps (never both)."""
    return next((j for j in jobs if j is not None and j.active), None)


class RocksAutotune(MgrModule, OrchestratorClientMixin):
    CLICommand = CLICommand  # Tentacle: this module's command registry
    # None wanted, but declared: without it Tentacle's loader fails looking for the
    # standby class (the AttributeError still pending) and never runs RocksAutotuneStandby
    NOTIFY_TYPES: List[NotifyType] = []
    # seconds a command waits for serve() to load the saved state (after a failover or
    # a respawn) before it is refused (EAGAIN)
    LOAD_WAIT = 10.0
    MODULE_OPTIONS = [Option(o.name, **o.option_kwargs()) for o in OPTIONS] + PANEL_OPTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.event = threading.Event()
        # set once the saved state is loaded: until then no command changes anything
        self.loaded = threading.Event()
        # held by the serve thread through a step (and by `start`, briefly);
        # stop/abort and the read commands never take it
        self.step_lock = threading.Lock()
        self.start_lock = threading.Lock()
        self.run = True
        self.cluster: Any = MgrCluster(self)
        self.clock = time.time
        self.store = SessionStore(self.get_store, self.put_store)
        self.session: Optional[Session] = None
        self.load_error = ''
        self.settings_error = ''
        # the progress event of each kind of job, while one is up
        self.progress_ids: Dict[str, str] = {}
        self.rollout_store = RolloutStore(self.get_store, self.put_store)
        self.rollout: Optional[Rollout] = None
        self.rollout_error = ''
        # the last rollout's record, set by publish(); not copied: the commands read it
        # only once it has ended (apply and revert refuse while it runs)
        self.rollout_record: Optional[RolloutRecord] = None
        # what the panel and the read commands show, refreshed by publish()
        self.panel_snapshot = panel.Snapshot()
        self.http = PanelServer(panel.Panel(lambda: self.panel_snapshot), self.log)
        self.uri = ''

    # ------------------------------------------------------------ plumbing

    def settings(self) -> Settings:
        """The module options a new session would run with; ValueError if one is invalid."""
        settings: Settings = options.read(Settings, self.get_module_option)
        settings.validate()
        return settings

    def check_options(self) -> None:
        """Module options are checked when set (Pacific has no hook: config_notify)."""
        try:
            self.settings()
            self.settings_error = ''
        except ValueError as e:
            self.settings_error = str(e)

    def put_store(self, key: str, value: Optional[str]) -> None:
        """set_store that raises StoreError when the mon refuses the write (over
        mon_config_key_max_entry_size, no quorum): the mgr's set_store only logs that, and
        its cache, which a read back may see, keeps the value.  The cache catches up through
        the mgr's subscription to the mgr/ keys."""
        full = f'mgr/{self.module_name}/{key}'
        cmd = ({'prefix': 'config-key set', 'key': full, 'val': value} if value is not None
               else {'prefix': 'config-key del', 'key': full})
        r, _, err = self.mon_command(cmd)
        if r != 0:
            raise StoreError(f'{cmd["prefix"]} {full}: {err.strip() or r}')

    def load(self) -> None:
        """Pick up a session and a rollout a previous active mgr left, if any,
        with a stop or abort asked of them; then commands may change things."""
        try:
            self.load_rollout()
            self.check_options()
            try:
                state = self.store.load()
                if state is None:
                    return
                Session.check_state(state)
                self.session = Session(state, self.cluster, self.store.save, self.clock)
            except (ValueError, TypeError, KeyError) as e:
                # a rescue restores with the session's saved settings, else these
                self._rescue(str(e), Settings() if self.settings_error else self.settings())
                return
            if self.session.active:
                self.log.info('resuming session %s on osd.%d', state.id, self.session.osd)
                req = Request.from_json(self.get_store(REQUEST_KEY))
                if req.id == state.id:
                    self.session.request('abort' if req.what == 'abort' else 'stop')
                self.session.resume_after_failover()
        finally:
            self._publish()  # what the commands read (the last rollout's record)
            self.loaded.set()

    def load_rollout(self) -> None:
        """The last rollout; one in flight goes on where it was (its restart too)."""
        try:
            state = self.rollout_store.load()
            if state is None:
                return
            self.rollout = Rollout(state, self.cluster, self.rollout_store.save, self.clock)
        except (ValueError, TypeError, KeyError, IndexError) as e:
            self.rollout_error = (
                f'the saved rollout state is unreadable ({e}); the raw state is kept under '
                f'mgr/{self.module_name}/{ROLLOUT_KEY}.corrupt: check the RocksDB options '
                'of the OSDs it touched (ceph config dump) by hand')
            self.log.error(self.rollout_error)
            try:
                self.rollout_store.keep_corrupt()
            except StoreError as e2:
                self.rollout_error += f'; it could not be set aside ({e2})'
            return
        if self.rollout.active:
            self.log.info('resuming %s %s', self.rollout.r.kind, self.rollout.r.id)
            if Request.from_json(self.get_store(REQUEST_KEY)).id == self.rollout.r.id:
                self.rollout.request('abort')
            self.rollout.resume_after_failover()

    def _rescue(self, error: str, settings: Settings) -> None:
        """An unreadable state: set it aside, and restore the canary if the
        session's start record (its originals) can still be read."""
        self.load_error = (f'the saved session state is unreadable ({error}); the raw state '
                           f'is kept under mgr/{self.module_name}/{HEAD_KEY}.corrupt')
        self.log.error(self.load_error)
        try:
            self.store.keep_corrupt()
            start = self.store.load_originals()
            if start is not None:
                self.session = Session.rescue(start, 'the saved session state is unreadable',
                                              self.cluster, settings, self.store.save, self.clock)
                self.load_error += '; the canary is being restored from its saved originals'
        except (ValueError, TypeError, KeyError, StoreError) as e:
            self.load_error += f'; its originals cannot be read either ({e})'
            self.log.error(self.load_error)

    def publish(self) -> None:
        """Health checks, the progress event and the snapshot the reads serve."""
        checks = health.module_checks(self.load_error, self.settings_error, self.rollout_error)
        for job in (self.session, self.rollout):
            if job is not None:
                checks.update(job.health_checks())
        self.set_health_checks(checks)
        ro = self.rollout
        v = self.session.view() if self.session is not None else None
        # the OSDs the best's commands reach, for the panel (`best` reads its own): three
        # maps of every OSD, read once while the session's last steps run, then when idle
        where = None
        if v is not None and v.status.get('best') is not None:
            last = self.panel_snapshot
            same = v.active and last.reach is not None and last.status.get('id') == v.id
            where = last.reach if same else report.reach(v.osd, self.cluster.osds())
        snapshot = panel.Snapshot.of(v, self.load_error, where)
        self.rollout_record = ro.r if ro is not None else None
        if ro is not None:
            # bounded in the OSDs (views.SHOWN); built anew but for the plan's notes and checks
            snapshot.status['rollout'] = ro.status()
        if self.rollout_error:
            snapshot.status['rollout_error'] = self.rollout_error
        self.panel_snapshot = snapshot
        # each job's progress event in `ceph -s`: updated while it runs, then ended once
        for slot, job in (('session', self.session), ('rollout', ro)):
            if job is not None and job.active:
                ev = job.progress_event()
                self.progress_ids[slot] = ev.id
                self.remote('progress', 'update', ev.id, ev_msg=ev.message,
                            ev_progress=ev.progress, refs=ev.refs, add_to_ceph_s=True)
            elif self.progress_ids.get(slot):
                ev_id = self.progress_ids.pop(slot)
                failure = job.progress_event().failure if job is not None else None
                if failure:
                    self.remote('progress', 'fail', ev_id, failure)
                else:
                    self.remote('progress', 'complete', ev_id)

    def _publish(self) -> None:
        """publish(), never raising: the serve loop must outlive the progress module."""
        try:
            self.publish()
        except Exception:
            self.log.exception('publishing the session failed')

    def serve_panel(self) -> None:
        """Listen where the options say (re-binding if they changed); publish the URL."""
        host, port, uri_host = panel_address(self)
        # an empty URI drops the entry from `ceph mgr services` while nothing listens
        uri = (url(uri_host, self.http.bound[1])
               if self.http.ensure(host, port) and self.http.bound else '')
        if uri != self.uri:
            self.set_uri(uri)
            self.uri = uri

    def config_notify(self) -> None:
        self.check_options()
        self._publish()
        self.serve_panel()

    def serve(self) -> None:
        with self.step_lock:
            self.load()
        while self.run:
            self.serve_panel()  # also retries a bind that failed
            delay = float(self.get_module_option('sleep_interval') or 60)
            job = running(self.session, self.rollout)
            if job is not None:
                with self.step_lock:
                    try:
                        delay = job.step()
                    except Exception as e:  # never leave the loop: an OSD may be in flight
                        self.log.exception('%s step failed', type(job).__name__.lower())
                        job.note_internal_error(e)
                        delay = 10.0
                    self._publish()
            elif self.session is not None or self.rollout is not None:
                if self.session is not None:
                    with self.step_lock:
                        self.session.tidy()  # its client objects, if some are left
                self._publish()  # the panel's OSD list follows the cluster after a session
            if delay > 0:
                self.event.wait(delay)
            self.event.clear()

    def shutdown(self) -> None:
        self.run = False
        self.event.set()
        self.http.stop()

    # ------------------------------------------------------------ commands

    @CLIWriteCommand('rocks-autotune start')
    def cmd_start(self, osd: Optional[int] = None, trials: int = 12, budget: float = 1.10,
                  workload: str = 'client', duration: int = 30, force: bool = False,
                  allow_single_copy: bool = False,
                  objective: Optional[str] = None) -> HandleCommandResult:
        """Start tuning RocksDB options on one canary OSD.
        --objective iops|wear: the client's IOPS (write-amp within --budget), or
        the fewest DB bytes per client byte at steady state (IOPS within guard);
        default: the module option objective.
        --allow-single-copy: accept a canary whose every restart leaves PGs with
        fewer than two copies (replicated size 2; erasure-coded m = 1 or min_size = k)
        """
        if not self.loaded.wait(self.LOAD_WAIT):
            return _error(errno.EAGAIN, f'not started: {LOADING}')
        params = Params(osd=osd, trials=trials, budget=budget, workload=workload,
                        duration=float(duration), force=force,
                        allow_single_copy=allow_single_copy)
        # two starts at once: the second waits for the first, then sees its session
        with self.start_lock:
            if self.rollout is not None and self.rollout.active:
                return _error(errno.EBUSY, f'not started: {self._busy()}; a session never '
                              'runs beside a rollout')
            if self.session is not None and self.session.active:
                # the snapshot: the session itself belongs to the serve thread
                st = self.panel_snapshot.status
                return _error(errno.EBUSY, f'a session is already {st.get("state")} on '
                              f'osd.{st.get("osd")}; stop or abort it first')
            # a step in flight (the previous session's last): answer, do not wait
            if not self.step_lock.acquire(timeout=0.5):
                return _error(errno.EBUSY, BUSY)
            try:
                try:
                    settings = self.settings()
                    if objective is not None:
                        settings = dataclasses.replace(settings, objective=objective)
                        settings.validate()
                except ValueError as e:
                    return _error(errno.EINVAL, f'not started: {e}')
                try:
                    session = Session.start(self.cluster, params, settings, self.store.save,
                                            self.clock)
                except StartRefused as e:
                    return _error(errno.EINVAL, f'not started: {e}')
                except (ClusterError, ValueError, StoreError) as e:
                    return _error(errno.EIO, f'not started: {e}')
                self.session = session
                self.load_error = ''
                self._publish()
                v = session.view()
            finally:
                self.step_lock.release()
        self.event.set()
        return HandleCommandResult(0, f'started session {v.id} on osd.{v.osd}\n{v.reason}', '')

    def _no_session(self) -> HandleCommandResult:
        return _error(errno.ENOENT, self.load_error or 'no tuning session has run yet')

    def _request(self, what: str) -> Optional[HandleCommandResult]:
        """Hand stop/abort to the session (or abort to the rollout), saved first so that a
        mgr taking over before the next step still obeys it.  None: the session took it."""
        if not self.loaded.wait(self.LOAD_WAIT):
            return _error(errno.EAGAIN, LOADING)
        job = running(self.session, self.rollout)
        if job is None:
            return _error(errno.ENOENT, 'no session is running')
        if isinstance(job, Rollout) and what != 'abort':
            return _error(errno.ENOENT, (
                f'no session is running; {_an(job.r.kind)} is: `ceph rocks-autotune '
                f'abort` stops it after {in_flight(job.r.max_parallel)}'))
        try:
            self.put_store(REQUEST_KEY, Request(job.head.id, what).to_json())
        except StoreError as e:
            return _error(errno.EIO, f'not taken: the request could not be saved ({e}); '
                          'nothing was changed: try again')
        job.request(what)
        self.event.set()
        if isinstance(job, Rollout):
            return HandleCommandResult(0, (
                f'aborting the {job.r.kind} after {in_flight(job.r.max_parallel)}; `ceph '
                'rocks-autotune revert` then undoes what was done'), '')
        return None

    @CLIWriteCommand('rocks-autotune stop')
    def cmd_stop(self) -> HandleCommandResult:
        """Finish the trial in flight, then restore the canary and end"""
        return self._request('stop') or HandleCommandResult(
            0, 'stopping after the trial in flight', '')

    @CLIWriteCommand('rocks-autotune abort')
    def cmd_abort(self) -> HandleCommandResult:
        """Stop now and restore the canary's original options; or stop a rollout after the
        OSD in flight"""
        return self._request('abort') or HandleCommandResult(
            0, 'aborting: the canary is being restored', '')

    @CLIReadCommand('rocks-autotune status')
    def cmd_status(self, format: str = 'plain', detail: bool = False,
                   osds: bool = False) -> HandleCommandResult:
        """The session's state (once ended, its answer; --detail: all) and the last rollout
        (--osds: each of its OSDs)"""
        # an empty status would read as no session at all
        if not self.loaded.wait(self.LOAD_WAIT):
            return _error(errno.EAGAIN, LOADING)
        snap = self.panel_snapshot
        status = dict(snap.status)
        ro = self.rollout
        if osds and ro is not None and 'rollout' in status:
            # not published (O(OSDs)): read as it stands, the OSD list no step resizes
            status['rollout'] = ro.status(every=True)
        if self.load_error:  # before the first publish too
            status['error'] = self.load_error
        if format in ('json', 'json-pretty'):
            return _json(status, format)
        return HandleCommandResult(
            0, report.status_text(snap.state, status, detail, self.load_error, snap.time), '')

    @CLIReadCommand('rocks-autotune history')
    def cmd_history(self, format: str = 'plain') -> HandleCommandResult:
        """Every trial: options, latency, IOPS, write-amp, verdict"""
        if not self.loaded.wait(self.LOAD_WAIT):
            return _error(errno.EAGAIN, LOADING)
        snap = self.panel_snapshot
        if snap.state is None:
            return self._no_session()
        if format in ('json', 'json-pretty'):
            return _json([t.to_json() for t in snap.trials], format)
        return HandleCommandResult(0, report.history_table(snap.trials), '')

    @CLIReadCommand('rocks-autotune best')
    def cmd_best(self, format: str = 'plain') -> HandleCommandResult:
        """The confirmed answer: options to apply, or keep the current ones"""
        if not self.loaded.wait(self.LOAD_WAIT):
            return _error(errno.EAGAIN, LOADING)
        snap = self.panel_snapshot
        if snap.state is None:
            return self._no_session()
        if views.final_answer(snap.state) is None:
            return _error(errno.ENOENT, (
                'no answer yet: the best candidates are confirmed against the baseline '
                'after the search' if snap.state.state in ACTIVE else
                'no answer: the session ended before its confirmation')
                + f' ({snap.state.message})')
        # where the commands go: read now, so OSDs added since the session count
        where = report.reach(snap.state.osd, self.cluster.osds())
        if format in ('json', 'json-pretty'):
            return _json(report.best_summary(snap.state, where), format)
        return HandleCommandResult(0, report.best_text(snap.state, where), '')

    # ------------------------------------------------------------ rollouts

    def _busy(self) -> Optional[str]:
        """Why no rollout may start now (a session or a rollout runs), or None."""
        if self.session is not None and self.session.active:
            st = self.panel_snapshot.status
            return (f'a tuning session is {st.get("state")} on osd.{st.get("osd")}, and a '
                    'rollout never runs beside one: let it end, or stop or abort it first')
        ro = self.rollout
        if ro is not None and ro.active:
            return (f'{_an(ro.r.kind)} is running ({ro.r.target}): wait for it to end, '
                    'or `ceph rocks-autotune abort` it')
        return None

    def _rollout_command(self, kind: str, make_plan: Callable[[], RolloutPlan],
                         dry_run: bool, format: str, detail: bool = False
                         ) -> HandleCommandResult:
        """apply and revert: refuse, show the plan (--dry-run), or start it."""
        verb = {'apply': 'applied', 'revert': 'reverted'}[kind]
        if not self.loaded.wait(self.LOAD_WAIT):
            return _error(errno.EAGAIN, f'not {verb}: {LOADING}')
        with self.start_lock:
            busy = self._busy() or (partial(self.rollout_record) if kind == 'apply' else None)
            if busy:
                return _error(errno.EBUSY, f'not {verb}: {busy}')
            # a step in flight (a session's or a rollout's last): answer, do not wait
            if not dry_run and not self.step_lock.acquire(timeout=0.5):
                return _error(errno.EBUSY, BUSY)
            try:
                try:
                    plan = make_plan()
                except NothingToRevert as e:
                    return _error(errno.ENOENT, str(e))
                except RolloutRefused as e:
                    return _error(errno.EINVAL, f'not {verb}: {e}')
                except ClusterError as e:
                    return _error(errno.EIO, f'not {verb}: {e}')
                if dry_run:
                    undo = undo_commands(plan)
                    if format in ('json', 'json-pretty'):
                        return _json(dict(plan.to_json(), undo=undo), format)
                    return HandleCommandResult(0, report.plan_text(plan, undo) if detail
                                               else report.plan_brief(plan), '')
                # a revert starts whatever holds restarts back (an OSD the
                # options broke may be down): it puts back what it can and
                # its restarts wait at the gate, as `status` says
                if plan.blockers and kind == 'apply':
                    return _error(errno.EAGAIN, (
                        f'not {verb}: the cluster is not ready for a restart: '
                        + '; '.join(plan.blockers) + ' (--force: others\' health checks '
                        'do not hold restarts back; what threatens data always does)'))
                try:
                    settings = options.read(RolloutSettings, self.get_module_option)
                    ro = Rollout.begin(plan, settings, self.cluster, self.rollout_store.save,
                                       self.clock)
                except StoreError as e:
                    return _error(errno.EIO, f'not {verb}: {e}')
                self.rollout = ro
                self.rollout_error = ''
                self._publish()
            finally:
                if not dry_run:
                    self.step_lock.release()
        self.event.set()
        n = len(plan.osds)
        return HandleCommandResult(0, (
            f'{kind} {ro.r.id} started: {plan.target}, {n} OSD{"" if n == 1 else "s"} '
            f'to restart {at_a_time(plan.max_parallel)}; `ceph rocks-autotune status` follows '
            f'it, `ceph rocks-autotune abort` stops it after {in_flight(plan.max_parallel)}'
            + ''.join(f'; {note}' for note in (plan.notes if kind == 'revert' else []))
            + (f'; its restarts wait for: {"; ".join(plan.blockers)}' if plan.blockers else '')
        ), '')

    @CLIWriteCommand('rocks-autotune apply')
    def cmd_apply(self, device_class: Optional[str] = None, osds: Optional[str] = None,
                  options: Optional[str] = None, dry_run: bool = False,
                  force: bool = False, allow_single_copy: bool = False,
                  max_parallel: int = 1, detail: bool = False,
                  format: str = 'plain') -> HandleCommandResult:
        """Set RocksDB options on the OSDs of a device class (default: the last canary's)
        or --osds N,M, each at its own mask osd.N just before its restart, one at a time;
        the last session's recommendation unless --options is given. --dry-run: show the
        plan (--detail: every mask, check and command). --force: others' health checks do
        not hold restarts back. --allow-single-copy: accept restarts that leave PGs on one
        copy. --max-parallel N: restart up to N OSDs together, as `ceph osd ok-to-stop --max
        N` allows
        """
        def make_plan() -> RolloutPlan:
            ids = parse_osd_ids(osds) if osds is not None else None
            session = self.panel_snapshot.state
            opts, source = (recommendation(session) if options is None
                            else (options, '--options'))
            canary = None if session is None else session.osd
            return plan_apply(self.cluster, opts, source, device_class, ids, canary,
                              force=force, allow_single_copy=allow_single_copy,
                              now=self.clock(), max_parallel=max_parallel)
        return self._rollout_command('apply', make_plan, dry_run, format, detail)

    @CLIWriteCommand('rocks-autotune revert')
    def cmd_revert(self, dry_run: bool = False, force: bool = False,
                   allow_single_copy: bool = False, max_parallel: int = 1,
                   detail: bool = False, format: str = 'plain') -> HandleCommandResult:
        """Put back what the last apply changed (values and absences, at each OSD's mask;
        what someone else set since stays) and restart the OSDs that run its options, one
        at a time. --dry-run: show the plan (--detail: all of it). --force,
        --allow-single-copy, --max-parallel: as apply's
        """
        return self._rollout_command(
            'revert', lambda: plan_revert(self.cluster, self.rollout_record, force=force,
                                          allow_single_copy=allow_single_copy,
                                          max_parallel=max_parallel),
            dry_run, format, detail)


class RocksAutotuneStandby(MgrStandbyModule):
    """On a standby mgr: the same address, answering with the active mgr's URL."""
    MODULE_OPTIONS = list(PANEL_OPTIONS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.event = threading.Event()
        self.run = True
        self.http = PanelServer(panel.Panel(panel.Snapshot, standby_uri=self.get_active_uri),
                                self.log)

    def serve(self) -> None:
        # standbys get no config_notify: look at the options now and then
        while self.run:
            host, port, _ = panel_address(self)
            self.http.ensure(host, port)
            self.event.wait(10)

    def shutdown(self) -> None:
        self.run = False
        self.event.set()
        self.http.stop()
