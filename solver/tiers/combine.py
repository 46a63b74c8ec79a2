"""A position's value from its children's, when every child is solved already: the
second sweep's step for a tier whose moves all leave it (connect-four's, every tier;
``docs/design.md`` §5).

Such a shard needs no fixpoint. The counters of
:func:`~solver.full.retrograde.retrograde_arrays` settle each position exactly once, from
its children's fixed values, and the result is negamax with DESIGN §4's depths:

- ``low = max(-high(c))``, ``depth_low = 1 + min depth_high(c)`` over the children
  attaining it (``-inf`` and an infinite depth when no child's ``high`` is finite);
- ``high = max(-low(c))``, ``depth_high = 1 + max depth_low(c)`` over every child
  (``+inf`` and an infinite depth when a child's ``low`` is ``-inf``).

:func:`children_values` computes both with segmented reductions over the moves, in a
few passes over arrays and no sort (``tests/solver/test_combine.py`` holds it to
:func:`~solver.full.retrograde.retrograde_arrays` on random inputs).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from solver.store import TierValues
from solver.values import DEPTH_INF, NEG_INF, POS_INF


def children_values(
    counts: npt.NDArray[np.integer],
    low: npt.NDArray[np.int64],
    high: npt.NDArray[np.int64],
    depth_low: npt.NDArray[np.int32],
    depth_high: npt.NDArray[np.int32],
) -> TierValues:
    """The bounds and depths of positions whose moves are given in order, *counts[i]*
    for position *i*, each move's child having the values at the same place of *low*,
    *high*, *depth_low* and *depth_high* (the sentinels of :mod:`solver.values` for the
    infinities). A position without moves stays unknown (``[-inf, +inf]``)."""
    n = int(counts.size)
    found = TierValues(
        np.full(n, NEG_INF, np.int64),
        np.full(n, POS_INF, np.int64),
        np.full(n, DEPTH_INF, np.int32),
        np.full(n, DEPTH_INF, np.int32),
    )
    some = np.flatnonzero(counts > 0)
    if not some.size:
        return found
    used = counts[some]
    starts = np.cumsum(used) - used
    # low: the best child's -high; its depth, the quickest such child's.
    negated = np.negative(high)  # -POS_INF == NEG_INF: an unknown high gives nothing
    best = np.maximum.reduceat(negated, starts)
    attains = negated == np.repeat(best, used)
    quickest = np.minimum.reduceat(np.where(attains, depth_high, DEPTH_INF), starts)
    finite = (best > NEG_INF) & (quickest < DEPTH_INF)
    found.low[some] = best
    found.depth_low[some[finite]] = quickest[finite] + 1
    # high: the worst child's -low; its depth, the slowest child's.
    worst = np.maximum.reduceat(np.negative(low), starts)
    slowest = np.maximum.reduceat(depth_low, starts)
    finite = (worst < POS_INF) & (slowest < DEPTH_INF)
    found.high[some] = worst
    found.depth_high[some[finite]] = slowest[finite] + 1
    return found


__all__ = ["children_values"]
