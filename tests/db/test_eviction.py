"""Bounded-memory partial solves (:mod:`solver.partial.cache`): a run that evicts its graph down to
a few resident nodes after every batch writes the very database a run that keeps
everything writes, node for node and edge for edge — on random cyclic and acyclic graphs
(with the brute-force fixpoint as a second oracle), on real games, split by budgets and
resumed, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, create_engine, inspect, make_url, text

import db.backends.sqlite.keyindex
import solver.partial.cache
import solver.partial.run
import solver.partial.search
from bench.soak import graph_rows, stored_rows
from db.migrate import upgrade
from db.session import make_engine
from db.store import SqlStore
from db.store.writer import CRASH_ENV
from solver.errors import InvalidParameterError
from solver.game import Game
from solver.games import get_game
from solver.memory import MemoryBudget
from solver.negamax import solve
from solver.partial.cache import Cache
from solver.partial.search import NullWindowSearch
from solver.run import SolveResult
from solver.store import MemoryStore
from tests.db.helpers import _admin, pg_database
from tests.db.test_solve_cli import NEGAGRAPH, reference
from tests.oracles import ExplicitGame, brute_bounds
from tests.solver.test_negamax import dags, graphs

Rows = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]

NODE_SQL = (
    "SELECT id, key, low, high, low_final, high_final, depth_low, depth_high, state, dist, "
    "expanded_in FROM nodes ORDER BY id"
)
EDGE_SQL = "SELECT parent, move_order, child, move FROM edges ORDER BY parent, move_order"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database at schema head, copied for each run."""
    path = tmp_path_factory.mktemp("template") / "empty.db"
    upgrade(f"sqlite:///{path}")
    return path


def fresh(template: Path, where: Path) -> Engine:
    for p in where.parent.glob(where.name + "*"):
        p.unlink(missing_ok=True)
    shutil.copy(template, where)
    return make_engine(f"sqlite:///{where}")


def stored(path: Path) -> Rows:
    with sqlite3.connect(path) as conn:
        return conn.execute(NODE_SQL).fetchall(), conn.execute(EDGE_SQL).fetchall()


def stored_pg(engine: Engine) -> Rows:
    with engine.connect() as conn:
        nodes = [tuple(r) for r in conn.execute(text(NODE_SQL))]
        edges = [tuple(r) for r in conn.execute(text(EDGE_SQL))]
    return nodes, edges


@contextmanager
def python_only(on: bool = True) -> Iterator[None]:
    """With *on*, the searches run in Python and the cache looks up every key that is not
    resident (no C loop, no filter of stored keys): the path of a machine without a C
    compiler, which must write the same database."""
    with pytest.MonkeyPatch.context() as mp:
        if on:
            mp.setattr(solver.partial.search, "acyclic_test", None)
            mp.setattr(solver.partial.cache, "_new_filter", lambda: None)
        yield


@contextmanager
def key_ranges(bits: int | None) -> Iterator[None]:
    """With *bits*, SQLite key indexes go by ranges of ``2 ** bits`` ids
    (:mod:`db.backends.sqlite.keyindex`): a variant past one range switches to them, as a
    large solve does past 16,777,216 nodes."""
    with pytest.MonkeyPatch.context() as mp:
        if bits is not None:
            mp.setattr(db.backends.sqlite.keyindex, "RANGE_BITS", bits)
            mp.setattr(db.backends.sqlite.keyindex, "KEY_RANGE", 1 << bits)
        yield


def key_index_names(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB 'nodes_key_*'"
            )
        }


def run(
    game: Game,
    engine: Engine,
    resident: int | None,
    *,
    budgets: list[int | None] | None = None,
    batch_size: int | None = None,
) -> SolveResult:
    """Solve into *engine*, in one run or one per budget of *budgets* (resuming)."""
    result = None
    for budget in budgets or [None]:
        result = solve(
            game,
            store=SqlStore(engine),
            resident_nodes=resident,
            max_expansions=budget,
            batch_size=batch_size,
        )
        if result.complete:
            break
    assert result is not None
    engine.dispose()
    return result


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        graphs(max_nodes=14).map(lambda g: (g, False)),
        dags(max_nodes=16).map(lambda g: (g, True)),
    ),
    st.integers(1, 4),
    st.sampled_from([None, 1, 2]),
    st.booleans(),
    st.sampled_from([None, 1, 2]),
)
def test_eviction_at_every_batch_changes_nothing(
    template: Path,
    tmp_path: Path,
    drawn: tuple[tuple[list[list[int]], dict[int, int]], bool],
    resident: int,
    batch_size: int | None,
    in_python: bool,
    range_bits: int | None,
) -> None:
    # (acyclic games search in C, cache hooks and all, unless in_python; with range_bits
    # the evicting run's key index goes by ranges of 2 or 4 ids, and its lookups of
    # evicted keys ask them all)
    (succ, leaf), acyclic = drawn
    game = ExplicitGame(succ, leaf, acyclic=acyclic)
    plain = run(game, fresh(template, tmp_path / "plain.db"), None, batch_size=batch_size)
    with python_only(in_python), key_ranges(range_bits):
        small = run(game, fresh(template, tmp_path / "small.db"), resident, batch_size=batch_size)
    assert stored(tmp_path / "small.db") == stored(tmp_path / "plain.db")
    # a solved variant's key index is whole (merged back from ranges at the end)
    assert key_index_names(tmp_path / "small.db") == {"nodes_key_1"}
    assert (small.low, small.high, small.low_final, small.high_final) == (
        plain.low,
        plain.high,
        plain.low_final,
        plain.high_final,
    )
    assert (small.nodes, small.edges, small.expansions) == (
        plain.nodes,
        plain.edges,
        plain.expansions,
    )
    # The second oracle: stored bounds are the fixpoint of the stored expansions, and a
    # bound said final is the one full expansion gives.
    nodes, _ = stored(tmp_path / "small.db")
    keys = {row[1]: row for row in nodes}
    expanded = {int.from_bytes(k, "big") for k, row in keys.items() if row[8] == 1}
    lows, highs = brute_bounds(succ, leaf, expanded)
    full_lows, full_highs = brute_bounds(succ, leaf)
    for k, row in keys.items():
        i = int.from_bytes(k, "big")
        low = -math.inf if row[2] is None else row[2]
        high = math.inf if row[3] is None else row[3]
        assert (low, high) == (lows[i], highs[i])
        if row[4]:
            assert low == full_lows[i]
        if row[5]:
            assert high == full_highs[i]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        graphs(max_nodes=14).map(lambda g: (g, False)),
        dags(max_nodes=16).map(lambda g: (g, True)),
    ),
    st.integers(1, 3),
    st.lists(st.integers(1, 3), min_size=1, max_size=12),
)
def test_resumed_runs_end_as_one_uninterrupted_run(
    template: Path,
    tmp_path: Path,
    drawn: tuple[tuple[list[list[int]], dict[int, int]], bool],
    resident: int,
    budgets: list[int],
) -> None:
    # (An acyclic game's runs after the first open their graph with the root alone.)
    (succ, leaf), acyclic = drawn
    game = ExplicitGame(succ, leaf, acyclic=acyclic)
    run(game, fresh(template, tmp_path / "one.db"), resident, batch_size=1)
    run(
        game,
        fresh(template, tmp_path / "split.db"),
        resident,
        budgets=[*budgets, None],
        batch_size=1,
    )
    # (expanded_in aside: it numbers the commits, and each run adds its own closing one)
    split, one = stored(tmp_path / "split.db"), stored(tmp_path / "one.db")
    assert [r[:-1] for r in split[0]] == [r[:-1] for r in one[0]]
    assert split[1] == one[1]


@pytest.mark.parametrize("in_python", [False, True])
@pytest.mark.parametrize(
    ("name", "params", "resident"),
    [
        ("connect-four", {"width": 4, "height": 4}, 300),
        ("tic-tac-toe", {}, 40),
        ("nap", {"n": 9}, 10),
    ],
)
def test_games_under_a_small_budget(
    template: Path,
    tmp_path: Path,
    name: str,
    params: dict[str, Any],
    resident: int,
    in_python: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = get_game(name, **params)
    plain = run(game, fresh(template, tmp_path / "plain.db"), None)
    if not in_python and game.facts.acyclic and solver.partial.search.acyclic_test is not None:
        # the C loop runs the mapped graph's searches (stubs and stored keys by its hooks)
        def python_search(self: NullWindowSearch, limit: int) -> int:
            raise AssertionError("the Python search ran")

        monkeypatch.setattr(NullWindowSearch, "_search_acyclic_py", python_search)
    with python_only(in_python):
        small = run(game, fresh(template, tmp_path / "small.db"), resident)
    assert stored(tmp_path / "small.db") == stored(tmp_path / "plain.db")
    assert small.complete and (small.low, small.high) == (plain.low, plain.high)
    assert small.nodes > 5 * resident  # evicted, many times over


def test_a_large_budget_commits_in_larger_batches_and_stores_the_same(
    template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A budget above BATCH_CAP * BATCH_BUDGET_SHARE nodes takes batches of a share of it
    # once it has evicted (fewer, larger commits into a large index); only the commit
    # numbering differs from an unlimited run's. The cap is made small so that
    # connect-four 4 x 4 shows it.
    monkeypatch.setattr(solver.partial.run, "BATCH_CAP", 16)
    game = get_game("connect-four", width=4, height=4)
    run(game, fresh(template, tmp_path / "plain.db"), None)
    large_run = run(game, fresh(template, tmp_path / "large.db"), 2048)  # batches of 64
    assert large_run.nodes > 3 * 2048  # it evicted
    plain, large = stored(tmp_path / "plain.db"), stored(tmp_path / "large.db")
    assert [r[:-1] for r in large[0]] == [r[:-1] for r in plain[0]]
    assert large[1] == plain[1]
    commits = {}
    for name in ("plain", "large"):
        with sqlite3.connect(tmp_path / f"{name}.db") as conn:
            commits[name] = conn.execute("SELECT count(*) FROM commits").fetchone()[0]
    assert commits["large"] < 0.6 * commits["plain"], commits  # 186 against 349


def test_a_large_memory_limit_gives_sqlite_a_larger_cache_and_log(
    template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under 1 GiB a sixteenth of the limit (as before); from 1 GiB an eighth, at most
    # 1 GiB, and the write-ahead log grows as large between checkpoints: the writer's
    # connection carries both, but for the quarter of the cache that the connection
    # reading while batches are written behind gets.
    assert MemoryBudget(512 * 2**20).store_cache == 32 * 2**20
    assert MemoryBudget(4 * 2**30).store_cache == 512 * 2**20
    assert MemoryBudget(64 * 2**30).store_cache == 2**30
    seen: list[tuple[int, int, int]] = []
    original = SqlStore.limit_cache

    def spy(self: SqlStore, nbytes: int) -> None:
        original(self, nbytes)
        assert self.writer.conn is not None
        with self.writer.conn.begin():
            (cache,) = self.writer.conn.exec_driver_sql("PRAGMA cache_size").one()
            (pages,) = self.writer.conn.exec_driver_sql("PRAGMA wal_autocheckpoint").one()
        (reader,) = self.writer.reading_cursor().execute("PRAGMA cache_size").fetchone()
        seen.append((cache, reader, pages))

    monkeypatch.setattr(SqlStore, "limit_cache", spy)
    engine = fresh(template, tmp_path / "t.db")
    solve(get_game("tic-tac-toe"), store=SqlStore(engine), memory_limit=4 * 2**30)
    assert seen == [(-384 * 1024, -128 * 1024, 512 * 2**20 // 4096)]
    engine.dispose()


def test_the_cache_reads_back_what_it_evicted(template: Path, tmp_path: Path) -> None:
    # The counters show the mechanism at work: evictions, and nodes read back.
    game = get_game("connect-four", width=4, height=4)
    engine = fresh(template, tmp_path / "c.db")
    caches: list[Cache] = []
    original = Cache.__init__

    def spy(self: Cache, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        caches.append(self)

    Cache.__init__ = spy  # type: ignore[method-assign]
    try:
        run(game, engine, 300)
    finally:
        Cache.__init__ = original  # type: ignore[method-assign]
    (cache,) = caches
    assert cache.evictions > 5
    assert cache.loaded > 0


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with pg_database("negagraph_evict") as url:
        yield url


def test_postgresql_writes_the_same(pg_url: str, template: Path, tmp_path: Path) -> None:
    game = get_game("connect-four", width=4, height=4)
    run(game, fresh(template, tmp_path / "plain.db"), None)
    engine = make_engine(pg_url)
    try:
        small = run(game, engine, 300, budgets=[1000, 1500, None])
        assert small.complete
        nodes, edges = stored_pg(engine)
        plain_nodes, plain_edges = stored(tmp_path / "plain.db")
        # expanded_in aside (it numbers commits: three runs here, one there)
        assert [r[:-1] for r in nodes] == [r[:-1] for r in plain_nodes]
        assert edges == plain_edges
    finally:
        engine.dispose()


def test_bad_resident_budgets_are_refused(template: Path, tmp_path: Path) -> None:
    game = get_game("tic-tac-toe")
    with pytest.raises(InvalidParameterError, match="at least 1 node"):
        solve(game, store=SqlStore(fresh(template, tmp_path / "a.db")), resident_nodes=0)
    with pytest.raises(InvalidParameterError, match="into a database"):
        solve(game, store=MemoryStore(), resident_nodes=10)
    with pytest.raises(InvalidParameterError, match="into a database"):
        solve(game, store=SqlStore(fresh(template, tmp_path / "b.db")), full=True, resident_nodes=9)
    chess = get_game("chess", material="KRvK")
    with pytest.raises(InvalidParameterError, match="depth-first"):
        solve(chess, store=SqlStore(fresh(template, tmp_path / "c.db")), resident_nodes=9)


@pytest.mark.slow
def test_killed_evicting_solves_resume_to_the_uninterrupted_graph(db_url: str) -> None:
    # kill -9 under a small resident budget on connect-four 5 x 4 (154 commits in one
    # run; more than 20,000 nodes, so evicting, from the 120th on): after a run's 100th
    # commit, after the next run's 30th (the 130th in all), then at a moment of its own
    # once the database shows the 140th, and after a run's closing pass; each next run
    # loads what was committed and goes on, and the last one ends with the uninterrupted
    # solve's graph, row for row.
    args = ["solve", "connect-four", "-p", "width=5", "-p", "height=4", "--db", db_url]
    args += ["--resident-nodes", "20000", "--json"]
    for step in ("commit:100", "commit:30"):
        done = subprocess.run(
            [NEGAGRAPH, *args], env={**os.environ, CRASH_ENV: step}, capture_output=True,
            text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == -signal.SIGKILL, (step, done.stderr)
    assert latest_commit(db_url) == 130
    proc = subprocess.Popen(
        [NEGAGRAPH, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wait_for_commit(proc, db_url, 140)
    proc.kill()
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=600) == -signal.SIGKILL, err
    assert 140 <= latest_commit(db_url) < 154
    done = subprocess.run(
        [NEGAGRAPH, *args], env={**os.environ, CRASH_ENV: "close"}, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    done = subprocess.run([NEGAGRAPH, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert (r["status"], r["value"], r["nodes"]) == ("complete", 0, 145_900)
    g = reference("connect-four", {"width": 5, "height": 4}, full=False, batch=None)
    assert stored_rows(db_url) == graph_rows(g)


def latest_commit(db_url: str) -> int:
    """The number of the database's latest commit (0 before the first)."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("commits"):
                return 0  # the solve has not made the schema yet
            return int(conn.execute(text("SELECT coalesce(max(seq), 0) FROM commits")).scalar_one())
    finally:
        engine.dispose()


def wait_for_commit(proc: subprocess.Popen[str], db_url: str, seq: int) -> None:
    """Until the solve *proc* has committed its *seq*-th batch (or ended)."""
    deadline = time.monotonic() + 600
    while latest_commit(db_url) < seq and proc.poll() is None:
        assert time.monotonic() < deadline, f"no commit {seq}"
        time.sleep(0.01)


@pytest.mark.parametrize("range_bits", [None, 8])
def test_a_resumed_evicting_run_opens_with_its_root_alone(
    template: Path, tmp_path: Path, range_bits: int | None
) -> None:
    # After a run that closed cleanly, the next one reads back only what its search
    # needs: its first progress (after a batch) holds a few dozen nodes, not the graph.
    # (With range_bits, it finds its root through a key index by range.)
    game = get_game("connect-four", width=4, height=4)
    engine = fresh(template, tmp_path / "lazy.db")
    with key_ranges(range_bits):
        first = solve(game, store=SqlStore(engine), resident_nodes=300, max_expansions=2000)
        assert first.status == "budget" and first.nodes > 3000
        ranged = {"nodes_key_1_ranged"} if range_bits else {"nodes_key_1"}
        assert key_index_names(tmp_path / "lazy.db") == ranged
        resident: list[tuple[int, int]] = []
        result = solve(
            game,
            store=SqlStore(engine),
            resident_nodes=300,
            progress=lambda p: resident.append((p.resident_nodes, p.nodes)),
        )
    engine.dispose()
    assert result.complete
    assert key_index_names(tmp_path / "lazy.db") == {"nodes_key_1"}
    assert resident[0][0] * 10 < first.nodes <= resident[0][1]  # loaded whole: > 3,000
    run(game, fresh(template, tmp_path / "plain.db"), None)
    assert stored(tmp_path / "lazy.db")[1] == stored(tmp_path / "plain.db")[1]
    lazy_nodes, plain_nodes = stored(tmp_path / "lazy.db")[0], stored(tmp_path / "plain.db")[0]
    assert [r[:-1] for r in lazy_nodes] == [r[:-1] for r in plain_nodes]


@pytest.fixture
def fresh_pg_url() -> Iterator[str]:
    with pg_database("negagraph_evict_lost") as url:
        yield url


@pytest.mark.slow
def test_a_lost_server_connection_while_evicting_is_one_line(fresh_pg_url: str) -> None:
    # The server drops the evicting run's connection (pg_terminate_backend) once it is
    # past its 150th commit, evicting and reading back: the run ends with one line and
    # exit 1, its row says failed, and the same command goes on to the uninterrupted
    # solve's graph.
    args = ["solve", "connect-four", "-p", "width=5", "-p", "height=4", "--db", fresh_pg_url]
    args += ["--resident-nodes", "20000", "--json"]
    proc = subprocess.Popen(
        [NEGAGRAPH, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_commit(proc, fresh_pg_url, 150)
    name = make_url(fresh_pg_url).database
    with _admin() as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, (out, err)
    lines = [line for line in err.splitlines() if not line.startswith("progress:")]
    assert lines[-1].startswith(f"error: database {fresh_pg_url}: ") and "Traceback" not in err, err
    engine = create_engine(fresh_pg_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT status FROM solve_runs")).scalar_one() == "failed"
    finally:
        engine.dispose()
    done = subprocess.run([NEGAGRAPH, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "complete"
    g = reference("connect-four", {"width": 5, "height": 4}, full=False, batch=None)
    assert stored_rows(fresh_pg_url) == graph_rows(g)
