#!/usr/bin/python3
"""What one wait poll of a rollout costs the mgr (issue 45): the rollout's
step and the module's publish, as the serve loop runs them, while the OSD in
flight is restarting (down), through the real MgrCluster over
tests/unit/scale_mgr.py (N OSDs on N/20 hosts, 100 PGs per OSD).

    qa/bench/rollout_poll.py [--src DIR] [--sizes 2000,5000,10000] [--polls 10]

--src: the module's src/pybind/mgr to measure (default: this tree's; e.g. a
`git archive` of another commit); the fake is always this tree's.  Prints
Python process time (time.process_time) a poll, and the share of it spent in
the fake (decoding what mgr.get hands out, which the real mgr builds in C++).
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
    ap.add_argument('--sizes', default='2000,5000,10000')
    ap.add_argument('--polls', type=int, default=10)
    a = ap.parse_args()
    sys.path[:0] = [os.path.join(REPO, 'tests', 'unit'), a.src]
    sys.path.append('/usr/share/ceph/mgr')
    import mgr_mock
    mgr_mock.install()
    from test_scale import at_a_wait_poll, wait_polls
    for n in (int(x) for x in a.sizes.split(',')):
        try:
            mod, mgr = at_a_wait_poll(n, n // 20)
        except AssertionError as e:
            print(f'{n} OSDs: no rollout to poll ({e})', flush=True)
            continue
        mgr.reset_counts()
        t = time.process_time()
        wait_polls(mod, a.polls)
        per = (time.process_time() - t) / a.polls
        print(f'{n} OSDs: {per:.3f} s a wait poll, {mgr.fake_seconds / a.polls:.3f} s of it in '
              f'the fake; mgr.get {dict(mgr.get_calls)}', flush=True)


if __name__ == '__main__':
    main()
