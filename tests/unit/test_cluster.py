"""MgrCluster's reading of what the mgr gives it (PG states, OSD flags,
crash reports), over a stub of the mgr: the shapes are those of Pacific and
Tentacle, which agree on them."""
import json
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import pytest

from rocks_autotune.cluster import Crash, MgrCluster

DAY = 86400.0


class StubMgr:
    def __init__(self, pg_states: Optional[Dict[str, int]] = None,
                 osd_map: Optional[Dict[str, Any]] = None,
                 crash_store: Optional[Dict[str, str]] = None,
                 crash_options: Optional[Dict[str, Any]] = None) -> None:
        self.pg_states = pg_states or {}
        self.osd_map = osd_map or {'osds': []}
        self.crash_store = crash_store or {}
        self.crash_options = crash_options or {}
        self.commands: List[Dict[str, Any]] = []

    def get(self, what: str) -> Dict[str, Any]:
        if what == 'pg_summary':
            return {'all': self.pg_states, 'by_pool': {}}
        assert what == 'osd_map', what
        return self.osd_map

    def mon_command(self, cmd: Dict[str, Any]) -> Tuple[int, str, str]:
        self.commands.append(cmd)
        assert cmd['prefix'] == 'config-key dump', cmd
        prefix = cmd.get('key', '')
        return 0, json.dumps({k: v for k, v in self.crash_store.items()
                              if k.startswith(prefix)}), ''

    def get_module_option_ex(self, module: str, key: str, default: Any = None) -> Any:
        assert module == 'crash'
        return self.crash_options.get(key, default)


# ------------------------------------------------------------ PG states

def test_scrubbing_and_snap_trimming_pgs_are_clean() -> None:
    # a production cluster is nearly always scrubbing or trimming something
    states = {'active+clean': 90, 'active+clean+scrubbing': 2,
              'active+clean+scrubbing+deep': 1, 'active+clean+snaptrim': 1,
              'active+clean+snaptrim_wait': 2}
    c = MgrCluster(StubMgr(states))
    assert c.pgs_active_clean()
    assert c.inactive_pgs() == 0


@pytest.mark.parametrize('state', [
    'active+undersized+degraded', 'active+undersized', 'active+degraded',
    'active+clean+remapped', 'active+remapped+backfilling', 'active+remapped+backfill_wait',
    'active+recovering', 'active+recovery_wait+degraded', 'active+clean+inconsistent',
    'active+clean+scrubbing+deep+inconsistent+repair', 'active+clean+laggy',
    'stale+active+clean', 'peered', 'down', 'incomplete', 'peering', 'unknown',
    'creating+activating', 'undersized+degraded+peered',
])
def test_pgs_not_clean_still_block(state: str) -> None:
    c = MgrCluster(StubMgr({'active+clean': 90, state: 1}))
    assert not c.pgs_active_clean()


def test_no_pgs_at_all_are_not_clean() -> None:
    assert not MgrCluster(StubMgr({})).pgs_active_clean()


# ------------------------------------------------------------ OSD flags

def test_osd_flags_are_read_as_osd_flags_reports_them() -> None:
    # `ceph osd dump -f json`: per-OSD states, then CRUSH node and device
    # class flags (`ceph osd set-group noout host-a`)
    osd_map = {'osds': [{'osd': 0, 'state': ['exists', 'up', 'noout']},
                        {'osd': 1, 'state': ['exists', 'up']},
                        {'osd': 2, 'state': ['exists', 'up', 'noup', 'noout']}],
               'crush_node_flags': {'host-a': ['noout'], 'host-b': []},
               'device_class_flags': {'hdd': ['noin']}}
    c = MgrCluster(StubMgr(osd_map=osd_map))
    assert c.osd_flags() == {'osd.0': ['noout'], 'osd.2': ['noout', 'noup'],
                             'crush node host-a': ['noout'], 'device class hdd': ['noin']}
    assert c.has_noout(0) and c.has_noout(2) and not c.has_noout(1)


# ------------------------------------------------------------ crashes

def _report(crash_id: str, entity: str, stamp: str, **extra: Any) -> str:
    return json.dumps(dict({'crash_id': crash_id, 'entity_name': entity, 'timestamp': stamp,
                            'utsname_hostname': 'host-a', 'backtrace': ['(abort()+0x1)']},
                           **extra))


def _stamp(t: float, sep: str = 'T') -> str:
    return time.strftime(f'%Y-%m-%d{sep}%H:%M:%S', time.gmtime(t)) + '.250000Z'


def test_one_view_reads_each_map_once_for_its_own_thread() -> None:
    reads: List[str] = []

    class Counted(StubMgr):
        def get(self, what: str) -> Dict[str, Any]:
            reads.append(what)
            return super().get(what)
    c = MgrCluster(Counted(osd_map={'osds': [], 'flags_set': ['noup']}))
    with c.one_view():
        assert c.osdmap_flags() == ['noup'] and c.osd_states() == {}
        with c.one_view():  # the outer one's
            assert c.osd_flags() == {}
        other = threading.Thread(target=c.osd_states)  # not another thread's
        other.start()
        other.join()
    c.osd_states()
    assert reads == ['osd_map'] * 3


def test_recent_crashes_are_the_ones_recent_crash_counts() -> None:
    now = time.time()
    store = {
        # the crash module's reports, in its store: mgr/crash/crash/<id>
        'mgr/crash/crash/a': _report('a', 'osd.0', _stamp(now - 60)),
        'mgr/crash/crash/b': _report('b', 'osd.2', _stamp(now - 2 * DAY, sep=' ')),
        'mgr/crash/crash/c': _report('c', 'osd.0', _stamp(now - 30),
                                     archived='2024-01-01 00:00:00.0'),
        'mgr/crash/crash/d': _report('d', 'mon.a', _stamp(now - 20 * DAY)),  # too old
        'mgr/other/key': 'not a crash',
    }
    mgr = StubMgr(crash_store=store)
    crashes = sorted(MgrCluster(mgr).recent_crashes(), key=lambda c: c.id)
    assert [(c.id, c.entity) for c in crashes] == [('a', 'osd.0'), ('b', 'osd.2')]
    assert abs(crashes[0].time - (int(now) - 60 + 0.25)) < 1e-3
    assert abs(crashes[1].time - (int(now) - 2 * DAY + 0.25)) < 1e-3
    assert mgr.commands == [{'prefix': 'config-key dump', 'key': 'mgr/crash/crash/'}]
    # the crash module's own window (warn_recent_interval) decides what is recent
    mgr.crash_options['warn_recent_interval'] = DAY
    assert [c.id for c in MgrCluster(mgr).recent_crashes()] == ['a']


def test_an_unreadable_crash_report_counts_as_someone_elses() -> None:
    store = {'mgr/crash/crash/x': '{not json'}
    crashes = MgrCluster(StubMgr(crash_store=store)).recent_crashes()
    assert crashes == [Crash(id='x', entity='', time=0.0)]


# ------------------------------------------------------------ the orchestrator

class _Orchestrator:
    """What MgrCluster imports of Ceph's orchestrator package (its module
    needs prettytable, which the unit tier does not install)."""

    class NoOrchestrator(Exception):
        pass

    @staticmethod
    def raise_if_exception(completion: Any) -> Any:
        return completion


class DisabledBackendMgr:
    """A mgr whose mgr/orchestrator/orchestrator names a module that is not
    enabled: orchestrator._oremote's mgr.remote raises ImportError ("Module
    not found"), as Tentacle's ceph-mgr does (seen under teuthology's
    MgrTestCase, which disables every module but cephadm)."""

    def daemon_action(self, action: str, name: str) -> Any:
        raise ImportError('Module not found')


def test_a_backend_that_is_not_enabled_is_no_orchestrator(monkeypatch: Any) -> None:
    from rocks_autotune.cluster import NoOrchestrator
    monkeypatch.setitem(__import__('sys').modules, 'orchestrator', _Orchestrator)
    with pytest.raises(NoOrchestrator, match='backend is not enabled.*Module not found'):
        MgrCluster(DisabledBackendMgr()).restart_osd(1)
