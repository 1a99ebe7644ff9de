"""MgrCluster reads pool layouts and config masks as the mgr and the mon give them."""
import json
from typing import Any, Dict, List, Tuple

from rocks_autotune.cluster import NO_OSD, MgrCluster, PgInfo, PoolInfo
from rocks_autotune.gate import thin_pools


class _Mgr:
    """The mgr's `get` and `mon_command`, answering from fixed data."""

    def __init__(self, data: Dict[str, Any], config_dump: List[Dict[str, Any]]) -> None:
        self.data = data
        self.config_dump = config_dump

    def get(self, what: str) -> Any:
        return self.data[what]

    def mon_command(self, cmd: Dict[str, Any]) -> Tuple[int, str, str]:
        assert cmd['prefix'] == 'config dump'
        return 0, json.dumps(self.config_dump), ''


def _mgr(config_dump: List[Dict[str, Any]] = []) -> _Mgr:
    # the shapes of `ceph osd dump`, `pg dump pgs` and `osd tree` (-f json)
    return _Mgr({
        'osd_map': {
            'osds': [{'osd': i, 'up': 1, 'in': 1, 'up_from': 5, 'state': ['exists', 'up']}
                     for i in range(4)],
            'pools': [
                {'pool': 1, 'pool_name': 'rbd', 'type': 1, 'size': 3, 'min_size': 2,
                 'erasure_code_profile': ''},
                {'pool': 2, 'pool_name': 'ec21', 'type': 3, 'size': 3, 'min_size': 2,
                 'erasure_code_profile': 'k2m1'},
                {'pool': 3, 'pool_name': 'lost-profile', 'type': 3, 'size': 4, 'min_size': 3,
                 'erasure_code_profile': 'gone'}],
            'erasure_code_profiles': {
                'k2m1': {'k': '2', 'm': '1', 'plugin': 'jerasure', 'technique': 'reed_sol_van'},
                'default': {'k': '2', 'm': '2', 'plugin': 'jerasure'}},
            'full_ratio': 0.95, 'nearfull_ratio': 0.85},
        # `ceph df` (its pools' stats): pool 2's is missing
        'df': {'pools': [{'id': 1, 'name': 'rbd', 'stats': {'max_avail': 95 << 30}},
                         {'id': 3, 'name': 'lost-profile', 'stats': {}}]},
        'pg_stats': {'pg_stats': [
            {'pgid': '1.0', 'up': [0, 1, 2], 'acting': [0, 1, 2]},
            {'pgid': '1.1', 'up': [1, 2, 3], 'acting': [1, 2, 3]},
            # a remapped PG: osd.0 is a backfill target in `up`, not in `acting`
            {'pgid': '1.2', 'up': [0, 2, 3], 'acting': [1, 2, 3]},
            {'pgid': '2.0', 'up': [0, 1, NO_OSD], 'acting': [0, 1, NO_OSD]},
            {'pgid': '3.0', 'up': [3, 2, 1, 0], 'acting': [3, 2, 1, 0]}]},
        'osd_map_crush': {'devices': [{'id': i, 'class': 'ssd' if i < 2 else 'hdd'}
                                      for i in range(4)]},
        # the fullest OSD 45% used
        'osd_stats': {'osd_stats': [{'osd': i, 'num_pgs': 10, 'kb': 1000,
                                     'kb_used': 450 if i == 2 else 100} for i in range(4)]},
        'osd_map_tree': {'nodes': [
            {'id': -1, 'name': 'default', 'type': 'root', 'children': [-2, -3]},
            {'id': -2, 'name': 'rack1', 'type': 'rack', 'children': [-4]},
            {'id': -4, 'name': 'node1', 'type': 'host', 'children': [0, 1]},
            {'id': -3, 'name': 'node2', 'type': 'host', 'children': [2, 3]},
            {'id': 0, 'name': 'osd.0', 'type': 'osd'}]},
    }, config_dump)


def test_pools_and_the_pgs_an_osd_serves() -> None:
    c = MgrCluster(_mgr())
    pools = c.pools()
    # room to write: MAX AVAIL runs the fullest OSD (45%) to the full ratio
    # (95%), room to nearfull (85%): 40 of those 50 points
    assert pools[1] == PoolInfo(1, 'rbd', 3, 2, room=76 << 30)
    assert pools[2] == PoolInfo(2, 'ec21', 3, 2, erasure=True, k=2, m=1)  # room unknown
    # an OSD past nearfull already: no room at all
    m = _mgr()
    m.data['osd_stats']['osd_stats'][2]['kb_used'] = 900
    assert MgrCluster(m).pools()[1].room == 0
    # a quota (ceph osd pool set-quota) leaves what is not stored yet
    m = _mgr()
    m.data['osd_map']['pools'][0].update(quota_max_bytes=10 << 30, quota_max_objects=1000)
    m.data['df']['pools'][0]['stats'].update(stored=4 << 30, objects=1200)
    rbd = MgrCluster(m).pools()[1]
    assert (rbd.quota_bytes, rbd.quota_objects) == (6 << 30, 0)
    m.data['df']['pools'][0]['stats'].pop('stored')  # its use unknown: not said
    assert MgrCluster(m).pools()[1].quota_bytes is None
    # marked full by the mons (its quota reached: full_quota and full), as
    # `ceph osd dump` names a pool's flags
    assert not MgrCluster(m).pools()[1].full
    m.data['osd_map']['pools'][0]['flags_names'] = 'hashpspool,full_quota,full'
    assert MgrCluster(m).pools()[1].full
    # a profile that cannot be read counts as no shard to spare
    assert pools[3].erasure and pools[3].k == 4
    # the PGs osd.0 serves: in their up or acting set
    assert [pg.pgid for pg in c.pgs() if 0 in pg.acting + pg.up] == ['1.0', '1.2', '2.0', '3.0']
    assert c.pgs()[3] == PgInfo('2.0', 2, [0, 1, NO_OSD], [0, 1, NO_OSD])


def test_thin_pools_counts_the_copies_left_in_the_acting_set() -> None:
    c = MgrCluster(_mgr())
    # 1.0 keeps 2 copies, 1.2 does not lose one; 2.0 keeps 1 shard of k=2
    assert thin_pools(c, 0) == [
        "pool 'ec21' (erasure-coded k=2 m=1, min_size 2): 1 PG(s) with no shard to spare",
        "pool 'lost-profile' (erasure-coded k=4 m=0, min_size 3): 1 PG(s) with no shard to "
        "spare"]
    assert thin_pools(c, 3) == [
        "pool 'lost-profile' (erasure-coded k=4 m=0, min_size 3): 1 PG(s) with no shard to "
        "spare"]


def _entry(section: str, name: str, value: str, **mask: str) -> Dict[str, Any]:
    return dict(section=section, name=name, value=value, level='advanced',
                can_update_at_runtime=False, **mask)


def test_config_entries_are_those_whose_section_and_mask_match_the_osd() -> None:
    opts, annex = 'bluestore_rocksdb_options', 'bluestore_rocksdb_options_annex'
    dump = [
        _entry('global', opts, 'a'),
        _entry('osd', annex, 'b', mask='class:ssd', device_class='ssd'),
        _entry('osd', annex, 'no', mask='class:hdd', device_class='hdd'),
        _entry('osd', opts, 'c', mask='host:node1', location_type='host',
               location_value='node1'),
        _entry('osd', opts, 'no', mask='host:node2', location_type='host',
               location_value='node2'),
        _entry('osd', opts, 'd', mask='rack:rack1/class:ssd', location_type='rack',
               location_value='rack1', device_class='ssd'),
        _entry('osd.0', opts, 'e'),
        _entry('osd.1', opts, 'no'),
        _entry('mgr', opts, 'no'),
        _entry('osd', 'osd_max_backfills', 'no'),
    ]
    c = MgrCluster(_mgr(dump))
    assert c.config_entries(0, (opts, annex)) == {
        'global': {opts: 'a'}, 'osd/class:ssd': {annex: 'b'}, 'osd/host:node1': {opts: 'c'},
        'osd/rack:rack1/class:ssd': {opts: 'd'}, 'osd.0': {opts: 'e'}}
    assert c.config_get_own('osd.0', opts) == 'e'
    assert c.config_get_own('osd', annex) is None  # masked entries are not the osd mask's own


def test_config_get_own_reads_the_value_at_exactly_a_masked_who() -> None:
    # a rollout saves what was at osd/class:ssd before it sets it (issue 14)
    opts, annex = 'bluestore_rocksdb_options', 'bluestore_rocksdb_options_annex'
    c = MgrCluster(_mgr([
        _entry('osd', annex, 'b', mask='class:ssd', device_class='ssd'),
        _entry('osd', opts, 'c', mask='host:node1', location_type='host',
               location_value='node1'),
        _entry('osd', opts, 'd', mask='rack:rack1/class:ssd', location_type='rack',
               location_value='rack1', device_class='ssd'),
        _entry('osd', opts, 'e')]))
    assert c.config_get_own('osd/class:ssd', annex) == 'b'
    assert c.config_get_own('osd/class:hdd', annex) is None
    assert c.config_get_own('osd/host:node1', opts) == 'c'
    assert c.config_get_own('osd/rack:rack1/class:ssd', opts) == 'd'
    assert c.config_get_own('osd/class:ssd', opts) is None  # only with the rack
    assert c.config_get_own('osd', opts) == 'e'


def test_crush_order_is_the_trees_with_each_osds_host() -> None:
    # `ceph osd tree -f json` lists nodes depth first, as it prints them; a
    # bucket's children are listed the other way round
    m = _mgr()
    m.data['osd_map']['osds'].append({'osd': 4, 'up': 1, 'in': 1, 'up_from': 5})
    m.data['osd_map_tree'] = {'nodes': [
        {'id': -1, 'name': 'default', 'type': 'root', 'children': [-3, -5]},
        {'id': -5, 'name': 'node2', 'type': 'host', 'children': [3, 1]},
        {'id': 1, 'name': 'osd.1', 'type': 'osd'},
        {'id': 3, 'name': 'osd.3', 'type': 'osd'},
        {'id': -2, 'name': 'rack1', 'type': 'rack', 'children': [-3]},
        {'id': -3, 'name': 'node1', 'type': 'host', 'children': [2, 0]},
        {'id': 0, 'name': 'osd.0', 'type': 'osd'},
        {'id': 2, 'name': 'osd.2', 'type': 'osd'}]}
    # osd.4 is in the OSD map but in no bucket: last, on no host
    assert MgrCluster(m).crush_order() == [(1, 'node2'), (3, 'node2'), (0, 'node1'),
                                           (2, 'node1'), (4, '')]
