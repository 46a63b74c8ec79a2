"""The SQLite backend of :class:`db.store.SqlStore`.

The writer lock is the lease row alone (:mod:`db.lock`); ``BEGIN IMMEDIATE`` makes each
batch take SQLite's write lock up front. The writer skips the foreign-key checks and
checkpoints the write-ahead log less often while it writes, and truncates the log when
it is done, so that a finished solve leaves one file. Graphs are read a column range at a
time (:mod:`db.backends.sqlite.load`), with the row loaders of :mod:`db.rows` as fallback, and a
cleanly stopped run keeps its graph in a resume file (:mod:`db.backends.sqlite.resume`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection
from sqlalchemy.sql import Executable

from db import rows
from db.backends.base import Backend, Staged, driver
from db.backends.sqlite import bulk, load, resume, wal
from db.models import NODE_COLUMNS, NODE_UPDATE_COLUMNS
from solver.graph import EXPANDED, Graph

log = logging.getLogger(__name__)

WAL_AUTOCHECKPOINT = 16_384
"""Pages of write-ahead log (4 KiB each) after which the SQLite writer checkpoints."""

_FAIL = "OR FAIL"
"""The conflict clause of every statement that writes many rows of ``nodes`` or
``edges``. Under SQLite's default (``ABORT``) a statement that writes many rows and may
break a constraint keeps a *statement journal*: the prior content of every page it
changes, spilled to a temporary file past 64 KiB, so that it can undo itself alone.
``FAIL`` stops at the failing row and leaves the undoing to the transaction, which a
failed batch rolls back whole anyway (:meth:`db.store.writer.Writer.batch`), so SQLite
journals nothing. A partial solve's node inserts touch key-index pages all over the
file, 256 rows a statement (:data:`db.backends.sqlite.bulk.ROWS_PER_INSERT`): the
journal wrote 2.7 million pages to ``/var/tmp`` for a 180 MB database
(docs/performance.md, "No statement journal")."""

_NODE_INSERT = (
    f"INSERT {_FAIL} INTO nodes ({rows.NODE_SQL_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(NODE_COLUMNS))})"
)
_EDGE_INSERT = f"INSERT {_FAIL} INTO edges ({rows.EDGE_SQL_COLUMNS}) VALUES (?, ?, ?, ?, ?)"
_UPDATE = (
    "UPDATE nodes SET "
    + ", ".join(f"{c} = ?{i}" for i, c in enumerate(NODE_UPDATE_COLUMNS, start=2))
    + f", expanded_in = CASE WHEN ?{NODE_UPDATE_COLUMNS.index('state') + 2} = {EXPANDED} "
    + "THEN coalesce(expanded_in, {seq}) ELSE NULL END"
    + " WHERE variant_id = {vid} AND id = ?1"
)
"""The keyed node update (parameters: the id, then :data:`NODE_UPDATE_COLUMNS`; the
variant id and the commit's number are formatted in)."""

_STAGED = ("negagraph_stage_nodes", "negagraph_stage_edges", "negagraph_stage_updates")
"""The connection's scratch tables of a shard's rows (:meth:`SqliteBackend.stage`)."""
_STAGE_TABLES = (
    f"CREATE TEMP TABLE IF NOT EXISTS {_STAGED[0]} AS "
    f"SELECT {rows.NODE_SQL_COLUMNS} FROM main.nodes WHERE 0",
    f"CREATE TEMP TABLE IF NOT EXISTS {_STAGED[1]} AS "
    f"SELECT {rows.EDGE_SQL_COLUMNS} FROM main.edges WHERE 0",
    f"CREATE TEMP TABLE IF NOT EXISTS {_STAGED[2]} ({rows.UPDATE_SQL_COLUMNS})",
)
_STAGE_NODE = f"INSERT INTO temp.{_STAGED[0]} VALUES ({', '.join('?' * len(NODE_COLUMNS))})"
_STAGE_EDGE = f"INSERT INTO temp.{_STAGED[1]} VALUES (?, ?, ?, ?, ?)"
_STAGE_UPDATE = (
    f"INSERT INTO temp.{_STAGED[2]} VALUES ({', '.join('?' * (1 + len(NODE_UPDATE_COLUMNS)))})"
)
_UPDATE_STAGED = (
    f"UPDATE {_FAIL} nodes SET "
    + ", ".join(f"{c} = u.{c}" for c in NODE_UPDATE_COLUMNS)
    + f", expanded_in = CASE WHEN u.state = {EXPANDED} "
    + "THEN coalesce(nodes.expanded_in, {seq}) ELSE NULL END"
    + f" FROM temp.{_STAGED[2]} AS u"
    + " WHERE nodes.variant_id = {vid} AND nodes.id = u.id"
)
"""The staged node updates, set-based (the variant id and commit's number formatted in)."""


class SqliteBackend(Backend):
    """A SQLite file (see the module docs)."""

    def setup(self, conn: Connection) -> None:
        conn.execution_options(sqlite_begin="IMMEDIATE")
        self._pragmas(conn, writing=True)

    def insert_new(self, table: Any, unique: list[str], values: dict[str, Any]) -> Executable:
        return sqlite_insert(table).values(**values).on_conflict_do_nothing(index_elements=unique)

    def resume_path(self, variant_id: int) -> Path | None:
        return resume.resume_path(self.engine, variant_id)

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
        for columns in node_columns:
            bulk.executemany_columns(cursor, _NODE_INSERT, columns)
        for columns in edge_columns:
            bulk.executemany_columns(cursor, _EDGE_INSERT, columns)
        if update_count:
            bulk.executemany_rows(cursor, _UPDATE.format(vid=int(vid), seq=int(seq)), updates)

    def write_table(
        self, cursor: Any, table: str, columns: Sequence[str], values: Iterable[tuple[Any, ...]]
    ) -> None:
        marks = ", ".join("?" * len(columns))
        cursor.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", values)

    def write_columns(
        self,
        cursor: Any,
        table: str,
        columns: Sequence[str],
        values: Sequence[Any],
        specs: Sequence[rows.Spec],
    ) -> None:
        marks = ", ".join("?" * len(columns))
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
        bulk.executemany_columns(cursor, sql, values, specs)

    def stage(
        self,
        conn: Connection,
        node_columns: Iterable[list[Any]],
        edge_columns: Iterable[list[Any]],
        updates: Sequence[tuple[Any, ...]],
    ) -> Staged:
        """For a worker (:attr:`shared_writes`), or where the rows cannot be bound in C
        (:mod:`db.backends.sqlite.bulk`): copy a shard's rows into this connection's scratch
        tables (SQLite's ``temp`` database, private to the connection) in a transaction
        of their own, which takes no lock on the database file: the rows are bound here,
        while other processes write, and :meth:`write_staged` copies them in with SQL
        alone, holding the write lock about half as long (``docs/performance.md``,
        "Workers"). Otherwise the rows are left to :meth:`write_rows`, bound in C into
        the tables themselves inside the transaction."""
        if not self.shared_writes and bulk.enabled():
            # No other writer waits: binding in C into the tables themselves is faster.
            return super().stage(conn, node_columns, edge_columns, updates)
        sqlite = driver(conn)
        cursor = sqlite.cursor()
        try:
            cursor.execute("BEGIN")
            try:
                for sql in _STAGE_TABLES:
                    cursor.execute(sql)
                for table in _STAGED:
                    cursor.execute(f"DELETE FROM temp.{table}")
                for columns in node_columns:
                    bulk.executemany_columns(cursor, _STAGE_NODE, columns)
                for columns in edge_columns:
                    bulk.executemany_columns(cursor, _STAGE_EDGE, columns)
                if updates:
                    bulk.executemany_rows(cursor, _STAGE_UPDATE, updates)
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
        finally:
            cursor.close()
        return Staged([], [], [], in_database=True)

    def write_staged(self, cursor: Any, vid: int, seq: int, staged: Staged) -> None:
        if not staged.in_database:
            super().write_staged(cursor, vid, seq, staged)
            return
        cursor.execute(
            f"INSERT {_FAIL} INTO nodes ({rows.NODE_SQL_COLUMNS}) SELECT * FROM temp.{_STAGED[0]}"
        )
        cursor.execute(
            f"INSERT {_FAIL} INTO edges ({rows.EDGE_SQL_COLUMNS}) SELECT * FROM temp.{_STAGED[1]}"
        )
        cursor.execute(_UPDATE_STAGED.format(vid=int(vid), seq=int(seq)))
        for table in _STAGED:  # part of the transaction: kept if it rolls back
            cursor.execute(f"DELETE FROM temp.{table}")

    def release(self, conn: Connection, variant_id: int | None) -> None:
        if conn.in_transaction():
            conn.rollback()
        self._pragmas(conn, writing=False)
        # the log into the file, and truncated: a finished solve leaves one file
        wal.checkpoint(driver(conn), "TRUNCATE")

    def compacted(self, conn: Connection) -> None:
        """Rebuild the file (``VACUUM``) when free pages are over a quarter of it: a
        compact solve's discovery writes every position once more, into
        ``discovered_positions``, and deletes it tier by tier, which leaves SQLite's
        pages free but the file as large. The chess table of KQvKR left 42% of its file
        free (30.1 B a position, 17.5 in live pages); connect-four, whose positions are
        smaller, about 11% (not rebuilt: the copy costs more time than it saves room).
        Skipped, with a note in the log, where the disk has no room for the copy."""
        wal.vacuum(driver(conn), share=0.25)

    def tier_written(self, conn: Connection) -> None:
        """Copy the write-ahead log into the database file now, not at
        :data:`WAL_AUTOCHECKPOINT` pages: a tiered solve rewrites many pages from tier to
        tier (connect-four 4 x 4: a log of 22 MiB for a file of 15 MiB, all of it still in
        the log at the end), and the closing checkpoint needs room for the file to grow
        to its size beside the log. A passive checkpoint: readers and writers (workers)
        are not waited for; what they hold back is copied next time (and one the disk has
        no room for is not begun, :mod:`db.backends.sqlite.wal`)."""
        wal.checkpoint(driver(conn), "PASSIVE")

    def _pragmas(self, conn: Connection, *, writing: bool) -> None:
        """Writer-only settings, set outside any transaction (pragmas like
        ``foreign_keys`` are ignored inside one) and undone before the connection goes
        back to the pool."""
        sqlite = driver(conn)
        if not self.check_foreign_keys:
            sqlite.execute(f"PRAGMA foreign_keys = {'OFF' if writing else 'ON'}")
        # Checkpoint less often: a batch rewrites many of the same index pages.
        sqlite.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT if writing else 1000}")

    # -- reading: whole column ranges at a time (db.backends.sqlite.load) -------------------------

    def fetch_arrays(
        self,
        conn: Connection,
        sql: str,
        params: tuple[Any, ...],
        columns: Sequence[tuple[type[np.generic], int, bool]],
        capacity: int,
    ) -> list[npt.NDArray[Any]] | None:
        return bulk.fetch_arrays(driver(conn), sql, params, columns, capacity)

    def fast_nodes(self, conn: Connection, variant_id: int) -> Graph | None:
        return load.load_nodes(driver(conn), variant_id)

    def fast_edge_counts(self, conn: Connection, variant_id: int, graph: Graph) -> bool:
        return load.load_edge_counts(driver(conn), variant_id, graph)

    def fast_edges(self, conn: Connection, variant_id: int, graph: Graph) -> bool:
        return load.load_edges(driver(conn), variant_id, graph)


__all__ = ["WAL_AUTOCHECKPOINT", "SqliteBackend"]
