#!/usr/bin/python3
"""Optimizer efficiency without a cluster: trials to get within 5% of the best.

    OPENBLAS_NUM_THREADS=1 qa/bench/optimizer_efficiency.py [--seeds 20] [--budget 30]
        [--surface qa/bench/results/surface.json] [--out doc/bench/optimizer-efficiency.md]

The response surface is qa/bench/results/surface.json, measured on the lab by
qa/bench/measure_surface.py (see the file's "how").  A Gaussian process
(sklearn, Matern 5/2 + white noise, inputs scaled to [0, 1] as the search
space's priors do: log for log-uniform dimensions, compression one-hot) is
fitted to log(IOPS) and to write-amp of the measured points; its mean is the
surface any candidate is evaluated on.

Objective (lower is better), the IOPS half of the session's score with the
session's infeasibility penalty: log(IOPS_default / IOPS) plus
INFEASIBLE_WEIGHT x log(wa / (1.10 x wa_default)) when write-amp is over the
1.10 budget.  kv_sync_lat is left out: its run-to-run spread on the lab is
larger than its differences between configurations (see the bench tables).

Every method is first told the default's value (the session's baseline,
not counted as a trial), then proposes candidates:
  project   rocks_autotune.optimizer.TrialOptimizer with the session's warm
            start (New Tuning, New Tuning LZ4) and its settings; and the same
            without the warm start, to tell the GP's part from the seed's
  random    uniform random safe points of the same space
  skopt     skopt.Optimizer(dimensions, random_state=seed) with defaults (GP,
            gp_hedge, 10 initial points), given the same safety constraint
A run reaches the target at the first trial whose feasible IOPS is >= 95%
of the surface's best feasible IOPS (maximum of the GP mean over the
measured points and 20000 random safe points).
"""
import argparse
import datetime
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import benchlib
from rocks_autotune.optimizer import TrialOptimizer, random_points, skopt_dimensions
from rocks_autotune.rocksdb_options import NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT, \
    parse_options
from rocks_autotune.perf_counters import INFEASIBLE_WEIGHT
from rocks_autotune.space import Candidate, SearchSpace

BUDGET_FACTOR = 1.10
WITHIN = 0.95


class Surface:
    """GP-mean interpolation of the measured points."""

    def __init__(self, points: List[Dict[str, Any]], space: SearchSpace) -> None:
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
        self.space = space
        self.easy = self.feasible_share = 0.0  # set by best()
        ok = [p for p in points if p.get('measurement') and p['measurement'].get('iops')]
        self.n = len(ok)
        X = np.array([self.features(Candidate.from_dict(p['candidate'])) for p in ok])
        y_iops = np.log([p['measurement']['iops'] for p in ok])
        y_wa = np.array([p['measurement']['write_amp'] for p in ok])
        self.models = []
        for y in (y_iops, y_wa):
            k = (ConstantKernel(1.0, (1e-3, 1e3))
                 * Matern(length_scale=np.ones(X.shape[1]), length_scale_bounds=(0.05, 20),
                          nu=2.5)
                 + WhiteKernel(0.05, (1e-6, 1.0)))
            gp = GaussianProcessRegressor(kernel=k, normalize_y=True, n_restarts_optimizer=5,
                                          random_state=0)
            gp.fit(X, y)
            self.models.append(gp)
        d = self.space.candidate_from_options(parse_options(PACIFIC_DEFAULT))
        self.default_iops, self.default_wa = self.eval(d)
        self.wa_budget = BUDGET_FACTOR * self.default_wa

    def features(self, c: Candidate) -> List[float]:
        x = self.space.to_point(c)
        out: List[float] = []
        for d, v in zip(self.space.dimensions(), x):
            if d.is_categorical:
                out += [1.0 if v == cat else 0.0 for cat in d.categories]
            elif d.prior == 'log-uniform':
                out.append(min(1.0, max(0.0, (math.log(float(v)) - math.log(d.low))
                                        / (math.log(d.high) - math.log(d.low)))))
            else:
                out.append(min(1.0, max(0.0, (float(v) - d.low) / (d.high - d.low))))
        return out

    def eval(self, c: Candidate) -> Tuple[float, float]:
        """(IOPS, write-amp) of the GP means."""
        f = np.array([self.features(c)])
        return (float(np.exp(self.models[0].predict(f)[0])), float(self.models[1].predict(f)[0]))

    def objective(self, c: Candidate) -> float:
        iops, wa = self.eval(c)
        s = math.log(self.default_iops / iops)
        if wa > self.wa_budget:
            s += INFEASIBLE_WEIGHT * math.log(wa / self.wa_budget)
        return s

    def best(self, extra: Sequence[Candidate], n: int = 20000) -> Tuple[float, Candidate]:
        cands = list(extra) + [self.space.from_point(x)
                               for x in random_points(self.space, n, 12345)
                               if self.space.point_is_safe(x)]
        X = np.array([self.features(c) for c in cands])
        iops = np.exp(self.models[0].predict(X))
        wa = self.models[1].predict(X)
        iops[wa > self.wa_budget] = -1
        i = int(np.argmax(iops))
        rnd = iops[len(extra):]
        # how easy the target is: share of random safe points within 5% of the best
        self.easy = float(np.mean(rnd >= WITHIN * iops[i]))
        self.feasible_share = float(np.mean(rnd > 0))
        return float(iops[i]), cands[i]


Proposer = Callable[[int], Tuple[Callable[[], Candidate], Callable[[Candidate, float], None]]]


def project(space: SearchSpace, default: Candidate, warm_start: bool = True) -> Proposer:
    warm = [space.candidate_from_options(parse_options(s))
            for s in (PACIFIC_DEFAULT, PACIFIC_DEFAULT, NEW_TUNING, NEW_TUNING_LZ4)
            if warm_start]

    def make(seed: int) -> Tuple[Callable[[], Candidate], Callable[[Candidate, float], None]]:
        opt = TrialOptimizer(space, seed=seed, warm_start=warm)
        return opt.ask, opt.tell
    return make


def skopt_default(space: SearchSpace, default: Candidate) -> Proposer:
    import skopt
    dims = skopt_dimensions(space)

    def make(seed: int) -> Tuple[Callable[[], Candidate], Callable[[Candidate, float], None]]:
        opt = skopt.Optimizer(dims, random_state=seed, space_constraint=space.point_is_safe)

        def ask() -> Candidate:
            return space.from_point(opt.ask())

        def tell(c: Candidate, y: float) -> None:
            # the default clamped into the box, as TrialOptimizer does; tell
            # checks the box only, so it learns from an unsafe default too
            opt.tell([min(max(v, d.low), d.high) if not d.is_categorical else v
                      for d, v in zip(space.dimensions(), space.to_point(c))], y)
        return ask, tell
    return make


def random_search(space: SearchSpace, default: Candidate) -> Proposer:
    from skopt.space import Space
    sk = Space(skopt_dimensions(space))

    def make(seed: int) -> Tuple[Callable[[], Candidate], Callable[[Candidate, float], None]]:
        rng = np.random.RandomState(seed)

        def ask() -> Candidate:
            while True:
                x = sk.rvs(n_samples=1, random_state=rng)[0]
                if space.point_is_safe(x):
                    return space.from_point(x)
        return ask, lambda c, y: None
    return make


def trials_to_target(surface: Surface, make: Proposer, seed: int, default: Candidate,
                     target_iops: float, budget: int) -> Tuple[Optional[int], float]:
    """First trial (1-based, after the baseline) reaching the target; None if never.
    Also the best feasible IOPS fraction reached within the budget."""
    ask, tell = make(seed)
    tell(default, surface.objective(default))
    best = 0.0
    hit: Optional[int] = None
    for t in range(1, budget + 1):
        c = ask()
        y = surface.objective(c)
        tell(c, y)
        iops, wa = surface.eval(c)
        if wa <= surface.wa_budget:
            best = max(best, iops)
        if hit is None and best >= WITHIN * target_iops:
            hit = t
            break
    return hit, best / target_iops


_JOB: Any = None


def _run(job: Tuple[str, int]) -> Tuple[Optional[int], float, float]:
    surface, methods, default, target, budget = _JOB
    name, seed = job
    t = time.process_time()
    hit, frac = trials_to_target(surface, methods[name], seed, default, target, budget)
    return hit, frac, time.process_time() - t


def median_trials(hits: List[Optional[int]]) -> float:
    """Median with misses counted as infinite (so a median > budget reads 'not reached')."""
    xs = [float(h) if h is not None else math.inf for h in hits]
    return statistics.median(xs)


def fmt_trials(v: float, budget: int) -> str:
    return f'> {budget}' if math.isinf(v) else f'{v:g}'


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seeds', type=int, default=20)
    ap.add_argument('--budget', type=int, default=30, help='trials per run at most')
    ap.add_argument('--jobs', type=int, default=2, help='worker processes')
    ap.add_argument('--surface', default=os.path.join(benchlib.RESULTS, 'surface.json'))
    ap.add_argument('--out', default=os.path.join(benchlib.DOC, 'optimizer-efficiency.md'))
    a = ap.parse_args()
    t0 = time.time()
    warnings.filterwarnings('ignore', module='sklearn')
    with open(a.surface) as f:
        surf = json.load(f)
    space = SearchSpace(base=parse_options(PACIFIC_DEFAULT))
    surface = Surface(surf['points'], space)
    default = space.candidate_from_options(parse_options(PACIFIC_DEFAULT))
    refs = {n: space.candidate_from_options(parse_options(s)) for n, s in
            (('default', PACIFIC_DEFAULT), ('new_tuning', NEW_TUNING),
             ('new_tuning_lz4', NEW_TUNING_LZ4))}
    measured = [Candidate.from_dict(p['candidate']) for p in surf['points']
                if p.get('measurement')]
    target, best_c = surface.best(measured)
    methods = {'project (TrialOptimizer)': project(space, default),
               'project without warm start': project(space, default, warm_start=False),
               'random search': random_search(space, default),
               'skopt defaults': skopt_default(space, default)}
    rows = []
    global _JOB
    _JOB = (surface, methods, default, target, a.budget)
    jobs = [(name, s) for name in methods for s in range(a.seeds)]
    ctx = multiprocessing.get_context('fork')  # workers inherit the fitted surface
    with ctx.Pool(a.jobs) as pool:
        done = dict(zip(jobs, pool.map(_run, jobs, chunksize=1)))
    for name in methods:
        res = [done[(name, s)][:2] for s in range(a.seeds)]
        cpu = sum(done[(name, s)][2] for s in range(a.seeds))
        hits = [h for h, _ in res]
        med = median_trials(hits)
        reached = sum(h is not None for h in hits)
        fr = statistics.median([f for _, f in res])
        rows.append((name, med, reached, fr, sorted(h for h in hits if h is not None), cpu))
        print(f'{name}: median trials {fmt_trials(med, a.budget)}, reached {reached}/{a.seeds}'
              f' ({cpu:.0f} s of CPU)', file=sys.stderr)
    lines = [
        '# Optimizer efficiency on a measured response surface',
        '',
        f'Command: `OPENBLAS_NUM_THREADS=1 qa/bench/optimizer_efficiency.py '
        f'{" ".join(sys.argv[1:])}`'.rstrip() + ' (no cluster)',
        f'Date: {datetime.datetime.now().isoformat(timespec="seconds")}; '
        f'ran in {time.time() - t0:.0f} s wall with {a.jobs} worker processes '
        f'(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} shared cores).',
        '',
        f'Surface: `{os.path.relpath(a.surface, benchlib.REPO)}`, {surface.n} measured points, '
        f'made by `{surf["command"]}` on {surf["date"]} ({surf["how"]}; window '
        f'{surf["window"]}). Interpolated by a GP mean (see the script\'s docstring).',
        '',
        f'Surface values (GP mean): default {surface.default_iops:.0f} IOPS, write-amp '
        f'{surface.default_wa:.3f} (budget {surface.wa_budget:.3f}); '
        + ', '.join(f'{n} {surface.eval(c)[0]:.0f} IOPS / wa {surface.eval(c)[1]:.3f}'
                    for n, c in refs.items() if n != 'default')
        + f'; best feasible {target:.0f} IOPS '
        f'({target / surface.default_iops:.2f}x default) at `{best_c.to_dict()}`.',
        '',
        f'Of 20000 random safe points, {surface.feasible_share:.0%} are feasible and '
        f'{surface.easy:.1%} are within 5% of the best (random search needs about '
        f'{1 / surface.easy if surface.easy else math.inf:.1f} trials on average).',
        '',
        f'Target: first trial (after the baseline) with feasible IOPS >= {WITHIN:.0%} of the '
        f'best; {a.seeds} seeds, at most {a.budget} trials each; misses count as infinite.',
        '',
        '| method | median trials to 95% | reached | best/target reached | '
        'trials of the runs that reached | CPU seconds |',
        '|---|---|---|---|---|---|']
    for name, med, reached, fr, got, secs in rows:
        lines.append(f'| {name} | {fmt_trials(med, a.budget)} | {reached}/{a.seeds} | '
                     f'{fr:.3f} | {got} | {secs:.0f} |')
    proj, rnd = rows[0][1], rows[2][1]
    lines += ['', f'Targets: project within 5% in <= 12 trials (median): '
              f'{"met" if proj <= 12 else "missed"} ({fmt_trials(proj, a.budget)}); '
              f'>= 2x fewer trials than random search: '
              f'{"met" if 2 * proj <= rnd else "missed"} '
              f'({fmt_trials(proj, a.budget)} vs {fmt_trials(rnd, a.budget)}).']
    with open(a.out, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


if __name__ == '__main__':
    main()
