"""Types of the C module ``db/_sqlite_bulk.c`` (see :mod:`db.backends.sqlite.bulk`)."""

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

def load(path: str) -> bool: ...
def filename(conn: sqlite3.Connection) -> str: ...
def columns(
    conn: sqlite3.Connection,
    sql: str,
    columns: Sequence[Sequence[Any]],
    specs: list[Any] | None = None,
    multi_sql: str | None = None,
    many: int = 1,
) -> tuple[int, str] | None: ...
def rows(
    conn: sqlite3.Connection, sql: str, rows: Iterable[Sequence[Any]]
) -> tuple[int, str] | None: ...
def fetch(
    conn: sqlite3.Connection,
    sql: str,
    params: tuple[Any, ...],
    arrays: list[Any],
    nulls: list[int],
    keys: list[bool],
) -> tuple[int, tuple[int, str] | None]: ...
