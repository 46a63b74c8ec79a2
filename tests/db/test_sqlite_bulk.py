"""The C binding of SQLite bulk statements (:mod:`db.backends.sqlite.bulk`) against Python's own
``executemany``, the oracle: the same rows, the same errors, the same transactions."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from db.backends.sqlite import bulk as sqlite_bulk
from db.backends.sqlite.backend import _FAIL
from solver.values import DEPTH_INF, NEG_INF, POS_INF

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


@pytest.mark.parametrize("count", [255, 256, 257, 2 * 16_384 + 300])
def test_many_rows_a_statement_and_chunks_store_what_executemany_stores(
    tmp_path: Path, count: int
) -> None:
    """Rows in statements of :data:`db.backends.sqlite.bulk.ROWS_PER_INSERT` and one at a time
    for the rest, in chunks between takings of the GIL (16,384 rows), from every kind
    of column the writers pass: integer arrays bound as they are, as NULL beyond their
    spec's limits or as keys, fixed-width bytes arrays as UTF-8 text (numpy pads them
    with NUL bytes), and lists of Python values."""
    rng = np.random.default_rng(count)
    ints = rng.integers(-(2**40), 2**40, count)
    nullable = rng.integers(-5, 6, count)
    keys = rng.integers(0, 2**63 - 1, count, dtype=np.int64)
    keys[:3] = [0, 255, 256]
    texts = np.array([("é" * int(n % 4)).encode() + b"ab"[: int(n % 3)] for n in ints], "S10")
    floats = [float(v) / 7 if v % 3 else None for v in ints.tolist()]
    conn = connect(tmp_path / "t.db")
    for table in ("oracle", "bulk"):
        conn.execute(f"CREATE TABLE {table} (a, b, c, d, e)")
    cursor = conn.cursor()
    conn.execute("BEGIN")
    cursor.executemany(
        "INSERT INTO oracle VALUES (?, ?, ?, ?, ?)",
        zip(
            ints.tolist(),
            [None if v <= -3 or v >= 4 else v for v in nullable.tolist()],
            [k.to_bytes((k.bit_length() + 7) // 8 or 1, "big") for k in keys.tolist()],
            [t.decode() for t in texts.tolist()],
            floats,
            strict=True,
        ),
    )
    sqlite_bulk.executemany_columns(
        cursor,
        "INSERT INTO bulk VALUES (?, ?, ?, ?, ?)",
        [ints, nullable, keys, texts, floats],
        [None, (-3, 4), "key", None, None],
    )
    conn.execute("COMMIT")
    assert contents(conn, "bulk") == contents(conn, "oracle")
    assert sqlite_bulk._multi_insert("INSERT INTO bulk VALUES (?, ?, ?, ?, ?)")[0] == 256


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


def test_or_fail_keeps_what_executemany_keeps_mid_statement(tmp_path: Path) -> None:
    """The store's statements say ``OR FAIL`` (:data:`db.backends.sqlite.backend._FAIL`): a
    duplicate in the middle of a statement of many rows stops there, keeping the rows
    before it in the transaction, exactly as ``executemany``'s one row a statement does
    (under the default ``ABORT`` the whole statement of 256 rows would go)."""
    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (k INTEGER NOT NULL UNIQUE)")
    keys = [*range(600), 300]
    sql = f"INSERT {_FAIL} INTO t VALUES (?)"
    oracle = failure(conn, lambda c: c.executemany(sql, [(k,) for k in keys]))
    assert oracle[3] == "SQLITE_CONSTRAINT_UNIQUE" and oracle[4:] == (True, 600)
    assert failure(conn, lambda c: sqlite_bulk.executemany_columns(c, sql, [keys])) == oracle
    assert failure(conn, lambda c: sqlite_bulk.executemany_rows(c, sql, [(k,) for k in keys])) == (
        oracle
    )


def _bytes_written() -> int:
    """What this process has passed to ``write`` and ``pwrite`` (``wchar``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


@pytest.mark.parametrize("conflict", ["", _FAIL])
def test_or_fail_keeps_no_statement_journal(tmp_path: Path, conflict: str) -> None:
    """Why the store's statements say ``OR FAIL``: rows of random keys under a unique
    index, many a statement, inside a transaction whose pages fit the cache. Under the
    default ``ABORT`` each statement journals the prior content of every page it
    changes, past 64 KiB into a temporary file: megabytes written though nothing is
    committed. Under ``FAIL`` SQLite writes nothing."""
    conn = connect(tmp_path / "t.db")
    conn.execute("PRAGMA cache_size = -65536")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k BLOB NOT NULL)")
    conn.execute("CREATE UNIQUE INDEX t_k ON t (k)")
    rng = np.random.default_rng(7)
    keys = [bytes(k) for k in rng.integers(0, 256, size=(60_000, 8), dtype=np.uint8)]
    sql = f"INSERT {conflict} INTO t VALUES (?, ?)"
    cursor = conn.cursor()
    conn.execute("BEGIN")
    sqlite_bulk.executemany_columns(cursor, sql, [list(range(20_000)), keys[:20_000]])
    before = _bytes_written()
    sqlite_bulk.executemany_columns(cursor, sql, [list(range(20_000, 60_000)), keys[20_000:]])
    written = _bytes_written() - before
    conn.execute("ROLLBACK")
    if conflict:
        assert written < 2**16  # nothing of SQLite's; room for a stray log line
    else:
        assert written > 2**20


def test_the_stores_statements_keep_no_statement_journal() -> None:
    from db.backends.sqlite import backend as sqlite_backend

    for sql in (sqlite_backend._NODE_INSERT, sqlite_backend._EDGE_INSERT):
        assert sql.startswith(f"INSERT {_FAIL} INTO ")
    assert sqlite_backend._UPDATE_STAGED.startswith(f"UPDATE {_FAIL} nodes ")


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


@pytest.mark.parametrize(
    "how",
    [["--full"], [], ["--resident-nodes", "3000"]],
    ids=["tiered", "partial", "partial-evicting"],
)
def test_a_solve_writes_the_same_database_either_way(tmp_path: Path, how: list[str]) -> None:
    """Whole solves, one with the C path and one without (``NEGAGRAPH_SQLITE_BULK=0``):
    every node, edge and commit row equal (a tiered full solve; a partial one, whose
    commits insert and update; one that evicts, whose commits write by stored id)."""
    dumps = []
    for on in ("1", "0"):
        path = tmp_path / f"c4-{on}.db"
        subprocess.run(
            [NEGAGRAPH, "solve", "connect-four", "-p", "width=4", "-p", "height=4", *how,
             "--db", f"sqlite:///{path}", "-q"],
            check=True, capture_output=True, env={**os.environ, sqlite_bulk.ENV: on},
        )  # fmt: skip
        conn = sqlite3.connect(path)
        dumps.append(
            [
                conn.execute(f"SELECT {columns} FROM {table} ORDER BY {order}").fetchall()
                for table, columns, order in (
                    ("nodes", "*", "variant_id, id"),
                    ("edges", "*", "variant_id, parent, move_order"),
                    ("commits", "seq, nodes, edges, expansions, root_low, root_high", "seq"),
                )
            ]
        )
        conn.close()
    nodes, edges, commits = dumps[0]
    assert len(nodes) == 161_029 if how == ["--full"] else len(nodes) > 1000
    assert len(edges) > len(nodes) // 2 and len(commits) > 1
    if how:  # some rows were rewritten after their insert: the update path ran
        assert {row[-1] for row in nodes} != {None}  # expanded_in set
    assert dumps[0] == dumps[1]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=2**63 - 1),
            st.one_of(st.none(), st.integers(min_value=-(2**31), max_value=2**31 - 1)),
            st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
            st.integers(min_value=0, max_value=255),
        ),
        max_size=40,
    )
)
def test_fetch_reads_what_python_reads(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[int, Any, Any, int]]
) -> None:
    """Keys as minimal big-endian blobs, integers of each width, NULLs as the column's
    stand-in: the arrays equal the values Python's cursor returns, converted."""
    from db.rows import key_bytes

    conn = connect(tmp_path_factory.mktemp("fetch") / "t.db")
    conn.execute("CREATE TABLE t (k BLOB, a INTEGER, b INTEGER, c INTEGER)")
    keys = key_bytes([r[0] for r in rows])
    conn.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?)",
        [(k, *r[1:]) for k, r in zip(keys, rows, strict=True)],
    )
    columns: list[tuple[type[np.generic], int, bool]] = [
        (np.int64, 0, True),
        (np.int32, -7, False),
        (np.int64, 99, False),
        (np.uint8, 0, False),
    ]
    arrays = sqlite_bulk.fetch_arrays(
        conn,
        "SELECT k, a, b, c FROM t WHERE rowid > ? ORDER BY rowid",
        (0,),
        columns,
        len(rows) + 1,
    )
    assert arrays is not None
    stored = conn.execute("SELECT k, a, b, c FROM t ORDER BY rowid").fetchall()
    assert arrays[0].tolist() == [int.from_bytes(k, "big") for k, *_ in stored]
    assert arrays[1].tolist() == [-7 if a is None else a for _, a, _, _ in stored]
    assert arrays[2].tolist() == [99 if b is None else b for _, _, b, _ in stored]
    assert arrays[3].tolist() == [c for *_, c in stored]
    assert [a.dtype for a in arrays] == [np.int64, np.int32, np.int64, np.uint8]


def test_fetch_refuses_what_does_not_fit(tmp_path: Path) -> None:
    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (k, v)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(b"\x01", 1), (b"\x02", 2**40)])
    sql = "SELECT k, v FROM t ORDER BY rowid"
    ints = [(np.int64, 0, True), (np.int64, 0, False)]
    with pytest.raises(ValueError, match="more than 1 rows"):
        sqlite_bulk.fetch_arrays(conn, sql, (), ints, 1)
    with pytest.raises(OverflowError, match="does not fit in 4 bytes"):
        sqlite_bulk.fetch_arrays(conn, sql, (), [(np.int64, 0, True), (np.int32, 0, False)], 2)
    conn.execute("INSERT INTO t VALUES (?, 'text')", (b"\x03",))
    with pytest.raises(ValueError, match="column 1 of row 2 is not an integer"):
        sqlite_bulk.fetch_arrays(conn, sql, (), ints, 5)
    conn.execute("UPDATE t SET k = ?, v = 3 WHERE v = 'text'", (bytes(9),))
    with pytest.raises(ValueError, match="column 0 of row 2 is not a key of at most 8 bytes"):
        sqlite_bulk.fetch_arrays(conn, sql, (), ints, 5)
    with pytest.raises(sqlite3.OperationalError, match="no such table: nowhere"):
        sqlite_bulk.fetch_arrays(conn, "SELECT 1, 2 FROM nowhere", (), ints, 5)
    with pytest.raises(ValueError, match="the query has 2 columns, 1 arrays given"):
        sqlite_bulk.fetch_arrays(conn, sql, (), ints[:1], 5)


@pytest.mark.parametrize("bulk", ["1", "0"], ids=["c", "python"])
def test_a_tier_read_back_is_the_same_and_a_missing_row_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: str
) -> None:
    """A solved tier read back (:func:`db.shards.read_tier_nodes` and
    ``read_tier_values``) through either path gives the stored rows; with a row gone, the
    same one-line error."""
    from sqlalchemy import text

    from db.backends import backend_for
    from db.errors import DatabaseError
    from db.session import make_engine
    from db.shards import read_tier_nodes, read_tier_values
    from solver.store import TierRecord
    from solver.values import DEPTH_INF, NEG_INF

    path = tmp_path / "c4.db"
    subprocess.run(
        [NEGAGRAPH, "solve", "connect-four", "-p", "width=4", "-p", "height=3", "--full",
         "--db", f"sqlite:///{path}", "-q"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv(sqlite_bulk.ENV, bulk)
    engine = make_engine(f"sqlite:///{path}")
    backend = backend_for(engine)
    try:
        with engine.connect() as conn:
            vid, tier, ordinal, first, nodes = conn.execute(
                text("SELECT variant_id, tier, ordinal, first_id, nodes FROM tiers WHERE tier = 6")
            ).one()
            record = TierRecord(tier, ordinal, first, nodes, None)
            stored = conn.execute(
                text(
                    'SELECT "key", dist, state, low, high, depth_low, depth_high FROM nodes '
                    "WHERE variant_id = :v AND id >= :a AND id < :b ORDER BY id"
                ),
                {"v": vid, "a": first, "b": first + nodes},
            ).all()
            conn.rollback()  # the reads begin transactions of their own
            got = read_tier_nodes(conn, backend, vid, record, 0, None, written=True)
            values = read_tier_values(conn, backend, vid, record)
            assert got.keys.tolist() == [int.from_bytes(r[0], "big") for r in stored]
            assert got.dist.tolist() == [r[1] for r in stored]
            assert values.low.tolist() == [NEG_INF if r[3] is None else r[3] for r in stored]
            assert values.depth_high.tolist() == [
                DEPTH_INF if r[6] is None else r[6] for r in stored
            ]
            assert nodes > 10 and len({r[3] for r in stored}) > 1  # a tier worth reading
            with conn.begin():
                conn.execute(
                    text("DELETE FROM nodes WHERE variant_id = :v AND id = :i"),
                    {"v": vid, "i": first + 3},
                )
            with pytest.raises(DatabaseError) as raised:
                read_tier_nodes(conn, backend, vid, record, 0, None, written=True)
            assert str(raised.value) == (
                f"a tier's stored positions are not all there ({nodes - 1} of {nodes})"
            )
            with pytest.raises(DatabaseError, match=f"values are not all there .{nodes - 1} of"):
                read_tier_values(conn, backend, vid, record)
    finally:
        engine.dispose()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=2**63 - 1),
            st.sampled_from([NEG_INF, POS_INF, -3, 0, 7, 2**40]),
            st.sampled_from([-1, 0, 5, DEPTH_INF]),
            st.booleans(),
        ),
        max_size=40,
    )
)
def test_array_columns_write_what_their_plain_values_write(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[int, int, int, bool]]
) -> None:
    """Integer arrays with their specs (a key, a bound, a depth, a flag), bound in C,
    store the rows that :func:`db.rows.plain_columns` makes of them for executemany (and
    for PostgreSQL's COPY): keys as minimal big-endian bytes, sentinels as NULL."""
    from db.rows import BOUND_NULLS, DEPTH_NULLS, ArrayChunk, ColumnRows, plain_columns

    conn = connect(tmp_path_factory.mktemp("arrays") / "t.db")
    for table in ("oracle", "by_arrays", "by_rows"):
        conn.execute(f"CREATE TABLE {table} (k, b, d, f)")
    arrays: list[Any] = [
        np.array([r[i] for r in rows], dtype=dtype)
        for i, dtype in enumerate((np.int64, np.int64, np.int32, np.bool_))
    ]
    chunk = ArrayChunk(arrays, ("key", BOUND_NULLS, DEPTH_NULLS, None))
    cursor = conn.cursor()
    conn.execute("BEGIN")
    plain = plain_columns(chunk)
    cursor.executemany("INSERT INTO oracle VALUES (?, ?, ?, ?)", zip(*plain, strict=True))
    sqlite_bulk.executemany_columns(cursor, "INSERT INTO by_arrays VALUES (?, ?, ?, ?)", chunk)
    sqlite_bulk.executemany_rows(
        cursor, "INSERT INTO by_rows VALUES (?, ?, ?, ?)", ColumnRows([chunk] if rows else [])
    )
    conn.execute("COMMIT")
    expected = contents(conn, "oracle")
    assert contents(conn, "by_arrays") == expected
    assert contents(conn, "by_rows") == expected
    assert [r[2] is None for r in expected] == [r[1] in (NEG_INF, POS_INF) for r in rows]
    assert [r[4] is None for r in expected] == [r[2] in (-1, DEPTH_INF) for r in rows]
    assert list(ColumnRows([chunk])) == list(zip(*plain, strict=True))
    # indexing: a row of the right chunk, as iterating gives it
    split = len(rows) // 2
    halves = [ArrayChunk([a[:split] for a in arrays], chunk.specs)]
    halves.append(ArrayChunk([a[split:] for a in arrays], chunk.specs))
    both = ColumnRows(halves)
    listed = list(zip(*plain, strict=True))
    assert [both[i] for i in range(len(rows))] == listed
    assert [both[-i] for i in range(1, len(rows) + 1)] == listed[::-1]
    assert both[1::2] == listed[1::2]
    with pytest.raises(IndexError):
        both[len(rows)]
    conn.close()


def test_array_columns_that_cannot_be_bound(tmp_path: Path) -> None:
    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (a, b)")
    cursor = conn.cursor()
    conn.execute("BEGIN")
    sql = "INSERT INTO t VALUES (?, ?)"
    floats = np.array([1.5, 2.5])  # not integers: bound value by value, as a list would be
    sqlite_bulk.executemany_columns(cursor, sql, [np.array([1, 2]), floats])
    assert conn.execute("SELECT a, b FROM t").fetchall() == [(1, 1.5), (2, 2.5)]
    with pytest.raises(TypeError, match="only a column of integers in an array takes a spec"):
        sqlite_bulk.executemany_columns(cursor, sql, [[1], [2]], [None, "key"])
    with pytest.raises(TypeError, match="a spec is None, .null_low, null_high. or 'key'"):
        sqlite_bulk.executemany_columns(cursor, sql, [np.array([1]), [2]], ["nonsense", None])
    conn.execute("ROLLBACK")
