"""Shared helpers of the database tests: a tiny game, hand-built graphs, graph snapshots,
and throw-away PostgreSQL databases on the local server."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import psycopg
import pytest
from psycopg import sql

from solver.errors import InvalidPositionError
from solver.game import GameBase, Param
from solver.graph import EXPANDED, Graph
from solver.store import Progress, RunOptions, RunStatus
from solver.values import DEPTH_INF, NEG_INF, POS_INF

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_USER = "postgres"
PG_ADMIN_DB = "test"


class TinyGame(GameBase):
    """Positions are any non-negative integers written ``p<n>``; ``n`` has the moves
    ``L`` and ``R`` to ``2n+1`` and ``2n+2`` while those are below ``size``."""

    name: ClassVar[str] = "tiny"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "a binary tree for the store tests"
    notation: ClassVar[str] = "p<number>"
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("size", int, 15, "positions in the tree", min=1),
    )

    def initial(self) -> int:
        return 0

    def children(self, key: int) -> list[tuple[str, int]]:
        size = int(self.params["size"])
        return [(m, c) for m, c in (("L", 2 * key + 1), ("R", 2 * key + 2)) if c < size]

    def terminal_value(self, key: int) -> int | None:
        return None if 2 * key + 1 < int(self.params["size"]) else key % 3 - 1

    def parse(self, text: str) -> int:
        if not text.startswith("p") or not text[1:].isdigit():
            raise InvalidPositionError(f"not a tiny position: {text!r}")
        return int(text[1:])

    def format(self, key: int) -> str:
        return f"p{key}"


class TinyGameV2(TinyGame):
    """The same game under a newer rules version."""

    version: ClassVar[int] = 2


def run_options(root: int = 0, *, full: bool = False) -> RunOptions:
    return RunOptions(root, full, None, None)


def progress_of(graph: Graph, status: RunStatus = "running", root: int = 0) -> Progress:
    """A :class:`Progress` describing *graph* (root node *root*)."""
    has_root = root < graph.num_nodes
    return Progress(
        status=status,
        expansions=sum(1 for s in graph.state if s == EXPANDED),
        nodes=graph.num_nodes,
        edges=graph.num_edges,
        nodes_added=graph.num_nodes - graph.committed_nodes,
        edges_added=graph.num_edges - graph.committed_edges,
        frontier=sum(1 for s in graph.state if s == 0),
        root_low=graph.low[root] if has_root else NEG_INF,
        root_high=graph.high[root] if has_root else POS_INF,
        root_low_final=bool(graph.low_final[root]) if has_root else False,
        root_high_final=bool(graph.high_final[root]) if has_root else False,
        seconds=1.5,
    )


def set_node(
    graph: Graph,
    nid: int,
    low: int,
    high: int,
    *,
    low_final: bool = False,
    high_final: bool = False,
    depth_low: int = DEPTH_INF,
    depth_high: int = DEPTH_INF,
) -> None:
    graph.low[nid] = low
    graph.high[nid] = high
    graph.low_final[nid] = low_final
    graph.high_final[nid] = high_final
    graph.depth_low[nid] = depth_low
    graph.depth_high[nid] = depth_high
    graph.touch(nid)


BIG_KEY = 2**200 + 12345
"""A key far wider than 64 bits."""


def build_first_batch(graph: Graph) -> None:
    """Root 0 with three children, one terminal; a huge key; infinite bounds and depths."""
    assert graph.num_nodes == 0
    root = graph.add_node(0, 0, None)
    a = graph.add_node(1, 1, None)
    b = graph.add_node(BIG_KEY, 1, -1)
    c = graph.add_node(255, 1, None)
    graph.set_children(root, [("L", a), ("R", b), ("X", c)])
    set_node(graph, root, 1, POS_INF, low_final=True, depth_low=1)
    set_node(graph, a, NEG_INF, 7)
    set_node(graph, c, -3, -3, low_final=True, high_final=True, depth_low=4, depth_high=6)


def build_second_batch(graph: Graph) -> None:
    """Expand old node 1 (a transposition back to the root, and new nodes), change old
    bounds, add an unexpanded node far from the root."""
    assert graph.committed_nodes == 4
    d = graph.add_node(256, 2, None)
    e = graph.add_node(2**64, 2, 0)
    graph.set_children(1, [("a", d), ("b", e), ("c", 0), ("d", 3)])
    graph.set_children(d, [("z", 1)])
    set_node(graph, 1, -2, 5, high_final=True, depth_high=9)
    set_node(graph, 0, 1, 2, low_final=True, high_final=True, depth_low=3, depth_high=5)
    set_node(graph, d, NEG_INF, POS_INF)
    graph.add_node(10**30, 3, None)


def _facts(graph: Graph, i: int, name: Callable[[int], Any]) -> tuple[Any, ...]:
    """Node *i*'s values, flags, depths, state, distance, children (move, child) and
    parents, each node named by *name* (its id)."""
    return (
        graph.low[i],
        graph.high[i],
        graph.low_final[i],
        graph.high_final[i],
        graph.depth_low[i],
        graph.depth_high[i],
        graph.state[i],
        graph.dist[i],
        [(graph.edge_move[e], name(graph.edge_child[e])) for e in graph.children(i)],
        sorted(name(p) for p in graph.parents(i)),
    )


def keyed_snapshot(graph: Graph) -> dict[str, Any]:
    """What a graph means whatever its numbering (:func:`snapshot` with each node named
    by its key): a tiered full solve numbers its positions tier by tier in solve order,
    an in-memory solve breadth first."""
    key = graph.keys.__getitem__
    nodes = {key(i): _facts(graph, i, key) for i in range(graph.num_nodes)}
    return {"nodes": nodes, "num_edges": graph.num_edges}


def snapshot(graph: Graph) -> dict[str, Any]:
    """Everything a graph means, node for node (edge ids aside, which only order edges)."""
    nodes = [(i, graph.keys[i], *_facts(graph, i, int)) for i in range(graph.num_nodes)]
    return {
        "nodes": nodes,
        "index": dict(graph.index),
        "num_edges": graph.num_edges,
        "attributes": sorted(vars(graph)),
        "array_types": {  # but key_order: a full run's sort order, a cache either way
            name: (type(v).__name__, getattr(v, "typecode", None))
            for name, v in vars(graph).items()
            if name != "key_order"
        },
    }


def assert_consistent(graph: Graph) -> None:
    """Per-node and per-edge arrays have the right lengths; nothing is pending."""
    n, m = graph.num_nodes, graph.num_edges
    for name in (
        "keys",
        "state",
        "low",
        "high",
        "low_final",
        "high_final",
        "depth_low",
        "depth_high",
        "dist",
        "first_edge",
        "child_count",
        "rev_head",
    ):
        assert len(getattr(graph, name)) == n, name
    for name in ("edge_parent", "edge_child", "edge_move", "rev_next"):
        assert len(getattr(graph, name)) == m, name
    assert len(graph.index) == n
    assert graph.committed_nodes == n and graph.committed_edges == m
    assert not graph.dirty
    for e in range(m):
        assert e in graph.children(graph.edge_parent[e])
        assert e in set(graph.parent_edges(graph.edge_child[e]))


# -- PostgreSQL --------------------------------------------------------------------------


def _admin() -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(
            host=PG_HOST,
            port=PG_PORT,
            user=PG_USER,
            dbname=PG_ADMIN_DB,
            autocommit=True,
            connect_timeout=10,
        )
    except psycopg.OperationalError as exc:
        # Fail, never skip: CI counts skipped PostgreSQL tests as failures.
        pytest.fail(
            f"PostgreSQL is unreachable at {PG_USER}@{PG_HOST}:{PG_PORT}/{PG_ADMIN_DB}: {exc}",
            pytrace=False,
        )


def pg_url(name: str) -> str:
    return f"postgresql+psycopg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"


@contextmanager
def pg_database(prefix: str = "negagraph_test") -> Iterator[str]:
    """A fresh, uniquely named PostgreSQL database (its URL), dropped afterwards."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    with _admin() as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield pg_url(name)
    finally:
        with _admin() as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
