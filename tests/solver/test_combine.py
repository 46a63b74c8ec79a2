"""A tier whose moves all leave it is solved by one negamax step over its solved
children (solver.tiers.combine): the same bounds and depths, position for position, as
the counters' fixpoint (solver.full.retrograde.retrograde_arrays) given the children as
fixed seeds, on random children with unknown bounds, draws, repeats and no moves."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.full.retrograde import retrograde_arrays
from solver.tiers.combine import children_values
from solver.values import DEPTH_INF, NEG_INF, POS_INF


@st.composite
def solved_children(draw: st.DrawFn) -> tuple[list[tuple[int, int, int, int]], list[list[int]]]:
    """A pool of solved children (low, high, depth_low, depth_high: a finite bound has a
    finite depth, as in a solved tier) and each parent's moves into it (repeats allowed;
    some parents without moves)."""
    pool = []
    for _ in range(draw(st.integers(1, 8))):
        low = draw(st.one_of(st.just(NEG_INF), st.integers(-3, 3)))
        high = draw(st.one_of(st.just(POS_INF), st.integers(max(low, -3), 3)))
        depth_low = DEPTH_INF if low == NEG_INF else draw(st.integers(0, 9))
        depth_high = DEPTH_INF if high == POS_INF else draw(st.integers(0, 9))
        pool.append((low, high, depth_low, depth_high))
    moves = draw(
        st.lists(st.lists(st.integers(0, len(pool) - 1), max_size=5), min_size=1, max_size=8)
    )
    return pool, moves


@settings(max_examples=400, deadline=None)
@given(solved_children())
def test_one_step_equals_the_fixpoint(
    case: tuple[list[tuple[int, int, int, int]], list[list[int]]],
) -> None:
    pool, moves = case
    n, k = len(moves), len(pool)
    counts = np.array([len(m) for m in moves], dtype=np.int64)
    child = np.array([c for m in moves for c in m], dtype=np.int64)
    parent = np.repeat(np.arange(n), counts)
    columns = [np.array(col, dtype=np.int64) for col in zip(*pool, strict=True)]
    low, high = columns[0], columns[1]
    depth_low, depth_high = (c.astype(np.int32) for c in columns[2:])
    expected: tuple[np.ndarray, ...] = retrograde_arrays(
        n + k,
        parent,
        n + child,
        np.concatenate([counts, np.zeros(k, np.int64)]).astype(np.int32),
        n + np.arange(k),
        low,
        high,
        depth_low,
        depth_high,
    )
    got = children_values(counts, low[child], high[child], depth_low[child], depth_high[child])
    names = ("low", "high", "depth_low", "depth_high")
    have: tuple[np.ndarray, ...] = (got.low, got.high, got.depth_low, got.depth_high)
    for name, want, column in zip(names, expected, have, strict=True):
        assert column.tolist() == want[:n].tolist(), name


def test_a_win_at_once_and_a_forced_loss() -> None:
    # Parent 0: one child lost for its mover in 0 plies (a win at once), one drawn.
    # Parent 1: every child won for its mover: lost. DESIGN §4's depths: depth_low is
    # 1 + the smallest depth_high of a child attaining low, depth_high 1 + the largest
    # depth_low of all children.
    counts = np.array([2, 2])
    low = np.array([-1, 0, 1, 1])
    depth = np.array([0, 4, 2, 6], dtype=np.int32)
    got = children_values(counts, low, low.copy(), depth, depth.copy())
    assert got.low.tolist() == [1, -1] and got.high.tolist() == [1, -1]
    assert got.depth_low.tolist() == [1, 3] and got.depth_high.tolist() == [5, 7]
