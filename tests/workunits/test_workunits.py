"""The teuthology workunits (qa/workunits/rocks_autotune), run on the lab.

The same scripts the suite in qa/suites/rados/rocks_autotune runs: each uses
only the ceph CLI against CEPH_CONF and checks what it did itself.
"""
import os
import subprocess
import time
from typing import Any

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
WORKUNITS = os.path.join(REPO, 'qa', 'workunits', 'rocks_autotune')
# the order a reader would run them in; every script in the directory is run
# (rollout.sh right after short_session.sh: it rolls out from that session's answer)
ORDER = ['bad_input.sh', 'short_session.sh', 'rollout.sh', 'abort.sh', 'thrash_canary.sh',
         'demo.sh']
# run elsewhere, the way the suite runs it: thrash_canary.sh runs in `tox -e
# teuthology` (qa/teuthology/thrash_canary.yaml) beside the suite's
# rocks_autotune task, which kills the canary mid-trial and restarts it when
# the module asks (RA_KILL=external).  Here it would run again with the
# lab's `ceph orch daemon stop` kill, a mode the suite never uses, whose
# module path (canary killed mid-window, orchestrator restarts) the faults
# tier covers (test_1_canary_killed_during_the_window), and the MgrTestCase's
# test_canary_killed_mid_trial runs the suite's way too.
# demo.sh (the lab demo's session script, not a suite workunit) runs the
# cluster tiers' short session (tests/cluster/conftest.py), which checks its
# final screen: one short session there, not another here
ELSEWHERE = {'thrash_canary.sh': 'tox -e teuthology', 'demo.sh': 'tox -e cluster'}
SCRIPTS = sorted((f for f in os.listdir(WORKUNITS)
                  if f.endswith('.sh') and f != 'common.sh' and f not in ELSEWHERE),
                 key=lambda f: (ORDER.index(f) if f in ORDER else len(ORDER), f))


def test_every_script_is_run() -> None:
    assert set(ORDER) <= set(SCRIPTS) | set(ELSEWHERE), SCRIPTS
    # what runs elsewhere is run there, and that env is in tox's list
    with open(os.path.join(REPO, 'qa', 'teuthology', 'thrash_canary.yaml')) as f:
        assert 'rocks_autotune/thrash_canary.sh' in f.read()
    with open(os.path.join(REPO, 'tox.ini')) as f:
        envlist = [line for line in f if line.startswith('envlist')][0]
    assert 'teuthology' in envlist and 'cluster' in envlist, envlist
    with open(os.path.join(REPO, 'tests', 'cluster', 'conftest.py')) as f:
        assert "'demo.sh'" in f.read()


@pytest.mark.parametrize('script', SCRIPTS)
def test_workunit(lab: Any, script: str) -> None:
    t0 = time.time()
    # stdout is captured and printed (pytest shows it when the script fails), stderr not
    p = subprocess.run(['bash', os.path.join(WORKUNITS, script)], env=lab.env, timeout=1800,
                       stdout=subprocess.PIPE, text=True)
    print(p.stdout)
    print(f'{script}: exit {p.returncode} in {time.time() - t0:.0f}s')
    assert p.returncode == 0, f'{script} failed (exit {p.returncode})'
    # whatever a script did, it leaves no session running for the next one
    assert lab.status()['state'] not in ('running', 'stopping', 'restoring')
