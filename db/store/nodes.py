"""What a bounded-memory run reads of its committed graph: :class:`NodeReads`, the
:class:`solver.store.NodeSource` of a SQL store (nodes that are not resident, found by
key, by id or as a node's children or parents; the page cache; evictions).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from sqlalchemy import text

from db import rows
from db.backends.base import driver
from db.backends.sqlite import keyindex
from db.backends.sqlite.backend import WAL_AUTOCHECKPOINT
from db.errors import DatabaseError
from db.store.writer import Writer
from solver.game import MoveLabel, PositionKey
from solver.graph import Graph
from solver.store import StoredNode
from solver.values import decode, decode_depth

KEY_CHUNK = 65_536
"""Stored keys read a query at a time by :meth:`NodeReads.stored_keys`."""

_NODE_FIELDS = (
    'n.id, n."key", n.low, n.high, n.low_final, n.high_final, n.depth_low, n.depth_high, '
    "n.state, n.dist"
)
"""A stored node's columns as :func:`_stored_node` reads them (table alias ``n``)."""


class NodeReads:
    """The reads of one run's committed graph (:class:`solver.store.NodeSource`), through
    :meth:`Writer.read`."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self._child_index = False

    def find_nodes(self, keys: Sequence[PositionKey]) -> list[StoredNode]:
        """The stored nodes of those of *keys* that are stored, by id
        (:class:`solver.store.NodeSource`). SQLite: one indexed query a key, since
        without ``ANALYZE`` statistics it answers ``key IN (...)`` by scanning the
        variant (see :func:`db.repository.stored_positions`); PostgreSQL: one round trip
        through the same index."""
        w = self.writer
        if not w.sqlite:
            found = w.read(
                f'SELECT {_NODE_FIELDS} FROM nodes n WHERE n.variant_id = ? AND n."key" = ANY(?)',
                (rows.key_bytes(keys),),
            )
        else:
            assert w.graph is not None and w.variant_id is not None
            nodes = w.graph.total_nodes
            if w.keys is not None and w.keys.whole and nodes > keyindex.KEY_RANGE:
                w.behind.wait()  # the batch in flight may make the index ranged
            table, where = w.key_lookup(w.variant_id, nodes)
            sql = (
                f"SELECT {_NODE_FIELDS} FROM {table} "
                f'WHERE {where} AND n.variant_id = ? AND n."key" = ?'
            )
            if w.keys is not None:
                sql += keyindex.newest_first(w.keys)
            found = [r for kb in rows.key_bytes(keys) for r in w.read(sql, (kb,))]
        return sorted((_stored_node(r) for r in found), key=lambda n: n[0])

    def stored_keys(self, count: int) -> Iterator[list[PositionKey]]:
        """The keys of stored nodes ``0 .. count - 1``, in chunks of ids
        (:class:`solver.store.NodeSource`)."""
        sql = 'SELECT "key" FROM nodes WHERE variant_id = ? AND id >= ? AND id < ?'
        self.writer.behind.wait()  # (a graph opened with its root alone: none is written yet)
        for start in range(0, count, KEY_CHUNK):
            found = self.writer.read(sql, (start, min(count, start + KEY_CHUNK)))
            yield [int.from_bytes(bytes(kb), "big") for (kb,) in found]

    def children(self, parent: int) -> list[tuple[MoveLabel, StoredNode]]:
        """Stored node *parent*'s edges in move order, each with its child's node, in one
        query (:class:`solver.store.NodeSource`)."""
        found = self.writer.read(
            f"SELECT e.move, {_NODE_FIELDS} FROM edges e LEFT JOIN nodes n "
            "ON n.variant_id = e.variant_id AND n.id = e.child "
            "WHERE e.variant_id = ? AND e.parent = ? ORDER BY e.move_order",
            (parent,),
        )
        if any(r[1] is None for r in found):
            raise DatabaseError("a stored node is missing: the graph is damaged")
        return [(r[0], _stored_node(r[1:])) for r in found]

    def parent_nodes(self, child: int) -> list[StoredNode]:
        """The stored parents of *child*, once each, by id (:class:`solver.store.NodeSource`);
        the first call makes the index this needs (``edges_by_child``, kept: see
        docs/design.md §9)."""
        w = self.writer
        if not self._child_index:
            w.behind.wait()
            w.end_reading()
            conn = w.conn
            assert conn is not None
            with w.errors(), conn.begin():
                conn.execute(
                    text("CREATE INDEX IF NOT EXISTS edges_by_child ON edges (variant_id, child)")
                )
            self._child_index = True
        found = w.read(
            f"SELECT {_NODE_FIELDS} FROM edges e JOIN nodes n "
            "ON n.variant_id = e.variant_id AND n.id = e.parent "
            "WHERE e.variant_id = ? AND e.child = ?",
            (child,),
        )
        return sorted({r[0]: _stored_node(r) for r in found}.values(), key=lambda n: n[0])

    def limit_cache(self, nbytes: int) -> None:
        """Hold SQLite's page cache of this run's connection to *nbytes* (it counts in the
        process's memory; a PostgreSQL server's does not), and let its write-ahead log
        grow as large before a checkpoint: :class:`solver.store.NodeSource`.

        An evicting run's commits dirty index pages all over a large file (each new key
        lands at a random place in ``(variant_id, key)``); a checkpoint copies a page
        once however many commits rewrote it since the last one, so a longer log copies
        fewer pages a commit (docs/performance.md, "Eviction")."""
        w = self.writer
        conn = w.conn
        if conn is None or not w.sqlite:
            return
        w.behind.wait()
        w.end_reading()
        with w.errors():
            sqlite = driver(conn)
            (page_bytes,) = sqlite.execute("PRAGMA page_size").fetchone()
            pages = max(WAL_AUTOCHECKPOINT, nbytes // page_bytes)
            if w.behind.enabled:  # a quarter for the reader's lookups (Writer.read)
                w.reader_cache = max(1024, nbytes // 4 // 1024)
                nbytes -= nbytes // 4
            sqlite.execute(f"PRAGMA cache_size = -{max(1024, nbytes // 1024)}")
            sqlite.execute(f"PRAGMA wal_autocheckpoint = {pages}")

    def swap(self, old: Graph, new: Graph) -> None:
        """Commit *new* instead of *old* from now on (:class:`solver.store.NodeSource`): an
        eviction. Unless it kept the nodes of the batch written behind resident
        (:meth:`in_flight`), reads wait for that batch (:meth:`Writer.read`)."""
        self.writer.require_open(old)
        self.writer.graph = new
        self.writer.behind.swapped()

    def in_flight(self, most: int) -> np.ndarray[Any, np.dtype[np.int64]] | None:
        """The stored ids of the nodes whose rows the batch written behind holds, while it
        is being written, if there are at most *most* (:class:`solver.store.NodeSource`)."""
        return self.writer.behind.in_flight(most)

    def load_all(self, old: Graph) -> Graph:
        """The whole committed graph in place of *old* (:class:`solver.store.NodeSource`)."""
        w = self.writer
        conn, _ = w.require_open(old)
        assert w.variant_id is not None
        w.behind.wait()
        w.end_reading()
        with w.errors(), conn.begin():
            graph = w.backend.load(conn, w.variant_id, edges=True)
        graph.settled = old.settled
        graph.after_crash = old.after_crash
        w.graph = graph
        return graph


def _stored_node(r: Sequence[Any]) -> StoredNode:
    """A row of :data:`_NODE_FIELDS` as :class:`solver.store.NodeSource` gives it."""
    values = (
        decode(r[2], upper=False),
        decode(r[3], upper=True),
        int(r[4]),
        int(r[5]),
        decode_depth(r[6]),
        decode_depth(r[7]),
    )
    return (r[0], int.from_bytes(bytes(r[1]), "big"), values, r[8], r[9])


__all__ = ["KEY_CHUNK", "NodeReads"]
