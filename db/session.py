"""Engines and sessions: SQLite (the embedded default, in WAL mode) or PostgreSQL.

The database URL comes from the caller, else the ``NEGAGRAPH_DATABASE_URL`` environment
variable, else :data:`DEFAULT_URL` (``negagraph.db`` in the working directory). Plain
``postgresql://`` URLs use psycopg 3.

SQLite connections are set up so that readers never block the writer and a crash cannot
corrupt the file: write-ahead logging, ``synchronous=NORMAL`` (a power cut may lose the
last commits, never consistency), foreign keys on, a busy timeout, and SQLAlchemy (not the
``sqlite3`` module) emitting ``BEGIN`` so that every transaction, DDL included, is real.
A connection may ask for ``BEGIN IMMEDIATE`` (take the write lock up front, as the solve
store does) with the execution option ``sqlite_begin="IMMEDIATE"``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import URL, Engine, create_engine, event, make_url
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from db.errors import DatabaseError

DEFAULT_URL = "sqlite:///negagraph.db"
"""The database used when neither an explicit URL nor the environment names one."""

URL_ENV = "NEGAGRAPH_DATABASE_URL"
"""The environment variable holding the database URL."""

SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite connection waits for another writer's lock before failing."""

SQLITE_CACHE_KIB = 65_536
"""Page cache per SQLite connection (KiB), enough to keep a large solve's indexes hot."""

_BEGIN_MODES = frozenset({"DEFERRED", "IMMEDIATE", "EXCLUSIVE"})


def database_url(explicit: str | URL | None = None) -> str:
    """The database URL to use: *explicit*, else ``$NEGAGRAPH_DATABASE_URL``, else
    :data:`DEFAULT_URL`.

    >>> database_url("sqlite:///x.db")
    'sqlite:///x.db'
    """
    if explicit is not None and str(explicit):
        if isinstance(explicit, URL):
            return explicit.render_as_string(hide_password=False)
        return explicit
    return os.environ.get(URL_ENV) or DEFAULT_URL


def normalize_url(url: str | URL) -> URL:
    """Parse *url* and pick the drivers negagraph supports (psycopg 3 for PostgreSQL).

    >>> normalize_url("postgresql://u@h/db").render_as_string()
    'postgresql+psycopg://u@h/db'

    :raises DatabaseError: for a malformed URL or a database other than SQLite/PostgreSQL.
    """
    try:
        parsed = make_url(url)
    except (sa_exc.ArgumentError, ValueError) as exc:
        raise DatabaseError(f"invalid database URL {str(url)!r}: {exc}") from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend in ("postgresql", "postgres"):
        if driver not in ("", "psycopg"):
            raise DatabaseError(
                f"unsupported PostgreSQL driver {driver!r} in {safe_url(parsed)}: "
                "use postgresql:// or postgresql+psycopg://"
            )
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        if driver not in ("", "pysqlite"):
            raise DatabaseError(
                f"unsupported SQLite driver {driver!r} in {safe_url(parsed)}: use sqlite:///"
            )
        return parsed
    raise DatabaseError(
        f"unsupported database {backend!r} in {safe_url(parsed)}: "
        "negagraph stores into SQLite (sqlite:///file.db) or PostgreSQL (postgresql://...)"
    )


def safe_url(url: str | URL | Engine) -> str:
    """*url* (or an engine's URL) for messages, with any password hidden."""
    if isinstance(url, Engine):
        url = url.url
    if isinstance(url, str):
        try:
            parsed = make_url(url)
        except (sa_exc.ArgumentError, ValueError):
            return url
    else:
        parsed = url
    return parsed.render_as_string(hide_password=True)


def make_engine(url: str | URL | None = None, **kwargs: Any) -> Engine:
    """An engine for *url* (resolved by :func:`database_url`), configured for negagraph.

    Extra keyword arguments go to :func:`sqlalchemy.create_engine`. No connection is made
    until first use; :func:`check_connection` tries one.

    :raises DatabaseError: for a malformed or unsupported URL.
    """
    parsed = normalize_url(database_url(url))
    try:
        engine = create_engine(parsed, **kwargs)
    except (sa_exc.ArgumentError, ImportError) as exc:
        raise DatabaseError(f"cannot create an engine for {safe_url(parsed)}: {exc}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_on_connect)
        event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def is_negagraph_engine(engine: Engine) -> bool:
    """Whether *engine* was made by :func:`make_engine` (SQLite needs its set-up)."""
    if engine.dialect.name != "sqlite":
        return True
    return event.contains(engine, "begin", _sqlite_on_begin)


def _sqlite_on_connect(dbapi_connection: Any, connection_record: ConnectionPoolEntry) -> None:
    # Let SQLAlchemy emit BEGIN (see _sqlite_on_begin) instead of the sqlite3 module's
    # legacy implicit transactions, which skip DDL and SELECT.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    finally:
        cursor.close()


def _sqlite_on_begin(conn: Connection) -> None:
    mode = str(conn.get_execution_options().get("sqlite_begin", "DEFERRED")).upper()
    if mode not in _BEGIN_MODES:
        raise ValueError(f"sqlite_begin must be one of {sorted(_BEGIN_MODES)}, not {mode!r}")
    conn.exec_driver_sql(f"BEGIN {mode}")


@contextmanager
def translate_errors(engine: Engine | str | URL) -> Iterator[None]:
    """Turn connection-level driver errors into :class:`DatabaseError` naming the URL."""
    try:
        yield
    except (sa_exc.OperationalError, sa_exc.InterfaceError) as exc:
        reason = str(exc.orig).strip() if exc.orig is not None else str(exc)
        raise DatabaseError(f"cannot use database {safe_url(engine)}: {reason}") from exc


def check_connection(engine: Engine) -> None:
    """Connect once to *engine*'s database.

    :raises DatabaseError: if the database is unreachable or cannot be opened.
    """
    with translate_errors(engine), engine.connect():
        pass


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """A session factory bound to *engine* (objects stay usable after commit)."""
    return sessionmaker(bind=engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session that commits if the block succeeds, rolls back if it raises, and is
    closed either way — the unit of work of one command or request."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


__all__ = [
    "DEFAULT_URL",
    "URL_ENV",
    "check_connection",
    "database_url",
    "is_negagraph_engine",
    "make_engine",
    "make_session_factory",
    "normalize_url",
    "safe_url",
    "session_scope",
    "translate_errors",
]
