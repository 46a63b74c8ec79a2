"""Many rows through one SQLite statement, bound in C when it can be (``db/_sqlite_bulk.c``).

Python's ``executemany`` binds each row's parameters one object at a time through a
tuple; :mod:`db._sqlite_bulk` runs the same statement on the connection's own handle, in
its transaction, binding whole columns in C (about three times less time a row,
``docs/performance.md``, "The SQLite write path"), and :func:`fetch_arrays` reads a
query's integer columns straight into numpy arrays. The statements, the rows and
SQLite's errors are the same either way: a failed step raises the :mod:`sqlite3`
exception that ``executemany`` would (``sqlite_errorcode`` and ``sqlite_errorname``
set), so the callers' error handling does not change.

The C path is used only where it is known to be safe: the module was built (it needs a C
compiler at install, like :mod:`solver._native`), Python's ``_sqlite3`` is a shared module
whose SQLite the C code can look up, and the handle it reads names the same database
file as the connection itself does (checked on each call, one ``PRAGMA``). Otherwise,
or with ``NEGAGRAPH_SQLITE_BULK=0`` in the environment, ``executemany`` runs.
"""

from __future__ import annotations

import _sqlite3
import os
import re
import sqlite3
from collections.abc import Iterable, Sequence
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from db import rows

ENV = "NEGAGRAPH_SQLITE_BULK"
"""Set to ``0`` to bind with ``executemany`` (the fallback, kept as the oracle)."""
ROWS_PER_INSERT = 256
"""Rows an ``INSERT`` binds a step in C (``INSERT ... VALUES (...), (...), ...``): SQLite's
work a statement (its cursors opened and closed, its end) is shared by that many rows
(docs/performance.md, "Writing behind"), fewer where SQLite allows fewer parameters a
statement (:data:`MAX_PARAMETERS`)."""
MAX_PARAMETERS = 32_766 if sqlite3.sqlite_version_info >= (3, 32) else 999
"""SQLite's default limit of parameters a statement (999 before 3.32.0)."""
_VALUES = re.compile(r"^(INSERT\b.*\bVALUES\s*)(\((?:\s*\?\s*,)*\s*\?\s*\))\s*$", re.S | re.I)

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


def executemany_columns(
    cursor: Any, sql: str, columns: Sequence[Any], specs: Sequence[rows.Spec] | None = None
) -> None:
    """``cursor.executemany(sql, zip(*columns))``: *columns* (equal lengths, one per
    parameter; sequences of values, or integer arrays bound as their *specs* say,
    :data:`db.rows.Spec`; those of a :class:`db.rows.ArrayChunk` by default) bound in C
    where :func:`_native_connection` allows."""
    if specs is None and isinstance(columns, rows.ArrayChunk):
        specs = columns.specs
    conn = _native_connection(cursor)
    if conn is None:
        cursor.executemany(sql, zip(*rows.plain_columns(columns, specs), strict=True))
        return
    assert _bulk is not None
    given = None if specs is None else list(specs)
    many, multi = _multi_insert(sql)
    if many > 1 and len(columns) and len(columns[0]) >= many:
        _raise_failure(_bulk.columns(conn, sql, columns, given, multi, many))
    else:
        _raise_failure(_bulk.columns(conn, sql, columns, given))


@lru_cache(maxsize=64)
def _multi_insert(sql: str) -> tuple[int, str]:
    """*sql* for several rows a step, and how many: ``(1, sql)`` unless it is an
    ``INSERT ... VALUES (?, ...)`` of one row of markers."""
    match = _VALUES.match(sql)
    if match is None:
        return 1, sql
    head, row = match.groups()
    many = ROWS_PER_INSERT
    while many > 1 and many * row.count("?") > MAX_PARAMETERS:
        many //= 2
    return many, head + ", ".join([row] * many)


def executemany_rows(cursor: Any, sql: str, given: Iterable[Sequence[Any]]) -> None:
    """``cursor.executemany(sql, given)``, bound in C where :func:`_native_connection`
    allows (a :class:`db.rows.ColumnRows` as its columns)."""
    conn = _native_connection(cursor)
    if conn is None:
        cursor.executemany(sql, given)
        return
    assert _bulk is not None
    if isinstance(given, rows.ColumnRows):
        for columns in given.chunks:
            _raise_failure(_bulk.columns(conn, sql, columns, list(columns.specs)))
        return
    _raise_failure(_bulk.rows(conn, sql, given))


def fetch_arrays(
    conn: sqlite3.Connection,
    sql: str,
    params: tuple[Any, ...],
    columns: Sequence[tuple[type[np.generic], int, bool]],
    capacity: int,
) -> list[npt.NDArray[Any]] | None:
    """The rows of query *sql* as one array per column, read in C, or ``None`` where the
    C path is not available (the caller reads them through Python). Each column is
    ``(dtype, null, key)``: its integers, *null* for NULL, and a key column's blobs as
    the big-endian integers they spell (at most 8 bytes). The arrays are as long as the
    rows; more than *capacity* rows is a :class:`ValueError`."""
    if not _same_file(conn):
        return None
    assert _bulk is not None
    arrays = [np.empty(capacity, dtype) for dtype, _, _ in columns]
    count, failure = _bulk.fetch(
        conn,
        sql,
        params,
        arrays,
        [null for _, null, _ in columns],
        [key for _, _, key in columns],
    )
    _raise_failure(failure)
    return [a[:count] for a in arrays]


def _native_connection(cursor: Any) -> sqlite3.Connection | None:
    """*cursor*'s connection when the C path may run on it: it is a :mod:`sqlite3` one,
    in a transaction, and the handle the C code reads from it names the file the
    connection has open."""
    conn = getattr(cursor, "connection", None)
    if not isinstance(conn, sqlite3.Connection) or not conn.in_transaction:
        return None  # (outside a transaction executemany would begin one: keep that)
    return conn if _same_file(conn) else None


def _same_file(conn: sqlite3.Connection) -> bool:
    """Whether the C path may run on *conn*: it is enabled, and the handle it reads from
    *conn* names the file *conn* has open."""
    if not enabled():
        return False
    assert _bulk is not None
    main = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), None)
    return main is not None and _bulk.filename(conn) == main


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


__all__ = [
    "ENV",
    "enabled",
    "executemany_columns",
    "executemany_rows",
    "fetch_arrays",
]
