"""Leaks (DESIGN §4): the frontier nodes that can still change a non-final root bound.

:func:`walk` finds the region the root depends on (the nodes whose lower or upper bound
can still move it) and its leaks; :func:`first_leaks` takes the leftmost ones of a
depth-first walk in move order (the default batch order), :func:`find_leaks` all of them.
The walks follow the children that the finality rules of :mod:`solver.fixpoint` name
(:func:`~solver.fixpoint.low_final_by_rules`,
:func:`~solver.fixpoint.high_final_by_rules`), tested edge by edge here.
"""

from __future__ import annotations

from solver.graph import UNEXPANDED, Graph, NodeId


def walk(g: Graph, root: NodeId) -> tuple[set[NodeId], set[NodeId], list[NodeId]]:
    """The (node, bound) pairs a non-final root bound depends on, and the leaks.

    Where ``low(n)`` is not final, follow children ``c`` with ``-low(c) > low(n)`` whose
    ``high(c)`` is not final; where ``high(n)`` is not final, follow children with
    ``-low(c) = high(n)`` whose ``low(c)`` is not final. Returns the nodes reached on their
    low side, those reached on their high side, and the unexpanded nodes reached (the
    leaks, in the order found).
    """
    low, state = g.low, g.state
    high = g.high
    lf, hf = g.low_final, g.high_final
    first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
    seen_low: set[NodeId] = set()
    seen_high: set[NodeId] = set()
    leaks: list[NodeId] = []
    leak_set: set[NodeId] = set()
    stack: list[tuple[NodeId, bool]] = []
    if not lf[root]:
        seen_low.add(root)
        stack.append((root, True))
    if not hf[root]:
        seen_high.add(root)
        stack.append((root, False))
    while stack:
        n, is_low = stack.pop()
        if state[n] == UNEXPANDED:
            if n not in leak_set:
                leak_set.add(n)
                leaks.append(n)
            continue
        f = first_edge[n]
        if is_low:
            lo = low[n]
            for e in range(f, f + child_count[n]):
                c = edge_child[e]
                # the children that keep low(n) from being final (low_final_by_rules)
                if not hf[c] and -low[c] > lo and c not in seen_high:
                    seen_high.add(c)
                    stack.append((c, False))
        else:
            hi = high[n]
            for e in range(f, f + child_count[n]):
                c = edge_child[e]
                # the children that could make high(n) final (high_final_by_rules)
                if not lf[c] and -low[c] == hi and c not in seen_low:
                    seen_low.add(c)
                    stack.append((c, True))
    return seen_low, seen_high, leaks


def first_leaks(g: Graph, root: NodeId, limit: int) -> tuple[list[NodeId], int]:
    """The first *limit* leaks of a depth-first walk in move order, and the pairs visited.

    The same walk as :func:`walk`, but depth first with each node's children in the
    game's move order, stopping as soon as *limit* leaks are found: the leaks it returns
    are the leftmost of the search tree, as a depth-first alpha-beta search would meet
    them, and the walk costs little more than the paths that lead to them.

    One addition: where ``low(n)`` is not final and a child ``c`` could still raise it
    (``-low(c) > low(n)``), the walk also follows ``c``'s own low side when that is not
    final. Raising ``low(c)`` to ``-low(n)`` makes ``c`` irrelevant to ``low(n)`` (rule 1
    no longer asks for ``high(c)``): this is alpha-beta's refutation, and it is usually far
    cheaper than finalising ``high(c)``.
    """
    state = g.state
    lf, hf = g.low_final, g.high_final
    seen_low: set[NodeId] = set()
    seen_high: set[NodeId] = set()
    leaks: list[NodeId] = []
    leak_set: set[NodeId] = set()
    stack: list[tuple[NodeId, bool]] = []
    if not hf[root]:
        seen_high.add(root)
        stack.append((root, False))
    if not lf[root]:
        seen_low.add(root)
        stack.append((root, True))
    visited = 0
    while stack:
        n, is_low = stack.pop()
        visited += 1
        if state[n] == UNEXPANDED:
            if n not in leak_set:
                leak_set.add(n)
                leaks.append(n)
                if len(leaks) >= limit:
                    break
            continue
        if is_low:
            _push_low_side(g, n, seen_low, seen_high, stack)
        else:
            _push_high_side(g, n, seen_low, stack)
    return leaks, visited


def _push_low_side(
    g: Graph,
    n: NodeId,
    seen_low: set[NodeId],
    seen_high: set[NodeId],
    stack: list[tuple[NodeId, bool]],
) -> None:
    """:func:`first_leaks`' step from ``low(n)``: push, last move first (so the first is
    walked first), the children that could still raise it, on their high side and, when
    not final, their low side (the refutation)."""
    low, lf, hf, edge_child = g.low, g.low_final, g.high_final, g.edge_child
    lo = low[n]
    f = g.first_edge[n]
    for e in range(f + g.child_count[n] - 1, f - 1, -1):
        c = edge_child[e]
        if not hf[c] and -low[c] > lo:
            if c not in seen_high:
                seen_high.add(c)
                stack.append((c, False))
            if not lf[c] and c not in seen_low:
                seen_low.add(c)
                stack.append((c, True))


def _push_high_side(
    g: Graph, n: NodeId, seen_low: set[NodeId], stack: list[tuple[NodeId, bool]]
) -> None:
    """:func:`first_leaks`' step from ``high(n)``: push, last move first, the children
    that could make it final (their low side)."""
    low, lf, edge_child = g.low, g.low_final, g.edge_child
    hi = g.high[n]
    f = g.first_edge[n]
    for e in range(f + g.child_count[n] - 1, f - 1, -1):
        c = edge_child[e]
        if not lf[c] and -low[c] == hi and c not in seen_low:
            seen_low.add(c)
            stack.append((c, True))


def find_leaks(g: Graph, root: NodeId) -> list[NodeId]:
    """The frontier nodes that can still change a non-final bound of *root*."""
    return walk(g, root)[2]
