"""Resume files (:mod:`db.backends.sqlite.resume`): what a full run leaves for its
successor is the graph the database holds, column for column; a file that does not match
the database is ignored, whatever made it stale; and the solve's outcome never depends
on which way a run loaded its graph. (Full runs without tiers: a tiered run reads and
writes the database a tier at a time, and leaves no file.)"""

from __future__ import annotations

import json
import logging
import shutil
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text

from db.backends.sqlite import resume
from db.backends.sqlite.resume import resume_path
from db.migrate import upgrade
from db.session import make_engine
from db.store import SqlStore, load_graph
from solver.games import get_game
from solver.graph import Graph
from solver.keytable import KeyTable
from solver.negamax import solve
from solver.store import MemoryStore
from tests.db.helpers import snapshot
from tests.oracles import ExplicitGame
from tests.solver.test_negamax import graphs

COLUMNS = (
    "keys",
    "state",
    "low",
    "high",
    "low_final",
    "high_final",
    "depth_low",
    "depth_high",
    "dist",
    "child_count",
)
EDGE_COLUMNS = ("first_edge", "edge_parent", "edge_child")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database at schema head, copied for each example."""
    path = tmp_path_factory.mktemp("template") / "empty.db"
    upgrade(f"sqlite:///{path}")
    return path


def fresh_engine(template: Path, where: Path) -> Engine:
    for p in where.parent.glob(where.name + "*"):
        p.unlink()
    shutil.copy(template, where)
    return make_engine(f"sqlite:///{where}")


def read(path: Path) -> tuple[dict[str, Any], Graph]:
    """The resume file's contents, leaving it in place."""
    return resume._read(path)


def assert_same_columns(kept: Graph, stored: Graph) -> None:
    for name in COLUMNS:
        assert bytes(getattr(kept, name)) == bytes(getattr(stored, name)), name
    assert kept.total_edges == stored.total_edges
    if kept.deferred_edges:
        assert kept.num_edges == 0 and set(kept.first_edge) <= {-1}
        return
    for name in EDGE_COLUMNS:
        assert bytes(getattr(kept, name)) == bytes(getattr(stored, name)), name
    assert list(kept.edge_move) == list(stored.edge_move)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    graphs(max_nodes=14),
    st.integers(1, 4),
    st.lists(st.tuples(st.booleans(), st.booleans()), min_size=12, max_size=12),
)
def test_the_file_is_the_stored_graph_column_for_column(
    template: Path,
    tmp_path: Path,
    gl: tuple[list[list[int]], dict[int, int]],
    budget: int,
    steps: list[tuple[bool, bool]],
) -> None:
    # Random graphs, budgets and histories of partial and full runs (partial ones hold
    # edges out of parent order; after a full one, a partial one must read the database),
    # some files dropped (so that the next run reads the database, a full one deferring
    # the edges and writing a file without them). Each run's file must be what the
    # database holds, and the end the graph of the same history in memory.
    game = ExplicitGame(*gl)
    engine = fresh_engine(template, tmp_path / "r.db")
    memory = MemoryStore()
    path = resume_path(engine, 1)
    assert path is not None
    try:
        for step, (full, drop) in enumerate(steps):
            for store in (memory, SqlStore(engine)):
                result = solve(
                    game,
                    full=full,
                    store=store,
                    max_expansions=budget,
                    batch_size=1 + step % 3,
                    tiers=False,
                )
            if result.complete:
                assert not path.exists()
                break
            meta, kept = read(path)
            assert (meta["nodes"], meta["edges"], meta["full"]) == (
                kept.num_nodes,
                kept.total_edges,
                full,
            )
            assert_same_columns(kept, load_graph(engine, game))
            if drop:
                path.unlink()
        else:  # finish it
            for store in (memory, SqlStore(engine)):
                assert solve(game, full=True, store=store, tiers=False).complete
        [expected] = memory.graphs.values()
        assert snapshot(load_graph(engine, game)) == snapshot(expected)
        assert not path.exists()
    finally:
        engine.dispose()


def full_run(engine: Engine, budget: int = 700) -> str:
    return solve(
        get_game("tic-tac-toe"),
        full=True,
        store=SqlStore(engine),
        max_expansions=budget,
        tiers=False,
        batch_size=300,
    ).status


def opened_from_file(engine: Engine, caplog: pytest.LogCaptureFixture) -> bool:
    """Open (and close) a full run; whether it started from the resume file."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="db.store"):
        assert full_run(engine, 0) == "budget"
    return any(r.getMessage().startswith("resuming from") for r in caplog.records)


@pytest.fixture
def tictactoe(template: Path, tmp_path: Path) -> Iterator[tuple[Engine, Path]]:
    """A tic-tac-toe full solve stopped by its budget, its resume file written."""
    engine = fresh_engine(template, tmp_path / "t.db")
    assert full_run(engine) == "budget"
    path = resume_path(engine, 1)
    assert path is not None and path.exists()
    try:
        yield engine, path
    finally:
        engine.dispose()


def finish_and_check(engine: Engine, *, same_ids: bool = True) -> None:
    """Finish the solve with full runs; check it against one in memory (node for node,
    or, after partial runs, which number positions otherwise, position for position)."""
    game = get_game("tic-tac-toe")
    while full_run(engine, 2_000) != "complete":
        pass
    memory = MemoryStore()
    solve(game, full=True, store=memory)
    [expected] = memory.graphs.values()
    stored = load_graph(engine, game)
    if same_ids:
        assert snapshot(stored) == snapshot(expected)
    else:
        assert values_by_key(stored) == values_by_key(expected)


def values_by_key(g: Graph) -> dict[int, tuple[int, ...]]:
    return {
        g.keys[i]: (
            g.low[i],
            g.high[i],
            g.low_final[i],
            g.high_final[i],
            g.depth_low[i],
            g.depth_high[i],
            g.state[i],
            g.child_count[i],
        )
        for i in range(g.num_nodes)
    }


def test_a_matching_file_is_used(
    tictactoe: tuple[Engine, Path], caplog: pytest.LogCaptureFixture
) -> None:
    engine, path = tictactoe
    _, kept = read(path)
    if KeyTable is None:  # sorted arrays: the order spares the next run a sort
        assert kept.key_order is not None
        keys = np.array(kept.keys, dtype=np.int64)
        assert kept.key_order.tolist() == np.argsort(keys, kind="stable").tolist()
    else:  # the C table keeps none
        assert kept.key_order is None
    assert opened_from_file(engine, caplog)
    assert opened_from_file(engine, caplog)  # the run it opened wrote the next one
    finish_and_check(engine)
    assert not path.exists()


def _another_run_came_between(engine: Engine, path: Path) -> None:
    shutil.copy(path, path.with_name("old"))
    assert full_run(engine) == "budget"
    shutil.copy(path.with_name("old"), path)


def _a_node_was_changed(engine: Engine, path: Path) -> None:
    with engine.begin() as conn:
        conn.execute(text("UPDATE nodes SET dist = dist + 1 WHERE id = 0"))


def _a_node_was_added(engine: Engine, path: Path) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO nodes (variant_id, id, state, dist, low_final, high_final, "
                "\"key\", notation) SELECT variant_id, max(id) + 1, 0, 9, 0, 0, x'ffff', 'x' "
                "FROM nodes"
            )
        )


def _the_run_row_was_rewritten(engine: Engine, path: Path) -> None:
    with engine.begin() as conn:
        conn.execute(text("UPDATE solve_runs SET started_at = '2001-01-01 00:00:00.000000'"))


def _the_run_recorded_other_counts(engine: Engine, path: Path) -> None:
    with engine.begin() as conn:
        conn.execute(text("UPDATE solve_runs SET edges = edges + 1"))


def _the_file_is_truncated(engine: Engine, path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _the_file_is_corrupted(engine: Engine, path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside a column: its zip checksum fails
    path.write_bytes(bytes(data))


def _the_file_is_from_another_format(engine: Engine, path: Path) -> None:
    with np.load(path, allow_pickle=False) as data:
        columns = {k: data[k] for k in data.files}
    meta = json.loads(str(columns.pop("meta")))
    meta["format"] = resume.FORMAT + 1
    with open(path, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **columns)


@pytest.mark.parametrize(
    "stale",
    [
        _another_run_came_between,
        _a_node_was_changed,
        _a_node_was_added,
        _the_run_row_was_rewritten,
        _the_run_recorded_other_counts,
        _the_file_is_truncated,
        _the_file_is_corrupted,
        _the_file_is_from_another_format,
    ],
    ids=lambda f: f.__name__.strip("_").replace("_", " "),
)
def test_a_stale_or_damaged_file_is_ignored(
    tictactoe: tuple[Engine, Path], caplog: pytest.LogCaptureFixture, stale: Any
) -> None:
    engine, path = tictactoe
    stale(engine, path)
    assert path.exists()
    assert not opened_from_file(engine, caplog)
    assert any(
        "resume file" in r.getMessage() or "not resuming" in r.getMessage() for r in caplog.records
    ), [r.getMessage() for r in caplog.records]
    if stale is _a_node_was_added:
        with engine.begin() as conn:  # undo it, so that the solve can finish
            conn.execute(text("DELETE FROM nodes WHERE notation = 'x'"))
    if stale is _a_node_was_changed:
        with engine.begin() as conn:
            conn.execute(text("UPDATE nodes SET dist = dist - 1 WHERE id = 0"))
    finish_and_check(engine)


def test_a_partial_run_reads_the_database_after_a_full_one(
    tictactoe: tuple[Engine, Path], caplog: pytest.LogCaptureFixture
) -> None:
    # A full run's expansions are not in the nodes' rows yet: a partial run that took
    # its file would never write them. It reads the database, then leaves its own file.
    engine, path = tictactoe
    leftover = path.with_name(path.name + ".tmp-99999")  # a writer killed mid-write
    leftover.write_bytes(b"half a file")
    game = get_game("tic-tac-toe")
    with caplog.at_level(logging.INFO, logger="db.store"):
        solve(game, store=SqlStore(engine), max_expansions=5)
    assert any(
        "written by a full run, and this one is partial" in r.getMessage() for r in caplog.records
    )
    assert not leftover.exists()
    meta, kept = read(path)
    assert meta["full"] is False
    assert_same_columns(kept, load_graph(engine, game))
    with engine.connect() as conn:  # the rows the full run left behind are rewritten
        assert (
            conn.execute(
                text(
                    "SELECT count(*) FROM nodes AS n WHERE n.state = 0 AND EXISTS (SELECT 1 FROM "
                    "edges AS e WHERE e.variant_id = n.variant_id AND e.parent = n.id)"
                )
            ).scalar_one()
            == 0
        )
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="db.store"):
        solve(game, store=SqlStore(engine), max_expansions=5)  # partial after partial
    assert any(r.getMessage().startswith("resuming from") for r in caplog.records)
    assert opened_from_file(engine, caplog)  # full after partial
    finish_and_check(engine, same_ids=False)


def test_a_failed_run_writes_none(tictactoe: tuple[Engine, Path]) -> None:
    engine, path = tictactoe
    game = get_game("tic-tac-toe")
    calls = 0
    real = game.children

    def failing(key: int) -> Any:
        nonlocal calls
        calls += 1
        if calls > 50:
            raise RuntimeError("the game broke")
        return real(key)

    game.children = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        solve(game, full=True, store=SqlStore(engine), batch_size=20, tiers=False)
    assert not path.exists()
    finish_and_check(engine)


def test_keys_beyond_64_bits_are_not_written(tmp_path: Path) -> None:
    graph = Graph()
    graph.add_node(1 << 70, 0, None)
    assert not resume.write(tmp_path / "x", graph, {})
    assert not (tmp_path / "x").exists()


def test_an_unwritable_place_costs_only_a_warning(
    tictactoe: tuple[Engine, Path], caplog: pytest.LogCaptureFixture
) -> None:
    engine, path = tictactoe
    path.unlink()
    path.mkdir()  # the file cannot replace a directory
    with caplog.at_level(logging.WARNING, logger="db.backends.sqlite.resume"):
        assert full_run(engine) == "budget"
    assert any("could not write the resume file" in r.getMessage() for r in caplog.records)
    assert not list(path.parent.glob(path.name + ".tmp-*"))
    path.rmdir()
    finish_and_check(engine)


def test_only_sqlite_files_get_resume_files(tmp_path: Path) -> None:
    assert resume_path(make_engine(f"sqlite:///{tmp_path / 'a.db'}"), 3) == Path(
        f"{tmp_path / 'a.db'}.resume-3"
    )
    assert resume_path(make_engine("sqlite://"), 3) is None
    assert resume_path(make_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test"), 3) is None


def test_the_file_keeps_wide_move_labels(tmp_path: Path) -> None:
    graph = Graph()
    graph.add_node(0, 0, None)
    children = []
    for i in range(300):  # more than 256 distinct labels: two bytes each
        children.append((f"m{i}", graph.add_node(i + 1, 1, 0)))
    graph.set_children(0, children)
    graph.mark_committed()
    assert resume.write(tmp_path / "w", graph, {"run_id": 1})
    meta, kept = read(tmp_path / "w")
    assert list(kept.edge_move) == list(graph.edge_move) and kept.edge_move.data.typecode == "H"
    assert list(kept.edge_child) == list(graph.edge_child)
    assert kept.keys == array("q", range(301))


def test_edges_held_out_of_parent_order_are_written_in_it(tmp_path: Path) -> None:
    graph = Graph()
    for k in range(5):
        graph.add_node(k, 0, None)
    graph.set_children(3, [("a", 4), ("b", 0)])  # expanded before node 0
    graph.set_children(0, [("c", 1), ("d", 3)])
    graph.set_children(1, [])
    graph.mark_committed()
    assert resume.write(tmp_path / "o", graph, {})
    _, kept = read(tmp_path / "o")
    assert list(kept.edge_parent) == [0, 0, 3, 3]
    assert list(kept.first_edge) == [0, -1, -1, 2, -1]  # no edges: -1, as loaded
    assert [
        (kept.edge_move[e], kept.edge_child[e]) for n in range(5) for e in kept.children(n)
    ] == [("c", 1), ("d", 3), ("a", 4), ("b", 0)]
