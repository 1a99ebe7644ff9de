#!/usr/bin/python3
"""What one poll of a tuning session costs the mgr (issue 45): the session's
step and the module's publish, as the serve loop runs them, through the real
MgrCluster over tests/unit/scale_mgr.py (N OSDs on N/20 hosts, 10 PGs per
OSD), an osd bench session on osd.7 past its first window: in wait_up (its
canary restarting: each step is a poll), and in measure (a bench chunk a step).

    qa/bench/session_poll.py [--src DIR] [--sizes 2000,10000] [--polls 5]

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

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--src', default=os.path.join(REPO, 'src', 'pybind', 'mgr'))
    ap.add_argument('--sizes', default='2000,10000')
    ap.add_argument('--polls', type=int, default=5)
    a = ap.parse_args()
    sys.path[:0] = [os.path.join(REPO, 'tests', 'unit'), a.src]
    sys.path.append('/usr/share/ceph/mgr')
    import mgr_mock
    mgr_mock.install()
    from scale_mgr import ScaleMgr
    from test_scale import at_a_session_poll, session_polls
    for n in (int(x) for x in a.sizes.split(',')):
        mgr = ScaleMgr(n, n // 20, pgs_per_osd=10)
        mod = None
        for phase in ('wait_up', 'measure'):
            mod = at_a_session_poll(mgr, phase, mod)
            mgr.reset_counts()
            t = time.process_time()
            session_polls(mod, a.polls)
            per = (time.process_time() - t) / a.polls
            print(f'{n} OSDs, {phase}: {per:.4f} s a poll, {mgr.fake_seconds / a.polls:.4f} s '
                  f'of it in the fake; mgr.get {dict(mgr.get_calls)}, tells '
                  f'{dict(mgr.tell_calls)}', flush=True)


if __name__ == '__main__':
    main()
