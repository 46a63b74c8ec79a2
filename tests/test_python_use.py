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
