"""The compact layout (db.compact) against the graph layout, the oracle: a tiered full
solve stored as values by key answers every position as the same solve stored as nodes
and edges does — its own fields and its moves, best first, through the API's views, the
HTTP API and ``negagraph query`` — on every game with tiers (chess included), on SQLite
and PostgreSQL, random games with cycles within tiers (hypothesis); kill -9 at every
commit resumes to the same tables; and the refusals."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.orm import Session

from api.views import describe_positions
from db import compact
from db.errors import PositionNotFoundError
from db.models import decode_key
from db.session import make_engine
from db.store import SqlStore
from db.store.writer import CRASH_ENV
from solver.errors import InvalidParameterError, SolveError
from solver.games import get_game
from solver.negamax import solve
from tests.api.helpers import make_app
from tests.db.references import References
from tests.db.test_tiered import (
    TIERED_GAMES,
    RandomTiers,
    _cli,  # connect-four 4 x 3 --full --tiers through the command line
    _cli_in_process,
    _fresh_url,
    full_solve,
    reference_cli,
    reference_solve,
    sqlite_url,
)

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))


def graph_keys(url: str, game: Any) -> list[int]:
    """Every position the graph-layout solve of *game* stored, by id."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(
                text(
                    "SELECT n.key FROM nodes n JOIN variants v ON v.id = n.variant_id "
                    "WHERE v.game = :g ORDER BY n.id"
                ),
                {"g": game.name},
            )
            return [decode_key(k) for (k,) in found]
    finally:
        engine.dispose()


def answers(url: str, game: Any, keys: list[int]) -> list[Any]:
    """What the API's views answer for *keys* (each a model, or the error's text)."""
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            return [
                str(a) if isinstance(a, PositionNotFoundError) else a.model_dump()
                for a in describe_positions(session, game, keys)
            ]
    finally:
        engine.dispose()


def compact_rows(url: str, game: Any) -> list[tuple[Any, ...]]:
    """The compact variant's rows, through its view, by key."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            vid = conn.execute(
                text("SELECT id FROM variants WHERE game = :g"), {"g": game.name}
            ).scalar_one()
            assert compact.layout_of(conn, vid) == compact.COMPACT
            return [
                tuple(r)
                for r in conn.execute(text(f'SELECT * FROM {compact.view(vid)} ORDER BY "key"'))
            ]
    finally:
        engine.dispose()


def node_count(url: str) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM nodes")).scalar_one())
    finally:
        engine.dispose()


def assert_same_answers(graph_url: str, compact_url: str, game: Any) -> list[int]:
    keys = graph_keys(graph_url, game)
    assert keys
    assert answers(compact_url, game, keys) == answers(graph_url, game, keys)
    assert len(compact_rows(compact_url, game)) == len(keys)
    assert node_count(compact_url) == 0  # no node rows, no edges: values by key alone
    return keys


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params"), TIERED_GAMES)
def test_compact_answers_as_the_graph(
    name: str, params: dict[str, Any], tmp_path: Path, references: References
) -> None:
    game = get_game(name, **params)
    graph_url, g = reference_solve(references, tmp_path, "graph.db", name, params, tiers=True)
    compact_url, c = reference_solve(
        references, tmp_path, "compact.db", name, params, tiers=True, layout="compact"
    )
    assert (c.low, c.high, c.depth_low, c.depth_high, c.status) == (
        g.low,
        g.high,
        g.depth_low,
        g.depth_high,
        g.status,
    )
    assert_same_answers(graph_url, compact_url, game)
    for url in (graph_url, compact_url):  # the last commit records the root's bounds
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                last = conn.execute(
                    text("SELECT root_low, root_high FROM commits ORDER BY seq DESC LIMIT 1")
                ).one()
        finally:
            engine.dispose()
        assert tuple(last) == (g.low, g.high), url


@pytest.mark.postgres
def test_compact_on_postgres_answers_as_the_graph_on_sqlite(
    tmp_path: Path, request: pytest.FixtureRequest, references: References
) -> None:
    game = get_game("connect-four", width=4, height=3)
    graph_url, _ = reference_solve(
        references, tmp_path, "graph.db", "connect-four", {"width": 4, "height": 3}, tiers=True
    )
    pg_url = _fresh_url("postgres", tmp_path, request, "unused")
    full_solve(game, pg_url, tiers=True, layout="compact")
    keys = assert_same_answers(graph_url, pg_url, game)
    # the HTTP API too, and a batch of every position
    notation = [game.format(k) for k in keys[:200]]
    bodies = []
    for url in (graph_url, pg_url):
        with make_app(url) as app:
            client = app.test_client()
            one = client.get(
                "/api/games/connect-four/positions",
                query_string={"p": notation[5], "width": 4, "height": 3},
            )
            line = client.get(
                "/api/games/connect-four/line",
                query_string={"p": notation[0], "width": 4, "height": 3},
            )
            batch = client.post(
                "/api/games/connect-four/positions",
                json={"params": {"width": 4, "height": 3}, "positions": notation},
            )
            assert one.status_code == line.status_code == batch.status_code == 200
            bodies.append((one.get_json(), line.get_json(), batch.get_json()))
    assert bodies[1] == bodies[0]


@pytest.mark.slow
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), size=st.integers(2, 40), tiers=st.integers(1, 5))
def test_random_games_with_cycles(tmp_path: Path, seed: int, size: int, tiers: int) -> None:
    game = RandomTiers(seed=seed, size=size, tiers=tiers)
    folder = tmp_path / f"{seed}-{size}-{tiers}"
    folder.mkdir()
    graph_url = sqlite_url(folder, "graph.db")
    compact_url = sqlite_url(folder, "compact.db")
    full_solve(game, graph_url, tiers=True)
    full_solve(game, compact_url, tiers=True, layout="compact")
    assert_same_answers(graph_url, compact_url, game)


def test_a_compact_database_is_small(tmp_path: Path) -> None:
    """connect-four 4 x 4 (161,029 positions): the graph layout's node rows, edges and
    key index take about 100 B a position; the compact layout under 20 B."""
    game = get_game("connect-four", width=4, height=4)
    url = sqlite_url(tmp_path, "compact.db")
    r = full_solve(game, url, tiers=True, layout="compact")
    assert (r.low, r.high, r.nodes) == (0, 0, 161_029)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
            free = conn.exec_driver_sql("PRAGMA freelist_count").scalar_one()
            size = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
    finally:
        engine.dispose()
    assert (pages - free) * size / r.nodes < 20


def test_a_chess_table_gives_back_the_room_its_discovery_freed(
    tmp_path: Path, references: References
) -> None:
    """KQvK (46,599 positions): discovery writes every position once more and deletes it
    tier by tier; a complete compact solve then rebuilds the file where that left more
    than a quarter of its pages free (40% here), so the whole file is under 20 B a
    position. Its values are those of the uncompacted solve (test_compact_answers_as_the_
    graph compares them with the graph layout's)."""
    params = {"material": "KQvK"}
    url, r = reference_solve(
        references, tmp_path, "compact.db", "chess", params, tiers=True, layout="compact"
    )
    path = Path(url.removeprefix("sqlite:///"))
    with closing(sqlite3.connect(path)) as conn:
        pages, free = (
            conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count")
        )
    assert free <= pages // 4, (free, pages)
    assert path.stat().st_size / r.nodes < 20, path.stat().st_size


# -- kill -9 at every commit -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_killed_at_every_commit_resumes_to_the_same_tables(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, references: References
) -> None:
    game = get_game("connect-four", width=4, height=3)
    reference_url = reference_cli(references, tmp_path, "reference.db", "--layout", "compact")
    expected = compact_rows(reference_url, game)
    # 13 tiers: 13 discovery commits, then 13 solving commits; shards inside tiers (the
    # graph layout's test, tests/db/test_tiered.py, kills it at more places)
    crashes = ["commit:1", "commit:13", "shard:20", "commit:20", "commit:26"]
    for crash in crashes if backend == "sqlite" else ["commit:13", "shard:20"]:
        url = _fresh_url(backend, tmp_path, request, f"killed-{crash.replace(':', '-')}.db")
        killed = _cli(url, "--layout", "compact", env={CRASH_ENV: crash})
        assert killed.returncode == -9, killed.stderr
        done = _cli_in_process(url)  # the variant's layout, without saying it again
        assert done.returncode == 0, done.stderr
        assert compact_rows(url, game) == expected, crash
        assert node_count(url) == 0


# -- refusals ------------------------------------------------------------------------------


def test_refusals(tmp_path: Path) -> None:
    c4 = get_game("connect-four", width=4, height=3)
    with pytest.raises(InvalidParameterError, match="compact layout is for tiered full"):
        solve(c4, layout="compact")
    with pytest.raises(InvalidParameterError, match="compact layout is for tiered full"):
        solve(c4, full=True, tiers=False, layout="compact")
    with pytest.raises(InvalidParameterError, match="number-game declares none"):
        solve(get_game("number-game"), full=True, max_expansions=10, layout="compact")
    with pytest.raises(InvalidParameterError, match="layout must be one of graph, compact"):
        solve(c4, full=True, layout="sideways")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="into a database"):
        solve(c4, full=True, layout="compact")  # the in-memory store
    url = sqlite_url(tmp_path, "both.db")
    engine = make_engine(url)
    try:
        solve(c4, full=True, store=SqlStore(engine), tiers=True)  # a graph
        with pytest.raises(SolveError, match="is stored as a graph already"):
            solve(c4, full=True, store=SqlStore(engine), layout="compact")
        tic = get_game("tic-tac-toe")
        solve(tic, full=True, store=SqlStore(engine), layout="compact")
        with pytest.raises(SolveError, match="only solve --full continues it"):
            solve(tic, store=SqlStore(engine))  # a partial solve
        again = solve(tic, full=True, store=SqlStore(engine))  # complete: nothing to do
        assert (again.low, again.high, again.expansions) == (0, 0, 0)
    finally:
        engine.dispose()


def test_query_and_status_on_a_compact_database(tmp_path: Path, references: References) -> None:
    graph_url, _ = reference_solve(references, tmp_path, "graph.db", "tic-tac-toe", {}, tiers=True)
    compact_url, _ = reference_solve(
        references, tmp_path, "compact.db", "tic-tac-toe", {}, tiers=True, layout="compact"
    )
    outputs = []
    for url in (graph_url, compact_url):
        query = subprocess.run(
            [NEGAGRAPH, "query", "tic-tac-toe", "x../.o./...", "--db", url, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert query.returncode == 0, query.stderr
        outputs.append(query.stdout)
    assert outputs[1] == outputs[0]
    status = subprocess.run(
        [NEGAGRAPH, "status", "--db", compact_url], capture_output=True, text=True, timeout=120
    )
    assert status.returncode == 0, status.stderr
    assert "5,478 positions, compact" in status.stdout
    for url, layout in ((graph_url, "graph"), (compact_url, "compact")):
        with make_app(url) as app:
            games = app.test_client().get("/api/games").get_json()["games"]
        (variant,) = next(g for g in games if g["name"] == "tic-tac-toe")["variants"]
        assert (variant["layout"], variant["nodes"]) == (layout, 5478)


def test_the_documented_compact_queries(tmp_path: Path, references: References) -> None:
    """docs/sql.md's queries of a compact variant (variant 3 there) answer on one."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "sql.md").read_text()
    queries = re.findall(r"```sql compact\n(.*?)```", doc, re.S)
    lookups = re.findall(
        r'"(SELECT low, high, depth_low, depth_high FROM compact_3 WHERE key [^"]*)"', doc
    )
    assert queries and len(lookups) == 1
    game = get_game("connect-four", width=4, height=3)
    url, _ = reference_solve(
        references,
        tmp_path,
        "compact.db",
        "connect-four",
        {"width": 4, "height": 3},
        tiers=True,
        layout="compact",
    )
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            counts = conn.execute(text(queries[0].replace("compact_3", "compact_1"))).all()
            assert sum(n for _, _, n in counts) == sum(
                1 for _ in conn.execute(text("SELECT * FROM compact_1"))
            )
            assert {(lo, hi) for lo, hi, _ in counts} == {(-1, -1), (0, 0), (1, 1)}
            sql = lookups[0].replace("compact_3", "compact_1")
            assert "4369" in sql and game.parse("..../..../....") == 4369
            assert tuple(conn.execute(text(sql)).one()) == (0, 0, 12, 12)  # a draw
    finally:
        engine.dispose()
