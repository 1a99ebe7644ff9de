#!/usr/bin/python3
"""What one poll of a rollout or a tuning session costs the mgr (issue 45):
the job's step and the module's publish, as the serve loop runs them,
through the real MgrCluster over tests/unit/scale_mgr.py (N OSDs on N/20
hosts).  `rollout`: an apply's wait poll, the OSD in flight restarting
(down), 100 PGs per OSD.  `session`: an osd bench session on osd.7 past its
first window, 10 PGs per OSD, in wait_up (its canary restarting: each step
is a poll) and in measure (a bench chunk a step).

    qa/bench/poll_cost.py rollout [--src DIR] [--sizes 2000,5000,10000] [--polls 10]
    qa/bench/poll_cost.py session [--src DIR] [--sizes 2000,10000] [--polls 5]

--src: the module's src/pybind/mgr to measure (default: this tree's; e.g. a
`git archive` of another commit); the fake is always this tree's.  Prints
Python process time (time.process_time) a poll, the share of it spent in the
fake (decoding what mgr.get hands out, which the real mgr builds in C++),
and what was read.
"""
import argparse
import os
import sys
import time
from typing import Any, Callable

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timed(what: str, mgr: Any, polls: Callable[[int], None], n: int) -> None:
    """`n` polls, their cost a poll and what they read."""
    mgr.reset_counts()
    t = time.process_time()
    polls(n)
    per = (time.process_time() - t) / n
    print(f'{what}: {per:.4f} s a poll, {mgr.fake_seconds / n:.4f} s of it in the fake; '
          f'mgr.get {dict(mgr.get_calls)}, tells {dict(mgr.tell_calls)}', flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('job', choices=('rollout', 'session'))
    ap.add_argument('--src', default=os.path.join(REPO, 'src', 'pybind', 'mgr'))
    ap.add_argument('--sizes', help='OSD counts (default 2000,5000,10000; a session '
                    '2000,10000)')
    ap.add_argument('--polls', type=int, help='polls a figure (default 10; a session 5)')
    a = ap.parse_args()
    rollout = a.job == 'rollout'
    sizes = a.sizes or ('2000,5000,10000' if rollout else '2000,10000')
    polls = a.polls or (10 if rollout else 5)
    sys.path[:0] = [os.path.join(REPO, 'tests', 'unit'), a.src]
    sys.path.append('/usr/share/ceph/mgr')
    import mgr_mock
    mgr_mock.install()
    from scale_mgr import ScaleMgr
    from test_scale import at_a_session_poll, at_a_wait_poll, session_polls, wait_polls
    for n in (int(x) for x in sizes.split(',')):
        if rollout:
            try:
                mod, mgr = at_a_wait_poll(n, n // 20)
            except AssertionError as e:
                print(f'{n} OSDs: no rollout to poll ({e})', flush=True)
                continue
            timed(f'{n} OSDs, a wait poll', mgr, lambda k: wait_polls(mod, k), polls)
            continue
        mgr = ScaleMgr(n, n // 20, pgs_per_osd=10)
        mod = None
        for phase in ('wait_up', 'measure'):
            mod = at_a_session_poll(mgr, phase, mod)
            timed(f'{n} OSDs, {phase}', mgr, lambda k: session_polls(mod, k), polls)


if __name__ == '__main__':
    main()
