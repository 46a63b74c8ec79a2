"""The SQL store the solver writes through: :class:`SqlStore` (SQLite or PostgreSQL).

One :class:`SqlStore` serves one solve run: :meth:`~SqlStore.open` finds or creates the
variant, takes its writer lock, records a ``solve_runs`` row and loads the stored graph;
:meth:`~SqlStore.commit` writes one batch in one transaction; :meth:`~SqlStore.close`
records the outcome and releases the lock. A crash (even ``kill -9``) loses at most the
batch in flight: every batch is a single transaction, so readers and the next run see
whole batches only.

The writer lock (one writer per variant: an advisory lock on PostgreSQL, a lease row on
SQLite) is :mod:`db.lock`; every commit is *fenced* by it (:meth:`SqlStore._fence`).

Full solves
-----------
A full solve writes each node twice: when it is discovered (its key, distance and, for a
terminal position, its exact value) and once more at its last commit, with the bounds,
flags and depths of the retrograde pass. Expanding a node does not rewrite its row: its
edges record the expansion, and the loader reads a node with stored edges as expanded
(marking it changed, so the next run's first commit says so). A resumed full solve loads
the nodes and each node's number of edges only; the run that finishes the expansion loads
the edges, once, for the retrograde pass (:meth:`~solver.graph.Graph.require_edges`).
On SQLite files, a run that ends cleanly before the solve is complete leaves its graph
in a resume file for the next one, which loads that instead of the tables once it has
checked that it matches them (:mod:`db.resume`).

Settled graphs
--------------
``variants.settled`` is :attr:`~solver.graph.Graph.settled` as committed: every batch
writes it false, a run's closing pass (depths, exact finality) true, in the batch's own
transaction. A run that died between its last batch and its closing pass leaves it false,
and the next run finishes the pass before it reports the solve complete.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, select, text, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from db import resume, sqlite_load
from db.errors import DatabaseError, RulesVersionError, VariantLockedError
from db.lock import (
    LEASE_TIMEOUT,
    LOCK_WAIT,
    PG_LOCK_CLASS,
    pg_session_settings,
    take_lease,
    take_pg_lock,
)
from db.migrate import ensure_schema, require_head
from db.models import NODE_COLUMNS, NODE_UPDATE_COLUMNS, Node, SolveRun, Variant, utcnow
from db.session import is_negagraph_engine, safe_url, translate_errors
from solver.errors import SolveError
from solver.game import Game, params_text
from solver.games import source_of
from solver.graph import TERMINAL, Graph
from solver.store import RUN_STATUSES, Progress, RunOptions
from solver.values import (
    bounds_to_json,
    depth_from_json,
    depth_to_json,
    depths_to_json,
    high_from_json,
    low_from_json,
    to_json,
)

log = logging.getLogger(__name__)

CRASH_ENV = "NEGAGRAPH_TEST_CRASH_AFTER"
"""Tests only: ``commit:N`` kills the writing process (SIGKILL) right after its N-th
commit, ``close`` right after it records the run's end, so that tests can stop a solve at
any step of its closing sequence."""

WAL_AUTOCHECKPOINT = 16_384
"""Pages of write-ahead log (4 KiB each) after which the SQLite writer checkpoints."""

PG_UPDATE_COPY_MIN = 2_000
"""Changed nodes per batch from which PostgreSQL updates go through COPY + UPDATE FROM."""

LOAD_BATCH = 65_536
"""Rows fetched at a time when loading a graph."""

_NODE_COLUMNS = ", ".join(f'"{c}"' if c == "key" else c for c in NODE_COLUMNS)
_EDGE_COLUMNS = "variant_id, parent, move_order, child, move"
_UPDATE_COLUMNS = ", ".join(("id", *NODE_UPDATE_COLUMNS))
_SQLITE_UPDATE = (
    "UPDATE nodes SET "
    + ", ".join(f"{c} = ?{i}" for i, c in enumerate(NODE_UPDATE_COLUMNS, start=2))
    + " WHERE variant_id = {vid} AND id = ?1"
)
"""SQLite's keyed node update (parameters: the id, then :data:`NODE_UPDATE_COLUMNS`; the
variant id is formatted in)."""
_PG_UPDATE = (
    "UPDATE nodes SET "
    + ", ".join(f"{c} = %s" for c in NODE_UPDATE_COLUMNS)
    + " WHERE variant_id = %s AND id = %s"
)
_PG_UPDATE_FROM = (
    "UPDATE nodes AS n SET "
    + ", ".join(f"{c} = u.{c}" for c in NODE_UPDATE_COLUMNS)
    + " FROM {table} AS u WHERE n.variant_id = %s AND n.id = u.id"
)
_PG_UPDATES = "negagraph_node_updates"
_PG_SKIP_CHECKS = "SET LOCAL session_replication_role = replica"
"""No foreign-key triggers for the rest of the transaction (see ``check_foreign_keys``)."""


class SqlStore:
    """A :class:`~solver.store.Store` in a SQL database (see the module docs for locking).

    >>> from db.session import make_engine
    >>> store = SqlStore(make_engine("sqlite:///solved.db"))  # doctest: +SKIP
    >>> solve(get_game("tic-tac-toe"), full=True, store=store)  # doctest: +SKIP

    :param engine: an engine from :func:`db.session.make_engine`: at the schema head, or
        empty (the schema is then created, as ``negagraph solve`` does).
    :param lease_timeout: seconds without a heartbeat after which a SQLite lease taken on
        another host counts as abandoned.
    :param lock_wait: PostgreSQL only: how long to wait for the server to free the
        advisory lock of a writer that died on this host (it notices within moments).
    :param check_foreign_keys: enforce the foreign keys on the writer's own connection
        too. Off by default: the store only writes nodes of its own variant and edges
        from nodes it has written in the same or an earlier batch, and the checks cost
        about a third of the insert speed on SQLite, more than a third of a full solve's
        time on PostgreSQL. (Every other connection enforces them.) PostgreSQL skips
        them for the writer's batches through ``SET LOCAL session_replication_role =
        replica``, which takes a superuser or, from PostgreSQL 15, a role granted ``SET ON
        PARAMETER session_replication_role``; without that right the checks run.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        lease_timeout: float = LEASE_TIMEOUT,
        lock_wait: float = LOCK_WAIT,
        check_foreign_keys: bool = False,
    ) -> None:
        self.engine = engine
        self.lease_timeout = lease_timeout
        self.lock_wait = lock_wait
        self.check_foreign_keys = check_foreign_keys
        self.variant_id: int | None = None
        """The open variant's id (``None`` before :meth:`open`)."""
        self.run_id: int | None = None
        """The current run's ``solve_runs.id`` (``None`` when no run is open)."""
        self._conn: Connection | None = None
        self._graph: Graph | None = None
        self._game: Game | None = None
        self._pg_locked = False
        self._pg_unchecked = False
        """PostgreSQL: the writer's batches skip the foreign-key triggers."""
        self._postgres = engine.dialect.name == "postgresql"
        self._resume_path: Path | None = None
        self._resume_full = False
        self._settled = True
        """``variants.settled`` as this run last read or wrote it."""
        self._commits = 0
        self._crash_after = os.environ.get(CRASH_ENV)

    def __repr__(self) -> str:
        return f"<SqlStore {self.engine.url!r} variant={self.variant_id} run={self.run_id}>"

    # -- the Store protocol -----------------------------------------------------------

    def open(self, game: Game, run: RunOptions) -> Graph:
        """Take *game*'s variant for writing, record the run and load the stored graph.

        An empty database (a new SQLite file, say) first gets the schema, as with
        ``negagraph solve``.

        :raises SchemaError: if the database is not at the schema head.
        :raises RulesVersionError: if the variant is stored under another rules version.
        :raises VariantLockedError: if another live writer holds the variant.
        :raises DatabaseError: if the database cannot be used.
        """
        if self._conn is not None:
            raise SolveError(f"{self!r} is already open (one run per store)")
        if not is_negagraph_engine(self.engine):
            raise DatabaseError("SqlStore needs an engine made by db.session.make_engine")
        ensure_schema(self.engine)
        with self._errors():
            conn = self.engine.connect()
        self._conn = conn
        try:
            with self._errors():
                if not self._postgres:
                    conn.execution_options(sqlite_begin="IMMEDIATE")
                    self._sqlite_pragmas(conn, writing=True)
                variant_id = self._find_or_create_variant(conn, game)
                self._take_lock(conn, variant_id, game, run)
                with conn.begin():
                    graph = self._resumed(conn, variant_id, run)
                    if graph is None:
                        graph = _load(conn, variant_id, edges=not run.full)
                    graph.settled = self._settled = _settled(conn, variant_id)
                    graph.after_crash = self._previous_died(conn, variant_id)
                if graph.deferred_edges:
                    graph.edge_loader = self._reload_edges
                if self._postgres:
                    self._pg_prepare(conn)
        except BaseException:
            self._release(failed=True)
            raise
        self._graph = graph
        self._game = game
        log.info(
            "opened %s %s (variant %d, run %d): %d nodes, %d edges",
            game.name,
            params_text(game.params),
            variant_id,
            self.run_id,
            graph.num_nodes,
            graph.total_edges,
        )
        return graph

    def _resumed(self, conn: Connection, variant_id: int, run: RunOptions) -> Graph | None:
        """The run's graph from the variant's resume file (see :mod:`db.resume`), if
        there is one that matches the database; any resume file is removed."""
        self._resume_path = path = (
            None if self._postgres else resume.resume_path(self.engine, variant_id)
        )
        self._resume_full = run.full
        if path is None:
            return None
        kept = resume.take(path)
        if kept is None:
            return None
        meta, graph = kept
        assert self.run_id is not None
        problem = resume.mismatch(conn, variant_id, self.run_id, meta, graph)
        if problem is None and not run.full and (meta.get("full") or graph.deferred_edges):
            # Rows of nodes a full run expanded still say unexpanded; a partial run
            # rewrites them, and only the database says which they are.
            problem = "it was written by a full run, and this one is partial"
        if problem is not None:
            log.info("not resuming from %s: %s", path, problem)
            return None
        graph.mark_committed()
        log.info("resuming from %s (written by run %d)", path, meta["run_id"])
        return graph

    def _keep_for_resume(self, graph: Graph, progress: Progress) -> None:
        """At a clean end of a run that stopped short (a budget, a stop request), with
        everything committed, write the graph to the variant's resume file (best effort:
        a failure only costs the next run time)."""
        path = self._resume_path
        conn = self._conn
        if (
            path is None
            or conn is None
            or progress.status not in ("budget", "stopped")
            or graph.committed_nodes != graph.num_nodes
            or graph.committed_edges != graph.num_edges
            or graph.dirty
            or graph.all_dirty
        ):
            return
        assert self.run_id is not None and self.variant_id is not None
        try:
            with self._errors(), conn.begin():
                marks = resume.run_marks(conn, self.run_id)
        except DatabaseError as exc:
            log.warning("no resume file: %s", exc)
            return
        t0 = time.perf_counter()
        meta = {"variant_id": self.variant_id, "full": self._resume_full, **marks}
        if resume.write(path, graph, meta):
            log.info("wrote %s in %.1f s", path, time.perf_counter() - t0)

    def _previous_died(self, conn: Connection, variant_id: int) -> bool:
        """Whether the variant's run before this one died (still ``running`` with a dead
        writer, or ``failed``: a lease taken over is marked failed)."""
        status = conn.execute(
            select(SolveRun.status)
            .where(SolveRun.variant_id == variant_id, SolveRun.id != self.run_id)
            .order_by(SolveRun.id.desc())
            .limit(1)
        ).scalar()
        return status in ("running", "failed")

    def _reload_edges(self, graph: Graph) -> None:
        """:attr:`Graph.edge_loader` of a full solve's graph (see :func:`_load`)."""
        conn, _ = self._require_open(graph)
        assert self.variant_id is not None
        with self._errors(), conn.begin():
            _reload_edges(conn, self.variant_id, graph)

    def commit(self, graph: Graph, progress: Progress) -> None:
        """Write ``graph.pending()`` and *progress* in one transaction, then mark the graph
        committed.

        :raises VariantLockedError: if this run's lease was taken over by another writer.
        :raises DatabaseError: if the database refuses the batch (nothing of it is kept).
        """
        conn, game = self._require_open(graph)
        new_nodes, new_edges, dirty = graph.pending()
        vid = self.variant_id
        assert vid is not None
        try:
            with self._errors(), conn.begin():
                self._fence(conn, progress, final=False)
                if graph.settled != self._settled:
                    conn.execute(
                        update(Variant).where(Variant.id == vid).values(settled=graph.settled)
                    )
                cursor = _driver(conn).cursor()
                try:
                    if self._postgres:
                        self._pg_write(cursor, graph, game, vid, new_nodes, new_edges, dirty)
                    else:
                        self._sqlite_write(cursor, graph, game, vid, new_nodes, new_edges, dirty)
                finally:
                    cursor.close()
        except DatabaseError as exc:
            if _interrupted(exc):  # Ctrl-C, then the rollback failed: it is still Ctrl-C
                raise KeyboardInterrupt from exc
            raise
        graph.mark_committed()
        self._settled = graph.settled
        self._commits += 1
        self._crash_point(f"commit:{self._commits}")

    def close(self, progress: Progress) -> None:
        """Record the run's final status and release the writer lock (idempotent).

        The run row keeps the figures of the run's last commit when the graph holds work
        that was never committed (a failure or Ctrl-C in mid-batch): the record says what
        is stored, not what was in memory."""
        conn = self._conn
        if conn is None:
            return
        handling = sys.exc_info()[1] is not None  # closing after an error or Ctrl-C
        graph = self._graph
        stored = graph is None or not (
            graph.committed_nodes != graph.num_nodes
            or graph.committed_edges != graph.num_edges
            or graph.dirty
            or graph.all_dirty
        )
        try:
            try:
                with self._errors(), conn.begin():
                    self._fence(conn, progress, final=True, figures=stored)
                self._crash_point("close")
            except VariantLockedError:
                raise
            except DatabaseError as exc:
                # The run's connection is unusable (e.g. Ctrl-C cut a PostgreSQL COPY
                # short: psycopg then refuses every other command): record apart.
                log.info("recording run %s through a new connection: %s", self.run_id, exc)
                status = progress.status
                if status == "running":
                    status = "stopped"
                elif status not in RUN_STATUSES:
                    status = "failed"
                self._record_apart(status, None if handling else exc)
                return
            if self._graph is not None:
                self._keep_for_resume(self._graph, progress)
        except VariantLockedError as exc:
            log.warning("%s", exc)
        finally:
            self._release(failed=False)

    def _record_apart(self, status: str, error: DatabaseError | None) -> None:
        """Record the run's end through a new connection: drop the run's own first, which
        ends its session (the server rolls its transaction back and frees its lock),
        then set the status, keeping the figures of the last commit. If that fails too,
        *error* is raised (``None``: another exception is already on its way out)."""
        conn = self._conn
        assert conn is not None
        conn.invalidate()
        self._pg_locked = False  # held by the session just ended
        try:
            with self._errors(), self.engine.connect() as fresh, fresh.begin():
                if self._postgres:  # the old session's row lock goes when it ends
                    fresh.exec_driver_sql("SET LOCAL lock_timeout = '60s'")
                fresh.execute(
                    update(SolveRun)
                    .where(SolveRun.id == self.run_id, SolveRun.status == "running")
                    .values(status=status, finished_at=utcnow())
                )
        except Exception as exc:  # the next writer will take the run over as failed
            log.warning("could not record the end of run %s: %s", self.run_id, exc)
            if error is not None:
                raise error from exc

    # -- open: variant, lock, load ----------------------------------------------------

    def _find_or_create_variant(self, conn: Connection, game: Game) -> int:
        params = params_text(game.params)
        query = select(Variant.id, Variant.rules_version).where(
            Variant.game == game.name, Variant.params == params
        )
        with conn.begin():
            row = conn.execute(query).first()
            if row is None:
                insert = pg_insert if self._postgres else sqlite_insert
                conn.execute(
                    insert(Variant)
                    .values(
                        game=game.name,
                        params=params,
                        params_json=json.dumps(dict(game.params), sort_keys=True),
                        rules_version=game.version,
                        game_source=source_of(game),
                        created_at=utcnow(),
                        settled=True,
                    )
                    .on_conflict_do_nothing(index_elements=["game", "params"])
                )
                row = conn.execute(query).one()
        variant_id, stored = row
        if stored != game.version:
            raise RulesVersionError.for_variant(game, stored, safe_url(self.engine))
        self.variant_id = variant_id
        return int(variant_id)

    def _take_lock(self, conn: Connection, variant_id: int, game: Game, run: RunOptions) -> None:
        if self._postgres:
            pg_session_settings(conn)
            take_pg_lock(conn, variant_id, game, self.lock_wait)
            self._pg_locked = True
        self.run_id = take_lease(
            conn, variant_id, game, run, advisory=self._postgres, lease_timeout=self.lease_timeout
        )

    # -- commit -----------------------------------------------------------------------

    def _fence(
        self, conn: Connection, progress: Progress, *, final: bool, figures: bool = True
    ) -> None:
        """Update the run row, proving that this run still holds the variant (without
        *figures*: its status only, keeping the figures of its last commit)."""
        now = utcnow()
        values: dict[str, Any] = (
            {}
            if not figures
            else {
                "heartbeat_at": now,
                "expansions": progress.expansions,
                "nodes_added": progress.nodes_added,
                "edges_added": progress.edges_added,
                "nodes": progress.nodes,
                "edges": progress.edges,
                "frontier": progress.frontier,
                "root_low": to_json(progress.root_low),
                "root_high": to_json(progress.root_high),
                "root_low_final": bool(progress.root_low_final),
                "root_high_final": bool(progress.root_high_final),
                "seconds": float(progress.seconds),
            }
        )
        if final:
            status = progress.status
            if status == "running":
                status = "stopped"
            elif status not in RUN_STATUSES:
                log.warning("unknown run status %r recorded as failed", status)
                status = "failed"
            values.update(status=status, finished_at=now)
        result = conn.execute(
            update(SolveRun)
            .where(SolveRun.id == self.run_id, SolveRun.status == "running")
            .values(**values)
        )
        if result.rowcount != 1:
            raise VariantLockedError(
                f"run {self.run_id} lost its lock on the variant (another writer took it "
                "over, judging this run dead); this run's uncommitted work is discarded"
            )

    def _sqlite_write(
        self,
        cursor: Any,
        graph: Graph,
        game: Game,
        vid: int,
        new_nodes: range,
        new_edges: range,
        dirty: Sequence[int],
    ) -> None:
        if new_nodes:
            cursor.executemany(
                f"INSERT INTO nodes ({_NODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _node_rows(graph, game, vid, new_nodes),
            )
        if new_edges:
            cursor.executemany(
                f"INSERT INTO edges ({_EDGE_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
                _edge_rows(graph, vid, new_edges),
            )
        if dirty:
            cursor.executemany(
                _SQLITE_UPDATE.format(vid=int(vid)),
                _update_rows(graph, dirty),
            )

    def _pg_prepare(self, conn: Connection) -> None:
        # A per-connection scratch table for batched node updates, emptied by each commit.
        with conn.begin():
            columns = ", ".join(
                f"{c} {Node.__table__.c[c].type.compile(dialect=conn.dialect)}"
                for c in ("id", *NODE_UPDATE_COLUMNS)
            )
            conn.exec_driver_sql(
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {_PG_UPDATES} ({columns}) "
                "ON COMMIT DELETE ROWS"
            )
        self._pg_unchecked = False
        if self.check_foreign_keys:
            return
        try:  # may this role skip the foreign-key triggers? (SET LOCAL: this transaction)
            with conn.begin():
                conn.exec_driver_sql(_PG_SKIP_CHECKS)
        except sa_exc.DBAPIError as exc:
            log.info(
                "foreign keys stay checked on the writer's connection (%s)",
                str(exc.orig).strip().splitlines()[0],
            )
            return
        self._pg_unchecked = True

    def _pg_write(
        self,
        cursor: Any,
        graph: Graph,
        game: Game,
        vid: int,
        new_nodes: range,
        new_edges: range,
        dirty: Sequence[int],
    ) -> None:
        if self._pg_unchecked:
            cursor.execute(_PG_SKIP_CHECKS)
        if new_nodes:
            with cursor.copy(f"COPY nodes ({_NODE_COLUMNS}) FROM STDIN") as copy:
                for columns in _node_columns(graph, game, vid, new_nodes):
                    copy.write(_copy_text(columns))
        if new_edges:
            with cursor.copy(f"COPY edges ({_EDGE_COLUMNS}) FROM STDIN") as copy:
                for columns in _edge_columns(graph, vid, new_edges):
                    copy.write(_copy_text(columns))
        if dirty and len(dirty) <= PG_UPDATE_COPY_MIN:
            # A few rows: keyed updates (psycopg pipelines executemany).
            cursor.executemany(
                _PG_UPDATE,
                [
                    (lo, hi, dl, dh, st, lf == 1, hf == 1, vid, i)
                    for i, lo, hi, dl, dh, st, lf, hf in _update_rows(graph, dirty)
                ],
            )
        elif dirty:
            # Many rows: one set-based UPDATE from a copied scratch table. ANALYZE gives
            # the planner its size, so it joins by index or by hash as fits.
            with cursor.copy(f"COPY {_PG_UPDATES} ({_UPDATE_COLUMNS}) FROM STDIN") as copy:
                for row in _update_rows(graph, dirty):
                    copy.write_row(row)
            cursor.execute(f"ANALYZE {_PG_UPDATES}")
            cursor.execute(
                _PG_UPDATE_FROM.format(table=_PG_UPDATES),
                (vid,),
            )

    def _sqlite_pragmas(self, conn: Connection, *, writing: bool) -> None:
        """Writer-only SQLite settings, set outside any transaction (pragmas like
        ``foreign_keys`` are ignored inside one) and undone before the connection goes
        back to the pool."""
        driver = _driver(conn)
        if not self.check_foreign_keys:
            driver.execute(f"PRAGMA foreign_keys = {'OFF' if writing else 'ON'}")
        # Checkpoint less often: a batch rewrites many of the same index pages.
        driver.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT if writing else 1000}")

    def _sqlite_checkpoint(self, conn: Connection) -> None:
        """Copy the write-ahead log into the database file and truncate it (up to
        :data:`WAL_AUTOCHECKPOINT` pages), so that a finished solve leaves one file that
        holds everything. Readers in mid-read are waited for (the busy timeout); one that
        outlasts it leaves the log for the next writer or reader to checkpoint."""
        busy, log_pages, done = _driver(conn).execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            log.info(
                "write-ahead log not truncated (%d of %d pages copied): readers were still reading",
                done,
                log_pages,
            )

    # -- plumbing ---------------------------------------------------------------------

    def _require_open(self, graph: Graph) -> tuple[Connection, Game]:
        if self._conn is None or self._game is None:
            raise SolveError(f"{self!r} is not open")
        if graph is not self._graph:
            raise SolveError("commit() got a graph that this store's open() did not return")
        return self._conn, self._game

    def _release(self, *, failed: bool) -> None:
        """Give back the lock and the connection; on a failed open, close the run row
        (as ``stopped`` if Ctrl-C interrupted the open: called while handling it)."""
        conn = self._conn
        if conn is None:
            return
        status = "stopped" if isinstance(sys.exc_info()[1], KeyboardInterrupt) else "failed"
        try:
            if conn.invalidated:  # dropped by close(): nothing more to do through it
                return
            if failed and self.run_id is not None:
                try:
                    if conn.in_transaction():
                        conn.rollback()
                    with conn.begin():
                        conn.execute(
                            update(SolveRun)
                            .where(SolveRun.id == self.run_id, SolveRun.status == "running")
                            .values(status=status, finished_at=utcnow())
                        )
                except Exception as exc:  # e.g. Ctrl-C cut a command short: record apart
                    log.info("recording run %s through a new connection: %s", self.run_id, exc)
                    self._record_apart(status, None)
                    return
            if self._pg_locked:
                try:
                    if conn.in_transaction():
                        conn.rollback()
                    conn.execute(
                        text("SELECT pg_advisory_unlock(:c, :v)"),
                        {"c": PG_LOCK_CLASS, "v": self.variant_id},
                    )
                    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {_PG_UPDATES}")
                    conn.commit()
                except Exception:
                    # Never hand a connection that may still hold the lock back to the pool.
                    log.exception("could not release the advisory lock; dropping the connection")
                    conn.invalidate()
            if not self._postgres:
                try:
                    if conn.in_transaction():
                        conn.rollback()
                    self._sqlite_pragmas(conn, writing=False)
                    self._sqlite_checkpoint(conn)
                except Exception:
                    log.exception("could not reset the writer's connection; dropping it")
                    conn.invalidate()
        finally:
            self._pg_locked = False
            self._conn = None
            self._graph = None
            self._game = None
            self.run_id = None
            conn.close()

    def _where(self) -> str:
        return safe_url(self.engine)

    def _crash_point(self, step: str) -> None:
        """Die like ``kill -9`` here if the tests asked for it (see :data:`CRASH_ENV`)."""
        if self._crash_after == step:
            log.warning("%s=%s: killing this process", CRASH_ENV, step)
            os.kill(os.getpid(), signal.SIGKILL)

    def _errors(self) -> _DriverErrors:
        return _DriverErrors(self)


class _DriverErrors:
    """Turns driver and connection errors into :class:`DatabaseError`; ours pass through."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if exc is None or isinstance(exc, SolveError | DatabaseError):
            return
        dbapi = self.store.engine.dialect.loaded_dbapi
        if isinstance(exc, sa_exc.DBAPIError):
            reason = str(exc.orig).strip() if exc.orig is not None else str(exc)
        elif isinstance(exc, dbapi.Error):
            reason = str(exc).strip()
        else:
            return
        raise DatabaseError(f"database {self.store._where()}: {reason}") from exc


def load_graph(engine: Engine, game: Game) -> Graph:
    """A read-only snapshot of *game*'s stored graph (empty if the variant is not stored),
    without taking the writer lock: the latest committed batch, as a new run would see it.

    :raises RulesVersionError: if the variant is stored under another rules version.
    :raises SchemaError: if the database is not at the schema head.
    :raises DatabaseError: if the database cannot be used.
    """
    require_head(engine)
    params = params_text(game.params)
    with translate_errors(engine), engine.connect() as conn, conn.begin():
        row = conn.execute(
            select(Variant.id, Variant.rules_version).where(
                Variant.game == game.name, Variant.params == params
            )
        ).first()
        if row is None:
            return Graph()
        if row.rules_version != game.version:
            raise RulesVersionError.for_variant(game, row.rules_version, safe_url(engine))
        graph = _load(conn, row.id)
        graph.settled = _settled(conn, row.id)
        return graph


_NODE_SQL = (
    'SELECT id, "key", low, high, low_final, high_final, depth_low, depth_high, state, '
    "dist FROM nodes WHERE variant_id = ? ORDER BY id"
)
_EDGE_SQL = (
    "SELECT parent, move_order, child, move FROM edges "
    "WHERE variant_id = ? ORDER BY parent, move_order"
)
_EDGE_COUNT_SQL = (
    "SELECT parent, count(*) FROM edges WHERE variant_id = ? GROUP BY parent ORDER BY parent"
)


def _load(conn: Connection, variant_id: int, *, edges: bool = True) -> Graph:
    """Load variant *variant_id*'s graph (call in a transaction: one snapshot).

    With ``edges=False`` only each node's number of stored edges is read (which is all a
    full solve's expansion needs); the edges themselves are left for
    :func:`_reload_edges`, through :meth:`Graph.require_edges`.

    SQLite reads whole columns at a time (:mod:`db.sqlite_load`), falling back to the
    row loaders below for what that cannot vouch for (so a damaged graph raises their
    errors); PostgreSQL streams rows through a server-side cursor.
    """
    driver = _driver(conn) if conn.dialect.name == "sqlite" else None
    graph = sqlite_load.load_nodes(driver, variant_id) if driver is not None else None
    if graph is None:
        graph = Graph()
        _stream(conn, _NODE_SQL, variant_id, graph, _load_nodes)
    if edges:
        _read_edges(conn, variant_id, graph)
    elif driver is None or not sqlite_load.load_edge_counts(driver, variant_id, graph):
        _stream(conn, _EDGE_COUNT_SQL, variant_id, graph, _load_edge_counts)
    graph.mark_committed()
    # A full run (edges deferred) rewrites every row at its end anyway.
    graph.expand_by_edges(touch=edges)
    return graph


def _settled(conn: Connection, variant_id: int) -> bool:
    """``variants.settled`` of variant *variant_id* (see the module docs)."""
    return bool(conn.execute(select(Variant.settled).where(Variant.id == variant_id)).scalar_one())


def _reload_edges(conn: Connection, variant_id: int, graph: Graph) -> None:
    """Replace *graph*'s edge columns with every stored edge of the variant."""
    graph.deferred_edges = 0
    _read_edges(conn, variant_id, graph)
    graph.committed_edges = graph.num_edges


def _read_edges(conn: Connection, variant_id: int, graph: Graph) -> None:
    """Set *graph*'s edge columns to every stored edge of the variant."""
    graph.clear_edges()
    if conn.dialect.name == "sqlite" and sqlite_load.load_edges(_driver(conn), variant_id, graph):
        return
    graph.clear_edges()
    _stream(conn, _EDGE_SQL, variant_id, graph, _load_edges)


def _stream(
    conn: Connection,
    sql: str,
    variant_id: int,
    graph: Graph,
    load: Callable[[Graph, Iterable[list[tuple[Any, ...]]]], None],
) -> None:
    """Run *sql* for the variant and hand its rows to *load* in chunks."""
    postgres = conn.dialect.name == "postgresql"
    # PostgreSQL: a server-side cursor, so millions of rows are never all in memory.
    driver = _driver(conn)
    cursor = driver.cursor("negagraph_load") if postgres else driver.cursor()
    try:
        cursor.execute(sql.replace("?", "%s") if postgres else sql, (variant_id,))
        load(graph, _chunks(cursor))
    finally:
        cursor.close()


# -- row conversion (hot paths: plain loops over the graph's arrays) ----------------------


ROW_CHUNK = 65_536
"""Rows built at a time when writing (whole columns are sliced, converted and zipped)."""


def _chunks_of(ids: range) -> Iterator[tuple[int, int]]:
    for start in range(ids.start, ids.stop, ROW_CHUNK):
        yield start, min(start + ROW_CHUNK, ids.stop)


def _value_columns(graph: Graph, rows: slice | npt.NDArray[np.int64]) -> tuple[list[Any], ...]:
    """Nodes *rows* (a slice of ids, or ascending ids): low, high, depth_low, depth_high,
    state, low_final, high_final, as lists with NULLs for the infinities."""

    def column(values: Any, dtype: type[np.generic]) -> list[Any]:
        return np.frombuffer(values, dtype=dtype)[rows].tolist()  # type: ignore[no-any-return]

    return (
        bounds_to_json(column(graph.low, np.int64)),
        bounds_to_json(column(graph.high, np.int64)),
        depths_to_json(column(graph.depth_low, np.int32)),
        depths_to_json(column(graph.depth_high, np.int32)),
        column(graph.state, np.uint8),
        column(graph.low_final, np.uint8),
        column(graph.high_final, np.uint8),
    )


def _node_columns(graph: Graph, game: Game, vid: int, ids: range) -> Iterator[list[Any]]:
    """Per chunk of nodes *ids*, their rows' columns (lists), in ``_NODE_COLUMNS`` order."""
    format_many = game.format_many
    for start, stop in _chunks_of(ids):
        keys = graph.keys[start:stop]
        lo, hi, dl, dh, st, lf, hf = _value_columns(graph, slice(start, stop))
        yield [
            [vid] * (stop - start),
            range(start, stop),
            lo,
            hi,
            dl,
            dh,
            graph.dist[start:stop],
            st,
            lf,
            hf,
            [k.to_bytes((k.bit_length() + 7) >> 3 or 1, "big") for k in keys],
            format_many(keys),
        ]


def _edge_columns(graph: Graph, vid: int, ids: range) -> Iterator[list[Any]]:
    """Per chunk of edges *ids*, their rows' columns (lists), in ``_EDGE_COLUMNS`` order."""
    for start, stop in _chunks_of(ids):
        parents = np.frombuffer(graph.edge_parent, dtype=np.int32)[start:stop]
        first = np.frombuffer(graph.first_edge, dtype=np.int32)[parents]
        orders = (np.arange(start, stop) - first).tolist()
        del parents, first
        yield [
            [vid] * (stop - start),
            graph.edge_parent[start:stop],
            orders,
            graph.edge_child[start:stop],
            graph.edge_move[start:stop],
        ]


def _node_rows(graph: Graph, game: Game, vid: int, ids: range) -> Iterator[tuple[Any, ...]]:
    for columns in _node_columns(graph, game, vid, ids):
        yield from zip(*columns, strict=True)


def _edge_rows(graph: Graph, vid: int, ids: range) -> Iterator[tuple[Any, ...]]:
    for columns in _edge_columns(graph, vid, ids):
        yield from zip(*columns, strict=True)


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_field_texts(column: Sequence[Any]) -> Iterable[str]:
    """A column's values in PostgreSQL's COPY text format (NULL as ``\\N``)."""
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


def _copy_text(columns: list[Any]) -> str:
    """Rows (given as columns) in PostgreSQL's COPY text format: whole columns are
    converted at once, which is several times faster than ``write_row`` per row."""
    lines = map("\t".join, zip(*map(_copy_field_texts, columns), strict=True))
    return "\n".join(lines) + "\n"


def _update_rows(graph: Graph, ids: Sequence[int]) -> Iterator[tuple[Any, ...]]:
    """(id, low, high, depth_low, depth_high, state, low_final, high_final) of *ids*
    (ascending): column slices for a contiguous range, else node by node.

    A range (every node marked changed: a full solve's end) leaves out terminal nodes:
    they are written with their exact, final values when found and never change."""
    if isinstance(ids, range) and ids.step == 1:
        for start, stop in _chunks_of(ids):
            inner = np.flatnonzero(
                np.frombuffer(graph.state[start:stop], dtype=np.uint8) != TERMINAL
            )
            if inner.size == stop - start:
                yield from zip(
                    range(start, stop), *_value_columns(graph, slice(start, stop)), strict=True
                )
            elif inner.size:
                at = inner + start
                yield from zip(at.tolist(), *_value_columns(graph, at), strict=True)
        return
    low = graph.low
    high = graph.high
    depth_low = graph.depth_low
    depth_high = graph.depth_high
    state = graph.state
    low_final = graph.low_final
    high_final = graph.high_final
    for i in ids:
        yield (
            i,
            to_json(low[i]),
            to_json(high[i]),
            depth_to_json(depth_low[i]),
            depth_to_json(depth_high[i]),
            state[i],
            low_final[i],
            high_final[i],
        )


_col0, _col1, _col2, _col3, _col4, _col5, _col6, _col7, _col8, _col9 = (
    itemgetter(i) for i in range(10)
)
_MINUS_ONES = array("i", [-1] * LOAD_BATCH)


def _chunks(cursor: Any) -> Iterator[list[tuple[Any, ...]]]:
    while True:
        rows = cursor.fetchmany(LOAD_BATCH)
        if not rows:
            return
        yield rows


def _load_nodes(graph: Graph, chunks: Iterable[list[tuple[Any, ...]]]) -> None:
    """Append nodes sorted by id (which must run 0, 1, ...) to the graph's arrays, as
    :meth:`Graph.add_node` would, with the stored bounds, flags, depths and state. The
    key index and reverse edges are left to be built when first needed."""
    graph.drop_derived()
    for rows in chunks:
        start = graph.num_nodes
        count = len(rows)
        if rows[0][0] != start or rows[-1][0] != start + count - 1:
            raise DatabaseError(
                f"stored node ids are not contiguous near {start}: the graph is damaged"
            )
        graph.append_keys([int.from_bytes(kb, "big") for kb in map(_col1, rows)])
        graph.append_nodes(
            count,
            {
                "low": map(low_from_json, map(_col2, rows)),
                "high": map(high_from_json, map(_col3, rows)),
                "low_final": map(_col4, rows),
                "high_final": map(_col5, rows),
                "depth_low": map(depth_from_json, map(_col6, rows)),
                "depth_high": map(depth_from_json, map(_col7, rows)),
                "state": map(_col8, rows),
                "dist": map(_col9, rows),
            },
        )


def _load_edges(graph: Graph, chunks: Iterable[list[tuple[Any, ...]]]) -> None:
    """Append edges sorted by (parent, move order), as :meth:`Graph.add_edge_raw` would.

    Checks, cheaply, that they lead between stored nodes and that each parent's move
    orders are 0, 1, ...: the primary key makes them distinct and the query sorts them,
    so non-negative orders summing to ``k(k-1)/2`` per ``k``-child parent are exactly
    ``0..k-1``.
    """
    n = graph.num_nodes
    order_sum = 0
    for rows in chunks:
        parents = list(map(_col0, rows))
        children = list(map(_col2, rows))
        if min(map(_col1, rows)) < 0 or min(children) < 0 or max(children) >= n or parents[-1] >= n:
            raise DatabaseError("stored edges lead to missing nodes: the graph is damaged")
        order_sum += sum(map(_col1, rows))
        graph.append_edges(parents, children, map(_col3, rows))
    if order_sum != sum(k * (k - 1) // 2 for k in graph.child_count):
        raise DatabaseError("stored move orders are not 0, 1, ... per node: the graph is damaged")


def _load_edge_counts(graph: Graph, chunks: Iterable[list[tuple[Any, ...]]]) -> None:
    """Record each parent's number of stored edges (the edges stay deferred)."""
    n = graph.num_nodes
    counts = np.zeros(n, dtype=np.int32)
    for rows in chunks:
        if rows[-1][0] >= n or rows[0][0] < 0:
            raise DatabaseError("stored edges lead from missing nodes: the graph is damaged")
        parents, ks = zip(*rows, strict=True)
        counts[np.array(parents, dtype=np.int64)] = ks
    graph.set_edge_counts(counts)


def _driver(conn: Connection) -> Any:
    """The DB-API connection under *conn* (sqlite3 or psycopg)."""
    return conn.connection.driver_connection


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


__all__ = ["SqlStore", "load_graph"]
