"""The PostgreSQL backend of :class:`db.store.SqlStore`.

The writer lock is a session-level advisory lock beside the lease row (:mod:`db.lock`):
the server frees it the moment the writer's session ends, however it ends. Batches are
written with ``COPY`` (rows built a whole column at a time in COPY's text format); many
changed nodes are updated set-wise from a per-connection scratch table, a few by keyed
updates. Where the role may, the writer's batches skip the foreign-key triggers
(``session_replication_role = replica``, see :class:`~db.store.SqlStore`). Graphs are
read through server-side cursors, so millions of rows are never all in memory.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar

from sqlalchemy import exc as sa_exc
from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection
from sqlalchemy.sql import Executable

from db import rows
from db.backends.base import Backend, driver
from db.lock import PG_LOCK_CLASS, pg_session_settings, take_lease, take_pg_lock
from db.models import NODE_UPDATE_COLUMNS, Node
from solver.game import Game
from solver.graph import EXPANDED
from solver.store import RunOptions

log = logging.getLogger(__name__)

PG_UPDATE_COPY_MIN = 2_000
"""Changed nodes per batch from which updates go through COPY + UPDATE FROM."""

_UPDATE = (
    "UPDATE nodes SET "
    + ", ".join(f"{c} = %s" for c in NODE_UPDATE_COLUMNS)
    + ", expanded_in = CASE WHEN %s THEN coalesce(expanded_in, %s) ELSE NULL END"
    + " WHERE variant_id = %s AND id = %s"
)
_UPDATES = "negagraph_node_updates"
"""The writer connection's scratch table of changed nodes (emptied by each commit)."""
_UPDATE_FROM = (
    "UPDATE nodes AS n SET "
    + ", ".join(f"{c} = u.{c}" for c in NODE_UPDATE_COLUMNS)
    + f", expanded_in = CASE WHEN u.state = {EXPANDED} THEN coalesce(n.expanded_in, %s) "
    + "ELSE NULL END"
    + f" FROM {_UPDATES} AS u WHERE n.variant_id = %s AND n.id = u.id"
)
_SKIP_CHECKS = "SET LOCAL session_replication_role = replica"
"""No foreign-key triggers for the rest of the transaction (see ``check_foreign_keys``)."""


class PostgresBackend(Backend):
    """A PostgreSQL database (see the module docs)."""

    advisory: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.locked = False
        """The writer connection holds the variant's advisory lock."""
        self.unchecked = False
        """The writer's batches skip the foreign-key triggers."""

    def insert_new(self, table: Any, unique: list[str], values: dict[str, Any]) -> Executable:
        return pg_insert(table).values(**values).on_conflict_do_nothing(index_elements=unique)

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
        pg_session_settings(conn)
        take_pg_lock(conn, variant_id, game, lock_wait)
        self.locked = True
        return take_lease(conn, variant_id, game, run, advisory=True, lease_timeout=lease_timeout)

    def prepare(self, conn: Connection) -> None:
        with conn.begin():
            columns = ", ".join(
                f"{c} {Node.__table__.c[c].type.compile(dialect=conn.dialect)}"
                for c in ("id", *NODE_UPDATE_COLUMNS)
            )
            conn.exec_driver_sql(
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {_UPDATES} ({columns}) ON COMMIT DELETE ROWS"
            )
        self.unchecked = False
        if self.check_foreign_keys:
            return
        try:  # may this role skip the foreign-key triggers? (SET LOCAL: this transaction)
            with conn.begin():
                conn.exec_driver_sql(_SKIP_CHECKS)
        except sa_exc.DBAPIError as exc:
            log.info(
                "foreign keys stay checked on the writer's connection (%s)",
                str(exc.orig).strip().splitlines()[0],
            )
            return
        self.unchecked = True

    def write_table(
        self, cursor: Any, table: str, columns: Sequence[str], values: Iterable[tuple[Any, ...]]
    ) -> None:
        with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in values:
                copy.write_row(row)

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
        if self.unchecked:
            cursor.execute(_SKIP_CHECKS)
        for table, names, chunks in (
            ("nodes", rows.NODE_SQL_COLUMNS, node_columns),
            ("edges", rows.EDGE_SQL_COLUMNS, edge_columns),
        ):
            pieces = iter(chunks)
            first = next(pieces, None)
            if first is None:
                continue
            with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                copy.write(copy_text(rows.plain_columns(first)))
                for chunk in pieces:
                    copy.write(copy_text(rows.plain_columns(chunk)))
        if update_count and update_count <= PG_UPDATE_COPY_MIN:
            # A few rows: keyed updates (psycopg pipelines executemany).
            cursor.executemany(
                _UPDATE,
                [
                    (lo, hi, dl, dh, st, lf == 1, hf == 1, st == EXPANDED, seq, vid, i)
                    for i, lo, hi, dl, dh, st, lf, hf in updates
                ],
            )
        elif update_count:
            # Many rows: one set-based UPDATE from a copied scratch table. ANALYZE gives
            # the planner its size, so it joins by index or by hash as fits.
            with cursor.copy(f"COPY {_UPDATES} ({rows.UPDATE_SQL_COLUMNS}) FROM STDIN") as copy:
                for row in updates:
                    copy.write_row(row)
            cursor.execute(f"ANALYZE {_UPDATES}")
            cursor.execute(_UPDATE_FROM, (seq, vid))
            cursor.execute(f"DELETE FROM {_UPDATES}")  # a batch may update in parts

    def forget_session(self) -> None:
        self.locked = False

    def release(self, conn: Connection, variant_id: int | None) -> None:
        if not self.locked:
            return
        if conn.in_transaction():
            conn.rollback()
        conn.execute(
            text("SELECT pg_advisory_unlock(:c, :v)"), {"c": PG_LOCK_CLASS, "v": variant_id}
        )
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {_UPDATES}")
        conn.commit()
        self.locked = False

    def before_apart(self, conn: Connection) -> None:
        # The old session's row lock on the run goes when the server notices it ended.
        conn.exec_driver_sql("SET LOCAL lock_timeout = '60s'")

    def fetch(
        self, conn: Connection, sql: str, params: tuple[Any, ...]
    ) -> Iterator[list[tuple[Any, ...]]]:
        # A server-side cursor: millions of rows are never all in memory.
        cursor = driver(conn).cursor("negagraph_load")
        try:
            cursor.execute(sql.replace("?", "%s"), params)
            yield from rows.fetched_chunks(cursor)
        finally:
            cursor.close()


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_field_texts(column: Sequence[Any]) -> Iterable[str]:
    """A column's values in COPY's text format (NULL as ``\\N``)."""
    sample = next((v for v in column if v is not None), None)
    if isinstance(sample, bytes):
        texts: Iterable[str] = ("\\\\x" + v.hex() for v in column)  # bytea, escaped
    elif isinstance(sample, str):
        texts = (v.translate(_COPY_ESCAPES) for v in column)
    else:
        texts = map(str, column)
    if None in column:
        return ["\\N" if v is None else t for v, t in zip(column, texts, strict=True)]
    return texts


def copy_text(columns: list[Any]) -> str:
    """Rows (given as columns) in COPY's text format: whole columns are converted at
    once, which is several times faster than ``write_row`` per row."""
    lines = map("\t".join, zip(*map(_copy_field_texts, columns), strict=True))
    return "\n".join(lines) + "\n"


__all__ = ["PG_UPDATE_COPY_MIN", "PostgresBackend", "copy_text"]
