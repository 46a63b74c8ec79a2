"""The writer's side of one solve run: :class:`Writer`, what every part of the store
shares about the run (its connection, variant, run row, commit numbers, key index and
the thread that writes behind), and the one commit of the variant that every write goes
through (:meth:`Writer.batch`).

Every commit is *fenced* by the writer lock (:mod:`db.lock`): it first updates the run's
own row ``WHERE status = 'running'`` (:meth:`Writer.fence`), so a writer that lost its
lock writes nothing. Reads of the committed graph (a bounded-memory run's, a tiered
solve's) go through :meth:`Writer.read`.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, Update, bindparam, insert, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection

from db.backends.base import Backend, driver
from db.backends.sqlite import keyindex
from db.backends.sqlite.keyindex import KeyIndex
from db.errors import DatabaseError, VariantLockedError
from db.models import Commit, SolveRun, utcnow
from db.session import safe_url
from db.store.behind import WriteBehind
from solver.errors import SolveError
from solver.game import Game
from solver.graph import Graph
from solver.store import RUN_STATUSES, Progress
from solver.values import encode

log = logging.getLogger(__name__)

CRASH_ENV = "NEGAGRAPH_TEST_CRASH_AFTER"
"""Tests only: ``commit:N`` kills the writing process (SIGKILL) right after its N-th
commit, ``shard:N`` after the N-th shard it wrote itself, ``close`` right after it
records the run's end, so that tests can stop a solve at any step of its closing
sequence."""


Write = Callable[[Connection, Any, int], None]
"""What a commit writes besides its run row and ``commits`` row (:meth:`Writer.batch`),
given the connection, the driver's cursor and the commit's number."""


class Writer:
    """The writer's connection of one run and what every part of the store shares about
    it (see the module docs).

    :param engine: the store's engine.
    :param backend: its backend (:func:`db.backends.backend_for`).
    """

    def __init__(self, engine: Engine, backend: Backend) -> None:
        self.engine = engine
        self.backend = backend
        """What differs between SQLite and PostgreSQL (:mod:`db.backends`)."""
        self.marker = "?" if engine.dialect.name == "sqlite" else "%s"
        """The driver's parameter marker (``?`` on SQLite)."""
        self.conn: Connection | None = None
        self.variant_id: int | None = None
        """The open variant's id (``None`` before the store opens)."""
        self.run_id: int | None = None
        """The current run's ``solve_runs.id`` (``None`` when no run is open)."""
        self.game: Game | None = None
        self.graph: Graph | None = None
        """The graph the run commits (the open graph, or what an eviction swapped in)."""
        self.tiered = False
        """Whether the open run is a tiered full solve (its graph is empty: tiers hold it)."""
        self.compact = False
        """The run writes the compact layout (:mod:`db.compact`)."""
        self.settled = True
        """``variants.settled`` as this run last read or wrote it."""
        self.seq = 0
        """The variant's latest ``commits.seq`` (its batches are numbered across runs)."""
        self.keys: KeyIndex | None = None
        """The variant's key index on SQLite (:mod:`db.backends.sqlite.keyindex`); ``None``
        on PostgreSQL."""
        self.resume_path: Path | None = None
        """Where a cleanly stopped run leaves its graph (:mod:`db.backends.sqlite.resume`)."""
        self.resume_full = False
        self.behind = WriteBehind()
        self.commits = 0
        self.shards = 0
        """Shards this run wrote itself (the crash points ``shard:N``)."""
        self._crash_after = os.environ.get(CRASH_ENV)
        self._reading: Any = None
        """The read transaction of :meth:`read` on the writer's connection."""
        self._cursor: Any = None
        self._reader: Any = None
        """The connection that reads while batches are written behind (:meth:`read`)."""
        self._reader_cursor: Any = None
        self.reader_cache = 0
        """KiB of page cache for the reader on SQLite (0: SQLite's default)."""

    def __repr__(self) -> str:  # the store's, which errors name
        return f"<SqlStore {self.engine.url!r} variant={self.variant_id} run={self.run_id}>"

    @property
    def sqlite(self) -> bool:
        return self.marker == "?"

    # -- plumbing ---------------------------------------------------------------------

    def errors(self) -> DriverErrors:
        """A context that turns driver errors into :class:`DatabaseError`."""
        return DriverErrors(self.engine)

    def crash_point(self, step: str) -> None:
        """Die like ``kill -9`` here if the tests asked for it (see :data:`CRASH_ENV`)."""
        if self._crash_after == step:
            log.warning("%s=%s: killing this process", CRASH_ENV, step)
            os.kill(os.getpid(), signal.SIGKILL)

    def after_batch(self) -> None:
        self.commits += 1
        self.crash_point(f"commit:{self.commits}")

    def after_shard(self) -> None:
        self.shards += 1
        self.crash_point(f"shard:{self.shards}")

    def require_open(self, graph: Graph) -> tuple[Connection, Game]:
        """The connection and game of the open run, whose graph *graph* must be."""
        if self.conn is None or self.game is None:
            raise SolveError(f"{self!r} is not open")
        if graph is not self.graph:
            raise SolveError("commit() got a graph that this store's open() did not return")
        return self.conn, self.game

    def connection(self) -> Connection:
        """The writer's connection, once the batch written behind is done."""
        if self.conn is None or self.variant_id is None:
            raise SolveError(f"{self!r} is not open")
        self.behind.wait()
        return self.conn

    def key_lookup(self, vid: int, nodes: int) -> tuple[str, str]:
        """The table and condition that find variant *vid*'s keys (ids below *nodes*):
        :func:`db.backends.sqlite.keyindex.lookup` on SQLite, the constraint's index on
        PostgreSQL."""
        if self.keys is None:
            return "nodes AS n", f"n.variant_id = {int(vid)}"
        return keyindex.lookup(vid, self.keys, nodes)

    # -- a commit ---------------------------------------------------------------------

    def batch(self, progress: Progress, nodes: int, edges: int, write: Write) -> None:
        """One commit of the variant: the run's fence and figures, the ``commits`` row
        (the graph then has *nodes* and *edges*), and what *write* writes through the
        driver's cursor (given the connection, the cursor and the commit's number), in
        one transaction."""
        conn = self.conn
        assert conn is not None
        self.end_reading()
        seq = self.seq + 1
        keys = self.keys
        try:
            with self.errors(), conn.begin():
                self.fence(conn, progress, final=False)
                self._record_commit(conn, seq, nodes, edges, progress)
                cursor = driver(conn).cursor()
                try:
                    if keys is not None:
                        assert self.variant_id is not None
                        keys = keyindex.grow(cursor, self.variant_id, keys, nodes)
                    write(conn, cursor, seq)
                finally:
                    cursor.close()
        except DatabaseError as exc:
            if _interrupted(exc):  # Ctrl-C, then the rollback failed: it is still Ctrl-C
                raise KeyboardInterrupt from exc
            raise
        self.seq = seq
        self.keys = keys

    def fence(
        self, conn: Connection, progress: Progress, *, final: bool, figures: bool = True
    ) -> None:
        """Update the run row, proving that this run still holds the variant (without
        *figures*: its status only, keeping the figures of its last commit)."""
        now = utcnow()
        values: dict[str, Any] = _run_figures(progress, now) if figures else {}
        if final:
            values.update(status=final_status(progress.status), finished_at=now)
        result = conn.execute(
            _run_update(tuple(values)),
            {"run_id": self.run_id, **{f"v_{k}": v for k, v in values.items()}},
        )
        if result.rowcount != 1:
            raise VariantLockedError(
                f"run {self.run_id} lost its lock on the variant (another writer took it "
                "over, judging this run dead); this run's uncommitted work is discarded"
            )

    def _record_commit(
        self, conn: Connection, seq: int, nodes: int, edges: int, progress: Progress
    ) -> None:
        """The ``commits`` row of batch *seq* (what a replay needs, see :class:`Commit`)."""
        conn.execute(
            _COMMIT_INSERT,  # one statement, compiled once (a commit's fixed cost)
            {
                "variant_id": self.variant_id,
                "seq": seq,
                "run_id": self.run_id,
                "committed_at": utcnow(),
                "nodes": nodes,
                "edges": edges,
                "expansions": progress.expansions,
                "root_low": encode(progress.root_low),
                "root_high": encode(progress.root_high),
                "root_low_final": bool(progress.root_low_final),
                "root_high_final": bool(progress.root_high_final),
            },
        )

    # -- reads of the committed graph -------------------------------------------------

    def read(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        """Rows of *sql* (``?`` markers; ``:v`` none: the variant id comes first) through a
        driver's cursor (SQLAlchemy would cost more than the query).

        Where batches are written behind (:mod:`db.store.behind`), a connection of its
        own reads, each query in a transaction of its own (so that no reader holds back
        SQLite's checkpoints), while the batch's thread writes. What it reads is what the
        cache asks for: nodes that are not resident, and the edges of such nodes. Those
        rows are in the database whether or not the batch in flight has landed: a node
        leaves RAM only by an eviction, so the batch in flight holds rows of nodes that
        are resident, unless the graph was evicted since it was copied
        (:meth:`WriteBehind.swapped`); then the read waits for it. Otherwise reads go
        through the writer's connection, in a read transaction kept open until the next
        batch."""
        assert self.conn is not None and self.variant_id is not None
        if not self.sqlite:
            sql = sql.replace("?", self.marker)
        if self.behind.enabled:
            return self._read_apart(sql, params)
        conn = self.conn
        try:
            with self.errors():
                if self._reading is None:
                    self._reading = conn.begin()
                    self._cursor = driver(conn).cursor()
                self._cursor.execute(sql, (self.variant_id, *params))
                return list(self._cursor.fetchall())
        except BaseException:
            self.drop_reading()  # so that the run's end can record itself
            raise

    def _read_apart(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        """:meth:`read` through the reader's own connection."""
        if self.behind.evicted:
            self.behind.wait()
        try:
            with self.errors():
                cursor = self.reading_cursor()
                cursor.execute(sql, (self.variant_id, *params))
                return list(cursor.fetchall())
        except BaseException:
            self.close_reader(failed=True)  # so that the run's end can record itself
            raise

    def reading_cursor(self) -> Any:
        """The cursor of the reader of :meth:`read`: a connection of the engine's own,
        out of its pool, each statement its own transaction."""
        if self._reader_cursor is None:
            raw = self.engine.raw_connection()
            try:
                raw.detach()  # closed, not pooled, at the run's end (its settings are ours)
                dbapi: Any = raw.dbapi_connection
                if self.sqlite:  # isolation_level None already (db.session)
                    if self.reader_cache:
                        dbapi.execute(f"PRAGMA cache_size = -{self.reader_cache}")
                else:
                    dbapi.autocommit = True
                cursor = dbapi.cursor()
            except BaseException:
                raw.close()
                raise
            self._reader, self._reader_cursor = raw, cursor
        return self._reader_cursor

    def close_reader(self, *, failed: bool = False) -> None:
        """Close the reader of :meth:`read` at the run's end, or drop it after a *failed*
        read (without the rollback a lost connection would refuse)."""
        reader, self._reader, self._reader_cursor = self._reader, None, None
        if reader is not None:
            with suppress(Exception):
                if failed:
                    reader.invalidate()
                else:
                    reader.close()

    def drop_reading(self) -> None:
        """Roll back the read transaction of :meth:`read` after it failed (a lost
        connection, Ctrl-C): nothing of it matters, and the connection is free again."""
        reading, cursor = self._reading, self._cursor
        self._reading = self._cursor = None
        # (on a lost connection these may fail: the transaction is gone with it)
        with suppress(Exception):
            if cursor is not None:
                cursor.close()
        with suppress(Exception):
            if reading is not None:
                reading.rollback()

    def end_reading(self) -> None:
        """Close the read transaction of :meth:`read`, if open (before a write)."""
        reading, self._reading = self._reading, None
        if reading is not None:
            self._cursor.close()
            self._cursor = None
            with self.errors():
                reading.commit()

    def forget_reading(self) -> None:
        """Forget the read transaction of :meth:`read` (its connection is given back, or
        unusable: rolled back with it)."""
        self._reading = None
        self._cursor = None


class DriverErrors:
    """Turns driver and connection errors into :class:`DatabaseError`; ours pass through."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if exc is None or isinstance(exc, SolveError | DatabaseError):
            return
        interrupt = _interrupt_behind(exc)
        if interrupt is not None:
            # Ctrl-C cut a command short (a PostgreSQL COPY, say) and the clean-up that
            # followed failed on the connection it left busy ("another command is already
            # in progress"): what happened is the user's stop, not a database error.
            raise interrupt
        dbapi = self.engine.dialect.loaded_dbapi
        if isinstance(exc, sa_exc.DBAPIError):
            reason = str(exc.orig).strip() if exc.orig is not None else str(exc)
        elif isinstance(exc, dbapi.Error):
            reason = str(exc).strip()
        else:
            return
        # one line: libpq's messages run over several ("server closed the connection
        # unexpectedly\n\tThis probably means ...")
        reason = " ".join(line.strip() for line in reason.splitlines() if line.strip())
        raise DatabaseError(f"database {safe_url(self.engine)}: {reason}") from exc


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C that *exc* was raised while handling, if any (its ``__context__``
    chain)."""
    seen = {id(exc)}
    context = exc.__context__
    while context is not None and id(context) not in seen:
        if isinstance(context, KeyboardInterrupt):
            return context
        seen.add(id(context))
        context = context.__context__
    return None


def _interrupted(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt is among the exceptions that led to *exc*."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, KeyboardInterrupt):
            return True
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return False


def _run_figures(progress: Progress, now: Any) -> dict[str, Any]:
    """The run row's figures from *progress* (and its heartbeat, *now*)."""
    tiered = bool(progress.tiers_total)
    return {
        "heartbeat_at": now,
        "expansions": progress.expansions,
        "nodes_added": progress.nodes_added,
        "edges_added": progress.edges_added,
        "nodes": progress.nodes,
        "edges": progress.edges,
        "frontier": progress.frontier,
        "root_low": encode(progress.root_low),
        "root_high": encode(progress.root_high),
        "root_low_final": bool(progress.root_low_final),
        "root_high_final": bool(progress.root_high_final),
        "seconds": float(progress.seconds),
        "rss_bytes": progress.rss or None,
        "eta_seconds": progress.eta,
        "memory_limit": progress.memory_limit,
        "resident_nodes": progress.resident_nodes or None,
        "tiers_done": progress.tiers_done if tiered else None,
        "tiers_total": progress.tiers_total or None,
        "units_done": progress.units_done if tiered else None,
        "units_total": progress.units_total if tiered else None,
        "workers": progress.workers or None,
    }


def final_status(status: str) -> str:
    """The status a run that ends with progress *status* is recorded with: a run still
    ``running`` when it ends was stopped; an unknown status is recorded as ``failed``."""
    if status == "running":
        return "stopped"
    if status not in RUN_STATUSES:
        log.warning("unknown run status %r recorded as failed", status)
        return "failed"
    return status


_COMMIT_INSERT = insert(Commit)
"""A ``commits`` row (executed with its values as parameters: compiled once)."""


@cache
def _run_update(columns: tuple[str, ...]) -> Update:
    """The update of a running run's row that sets *columns* (from parameters ``v_`` +
    the column's name, and ``run_id``): one statement per set of columns, compiled once,
    since a commit's fixed cost was mostly SQLAlchemy compiling inlined values."""
    return (
        update(SolveRun)
        .where(SolveRun.id == bindparam("run_id"), SolveRun.status == "running")
        .values({c: bindparam(f"v_{c}") for c in columns})
    )


__all__ = ["CRASH_ENV", "DriverErrors", "Write", "Writer", "final_status"]
