"""The API's database: one read-only engine per app, made on first use, and one session
per request (flaskr's ``get_db``/``close_db`` pattern over SQLAlchemy).

The API never writes. Its connections are read-only at the database level
(``make_engine(url, read_only=True)``): SQLite connections run with ``PRAGMA query_only =
ON``, and open the file read-only (``mode=ro``) or as immutable where it or its directory
cannot be written (a read-only file system); PostgreSQL sessions start with
``default_transaction_read_only = on`` and read in ``REPEATABLE READ`` transactions, so one
answer sees one snapshot even while a solve commits in another process. A SQLite file that
does not exist is reported, never created; one that is not a database, a directory or a
truncated file is reported too (:func:`db.session.sqlite_opening`).

Requests that need the database first check that it is at the schema head
(:func:`db.migrate.require_head`); the check is repeated until it succeeds, so upgrading a
database fixes a running server without a restart. ``/api/health`` checks every time.

Single lookups take a faster path than a session: each worker remembers the variants it
has found (a stored variant never changes its id or rules version, and is never deleted;
one not found is looked up again next time, so a solve that creates it is seen at once),
and reads a position with its children in one statement sent straight to the driver on a
pooled connection (:meth:`Database.fetch_positions`). One statement reads one snapshot, so
an answer is consistent even while a solve commits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from flask import Flask, current_app, g
from sqlalchemy import Engine
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Session, sessionmaker

from db import migrate
from db.errors import DatabaseError
from db.records import PositionRecord, VariantRecord
from db.repository import fetch_positions, find_variant_by_name, variant_closure
from db.session import (
    make_engine,
    make_session_factory,
    normalize_url,
    safe_url,
    translate_errors,
)
from solver.game import Game, PositionKey

log = logging.getLogger(__name__)

EXTENSION = "negagraph"
"""Key of the app's :class:`Database` in ``app.extensions``."""

CLOSURE_RECHECK = 1.0
"""Seconds for which a variant read as not closed is taken to stay so (see
:meth:`Database.closed`)."""


def missing_sqlite_file(url: str) -> Path | None:
    """The file of a SQLite *url* if it does not exist (``None`` otherwise, and for
    in-memory databases, URI file names and other databases)."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    name = parsed.database
    if not name or name == ":memory:" or name.startswith("file:"):
        return None
    path = Path(name)
    return None if path.exists() else path


def read_only_engine(url: str) -> Engine:
    """An engine on *url* whose connections cannot write (see
    :func:`db.session.make_engine`'s ``read_only``; PostgreSQL connect and statement
    timeouts included).

    :raises DatabaseError: for a malformed or unsupported URL, or a SQLite file that does
        not exist or cannot be a database.
    """
    if normalize_url(url).get_backend_name() == "postgresql":
        return make_engine(
            url, read_only=True, isolation_level="REPEATABLE READ", pool_pre_ping=True
        )
    return make_engine(url, read_only=True)


class Database:
    """The app's view of its database: the URL, the engine (made on first use), and
    whether the schema was found at the head."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine: Engine | None = None
        self._factory: sessionmaker[Session] | None = None
        self._at_head = False
        self._lock = threading.Lock()
        self._variants: dict[tuple[str, str], VariantRecord] = {}
        self._closure: dict[int, tuple[bool, int, float]] = {}
        """Per variant id: closed, its node count then, and when that was read."""

    def __repr__(self) -> str:
        return f"Database({safe_url(self.url)!r})"

    @property
    def engine(self) -> Engine:
        """The read-only engine, made on first use.

        :raises DatabaseError: if no engine can be made for the URL.
        """
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    engine = read_only_engine(self.url)
                    self._factory = make_session_factory(engine)
                    self._engine = engine
        return self._engine

    def require_head(self) -> None:
        """Check (until it once succeeds) that the database is at the schema head.

        :raises SchemaError: if it is not; the message says how to upgrade it.
        :raises DatabaseError: if it cannot be reached or opened.
        """
        if not self._at_head:
            migrate.require_head(self.engine)
            self._at_head = True

    def session(self) -> Session:
        """A new session on a database known to be at the schema head.

        :raises SchemaError: if the database is not at the head.
        :raises DatabaseError: if it cannot be reached or opened.
        """
        self.require_head()
        assert self._factory is not None
        return self._factory()

    def variant(self, game: str, params: str) -> VariantRecord | None:
        """The stored variant of game *game* with parameters *params* (their canonical
        text, :func:`solver.game.params_text`), or ``None``; remembered once found (a
        variant's row never changes), looked up again while not found. Needs no game
        object, so a variant that is not stored costs one indexed query.

        :raises SchemaError: if the database is not at the head.
        :raises DatabaseError: if it cannot be reached or opened.
        """
        name = (game, params)
        found = self._variants.get(name)
        if found is None:
            self.require_head()
            with self.engine.connect() as conn:
                found = find_variant_by_name(conn, game, params)
            if found is not None:
                self._variants[name] = found
        return found

    def closed(self, variant_id: int, newest_node: int) -> bool:
        """Whether the variant's nodes up to id *newest_node* can never change
        (:func:`db.repository.variant_closure`). A closed graph stays closed for its
        nodes, so that answer is kept for good; "not closed" is read again after
        :data:`CLOSURE_RECHECK` seconds (meanwhile answers are merely not cacheable)."""
        now = time.monotonic()
        entry = self._closure.get(variant_id)
        if entry is not None:
            closed, nodes, read_at = entry
            if closed and newest_node < nodes:
                return True
            if not closed and now - read_at < CLOSURE_RECHECK:
                return False
        with self.engine.connect() as conn:
            closed, nodes = variant_closure(conn, variant_id)
        self._closure[variant_id] = (closed, nodes, now)
        return closed and newest_node < nodes

    def fetch_positions(
        self,
        variant_id: int,
        keys: Collection[PositionKey],
        *,
        chance: bool = False,
        game: Game | None = None,
    ) -> dict[PositionKey, PositionRecord]:
        """The stored records of those *keys* (canonical) of variant *variant_id* that are
        stored, by key (:func:`db.repository.fetch_positions` on a pooled connection;
        *chance*: a game of chance's variant, whose records carry its chance values).
        Up to :data:`db.repository.CHUNK` keys are read in one statement, so from one
        snapshot.

        :raises SchemaError: if the database is not at the head.
        :raises DatabaseError: if it cannot be reached or opened.
        :raises sqlalchemy.exc.DBAPIError: if the driver fails (the API's 503).
        """
        self.require_head()
        engine = self.engine
        dialect = engine.dialect
        try:
            connection = engine.raw_connection()
        except dialect.loaded_dbapi.Error as exc:
            # The pool hands out the driver's own error (not SQLAlchemy's) when it cannot
            # connect: a database that went away under a running server.
            raise sa_exc.DBAPIError.instance(
                "connect",
                None,
                exc,
                dialect.loaded_dbapi.Error,
                dialect=dialect,
                connection_invalidated=True,
            ) from exc
        try:
            cursor = connection.cursor()
            try:
                return fetch_positions(
                    cursor, dialect.paramstyle, variant_id, keys, chance=chance, game=game
                )
            finally:
                cursor.close()
        except dialect.loaded_dbapi.Error as exc:
            if dialect.is_disconnect(exc, connection.dbapi_connection, None):
                connection.invalidate(exc)
            raise sa_exc.DBAPIError.instance(
                "fetch_positions",
                None,
                exc,
                dialect.loaded_dbapi.Error,
                dialect=dialect,
            ) from exc
        finally:
            connection.close()

    def health(self) -> tuple[bool, dict[str, Any]]:
        """Whether the database can serve answers, and what was found: reachability,
        the schema revision against the head, and the problem if there is one."""
        head = migrate.head_revision()
        info: dict[str, Any] = {
            "url": safe_url(self.url),
            "backend": None,
            "reachable": False,
            "read_only": True,
            "schema": {"revision": None, "head": head, "at_head": False},
        }
        try:
            engine = self.engine
            info["backend"] = engine.dialect.name
            revision = migrate.current_revision(engine)
            info["reachable"] = True
            info["schema"]["revision"] = revision
            migrate.require_head(engine)
        except DatabaseError as exc:
            self._at_head = False
            info["problem"] = str(exc)
            return False, info
        except sa_exc.SQLAlchemyError as exc:
            log.error("health check: the database failed", exc_info=exc)
            self._at_head = False
            info["problem"] = f"database {safe_url(self.url)} failed to answer"
            return False, info
        info["schema"]["at_head"] = True
        self._at_head = True
        return True, info

    def dispose(self) -> None:
        """Close every pooled connection (the engine is made again on next use)."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
            self._engine = None
            self._factory = None
            self._at_head = False
            self._variants.clear()


def get_database(app: Flask | None = None) -> Database:
    """The :class:`Database` of *app* (default: the current app)."""
    target = current_app if app is None else app
    database: Database = target.extensions[EXTENSION]
    return database


def get_session() -> Session:
    """The current request's session, opened on first use and closed at teardown.

    :raises SchemaError: if the database is not at the schema head.
    :raises DatabaseError: if it cannot be reached or opened.
    """
    session: Session | None = g.get("db_session")
    if session is None:
        session = get_database().session()
        g.db_session = session
    return session


def close_session(exc: BaseException | None = None) -> None:
    """Close the request's session, if one was opened (ending its read transaction)."""
    session: Session | None = g.pop("db_session", None)
    if session is not None:
        session.close()


def check_database(url: str) -> None:
    """Check, once and without keeping a connection, that the API can serve *url*.

    :raises SchemaError: if the database is not at the schema head.
    :raises DatabaseError: if it does not exist, cannot be reached or opened, or is not a
        (sound) database.
    """
    engine = read_only_engine(url)
    try:
        with translate_errors(engine):
            migrate.require_head(engine)
    finally:
        engine.dispose()


def init_app(app: Flask) -> None:
    """Attach a :class:`Database` for ``app.config["DATABASE_URL"]`` (no connection yet)
    and close each request's session at teardown."""
    app.extensions[EXTENSION] = Database(str(app.config["DATABASE_URL"]))
    app.teardown_appcontext(close_session)


__all__ = [
    "Database",
    "check_database",
    "close_session",
    "get_database",
    "get_session",
    "init_app",
    "missing_sqlite_file",
    "read_only_engine",
]
