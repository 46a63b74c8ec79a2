"""Reading a solve back commit by commit (migration 0006): the variant's commits, and its
graph as one of them left it.

In a solve without tiers node ids are discovery order, so the nodes of commit *k* are
those with ``id < commits.nodes``. A tiered full solve (``docs/design.md`` §5) gives ids in
solve order instead, a tier's ids together: the nodes of commit *k* are those of the tiers
it had discovered (``tiers.discovered_in <= k``). Either way, the nodes with ``expanded_in
<= k`` were expanded by then, with their edges.
The graph comes back with its structure only (terminal values exact, every other bound
open): bounds, flags and depths are a function of the structure, recomputed by the
caller (:func:`solver.full.retrograde.retrograde`, :func:`solver.fixpoint.update_finality`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import select, text

from db.errors import DatabaseError
from db.models import Commit, Tier, decode_key
from db.repository import Reader
from solver.graph import EXPANDED, TERMINAL, UNEXPANDED, Graph
from solver.values import DEPTH_INF, NEG_INF, POS_INF, decode


@dataclass(frozen=True)
class CommitRecord:
    """One committed batch (a ``commits`` row)."""

    seq: int
    run_id: int
    nodes: int
    edges: int
    expansions: int
    root_low: int | None
    """The run root's bounds after the commit (``None``: infinite)."""
    root_high: int | None
    root_low_final: bool
    root_high_final: bool


def list_commits(session: Reader, variant_id: int) -> list[CommitRecord]:
    """Every commit of the variant, in order (empty if it was stored before 0006)."""
    rows = session.execute(
        select(
            Commit.seq,
            Commit.run_id,
            Commit.nodes,
            Commit.edges,
            Commit.expansions,
            Commit.root_low,
            Commit.root_high,
            Commit.root_low_final,
            Commit.root_high_final,
        )
        .where(Commit.variant_id == variant_id)
        .order_by(Commit.seq)
    )
    return [
        CommitRecord(
            seq=r.seq,
            run_id=r.run_id,
            nodes=r.nodes,
            edges=r.edges,
            expansions=r.expansions,
            root_low=r.root_low,
            root_high=r.root_high,
            root_low_final=bool(r.root_low_final),
            root_high_final=bool(r.root_high_final),
        )
        for r in rows
    ]


@dataclass(frozen=True)
class TierStep:
    """One tier of a tiered full solve, as the replay reads it (a ``tiers`` row)."""

    tier: int
    ordinal: int
    """Its place in the discovery order (parents first), from 0."""
    first_id: int | None
    """Its nodes are ids ``first_id .. first_id + nodes - 1`` (``None``: not numbered yet)."""
    nodes: int
    edges: int | None
    """Its positions' moves, once solved."""
    discovered_in: int
    """The commit that recorded it."""
    solved_in: int | None
    """The commit that solved it (``None``: not solved yet)."""


def list_tiers(session: Reader, variant_id: int) -> list[TierStep]:
    """The variant's tiers in discovery order (empty for a solve without tiers)."""
    rows = session.execute(
        select(
            Tier.tier,
            Tier.ordinal,
            Tier.first_id,
            Tier.nodes,
            Tier.edges,
            Tier.discovered_in,
            Tier.solved_in,
        )
        .where(Tier.variant_id == variant_id)
        .order_by(Tier.ordinal)
    )
    return [
        TierStep(
            tier=int(r.tier),
            ordinal=r.ordinal,
            first_id=r.first_id,
            nodes=r.nodes,
            edges=None if r.edges is None else int(r.edges),
            discovered_in=r.discovered_in,
            solved_in=r.solved_in,
        )
        for r in rows
    ]


_COLUMNS = 'SELECT id, "key", state, low, dist, expanded_in FROM nodes WHERE variant_id = :v'
_RANGE = text(f"{_COLUMNS} AND id >= :a AND id < :b ORDER BY id")
_EDGES = text(
    "SELECT e.parent, e.child, e.move FROM edges AS e JOIN nodes AS n "
    "ON n.variant_id = e.variant_id AND n.id = e.parent "
    "WHERE e.variant_id = :v AND n.id >= :a AND n.id < :b AND n.expanded_in <= :k "
    "ORDER BY e.parent, e.move_order"
)


@dataclass(frozen=True)
class GraphAt:
    """A variant's graph as one commit left it (see :func:`graph_at`)."""

    graph: Graph
    expanded_in: list[int | None]
    """Per node, the commit that expanded it (``None``: not expanded by then)."""
    ids: list[int]
    """Per node of :attr:`graph`, its stored node id."""


def commit_ranges(commit: CommitRecord, tiers: Sequence[TierStep]) -> list[tuple[int, int]] | None:
    """The node ids of *commit*'s graph as ranges ``[a, b)``: ``[0, nodes)`` without
    tiers, else those of the tiers it had discovered; ``None`` if one of those tiers has
    no ids yet (a tiered solve still discovering)."""
    if not tiers:
        return [(0, commit.nodes)]
    found = [t for t in tiers if t.discovered_in <= commit.seq]
    if any(t.first_id is None for t in found):
        return None
    return sorted((t.first_id, t.first_id + t.nodes) for t in found if t.first_id is not None)


def graph_at(
    session: Reader,
    variant_id: int,
    commit: CommitRecord,
    ranges: Sequence[tuple[int, int]] | None = None,
) -> GraphAt:
    """The variant's graph as *commit* left it: its nodes (ids in *ranges*, default
    ``[0, commit.nodes)``), which of them were expanded (and by which commit), their
    edges, and the terminal nodes' values (final); every other bound is open.

    :raises DatabaseError: if the stored rows do not make a graph (damaged, or a tier's
        positions not written yet).
    """
    spans = [(0, commit.nodes)] if ranges is None else list(ranges)
    nodes = _nodes_in(session, variant_id, commit, spans)
    ids = [r.id for r in nodes]
    expanded = np.array(
        [r.expanded_in is not None and r.expanded_in <= commit.seq for r in nodes], dtype=bool
    )
    graph = Graph()
    graph.append_keys([decode_key(r.key) for r in nodes])
    graph.append_nodes(len(nodes), _node_columns(nodes, expanded))
    _add_edges(graph, session, variant_id, commit, spans, ids)
    by = [int(r.expanded_in) if e else None for r, e in zip(nodes, expanded.tolist(), strict=True)]
    return GraphAt(graph, by, ids)


def _nodes_in(
    session: Reader, variant_id: int, commit: CommitRecord, spans: Sequence[tuple[int, int]]
) -> list[Any]:
    """The node rows of ids in *spans*, every one of them.

    :raises DatabaseError: if some are missing."""
    nodes = [
        r for a, b in spans for r in session.execute(_RANGE, {"v": variant_id, "a": a, "b": b})
    ]
    if [r.id for r in nodes] != [i for a, b in spans for i in range(a, b)]:
        raise DatabaseError(
            f"commit {commit.seq}'s nodes are not all stored: the graph is damaged, or a "
            "tier's positions are not written yet"
        )
    return nodes


def _add_edges(
    graph: Graph,
    session: Reader,
    variant_id: int,
    commit: CommitRecord,
    spans: Sequence[tuple[int, int]],
    ids: Sequence[int],
) -> None:
    """Add to *graph* (whose nodes are those of *ids*) the edges from them that *commit*
    had stored.

    :raises DatabaseError: if an edge leads to a node outside *ids*."""
    edges = [
        e
        for a, b in spans
        for e in session.execute(_EDGES, {"v": variant_id, "a": a, "b": b, "k": commit.seq})
    ]
    index = {node_id: n for n, node_id in enumerate(ids)}
    if any(e.child not in index for e in edges):
        raise DatabaseError(
            f"commit {commit.seq}'s edges lead past its nodes: the graph is damaged"
        )
    if edges:
        graph.append_edges(
            np.array([index[e.parent] for e in edges], dtype=np.int32),
            np.array([index[e.child] for e in edges], dtype=np.int32),
            [e.move for e in edges],
        )


def _node_columns(nodes: Sequence[Any], expanded: npt.NDArray[np.bool_]) -> dict[str, bytes]:
    """The graph columns of the node rows *nodes* (*expanded*: which of them the commit
    counts as expanded): terminal nodes' values final, every other bound open."""
    terminal = np.array([r.state == TERMINAL for r in nodes], dtype=bool)
    values = np.array(
        [decode(r.low, upper=False) if r.state == TERMINAL else 0 for r in nodes], np.int64
    )
    flags = terminal.astype(np.uint8).tobytes()
    depths = np.where(terminal, 0, DEPTH_INF).astype(np.int32).tobytes()
    return {
        "state": np.select([terminal, expanded], [TERMINAL, EXPANDED], UNEXPANDED)
        .astype(np.uint8)
        .tobytes(),
        "low": np.where(terminal, values, NEG_INF).tobytes(),
        "high": np.where(terminal, values, POS_INF).tobytes(),
        "low_final": flags,
        "high_final": flags,
        "depth_low": depths,
        "depth_high": depths,
        "dist": np.array([r.dist for r in nodes], dtype=np.int32).tobytes(),
    }


__all__ = [
    "CommitRecord",
    "GraphAt",
    "TierStep",
    "commit_ranges",
    "graph_at",
    "list_commits",
    "list_tiers",
]
