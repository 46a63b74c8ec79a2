"""The structure of a chance graph that its solves go by: its strongly connected
components, numbered children first (:func:`strongly_connected`), their levels
(:func:`component_levels`), and the layers in which Gauss-Seidel sweeps update the
positions of a cycle (:func:`sweep_layers`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from solver.chance.graph import CHANCE, ChanceGraph


def strongly_connected(
    graph: ChanceGraph, finish: list[int] | None = None
) -> tuple[npt.NDArray[np.int64], int]:
    """Each node's strongly connected component, numbered children first: every edge
    goes to a component with a number no larger than its parent's (Tarjan's algorithm,
    without recursion). Returns the component of each node and the count; *finish*, if
    given (*n* entries), receives the order in which the depth-first search finished
    the nodes (an edge to a node finished later goes back to an ancestor)."""
    n = len(graph)
    finished = 0
    start = graph.start.tolist()
    child = graph.child.tolist()
    order = [-1] * n
    low = [0] * n
    comp = [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if order[root] >= 0:
            continue
        work = [(root, start[root])]
        order[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, e = work[-1]
            end = start[v + 1]
            while e < end:
                w = child[e]
                e += 1
                if order[w] < 0:
                    work[-1] = (v, e)
                    order[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, start[w]))
                    break
                if on_stack[w] and order[w] < low[v]:
                    low[v] = order[w]
            else:
                work.pop()
                if finish is not None:
                    finish[v] = finished
                    finished += 1
                if work:
                    u = work[-1][0]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == order[v]:
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        comp[w] = ncomp
                        if w == v:
                            break
                    ncomp += 1
    return np.array(comp, dtype=np.int64), ncomp


@dataclass
class Levels:
    """The levels of the components' DAG: a component's level is one more than its
    children's highest, so the components of one level depend only on lower levels."""

    members: list[list[int]]
    """Each component's nodes, ascending."""
    level: list[int]
    cyclic: list[bool]
    """Whether each component has a cycle (more than one node, or a move to itself)."""
    has_chance: list[bool]
    """Whether each component holds a chance node."""
    by_level: list[list[int]]
    """Each level's components, ascending."""


def component_levels(
    comp: list[int], ncomp: int, start: list[int], child: list[int], kind: list[int]
) -> Levels:
    """The :class:`Levels` of the components *comp* (of :func:`strongly_connected`) of the
    graph whose edges are *start* / *child* and whose kinds of position are *kind*."""
    members: list[list[int]] = [[] for _ in range(ncomp)]
    for v, c in enumerate(comp):
        members[c].append(v)
    level = [0] * ncomp
    cyclic = [len(nodes) > 1 for nodes in members]
    has_chance = [False] * ncomp
    for c in range(ncomp):
        top = 0
        for v in members[c]:
            if kind[v] == CHANCE:
                has_chance[c] = True
            for e in range(start[v], start[v + 1]):
                d = comp[child[e]]
                if d == c:
                    cyclic[c] = True
                elif level[d] + 1 > top:
                    top = level[d] + 1
        level[c] = top
    by_level: list[list[int]] = [[] for _ in range(max(level, default=-1) + 1)]
    for c in range(ncomp):
        by_level[level[c]].append(c)
    return Levels(members, level, cyclic, has_chance, by_level)


def sweep_layers(
    nodes: npt.NDArray[np.int64], start: list[int], child: list[int]
) -> list[npt.NDArray[np.int64]]:
    """*nodes* (sorted) in layers for Gauss-Seidel sweeps: an edge to a node of a higher
    id (discovery order: mostly a move forward) puts its parent in a later layer than its
    child, so most children are updated before their parents within one sweep; edges
    back to lower ids (the moves that close cycles) use the previous sweep's values."""
    inside = set(nodes.tolist())
    layer: dict[int, int] = {}
    for v in reversed(nodes.tolist()):
        top = 0
        for e in range(start[v], start[v + 1]):
            c = child[e]
            if c > v and c in inside:
                d = layer[c] + 1
                if d > top:
                    top = d
        layer[v] = top
    count = max(layer.values()) + 1
    groups: list[list[int]] = [[] for _ in range(count)]
    for v in nodes.tolist():
        groups[layer[v]].append(v)
    return [np.array(g, dtype=np.int64) for g in groups]


__all__ = ["Levels", "component_levels", "strongly_connected", "sweep_layers"]
