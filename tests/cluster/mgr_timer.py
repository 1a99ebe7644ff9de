"""Time one mgr command as the mgr answers it, without a CLI's start-up.

`ceph-lab exec -- /usr/bin/python3 tests/cluster/mgr_timer.py '{"prefix": ...}'`
prints {"seconds": ..., "ret": ..., "out": ..., "err": ...}: the time from
sending the command to its answer, on a connection made beforehand.
"""
import json
import os
import sys
import time

import rados  # type: ignore[import-not-found]


def main() -> None:
    cluster = rados.Rados(conffile=os.environ['CEPH_CONF'], conf={'admin_socket': ''})
    cluster.connect(timeout=30)
    t = time.monotonic()
    ret, out, err = cluster.mgr_command(sys.argv[1], b'', timeout=60)
    seconds = time.monotonic() - t
    print(json.dumps({'seconds': seconds, 'ret': ret, 'out': out.decode(errors='replace'),
                      'err': err}))


if __name__ == '__main__':
    main()
