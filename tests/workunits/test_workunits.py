"""The teuthology workunits (qa/workunits/rocks_autotune), run on the lab.

The same scripts the suite in qa/suites/rados/rocks_autotune runs: each uses
only the ceph CLI against CEPH_CONF and checks what it did itself.
"""
import os
import subprocess
import time
from typing import Any, Dict, List

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
ELSEWHERE = {'thrash_canary.sh': 'tox -e teuthology'}
SCRIPTS = sorted((f for f in os.listdir(WORKUNITS)
                  if f.endswith('.sh') and f != 'common.sh' and f not in ELSEWHERE),
                 key=lambda f: (ORDER.index(f) if f in ORDER else len(ORDER), f))
# demo.sh is the lab's demo, not a check: a short session, fast trials
DEMO_ARGS = ['--trials', '1', '--duration', '4']
DEMO_OPTIONS = (('warmup', '2'), ('bench_chunk_seconds', '2'), ('confirm_candidates', '1'),
                ('confirm_rounds', '1'), ('steady_window_limit', '10'),
                ('client_space', str(16 << 20)), ('precondition_limit', '10'))


def test_every_script_is_run() -> None:
    assert set(ORDER) <= set(SCRIPTS) | set(ELSEWHERE), SCRIPTS
    # what runs elsewhere is run there, and that env is in tox's list
    with open(os.path.join(REPO, 'qa', 'teuthology', 'thrash_canary.yaml')) as f:
        assert 'rocks_autotune/thrash_canary.sh' in f.read()
    with open(os.path.join(REPO, 'tox.ini')) as f:
        envlist = [line for line in f if line.startswith('envlist')][0]
    assert 'teuthology' in envlist, envlist


@pytest.mark.parametrize('script', SCRIPTS)
def test_workunit(lab: Any, script: str) -> None:
    args: List[str] = []
    effective: Dict[str, str] = {}
    if script == 'demo.sh':
        args = DEMO_ARGS
        for name, value in DEMO_OPTIONS:
            effective[name] = lab.ceph('config', 'get', 'mgr',
                                       f'mgr/rocks_autotune/{name}').stdout.strip()
            lab.ceph('config', 'set', 'mgr', f'mgr/rocks_autotune/{name}', value)
    t0 = time.time()
    try:
        # stdout is captured and printed (pytest shows it when the script
        # fails), stderr not
        p = subprocess.run(['bash', os.path.join(WORKUNITS, script)] + args, env=lab.env,
                           timeout=1800, stdout=subprocess.PIPE, text=True)
        print(p.stdout)
    finally:
        # Pacific's mgr keeps a removed module option's last value until it
        # restarts: set the value that was in effect, then remove the entry
        for name, value in effective.items():
            lab.ceph('config', 'set', 'mgr', f'mgr/rocks_autotune/{name}', value)
            lab.ceph('config', 'rm', 'mgr', f'mgr/rocks_autotune/{name}')
    print(f'{script}: exit {p.returncode} in {time.time() - t0:.0f}s')
    assert p.returncode == 0, f'{script} failed (exit {p.returncode})'
    if script == 'demo.sh':
        # its final screen: the answer in a few lines (issue 43), after the
        # progress lines
        # progress lines (then `apply --dry-run` when it recommends)
        final = p.stdout[p.stdout.rindex('\n\nstate: ') + 2:].strip().splitlines()
        assert final[0].startswith('state: done: ') and '(objective iops)' in final[0], final
        assert 'more: ceph rocks-autotune status --detail, history, best' in final, final
        assert len(final) <= 25, final
    # whatever a script did, it leaves no session running for the next one
    assert lab.status()['state'] not in ('running', 'stopping', 'restoring')
