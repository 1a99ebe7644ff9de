"""Bayesian optimization over a SearchSpace: a thin wrapper of skopt's ask/tell.

What the wrapper adds to ``skopt.Optimizer``:

* warm-start candidates are proposed first, in the caller's order;
* proposals are always safe (``SearchSpace.violations`` is empty);
* scores of candidates outside the bounds are still learned from;
* failed trials are scored as a penalty;
* the state is a pure function of (seed, warm starts, history), so replaying
  the persisted trials after a mgr restart gives back the very same next
  proposal, even if ask() had been called more often before the restart;
* after the search, ``rank`` orders candidates by the GP's posterior mean,
  not by their best window.
"""

import math
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import skopt
from sklearn.base import clone
from skopt.space import Categorical, Dimension, Integer, Space

from .space import Candidate, DimensionSpec, SearchSpace

__all__ = ['TrialOptimizer', 'FAILED_MARGIN', 'DEFAULT_INITIAL_POINTS', 'DEFAULT_ACQ_POINTS']

# Random (constrained) proposals after the warm starts before the GP drives.
# Few, because trials are expensive (an OSD restart each): with the default 12
# trials and 4 warm starts this leaves 5 to the model.  On the synthetic benchmark of
# the unit tests 3 did better than 5 or 8 within 25 trials.
DEFAULT_INITIAL_POINTS = 3

# A failed trial (OSD would not start) is told as
#   worst + FAILED_MARGIN * max(worst - best, |worst|, tiny)
# over the real scores seen so far: clearly the worst point, but not an
# outlier so far out that the normalized GP flattens everywhere else.
FAILED_MARGIN = 0.5

# Candidate points scored per acquisition step; skopt's default is 10000.
# The safety constraint is checked in Python for each, and a few thousand
# cover a 7-dimension integer grid well enough at a fraction of the cost.
DEFAULT_ACQ_POINTS = 2000

# skopt honours the constraint by rejection sampling: the acquisition step
# draws until acq_points safe points are found (10000 tries per point at
# most, then it raises). Refuse spaces where fewer than this many of
# _PROBES random points are safe: every trial would crawl or fail in skopt.
_PROBES = 1000
_MIN_SAFE_PROBES = 5

_Point = List[Union[int, str]]


class TrialOptimizer:
    def __init__(self, space: SearchSpace, seed: int = 0,
                 warm_start: Sequence[Candidate] = (),
                 n_initial_points: int = DEFAULT_INITIAL_POINTS,
                 acq_points: int = DEFAULT_ACQ_POINTS) -> None:
        """``n_initial_points``: random proposals after the safe warm starts."""
        if n_initial_points < 0:
            raise ValueError(f'n_initial_points must be >= 0, got {n_initial_points}')
        self.space = space
        self.seed = seed
        # Unsafe warm starts (e.g. a cluster running 8 GiB of memtables) are
        # never proposed; duplicates (current == Pacific default) run once.
        self.warm_start: List[Candidate] = []
        for c in warm_start:
            if c not in self.warm_start and not space.violations(c):
                self.warm_start.append(c)
        self._told: List[Candidate] = []   # every candidate told, in order
        self._scores: List[float] = []     # real scores only (not penalties)
        self._pending_failed: List[_Point] = []
        self._dims = space.dimensions()
        dims = [_skopt_dimension(d) for d in self._dims]
        _check_safe_fraction(space, dims, seed)
        self._opt = skopt.Optimizer(
            dims,
            # "GP" is skopt's Matern GP with noise="gaussian": it fits a
            # white-noise level to the data, so repeated measurements of
            # the same options that disagree (latency noise is real) are
            # treated as noise rather than forced through exactly.
            base_estimator='GP',
            # EI rather than gp_hedge: with a dozen trials hedging's bandit has
            # too few rounds to learn which acquisition works, and its gains
            # depend on every intermediate fit, whereas EI's proposal
            # depends only on the told points: that makes replay after a
            # restart exact and cheap (one GP fit instead of one per trial).
            acq_func='EI',
            # Sampling: the only acquisition optimizer skopt allows with
            # space_constraint; it evaluates EI on constrained random draws.
            acq_optimizer='sampling',
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
        """Next candidate to try: pending warm starts first, then skopt's pick.

        Calling ask() again without a tell() returns the same candidate.
        """
        for c in self.warm_start:
            if c not in self._told:
                return c
        self._reseed('ask')
        c = self.space.from_point(self._opt.ask())
        problems = self.space.violations(c)
        if problems:
            # skopt only samples under the constraint, so this is a bug;
            # stopping the session beats restarting an OSD on it.
            raise RuntimeError(f'optimizer proposed an unsafe candidate {c}: {problems}')
        return c

    def tell(self, c: Candidate, score: float) -> None:
        """Record a trial's score (lower is better)."""
        self._send(self._record(c, score), fit=True)

    def tell_failed(self, c: Candidate) -> None:
        """Record a trial whose OSD would not start, as a penalty score."""
        self._send(self._record(c, None), fit=True)

    def rank(self, candidates: Iterable[Candidate], k: int) -> List[Tuple[Candidate, float]]:
        """The k candidates the model expects best (lowest posterior mean of
        the score), best first, each with that mean; a candidate listed twice
        counts once, and one the GP cannot place (a compression not searched)
        is left out.

        The scores told are log ratios, and a config measured more than once
        is told once per window: the GP averages its repeats where the raw
        windows would crown the luckiest one.  What it cannot do is discount
        the single window of a config with no near neighbour: with ~20
        points in 9 dimensions its fitted noise is small and it all but
        interpolates (seen in the unit tests' simulations), which is why
        the top k are confirmed, not trusted.  A fresh fit of the search's
        own GP: it exists however few points were told (skopt fits only
        after its initial points) and is the same after a replay.
        """
        unique: List[Candidate] = []
        points: List[_Point] = []
        for c in candidates:
            x = self._clamp(c)
            if c not in unique and x is not None:
                unique.append(c)
                points.append(x)
        if not unique or k <= 0 or not self._opt.Xi:
            return []
        model = clone(self._opt.base_estimator_)
        model.fit(self._opt.space.transform(self._opt.Xi), self._opt.yi)
        means = model.predict(self._opt.space.transform(points))
        order = sorted(range(len(unique)), key=lambda i: (float(means[i]), i))
        return [(unique[i], float(means[i])) for i in order[:k]]

    def replay(self, history: Iterable[Tuple[Candidate, Optional[float]]]) -> None:
        """Re-tell persisted trials, ``None`` score = failed trial.

        Same end state as telling them one by one, with one GP fit at the end.
        """
        batches = [self._record(c, s) for c, s in history]
        batches = [b for b in batches if b[0]]
        for i, b in enumerate(batches):
            self._send(b, fit=(i == len(batches) - 1))

    # -- internals ---------------------------------------------------------

    def _record(self, c: Candidate, score: Optional[float]
                ) -> Tuple[List[_Point], List[float], int]:
        """Book-keep one trial; return the (xs, ys) batch skopt must learn."""
        if score is not None:
            score = float(score)
            if not math.isfinite(score):
                raise ValueError(f'score must be finite, got {score}; use tell_failed()')
        self._told.append(c)
        x = self._clamp(c)
        xs: List[_Point] = []
        ys: List[float] = []
        if x is None:
            # Compression this OSD does not support: no categorical value to
            # clamp to, so the GP cannot place it. Counted as told, not learned.
            return xs, ys, self.n_told
        if score is None:
            if not self._scores:
                # No scale to be "worse than" yet: hold it until a real score.
                self._pending_failed.append(x)
                return xs, ys, self.n_told
            xs.append(x)
            ys.append(self._penalty())
        else:
            self._scores.append(score)
            xs.append(x)
            ys.append(score)
            if self._pending_failed:
                penalty = self._penalty()
                xs.extend(self._pending_failed)
                ys.extend([penalty] * len(self._pending_failed))
                self._pending_failed = []
        return xs, ys, self.n_told

    def _send(self, batch: Tuple[List[_Point], List[float], int], fit: bool) -> None:
        xs, ys, n_told = batch
        if not xs:
            return
        # The acquisition step draws random points: seed it from the history
        # length so a replayed optimizer draws exactly what the original did.
        self._opt.rng = self._rng('tell', n_told)
        if all(x in self._opt.space for x in xs):
            self._opt.tell(xs, ys, fit=fit)
        else:
            # Clamped into bounds but unsafe (e.g. the cluster's own 4 GiB
            # memtables): skopt.tell rejects points outside the constraint,
            # yet the GP should still learn from a measured point. _tell is
            # skopt's documented entry point that skips input validation;
            # we validated (clamped, finite) above.
            self._opt._tell(xs, ys, fit=fit)

    def _penalty(self) -> float:
        worst, best = max(self._scores), min(self._scores)
        return worst + FAILED_MARGIN * max(worst - best, abs(worst), 1e-9)

    def _clamp(self, c: Candidate) -> Optional[_Point]:
        """Point for the GP, clamped into the bounds; None if not placeable.

        Clamping (rather than dropping) keeps e.g. the cluster's own options
        as information at the nearest edge of the space: an option beyond a
        bound behaves more like the bound than like nothing at all.
        """
        x = self.space.to_point(c)
        out: _Point = []
        for d, v in zip(self._dims, x):
            if d.is_categorical:
                if v not in d.categories:
                    return None
                out.append(v)
            else:
                assert isinstance(v, int)
                out.append(min(max(v, d.low), d.high))
        return out

    def _reseed(self, purpose: str) -> None:
        self._opt.rng = self._rng(purpose, self.n_told)

    def _rng(self, purpose: str, n_told: int) -> np.random.RandomState:
        # Every random draw depends only on (seed, purpose, trials told):
        # repeated ask() calls agree and replay reproduces the original.
        return np.random.RandomState(
            [self.seed % (1 << 32), {'ask': 1, 'tell': 2}[purpose], n_told])


def enough_safe_points(space: SearchSpace, seed: int) -> bool:
    """Whether the optimizer can search `space` (its check, without raising)."""
    try:
        _check_safe_fraction(space, [_skopt_dimension(d) for d in space.dimensions()], seed)
    except ValueError:
        return False
    return True


def random_points(space: SearchSpace, n: int, seed: int) -> List[Any]:
    """`n` points drawn at random over the space's box, as the optimizer
    draws them (safe or not)."""
    return list(Space([_skopt_dimension(d) for d in space.dimensions()]).rvs(
        n_samples=n, random_state=seed))


def _check_safe_fraction(space: SearchSpace, dims: List[Dimension], seed: int) -> None:
    probe = Space(dims).rvs(n_samples=_PROBES, random_state=seed)
    n_safe = sum(space.point_is_safe(x) for x in probe)
    if n_safe < _MIN_SAFE_PROBES:
        raise ValueError(
            f'only {n_safe} of {_PROBES} random points of the search space are safe, '
            f'e.g. {space.from_point(probe[0])} is not: '
            f'{"; ".join(space.violations(space.from_point(probe[0])))}')


def _skopt_dimension(d: DimensionSpec) -> Dimension:
    if d.is_categorical:
        return Categorical(list(d.categories), name=d.name)
    return Integer(d.low, d.high, prior=d.prior, name=d.name)
