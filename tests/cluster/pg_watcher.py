"""Sample the lab's inactive PGs once a second until killed.

Run with the release's own Python and librados (`ceph-lab exec -- /usr/bin/python3
tests/cluster/pg_watcher.py OUT`): one connection for the whole run, so a
sample costs a mgr command, not a `ceph` CLI start.  Every sample is one JSON
line in OUT, {"t": time, "inactive": [[pgid, state], ...], "not_clean": N}
(N: the PGs not active+clean as the module counts them) or {"t": time,
"error": ...}, so a reader can tell "no inactive PG" from "not sampled".
Each sample also has the OSDs from the OSD map, "osds": {id: [up, up_from]}
(or "osd_error": ...): which are down, and when each last came up.

PGs in state `unknown` are left out: that is a new active mgr that has not
heard from the OSDs yet (after `ceph mgr fail`), not I/O that stopped.
"""
import json
import os
import sys
import time

import rados  # type: ignore[import-not-found]

# "clean" as the module means it (scrubbing is background work, not unclean)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'src',
                                'pybind', 'mgr'))
from rocks_autotune.cluster import pg_state_clean  # noqa: E402


def pgs(cluster: 'rados.Rados') -> dict:
    """The PGs not active (what `ceph pg dump_stuck inactive` counts, without
    its 'stuck for' delay) and how many are not active+clean."""
    cmd = json.dumps({'prefix': 'pg dump', 'dumpcontents': ['pgs_brief'], 'format': 'json'})
    ret, out, err = cluster.mgr_command(cmd, b'', timeout=10)
    if ret != 0:
        raise RuntimeError(f'pg dump pgs_brief: {ret} {err}')
    data = json.loads(out)
    brief = data.get('pg_stats', []) if isinstance(data, dict) else data
    return {'inactive': [[p['pgid'], p['state']] for p in brief
                         if 'active' not in p['state'].split('+') and p['state'] != 'unknown'],
            'not_clean': len([p for p in brief if not pg_state_clean(p['state'])])}


def osds(cluster: 'rados.Rados') -> dict:
    """{id: [up, up_from]} from the OSD map."""
    cmd = json.dumps({'prefix': 'osd dump', 'format': 'json'})
    ret, out, err = cluster.mon_command(cmd, b'', timeout=10)
    if ret != 0:
        raise RuntimeError(f'osd dump: {ret} {err}')
    return {str(o['osd']): [o['up'], o['up_from']] for o in json.loads(out)['osds']}


def main() -> None:
    out = sys.argv[1]
    # no admin socket: the lab's ceph CLI uses client.admin's
    cluster = rados.Rados(conffile=os.environ['CEPH_CONF'], conf={'admin_socket': ''})
    cluster.connect(timeout=30)
    with open(out, 'a', buffering=1) as f:
        while True:
            t = time.time()
            sample: dict = {'t': t}
            try:
                sample.update(pgs(cluster))
            except Exception as e:  # a mgr failing over: say so, go on
                sample['error'] = str(e)
            try:
                sample['osds'] = osds(cluster)
            except Exception as e:
                sample['osd_error'] = str(e)
            f.write(json.dumps(sample) + '\n')
            time.sleep(max(0.0, 1.0 - (time.time() - t)))


if __name__ == '__main__':
    main()
