"""The writer lock: one writer per variant, and how a dead writer's lock is taken over.

Only one writer may extend a variant's graph at a time (node ids are discovery order, so
two writers would collide); readers are never blocked.

* **PostgreSQL**: a session-level advisory lock, ``pg_try_advisory_lock(<negagraph>,
  <variant id>)``, held by the store's own connection for the whole run. The server drops
  it when the connection goes away, so a killed writer frees the variant: the writer's
  session checks its client socket during long statements and uses short TCP keepalives,
  and a new writer that finds the lock held by a dead process of its own host waits (up to
  ``lock_wait`` seconds) for the server to notice. Any ``running`` run rows left behind by
  dead writers are then marked ``failed``.
* **SQLite** (no advisory locks): the ``running`` row of ``solve_runs`` is a *lease*,
  taken inside a ``BEGIN IMMEDIATE`` transaction (which serialises lease takers). It
  records the writer's pid, hostname and start time, and every commit refreshes its
  ``heartbeat_at``. A lease is stale, and is taken over (its row marked ``failed``), when:

  - it was taken on this host and the pid is gone (or a zombie), or the pid now belongs
    to a process started after the lease (pid reuse; psutil tells a process's start time);
  - it was taken on another host and its heartbeat is older than ``lease_timeout``
    (default :data:`LEASE_TIMEOUT`).

  A live lease raises :class:`~db.errors.VariantLockedError` naming the run, pid, host and
  start time.

In both cases every commit is *fenced*: it first updates its own run row ``WHERE status =
'running'`` and aborts with :class:`~db.errors.VariantLockedError` if the row was taken over,
so a writer that lost its lease can never interleave its nodes with another's.

The store (:class:`db.store.SqlStore`) takes the lock when it opens a variant
(:func:`take_pg_lock`, then :func:`take_lease`, which records the run's row) and fences
every commit with the row; readers use :func:`stale_reason` to show a crashed writer's run
as ``dead``. Process liveness and start times come from psutil.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import psutil
from sqlalchemy import Select, select, text, update
from sqlalchemy import exc as sa_exc
from sqlalchemy import insert as sa_insert
from sqlalchemy.engine import Connection

from db.errors import VariantLockedError
from db.models import SolveRun, Variant, encode_key, utcnow
from solver.game import Game, params_text
from solver.store import RunOptions

log = logging.getLogger(__name__)

LEASE_TIMEOUT = 600.0
"""Seconds without a heartbeat after which another host's SQLite lease counts as dead."""

LOCK_WAIT = 30.0
"""Seconds to wait for PostgreSQL to free the lock of a writer known to be dead."""

PG_LOCK_CLASS = int.from_bytes(b"nega", "big")
"""First key of negagraph's PostgreSQL advisory locks (the second is the variant id)."""

PID_REUSE_SLACK = 5.0
"""Seconds of clock slack when comparing a process's start time with its lease's."""


def pg_session_settings(conn: Connection) -> None:
    """Make the server notice a dead writer (and so free its lock) quickly: check the
    client socket during long statements, and probe idle TCP connections."""
    for setting in (
        "client_connection_check_interval = 2000",  # PostgreSQL 14+
        "tcp_keepalives_idle = 60",
        "tcp_keepalives_interval = 10",
        "tcp_keepalives_count = 6",
    ):
        try:
            conn.exec_driver_sql(f"SET {setting}")
            conn.commit()
        except sa_exc.DBAPIError:
            conn.rollback()


def take_pg_lock(conn: Connection, variant_id: int, game: Game, lock_wait: float) -> None:
    """Take the variant's advisory lock on *conn*'s session. If its holder is a process
    of this host that is already dead, wait (up to *lock_wait* seconds) for the server to
    notice.

    :raises VariantLockedError: if another writer holds it.
    """
    deadline = time.monotonic() + lock_wait
    while True:
        got = conn.execute(
            text("SELECT pg_try_advisory_lock(:c, :v)"), {"c": PG_LOCK_CLASS, "v": variant_id}
        ).scalar_one()
        conn.commit()  # the lock is session-level: it outlives this transaction
        if got:
            return
        holder = running_holder(conn, variant_id)
        dying = (
            holder is not None
            and holder.hostname == socket.gethostname()
            and not pid_alive(holder.pid)
        )
        if not dying or time.monotonic() > deadline:
            raise VariantLockedError(locked_message(game, holder))
        time.sleep(0.05)


def take_lease(
    conn: Connection,
    variant_id: int,
    game: Game,
    run: RunOptions,
    *,
    advisory: bool,
    lease_timeout: float = LEASE_TIMEOUT,
) -> int:
    """Record this process's run of the variant as its ``running`` row (the SQLite lease;
    with an *advisory* lock already held, a record only) and return the run's id. Rows
    of dead writers are marked ``failed`` first.

    :raises VariantLockedError: if a live writer holds the lease.
    """
    now = utcnow()
    with conn.begin():  # SQLite: BEGIN IMMEDIATE, so lease takers are serialised
        running = conn.execute(
            holder_query().where(SolveRun.variant_id == variant_id, SolveRun.status == "running")
        ).all()
        for holder in running:
            stale = (
                "its writer lost the advisory lock"
                if advisory
                else stale_reason(holder, now, lease_timeout)
            )
            if stale is None:
                raise VariantLockedError(holder_message(game, holder))
            log.warning("taking over the lease of run %d: %s", holder.id, stale)
            conn.execute(
                update(SolveRun)
                .where(SolveRun.id == holder.id, SolveRun.status == "running")
                .values(status="failed", finished_at=now)
            )
        root_key = encode_key(run.root)
        root_notation = game.format(run.root)
        result = conn.execute(
            sa_insert(SolveRun).values(
                variant_id=variant_id,
                status="running",
                started_at=now,
                heartbeat_at=now,
                root_key=root_key,
                root_notation=root_notation,
                tablebase=run.full,
                max_expansions=run.max_expansions,
                max_seconds=run.max_seconds,
                pid=os.getpid(),
                hostname=socket.gethostname(),
            )
        )
        assert result.inserted_primary_key is not None
        conn.execute(
            update(Variant)
            .where(Variant.id == variant_id)
            .values(root_key=root_key, root_notation=root_notation)
        )
    return int(result.inserted_primary_key[0])


def running_holder(conn: Connection, variant_id: int) -> Any:
    """The newest ``running`` row of the variant (its writer's pid, host, times), or
    ``None``."""
    row = conn.execute(
        holder_query()
        .where(SolveRun.variant_id == variant_id, SolveRun.status == "running")
        .order_by(SolveRun.started_at.desc())
        .limit(1)
    ).first()
    conn.rollback()
    return row


def holder_query() -> Select[int, int, str, datetime, datetime]:
    return select(
        SolveRun.id, SolveRun.pid, SolveRun.hostname, SolveRun.started_at, SolveRun.heartbeat_at
    )


def locked_message(game: Game, holder: Any) -> str:
    """The error when *game*'s variant is locked by *holder* (``None``: not known yet)."""
    if holder is None:
        return (
            f"{game.name} ({params_text(game.params)}) is locked by another writer "
            "that is just starting or finishing; try again"
        )
    return holder_message(game, holder)


def holder_message(game: Game, run: Any) -> str:
    started = aware(run.started_at).strftime("%Y-%m-%d %H:%M:%S UTC")
    beat = aware(run.heartbeat_at).strftime("%Y-%m-%d %H:%M:%S UTC")
    return (
        f"{game.name} ({params_text(game.params)}) is being solved by run {run.id} "
        f"(pid {run.pid} on {run.hostname}, since {started}, last commit {beat}); "
        "wait for it to finish or stop it"
    )


def aware(moment: datetime) -> datetime:
    """SQLite hands back naive timestamps; every stored timestamp is UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def stale_reason(run: Any, now: datetime, lease_timeout: float = LEASE_TIMEOUT) -> str | None:
    """Why the writer of *run* (a ``running`` run row: its pid, hostname, started_at and
    heartbeat_at) is dead, or ``None`` if it may be alive: the rule of the SQLite lease
    (see the module docs), also what readers use to show a run as ``dead``."""
    if run.hostname == socket.gethostname():
        if not pid_alive(run.pid):
            return f"process {run.pid} is gone"
        start = process_start(run.pid)
        started = aware(run.started_at).timestamp()
        if start is not None and start > started + PID_REUSE_SLACK:
            return f"pid {run.pid} now belongs to a process started after the lease"
        return None
    idle = now - aware(run.heartbeat_at)
    if idle > timedelta(seconds=lease_timeout):
        return f"no heartbeat from {run.hostname} for {idle.total_seconds():.0f} s"
    return None


def pid_alive(pid: int) -> bool:
    """Whether process *pid* of this host runs (a zombie does not)."""
    if pid <= 0:
        return False
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def process_start(pid: int) -> float | None:
    """When process *pid* started (Unix time), or ``None`` if that cannot be told."""
    try:
        return float(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


__all__ = [
    "LEASE_TIMEOUT",
    "LOCK_WAIT",
    "PG_LOCK_CLASS",
    "holder_message",
    "locked_message",
    "pg_session_settings",
    "stale_reason",
    "take_lease",
    "take_pg_lock",
]
