"""What the tests ask of a SearchSpace and the module never does."""
from dataclasses import astuple

from rocks_autotune.space import Candidate, SearchSpace


def on_grid(space: SearchSpace, c: Candidate) -> bool:
    """Whether ``c`` is on the search grid, within bounds (safe or not)."""
    return all(v in d.categories if d.is_categorical
               else v % d.unit == 0 and d.low <= v // d.unit <= d.high
               for d, v in zip(space.dimensions(), astuple(c)))
