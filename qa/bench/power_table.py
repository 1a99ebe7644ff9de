#!/usr/bin/env python3
"""The confirmation's resolving power, as the guide's tables show it.

Not a measurement: what power.py computes from the confirmation's own rule
(a look after every round from the fifth, each look's signed-rank interval
must clear the 3% margin) at per-round noise levels, for normal rounds.  Per
noise (sd of the paired log-ratio per round) and planned rounds, the
smallest gain confirmed 9 times in 10, and the rounds +10% needs; then the
interval level of each look, by planned rounds.  The guide
(doc/mgr/rocks_autotune.rst, "What a confirmation can see") holds this
output; tests/unit/test_power.py checks it does.

    PYTHONPATH=src/pybind/mgr python3 qa/bench/power_table.py
    PYTHONPATH=src/pybind/mgr python3 qa/bench/power_table.py --guard

`--guard`: the wear objective's rounds instead (the low end must stay above
1 - guard): per noise and planned rounds, how often a candidate exactly as
fast as the baseline passes a 3% and a 5% guard.
"""
import argparse
import os
import sys
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'src', 'pybind', 'mgr'))
from rocks_autotune import power  # noqa: E402
from rocks_autotune.options import MAX_CONFIRM_ROUNDS  # noqa: E402

NOISE = (0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.16)
ROUNDS = (5, 6, 8, 10, 15)
MARGIN = 0.03
TARGET = 0.10


def _csv(header: List[str], rows: List[List[str]]) -> List[str]:
    return (['.. csv-table::', '   :header: ' + ', '.join(header), '']
            + ['   ' + ', '.join(r) for r in rows])


def table() -> List[str]:
    """The two RST tables, one line each: gains by noise, levels by rounds."""
    rows = []
    for sd in NOISE:
        gains = [power.detectable(sd, n, MARGIN) for n in ROUNDS]
        need = power.rounds_for(TARGET, sd, MARGIN, MAX_CONFIRM_ROUNDS)
        rows.append([f'{sd:.2f}'] + ['-' if d is None else format(d, '+.0%') for d in gains]
                    + [str(need) if need is not None else f'over {MAX_CONFIRM_ROUNDS}'])
    return (_csv(['sd per round'] + [f'{n} rounds' for n in ROUNDS]
                 + [f'rounds for {TARGET:+.0%}'], rows)
            + [''] + _csv(['planned rounds', 'each look\'s interval'],
                          [[str(n), f'{power.look_level(n):.2%}'] for n in ROUNDS]))


GUARDS = (0.03, 0.05)


def guard_table() -> List[str]:
    """The wear objective's rounds: how often a candidate as fast as the
    baseline passes the guard, by noise and planned rounds."""
    return _csv(['sd per round'] + [f'{n} rounds guard {g:.0%}' for g in GUARDS
                                    for n in (5, 10, 15)],
                [[f'{sd:.2f}'] + [f'{power.confirm_rate(0.0, sd, n, -g):.0%}'
                                  for g in GUARDS for n in (5, 10, 15)] for sd in NOISE])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--guard', action='store_true',
                    help="the wear objective's guard table instead")
    print('\n'.join(guard_table() if ap.parse_args().guard else table()))


if __name__ == '__main__':
    main()
