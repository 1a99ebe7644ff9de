"""
Play the admin, and optionally the thrasher, for rocks_autotune sessions.

The `ceph` task runs daemons without an orchestrator backend, so the
rocks_autotune module restarts its canary in manual mode: it raises the
ROCKS_AUTOTUNE_MANUAL_RESTART health check naming the OSD and waits for the
OSD to come back with a new up_from.  This task answers each such request by
restarting the named OSD (its daemon in ctx.daemons), as an admin would.  A
rollout (`rocks-autotune apply` / `revert`) restarts each of its OSDs the
same way, and its requests (the rollout's own `health` in `status`, naming
its OSD in flight) are answered alike.  On a cephadm (or rook) cluster the
module restarts the OSDs itself and this task has nothing to answer.

With ``kill_canary: true`` it also kills the canary once, while a candidate
trial is being measured (phase warmup or measure): the teuthology side of the
thrash_canary.sh workunit (its ``external`` kill mode).  The module must mark
that trial failed, restore the canary's own options and ask for a restart,
which this task then gives it.

OSDs are stopped and restarted through ctx.daemons, which is what
CephManager.kill_osd/revive_osd do when not powercycling; those two read
CephManager.config, which vstart_runner's LocalCephManager never sets, so
this way the task also runs under vstart_runner (qa/teuthology/run-vstart in
the rocks_autotune repository).  A daemon is started again only once its
old process has exited (stop_daemon): under vstart_runner, stop() returns
when `ps` no longer shows the daemon's command line, which an exiting
process loses before it closes its files, and an OSD started while the old
one still holds its fsid lock exits at once.

Example::

  tasks:
  - install:
  - ceph:
  - rocks_autotune:
      kill_canary: true
  - workunit:
      clients:
        client.0:
          - rocks_autotune/thrash_canary.sh

It runs in qa/suites/rados/rocks_autotune on the releases the module
supports, Tentacle 20.2 (primary) and Pacific 16.2, from each release's
branch (``teuthology-suite --ceph tentacle|pacific``; see the suite's README).
Nothing here depends on the release: it reads ``rocks-autotune status`` and
restarts OSDs through ctx.daemons.

Config keys (all optional):

  cluster: ceph            the cluster name
  kill_canary: false       kill the canary once, mid-trial
  poll: 2                  seconds between looks at the session
"""
import contextlib
import json
import logging
import os
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from tasks.thrasher import ThrasherGreenlet

log = logging.getLogger(__name__)

MANUAL_RESTART = 'ROCKS_AUTOTUNE_MANUAL_RESTART'
ACTIVE = ('running', 'stopping', 'restoring')
MEASURING = ('warmup', 'measure')

RestartKey = Tuple[str, str, Optional[int], Optional[str]]
ROLLOUT_ACTIVE = ('running',)


def restart_key(status: Dict[str, Any]) -> RestartKey:
    """One key per restart the session asks for.

    A session asks for one restart per trial (candidate, baseline or the
    recovery after a failed candidate) and one to restore at the end; the
    alert stays raised until the OSD is back, so it is answered once per key.
    """
    cur = status.get('current') or {}
    return (str(status.get('id')), str(status.get('phase')), cur.get('index'), cur.get('kind'))


def rollout_restart_key(rollout: Dict[str, Any]) -> RestartKey:
    """One key per restart a rollout asks for: one per OSD it rolls out to,
    and one more if that OSD is put back on its prior options (phase
    put_back_wait)."""
    return (str(rollout.get('id')), str(rollout.get('phase')), rollout.get('current'),
            'rollout')


def exited(pid: int) -> bool:
    """Whether process `pid` has exited: gone, or a zombie (its files closed,
    its locks released) with no other thread left: a leader thread that
    exited while another (an OSD's shutdown) runs on is a zombie too."""
    try:
        with open('/proc/{0}/stat'.format(pid)) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
        threads = len(os.listdir('/proc/{0}/task'.format(pid)))
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ('Z', 'X', 'x') and threads <= 1


def stop_daemon(daemon: Any, timeout: float = 300) -> None:
    """Stop `daemon` and return once its process has exited.

    teuthology's DaemonState.stop() waits for the daemon's process to end.
    vstart_runner's LocalDaemon.stop() waits until `ps ww` stops showing
    `ceph-osd -i N`, and an exiting process's command line reads empty as soon
    as it has let go of its memory, before it closes its files: an OSD started
    then finds its fsid still locked ("failed to lock ... is another ceph-osd
    still running?") and exits, and the OSD stays down.  So the pid the
    LocalDaemon finds (it has `_get_pid`; a DaemonState has not) is waited
    for here until it is gone or a zombie.
    """
    get_pid = getattr(daemon, '_get_pid', None)
    pid = get_pid() if callable(get_pid) else None
    daemon.stop()
    if pid is None:
        return
    deadline = time.time() + timeout
    t0 = time.time()
    while not exited(pid):
        if time.time() > deadline:
            raise RuntimeError('process {0} still there {1:.0f}s after it was stopped'.format(
                pid, timeout))
        time.sleep(0.1)
    if time.time() - t0 > 0.5:
        log.info('process %d exited %.1fs after stop() returned', pid, time.time() - t0)


# a LocalDaemon that exits as it starts is started again: seen once under
# load, an OSD started while its old process still held its pidfile
START_CHECK, START_TRIES = 1.0, 3


def restart_daemon(daemon: Any) -> None:
    """Restart `daemon` (start it if it is stopped), its old process gone first.

    A DaemonState's restart() stops it and waits for its process itself; a
    LocalDaemon's (vstart_runner) is stopped here first, by stop_daemon, and
    started again if it is not running START_CHECK s after its start.
    """
    local = callable(getattr(daemon, '_get_pid', None))
    if local and daemon.running():
        stop_daemon(daemon)
    daemon.restart()
    for _ in range(START_TRIES if local else 0):
        time.sleep(START_CHECK)
        if daemon.running():
            return
        log.info('%s exited as it started: starting it again', daemon)
        daemon.restart()


def osd_daemon(ctx: Any, osd: int, cluster: str = 'ceph') -> Any:
    """osd.N's daemon in ctx.daemons: a DaemonState under teuthology, a
    LocalDaemon under vstart_runner (what CephManager.kill_osd/revive_osd stop
    and restart when not powercycling)."""
    daemon = ctx.daemons.get_daemon('osd', osd, cluster)
    if daemon is None:
        raise RuntimeError('no daemon osd.{0} in cluster {1}'.format(osd, cluster))
    return daemon


def should_kill(status: Dict[str, Any]) -> bool:
    cur = status.get('current') or {}
    return (status.get('state') == 'running' and cur.get('kind') == 'candidate'
            and status.get('phase') in MEASURING)


class RocksAutotuneAdmin(ThrasherGreenlet):
    def __init__(self, ctx: Any, manager: Any, config: Dict[str, Any]) -> None:
        super(RocksAutotuneAdmin, self).__init__()
        self.ctx = ctx
        self.manager = manager
        self.cluster = str(config.get('cluster', 'ceph'))
        self.kill_canary = bool(config.get('kill_canary', False))
        self.poll = float(config.get('poll', 2))
        self.answered: Set[RestartKey] = set()
        self.killed: Optional[int] = None
        self.restarts = 0
        # the daemons this task started, until they exit: osd -> (daemon, when)
        self.revived: Dict[int, Tuple[Any, float]] = {}
        # the OSDs it started that exited again: (osd, exit status, seconds up)
        self.exits: List[Tuple[int, Any, float]] = []

    def status(self) -> Dict[str, Any]:
        out = self.manager.raw_cluster_cmd('rocks-autotune', 'status', '--format=json')
        return json.loads(out)

    def _run(self) -> None:
        try:
            while not self.is_stopped:
                self.step()
                self.sleep_unless_stopped(self.poll)
        except self.Stopped:
            pass
        except Exception as e:
            # reported by task() when it stops us (and seen by the daemon watchdog)
            log.exception('rocks_autotune admin failed')
            self.set_thrasher_exception(e)

    def check_started(self) -> None:
        """Say so when a daemon this task started has exited (its process:
        `proc` of a DaemonState or a LocalDaemon): the module then waits for an
        OSD that is not coming back, and the OSD's own log says why."""
        for osd, (daemon, t0) in list(self.revived.items()):
            proc = getattr(daemon, 'proc', None)
            if proc is None or not getattr(proc, 'finished', False):
                continue
            status = getattr(proc, 'exitstatus', None)
            log.error('osd.%d, started by this task %.0fs ago, has exited (status %s): '
                      'see its log', osd, time.time() - t0, status)
            self.exits.append((osd, status, time.time() - t0))
            del self.revived[osd]

    def step(self) -> None:
        self.check_started()
        try:
            s = self.status()
        except Exception as e:  # the mgr may be failing over: look again later
            log.info('rocks-autotune status: %s', e)
            return
        ro = s.get('rollout') or {}
        if ro.get('state') in ROLLOUT_ACTIVE and ro.get('current') is not None:
            self._answer(int(ro['current']), ro.get('health', []), rollout_restart_key(ro),
                         'the ' + str(ro.get('kind')))
        if s.get('state') not in ACTIVE:
            return
        osd = int(s['osd'])
        if self.kill_canary and self.killed is None and should_kill(s):
            log.info('killing the canary osd.%d in trial %s (%s)', osd,
                     s['current']['index'], s['phase'])
            stop_daemon(osd_daemon(self.ctx, osd, self.cluster))
            self.revived.pop(osd, None)
            self.killed = osd
            return
        self._answer(osd, s.get('health', []), restart_key(s), 'the session')

    def _answer(self, osd: int, health: Any, key: RestartKey, who: str) -> None:
        """Restart `osd` if `who` asks for it and this request is not answered yet."""
        if MANUAL_RESTART in health and key not in self.answered:
            log.info('%s asks for a restart of osd.%d (%s): restarting it', who, osd, key)
            # also revives a killed canary
            daemon = osd_daemon(self.ctx, osd, self.cluster)
            restart_daemon(daemon)
            self.revived[osd] = (daemon, time.time())
            self.answered.add(key)
            self.restarts += 1


@contextlib.contextmanager
def task(ctx: Any, config: Optional[Dict[str, Any]]) -> Any:
    if config is None:
        config = {}
    assert isinstance(config, dict), 'rocks_autotune task only accepts a dict for config'
    cluster = config.get('cluster', 'ceph')
    manager = ctx.managers[cluster]
    admin = RocksAutotuneAdmin(ctx, manager, config)
    ctx.ceph[cluster].thrashers.append(admin)
    admin.start()
    try:
        yield
    finally:
        log.info('stopping the rocks_autotune admin (%d restart(s) answered)', admin.restarts)
        admin.stop()
        admin.join()
        if admin.exception is not None:
            raise RuntimeError('rocks_autotune admin failed') from admin.exception
        if config.get('kill_canary') and admin.killed is None:
            raise RuntimeError('kill_canary was set but no candidate trial was ever measured')
        if admin.killed is not None:
            # the session restarts the canary; make sure it is up for the next task
            manager.wait_till_osd_is_up(admin.killed, timeout=300)
