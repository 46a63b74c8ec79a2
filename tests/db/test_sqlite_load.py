"""The columnar SQLite loader (db/backends/sqlite/load.py) against the row loaders of db/rows.py:
the same graph, column for column, from real solves and from awkward hand-made rows;
falling back where it cannot vouch for what it read; and the row loaders' errors about
damaged graphs, on both backends."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, text

import db.backends.sqlite.load
import db.store
from db.backends import backend_for
from db.errors import DatabaseError
from db.store import SqlStore
from solver.game import Game
from solver.games import get_game
from solver.graph import Graph
from solver.labels import Labels
from solver.negamax import solve
from solver.store import Batch
from tests.db.helpers import (
    TinyGame,
    assert_consistent,
    build_first_batch,
    build_second_batch,
    progress_of,
    run_options,
)


def columns(graph: Graph) -> dict[str, Any]:
    """Every attribute of *graph*, arrays with their types, labels with their codes."""
    out: dict[str, Any] = {}
    for name, value in vars(graph).items():
        if isinstance(value, array):
            out[name] = (value.typecode, value.tobytes())
        elif isinstance(value, bytearray | list | dict | set):
            out[name] = (type(value).__name__, value)
        elif isinstance(value, Labels):
            out[name] = (value.names, value.data.typecode, value.data.tobytes())
        elif name != "edge_loader":
            out[name] = value
    return out


@pytest.fixture
def rows_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make the columnar loader decline everything (so the row loaders do the work)."""
    monkeypatch.setattr(db.backends.sqlite.load, "load_nodes", lambda *args: None)
    monkeypatch.setattr(db.backends.sqlite.load, "load_edge_counts", lambda *args: False)
    monkeypatch.setattr(db.backends.sqlite.load, "load_edges", lambda *args: False)
    yield


def _variant_id(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT max(id) FROM variants")).scalar_one())


def load_all_ways(engine: Engine) -> dict[str, Graph]:
    """The latest variant loaded with edges, without (deferred), and without then with
    the edges reloaded."""
    vid = _variant_id(engine)
    backend = backend_for(engine)
    with engine.connect() as conn, conn.begin():
        full = backend.load(conn, vid)
        counted = backend.load(conn, vid, edges=False)
        reloaded = backend.load(conn, vid, edges=False)
        backend.reload_edges(conn, vid, reloaded)
    return {"edges": full, "counts": counted, "reloaded": reloaded}


def assert_same_as_rows(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> dict[str, Graph]:
    fast = load_all_ways(engine)
    with monkeypatch.context() as patch:
        patch.setattr(db.backends.sqlite.load, "load_nodes", lambda *args: None)
        patch.setattr(db.backends.sqlite.load, "load_edge_counts", lambda *args: False)
        patch.setattr(db.backends.sqlite.load, "load_edges", lambda *args: False)
        slow = load_all_ways(engine)
    for way, graph in fast.items():
        assert columns(graph) == columns(slow[way]), way
    assert_consistent(fast["edges"])
    return fast


def reads_columnar(engine: Engine) -> bool:
    """Whether the columnar loader vouches for every part of the latest variant."""
    vid = _variant_id(engine)
    with engine.connect() as conn, conn.begin():
        driver = conn.connection.driver_connection
        assert driver is not None
        graph = db.backends.sqlite.load.load_nodes(driver, vid)
        if graph is None or not db.backends.sqlite.load.load_edge_counts(driver, vid, graph):
            return False
        graph.clear_edges()
        return db.backends.sqlite.load.load_edges(driver, vid, graph)


def commit_two_batches(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    build_second_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "complete"))


def execute(engine: Engine, *statements: str) -> None:
    """Run *statements* in one transaction, without foreign key checks."""
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
            for statement in statements:
                conn.exec_driver_sql(statement)
        return
    raw = engine.raw_connection()
    try:
        driver = raw.driver_connection
        assert driver is not None
        driver.execute("PRAGMA foreign_keys = OFF")
        driver.execute("BEGIN")
        for statement in statements:
            driver.execute(statement)
        driver.execute("COMMIT")
        driver.execute("PRAGMA foreign_keys = ON")
    finally:
        raw.close()


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranges of three nodes and about two edges: every boundary case of the chunking."""
    monkeypatch.setattr(db.backends.sqlite.load, "NODE_CHUNK", 3)
    monkeypatch.setattr(db.backends.sqlite.load, "EDGE_CHUNK", 2)


# -- the same graph --------------------------------------------------------------------


SOLVES = [
    pytest.param("tic-tac-toe", {}, True, None, id="tic-tac-toe"),
    pytest.param("tic-tac-toe", {}, True, 700, id="tic-tac-toe-budget"),
    pytest.param("tic-tac-toe", {}, False, 300, id="tic-tac-toe-partial"),
    pytest.param("connect-four", {"width": 4, "height": 3}, True, 2_000, id="connect-four"),
    pytest.param("number-game", {}, True, 300, id="number-game"),
    pytest.param("nap", {}, True, None, id="nap"),
    pytest.param("e-valuate", {}, False, 200, id="e-valuate-partial"),
]


@pytest.mark.parametrize(("name", "params", "full", "budget"), SOLVES)
def test_stored_solves_load_as_the_rows_do(
    sqlite_engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    params: dict[str, Any],
    full: bool,
    budget: int | None,
) -> None:
    game: Game = get_game(name, **params)
    solve(game, full=full, store=SqlStore(sqlite_engine), max_expansions=budget)
    assert reads_columnar(sqlite_engine)
    assert_same_as_rows(sqlite_engine, monkeypatch)


def test_awkward_values_load_as_the_rows_do(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Infinite and negative bounds and depths, terminal nodes, keys of 1, 8 and 26 bytes
    # (so the keys end up a list), the extremes the packing carries, code points in the
    # surrogate range and U+FFFD.
    commit_two_batches(sqlite_engine)
    low, high = 1 - (1 << 19), 0x10FFFF - (1 << 19)
    execute(
        sqlite_engine,
        f"UPDATE nodes SET low = {low}, high = {high}, dist = 55296 WHERE id = 3",
        "UPDATE nodes SET depth_low = 57343, depth_high = 1114110, dist = 1114111 WHERE id = 6",
        "UPDATE nodes SET low = -1, high = -1, depth_low = 0, depth_high = 0 WHERE id = 5",
        "UPDATE nodes SET dist = 65534, depth_low = 65531 WHERE id = 4",
    )
    assert reads_columnar(sqlite_engine)
    loaded = assert_same_as_rows(sqlite_engine, monkeypatch)["edges"]
    assert isinstance(loaded.keys, list) and loaded.keys[5] == 2**64
    assert (loaded.low[3], loaded.high[3], loaded.dist[3]) == (low, high, 55296)
    assert (loaded.depth_low[6], loaded.depth_high[6]) == (57343, 1114110)


@pytest.mark.parametrize(
    "update",
    [
        "low = 589824, high = 589824",  # beyond the packed bounds
        "low = -524288, high = -524288",  # sent as 0, which is NULL: count() tells
        "depth_low = -1",  # the same for depths
        "dist = 65533",  # U+FFFD: it or a value out of range
        "dist = 1114112",
        "depth_high = 3000000000",  # not a 32-bit depth (the row loader refuses it)
    ],
)
def test_values_it_cannot_carry_go_to_the_row_loader(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch, update: str
) -> None:
    commit_two_batches(sqlite_engine)
    execute(sqlite_engine, f"UPDATE nodes SET {update} WHERE id = 1")
    assert not reads_columnar(sqlite_engine)
    try:
        fast = load_all_ways(sqlite_engine)
    except (OverflowError, ValueError) as exc:  # from the row loader's arrays
        with monkeypatch.context() as patch:
            patch.setattr(db.backends.sqlite.load, "load_nodes", lambda *args: None)
            with pytest.raises(type(exc)):
                load_all_ways(sqlite_engine)
        return
    assert fast["edges"].num_nodes == 7
    assert_same_as_rows(sqlite_engine, monkeypatch)


def test_keys_as_the_rows_decode_them(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Keys are minimal big-endian bytes when written; these are not, and must still
    # decode as int.from_bytes does (the long ones fit in 63 bits: keys stay an array).
    commit_two_batches(sqlite_engine)
    execute(
        sqlite_engine,
        "UPDATE nodes SET key = x'000000000000000007' WHERE id = 2",
        "UPDATE nodes SET key = x'00000000000000000000000000000003' WHERE id = 3",
        "UPDATE nodes SET key = x'0005' WHERE id = 5",
        "UPDATE nodes SET key = x'7fffffffffffffff' WHERE id = 6",
    )
    loaded = assert_same_as_rows(sqlite_engine, monkeypatch)["edges"]
    assert isinstance(loaded.keys, array)
    assert [loaded.keys[i] for i in (2, 3, 5, 6)] == [7, 3, 5, 2**63 - 1]
    execute(sqlite_engine, "UPDATE nodes SET key = x'8000000000000000' WHERE id = 6")
    loaded = assert_same_as_rows(sqlite_engine, monkeypatch)["edges"]
    assert isinstance(loaded.keys, list) and loaded.keys[6] == 2**63


@pytest.mark.parametrize("move", ["\x1f", "", "ünï", "a\x1fb"])
def test_move_labels_as_the_rows_read_them(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch, move: str
) -> None:
    commit_two_batches(sqlite_engine)
    with sqlite_engine.begin() as conn:
        conn.execute(
            text("UPDATE edges SET move = :m WHERE parent = 1 AND move_order = 2"), {"m": move}
        )
    loaded = assert_same_as_rows(sqlite_engine, monkeypatch)["edges"]
    assert [loaded.edge_move[e] for e in loaded.children(1)] == ["a", "b", move, "d"]


def test_chunk_boundaries(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch, small_chunks: None
) -> None:
    solve(get_game("tic-tac-toe"), full=True, store=SqlStore(sqlite_engine), max_expansions=500)
    assert reads_columnar(sqlite_engine)
    assert_same_as_rows(sqlite_engine, monkeypatch)


def test_sparse_edges_keep_parent_offsets_within_the_cap(
    sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A partial solve expands few of its nodes, so ranges of parents widen to find enough
    # edges; parents travel as offsets from the range's start, which must stay code
    # points (below 0x110000): MAX_SPAN caps the widening (here at 2 parents).
    monkeypatch.setattr(db.backends.sqlite.load, "MAX_SPAN", 2)
    solve(
        get_game("connect-four", width=4, height=4),
        store=SqlStore(sqlite_engine),
        max_expansions=300,
    )
    assert reads_columnar(sqlite_engine)
    assert_same_as_rows(sqlite_engine, monkeypatch)


def test_empty_variant(sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SqlStore(sqlite_engine)
    graph = store.open(TinyGame(), run_options())
    store.close(progress_of(graph, "stopped"))
    assert reads_columnar(sqlite_engine)
    assert assert_same_as_rows(sqlite_engine, monkeypatch)["edges"].num_nodes == 0


def test_text_comes_back_as_text(sqlite_engine: Engine) -> None:
    # The loader reads text as bytes while it runs; the writer's connection must not.
    commit_two_batches(sqlite_engine)
    store = SqlStore(sqlite_engine)
    graph = store.open(TinyGame(), run_options(full=True))
    try:
        graph.require_edges()
        assert store.writer.conn is not None
        driver = store.writer.conn.connection.driver_connection
        assert driver is not None
        assert driver.execute("SELECT notation FROM nodes").fetchone() == ("p0",)
    finally:
        store.close(progress_of(graph, "stopped"))


# -- damaged graphs: the row loaders' errors, on both backends -------------------------


def _open_full(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options(full=True))
    try:
        graph.require_edges()
    finally:
        store.close(progress_of(graph, "stopped"))


DAMAGE = [
    pytest.param(
        ["DELETE FROM nodes WHERE id = 3"],
        "stored node ids are not contiguous",
        True,
        id="missing-node",
    ),
    pytest.param(
        ["UPDATE nodes SET id = -1 WHERE id = 6"],
        "stored node ids are not contiguous",
        True,
        id="negative-node-id",
    ),
    pytest.param(
        ["UPDATE edges SET child = 7 WHERE parent = 1 AND move_order = 1"],
        "stored edges lead to missing nodes",
        False,
        id="edge-to-missing-node",
    ),
    pytest.param(
        ["UPDATE edges SET move_order = 5 WHERE parent = 1 AND move_order = 1"],
        "stored move orders are not 0, 1, ... per node",
        False,
        id="move-order-gap",
    ),
    pytest.param(
        ["UPDATE edges SET parent = 9 WHERE parent = 4"],
        "stored edges lead (from|to) missing nodes",
        True,
        id="edge-from-missing-node",
    ),
]


@pytest.mark.parametrize(("statements", "message", "at_open"), DAMAGE)
def test_damaged_graphs_raise_the_row_loaders_errors(
    engine: Engine, statements: list[str], message: str, at_open: bool
) -> None:
    commit_two_batches(engine)
    execute(engine, *statements)
    with pytest.raises(DatabaseError, match=message):
        db.store.load_graph(engine, TinyGame())
    if at_open:
        # Full runs load the nodes and edge counts at open, the edges later.
        with pytest.raises(DatabaseError, match=message):
            SqlStore(engine).open(TinyGame(), run_options(full=True))
    else:
        with pytest.raises(DatabaseError, match=message):
            _open_full(engine)
