"""``negagraph sql``: one read-only query, its rows as a table, CSV or JSON, with the
functions the compact layout needs on SQLite (db.sql_functions); both engines."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from db.migrate import upgrade
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve
from tests.db.helpers import pg_database

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))
EMPTY = "..../..../...."


def sql(url: str, query: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NEGAGRAPH, "sql", "--db", url, *options, query],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> str:
    """connect-four 4 x 3 twice: variant 1 compact, variant 2 (tic-tac-toe) a graph."""
    url = f"sqlite:///{tmp_path_factory.mktemp('sql') / 'both.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        c4 = get_game("connect-four", width=4, height=3)
        solve(c4, full=True, store=SqlStore(engine), layout="compact")
        solve(get_game("tic-tac-toe"), full=True, store=SqlStore(engine), tiers=False)
    finally:
        engine.dispose()
    return url


def test_a_value_by_notation_and_the_moves_as_rows(solved: str) -> None:
    game = get_game("connect-four", width=4, height=3)
    done = sql(
        solved,
        "SELECT notation(1, key) AS position, low, high, depth_low FROM compact_1 "
        f"WHERE key = position_key(1, '{EMPTY}')",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"position": EMPTY, "low": 0, "high": 0, "depth_low": 12}]
    moves = sql(
        solved,
        "SELECT m.value ->> 'move' AS move, m.value ->> 'position' AS position, c.low "
        f"FROM json_each(moves(1, position_key(1, '{EMPTY}'))) AS m "
        "JOIN compact_1 AS c ON c.key = m.value ->> 'key' ORDER BY m.value ->> 'order'",
        "--format",
        "csv",
    )
    assert moves.returncode == 0, moves.stderr
    rows = list(csv.reader(io.StringIO(moves.stdout)))
    assert rows[0] == ["move", "position", "low"]
    expected = [(m, game.format(c)) for m, c in game.children(game.initial())]
    assert [(r[0], r[1]) for r in rows[1:]] == expected
    # the oracle: the in-memory solve's bounds of the same moves
    memory = solve(game, full=True)
    assert (memory.low, memory.high) == (0, 0)  # high = max over moves of -low(child)
    assert min(int(r[2]) for r in rows[1:]) == 0


def test_the_functions_read_a_graph_s_blob_keys_too(solved: str) -> None:
    done = sql(solved, "SELECT notation(2, key) FROM nodes WHERE variant_id = 2 AND id = 0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2].strip() == ".../.../..."


def test_an_aligned_table(solved: str) -> None:
    done = sql(solved, "SELECT low, high, count(*) AS n FROM compact_1 GROUP BY 1, 2 ORDER BY 1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["low", "|", "high", "|", "n"]
    assert lines[-1] == "(3 rows)"
    assert len({len(line) for line in lines[2:-1]}) == 1  # aligned


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("DELETE FROM variants", "error: the query failed: attempt to write a readonly database"),
        ("SELEC 1", 'error: the query failed: near "SELEC": syntax error'),
        ("SELECT notation(99, 1)", "no variant 99 in this database"),
    ],
)
def test_bad_queries_fail_in_one_line(solved: str, query: str, message: str) -> None:
    done = sql(solved, query)
    assert done.returncode == 1
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


@pytest.mark.postgres
def test_postgres_reads_and_refuses_writes() -> None:
    with pg_database() as url:
        upgrade(url)
        engine = make_engine(url)
        try:
            solve(
                get_game("connect-four", width=4, height=3),
                full=True,
                store=SqlStore(engine),
                layout="compact",
            )
            with engine.connect() as conn:
                vid = conn.execute(text("SELECT id FROM variants")).scalar_one()
        finally:
            engine.dispose()
        game = get_game("connect-four", width=4, height=3)
        done = sql(
            url,
            f'SELECT low, high FROM compact_{vid} WHERE "key" = {game.initial()}',
            "--format",
            "json",
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [{"low": 0, "high": 0}]
        refused = sql(url, "DELETE FROM variants")
        assert refused.returncode == 1 and "read-only transaction" in refused.stderr
