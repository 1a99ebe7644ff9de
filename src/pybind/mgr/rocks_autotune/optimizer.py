"""Bayesian optimization over a SearchSpace (skopt ask/tell), resumable by replay.
Design: doc/dev/internals.rst, dev-internals-optimizer."""
import math
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import skopt
from sklearn.base import clone
from skopt.space import Categorical, Dimension, Integer, Space

from .space import Candidate, Point, SearchSpace

# Random safe proposals after the warm starts, before the GP drives: few, as
# trials are costly (on the unit tests' benchmark 3 beat 5 or 8 in 25 trials).
DEFAULT_INITIAL_POINTS = 3

# A failed trial (OSD would not start) is told as worst + FAILED_MARGIN *
# max(worst - best, |worst|, tiny) of the real scores: clearly the worst, but
# not so far out that the normalized GP flattens everywhere else.
FAILED_MARGIN = 0.5

# Points scored per acquisition step (skopt's default 10000): each is checked
# for safety in Python, and a few thousand cover the grid.
DEFAULT_ACQ_POINTS = 2000
# skopt samples under the constraint by rejection (10000 tries, then it
# raises): refuse spaces with fewer than _MIN_SAFE_PROBES safe of _PROBES.
_PROBES = 1000
_MIN_SAFE_PROBES = 5


class TrialOptimizer:
    def __init__(self, space: SearchSpace, seed: int = 0,
                 warm_start: Sequence[Candidate] = (),
                 n_initial_points: int = DEFAULT_INITIAL_POINTS,
                 acq_points: int = DEFAULT_ACQ_POINTS) -> None:
        if n_initial_points < 0:
            raise ValueError(f'n_initial_points must be >= 0, got {n_initial_points}')
        self.space = space
        self.seed = seed
        # unsafe warm starts are never proposed; duplicates run once
        self.warm_start: List[Candidate] = list(dict.fromkeys(
            c for c in warm_start if not space.violations(c)))
        self._told: List[Candidate] = []   # every candidate told, in order
        self._scores: List[float] = []     # real scores only (not penalties)
        self._pending_failed: List[Point] = []
        self._dims = space.dimensions()
        _check_safe_fraction(space, seed)
        self._opt = skopt.Optimizer(
            skopt_dimensions(space),
            # skopt's Matern GP fits a white-noise level: repeats that
            # disagree are treated as noise, not forced through exactly
            base_estimator='GP',
            # not gp_hedge: its bandit has too few rounds in a dozen trials and
            # depends on every fit; EI's depends only on the told points
            acq_func='EI',
            acq_optimizer='sampling',  # the only one skopt allows with a constraint
            acq_optimizer_kwargs={'n_points': acq_points},
            n_initial_points=len(self.warm_start) + n_initial_points,
            initial_point_generator='random',  # lhs/sobol would ignore the constraint
            random_state=seed,
            space_constraint=space.point_is_safe,
            model_queue_size=1,  # only the latest model is ever used
        )

    @property
    def n_told(self) -> int:
        return len(self._told)

    def ask(self) -> Candidate:
        """Warm starts first, then skopt's pick; the same again until a tell()."""
        for c in self.warm_start:
            if c not in self._told:
                return c
        self._opt.rng = self._rng('ask', self.n_told)
        c = self.space.from_point(self._opt.ask())
        problems = self.space.violations(c)
        if problems:
            # a bug (skopt samples under the constraint): stop, do not restart an OSD on it
            raise RuntimeError(f'optimizer proposed an unsafe candidate {c}: {problems}')
        return c

    def tell(self, c: Candidate, score: float) -> None:
        """Record a trial's score (lower is better)."""
        self._send(self._record(c, score), fit=True)

    def tell_failed(self, c: Candidate) -> None:
        """Record a trial whose OSD would not start, as a penalty score."""
        self._send(self._record(c, None), fit=True)

    def rank(self, candidates: Iterable[Candidate], k: int) -> List[Tuple[Candidate, float]]:
        """The k candidates of lowest posterior mean score, best first, with
        it; duplicates count once, one the GP cannot place (a compression not
        searched) not at all.  A fresh fit, so it exists however few points
        were told and is the same after a replay."""
        placed = {c: x for c in candidates if (x := self._clamp(c)) is not None}
        if not placed or k <= 0 or not self._opt.Xi:
            return []
        model = clone(self._opt.base_estimator_)
        model.fit(self._opt.space.transform(self._opt.Xi), self._opt.yi)
        means = model.predict(self._opt.space.transform(list(placed.values())))
        unique = list(placed)
        order = sorted(range(len(unique)), key=lambda i: (float(means[i]), i))
        return [(unique[i], float(means[i])) for i in order[:k]]

    def replay(self, history: Iterable[Tuple[Candidate, Optional[float]]]) -> None:
        """Re-tell persisted trials (score None: failed), with one GP fit."""
        batches = [self._record(c, s) for c, s in history]
        batches = [b for b in batches if b[0]]
        for i, b in enumerate(batches):
            self._send(b, fit=(i == len(batches) - 1))

    def _record(self, c: Candidate, score: Optional[float]
                ) -> Tuple[List[Point], List[float], int]:
        """Book-keep one trial: the (xs, ys, n_told) batch skopt must learn."""
        if score is not None:
            score = float(score)
            if not math.isfinite(score):
                raise ValueError(f'score must be finite, got {score}; use tell_failed()')
        self._told.append(c)
        x = self._clamp(c)
        if x is None:  # a compression not searched: counted as told, not learned
            return [], [], self.n_told
        if score is None and not self._scores:
            # no scale to be "worse than" yet: held until a real score
            self._pending_failed.append(x)
            return [], [], self.n_told
        if score is None:
            return [x], [self._penalty()], self.n_told
        self._scores.append(score)
        xs, self._pending_failed = [x] + self._pending_failed, []
        return xs, [score] + [self._penalty()] * (len(xs) - 1), self.n_told

    def _send(self, batch: Tuple[List[Point], List[float], int], fit: bool) -> None:
        xs, ys, n_told = batch
        if not xs:
            return
        self._opt.rng = self._rng('tell', n_told)
        if all(x in self._opt.space for x in xs):
            self._opt.tell(xs, ys, fit=fit)
        else:
            # clamped but unsafe (e.g. the cluster's own 4 GiB of memtables):
            # tell() rejects it, _tell skips the check so the GP learns it
            self._opt._tell(xs, ys, fit=fit)

    def _penalty(self) -> float:
        worst, best = max(self._scores), min(self._scores)
        return worst + FAILED_MARGIN * max(worst - best, abs(worst), 1e-9)

    def _clamp(self, c: Candidate) -> Optional[Point]:
        """The point clamped into the bounds (beyond a bound behaves like the
        bound, not like nothing); None if not placeable."""
        out: Point = []
        for d, v in zip(self._dims, self.space.to_point(c)):
            if d.is_categorical and v not in d.categories:
                return None
            out.append(v if d.is_categorical else min(max(int(v), d.low), d.high))
        return out

    def _rng(self, purpose: str, n_told: int) -> np.random.RandomState:
        # a draw depends only on (seed, purpose, trials told): repeated ask()
        # calls agree and a replay reproduces the original
        return np.random.RandomState(
            [self.seed % (1 << 32), {'ask': 1, 'tell': 2}[purpose], n_told])


def enough_safe_points(space: SearchSpace, seed: int) -> bool:
    """Whether the optimizer can search `space` (its check, without raising)."""
    try:
        _check_safe_fraction(space, seed)
    except ValueError:
        return False
    return True


def random_points(space: SearchSpace, n: int, seed: int) -> List[Any]:
    """`n` random points of the space's box, as the optimizer draws them (safe or not)."""
    return list(Space(skopt_dimensions(space)).rvs(n_samples=n, random_state=seed))


def _check_safe_fraction(space: SearchSpace, seed: int) -> None:
    probe = random_points(space, _PROBES, seed)
    n_safe = sum(space.point_is_safe(x) for x in probe)
    if n_safe < _MIN_SAFE_PROBES:
        bad = space.from_point(probe[0])
        raise ValueError(f'only {n_safe} of {_PROBES} random points of the search space are safe, '
                         f'e.g. {bad} is not: {"; ".join(space.violations(bad))}')


def skopt_dimensions(space: SearchSpace) -> List[Dimension]:
    """The space as skopt's dimensions (qa/bench's other optimizers search it too)."""
    return [Categorical(list(d.categories), name=d.name) if d.is_categorical
            else Integer(d.low, d.high, prior=d.prior, name=d.name) for d in space.dimensions()]
