"""Using negagraph from Python as the README shows: a store on a new database, and a
clear error for a game given by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from db.migrate import current_revision, head_revision
from db.session import make_engine
from db.store import SqlStore
from solver import solve
from solver.games import get_game
from tests.db.helpers import pg_database


def solve_twice(url: str) -> None:
    engine = make_engine(url)
    try:
        r = solve(get_game("tic-tac-toe"), full=True, store=SqlStore(engine))
        assert (r.value, r.complete, r.nodes) == (0, True, 5478)
        assert current_revision(engine) == head_revision()
        again = solve(get_game("tic-tac-toe"), full=True, store=SqlStore(engine))
        assert (again.value, again.expansions) == (0, 0)  # found solved, nothing to do
    finally:
        engine.dispose()


def test_a_sql_store_creates_the_schema_in_a_new_sqlite_file(tmp_path: Path) -> None:
    solve_twice(f"sqlite:///{tmp_path / 'new.db'}")


@pytest.mark.postgres
def test_a_sql_store_creates_the_schema_in_an_empty_postgres_database() -> None:
    with pg_database() as url:
        solve_twice(url)


def test_solve_takes_a_game_not_its_name() -> None:
    with pytest.raises(TypeError, match=r"not its name 'tic-tac-toe'.*get_game\('tic-tac-toe'"):
        solve("tic-tac-toe")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not int"):
        solve(42)  # type: ignore[arg-type]


def test_lookups_from_python_answer_what_the_http_api_answers(tmp_path: Path) -> None:
    from api import create_app
    from api.lookup import SolvedDatabase
    from db.errors import DatabaseError, PositionNotFoundError
    from solver.errors import InvalidPositionError, UnknownGameError

    url = f"sqlite:///{tmp_path / 'ttt.db'}"
    engine = make_engine(url)
    try:
        solve(get_game("tic-tac-toe"), full=True, store=SqlStore(engine))
    finally:
        engine.dispose()
    client = create_app({"TESTING": True, "DATABASE_URL": url}).test_client()
    with SolvedDatabase(url) as db:
        (variant,) = db.variants()
        assert (variant.variant.game, variant.nodes) == ("tic-tac-toe", 5478)
        for p in (".........", "x.o/.../...", "xx./oo./x.o", "xox/oxo/x.."):
            http = client.get("/api/games/tic-tac-toe/positions", query_string={"p": p})
            assert db.position("tic-tac-toe", p) == http.get_json()
            for bound in ("value", "low", "high"):
                http = client.get(
                    "/api/games/tic-tac-toe/line", query_string={"p": p, "bound": bound}
                )
                mine = db.line("tic-tac-toe", p, bound=bound)
                assert mine == {k: v for k, v in http.get_json().items() if k != "max_plies"}
        assert db.position(get_game("tic-tac-toe"), ".........")["value"] == 0
        with pytest.raises(UnknownGameError):
            db.position("tic-tac-to", ".........")
        with pytest.raises(InvalidPositionError):
            db.position("tic-tac-toe", "nonsense")
        with pytest.raises(PositionNotFoundError):
            db.position("connect-four", "..../..../..../....", width=4, height=4)
        with pytest.raises(ValueError, match="bound must be one of"):
            db.line("tic-tac-toe", ".........", bound="middle")
    missing = tmp_path / "missing.db"
    with pytest.raises(DatabaseError, match="does not exist"):
        SolvedDatabase(f"sqlite:///{missing}").variants()
    assert not missing.exists()
