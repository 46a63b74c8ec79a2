"""A solved chance graph as a store writes it: :func:`to_graph` lays it out as a
:class:`~solver.graph.Graph` (states, integer bounds, flags) with the chance solver's own
columns (:class:`ChanceColumns`: float and exact bounds, players, probabilities, expected
plies) for the ``chance_nodes`` and ``chance_edges`` tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.chance.bounds import ChanceSolution
from solver.chance.frontier import final_nodes
from solver.chance.graph import CHANCE, FRONTIER, TERMINAL, ChanceGraph, edge_parents
from solver.chance.plies import ExpectedPlies, expected_plies
from solver.graph import Graph, NodeState
from solver.values import DEPTH_INF


@dataclass
class ChanceColumns:
    """What a store writes for a game of chance besides the graph's own columns, by node
    id and by edge index (the ``chance_nodes`` and ``chance_edges`` tables)."""

    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    low_exact: list[str | None]
    high_exact: list[str | None]
    player: npt.NDArray[np.int8]
    chance: npt.NDArray[np.bool_]
    probability: list[str | None]
    keeps_turn: npt.NDArray[np.bool_]
    plies: list[float | None] = field(default_factory=list)
    """The expected plies to the end under the optimal strategy (``None``: infinite;
    :mod:`solver.chance.plies`)."""
    plies_exact: list[str | None] = field(default_factory=list)
    """The same as an exact fraction where it is known."""
    edges_from: int = 0
    """The graph's edge index of ``probability[0]`` and ``keeps_turn[0]``: they cover the
    edges from there on (those a store has not written yet)."""
    changed: Sequence[int] = ()
    """Stored positions whose rows a store must rewrite (bounds, kind, plies), ascending;
    the node columns above cover every position."""


def fraction_text(q: Fraction | None) -> str | None:
    """An exact value as stored: ``'3/16'``, ``'-1'`` (``None`` stays ``None``).

    >>> fraction_text(Fraction(3, 16)), fraction_text(Fraction(-1)), fraction_text(None)
    ('3/16', '-1', None)
    """
    return None if q is None else str(q)


def to_graph(
    solution: ChanceSolution,
    graph: Graph | None = None,
    plies: ExpectedPlies | None = None,
    final: npt.NDArray[np.bool_] | None = None,
) -> Graph:
    """The solved chance graph as a :class:`~solver.graph.Graph` (what stores write).

    *graph* (default: a new one) may hold what an earlier run stored of the solution's
    graph: its first positions, with the same ids and, for those it has expanded, the
    same moves. Its positions whose flags were not final are updated (marked changed, and
    listed in :attr:`ChanceColumns.changed`), the new positions and the moves of the
    positions expanded since are appended. Each position gets its state, its bounds
    rounded outwards to integers, both flags as *final* says (default
    :func:`final_nodes`), depths unknown (0 at the end of the game), and the chance
    columns (floats, exact fractions, players, probabilities, the expected plies *plies*,
    computed here if not given) go to :attr:`Graph.chance`."""
    if plies is None:
        plies = expected_plies(solution)
    if final is None:
        final = final_nodes(solution)
    g = solution.graph
    n = len(g)
    graph = Graph() if graph is None else graph
    old = graph.num_nodes
    columns = _node_columns(solution, final)
    fresh = np.zeros(n, dtype=np.bool_)  # positions whose moves are not in *graph*
    fresh[old:] = True
    changed = _rewrite(graph, columns, fresh) if old else np.zeros(0, dtype=np.int64)
    if n > old:
        graph.append_keys(g.keys[old:])
        graph.append_nodes(n - old, {name: v[old:].tobytes() for name, v in columns.items()})
    edges_from = graph.num_edges
    new_edges = _append_edges(graph, g, fresh if old else None)
    graph.chance = _chance_columns(solution, plies, new_edges, edges_from, changed)
    return graph


def _node_columns(
    solution: ChanceSolution, final: npt.NDArray[np.bool_]
) -> dict[str, npt.NDArray[Any]]:
    """The graph's own columns of every position, by name."""
    g = solution.graph
    kind = g.kind
    return {
        "state": np.select(
            [kind == TERMINAL, kind == FRONTIER],
            [int(NodeState.TERMINAL), int(NodeState.UNEXPANDED)],
            int(NodeState.EXPANDED),
        ).astype(np.uint8),
        "low": np.floor(solution.low).astype(np.int64),
        "high": np.ceil(solution.high).astype(np.int64),
        "low_final": final.astype(np.uint8),
        "high_final": final.astype(np.uint8),
        "depth_low": np.where(kind == TERMINAL, 0, DEPTH_INF).astype(np.int32),
        "depth_high": np.where(kind == TERMINAL, 0, DEPTH_INF).astype(np.int32),
        "dist": g.dist.astype(np.int32),
    }


def _rewrite(
    graph: Graph, columns: dict[str, npt.NDArray[Any]], fresh: npt.NDArray[np.bool_]
) -> npt.NDArray[np.int64]:
    """Rewrite the stored positions of *graph* whose flags were not final from
    *columns* (marked dirty), and mark in *fresh* those it has not expanded; returns the
    rewritten ones."""
    old = graph.num_nodes
    state = np.frombuffer(graph.state, dtype=np.uint8)
    fresh[:old] = state == int(NodeState.UNEXPANDED)
    done = np.frombuffer(graph.low_final, dtype=np.uint8) & np.frombuffer(
        graph.high_final, dtype=np.uint8
    )
    changed = np.flatnonzero(done == 0)
    del state, done
    for name, values in columns.items():
        if name != "dist":
            target = np.frombuffer(getattr(graph, name), dtype=values.dtype)
            target[changed] = values[changed]
            del target
    graph.dirty.update(changed.tolist())
    return changed


def _append_edges(
    graph: Graph, g: ChanceGraph, fresh: npt.NDArray[np.bool_] | None
) -> npt.NDArray[np.int64] | None:
    """Append to *graph* the edges of *g*'s *fresh* positions, or every edge if *fresh* is
    ``None`` (*graph* holds none); returns their indices (``None``: every edge)."""
    if fresh is None:
        parents = np.repeat(np.arange(len(g), dtype=np.int32), np.diff(g.start))
        graph.append_edges(parents, g.child.astype(np.int32), g.labels)
        return None
    parent = edge_parents(g)
    new_edges = np.flatnonzero(fresh[parent])
    graph.append_edges(
        parent[new_edges].astype(np.int32),
        g.child[new_edges].astype(np.int32),
        [g.labels[e] for e in new_edges.tolist()],
    )
    return new_edges


def _chance_columns(
    solution: ChanceSolution,
    plies: ExpectedPlies,
    new_edges: npt.NDArray[np.int64] | None,
    edges_from: int,
    changed: npt.NDArray[np.int64],
) -> ChanceColumns:
    """The chance columns of every position and of the edges *new_edges* (``None``:
    every edge)."""
    g = solution.graph
    at = range(g.edges) if new_edges is None else new_edges.tolist()
    return ChanceColumns(
        low=solution.low,
        high=solution.high,
        low_exact=[fraction_text(q) for q in solution.exact_low],
        high_exact=[fraction_text(q) for q in solution.exact_high],
        player=g.player,
        chance=g.kind == CHANCE,
        probability=[fraction_text(g.probability[e]) for e in at],
        keeps_turn=g.sign > 0 if new_edges is None else g.sign[new_edges] > 0,
        plies=[None if math.isinf(x) else x for x in plies.plies.tolist()],
        plies_exact=[fraction_text(q) for q in plies.exact],
        edges_from=edges_from,
        changed=changed.tolist(),
    )


__all__ = ["ChanceColumns", "fraction_text", "to_graph"]
