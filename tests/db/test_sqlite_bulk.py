"""The C binding of SQLite bulk statements (:mod:`db.sqlite_bulk`) against Python's own
``executemany``, the oracle: the same rows, the same errors, the same transactions."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from db import sqlite_bulk

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))

VALUES = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=30),
    st.binary(max_size=30),
    st.floats(allow_nan=False),
)


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)  # transactions begun explicitly
    conn.execute("PRAGMA journal_mode = WAL")
    return conn


def contents(conn: sqlite3.Connection, table: str) -> list[tuple[Any, ...]]:
    columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    typed = ", ".join(f"{c}, typeof({c})" for c in columns)
    return conn.execute(f"SELECT {typed} FROM {table} ORDER BY rowid").fetchall()


def test_the_c_path_is_built_and_used_here() -> None:
    """This machine builds the module at install (``make test``): a fallback taken by
    accident would leave the C path untested."""
    assert sqlite_bulk.enabled()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES, VALUES), max_size=40))
def test_columns_and_rows_store_what_executemany_stores(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[Any, Any, Any]]
) -> None:
    conn = connect(tmp_path_factory.mktemp("bulk") / "t.db")
    for table in ("oracle", "by_columns", "by_rows"):
        conn.execute(f"CREATE TABLE {table} (a, b, c)")
    cursor = conn.cursor()
    conn.execute("BEGIN")
    cursor.executemany("INSERT INTO oracle VALUES (?, ?, ?)", rows)
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[], [], []]
    sqlite_bulk.executemany_columns(cursor, "INSERT INTO by_columns VALUES (?, ?, ?)", columns)
    sqlite_bulk.executemany_rows(cursor, "INSERT INTO by_rows VALUES (?, ?, ?)", iter(rows))
    conn.execute("COMMIT")
    expected = contents(conn, "oracle")
    assert contents(conn, "by_columns") == expected
    assert contents(conn, "by_rows") == expected
    conn.close()


def test_ranges_and_keyed_updates(tmp_path: Path) -> None:
    """The shapes the writers pass: a ``range`` of ids, repeated constants, and keyed
    updates from a generator of tuples."""
    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v, w)")
    cursor = conn.cursor()
    conn.execute("BEGIN")
    sqlite_bulk.executemany_columns(
        cursor, "INSERT INTO t VALUES (?, ?, ?)", [range(10, 20), [7] * 10, [None] * 10]
    )
    sqlite_bulk.executemany_rows(
        cursor, "UPDATE t SET w = ?2 WHERE id = ?1", ((i, f"x{i}") for i in range(10, 20, 3))
    )
    conn.execute("COMMIT")
    assert conn.execute("SELECT id, v, w FROM t WHERE w IS NOT NULL").fetchall() == [
        (i, 7, f"x{i}") for i in range(10, 20, 3)
    ]
    assert conn.execute("SELECT count(*), sum(v) FROM t").fetchone() == (10, 70)


def failure(conn: sqlite3.Connection, action: Any) -> tuple[Any, ...]:
    """What *action* raised inside a transaction, whether the transaction is still open
    (SQLite ends it on some errors), and what it then held."""
    conn.execute("BEGIN")
    with pytest.raises(sqlite3.Error) as raised:
        action(conn.cursor())
    held = conn.execute("SELECT count(*) FROM t").fetchone()[0]
    open_ = conn.in_transaction
    if open_:
        conn.execute("ROLLBACK")
    exc = raised.value
    return type(exc), str(exc), exc.sqlite_errorcode, exc.sqlite_errorname, open_, held


def test_a_constraint_failure_is_the_one_executemany_raises(tmp_path: Path) -> None:
    """A duplicate in the middle of the rows: the same IntegrityError (class, message,
    code, name), and the rows before it are in the transaction either way."""
    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (k INTEGER NOT NULL UNIQUE)")
    keys = [1, 2, 3, 2, 5]
    sql = "INSERT INTO t VALUES (?)"
    oracle = failure(conn, lambda c: c.executemany(sql, [(k,) for k in keys]))
    assert oracle[0] is sqlite3.IntegrityError and oracle[3] == "SQLITE_CONSTRAINT_UNIQUE"
    assert oracle[4:] == (True, 3)
    assert failure(conn, lambda c: sqlite_bulk.executemany_columns(c, sql, [keys])) == oracle
    assert failure(conn, lambda c: sqlite_bulk.executemany_rows(c, sql, [(k,) for k in keys])) == (
        oracle
    )


def test_a_full_database_is_the_error_executemany_raises(tmp_path: Path) -> None:
    """SQLite's own "database or disk is full" (a page limit stands in for the disk):
    the same OperationalError, named ``SQLITE_FULL``, which the store turns into its one
    line about a full disk (:func:`db.session.unusable_database_message`)."""
    from db.session import unusable_database_message

    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (v)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 3}")
    sql = "INSERT INTO t VALUES (?)"
    blobs = [bytes(1000)] * 100
    oracle = failure(conn, lambda c: c.executemany(sql, [(b,) for b in blobs]))
    assert oracle[0] is sqlite3.OperationalError and oracle[3] == "SQLITE_FULL"
    assert failure(conn, lambda c: sqlite_bulk.executemany_columns(c, sql, [blobs])) == oracle
    assert oracle[4:] == (False, 0)  # SQLite rolled the transaction back
    conn.execute("BEGIN")
    with pytest.raises(sqlite3.OperationalError) as raised:
        sqlite_bulk.executemany_columns(conn.cursor(), sql, [blobs])
    message = unusable_database_message(f"sqlite:///{tmp_path / 't.db'}", raised.value)
    assert message is not None and "the disk is full" in message


def test_a_bad_statement_and_bad_columns(tmp_path: Path) -> None:
    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (a, b)")
    cursor = conn.cursor()
    conn.execute("BEGIN")
    with pytest.raises(sqlite3.OperationalError, match="no such table: nowhere") as raised:
        sqlite_bulk.executemany_columns(cursor, "INSERT INTO nowhere VALUES (?)", [[1]])
    assert raised.value.sqlite_errorname == "SQLITE_ERROR"
    with pytest.raises(ValueError, match="column 1 has 1 values, column 0 has 2"):
        sqlite_bulk.executemany_columns(cursor, "INSERT INTO t VALUES (?, ?)", [[1, 2], [3]])
    with pytest.raises(ValueError, match="2 parameters, 1 columns given"):
        sqlite_bulk.executemany_columns(cursor, "INSERT INTO t VALUES (?, ?)", [[1]])
    with pytest.raises(TypeError, match="cannot bind a value of type dict"):
        sqlite_bulk.executemany_columns(cursor, "INSERT INTO t VALUES (?, ?)", [[1], [{}]])
    conn.execute("ROLLBACK")
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_outside_a_transaction_executemany_runs(tmp_path: Path) -> None:
    """Python's executemany begins a transaction of its own (the default isolation
    level); the C path would not, so it is not taken there."""
    conn = sqlite3.connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (a)")
    conn.commit()
    sqlite_bulk.executemany_columns(conn.cursor(), "INSERT INTO t VALUES (?)", [[1, 2]])
    assert conn.in_transaction  # begun by executemany
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_the_environment_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sqlite_bulk.ENV, "0")
    assert not sqlite_bulk.enabled()


def test_a_tiered_solve_writes_the_same_database_either_way(tmp_path: Path) -> None:
    """Whole solves, one with the C path and one without (``NEGAGRAPH_SQLITE_BULK=0``):
    every node and edge row equal."""
    dumps = []
    for on in ("1", "0"):
        path = tmp_path / f"c4-{on}.db"
        subprocess.run(
            [NEGAGRAPH, "solve", "connect-four", "-p", "width=4",
             "-p", "height=4", "--full", "--db", f"sqlite:///{path}", "-q"],
            check=True, capture_output=True, env={**os.environ, sqlite_bulk.ENV: on},
        )  # fmt: skip
        conn = sqlite3.connect(path)
        dumps.append(
            (
                conn.execute("SELECT * FROM nodes ORDER BY variant_id, id").fetchall(),
                conn.execute(
                    "SELECT * FROM edges ORDER BY variant_id, parent, move_order"
                ).fetchall(),
            )
        )
        conn.close()
    assert len(dumps[0][0]) == 161_029  # Tromp's count of 4 x 4 positions
    assert dumps[0] == dumps[1]
