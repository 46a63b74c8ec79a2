"""A game of chance's own rows (``chance_nodes``, ``chance_edges``), written with the
nodes and edges of a ``chance`` batch (:class:`solver.store.Batch`) from the graph's
chance columns (:class:`solver.chance.rows.ChanceColumns`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from db.backends.base import Backend
from solver.graph import Graph

_NODE_COLUMNS = (
    "variant_id",
    "id",
    "low",
    "high",
    "low_exact",
    "high_exact",
    "player",
    "chance",
    "plies",
    "plies_exact",
)
_EDGE_COLUMNS = ("variant_id", "parent", "move_order", "probability", "keeps_turn")
_UPDATE = (
    "UPDATE chance_nodes SET low = ?, high = ?, low_exact = ?, high_exact = ?, "
    "chance = ?, plies = ?, plies_exact = ? WHERE variant_id = ? AND id = ?"
)


def write_chance_rows(
    backend: Backend, marker: str, cursor: Any, graph: Graph, vid: int, nodes: range, edges: range
) -> None:
    """The ``chance_nodes`` rows of the new *nodes*, the ``chance_edges`` rows of the new
    *edges*, and the rewritten ``chance_nodes`` rows of the changed stored nodes, through
    the batch's *cursor* (*marker*: the driver's parameter marker)."""
    if graph.chance.changed:
        _update_changed(marker, cursor, graph, vid)
    if nodes:
        _insert_nodes(backend, cursor, graph, vid, nodes)
    if edges:
        _insert_edges(backend, cursor, graph, vid, edges)


def _update_changed(marker: str, cursor: Any, graph: Graph, vid: int) -> None:
    c = graph.chance
    cursor.executemany(
        _UPDATE.replace("?", marker),
        [
            (
                float(c.low[i]),
                float(c.high[i]),
                c.low_exact[i],
                c.high_exact[i],
                bool(c.chance[i]),
                c.plies[i],
                c.plies_exact[i],
                vid,
                i,
            )
            for i in c.changed
        ],
    )


def _insert_nodes(backend: Backend, cursor: Any, graph: Graph, vid: int, nodes: range) -> None:
    c = graph.chance
    lo, hi = nodes.start, nodes.stop
    backend.write_table(
        cursor,
        "chance_nodes",
        _NODE_COLUMNS,
        zip(
            [vid] * len(nodes),
            nodes,
            c.low[lo:hi].tolist(),
            c.high[lo:hi].tolist(),
            c.low_exact[lo:hi],
            c.high_exact[lo:hi],
            c.player[lo:hi].tolist(),
            c.chance[lo:hi].tolist(),
            c.plies[lo:hi],
            c.plies_exact[lo:hi],
            strict=True,
        ),
    )


def _insert_edges(backend: Backend, cursor: Any, graph: Graph, vid: int, edges: range) -> None:
    c = graph.chance
    lo, hi = edges.start, edges.stop
    first = np.frombuffer(graph.first_edge, dtype=np.int32)
    parent = np.frombuffer(graph.edge_parent, dtype=np.int32)[lo:hi]
    order = np.arange(lo, hi, dtype=np.int64) - first[parent]
    lo, hi = lo - c.edges_from, hi - c.edges_from  # what the columns cover
    backend.write_table(
        cursor,
        "chance_edges",
        _EDGE_COLUMNS,
        zip(
            [vid] * len(edges),
            parent.tolist(),
            order.tolist(),
            c.probability[lo:hi],
            c.keeps_turn[lo:hi].tolist(),
            strict=True,
        ),
    )


__all__ = ["write_chance_rows"]
