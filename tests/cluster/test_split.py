"""The split measurement design on the lab (issue 24): the client load
writes the canary's PGs (C) and, over the same windows, PGs of the same
pool that leave it out (R); the confirmation judges C/R.  The lab's pools
have size 3 on 3 OSDs, so every PG holds every OSD: the test makes a size-2
pool, where some do not.  Short windows: it checks behaviour, not figures."""
import json
from typing import Any, Dict, List

import pytest

from conftest import ENDED, Lab
from test_client_load import in_namespace, osd_map
from test_faults import delete_pool, set_opt

POOL = 'splittest'
OSD = 1


def history(lab: Lab) -> List[Dict[str, Any]]:
    return json.loads(lab.ceph('rocks-autotune', 'history', '-f', 'json').stdout)


def test_split_on_a_size_3_pool_is_refused_and_changes_nothing(lab: Lab) -> None:
    lab.wait('active+clean', lab.active_clean, 300)

    def config() -> List[Dict[str, Any]]:
        # the OSDs' (the mgr's own entries hold the options this test sets)
        return [e for e in lab.json('config', 'dump') if e['section'] != 'mgr']
    before, last = config(), lab.status()['state']
    assert last in ('idle',) + ENDED, last
    set_opt(lab, 'measurement_design', 'split')
    try:
        r = lab.ceph('rocks-autotune', 'start', '--osd', str(OSD), '--trials', '1',
                     '--duration', '4', check=False)
    finally:
        set_opt(lab, 'measurement_design', 'auto')
    assert r.returncode != 0, r.stdout
    assert "pool 'rbd' cannot hold a reference group: 0 of its" in r.stderr, r.stderr
    assert config() == before
    assert lab.status()['state'] == last, lab.status()  # the last session's, as it was


def test_a_split_session_writes_both_groups_and_judges_c_over_r(lab: Lab) -> None:
    lab.wait('active+clean', lab.active_clean, 300)
    # size 2, min_size 1 (as qa/bench/split_aa.py): about a third of the PGs
    # leave the canary out; min_size 1 keeps them writable while it restarts
    lab.ceph('osd', 'pool', 'create', POOL, '32', '32', 'replicated', '--size', '2')
    try:
        # min_size last: it re-peers the PGs, which pool_clean waits for
        lab.ceph('osd', 'pool', 'application', 'enable', POOL, 'rados')
        lab.ceph('osd', 'pool', 'set', POOL, 'min_size', '1')
        lab.wait(f'{POOL} active+clean', lambda: lab.pool_clean(POOL), 300)
        set_opt(lab, 'client_pool', POOL)
        # time for the fill of both groups (the lab's 2 s may cut it short)
        set_opt(lab, 'precondition_limit', '10')
        try:
            lab.ceph('rocks-autotune', 'start', '--osd', str(OSD), '--trials', '1',
                     '--duration', '4', '--allow-single-copy')
        finally:
            set_opt(lab, 'precondition_limit', '2')
        st = lab.status()
        c = st['client']
        assert c['design'] == 'split' and len(c['ref_seeds']) >= 4, c
        assert st['design']['design'] == 'split', st['design']
        # one host: R's OSDs share the canary's, and the status says what C/R then reads
        assert c['shared_host'] is True and "C/R reads C's effect minus R's" \
            in st['design']['note'], st['design']
        lab.wait('a window of the client load', lambda: lab.status()['phase'] == 'measure',
                 600)
        written = in_namespace(lab, POOL)
        prefix = st['id'][:8]
        r_names = [n for n in written if n.startswith(prefix + 'r.')]
        c_names = [n for n in written if n.startswith(prefix + '.')]
        assert c_names and r_names, written
        # R was filled whole before the first window, as C: its writes then
        # overwrite, as C's do, and its OSDs' data does not grow through the session
        assert len(r_names) == len(c_names) == c['count'], written
        size = int(lab.ceph('config', 'get', 'mgr',
                            'mgr/rocks_autotune/client_object_size').stdout)
        for name in r_names[:4]:
            stat = lab.run('rados', '-p', POOL, '-N', 'rocks_autotune', 'stat', name).stdout
            assert stat.rstrip().endswith(f'size {size}'), stat
        st = lab.wait_ended(900)
        assert st['state'] == 'done', st
        assert in_namespace(lab, POOL) == [], st["client"]
        assert st["client"]["removed"] >= len(written), st["client"]
        trials = history(lab)
        assert trials
        for t in trials:
            m = t['measurement']
            # both groups wrote in every window; C/R is theirs, C's is the canary's IOPS
            assert m['iops_c'] > 0 and m['iops_r'] > 0, t
            assert m['c_over_r'] == pytest.approx(m['iops_c'] / m['iops_r']), t
            assert m['iops'] == m['iops_c'], t
        # the A/A noise and the confirmation are on C/R
        assert st['noise']['objective'] == 'c_over_r', st['noise']
        conf = st['confirmation']
        assert conf['objective'] == 'c_over_r', conf
        assert conf['measurement_plan']['design'] == 'split', conf['measurement_plan']
        for a in conf['result']['arms']:
            assert 'iops_c' in a and 'iops_r' in a, a
        best = lab.json('rocks-autotune', 'best')
        assert best['measurement_plan']['design'] == 'split', best
        text = lab.ceph('rocks-autotune', 'status', '--detail').stdout
        assert 'measurement design: split' in text, text
        # R's objects were in PGs without the canary (read with it up)
        lab.wait('active+clean', lab.active_clean, 180)
        for name in r_names[:8]:
            assert OSD not in osd_map(lab, POOL, name, 'rocks_autotune')['up'], name
        for name in c_names[:8]:
            assert OSD in osd_map(lab, POOL, name, 'rocks_autotune')['up'], name
    finally:
        set_opt(lab, 'client_pool', '')
        if POOL in lab.json('osd', 'pool', 'ls'):
            delete_pool(lab, POOL)
