"""
rocks_autotune on a teuthology cluster.

The module loads, refuses bad input without changing anything, runs a short
session to the end through a mgr failover, aborts mid-trial, survives its
canary being killed mid-trial; each time the canary's own config
(what `ceph config dump` shows at osd.N) ends exactly as it was.

The `ceph` task has no orchestrator backend, so the module restarts its canary
in manual mode (ROCKS_AUTOTUNE_MANUAL_RESTART); the test answers each request
by restarting the OSD itself, as an admin would.  On a cephadm cluster the
module restarts the canary through the orchestrator and no request is raised.
MgrTestCase.setup_mgrs disables every module but cephadm, so a cluster whose
mgr/orchestrator/orchestrator names another backend (a vstart or lab cluster)
is in manual mode here too: the test leaves it so rather than enable a backend
MgrTestCase turned off.  OSDs are stopped and restarted through
ctx.daemons, as CephManager.kill_osd/revive_osd do without powercycling
(those two read CephManager.config, which vstart_runner's LocalCephManager
never sets).

The module supports Tentacle 20.2 (primary) and Pacific 16.2; the suite runs
from the release's branch (``teuthology-suite --ceph tentacle|pacific``, see
qa/suites/rados/rocks_autotune/README), and its first test fails on any
other release. What differs between the two (the default
bluestore_rocksdb_options, the OSDs' column families) the session reads from
the cluster: test_short_session checks it recorded this release's values.

Run by qa/suites/rados/rocks_autotune/tasks/mgr_test.yaml:

    - cephfs_test_runner:
        modules:
          - tasks.mgr.test_rocks_autotune
"""
import json
import logging
import re
import time
from io import StringIO
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from tasks.mgr.mgr_test_case import MgrTestCase
from tasks.rocks_autotune import osd_daemon, restart_daemon, stop_daemon

log = logging.getLogger(__name__)

MODULE = 'rocks_autotune'
# the releases the module supports, as `ceph version` names them
SUPPORTED_RELEASES = ('tentacle', 'pacific')  # 20.2 (primary), 16.2
PREFIX = 'ROCKS_AUTOTUNE_'
ACTIVE = ('running', 'stopping', 'restoring')
ENDED = ('done', 'stopped', 'aborted', 'failed')
# short trials, and one candidate confirmed in one round (as the workunits
# do): these tests check behaviour, not figures
FAST_OPTIONS = {'warmup': '2', 'bench_chunk_seconds': '2', 'max_window_factor': '1.5',
                'restart_timeout': '180', 'manual_restart_timeout': '300',
                'steady_window_limit': '10', 'client_space': str(16 << 20),
                'precondition_limit': '10', 'baseline_runs': '2',
                'confirm_candidates': '1', 'confirm_rounds': '1'}
SESSION = ['--trials', '2', '--duration', '4']

Status = Dict[str, Any]


class TestRocksAutotune(MgrTestCase):
    # two mgrs: test_short_session fails the active one over
    MGRS_REQUIRED = 2
    SESSION_TIMEOUT = 900

    # a replicated pool with some data, so the canary holds real PGs
    POOL = 'rocks_autotune_data'
    WRITE_PERIOD = 10

    # the module options' values in effect (defaults included) before the
    # first test set FAST_OPTIONS: read once, given back in tearDownClass
    effective: Optional[Dict[str, str]] = None

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.effective is not None:
            for name, value in cls.effective.items():
                # Pacific's mgr keeps a removed module option's last value until
                # it restarts: set the value that was in effect, then remove it
                cls.mgr_cluster.set_module_conf(MODULE, name, value)
                cls.mgr_cluster.mon_manager.raw_cluster_cmd(
                    'config', 'rm', 'mgr', 'mgr/{0}/{1}'.format(MODULE, name))
        super(TestRocksAutotune, cls).tearDownClass()

    def setUp(self) -> None:
        super(TestRocksAutotune, self).setUp()
        self.setup_mgrs()
        self._load_module(MODULE)
        if type(self).effective is None:
            type(self).effective = {
                name: self._cmd('config', 'get', 'mgr',
                                'mgr/{0}/{1}'.format(MODULE, name)).strip()
                for name in FAST_OPTIONS}
        # in each test: CephTestCase.tearDown's `config reset` takes them away
        for name, value in FAST_OPTIONS.items():
            self.mgr_cluster.set_module_conf(MODULE, name, value)
        self.answered: Set[Tuple[Any, ...]] = set()
        # the module's commands appear once the new active mgr has loaded it
        self.wait_until_true(lambda: self._cmd_result('rocks-autotune', 'status')[0] == 0,
                             timeout=60)
        self.wait_until_true(lambda: self._status()['state'] not in ACTIVE, timeout=60)
        if self.POOL not in self.mgr_cluster.mon_manager.pools:
            self.mgr_cluster.mon_manager.create_pool(self.POOL)
            self.mgr_cluster.mon_manager.raw_cluster_cmd(
                'osd', 'pool', 'set', self.POOL, 'size', '3')
            self.mgr_cluster.admin_remote.run(args=[
                'rados', '-p', self.POOL, 'bench', str(self.WRITE_PERIOD), 'write',
                '-b', '65536', '-t', '4', '--no-cleanup'], wait=True)
        self.wait_until_true(self._healthy, timeout=300)

    def tearDown(self) -> None:
        if self._status()['state'] in ACTIVE:
            self._cmd('rocks-autotune', 'abort')
            self._drive(lambda s: s['state'] in ENDED, timeout=300)
        # FAST_OPTIONS: CephTestCase.tearDown's `config reset` to the epoch
        # before the test removes them (tearDownClass sets the values in effect
        # first, for Pacific's mgr)
        super(TestRocksAutotune, self).tearDown()

    # ------------------------------------------------------------ helpers

    def _cmd(self, *args: str) -> str:
        return self.mgr_cluster.mon_manager.raw_cluster_cmd(*args)

    def _json(self, *args: str) -> Any:
        return json.loads(self._cmd(*args, '--format=json'))

    def _cmd_result(self, *args: str) -> Tuple[int, str]:
        p = self.mgr_cluster.mon_manager.run_cluster_cmd(
            args=list(args), stdout=StringIO(), stderr=StringIO(), check_status=False)
        return p.exitstatus, p.stderr.getvalue()

    def _status(self) -> Status:
        return self._json('rocks-autotune', 'status')

    def _own_config(self, osd: int) -> List[Tuple[str, str]]:
        return sorted((e['name'], e['value']) for e in self._json('config', 'dump')
                      if e['section'] == 'osd.{0}'.format(osd))

    def _osd(self, osd: int) -> Dict[str, Any]:
        return [o for o in self.mgr_cluster.mon_manager.get_osd_dump_json()['osds']
                if o['osd'] == osd][0]

    def _healthy(self) -> bool:
        health = self._json('health')
        return health['status'] == 'HEALTH_OK' and self.mgr_cluster.mon_manager.is_clean()

    def _canary(self) -> int:
        osds = [o['osd'] for o in self.mgr_cluster.mon_manager.get_osd_dump_json()['osds']
                if o['up'] and o['in']]
        self.assertGreaterEqual(len(osds), 3, 'need 3 OSDs up and in for a replicated canary')
        return max(osds)

    def _answer_restart(self, s: Status) -> None:
        """Restart the canary once for each restart the session asks for."""
        if PREFIX + 'MANUAL_RESTART' not in s.get('health', []):
            return
        cur = s.get('current') or {}
        key = (s['id'], s['phase'], cur.get('index'), cur.get('kind'))
        if key in self.answered:
            return
        log.info('the session asks for a restart of osd.%d (%s)', s['osd'], key)
        # also revives a killed canary; the old process is gone before the new
        # one starts (stop_daemon in qa/tasks/rocks_autotune.py says why)
        restart_daemon(self._osd_daemon(s['osd']))
        self.answered.add(key)

    def _osd_daemon(self, osd: int) -> Any:
        """osd.N's daemon in this cluster (tasks.rocks_autotune.osd_daemon)."""
        return osd_daemon(self.ctx, osd,
                          getattr(self.mgr_cluster.mon_manager, 'cluster', None) or 'ceph')

    def _drive(self, until: Callable[[Status], bool], timeout: float) -> Status:
        """Poll the session until `until(status)`, answering restart requests."""
        deadline = time.time() + timeout
        last = ''
        while True:
            s = self._status()
            line = '{0} {1}: {2}'.format(s['state'], s.get('phase'), s.get('message'))
            if line != last:
                log.info('session: %s', line)
                last = line
            if until(s):
                return s
            if time.time() > deadline:
                raise RuntimeError('timed out after {0}s; last status: {1}'.format(
                    timeout, json.dumps(s)))
            self._answer_restart(s)
            time.sleep(2)

    def _check_restored(self, osd: int, before: List[Tuple[str, str]]) -> None:
        self.assertEqual(self._own_config(osd), before)
        self.mgr_cluster.mon_manager.wait_till_osd_is_up(osd, timeout=300)
        shown = self._cmd('config', 'show', 'osd.{0}'.format(osd),
                          'bluestore_rocksdb_options').strip()
        want = self._cmd('config', 'get', 'osd.{0}'.format(osd),
                         'bluestore_rocksdb_options').strip()
        self.assertEqual(shown, want)
        self.assertNotIn('noout', self._osd(osd)['state'])
        checks = self._json('health').get('checks', {})
        self.assertEqual([c for c in checks if c.startswith(PREFIX)], [])
        self.wait_until_true(self._healthy, timeout=300)

    def _start(self, osd: int, extra: Optional[List[str]] = None) -> Status:
        out = self._cmd('rocks-autotune', 'start', '--osd', str(osd), *(extra or SESSION))
        self.assertIn('osd.{0}'.format(osd), out)
        return self._status()

    # ------------------------------------------------------------ tests

    def test_release_is_supported_and_bad_input_changes_nothing(self) -> None:
        # one test: each test's setUp costs about 25 s of MgrTestCase.setup_mgrs
        # the cluster runs a release the module supports, e.g. "ceph version
        # 20.2.4 (<sha1>) tentacle (stable)"
        for daemon, versions in self._json('versions').items():
            if daemon == 'overall':
                continue
            for version in versions:
                self.assertTrue(
                    any(re.search(r'\b{0}\b'.format(r), version) for r in SUPPORTED_RELEASES),
                    '{0} runs {1}: not a release rocks_autotune supports ({2})'.format(
                        daemon, version, ', '.join(SUPPORTED_RELEASES)))
        # the module loaded and answers idle
        self.assertIn(MODULE, self._json('mgr', 'module', 'ls')['enabled_modules'])
        self.assertIn(self._status()['state'], ('idle',) + ENDED)
        self.assertTrue(self._cmd('rocks-autotune', 'status').startswith('state: '))
        before = self._json('config', 'dump')
        missing = max(o['osd'] for o in
                      self.mgr_cluster.mon_manager.get_osd_dump_json()['osds']) + 100
        for args, expect in (
                (['--osd', str(missing)], 'osd.{0} does not exist'.format(missing)),
                (['--budget', '0.5'], '--budget'),
                (['--trials', '0'], '--trials'),
                (['--duration', '100000'], '--duration'),
                (['--workload', 'fio'], '--workload')):
            r, err = self._cmd_result('rocks-autotune', 'start', *args)
            self.assertNotEqual(r, 0, args)
            self.assertIn(expect, err)
            self.assertNotIn('Traceback', err)
        for verb in ('stop', 'abort'):
            r, err = self._cmd_result('rocks-autotune', verb)
            self.assertNotEqual(r, 0)
            self.assertIn('no session is running', err)
        self.assertEqual(self._json('config', 'dump'), before)

    def test_short_session(self) -> None:
        # the active mgr fails over mid-candidate: one session (minutes each
        # here) checks the resume and the answer
        osd = self._canary()
        before = self._own_config(osd)
        self._start(osd)
        r, err = self._cmd_result('rocks-autotune', 'start')
        self.assertNotEqual(r, 0)
        self.assertIn('already', err)
        s = self._drive(lambda s: (s.get('current') or {}).get('kind') == 'candidate', 600)
        session_id = s['id']
        self.mgr_cluster.mgr_fail(self.mgr_cluster.get_active_id())
        self.wait_until_true(lambda: self.mgr_cluster.get_mgr_map()['available'], timeout=60)
        s = self._drive(lambda s: s['state'] in ENDED, self.SESSION_TIMEOUT)
        self.assertEqual(s['id'], session_id)
        self.assertEqual(s['state'], 'done', s)
        trials = self._json('rocks-autotune', 'history')
        kinds = [t['kind'] for t in trials]
        self.assertEqual(kinds.count('baseline'), 2)
        self.assertEqual(kinds.count('candidate'), 2)
        for t in trials:
            if t['verdict'] == 'failed':
                self.assertTrue(t['error'], t)
            else:
                self.assertGreater(t['measurement']['write_amp'], 0, t)
        # the answer: options for the canary, or keep the current ones (what a
        # one-round confirmation always answers: it takes 5 rounds to recommend)
        best = self._cmd('rocks-autotune', 'best')
        answer = self._json('rocks-autotune', 'best')
        if answer['answer'] == 'recommend':
            self.assertIn('bluestore_rocksdb_options', best)
            self.assertIn('ceph config set osd.{0} bluestore_rocksdb_options'.format(osd),
                          answer['commands'][0])
        else:
            self.assertEqual(answer['answer'], 'keep current', answer)
            self.assertTrue(best.startswith('keep your current options'), best)
            self.assertEqual(answer['commands'], [])
        # what differs by release was read from this cluster, not assumed
        self.assertEqual(s['release_default'], self._json(
            'config', 'help', 'bluestore_rocksdb_options')['default'])
        self.assertEqual(s['sharding'], self._cmd(
            'config', 'get', 'osd.{0}'.format(osd), 'bluestore_rocksdb_cfs').strip())
        self._check_restored(osd, before)

    def test_abort_mid_trial(self) -> None:
        osd = self._canary()
        before = self._own_config(osd)
        self._start(osd)
        self._drive(lambda s: (s.get('current') or {}).get('kind') == 'candidate', 600)
        self.assertNotEqual(self._own_config(osd), before)
        self._cmd('rocks-autotune', 'abort')
        s = self._drive(lambda s: s['state'] in ENDED, 300)
        self.assertEqual(s['state'], 'aborted', s)
        self._check_restored(osd, before)

    def test_canary_killed_mid_trial(self) -> None:
        osd = self._canary()
        before = self._own_config(osd)
        self._start(osd)
        s = self._drive(lambda s: (s.get('current') or {}).get('kind') == 'candidate'
                        and s['phase'] in ('warmup', 'measure'), 600)
        index = s['current']['index']
        log.info('killing osd.%d in trial %d', osd, index)
        stop_daemon(self._osd_daemon(osd))
        s = self._drive(lambda s: s['state'] in ENDED, self.SESSION_TIMEOUT)
        self.assertEqual(s['state'], 'done', s)
        failed = [t for t in self._json('rocks-autotune', 'history')
                  if t['verdict'] == 'failed']
        self.assertEqual([t['index'] for t in failed], [index])
        self.assertTrue(failed[0]['error'])
        self._check_restored(osd, before)
