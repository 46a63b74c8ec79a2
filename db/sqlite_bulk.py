"""Many rows through one SQLite statement, bound in C when it can be (``db/_sqlite_bulk.c``).

Python's ``executemany`` binds each row's parameters one object at a time through a
tuple; :mod:`db._sqlite_bulk` runs the same statement on the connection's own handle, in
its transaction, binding whole columns in C (about three times less time a row,
``docs/performance.md``, "The SQLite write path"). The statements, the rows and every
error are the same either way: a failed step raises the :mod:`sqlite3` exception that
``executemany`` would (``sqlite_errorcode`` and ``sqlite_errorname`` set), so the
callers' error handling does not change.

The C path is used only where it is known to be safe: the module was built (it needs a C
compiler at install, like :mod:`solver._native`), Python's ``_sqlite3`` is a shared module
whose SQLite the C code can look up, and the handle it reads names the same database
file as the connection itself does (checked on each call, one ``PRAGMA``). Otherwise,
or with ``NEGAGRAPH_SQLITE_BULK=0`` in the environment, ``executemany`` runs.
"""

from __future__ import annotations

import _sqlite3
import os
import sqlite3
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

ENV = "NEGAGRAPH_SQLITE_BULK"
"""Set to ``0`` to bind with ``executemany`` (the fallback, kept as the oracle)."""

_bulk: ModuleType | None
try:
    from db import _sqlite_bulk as _bulk
except ImportError:  # pragma: no cover - no C compiler at install
    _bulk = None

_loaded: bool | None = None

_PRIMARY = {
    1: "SQLITE_ERROR",
    2: "SQLITE_INTERNAL",
    3: "SQLITE_PERM",
    4: "SQLITE_ABORT",
    5: "SQLITE_BUSY",
    6: "SQLITE_LOCKED",
    7: "SQLITE_NOMEM",
    8: "SQLITE_READONLY",
    9: "SQLITE_INTERRUPT",
    10: "SQLITE_IOERR",
    11: "SQLITE_CORRUPT",
    12: "SQLITE_NOTFOUND",
    13: "SQLITE_FULL",
    14: "SQLITE_CANTOPEN",
    15: "SQLITE_PROTOCOL",
    16: "SQLITE_EMPTY",
    17: "SQLITE_SCHEMA",
    18: "SQLITE_TOOBIG",
    19: "SQLITE_CONSTRAINT",
    20: "SQLITE_MISMATCH",
    21: "SQLITE_MISUSE",
    22: "SQLITE_NOLFS",
    23: "SQLITE_AUTH",
    24: "SQLITE_FORMAT",
    25: "SQLITE_RANGE",
    26: "SQLITE_NOTADB",
}
"""SQLite's primary result codes."""

_ERROR_CLASSES: dict[int, type[sqlite3.Error]] = {
    **dict.fromkeys((2, 12), sqlite3.InternalError),
    **dict.fromkeys((1, 3, 4, 5, 6, 8, 9, 10, 13, 14, 15, 16, 17), sqlite3.OperationalError),
    18: sqlite3.DataError,
    **dict.fromkeys((19, 20), sqlite3.IntegrityError),
    **dict.fromkeys((21, 25), sqlite3.InterfaceError),
}
"""The class :mod:`sqlite3` raises for a primary result code (others: DatabaseError)."""


def enabled() -> bool:
    """Whether the C path can be used in this process (built, SQLite found, not turned off
    by ``NEGAGRAPH_SQLITE_BULK=0``)."""
    global _loaded
    if os.environ.get(ENV, "1") == "0" or _bulk is None:
        return False
    if _loaded is None:
        path = getattr(_sqlite3, "__file__", None)  # None: built into the interpreter
        _loaded = isinstance(path, str) and _bulk.load(path)
    return bool(_loaded)


def executemany_columns(cursor: Any, sql: str, columns: Sequence[Sequence[Any]]) -> None:
    """``cursor.executemany(sql, zip(*columns))``: *columns* (equal lengths, one per
    parameter) bound in C where :func:`_native_connection` allows."""
    conn = _native_connection(cursor)
    if conn is None:
        cursor.executemany(sql, zip(*columns, strict=True))
        return
    assert _bulk is not None
    _raise_failure(_bulk.columns(conn, sql, columns))


def executemany_rows(cursor: Any, sql: str, rows: Iterable[Sequence[Any]]) -> None:
    """``cursor.executemany(sql, rows)``, bound in C where :func:`_native_connection`
    allows."""
    conn = _native_connection(cursor)
    if conn is None:
        cursor.executemany(sql, rows)
        return
    assert _bulk is not None
    _raise_failure(_bulk.rows(conn, sql, rows))


def _native_connection(cursor: Any) -> sqlite3.Connection | None:
    """*cursor*'s connection when the C path may run on it: it is a :mod:`sqlite3` one,
    in a transaction, and the handle the C code reads from it names the file the
    connection has open."""
    conn = getattr(cursor, "connection", None)
    if not isinstance(conn, sqlite3.Connection) or not conn.in_transaction or not enabled():
        return None  # (outside a transaction executemany would begin one: keep that)
    assert _bulk is not None
    main = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), None)
    if main is None or _bulk.filename(conn) != main:
        return None
    return conn


def _raise_failure(failure: tuple[int, str] | None) -> None:
    """Raise what :mod:`sqlite3` raises for SQLite's *failure* (extended code, message)."""
    if failure is None:
        return
    code, message = failure
    primary = _PRIMARY.get(code & 0xFF, "SQLITE_ERROR")
    exc = _ERROR_CLASSES.get(code & 0xFF, sqlite3.DatabaseError)(message)
    exc.sqlite_errorcode = code
    exc.sqlite_errorname = next(
        (n for n in dir(sqlite3) if n.startswith(primary) and getattr(sqlite3, n) == code),
        primary,
    )
    raise exc


__all__ = ["ENV", "enabled", "executemany_columns", "executemany_rows"]
