"""What is left to learn about a chance graph that is not fully expanded (a partial
solve's): the positions whose value is known (:func:`settled`), the unexpanded positions
that can still change the root's bounds (:func:`relevant_frontier`), and the positions
whose bounds no further expansion changes (:func:`final_nodes`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from solver.chance.bounds import ChanceSolution
from solver.chance.graph import CHANCE, DECISION, FRONTIER, edge_parents


def settled(solution: ChanceSolution) -> npt.NDArray[np.bool_]:
    """The positions whose value is known: exact bounds that meet, or float bounds that
    meet (rounded outwards, so nothing more can be learnt about them in floats)."""
    known = np.array(
        [
            a is not None and a == b
            for a, b in zip(solution.exact_low, solution.exact_high, strict=True)
        ],
        dtype=np.bool_,
    )
    return known | (solution.high <= solution.low)


def _spans(start: npt.NDArray[np.int64], nodes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The indices ``start[v]:start[v + 1]`` of each of *nodes*, one after the other (the
    edge indices of *nodes*, for a graph's ``start``)."""
    first = start[nodes]
    counts = start[nodes + 1] - first
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    spans: npt.NDArray[np.int64] = np.repeat(first, counts) - offsets
    return spans + np.arange(int(counts.sum()), dtype=np.int64)


def _walked(solution: ChanceSolution, known: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The moves :func:`relevant_frontier` walks (by edge index): every outcome of a chance
    node and every move of a decision node whose bound from above, seen from the mover,
    is above the node's lower bound, into a position whose value is not *known*."""
    g = solution.graph
    parent = edge_parents(g)
    kid = g.child
    v_high = np.where(g.sign > 0, solution.high[kid], -solution.low[kid])
    walk: npt.NDArray[np.bool_] = (g.kind[parent] == CHANCE) | (v_high > solution.low[parent])
    return walk & ~known[kid]


def relevant_frontier(
    solution: ChanceSolution, known: npt.NDArray[np.bool_] | None = None
) -> npt.NDArray[np.int64]:
    """The unexpanded positions that can still change the root's bounds, ascending.

    They are found walking from the root through positions whose value is not known
    (:func:`settled`): at a chance node every outcome, at a decision node every move
    whose bound from above (seen from the mover) is above the node's lower bound. A move
    at or below it can neither raise the node's ``low`` (its own ``low`` is no higher)
    nor set the node's ``high`` (the move giving the ``low`` has a ``high`` at least as
    high, and if that one equals the ``low`` the node's value is known). Since every
    bound is sound, this holds in the complete graph too: the root's bounds with the
    positions not walked to left unexpanded are those of the complete graph."""
    g = solution.graph
    known = settled(solution) if known is None else known
    if known[0] or len(g) == 0:
        return np.zeros(0, dtype=np.int64)
    kid = g.child
    walk = _walked(solution, known)
    seen = np.zeros(len(g), dtype=np.bool_)
    seen[0] = True
    active = np.zeros(1, dtype=np.int64)
    found: list[npt.NDArray[np.int64]] = []
    while active.size:
        kinds = g.kind[active]
        found.append(active[kinds == FRONTIER])
        inner = active[(kinds == DECISION) | (kinds == CHANCE)]
        edges = _spans(g.start, inner)
        kids = np.unique(kid[edges[walk[edges]]])
        kids = kids[~seen[kids]]
        seen[kids] = True
        active = kids
    return np.sort(np.concatenate(found))


def final_nodes(
    solution: ChanceSolution, known: npt.NDArray[np.bool_] | None = None
) -> npt.NDArray[np.bool_]:
    """The positions whose bounds no further expansion changes: those whose value is
    known (:func:`settled`) and those from which :func:`relevant_frontier`'s walk,
    started there, reaches no unexpanded position (for the reason it gives). A complete
    graph's are all final."""
    g = solution.graph
    known = settled(solution) if known is None else known
    frontier = np.flatnonzero(g.kind == FRONTIER)
    if frontier.size == 0:
        return np.ones(len(g), dtype=np.bool_)
    # Walk the walked moves backwards from the unexpanded positions.
    walked = np.flatnonzero(_walked(solution, known))
    parent = edge_parents(g)[walked]
    kid = g.child[walked]
    order = np.argsort(kid, kind="stable")
    into = np.zeros(len(g) + 1, dtype=np.int64)
    np.cumsum(np.bincount(kid, minlength=len(g)), out=into[1:])
    parents_by_child = parent[order]
    reaches = np.zeros(len(g), dtype=np.bool_)
    reaches[frontier] = True
    active = frontier
    while active.size:
        ups = np.unique(parents_by_child[_spans(into, active)])
        ups = ups[~reaches[ups] & ~known[ups]]
        reaches[ups] = True
        active = ups
    return known | ~reaches


__all__ = ["final_nodes", "relevant_frontier", "settled"]
