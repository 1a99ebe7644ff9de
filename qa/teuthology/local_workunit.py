"""
A teuthology task for vstart_runner's config mode: run one of this repository's
qa/workunits scripts on the local cluster, while the tasks before it (e.g.
rocks_autotune with kill_canary) run around it.

It stands in for teuthology's `workunit` task, which vstart_runner cannot run:
that one clones ceph.git into the test dir on each client.  (teuthology's
`exec` task cannot stand in either: it runs `sudo TESTDIR=... bash -c CMD`, and
vstart_runner's LocalRemote replaces `sudo` with a shell function, which then
runs `TESTDIR=...` as a command.)  qa/teuthology/run-vstart links it into the
run dir's qa/tasks/; it is not part of the suite.

    tasks:
    - rocks_autotune:
        kill_canary: true
    - local_workunit:
        script: rocks_autotune/thrash_canary.sh   # under qa/workunits/
        env:
          RA_KILL: external
        timeout: 1800

The script runs with the run dir's bin/ (vstart_runner's ./bin, the chroot
wrappers) first on PATH and vstart_runner's CEPH_CONF.  It waits in gevent's
sleep, so the other tasks' greenlets (the rocks_autotune admin) keep running;
a non-zero exit fails the task.
"""
import logging
import os
import subprocess
import time
from typing import Any, Dict, Optional

import gevent

log = logging.getLogger(__name__)

# this file is linked into the run dir: the repository is where the link points
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
WORKUNITS = os.path.join(REPO, 'qa', 'workunits')


def task(ctx: Any, config: Optional[Dict[str, Any]]) -> None:
    assert isinstance(config, dict) and 'script' in config, \
        'local_workunit needs a dict with script: <path under qa/workunits>'
    script = os.path.join(WORKUNITS, str(config['script']))
    timeout = float(config.get('timeout', 1800))
    env = dict(os.environ)
    env['PATH'] = os.path.join(os.getcwd(), 'bin') + os.pathsep + env.get('PATH', '')
    env.update({str(k): str(v) for k, v in (config.get('env') or {}).items()})
    log.info('running %s (env %s)', script, config.get('env') or {})
    t0 = time.time()
    p = subprocess.Popen(['bash', script], env=env)
    while p.poll() is None:
        if time.time() - t0 > timeout:
            p.kill()
            p.wait()
            raise RuntimeError('{0}: timed out after {1:.0f}s'.format(script, timeout))
        gevent.sleep(1)
    log.info('%s: exit %d in %.0fs', script, p.returncode, time.time() - t0)
    if p.returncode != 0:
        raise RuntimeError('{0} failed (exit {1})'.format(script, p.returncode))
