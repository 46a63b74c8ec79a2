"""Ending a solve run (:meth:`db.store.SqlStore.close`, :meth:`~db.store.SqlStore.abandon`):
record its outcome in its run row, leave a resume file if it stopped short, and give back
the writer lock and the connection, whatever state a failure or Ctrl-C left them in.

When the run's own connection is unusable (Ctrl-C cut a command short, the server
dropped it), the end is *recorded apart* (:func:`record_apart`): through a new
connection, after dropping the run's own, which ends its session (the server rolls its
transaction back and frees its lock).
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import replace
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Connection

from db import shards
from db.backends.base import driver
from db.backends.sqlite import keyindex, resume
from db.errors import DatabaseError, VariantLockedError
from db.models import SolveRun, utcnow
from db.store.writer import Writer, final_status
from solver.graph import Graph
from solver.store import Progress, RunStatus

log = logging.getLogger(__name__)


def close(writer: Writer, progress: Progress) -> None:
    """Record the run's final status and release the writer lock (idempotent).

    The run row keeps the figures of the run's last commit when the graph holds work
    that was never committed (a failure or Ctrl-C in mid-batch): the record says what
    is stored, not what was in memory. A tiered run's figures are what its tiers and
    the units written for them hold (units of a tier not recorded or solved yet are
    kept for the next run)."""
    conn = writer.conn
    if conn is None:
        return
    handling = sys.exc_info()[1] is not None  # closing after an error or Ctrl-C
    try:
        lost = writer.behind.join()
    except KeyboardInterrupt:
        # Ctrl-C while the last batch was being written (it is written): stop
        close(writer, replace(progress, status="stopped"))
        raise
    if lost is not None:
        if handling:
            log.warning("the batch written behind failed too: %s", lost)
        progress = replace(progress, status="failed")
    _close(writer, conn, progress, handling=handling)
    if lost is not None and not handling:
        raise lost


def _close(writer: Writer, conn: Connection, progress: Progress, *, handling: bool) -> None:
    """:func:`close`, once no batch is written behind."""
    try:
        writer.end_reading()
    except DatabaseError:
        writer.forget_reading()  # the connection is unusable: recorded apart below
    stored = _all_stored(writer)
    try:
        if conn.in_transaction():
            # A transaction no ``with`` block will end: Ctrl-C inside SQLAlchemy's
            # begin() (its transaction made, the block not entered yet). Nothing of
            # it was committed; the connection's state is unknown: record apart.
            log.info("recording run %s through a new connection: a transaction was "
                     "cut short", writer.run_id)  # fmt: skip
            record_apart(writer, final_status(progress.status), None)
            return
        if _record_end(writer, conn, progress, stored=stored, handling=handling):
            if writer.graph is not None:
                _keep_for_resume(writer, writer.graph, progress)
            if writer.compact and progress.status == "complete" and not handling:
                writer.backend.compacted(conn)
    except VariantLockedError as exc:
        log.warning("%s", exc)
    finally:
        release(writer, failed=False)


def _all_stored(writer: Writer) -> bool:
    """Whether the database holds everything the run's graph holds (no batch lost, no
    work left uncommitted)."""
    graph = writer.graph
    return not writer.behind.lost and (graph is None or graph.all_committed())


def _record_end(
    writer: Writer, conn: Connection, progress: Progress, *, stored: bool, handling: bool
) -> bool:
    """Record the run's end through its own connection (its figures only if *stored*),
    or apart where that connection fails; whether it was recorded through its own."""
    try:
        with writer.errors(), conn.begin():
            if writer.tiered and writer.variant_id is not None:
                progress = _stored_progress(writer, conn, progress)
            writer.fence(conn, progress, final=True, figures=stored)
            keys = writer.keys
            if keys is not None and keys.ranged and progress.status == "complete":
                assert writer.variant_id is not None
                keys = keyindex.merge(driver(conn), writer.variant_id, keys)
        writer.keys = keys
        writer.crash_point("close")
    except VariantLockedError:
        raise
    except DatabaseError as exc:
        # The run's connection is unusable (e.g. Ctrl-C cut a PostgreSQL COPY
        # short: psycopg then refuses every other command): record apart.
        log.info("recording run %s through a new connection: %s", writer.run_id, exc)
        record_apart(writer, final_status(progress.status), None if handling else exc)
        return False
    except KeyboardInterrupt:
        # Ctrl-C (again) while the end was being recorded: the command it cut short
        # may have left the connection unusable, so record apart, then stop.
        log.info("recording run %s through a new connection after Ctrl-C", writer.run_id)
        record_apart(writer, final_status(progress.status), None)
        raise
    return True


def _stored_progress(writer: Writer, conn: Connection, progress: Progress) -> Progress:
    """*progress* with a tiered run's nodes and edges as stored: units written for
    tiers not recorded or solved yet (a run stopped in mid-tier) count, being kept."""
    assert writer.variant_id is not None
    nodes, edges = shards.stored_figures(conn, writer.variant_id)
    return replace(
        progress,
        nodes=nodes,
        edges=edges,
        nodes_added=progress.nodes_added + nodes - progress.nodes,
        edges_added=progress.edges_added + edges - progress.edges,
    )


def _keep_for_resume(writer: Writer, graph: Graph, progress: Progress) -> None:
    """At a clean end of a run that stopped short (a budget, a stop request), with
    everything committed, write the graph to the variant's resume file (best effort:
    a failure only costs the next run time)."""
    path = writer.resume_path
    conn = writer.conn
    if (
        path is None
        or conn is None
        or writer.behind.lost
        or progress.status not in ("budget", "stopped")
        or not graph.resumable()
    ):
        return
    assert writer.run_id is not None and writer.variant_id is not None
    try:
        with writer.errors(), conn.begin():
            marks = resume.run_marks(conn, writer.run_id)
    except DatabaseError as exc:
        log.warning("no resume file: %s", exc)
        return
    t0 = time.perf_counter()
    meta = {"variant_id": writer.variant_id, "full": writer.resume_full, **marks}
    if resume.write(path, graph, meta):
        log.info("wrote %s in %.1f s", path, time.perf_counter() - t0)


def abandon(writer: Writer, status: RunStatus) -> None:
    """Record the run's end as *status* if it is still open, keeping the figures of its
    last commit, and release the lock (see :meth:`db.store.SqlStore.abandon`)."""
    if writer.conn is None:
        return
    writer.behind.settle()
    log.info("recording run %s as %s through a new connection", writer.run_id, status)
    try:
        record_apart(writer, status, None)
    finally:
        release(writer, failed=False)


def record_apart(writer: Writer, status: str, error: DatabaseError | None) -> None:
    """Record the run's end through a new connection: drop the run's own first, which
    ends its session (the server rolls its transaction back and frees its lock),
    then set the status, keeping the figures of the last commit (a tiered run's: what
    its tiers and the units written for them hold). If that fails too,
    *error* is raised (``None``: another exception is already on its way out)."""
    conn = writer.conn
    assert conn is not None
    conn.invalidate()
    writer.backend.forget_session()  # its locks went with it
    try:
        with writer.errors(), writer.engine.connect() as fresh, fresh.begin():
            writer.backend.before_apart(fresh)
            values: dict[str, Any] = {"status": status, "finished_at": utcnow()}
            if writer.tiered and writer.variant_id is not None:
                # a tiered run: the units it wrote count, being kept
                nodes, edges = shards.stored_figures(fresh, writer.variant_id)
                values.update(
                    nodes=nodes,
                    edges=edges,
                    nodes_added=SolveRun.nodes_added + nodes - SolveRun.nodes,
                    edges_added=SolveRun.edges_added + edges - SolveRun.edges,
                )
            fresh.execute(
                update(SolveRun)
                .where(SolveRun.id == writer.run_id, SolveRun.status == "running")
                .values(**values)
            )
    except Exception as exc:  # the next writer will take the run over as failed
        log.warning("could not record the end of run %s: %s", writer.run_id, exc)
        if error is not None:
            raise error from exc


def release(writer: Writer, *, failed: bool) -> None:
    """Give back the lock and the connection; on a failed open, close the run row
    (as ``stopped`` if Ctrl-C interrupted the open: called while handling it)."""
    writer.behind.settle()
    writer.close_reader()
    writer.behind.restore()
    writer.forget_reading()  # given back with the connection (rolled back)
    conn = writer.conn
    if conn is None:
        return
    status = "stopped" if isinstance(sys.exc_info()[1], KeyboardInterrupt) else "failed"
    try:
        if conn.invalidated:
            # Dropped: by close(), which recorded the run's end apart, or by SQLAlchemy
            # when Ctrl-C cut a command of a failing open() short: record that apart.
            if failed and writer.run_id is not None:
                log.info("recording run %s through a new connection", writer.run_id)
                record_apart(writer, status, None)
            return
        if failed and writer.run_id is not None and not _close_failed_run(writer, conn, status):
            return
        _give_back(writer, conn)
    finally:
        writer.backend.forget_session()
        writer.conn = None
        writer.graph = None
        writer.tiered = False
        writer.game = None
        writer.run_id = None
        conn.close()


def _close_failed_run(writer: Writer, conn: Connection, status: str) -> bool:
    """Record a failed open's run as *status* through its own connection; ``False`` if
    that failed and it was recorded apart (the connection is dropped then)."""
    try:
        if conn.in_transaction():
            conn.rollback()
        with conn.begin():
            conn.execute(
                update(SolveRun)
                .where(SolveRun.id == writer.run_id, SolveRun.status == "running")
                .values(status=status, finished_at=utcnow())
            )
    except (Exception, KeyboardInterrupt) as exc:
        # e.g. Ctrl-C (again) cut a command short: record apart
        log.info("recording run %s through a new connection: %r", writer.run_id, exc)
        record_apart(writer, status, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        return False
    return True


def _give_back(writer: Writer, conn: Connection) -> None:
    """Hand the writer's connection back to the pool, or drop it if it may still hold
    the lock."""
    try:
        writer.backend.release(conn, writer.variant_id)
    except Exception:
        # Never hand a connection that may still hold the lock back to the pool.
        log.exception("could not give the writer's connection back; dropping it")
        conn.invalidate()


__all__ = ["abandon", "close", "record_apart", "release"]
