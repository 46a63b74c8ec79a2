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

A SQLite file is looked at before SQLite opens it (:func:`sqlite_opening`), so that a
directory, a file that is not a SQLite database, a truncated database or a read-only
location gets one precise :class:`~db.errors.DatabaseError`, and so that nothing is
created or modified by a command that only reads. A read-only engine
(``make_engine(url, read_only=True)``) never creates the file nor switches a database to
WAL mode, and its connections are ``query_only``; where the file or its directory is not
writable (a read-only file system, say) it opens the file through SQLite's ``mode=ro``
URI parameter when the database's ``-shm`` file exists, else ``immutable=1``. The WAL
mode is only switched on for an empty database or one holding negagraph's schema, never
in another application's file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

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
        hint = ""
        if "://" not in str(url):  # a file's path, say
            path = str(url)
            hint = f" (a SQLite file is given as sqlite:///{path}" + (
                ")" if path.startswith("/") else ", relative to the current directory)"
            )
        raise DatabaseError(f"invalid database URL {str(url)!r}: {exc}{hint}") from None
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


PG_CONNECT_TIMEOUT_ENV = "NEGAGRAPH_PG_CONNECT_TIMEOUT"
"""The environment variable holding :data:`PG_CONNECT_TIMEOUT` (seconds; 0: wait forever)."""

PG_CONNECT_TIMEOUT = 10
"""Seconds to wait for a PostgreSQL server to accept a connection *and* answer its start-up
handshake, by default. A server that accepts connections but never answers is reported
after this long instead of hanging the command."""

PG_STATEMENT_TIMEOUT_ENV = "NEGAGRAPH_PG_STATEMENT_TIMEOUT"
"""The environment variable holding :data:`PG_STATEMENT_TIMEOUT` (seconds; 0: none)."""

PG_STATEMENT_TIMEOUT = 300
"""Seconds a statement of a *read-only* engine (``query``, ``status``, ``serve``) may run
on PostgreSQL, by default. Writers (``solve``, ``db upgrade``) get none: a solve's commit of
millions of rows may legitimately take minutes."""

PG_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}
"""Client-side TCP keepalives of PostgreSQL connections: a server host that vanished while
the client waits for an answer is noticed within about a minute (30 s idle, then 3 probes
10 s apart) instead of the kernel's two hours."""

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""


def _env_seconds(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise DatabaseError(f"${name} must be a whole number of seconds (0: none), not {raw!r}")
    return value


def pg_connect_timeout() -> int:
    """Seconds to wait for a PostgreSQL server to answer a new connection
    (``$NEGAGRAPH_PG_CONNECT_TIMEOUT``, else :data:`PG_CONNECT_TIMEOUT`; 0: forever)."""
    return _env_seconds(PG_CONNECT_TIMEOUT_ENV, PG_CONNECT_TIMEOUT)


def pg_statement_timeout() -> int:
    """Seconds a read-only engine's statement may run on PostgreSQL
    (``$NEGAGRAPH_PG_STATEMENT_TIMEOUT``, else :data:`PG_STATEMENT_TIMEOUT`; 0: none)."""
    return _env_seconds(PG_STATEMENT_TIMEOUT_ENV, PG_STATEMENT_TIMEOUT)


@dataclass(frozen=True)
class SqliteOpening:
    """How a SQLite file is to be opened (see :func:`sqlite_opening`)."""

    path: Path
    """The database file."""
    uri: str | None
    """A ``file:`` URI to open it through (read-only or immutable), or ``None`` to open
    the path as usual."""


def sqlite_file(url: str | URL) -> Path | None:
    """The file of a SQLite *url*; ``None`` for in-memory databases, URI file names
    (``sqlite:///file:...?uri=true``, opened as given) and other databases."""
    parsed = url if isinstance(url, URL) else normalize_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    name = parsed.database
    if not name or name == ":memory:" or name.startswith("file:") or "uri" in parsed.query:
        return None
    return Path(name)


def _location_problem(path: Path) -> str | None:
    """Why *path* (a file or directory) cannot be written, or ``None`` if it can."""
    if os.access(path, os.W_OK):
        return None
    try:
        read_only_fs = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_fs = False
    return "is on a read-only file system" if read_only_fs else "is not writable"


def _in_use(path: Path) -> bool:
    """Whether this process has the file at *path* open (one of its descriptors in
    ``/dev/fd`` is that file), whoever opened it: :func:`sqlite_opening` does not read such
    a file. Closing a file descriptor of a file drops every POSIX lock the process holds on
    it, SQLite's included (https://sqlite.org/howtocorrupt.html, 2.2): reading the header of
    a database that a connection of the process has open would leave that connection
    unlocked, and another process could then check the write-ahead log into the file, or
    delete it, under it (other processes' readers saw "database disk image is malformed"
    when a solve opened a second connection while its first was writing). Where
    ``/dev/fd`` cannot be listed, ``False``."""
    try:
        found = path.stat()
        fds = os.listdir("/dev/fd")
    except OSError:
        return False
    for fd in fds:
        with suppress(OSError):
            other = os.stat(f"/dev/fd/{fd}")
            if (other.st_dev, other.st_ino) == (found.st_dev, found.st_ino):
                return True
    return False


def _nonempty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _header(path: Path, where: str) -> tuple[bytes, int]:
    """The first 100 bytes of SQLite file *path*, and its size."""
    try:
        with path.open("rb") as file:
            header = file.read(100)
        return header, path.stat().st_size
    except OSError as exc:
        raise DatabaseError(
            f"cannot use database {where}: {str(path)!r} cannot be read: {exc.strerror}"
        ) from None


def sqlite_opening(url: str | URL, *, read_only: bool = False) -> SqliteOpening | None:
    """Look at the SQLite file of *url* before SQLite opens it, and say how to open it.

    Nothing is created or written. ``None`` for URLs that are not SQLite files (see
    :func:`sqlite_file`).

    :param read_only: the caller only reads: the file must exist, and where it or its
        directory cannot be written it is opened read-only (``mode=ro``, when its ``-shm``
        file exists so that SQLite can read the write-ahead log without creating one) or
        as immutable (``immutable=1``, when there is no write-ahead log to read).
        Otherwise a missing file is created by SQLite, and the file and its directory
        must be writable (SQLite writes ``-wal`` and ``-shm`` files beside it).
    :raises DatabaseError: naming the file and what is wrong with it: a directory, not a
        regular file, not a SQLite database, truncated, missing (when *read_only*), in a
        directory that does not exist, or in a place that cannot be written (unless
        *read_only*).
    """
    path = sqlite_file(url)
    if path is None:
        return None
    where = safe_url(url)
    shown = str(path)
    if path.is_dir():
        raise DatabaseError(
            f"cannot use database {where}: {shown!r} is a directory, not a database file"
        )
    if not path.exists():
        return _new_file(path, where, read_only=read_only)
    if not path.is_file():
        raise DatabaseError(f"cannot use database {where}: {shown!r} is not a regular file")
    _check_header(path, where)
    problem = _location_problem(path)
    dir_problem = _location_problem(path.parent)
    if not read_only:
        _refuse_read_only(path, where, problem, dir_problem)
        return SqliteOpening(path, None)
    if problem is None and dir_problem is None:
        return SqliteOpening(path, None)
    return _read_only_opening(path, where, problem, dir_problem)


def _new_file(path: Path, where: str, *, read_only: bool) -> SqliteOpening:
    """How to open *path*, which does not exist: SQLite creates it (see
    :func:`sqlite_opening`)."""
    if read_only:
        raise DatabaseError(
            f"database {where} does not exist (no file {str(path)!r}): create it with "
            f"`negagraph db upgrade --db {where}` or solve into it with "
            f"`negagraph solve GAME --db {where}`"
        )
    parent = path.parent
    if not parent.is_dir():
        raise DatabaseError(
            f"cannot use database {where}: directory {str(parent)!r} does not exist, "
            "so the file cannot be created"
        )
    problem = _location_problem(parent)
    if problem is not None:
        raise DatabaseError(
            f"cannot use database {where}: the file does not exist and directory "
            f"{str(parent)!r} {problem}, so it cannot be created"
        )
    return SqliteOpening(path, None)


def _check_header(path: Path, where: str) -> None:
    """Refuse *path* if it is not a SQLite database, or is truncated (see
    :func:`sqlite_opening`)."""
    shown = str(path)
    # A file this process has open was looked at when first opened: reading it again would
    # unlock it for the connections that have it (see _in_use).
    header, size = (b"", 0) if _in_use(path) else _header(path, where)
    if size <= 0:
        return
    if len(header) < 100 or not header.startswith(SQLITE_HEADER):
        raise DatabaseError(
            f"cannot use database {where}: {shown!r} is not a SQLite database (it does "
            "not start with the SQLite header): give the path of a negagraph database, "
            "or a new file name to create one"
        )
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65_536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96]  # the header's size is current
    if valid and pages * page_size > size and not _nonempty(Path(f"{path}-wal")):
        raise DatabaseError(
            f"cannot use database {where}: {shown!r} is truncated (its header counts "
            f"{pages:,} pages of {page_size:,} bytes, {pages * page_size:,} bytes, but "
            f"the file has {size:,}): restore it from a copy"
        )


def _refuse_read_only(path: Path, where: str, problem: str | None, dir_problem: str | None) -> None:
    """Refuse to write to *path* where it (*problem*) or its directory (*dir_problem*)
    cannot be written."""
    if problem is not None:
        raise DatabaseError(
            f"cannot use database {where} for writing: {str(path)!r} {problem} (it can "
            "still be read: query, status, serve)"
        )
    if dir_problem is not None:
        raise DatabaseError(
            f"cannot use database {where} for writing: its directory {str(path.parent)!r} "
            f"{dir_problem}, and SQLite writes {f'{path.name}-wal'!r} and '{path.name}-shm' "
            "beside the database (it can still be read: query, status, serve)"
        )


def _read_only_opening(
    path: Path, where: str, problem: str | None, dir_problem: str | None
) -> SqliteOpening:
    """How a reader opens *path*, which it (*problem*) or its directory (*dir_problem*)
    cannot write: read-only or immutable (see :func:`sqlite_opening`)."""
    target = quote(str(path.resolve()), safe="/")
    place = (
        f"{str(path)!r} {problem}"
        if problem
        else f"its directory {str(path.parent)!r} {dir_problem}"
    )
    if Path(f"{path}-shm").exists():
        return SqliteOpening(path, f"file:{target}?mode=ro")
    for log_file in (Path(f"{path}-wal"), Path(f"{path}-journal")):
        if _nonempty(log_file):
            raise DatabaseError(
                f"cannot use database {where}: {str(log_file)!r} holds changes not yet in "
                "the database file, which SQLite cannot read without writing beside it, "
                f"and {place}: copy the database together with {log_file.name!r} to a "
                "writable directory"
            )
    return SqliteOpening(path, f"file:{target}?immutable=1")


def make_engine(url: str | URL | None = None, *, read_only: bool = False, **kwargs: Any) -> Engine:
    """An engine for *url* (resolved by :func:`database_url`), configured for negagraph.

    Extra keyword arguments go to :func:`sqlalchemy.create_engine`. No connection is made
    until first use; :func:`check_connection` tries one. Before each new connection a
    SQLite file is looked at (:func:`sqlite_opening`: its errors are raised then);
    PostgreSQL connections time out after :func:`pg_connect_timeout` seconds and use TCP
    keepalives (:data:`PG_KEEPALIVES`).

    :param read_only: the engine only reads: a SQLite file must exist and is opened
        read-only where it cannot be written, is never switched to WAL mode, and its
        connections are ``query_only``; PostgreSQL sessions are read-only and their
        statements time out after :func:`pg_statement_timeout` seconds.
    :raises DatabaseError: for a malformed or unsupported URL, or a timeout setting that
        is not a number.
    """
    parsed = normalize_url(database_url(url))
    if parsed.get_backend_name() == "postgresql":
        kwargs["connect_args"] = _pg_connect_args(parsed, kwargs.get("connect_args"), read_only)
    try:
        engine = create_engine(parsed, **kwargs)
    except (sa_exc.ArgumentError, ImportError) as exc:
        raise DatabaseError(f"cannot create an engine for {safe_url(parsed)}: {exc}") from None
    if engine.dialect.name == "sqlite":
        if sqlite_file(parsed) is not None:
            event.listen(engine, "do_connect", _sqlite_file_connect(parsed, read_only))
        event.listen(
            engine, "connect", _sqlite_on_connect_read if read_only else _sqlite_on_connect
        )
        event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def _pg_connect_args(url: URL, given: Any, read_only: bool) -> dict[str, Any]:
    """psycopg connection arguments: negagraph's defaults, under those of the URL's query
    and of the caller."""
    args: dict[str, Any] = {}
    timeout = pg_connect_timeout()
    if timeout:
        args["connect_timeout"] = timeout
    args.update(PG_KEEPALIVES)
    if read_only:
        options = ["-c default_transaction_read_only=on"]
        statement = pg_statement_timeout()
        if statement:
            options.append(f"-c statement_timeout={statement * 1000}")
        args["options"] = " ".join(options)
    for name in url.query:
        args.pop(name, None)
    args.update(given or {})
    return args


def _sqlite_file_connect(url: URL, read_only: bool) -> Any:
    """A ``do_connect`` hook: look at the file before each new connection opens it
    (:func:`sqlite_opening`), and open it through a ``file:`` URI where that says so."""

    def do_connect(
        dialect: Any, record: ConnectionPoolEntry, cargs: list[Any], cparams: dict[str, Any]
    ) -> None:
        opening = sqlite_opening(url, read_only=read_only)
        if opening is not None and opening.uri is not None:
            cargs[:1] = [opening.uri]
            cparams["uri"] = True

    return do_connect


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
        # WAL is a property of the file: switch it on in a new (empty) database or one of
        # negagraph's, never in another application's file (which is left untouched).
        tables, ours = cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE name = 'alembic_version') "
            "FROM sqlite_master WHERE type = 'table'"
        ).fetchone()
        if tables == 0 or ours:
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    finally:
        cursor.close()


def _sqlite_on_connect_read(dbapi_connection: Any, connection_record: ConnectionPoolEntry) -> None:
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
        cursor.execute("PRAGMA query_only = ON")
    finally:
        cursor.close()


def _sqlite_on_begin(conn: Connection) -> None:
    mode = str(conn.get_execution_options().get("sqlite_begin", "DEFERRED")).upper()
    if mode not in _BEGIN_MODES:
        raise ValueError(f"sqlite_begin must be one of {sorted(_BEGIN_MODES)}, not {mode!r}")
    conn.exec_driver_sql(f"BEGIN {mode}")


_SQLITE_UNUSABLE = {
    "SQLITE_NOTADB": "is not a SQLite database",
    "SQLITE_CORRUPT": "is damaged (SQLite: {reason}): restore it from a copy",
    "SQLITE_CANTOPEN": "cannot be opened (SQLite: {reason})",
    "SQLITE_READONLY": "cannot be written (SQLite: {reason})",
    "SQLITE_IOERR": "cannot be read or written (SQLite: {reason})",
    "SQLITE_FULL": "cannot grow: the disk is full (SQLite: {reason})",
    "SQLITE_PERM": "cannot be accessed (SQLite: {reason})",
}
"""SQLite result codes (primary names) that mean the database file cannot be used, with
what to say about it."""


def unusable_database_message(engine: Engine | str | URL, exc: BaseException) -> str | None:
    """The one-line message for a driver error *exc* that means the database cannot be
    used (unreachable, timed out, not a database, damaged, read-only, disk full...), or
    ``None`` for other errors (a failed statement, a bug)."""
    orig = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    raw = str(orig) if orig is not None else str(exc)
    reason = " ".join(line.strip() for line in raw.splitlines() if line.strip())  # one line
    if isinstance(orig, sqlite3.Error):
        return _sqlite_message(engine, exc, orig, reason)
    if not isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError):
        return None
    return _server_message(engine, orig, reason)


def _sqlite_message(
    engine: Engine | str | URL, exc: BaseException, orig: sqlite3.Error, reason: str
) -> str | None:
    """:func:`unusable_database_message` for SQLite's error *orig*."""
    where = safe_url(engine)
    name = str(getattr(orig, "sqlite_errorname", "") or "")
    primary = next((k for k in _SQLITE_UNUSABLE if name.startswith(k)), None)
    if primary is None:
        if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError):
            return f"cannot use database {where}: {reason}"
        return None
    path = sqlite_file(engine.url if isinstance(engine, Engine) else engine)
    what = "the database" if path is None else repr(str(path))
    problem = _SQLITE_UNUSABLE[primary].format(reason=reason)
    return f"cannot use database {where}: {what} {problem}"


def _server_message(engine: Engine | str | URL, orig: object, reason: str) -> str:
    """:func:`unusable_database_message` for a server's (PostgreSQL's) error *orig*."""
    where = safe_url(engine)
    if type(orig).__name__ == "ConnectionTimeout":  # psycopg.errors.ConnectionTimeout
        parsed = engine.url if isinstance(engine, Engine) else normalize_url(engine)
        server = f"{parsed.host or 'localhost'}:{parsed.port or 5432}"
        return (
            f"cannot use database {where}: the server {server} did not answer within "
            f"{pg_connect_timeout()} s (${PG_CONNECT_TIMEOUT_ENV} sets the limit)"
        )
    if type(orig).__name__ == "QueryCanceled" and "statement timeout" in reason:
        return (
            f"database {where}: a statement ran longer than {pg_statement_timeout()} s "
            f"(${PG_STATEMENT_TIMEOUT_ENV} sets the limit): {reason.splitlines()[0]}"
        )
    return f"cannot use database {where}: {reason}"


@contextmanager
def translate_errors(engine: Engine | str | URL) -> Iterator[None]:
    """Turn driver errors that mean the database cannot be used (see
    :func:`unusable_database_message`) into :class:`DatabaseError` naming the URL."""
    try:
        yield
    except sa_exc.DBAPIError as exc:
        message = unusable_database_message(engine, exc)
        if message is None:
            raise
        raise DatabaseError(message) from exc


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
    "PG_CONNECT_TIMEOUT",
    "PG_CONNECT_TIMEOUT_ENV",
    "PG_STATEMENT_TIMEOUT",
    "PG_STATEMENT_TIMEOUT_ENV",
    "SqliteOpening",
    "URL_ENV",
    "check_connection",
    "database_url",
    "is_negagraph_engine",
    "make_engine",
    "make_session_factory",
    "normalize_url",
    "pg_connect_timeout",
    "pg_statement_timeout",
    "safe_url",
    "session_scope",
    "sqlite_file",
    "sqlite_opening",
    "translate_errors",
    "unusable_database_message",
]
