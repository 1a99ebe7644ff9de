"""What differs between Ceph releases: read from the cluster, never assumed.

Run on the host (Pacific's mgr_module.py) by `tox -e unit` and inside the
Tentacle root by `tox -e unit-tentacle`, so the command registry is checked
against each release's real mgr code.
"""
import json
from typing import Any, Dict, List

import pytest

import mgr_mock
from fake_cluster import DEFAULTS, TENTACLE_DEFAULTS, FakeClock, FakeCluster
from rocks_autotune.cluster import MgrCluster
from rocks_autotune.rocksdb_options import (NEW_TUNING, OptionStringError, parse_options,
                                            parse_sharding)
from rocks_autotune.session_settings import Params
from rocks_autotune.session import Session, Settings
from rocks_autotune.space import GiB, MiB, SearchSpace
from rocks_autotune.workload import OSD_BENCH

mgr_mock.install()
from rocks_autotune import module  # noqa: E402


def families(release_defaults: Dict[str, str]) -> Any:
    return parse_sharding(release_defaults['bluestore_rocksdb_cfs'])


@pytest.mark.parametrize('defaults', [DEFAULTS, TENTACLE_DEFAULTS], ids=['pacific', 'tentacle'])
def test_both_releases_shard_into_twelve_column_families(defaults: Dict[str, str]) -> None:
    cfs = families(defaults)
    assert [cf.name for cf in cfs] == ['default', 'm', 'p', 'O', 'L', 'P']
    assert sum(cf.shards for cf in cfs) == 12


def test_tentacle_families_keep_their_own_merge_count() -> None:
    cfs = {cf.name: cf for cf in families(TENTACLE_DEFAULTS)}
    assert cfs['L'].memtable == {'min_write_buffer_number_to_merge': 32}
    assert cfs['P'].memtable == {'min_write_buffer_number_to_merge': 32}
    assert cfs['O'].memtable == {}  # block_cache={...} is not a memtable option


@pytest.mark.parametrize('bad', ['m(x)', 'O(0)', '(3)', 'm(3'])
def test_sharding_that_does_not_parse_is_refused(bad: str) -> None:
    with pytest.raises(OptionStringError):
        parse_sharding(bad)


def test_memtable_memory_counts_every_column_family() -> None:
    space = SearchSpace(column_families=families(TENTACLE_DEFAULTS), max_memtable_bytes=12 * GiB)
    # Tentacle's default: 64 x 16 MiB in each of 12 families
    assert space.memtable_bytes(64, 16 * MiB) == 12 * GiB
    c = SearchSpace.candidate_from_options(parse_options(TENTACLE_DEFAULTS[
        'bluestore_rocksdb_options']))
    assert space.violations(c) == []
    bigger = SearchSpace.candidate_from_options(parse_options(NEW_TUNING.replace(
        'write_buffer_size=8388608', 'write_buffer_size=16777216')))
    msg = ' '.join(space.violations(bigger))
    assert 'memtables may use 24 GiB (12 column families' in msg


def test_a_candidate_may_not_lower_a_familys_merge_count() -> None:
    space = SearchSpace(column_families=families(TENTACLE_DEFAULTS), max_memtable_bytes=64 * GiB)
    few = SearchSpace.candidate_from_options(parse_options(DEFAULTS['bluestore_rocksdb_options']))
    assert few.max_write_buffer_number == 4
    msg = ' '.join(space.violations(few))
    assert 'not in L (32), P (32)' in msg
    assert not space.point_is_safe(space.to_point(few))
    # the same candidate is fine where no family sets its own merge count
    pacific = SearchSpace(column_families=families(DEFAULTS), max_memtable_bytes=64 * GiB)
    assert pacific.violations(few) == []


def _session(defaults: Dict[str, str], trials: int = 6) -> Session:
    clock = FakeClock()
    cluster = FakeCluster(clock, defaults=defaults)
    settings = Settings(warmup=2.0, restart_timeout=30.0, bench_chunk_seconds=2.0)
    saved: List[str] = []
    s = Session.start(cluster, Params(osd=0, trials=trials, duration=10.0, workload=OSD_BENCH),
                      settings, lambda st: saved.append(json.dumps(st.to_json())), clock)
    for _ in range(5000):
        if not s.active:
            break
        clock.advance(s.step())
    assert s.s.state == 'done', s.s.message
    return s


def test_a_tentacle_session_starts_from_tentacles_default() -> None:
    s = _session(TENTACLE_DEFAULTS)
    assert s.s.release_default == TENTACLE_DEFAULTS['bluestore_rocksdb_options']
    assert s.s.sharding == TENTACLE_DEFAULTS['bluestore_rocksdb_cfs']
    # the cap by default: what the release's default may use
    assert s.space.max_memtable_bytes == 12 * GiB
    for t in s.s.trials:
        if t.kind == 'candidate':
            # L and P merge 32: every candidate keeps more memtables than that
            assert t.candidate.max_write_buffer_number > 32, t.candidate
    # the warm start holds Tentacle's default (the canary's options too), not Pacific's
    tentacle, pacific = (SearchSpace.candidate_from_options(parse_options(
        d['bluestore_rocksdb_options'])) for d in (TENTACLE_DEFAULTS, DEFAULTS))
    assert tentacle in s.search.optimizer.warm_start
    assert pacific not in s.search.optimizer.warm_start


def test_a_pacific_session_caps_memtables_at_pacifics_default() -> None:
    s = _session(DEFAULTS, trials=2)
    assert s.space.max_memtable_bytes == 12 * 4 * 256 * MiB


class _HealthMgr:
    def __init__(self, health: Dict[str, Any]) -> None:
        self.health = health

    def get(self, what: str) -> Dict[str, str]:
        assert what == 'health'
        return {'json': json.dumps(self.health)}


def test_muted_checks_are_left_out_as_ceph_s_does() -> None:
    # the shape of `ceph health -f json` on the Tentacle lab, noscrub muted
    checks: Dict[str, Any] = {
        'OSDMAP_FLAGS': {'severity': 'HEALTH_WARN', 'muted': True,
                         'summary': {'message': 'noscrub flag(s) set', 'count': 7}},
        'RECENT_CRASH': {'severity': 'HEALTH_ERR', 'muted': True,
                         'summary': {'message': '1 daemons have recently crashed'}}}
    h = {'status': 'HEALTH_WARN', 'checks': checks,
         'mutes': [{'code': 'OSDMAP_FLAGS', 'sticky': False}]}
    assert MgrCluster(_HealthMgr(h)).health() == ('HEALTH_OK', [])
    h['checks']['OSD_FLAGS'] = {'severity': 'HEALTH_WARN', 'muted': False}
    assert MgrCluster(_HealthMgr(h)).health() == ('HEALTH_WARN', ['OSD_FLAGS'])
    h['checks']['RECENT_CRASH']['muted'] = False
    assert MgrCluster(_HealthMgr(h)).health() == ('HEALTH_ERR', ['OSD_FLAGS', 'RECENT_CRASH'])


def test_commands_are_registered_and_dispatched_by_this_release() -> None:
    m = mgr_mock.make_module()
    prefixes = {' '.join(c['cmd'].split()[:2]) for c in m.COMMANDS}
    assert {'rocks-autotune start', 'rocks-autotune status', 'rocks-autotune stop',
            'rocks-autotune abort', 'rocks-autotune history', 'rocks-autotune best'} <= prefixes
    for c in m.COMMANDS:
        if c['cmd'].startswith('rocks-autotune'):
            assert c['desc'], c  # the docstring is the help
    r = m._handle_command(None, {'prefix': 'rocks-autotune status', 'format': 'json'})
    assert r.retval == 0 and json.loads(r.stdout)['state'] == 'idle'
    assert module.RocksAutotune.CLICommand is not None


def test_the_panel_marks_the_releases_own_default() -> None:
    from rocks_autotune import panel
    s = _session(TENTACLE_DEFAULTS, trials=2)
    rows = panel.trial_rows(s.s.trials, panel.release_default(s.s))
    assert rows[0]['kind'] == 'baseline' and rows[0]['marker'] == 'default'
    # the same trials read against Pacific's default: no longer "the default"
    assert panel.trial_rows(s.s.trials, DEFAULTS['bluestore_rocksdb_options'])[0][
        'marker'] == ''


def test_declares_notify_types_so_tentacle_finds_the_standby_class() -> None:
    # Tentacle's loader looks for the standby class with a missing
    # NOTIFY_TYPES' AttributeError still pending and then finds none: the
    # standby panel never ran (the faults tier's standby test saw it)
    assert module.RocksAutotune.__dict__.get('NOTIFY_TYPES') == []
