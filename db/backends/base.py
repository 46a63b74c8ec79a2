"""What :class:`db.store.SqlStore` asks of a database engine: the :class:`Backend` base,
with what both engines share (:func:`db.backends.backend_for` picks one).

The store holds the protocol (open, commit, close, the run row and its fencing); a backend
holds everything that differs between SQLite and PostgreSQL: how the writer's connection
is set up and given back, the writer lock, how a batch is written and how a stored graph
is read. The two are :class:`db.backends.sqlite.backend.SqliteBackend` and
:class:`db.backends.postgres.PostgresBackend`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine
from sqlalchemy.engine import Connection
from sqlalchemy.sql import Executable

from db import rows
from db.lock import take_lease
from solver.game import Game
from solver.graph import Graph
from solver.store import RunOptions

RowLoader = Callable[[Graph, Iterable[list[tuple[Any, ...]]]], None]
"""A row loader of :mod:`db.rows` (graph, chunks of rows)."""


@dataclass
class Staged:
    """A shard's rows made ready before its transaction (:meth:`Backend.stage`)."""

    node_columns: Iterable[list[Any]]
    edge_columns: Iterable[list[Any]]
    """Chunks of rows as columns; an iterator is consumed by :meth:`Backend.write_staged`
    (once: a shard is written once)."""
    updates: Sequence[tuple[Any, ...]]
    in_database: bool = False
    """Whether they wait in the connection's own scratch tables (SQLite)."""


class Backend:
    """One engine's ways of writing and reading a variant's graph (one per store: it
    keeps the writer connection's state, such as a held advisory lock).

    :param engine: the store's engine.
    :param check_foreign_keys: as for :class:`~db.store.SqlStore`.
    """

    advisory: ClassVar[bool] = False
    """Whether the writer lock is the server's advisory lock (else the lease row alone)."""

    def __init__(self, engine: Engine, *, check_foreign_keys: bool) -> None:
        self.engine = engine
        self.check_foreign_keys = check_foreign_keys
        self.shared_writes = False
        """Whether other processes write shards into the database at the same time (a
        worker's connection, :mod:`db.shards`): SQLite then binds a shard's rows before
        taking the write lock (:meth:`stage`)."""

    # -- the writer's connection --------------------------------------------------------

    def setup(self, conn: Connection) -> None:
        """Prepare a new writer connection, before its first transaction."""

    def insert_new(self, table: Any, unique: list[str], values: dict[str, Any]) -> Executable:
        """An ``INSERT`` of one row of *values* into *table* that does nothing if a row
        with the same *unique* columns exists (another writer's, just made)."""
        raise NotImplementedError

    def lock(
        self,
        conn: Connection,
        variant_id: int,
        game: Game,
        run: RunOptions,
        *,
        lease_timeout: float,
        lock_wait: float,
    ) -> int:
        """Take the variant's writer lock (:mod:`db.lock`) and record the run; its id.

        :raises VariantLockedError: if another live writer holds the variant.
        """
        return take_lease(
            conn, variant_id, game, run, advisory=self.advisory, lease_timeout=lease_timeout
        )

    def prepare(self, conn: Connection) -> None:
        """Set up what the writer's batches need, once the graph is loaded."""

    def stage(
        self,
        conn: Connection,
        node_columns: Iterable[list[Any]],
        edge_columns: Iterable[list[Any]],
        updates: Sequence[tuple[Any, ...]],
    ) -> Staged:
        """Get rows ready for :meth:`write_staged`, outside any transaction (a shard's
        rows, :mod:`db.shards`): here, as they are (chunks given as an iterator are made
        inside the transaction, one at a time)."""
        return Staged(node_columns, edge_columns, updates)

    def write_staged(self, cursor: Any, vid: int, seq: int, staged: Staged) -> None:
        """Write what :meth:`stage` made ready, inside the transaction (see
        :meth:`write_rows`)."""
        self.write_rows(
            cursor,
            vid,
            seq,
            staged.node_columns,
            staged.edge_columns,
            staged.updates,
            len(staged.updates),
        )

    def write_rows(
        self,
        cursor: Any,
        vid: int,
        seq: int,
        node_columns: Iterable[list[Any]],
        edge_columns: Iterable[list[Any]],
        updates: Iterable[tuple[Any, ...]],
        update_count: int,
    ) -> None:
        """What :meth:`write` does, from rows already made: chunks of node and edge rows
        as columns (:func:`db.rows.node_columns`, :func:`db.rows.edge_columns` order),
        and *update_count* node updates (:func:`db.rows.update_rows` order)."""
        raise NotImplementedError

    def write_table(
        self, cursor: Any, table: str, columns: Sequence[str], values: Iterable[tuple[Any, ...]]
    ) -> None:
        """Insert rows *values* (tuples in *columns*' order) into *table*, inside the
        batch's transaction: the few tables a batch writes besides nodes and edges (the
        chance tables)."""
        raise NotImplementedError

    def write_columns(
        self,
        cursor: Any,
        table: str,
        columns: Sequence[str],
        values: Sequence[Any],
        specs: Sequence[rows.Spec],
    ) -> None:
        """Insert rows given as *values*, one array a column of *columns*, converted as
        *specs* say (:data:`db.rows.Spec`), into *table* (a compact table,
        :mod:`db.compact`)."""
        plain = rows.plain_columns(values, specs)
        self.write_table(cursor, table, columns, zip(*plain, strict=True))

    def forget_session(self) -> None:
        """The writer connection is gone (given back or dropped), and with it what its
        session held."""

    def release(self, conn: Connection, variant_id: int | None) -> None:
        """Give the writer connection back as the pool expects it (locks freed,
        settings reset). An exception makes the store drop the connection instead."""

    def compacted(self, conn: Connection) -> None:
        """A compact solve (:mod:`db.compact`) completed through *conn*, outside any
        transaction: give back the room its discovery took and freed, where that
        matters (nothing by default)."""

    def tier_written(self, conn: Connection) -> None:
        """A tiered solve committed a tier (discovered or solved) through *conn*, which
        is outside any transaction."""

    def before_apart(self, conn: Connection) -> None:
        """Settings of a fresh connection that records a run's end apart (see
        :meth:`db.store.SqlStore.close`), inside its transaction."""

    def resume_path(self, variant_id: int) -> Path | None:
        """Where a cleanly stopped run keeps its graph for the next
        (:mod:`db.backends.sqlite.resume`), or ``None`` if this engine keeps none."""
        return None

    # -- reading a graph ----------------------------------------------------------------

    def load(self, conn: Connection, variant_id: int, *, edges: bool = True) -> Graph:
        """Variant *variant_id*'s graph (call in a transaction: one snapshot).

        With ``edges=False`` only each node's number of stored edges is read (which is
        all a full solve's expansion needs); the edges themselves are left for
        :meth:`reload_edges`, through :meth:`Graph.require_edges`.
        """
        graph = self.fast_nodes(conn, variant_id)
        if graph is None:
            graph = Graph()
            self.stream(conn, rows.NODE_SQL, variant_id, graph, rows.load_nodes)
        if edges:
            self.read_edges(conn, variant_id, graph)
        elif not self.fast_edge_counts(conn, variant_id, graph):
            self.stream(conn, rows.EDGE_COUNT_SQL, variant_id, graph, rows.load_edge_counts)
        graph.mark_committed()
        # A full run (edges deferred) rewrites every row at its end anyway.
        graph.expand_by_edges(touch=edges)
        return graph

    def reload_edges(self, conn: Connection, variant_id: int, graph: Graph) -> None:
        """Replace *graph*'s edge columns with every stored edge of the variant (a full
        solve's deferred edges, :attr:`Graph.edge_loader`)."""
        graph.deferred_edges = 0
        self.read_edges(conn, variant_id, graph)
        graph.committed_edges = graph.num_edges

    def read_edges(self, conn: Connection, variant_id: int, graph: Graph) -> None:
        """Set *graph*'s edge columns to every stored edge of the variant."""
        graph.clear_edges()
        if self.fast_edges(conn, variant_id, graph):
            return
        graph.clear_edges()
        self.stream(conn, rows.EDGE_SQL, variant_id, graph, rows.load_edges)

    def fast_nodes(self, conn: Connection, variant_id: int) -> Graph | None:
        """The nodes read by a faster path than rows, or ``None`` to read rows."""
        return None

    def fast_edge_counts(self, conn: Connection, variant_id: int, graph: Graph) -> bool:
        """Whether a faster path than rows read each node's number of edges."""
        return False

    def fast_edges(self, conn: Connection, variant_id: int, graph: Graph) -> bool:
        """Whether a faster path than rows read the edges."""
        return False

    def stream(
        self, conn: Connection, sql: str, variant_id: int, graph: Graph, load: RowLoader
    ) -> None:
        """Run *sql* (``?`` for the variant id) and hand its rows to *load* in chunks."""
        load(graph, self.fetch(conn, sql, (variant_id,)))

    def fetch_arrays(
        self,
        conn: Connection,
        sql: str,
        params: tuple[Any, ...],
        columns: Sequence[tuple[type[np.generic], int, bool]],
        capacity: int,
    ) -> list[npt.NDArray[Any]] | None:
        """The rows of *sql* as arrays read without Python objects
        (:func:`db.backends.sqlite.bulk.fetch_arrays`), or ``None`` where this backend cannot
        (then :meth:`fetch` reads them)."""
        return None

    def fetch(
        self, conn: Connection, sql: str, params: tuple[Any, ...]
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Run *sql* (``?`` for each of *params*) and yield its rows in chunks of
        :data:`db.rows.LOAD_BATCH`, never all at once."""
        cursor = driver(conn).cursor()
        try:
            cursor.execute(sql, params)
            yield from rows.fetched_chunks(cursor)
        finally:
            cursor.close()


def driver(conn: Connection) -> Any:
    """The DB-API connection under *conn* (sqlite3 or psycopg)."""
    return conn.connection.driver_connection


__all__ = ["Backend", "Staged", "driver"]
