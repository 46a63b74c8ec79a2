"""The SQL store the solver writes through: :class:`SqlStore` (SQLite or PostgreSQL).

One :class:`SqlStore` serves one solve run: :meth:`~SqlStore.open` finds or creates the
variant, takes its writer lock, records a ``solve_runs`` row and loads the stored graph;
:meth:`~SqlStore.commit` writes one batch in one transaction; :meth:`~SqlStore.close`
records the outcome and releases the lock. A crash (even ``kill -9``) loses at most the
batch in flight: every batch is a single transaction, so readers and the next run see
whole batches only.

The writer lock (one writer per variant: an advisory lock on PostgreSQL, a lease row on
SQLite) is :mod:`db.lock`; every commit is *fenced* by it (:meth:`SqlStore._fence`).
What differs between the two engines (the writer's connection and lock, how a batch is
written, how a graph is read) is a backend: :mod:`db.backends.sqlite.backend`,
:mod:`db.backends.postgres`; the rows themselves are made and read by :mod:`db.rows`.

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
checked that it matches them (:mod:`db.backends.sqlite.resume`).

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
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import replace
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, Update, bindparam, delete, func, insert, select, text, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection

from db import rows, shards
from db.backends import backend_for
from db.backends.base import driver
from db.backends.sqlite import keyindex, resume
from db.backends.sqlite.backend import WAL_AUTOCHECKPOINT
from db.backends.sqlite.keyindex import KeyIndex
from db.errors import DatabaseError, RulesVersionError, VariantLockedError
from db.lock import LEASE_TIMEOUT, LOCK_WAIT
from db.migrate import ensure_schema, require_head
from db.models import Commit, DiscoveredChunk, Node, SolveRun, Tier, Variant, utcnow
from db.session import is_negagraph_engine, safe_url, translate_errors
from db.shards import SqlShardTarget
from solver.cache import StoredNode
from solver.errors import SolveError
from solver.game import Game, MoveLabel, PositionKey, params_text
from solver.games import source_of
from solver.graph import Graph
from solver.store import (
    RUN_STATUSES,
    Batch,
    NodeShard,
    Progress,
    RunOptions,
    RunStatus,
    Shard,
    TierNodes,
    TierPart,
    TierRecord,
    TierValues,
)
from solver.values import depth_from_json, high_from_json, low_from_json, to_json

log = logging.getLogger(__name__)

CRASH_ENV = "NEGAGRAPH_TEST_CRASH_AFTER"
"""Tests only: ``commit:N`` kills the writing process (SIGKILL) right after its N-th
commit, ``shard:N`` after the N-th shard it wrote itself, ``close`` right after it
records the run's end, so that tests can stop a solve at any step of its closing
sequence."""
KEY_CHUNK = 65_536
"""Stored keys read a query at a time by :meth:`SqlStore.stored_keys`."""
SWITCH_INTERVAL = 0.001
"""Seconds between the interpreter's thread switches while batches are written behind
(Python's default is 0.005): the batch's thread takes the GIL back after each chunk of
rows, and would otherwise wait that long for the solver's thread to let it go."""
WRITE_BEHIND_ENV = "NEGAGRAPH_WRITE_BEHIND"
"""Set to ``0`` to write every batch in the solving thread (see :meth:`SqlStore.commit`;
the benchmarks' baseline)."""


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
        self._tiered = False
        """Whether the open run is a tiered full solve (its graph is empty: tiers hold it)."""
        self._game: Game | None = None
        self.backend = backend_for(engine, check_foreign_keys=check_foreign_keys)
        """What differs between SQLite and PostgreSQL (:mod:`db.backends.base`)."""
        self._resume_path: Path | None = None
        self._resume_full = False
        self._settled = True
        """``variants.settled`` as this run last read or wrote it."""
        self._commits = 0
        self._shards = 0
        """Shards this run wrote itself (the crash points ``shard:N``)."""
        self._seq = 0
        """The variant's latest ``commits.seq`` (its batches are numbered across runs)."""
        self._crash_after = os.environ.get(CRASH_ENV)
        self._child_index = False
        self._keys: KeyIndex | None = None
        """The variant's key index on SQLite (:mod:`db.backends.sqlite.keyindex`); ``None`` on
        PostgreSQL."""
        self._reading: Any = None
        """The read transaction of a bounded-memory run's reads (:meth:`_read`)."""
        self._cursor: Any = None
        self._marker = "?" if engine.dialect.name == "sqlite" else "%s"
        self._behind: threading.Thread | None = None
        """The thread writing the latest batch, while the solver goes on (:meth:`commit`)."""
        self._behind_error: BaseException | None = None
        """What stopped the thread's batch, for the solver's thread to raise."""
        self._lost_batch = False
        """A batch written behind failed: the graph holds work the database does not."""
        self._write_behind = os.environ.get(WRITE_BEHIND_ENV, "1") != "0"
        self._evicted_behind = False
        """The graph was evicted while a batch was written behind: reads wait for it."""
        self._reader: Any = None
        """The connection that reads while batches are written behind (:meth:`_read`)."""
        self._reader_cursor: Any = None
        self._reader_cache = 0
        """KiB of page cache for the reader on SQLite (0: SQLite's default)."""
        self._flight: tuple[int, int, np.ndarray[Any, np.dtype[np.int64]]] | None = None
        """The stored ids the batch written behind holds: new ones from, new ones to,
        and the changed ones (:meth:`in_flight`)."""
        self._pinned_for: threading.Thread | None = None
        """The batch whose rows the latest eviction kept resident (:meth:`in_flight`)."""
        self._switch_interval: float | None = None
        """The interpreter's thread switch interval before the first batch written behind."""

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
                self.backend.setup(conn)
                variant_id = self._find_or_create_variant(conn, game)
                self._take_lock(conn, variant_id, game, run)
                with conn.begin():
                    self._tiered = run.tiered
                    self._keys = self._key_index(conn, variant_id, tiered=run.tiered)
                    if run.tiered:  # read and written a tier at a time (solver.tiered)
                        graph: Graph | None = Graph()
                    else:
                        _refuse_unfinished_tiers(conn, variant_id, game)
                        graph = self._resumed(conn, variant_id, run)
                    settled = _settled(conn, variant_id)
                    if graph is None and run.lazy_above is not None and settled:
                        graph = self._lazy(conn, variant_id, game, run)
                    if graph is None:
                        graph = self.backend.load(conn, variant_id, edges=not run.full)
                    graph.settled = self._settled = settled
                    self._seq = _latest_commit(conn, variant_id)
                    graph.after_crash = self._previous_died(conn, variant_id)
                if graph.deferred_edges:
                    graph.edge_loader = self._reload_edges
                self.backend.prepare(conn)
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

    def _key_index(self, conn: Connection, variant_id: int, *, tiered: bool) -> KeyIndex | None:
        """The variant's key index on SQLite (``None``: PostgreSQL's constraint); a tiered
        solve that starts on a variant without nodes drops it, to build it whole at its
        end (:mod:`db.backends.sqlite.keyindex`)."""
        if self._marker != "?":
            return None
        found = keyindex.read(driver(conn), variant_id)
        if tiered and not found.none and self._top_id(conn, variant_id) is None:
            found = keyindex.drop(driver(conn), variant_id)
        return found

    def _key_lookup(self, vid: int, nodes: int) -> tuple[str, str]:
        """The table and condition that find variant *vid*'s keys (ids below *nodes*):
        :func:`db.backends.sqlite.keyindex.lookup` on SQLite, the constraint's index on
        PostgreSQL."""
        if self._keys is None:
            return "nodes AS n", f"n.variant_id = {int(vid)}"
        return keyindex.lookup(vid, self._keys, nodes)

    def _top_id(self, conn: Connection, variant_id: int) -> int | None:
        top = conn.execute(select(func.max(Node.id)).where(Node.variant_id == variant_id)).scalar()
        return None if top is None else int(top)

    def _resumed(self, conn: Connection, variant_id: int, run: RunOptions) -> Graph | None:
        """The run's graph from the variant's resume file (see :mod:`db.backends.sqlite.resume`), if
        there is one that matches the database; any resume file is removed."""
        self._resume_path = path = self.backend.resume_path(variant_id)
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

    def _lazy(self, conn: Connection, variant_id: int, game: Game, run: RunOptions) -> Graph | None:
        """The variant's graph with only the root resident (a mapped graph: the rest is
        read back as the search needs it, :mod:`solver.cache`), or ``None`` if the root is
        not stored yet."""
        (root,) = rows.key_bytes([run.root])
        latest = conn.execute(
            select(Commit.nodes, Commit.edges)
            .where(Commit.variant_id == variant_id)
            .order_by(Commit.seq.desc())
            .limit(1)
        ).first()
        frontier = conn.execute(
            select(SolveRun.frontier)
            .where(SolveRun.variant_id == variant_id, SolveRun.id != self.run_id)
            .order_by(SolveRun.id.desc())
            .limit(1)
        ).scalar()
        if latest is None or frontier is None:
            return None
        table, where = self._key_lookup(variant_id, latest.nodes)
        found = conn.exec_driver_sql(
            "SELECT n.id, n.low, n.high, n.low_final, n.high_final, n.depth_low, n.depth_high, "
            f'n.state, n.dist FROM {table} WHERE {where} AND n."key" = {self._marker}',
            (root,),
        ).first()
        if found is None:
            return None
        assert run.lazy_above is not None
        if latest.nodes <= run.lazy_above:
            return None  # it fits: loaded whole, searched in C until it outgrows it
        graph = Graph()
        graph.frontier_hint = frontier
        graph.gid = array("q")
        graph.outside_nodes = latest.nodes
        graph.outside_edges = latest.edges
        graph.committed_gid = latest.nodes
        values = (
            low_from_json(found.low),
            high_from_json(found.high),
            int(found.low_final),
            int(found.high_final),
            depth_from_json(found.depth_low),
            depth_from_json(found.depth_high),
        )
        graph.add_stored(found.id, run.root, values, found.state, found.dist)
        graph.hidden[0] = 0  # the root's parents, if any, are not the run's concern
        graph.dirty.clear()
        graph.mark_committed()
        log.info("opened lazily: the root of %d stored nodes resident", latest.nodes)
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
            or self._lost_batch
            or graph.mapped  # part of the graph: the next run reads the database
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
        """:attr:`Graph.edge_loader` of a full solve's graph (see :meth:`Backend.load`)."""
        conn, _ = self._require_open(graph)
        assert self.variant_id is not None
        self._wait_behind()
        with self._errors(), conn.begin():
            self.backend.reload_edges(conn, self.variant_id, graph)

    def commit(self, batch: Batch, progress: Progress) -> None:
        """Write *batch* and *progress* in one transaction, then mark the graph committed.

        A running batch (:attr:`Batch.running`: not the closing pass's, not a game of
        chance's) is *written behind*: its rows are copied out of the graph here, and a
        thread of its own writes them while the solver goes on; the SQLite statements run
        without the GIL (``db/_sqlite_bulk.c``), so the search and the writes share the
        machine's cores. Whatever reads or writes the database next waits for that batch
        first (so a read sees every batch the graph counts as committed), and raises its
        error if it failed. A crash meanwhile loses that batch, as it would lose a batch
        in flight anyway: each is one transaction. ``NEGAGRAPH_WRITE_BEHIND=0`` writes
        every batch in the calling thread.

        :raises VariantLockedError: if this run's lease was taken over by another writer.
        :raises DatabaseError: if the database refuses the batch (nothing of it is kept),
            or refused the batch written behind before it.
        """
        graph = batch.graph
        _, game = self._require_open(graph)
        self._wait_behind()
        vid = self.variant_id
        assert vid is not None
        behind = self._write_behind and batch.running and not self._tiered
        seq = self._seq + 1  # the number _batch gives this batch
        settled = batch.settled if batch.settled != self._settled else None
        nodes: Iterable[list[Any]]
        edges: Iterable[list[Any]]
        updates: Iterable[tuple[Any, ...]]
        if batch.mode == "mapped":
            nodes, edges, updates = rows.mapped_rows(graph, game, vid, seq)
            count = len(updates)
            figures = (graph.total_nodes, graph.total_edges)
            new_nodes = new_edges = range(0)
        else:
            new_nodes, new_edges, dirty = graph.pending()
            nodes = rows.node_columns(graph, game, vid, new_nodes, seq) if new_nodes else ()
            edges = rows.edge_columns(graph, vid, new_edges) if new_edges else ()
            updates = rows.update_rows(graph, dirty) if dirty else ()
            count = len(dirty)
            figures = (graph.num_nodes, graph.total_edges)
            if behind:  # copied now: the graph changes while they are written
                nodes, edges = list(nodes), list(edges)
                updates = rows.update_columns(graph, dirty) if dirty else ()
        chance = graph if batch.mode == "chance" else None

        def write(conn: Connection, cursor: Any, at: int) -> None:
            assert at == seq
            if settled is not None:
                conn.execute(update(Variant).where(Variant.id == vid).values(settled=settled))
            self.backend.write_rows(cursor, vid, seq, nodes, edges, updates, count)
            if chance is not None:
                self._write_chance(cursor, chance, vid, new_nodes, new_edges)

        if not behind:
            self._batch(progress, *figures, write)
            graph.mark_committed()
            self._settled = batch.settled
            self._after_batch()
            return
        self._end_reading()  # this thread's read transaction; the batch's thread writes
        changed = np.fromiter(graph.dirty, dtype=np.int64, count=len(graph.dirty))
        if batch.mode == "mapped":
            assert graph.gid is not None
            gid = np.frombuffer(graph.gid, dtype=np.int64)
            self._flight = (graph.committed_gid, graph.total_nodes, gid[changed])
        else:
            self._flight = (new_nodes.start, new_nodes.stop, changed)
        graph.mark_committed()
        self._settled = batch.settled
        work = partial(self._batch, replace(progress), *figures, write)

        def written() -> None:
            work()
            self._after_batch()

        self._start_behind(written, f"negagraph batch {seq}")

    def _start_behind(self, work: Callable[[], object], name: str) -> None:
        """Run *work* (a transaction on the writer's connection, which nothing else
        uses until :meth:`_join_behind`) in a thread of its own: a batch written behind
        (:meth:`commit`), or a tiered solve's shard (:meth:`write_shard`)."""
        if self._switch_interval is None:
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_INTERVAL, self._switch_interval))
        self._behind = threading.Thread(
            target=self._write_behind_thread, args=(work,), name=name, daemon=True
        )
        self._behind.start()

    def _write_behind_thread(self, work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as exc:  # raised by the solver's thread (_wait_behind)
            self._behind_error = exc

    def _join_behind(self) -> BaseException | None:
        """Wait for the batch written behind, if any: what stopped it, or ``None``. The
        connection is this thread's again afterwards. Ctrl-C does not cut the wait short
        (the batch's thread holds the connection): it is raised once the batch is done."""
        thread = self._behind
        if thread is None:
            return None
        interrupted: KeyboardInterrupt | None = None
        while thread.is_alive():
            try:
                thread.join()
            except KeyboardInterrupt as exc:
                interrupted = exc
        self._behind = None
        self._evicted_behind = False
        error, self._behind_error = self._behind_error, None
        if error is not None:
            self._lost_batch = True
        if interrupted is not None:
            if error is not None:
                log.warning("the batch written behind failed: %s", error)
            raise interrupted
        return error

    def _wait_behind(self) -> None:
        """:meth:`_join_behind`, raising what stopped the batch."""
        error = self._join_behind()
        if error is not None:
            raise error

    def _settle_behind(self) -> None:
        """:meth:`_join_behind` before the connection is given up, while another exception
        (or Ctrl-C) is on its way out: the batch's error is only logged."""
        try:
            error = self._join_behind()
        except KeyboardInterrupt:  # again: the run is being abandoned already
            return
        if error is not None:
            log.warning("the batch written behind failed: %s", error)

    # -- what a bounded-memory run reads (solver.cache.NodeSource) ------------------------

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """Rows of *sql* (``?`` markers; ``:v`` none: the variant id comes first) through a
        driver's cursor (SQLAlchemy would cost more than the query).

        Where batches are written behind (:meth:`commit`), a connection of its own reads,
        each query in a transaction of its own (so that no reader holds back SQLite's
        checkpoints), while the batch's thread writes. What it reads is what the cache
        asks for: nodes that are not resident, and the edges of such nodes. Those rows
        are in the database whether or not the batch in flight has landed: a node leaves
        RAM only by an eviction, so the batch in flight holds rows of nodes that are
        resident, unless the graph was evicted since it was copied (:meth:`swap`); then
        the read waits for it. Otherwise reads go through the writer's connection, in a
        read transaction kept open until the next batch."""
        assert self._conn is not None and self.variant_id is not None
        if self._marker != "?":
            sql = sql.replace("?", self._marker)
        if self._write_behind:
            if self._evicted_behind:
                self._wait_behind()
            try:
                with self._errors():
                    cursor = self._reading_cursor()
                    cursor.execute(sql, (self.variant_id, *params))
                    return list(cursor.fetchall())
            except BaseException:
                self._close_reader(failed=True)  # so that the run's end can record itself
                raise
        conn = self._conn
        try:
            with self._errors():
                if self._reading is None:
                    self._reading = conn.begin()
                    self._cursor = driver(conn).cursor()
                self._cursor.execute(sql, (self.variant_id, *params))
                return list(self._cursor.fetchall())
        except BaseException:
            self._drop_reading()  # so that the run's end can record itself
            raise

    def _reading_cursor(self) -> Any:
        """The cursor of the reader of :meth:`_read`: a connection of the engine's own,
        out of its pool, each statement its own transaction."""
        if self._reader_cursor is None:
            raw = self.engine.raw_connection()
            try:
                raw.detach()  # closed, not pooled, at the run's end (its settings are ours)
                dbapi: Any = raw.dbapi_connection
                if self._marker == "?":  # isolation_level None already (db.session)
                    if self._reader_cache:
                        dbapi.execute(f"PRAGMA cache_size = -{self._reader_cache}")
                else:
                    dbapi.autocommit = True
                cursor = dbapi.cursor()
            except BaseException:
                raw.close()
                raise
            self._reader, self._reader_cursor = raw, cursor
        return self._reader_cursor

    def _close_reader(self, *, failed: bool = False) -> None:
        """Close the reader of :meth:`_read` at the run's end, or drop it after a *failed*
        read (without the rollback a lost connection would refuse)."""
        reader, self._reader, self._reader_cursor = self._reader, None, None
        if reader is not None:
            with suppress(Exception):
                if failed:
                    reader.invalidate()
                else:
                    reader.close()

    def _drop_reading(self) -> None:
        """Roll back the read transaction of :meth:`_read` after it failed (a lost
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

    def _end_reading(self) -> None:
        """Close the read transaction of :meth:`_read`, if open (before a write)."""
        reading, self._reading = self._reading, None
        if reading is not None:
            self._cursor.close()
            self._cursor = None
            with self._errors():
                reading.commit()

    def find_nodes(self, keys: Sequence[PositionKey]) -> list[StoredNode]:
        """The stored nodes of those of *keys* that are stored, by id
        (:class:`solver.cache.NodeSource`). SQLite: one indexed query a key, since
        without ``ANALYZE`` statistics it answers ``key IN (...)`` by scanning the
        variant (see :func:`db.repository.stored_positions`); PostgreSQL: one round trip
        through the same index."""
        if self._marker != "?":
            found = self._read(
                f'SELECT {_NODE_FIELDS} FROM nodes n WHERE n.variant_id = ? AND n."key" = ANY(?)',
                (rows.key_bytes(keys),),
            )
        else:
            assert self._graph is not None and self.variant_id is not None
            nodes = self._graph.total_nodes
            if self._keys is not None and self._keys.whole and nodes > keyindex.KEY_RANGE:
                self._wait_behind()  # the batch in flight may make the index ranged
            table, where = self._key_lookup(self.variant_id, nodes)
            sql = (
                f"SELECT {_NODE_FIELDS} FROM {table} "
                f'WHERE {where} AND n.variant_id = ? AND n."key" = ?'
            )
            if self._keys is not None:
                sql += keyindex.newest_first(self._keys)
            found = [r for kb in rows.key_bytes(keys) for r in self._read(sql, (kb,))]
        return sorted((_stored_node(r) for r in found), key=lambda n: n[0])

    def stored_keys(self, count: int) -> Iterator[list[PositionKey]]:
        """The keys of stored nodes ``0 .. count - 1``, in chunks of ids
        (:class:`solver.cache.NodeSource`)."""
        sql = 'SELECT "key" FROM nodes WHERE variant_id = ? AND id >= ? AND id < ?'
        self._wait_behind()  # (a graph opened with its root alone: none is written yet)
        for start in range(0, count, KEY_CHUNK):
            found = self._read(sql, (start, min(count, start + KEY_CHUNK)))
            yield [int.from_bytes(bytes(kb), "big") for (kb,) in found]

    def children(self, parent: int) -> list[tuple[MoveLabel, StoredNode]]:
        """Stored node *parent*'s edges in move order, each with its child's node, in one
        query (:class:`solver.cache.NodeSource`)."""
        found = self._read(
            f"SELECT e.move, {_NODE_FIELDS} FROM edges e LEFT JOIN nodes n "
            "ON n.variant_id = e.variant_id AND n.id = e.child "
            "WHERE e.variant_id = ? AND e.parent = ? ORDER BY e.move_order",
            (parent,),
        )
        if any(r[1] is None for r in found):
            raise DatabaseError("a stored node is missing: the graph is damaged")
        return [(r[0], _stored_node(r[1:])) for r in found]

    def parent_nodes(self, child: int) -> list[StoredNode]:
        """The stored parents of *child*, once each, by id (:class:`solver.cache.NodeSource`);
        the first call makes the index this needs (``edges_by_child``, kept: see
        docs/design.md §9)."""
        if not self._child_index:
            self._wait_behind()
            self._end_reading()
            conn = self._conn
            assert conn is not None
            with self._errors(), conn.begin():
                conn.execute(
                    text("CREATE INDEX IF NOT EXISTS edges_by_child ON edges (variant_id, child)")
                )
            self._child_index = True
        found = self._read(
            f"SELECT {_NODE_FIELDS} FROM edges e JOIN nodes n "
            "ON n.variant_id = e.variant_id AND n.id = e.parent "
            "WHERE e.variant_id = ? AND e.child = ?",
            (child,),
        )
        return sorted({r[0]: _stored_node(r) for r in found}.values(), key=lambda n: n[0])

    def limit_cache(self, nbytes: int) -> None:
        """Hold SQLite's page cache of this run's connection to *nbytes* (it counts in the
        process's memory; a PostgreSQL server's does not), and let its write-ahead log
        grow as large before a checkpoint: :class:`solver.cache.NodeSource`.

        An evicting run's commits dirty index pages all over a large file (each new key
        lands at a random place in ``(variant_id, key)``); a checkpoint copies a page
        once however many commits rewrote it since the last one, so a longer log copies
        fewer pages a commit (docs/performance.md, "Eviction")."""
        conn = self._conn
        if conn is None or self._marker != "?":
            return
        self._wait_behind()
        self._end_reading()
        with self._errors():
            sqlite = driver(conn)
            (page_bytes,) = sqlite.execute("PRAGMA page_size").fetchone()
            pages = max(WAL_AUTOCHECKPOINT, nbytes // page_bytes)
            if self._write_behind:  # a quarter for the reader's lookups (_read)
                self._reader_cache = max(1024, nbytes // 4 // 1024)
                nbytes -= nbytes // 4
            sqlite.execute(f"PRAGMA cache_size = -{max(1024, nbytes // 1024)}")
            sqlite.execute(f"PRAGMA wal_autocheckpoint = {pages}")

    def swap(self, old: Graph, new: Graph) -> None:
        """Commit *new* instead of *old* from now on (:class:`solver.cache.NodeSource`): an
        eviction. Unless it kept the nodes of the batch written behind resident
        (:meth:`in_flight`), reads wait for that batch (:meth:`_read`)."""
        self._require_open(old)
        self._graph = new
        self._evicted_behind = self._behind is not None and self._pinned_for is not self._behind

    def in_flight(self, most: int) -> np.ndarray[Any, np.dtype[np.int64]] | None:
        """The stored ids of the nodes whose rows the batch written behind holds, while it
        is being written, if there are at most *most* (:class:`solver.cache.NodeSource`;
        the batch after the retrograde pass before a first eviction rewrites most nodes)."""
        behind, flight = self._behind, self._flight
        if behind is None or flight is None or not behind.is_alive():
            return None
        lo, hi, changed = flight
        if hi - lo + changed.size > most:
            return None
        self._pinned_for = behind
        return np.concatenate([np.arange(lo, hi, dtype=np.int64), changed])

    def load_all(self, old: Graph) -> Graph:
        """The whole committed graph in place of *old* (:class:`solver.cache.NodeSource`)."""
        conn, _ = self._require_open(old)
        assert self.variant_id is not None
        self._wait_behind()
        self._end_reading()
        with self._errors(), conn.begin():
            graph = self.backend.load(conn, self.variant_id, edges=True)
        graph.settled = old.settled
        graph.after_crash = old.after_crash
        self._graph = graph
        return graph

    def _write_chance(
        self, cursor: Any, graph: Graph, vid: int, nodes: range, edges: range
    ) -> None:
        """A game of chance's own rows (``chance_nodes``, ``chance_edges``) for the new
        nodes and edges, from ``graph.chance`` (:class:`solver.chance.ChanceColumns`),
        and the rewritten ``chance_nodes`` rows of its changed stored nodes."""
        c = graph.chance
        if c.changed:
            sql = (
                "UPDATE chance_nodes SET low = ?, high = ?, low_exact = ?, high_exact = ?, "
                "chance = ?, plies = ?, plies_exact = ? WHERE variant_id = ? AND id = ?"
            )
            if self._marker != "?":
                sql = sql.replace("?", self._marker)
            cursor.executemany(
                sql,
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
        if nodes:
            lo, hi = nodes.start, nodes.stop
            self.backend.write_table(
                cursor,
                "chance_nodes",
                (
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
                ),
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
        if edges:
            lo, hi = edges.start, edges.stop
            first = np.frombuffer(graph.first_edge, dtype=np.int32)
            parent = np.frombuffer(graph.edge_parent, dtype=np.int32)[lo:hi]
            order = np.arange(lo, hi, dtype=np.int64) - first[parent]
            lo, hi = lo - c.edges_from, hi - c.edges_from  # what the columns cover
            self.backend.write_table(
                cursor,
                "chance_edges",
                ("variant_id", "parent", "move_order", "probability", "keeps_turn"),
                zip(
                    [vid] * len(edges),
                    parent.tolist(),
                    order.tolist(),
                    c.probability[lo:hi],
                    c.keeps_turn[lo:hi].tolist(),
                    strict=True,
                ),
            )

    def _batch(
        self,
        progress: Progress,
        nodes: int,
        edges: int,
        write: Callable[[Connection, Any, int], None],
    ) -> None:
        """One commit of the variant: the run's fence and figures, the ``commits`` row
        (the graph then has *nodes* and *edges*), and what *write* writes through the
        driver's cursor (given the connection, the cursor and the commit's number), in
        one transaction."""
        conn = self._conn
        assert conn is not None
        self._end_reading()
        seq = self._seq + 1
        keys = self._keys
        try:
            with self._errors(), conn.begin():
                self._fence(conn, progress, final=False)
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
        self._seq = seq
        self._keys = keys

    def _after_batch(self) -> None:
        self._commits += 1
        self._crash_point(f"commit:{self._commits}")

    # -- a tiered full solve's reads and writes (solver.store.TierStore) ---------------

    def solved_without_tiers(self, game: Game) -> bool:
        """Whether *game*'s variant holds positions outside tiers (see
        :class:`~solver.store.TierStore`)."""
        ensure_schema(self.engine)
        with self._errors(), self.engine.connect() as conn:
            vid = conn.execute(
                select(Variant.id).where(
                    Variant.game == game.name, Variant.params == params_text(game.params)
                )
            ).scalar()
            if vid is None:
                return False
            top = conn.execute(select(func.max(Node.id)).where(Node.variant_id == vid)).scalar()
            tiered = int(
                conn.execute(select(func.sum(Tier.nodes)).where(Tier.variant_id == vid)).scalar()
                or 0
            )
            # a tier being discovered: its written shards are the tiered solve's
            found = shards.written_nodes(conn, vid, tiered)
            covered = max([tiered, *(first + count for first, count in found)])
            return top is not None and covered < int(top) + 1

    def tier_records(self) -> list[TierRecord]:
        """The variant's stored tiers, in discovery order."""
        conn = self._tier_conn()
        with self._errors(), conn.begin():
            found = conn.execute(
                select(
                    Tier.tier,
                    Tier.ordinal,
                    func.coalesce(Tier.first_id, -1),
                    Tier.nodes,
                    Tier.edges,
                    Tier.inner_moves,
                    Tier.first_offset,
                )
                .where(Tier.variant_id == self.variant_id)
                .order_by(Tier.ordinal)
            )
            records = [TierRecord(*row) for row in found]
        if [r.ordinal for r in records] != list(range(len(records))) or any(
            r.offset != sum(p.nodes for p in records[: r.ordinal]) for r in records
        ):
            raise DatabaseError("the stored tiers do not follow one another: the graph is damaged")
        if any(r.numbered for r in records):  # all of them, their ids one after another
            at, spans = 0, sorted((r.first_id, r.nodes) for r in records)
            for first, count in spans:
                if first != at:
                    raise DatabaseError(
                        "the stored tiers' node ids do not follow one another: the graph is damaged"
                    )
                at += count
        return records

    def stored_nodes(self) -> int:
        """The variant's stored nodes (its largest node id + 1)."""
        conn = self._tier_conn()
        with self._errors(), conn.begin():
            top = conn.execute(
                select(func.max(Node.id)).where(Node.variant_id == self.variant_id)
            ).scalar()
        return 0 if top is None else int(top) + 1

    def write_nodes(self, shard: NodeShard, game: Game, worker: str, started: float) -> bool:
        """Write a discovered tier's positions through the run's own connection (see
        :func:`db.shards.write_nodes`)."""
        conn = self._tier_conn()
        assert self.variant_id is not None and self.run_id is not None
        with self._errors():
            written = shards.write_nodes(
                conn, self.backend, self.variant_id, self.run_id, shard, worker, started
            )
        self._shards += 1
        self._crash_point(f"shard:{self._shards}")
        return written

    def written_nodes(self, from_id: int) -> list[tuple[int, int]]:
        """The discovered shards of tiers not recorded yet (see
        :class:`~solver.store.TierStore`)."""
        conn = self._tier_conn()
        assert self.variant_id is not None
        with self._errors(), conn.begin():
            return shards.written_nodes(conn, self.variant_id, from_id)

    def record_tier(
        self,
        tier: int,
        ordinal: int,
        first_offset: int,
        count: int,
        progress: Progress,
        *,
        inner_moves: bool,
        last: bool,
    ) -> TierRecord:
        """Record a discovered tier whose positions are written (see
        :class:`~solver.store.TierStore`)."""
        vid = self.variant_id
        assert vid is not None

        def write(conn: Connection, cursor: Any, seq: int) -> None:
            if self._settled:
                conn.execute(update(Variant).where(Variant.id == vid).values(settled=False))
            conn.execute(
                insert(Tier).values(
                    variant_id=vid,
                    tier=tier,
                    ordinal=ordinal,
                    first_id=None,
                    first_offset=first_offset,
                    nodes=count,
                    discovered_in=seq,
                    inner_moves=inner_moves,
                )
            )
            if last:
                _number_tiers(conn, vid)

        self._batch(progress, first_offset + count, progress.edges, write)
        self._settled = False
        self._after_batch()
        self.backend.tier_written(self._tier_conn())
        if last:
            return next(r for r in self.tier_records() if r.ordinal == ordinal)
        return TierRecord(tier, ordinal, -1, count, None, inner_moves, first_offset)

    def number_tiers(self, progress: Progress) -> list[TierRecord]:
        """Give the tiers not numbered yet their node ids (see
        :class:`~solver.store.TierStore`)."""
        vid = self.variant_id
        assert vid is not None
        self._batch(
            progress, progress.nodes, progress.edges, lambda conn, _c, _s: _number_tiers(conn, vid)
        )
        self._after_batch()
        return self.tier_records()

    def tier_nodes(
        self, record: TierRecord, lo: int = 0, hi: int | None = None, *, written: bool = False
    ) -> TierNodes:
        """A stored tier's positions (at offsets *lo* .. *hi* - 1), in id order."""
        assert self.variant_id is not None
        if self._write_behind and not (record.solved or written):
            # Discovered positions, stored long before: read apart while a shard is
            # written behind (write_shard).
            stop = record.nodes if hi is None else hi
            return shards.discovered_nodes(self._read, record.offset + lo, record.offset + stop)
        conn = self._tier_conn()
        with self._errors():
            return shards.read_tier_nodes(
                conn, self.backend, self.variant_id, record, lo, hi, written=written
            )

    def tier_values(self, record: TierRecord) -> TierValues:
        """A solved tier's bounds and depths, in id order."""
        conn = self._tier_conn()
        assert self.variant_id is not None
        with self._errors():
            return shards.read_tier_values(conn, self.backend, self.variant_id, record)

    def write_shard(
        self, game: Game, shard: Shard, part: TierPart, worker: str, started: float
    ) -> int | None:
        """Write a solved shard through the run's own connection (see
        :func:`db.shards.write_shard`): *written behind*, as a running batch is
        (:meth:`commit`), unless ``NEGAGRAPH_WRITE_BEHIND=0``. Its rows are written by a
        thread of its own while the solver solves the next shard, whose positions it
        reads apart (:meth:`tier_nodes`); whatever uses the writer's connection next waits
        for it, and raises its error. The edges it writes are returned at once: no one
        else writes this run's shards (the run holds the variant)."""
        conn = self._tier_conn()
        vid, run_id = self.variant_id, self.run_id
        assert vid is not None and run_id is not None

        def write() -> int | None:
            with self._errors():
                edges = shards.write_shard(
                    conn, self.backend, vid, run_id, game, shard, part, worker, started
                )
            self._shards += 1
            self._crash_point(f"shard:{self._shards}")
            return edges

        if not self._write_behind:
            return write()
        self._start_behind(write, f"negagraph shard {shard.first_id}")
        return int(part.edges.child.size)

    def written_shards(self, record: TierRecord) -> list[tuple[int, int, int]]:
        """The shards of tier *record* written so far (see :class:`~solver.store.TierStore`)."""
        conn = self._tier_conn()
        assert self.variant_id is not None
        with self._errors(), conn.begin():
            return shards.written_shards(conn, self.variant_id, record)

    def next_commit(self) -> int:
        """The number of the variant's next commit."""
        return self._seq + 1

    def finish_tier(self, record: TierRecord, progress: Progress, *, last: bool) -> TierRecord:
        """Mark a tier whose shards are all written solved (see
        :class:`~solver.store.TierStore`): its edges are its shards'."""
        vid = self.variant_id
        assert vid is not None
        found = self.written_shards(record)
        covered = sum(n for _, n, _ in found)
        if covered != record.nodes:
            raise DatabaseError(
                f"tier {record.tier}: its written shards hold {covered:,} of its "
                f"{record.nodes:,} positions: the graph is damaged"
            )
        written = sum(e for _, _, e in found)

        def write(conn: Connection, cursor: Any, seq: int) -> None:
            conn.execute(
                update(Tier)
                .where(Tier.variant_id == vid, Tier.tier == record.tier)
                .values(edges=written, solved_in=seq)
            )
            # its discovered positions are node rows now
            conn.execute(
                delete(DiscoveredChunk).where(
                    DiscoveredChunk.variant_id == vid,
                    DiscoveredChunk.first_offset >= record.offset,
                    DiscoveredChunk.first_offset < record.offset + record.nodes,
                )
            )
            # the commit's own row and the run's, with the edges now known
            conn.execute(
                update(Commit)
                .where(Commit.variant_id == vid, Commit.seq == seq)
                .values(edges=progress.edges + written)
            )
            conn.execute(
                update(SolveRun)
                .where(SolveRun.id == self.run_id)
                .values(edges=progress.edges + written, edges_added=progress.edges_added + written)
            )
            if last:
                conn.execute(update(Variant).where(Variant.id == vid).values(settled=True))
                if self._keys is not None and self._keys.none:
                    log.info("building the key index of %d positions", progress.nodes)
                    keyindex.create_whole(cursor, vid)

        self._batch(progress, progress.nodes, progress.edges, write)
        if last and self._keys is not None:
            self._keys = keyindex.WHOLE
        self._settled = last
        self._after_batch()
        self.backend.tier_written(self._tier_conn())
        return replace(record, edges=written)

    def report(self, progress: Progress) -> None:
        """Record *progress* in the run's row (fenced, one short transaction)."""
        conn = self._tier_conn()
        with self._errors(), conn.begin():
            self._fence(conn, progress, final=False)

    def shard_target(self) -> SqlShardTarget:
        """This run's database, variant and run, for worker processes."""
        if self.variant_id is None or self.run_id is None:
            raise SolveError(f"{self!r} is not open")
        url = self.engine.url.render_as_string(hide_password=False)
        return SqlShardTarget(url, self.variant_id, self.run_id)

    def _tier_conn(self) -> Connection:
        if self._conn is None or self.variant_id is None:
            raise SolveError(f"{self!r} is not open")
        self._wait_behind()
        return self._conn

    def close(self, progress: Progress) -> None:
        """Record the run's final status and release the writer lock (idempotent).

        The run row keeps the figures of the run's last commit when the graph holds work
        that was never committed (a failure or Ctrl-C in mid-batch): the record says what
        is stored, not what was in memory. A tiered run's figures are what its tiers and
        the units written for them hold (units of a tier not recorded or solved yet are
        kept for the next run)."""
        conn = self._conn
        if conn is None:
            return
        handling = sys.exc_info()[1] is not None  # closing after an error or Ctrl-C
        try:
            lost = self._join_behind()
        except KeyboardInterrupt:
            # Ctrl-C while the last batch was being written (it is written): stop
            self.close(replace(progress, status="stopped"))
            raise
        if lost is not None:
            if handling:
                log.warning("the batch written behind failed too: %s", lost)
            progress = replace(progress, status="failed")
        self._close(conn, progress, handling=handling)
        if lost is not None and not handling:
            raise lost

    def _close(self, conn: Connection, progress: Progress, *, handling: bool) -> None:
        """:meth:`close`, once no batch is written behind."""
        try:
            self._end_reading()
        except DatabaseError:
            self._reading = None  # the connection is unusable: recorded apart below
        graph = self._graph
        stored = not self._lost_batch and (
            graph is None
            or not (
                graph.committed_nodes != graph.num_nodes
                or graph.committed_edges != graph.num_edges
                or graph.dirty
                or graph.all_dirty
            )
        )
        try:
            if conn.in_transaction():
                # A transaction no ``with`` block will end: Ctrl-C inside SQLAlchemy's
                # begin() (its transaction made, the block not entered yet). Nothing of
                # it was committed; the connection's state is unknown: record apart.
                log.info("recording run %s through a new connection: a transaction was "
                         "cut short", self.run_id)  # fmt: skip
                self._record_apart(_final_status(progress.status), None)
                return
            try:
                with self._errors(), conn.begin():
                    if self._tiered and self.variant_id is not None:
                        progress = self._stored_progress(conn, progress)
                    self._fence(conn, progress, final=True, figures=stored)
                    keys = self._keys
                    if keys is not None and keys.ranged and progress.status == "complete":
                        assert self.variant_id is not None
                        keys = keyindex.merge(driver(conn), self.variant_id, keys)
                self._keys = keys
                self._crash_point("close")
            except VariantLockedError:
                raise
            except DatabaseError as exc:
                # The run's connection is unusable (e.g. Ctrl-C cut a PostgreSQL COPY
                # short: psycopg then refuses every other command): record apart.
                log.info("recording run %s through a new connection: %s", self.run_id, exc)
                self._record_apart(_final_status(progress.status), None if handling else exc)
                return
            except KeyboardInterrupt:
                # Ctrl-C (again) while the end was being recorded: the command it cut short
                # may have left the connection unusable, so record apart, then stop.
                log.info("recording run %s through a new connection after Ctrl-C", self.run_id)
                self._record_apart(_final_status(progress.status), None)
                raise
            if self._graph is not None:
                self._keep_for_resume(self._graph, progress)
        except VariantLockedError as exc:
            log.warning("%s", exc)
        finally:
            self._release(failed=False)

    def _stored_progress(self, conn: Connection, progress: Progress) -> Progress:
        """*progress* with a tiered run's nodes and edges as stored: units written for
        tiers not recorded or solved yet (a run stopped in mid-tier) count, being kept."""
        assert self.variant_id is not None
        nodes, edges = shards.stored_figures(conn, self.variant_id)
        return replace(
            progress,
            nodes=nodes,
            edges=edges,
            nodes_added=progress.nodes_added + nodes - progress.nodes,
            edges_added=progress.edges_added + edges - progress.edges,
        )

    def abandon(self, status: RunStatus) -> None:
        """Record the run's end as *status* if it is still open, keeping the figures of
        its last commit, and release the lock: for a caller whose :func:`solve` was cut
        short (a second Ctrl-C can land anywhere, even between :meth:`open` and the
        solver's own clean-up). Does nothing once :meth:`close` has run."""
        if self._conn is None:
            return
        self._settle_behind()
        log.info("recording run %s as %s through a new connection", self.run_id, status)
        try:
            self._record_apart(status, None)
        finally:
            self._release(failed=False)

    def _record_apart(self, status: str, error: DatabaseError | None) -> None:
        """Record the run's end through a new connection: drop the run's own first, which
        ends its session (the server rolls its transaction back and frees its lock),
        then set the status, keeping the figures of the last commit (a tiered run's: what
        its tiers and the units written for them hold). If that fails too,
        *error* is raised (``None``: another exception is already on its way out)."""
        conn = self._conn
        assert conn is not None
        conn.invalidate()
        self.backend.forget_session()  # its locks went with it
        try:
            with self._errors(), self.engine.connect() as fresh, fresh.begin():
                self.backend.before_apart(fresh)
                values: dict[str, Any] = {"status": status, "finished_at": utcnow()}
                if self._tiered and self.variant_id is not None:
                    # a tiered run: the units it wrote count, being kept
                    nodes, edges = shards.stored_figures(fresh, self.variant_id)
                    values.update(
                        nodes=nodes,
                        edges=edges,
                        nodes_added=SolveRun.nodes_added + nodes - SolveRun.nodes,
                        edges_added=SolveRun.edges_added + edges - SolveRun.edges,
                    )
                fresh.execute(
                    update(SolveRun)
                    .where(SolveRun.id == self.run_id, SolveRun.status == "running")
                    .values(**values)
                )
        except Exception as exc:  # the next writer will take the run over as failed
            log.warning("could not record the end of run %s: %s", self.run_id, exc)
            if error is not None:
                raise error from exc

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
                "root_low": to_json(progress.root_low),
                "root_high": to_json(progress.root_high),
                "root_low_final": bool(progress.root_low_final),
                "root_high_final": bool(progress.root_high_final),
            },
        )

    # -- open: variant, lock, load ----------------------------------------------------

    def _find_or_create_variant(self, conn: Connection, game: Game) -> int:
        params = params_text(game.params)
        query = select(Variant.id, Variant.rules_version).where(
            Variant.game == game.name, Variant.params == params
        )
        with conn.begin():
            row = conn.execute(query).first()
            if row is None:
                conn.execute(
                    self.backend.insert_new(
                        Variant,
                        ["game", "params"],
                        {
                            "game": game.name,
                            "params": params,
                            "params_json": json.dumps(dict(game.params), sort_keys=True),
                            "rules_version": game.version,
                            "game_source": source_of(game),
                            "created_at": utcnow(),
                            "settled": True,
                        },
                    )
                )
                row = conn.execute(query).one()
                if self._marker == "?":
                    keyindex.create_whole(driver(conn), row[0])
        variant_id, stored = row
        if stored != game.version:
            raise RulesVersionError.for_variant(game, stored, safe_url(self.engine))
        self.variant_id = variant_id
        return int(variant_id)

    def _take_lock(self, conn: Connection, variant_id: int, game: Game, run: RunOptions) -> None:
        self.run_id = self.backend.lock(
            conn,
            variant_id,
            game,
            run,
            lease_timeout=self.lease_timeout,
            lock_wait=self.lock_wait,
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
                "rss_bytes": progress.rss or None,
                "eta_seconds": progress.eta,
                "memory_limit": progress.memory_limit,
                "resident_nodes": progress.resident_nodes or None,
                "tiers_done": progress.tiers_done if progress.tiers_total else None,
                "tiers_total": progress.tiers_total or None,
                "units_done": progress.units_done if progress.tiers_total else None,
                "units_total": progress.units_total if progress.tiers_total else None,
                "workers": progress.workers or None,
            }
        )
        if final:
            values.update(status=_final_status(progress.status), finished_at=now)
        result = conn.execute(
            _run_update(tuple(values)),
            {"run_id": self.run_id, **{f"v_{k}": v for k, v in values.items()}},
        )
        if result.rowcount != 1:
            raise VariantLockedError(
                f"run {self.run_id} lost its lock on the variant (another writer took it "
                "over, judging this run dead); this run's uncommitted work is discarded"
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
        self._settle_behind()
        self._close_reader()
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
        if self._reading is not None:  # given back with the connection (rolled back)
            self._reading = None
            self._cursor = None
        conn = self._conn
        if conn is None:
            return
        status = "stopped" if isinstance(sys.exc_info()[1], KeyboardInterrupt) else "failed"
        try:
            if conn.invalidated:
                # Dropped: by close(), which recorded the run's end apart, or by SQLAlchemy
                # when Ctrl-C cut a command of a failing open() short: record that apart.
                if failed and self.run_id is not None:
                    log.info("recording run %s through a new connection", self.run_id)
                    self._record_apart(status, None)
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
                except (Exception, KeyboardInterrupt) as exc:
                    # e.g. Ctrl-C (again) cut a command short: record apart
                    log.info("recording run %s through a new connection: %r", self.run_id, exc)
                    self._record_apart(status, None)
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    return
            try:
                self.backend.release(conn, self.variant_id)
            except Exception:
                # Never hand a connection that may still hold the lock back to the pool.
                log.exception("could not give the writer's connection back; dropping it")
                conn.invalidate()
        finally:
            self.backend.forget_session()
            self._conn = None
            self._graph = None
            self._tiered = False
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
        interrupt = _interrupt_behind(exc)
        if interrupt is not None:
            # Ctrl-C cut a command short (a PostgreSQL COPY, say) and the clean-up that
            # followed failed on the connection it left busy ("another command is already
            # in progress"): what happened is the user's stop, not a database error.
            raise interrupt
        dbapi = self.store.engine.dialect.loaded_dbapi
        if isinstance(exc, sa_exc.DBAPIError):
            reason = str(exc.orig).strip() if exc.orig is not None else str(exc)
        elif isinstance(exc, dbapi.Error):
            reason = str(exc).strip()
        else:
            return
        # one line: libpq's messages run over several ("server closed the connection
        # unexpectedly\n\tThis probably means ...")
        reason = " ".join(line.strip() for line in reason.splitlines() if line.strip())
        raise DatabaseError(f"database {self.store._where()}: {reason}") from exc


def _number_tiers(conn: Connection, vid: int) -> None:
    """Give variant *vid*'s tiers that have none their node ids, in solve order (the
    reverse of discovery order): a tier at *offset* of *n* positions, of *total*, gets
    ``total - offset - n`` on (see :meth:`SqlStore.number_tiers`)."""
    total = conn.execute(
        select(func.coalesce(func.sum(Tier.nodes), 0)).where(Tier.variant_id == vid)
    ).scalar_one()
    conn.execute(
        update(Tier)
        .where(Tier.variant_id == vid, Tier.first_id.is_(None))
        .values(first_id=int(total) - Tier.first_offset - Tier.nodes)
    )


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


_NODE_FIELDS = (
    'n.id, n."key", n.low, n.high, n.low_final, n.high_final, n.depth_low, n.depth_high, '
    "n.state, n.dist"
)
"""A stored node's columns as :func:`_stored_node` reads them (table alias ``n``)."""


def _stored_node(r: Sequence[Any]) -> StoredNode:
    """A row of :data:`_NODE_FIELDS` as :class:`solver.cache.NodeSource` gives it."""
    values = (
        low_from_json(r[2]),
        high_from_json(r[3]),
        int(r[4]),
        int(r[5]),
        depth_from_json(r[6]),
        depth_from_json(r[7]),
    )
    return (r[0], int.from_bytes(bytes(r[1]), "big"), values, r[8], r[9])


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
        graph = backend_for(engine).load(conn, row.id)
        graph.settled = _settled(conn, row.id)
        return graph


def _refuse_unfinished_tiers(conn: Connection, variant_id: int, game: Game) -> None:
    """A run that is not tiered must not change a tiered solve in progress (it would
    rewrite the tiers' rows behind their records)."""
    left = conn.execute(
        select(func.count()).where(Tier.variant_id == variant_id, Tier.solved_in.is_(None))
    ).scalar()
    tiered = conn.execute(
        select(func.sum(Tier.nodes)).where(Tier.variant_id == variant_id)
    ).scalar()
    if not left and shards.written_nodes(conn, variant_id, int(tiered or 0)):
        left = 1  # a tier's positions are being written
    if left:
        raise SolveError(
            f"{game.name} ({params_text(game.params) or 'default parameters'}) has a tiered "
            f"full solve in progress ({left} tiers not solved yet): finish it with solve --full"
        )


def _settled(conn: Connection, variant_id: int) -> bool:
    """``variants.settled`` of variant *variant_id* (see the module docs)."""
    return bool(conn.execute(select(Variant.settled).where(Variant.id == variant_id)).scalar_one())


def _final_status(status: str) -> str:
    """The status a run that ends with progress *status* is recorded with: a run still
    ``running`` when it ends was stopped; an unknown status is recorded as ``failed``."""
    if status == "running":
        return "stopped"
    if status not in RUN_STATUSES:
        log.warning("unknown run status %r recorded as failed", status)
        return "failed"
    return status


def _latest_commit(conn: Connection, variant_id: int) -> int:
    """The variant's latest ``commits.seq`` (0 if none)."""
    latest = conn.execute(
        select(func.max(Commit.seq)).where(Commit.variant_id == variant_id)
    ).scalar()
    return int(latest or 0)


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
