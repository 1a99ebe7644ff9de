"""Sample the lab's inactive PGs once a second until killed.

Run with the release's own Python and librados (`ceph-lab exec -- /usr/bin/python3
tests/cluster/pg_watcher.py OUT`): one connection for the whole run, so a
sample costs a mgr command, not a `ceph` CLI start.  Every sample is one JSON
line in OUT, {"t": time, "inactive": [[pgid, state], ...]} or {"t": time,
"error": ...}, so a reader can tell "no inactive PG" from "not sampled".

PGs in state `unknown` are left out: that is a new active mgr that has not
heard from the OSDs yet (after `ceph mgr fail`), not I/O that stopped.
"""
import json
import os
import sys
import time

import rados  # type: ignore[import-not-found]


def inactive(cluster: 'rados.Rados') -> list:
    # what `ceph pg dump_stuck inactive` counts, without its 'stuck for' delay
    cmd = json.dumps({'prefix': 'pg dump', 'dumpcontents': ['pgs_brief'], 'format': 'json'})
    ret, out, err = cluster.mgr_command(cmd, b'', timeout=10)
    if ret != 0:
        raise RuntimeError(f'pg dump pgs_brief: {ret} {err}')
    data = json.loads(out)
    pgs = data.get('pg_stats', []) if isinstance(data, dict) else data
    return [[p['pgid'], p['state']] for p in pgs
            if 'active' not in p['state'].split('+') and p['state'] != 'unknown']


def main() -> None:
    out = sys.argv[1]
    # no admin socket: the lab's ceph CLI uses client.admin's
    cluster = rados.Rados(conffile=os.environ['CEPH_CONF'], conf={'admin_socket': ''})
    cluster.connect(timeout=30)
    with open(out, 'a', buffering=1) as f:
        while True:
            t = time.time()
            try:
                sample = {'t': t, 'inactive': inactive(cluster)}
            except Exception as e:  # a mgr failing over: say so, go on
                sample = {'t': t, 'error': str(e)}
            f.write(json.dumps(sample) + '\n')
            time.sleep(max(0.0, 1.0 - (time.time() - t)))


if __name__ == '__main__':
    main()
