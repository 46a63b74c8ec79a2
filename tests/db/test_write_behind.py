"""Batches written behind (:func:`db.store.commit.commit_batch`): a thread of their own
writes them while the solver goes on. The database is the one a run that writes every
batch in its own thread (``NEGAGRAPH_WRITE_BEHIND=0``) writes, row for row and commit
for commit, on SQLite and PostgreSQL, evicting or not; a batch that the database refuses
behind the solver's back is the run's error, the run's record keeps what was committed,
and the next run ends where an uninterrupted one does."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, text

import db.shards
from db.errors import DatabaseError
from db.migrate import upgrade
from db.session import make_engine
from db.store import SqlStore
from db.store.behind import WRITE_BEHIND_ENV, WriteBehind
from db.store.writer import Writer
from solver.games import get_game
from solver.negamax import solve
from tests.built_once import shared
from tests.db.test_solve_cli import run, stored_counts

Rows = tuple[list[tuple[Any, ...]], ...]

NODE_SQL = (
    "SELECT id, key, notation, low, high, low_final, high_final, depth_low, depth_high, "
    "state, dist, expanded_in FROM nodes ORDER BY id"
)
EDGE_SQL = "SELECT parent, move_order, child, move FROM edges ORDER BY parent, move_order"
COMMIT_SQL = (
    "SELECT seq, nodes, edges, expansions, root_low, root_high, root_low_final, "
    "root_high_final FROM commits ORDER BY seq"
)
GAME = {"width": 5, "height": 4}
"""connect-four 5 x 4, partial: 74,281 expansions, about 170 batches when evicting."""


def stored(engine: Engine) -> Rows:
    """The nodes, edges and commits, as the driver gives them (tuples: SQLite's flags
    0 and 1, PostgreSQL's False and True, equal as Python compares them)."""
    with engine.connect() as conn:
        cursor = conn.connection.cursor()
        try:
            rows = []
            for q in (NODE_SQL, EDGE_SQL, COMMIT_SQL):
                cursor.execute(q)
                rows.append([tuple(r) for r in cursor.fetchall()])
        finally:
            cursor.close()
        return tuple(rows)


def run_status(url: str) -> Any:
    """``negagraph status --json``'s variant (in this process: what it shows is the
    point, not its process)."""
    code, out, err = run("status", "--db", url, "--json")
    assert code == 0, err
    (variant,) = json.loads(out)["variants"]
    return variant


def sqlite_engine(path: Path) -> Engine:
    upgrade(f"sqlite:///{path}")
    return make_engine(f"sqlite:///{path}")


def solved(engine: Engine, resident: int | None) -> Rows:
    try:
        result = solve(
            get_game("connect-four", **GAME), store=SqlStore(engine), resident_nodes=resident
        )
        assert result.complete and result.value == 0
        return stored(engine)
    finally:
        engine.dispose()


def count_behind_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that write batches behind from now on (while
    *monkeypatch* lasts)."""
    names: list[str] = []
    write = WriteBehind._run

    def counted(self: WriteBehind, *args: Any) -> None:
        names.append(threading.current_thread().name)
        write(self, *args)

    monkeypatch.setattr(WriteBehind, "_run", counted)
    return names


@pytest.fixture
def behind_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that wrote batches behind."""
    return count_behind_threads(monkeypatch)


InLine = tuple[Rows, list[str], int]
"""A solve writing every batch in line, on SQLite: its rows, the names of the threads
that wrote batches behind all the same (none), and its database file's pages."""


def in_line(
    tmp_path_factory: pytest.TempPathFactory, name: str, solve: Callable[[Engine], Rows]
) -> InLine:
    """*solve* run once a session on a new SQLite file, writing in line (the reference
    of the tests that follow, each of which ran it anew)."""

    def build(where: Path) -> InLine:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(WRITE_BEHIND_ENV, "0")
            threads = count_behind_threads(mp)
            rows = solve(sqlite_engine(where / "in-line.db"))
        with sqlite3.connect(where / "in-line.db") as conn:
            pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        return rows, threads, pages

    return shared(tmp_path_factory, f"test_write_behind-{name}", build)


@pytest.fixture(scope="module")
def in_line_partial(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int | None], InLine]:
    """The partial solve written in line, by ``resident`` (built when first asked for)."""
    done: dict[int | None, InLine] = {}

    def get(resident: int | None) -> InLine:
        if resident not in done:
            done[resident] = in_line(
                tmp_path_factory, f"partial-{resident}", lambda e: solved(e, resident)
            )
        return done[resident]

    return get


@pytest.fixture(scope="module")
def in_line_tiered(tmp_path_factory: pytest.TempPathFactory) -> InLine:
    """The tiered solve written in line."""
    return in_line(tmp_path_factory, "tiered", tiered)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("resident", "in_line"), [(None, 1), (3000, 2)], ids=["resident", "evicting"]
)
def test_written_behind_is_what_is_written_in_line(
    db_url: str,
    resident: int | None,
    in_line: int,
    behind_threads: list[str],
    in_line_partial: Callable[[int | None], InLine],
) -> None:
    """Every batch is written behind but the closing pass's and, when the run evicts,
    the one before the first eviction, which rewrites every node (its exact depths)."""
    written, written_behind, _ = in_line_partial(resident)  # (on SQLite, once a session)
    behind = solved(make_engine(db_url), resident)
    batches = len(behind[2])
    assert len(behind_threads) == batches - in_line
    assert threading.main_thread().name not in behind_threads
    assert written_behind == []  # none more
    assert behind == written


def test_a_batch_refused_behind_fails_the_run_and_loses_nothing(
    tmp_path: Path, behind_threads: list[str], in_line_partial: Callable[[int | None], InLine]
) -> None:
    """SQLite's "database or disk is full" (a page limit on every connection stands in
    for the disk) refuses a batch in its writing thread: the solve fails with the one
    line SQLite gives, the run row keeps the figures of the last commit (what the
    tables hold), and a run with room resumes to the database of one uninterrupted run."""
    path = tmp_path / "full.db"
    engine = sqlite_engine(path)
    with sqlite3.connect(path) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]

    @event.listens_for(engine, "connect")
    def small_disk(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages + 400}")

    refused: list[str] = []  # the threads of the batches refused
    write = Writer.batch

    def batch(self: Writer, *args: Any) -> None:
        try:
            write(self, *args)
        except DatabaseError:
            refused.append(threading.current_thread().name)
            raise

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Writer, "batch", batch)
        with pytest.raises(DatabaseError, match="database or disk is full"):
            solve(get_game("connect-four", **GAME), store=SqlStore(engine))
    engine.dispose()
    assert len(refused) == 1 and refused[0] in behind_threads  # refused behind
    (run_row,) = run_status(f"sqlite:///{path}")["runs"]
    nodes, edges = stored_counts(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:
        last = conn.execute(
            "SELECT nodes, edges, expansions FROM commits ORDER BY seq DESC"
        ).fetchone()
    assert 0 < nodes < 100_000
    assert run_row["status"] == "failed"
    assert (run_row["nodes"], run_row["nodes_added"], run_row["edges_added"]) == (
        nodes,
        nodes,
        edges,
    )
    assert run_row["expansions"] == last[2]
    assert (nodes, edges) == last[:2]

    resumed = solved(make_engine(f"sqlite:///{path}"), None)
    uninterrupted = in_line_partial(None)[0]  # (row for row the run writing behind's)
    assert resumed[:2] == uninterrupted[:2]  # nodes and edges (a second run commits apart)


TIERED = {"width": 4, "height": 4}
"""connect-four 4 x 4, a tiered full solve: 17 tiers, 161,029 positions."""


def tiered(engine: Engine) -> Rows:
    try:
        result = solve(
            get_game("connect-four", **TIERED), full=True, store=SqlStore(engine), shard_size=5000
        )
        assert result.complete and result.value == 0
        return stored(engine)
    finally:
        engine.dispose()


def test_tiered_shards_written_behind_are_what_is_written_in_line(
    db_url: str, behind_threads: list[str], in_line_tiered: InLine
) -> None:
    """A tiered solve writes each shard behind (while it solves the next, reading its
    positions apart), into the database a solve writing in line makes, row for row."""
    behind = tiered(make_engine(db_url))
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            solved = conn.execute(text("SELECT count(*) FROM tier_shards WHERE step = 'solve'"))
            shards = solved.scalar_one()
    finally:
        engine.dispose()
    assert shards > 40
    assert len(behind_threads) == shards
    assert all(name.startswith("negagraph shard ") for name in behind_threads)
    written, written_behind, _ = in_line_tiered  # (on SQLite, once a session)
    assert written_behind == []  # none more
    assert behind == written


def test_a_shard_refused_behind_fails_the_run_and_loses_nothing(
    tmp_path: Path, behind_threads: list[str], in_line_tiered: InLine
) -> None:
    """A full disk refusing a shard written behind fails the tiered solve with SQLite's
    line, keeps every shard that landed, and a run with room ends where an uninterrupted
    solve does."""
    whole, _, pages = in_line_tiered  # (row for row the solve writing behind's)
    path = tmp_path / "full.db"
    engine = sqlite_engine(path)

    @event.listens_for(engine, "connect")
    def small_disk(dbapi_connection: Any, _record: Any) -> None:
        # room for the discovery and about half the shards
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages // 2}")

    refused: list[str] = []  # the threads of the shards refused
    write = db.shards.write_shard

    def shard(*args: Any, **kwargs: Any) -> int | None:
        try:
            return write(*args, **kwargs)
        except Exception:  # the driver's error (the store translates it)
            refused.append(threading.current_thread().name)
            raise

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(db.shards, "write_shard", shard)
        with pytest.raises(DatabaseError, match="database or disk is full"):
            tiered(engine)
    assert len(refused) == 1 and refused[0] in behind_threads  # refused behind
    with sqlite3.connect(path) as conn:
        landed = conn.execute(
            "SELECT count(*), sum(nodes) FROM tier_shards WHERE step = 'solve'"
        ).fetchone()
        rows = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
        status = conn.execute("SELECT status FROM solve_runs").fetchone()[0]
        tiers = conn.execute("SELECT sum(nodes) FROM tiers").fetchone()[0]
    assert status == "failed"
    assert landed[0] > 0 and rows == landed[1]  # what landed, whole
    # The run's record counts the positions committed, every tier's: node rows and
    # positions discovered (stored, not solved yet); `negagraph status` shows both (it
    # showed the node rows alone, less than the run's figure, as if some had been lost).
    variant = run_status(f"sqlite:///{path}")
    discovered = tiers - rows
    assert discovered > 0
    assert (variant["nodes"], variant["discovered_unsolved"]) == (rows, discovered)
    assert variant["runs"][0]["nodes"] == rows + discovered
    code, shown, err = run("status", "--db", f"sqlite:///{path}")
    assert code == 0, err
    assert f"{rows + discovered:,} positions discovered, {rows:,} solved" in shown
    behind_threads.clear()
    resumed = tiered(make_engine(f"sqlite:///{path}"))
    assert resumed[:2] == whole[:2]
