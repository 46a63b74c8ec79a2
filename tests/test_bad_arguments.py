"""A solve refused for its arguments — a root that does not parse, options that do not
go together — is one ``error:`` line, exit status 1, and creates or changes nothing: no
SQLite file appears, an existing one is left byte for byte, an empty PostgreSQL database
gets no schema. Real ``negagraph`` processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import inspect

from db.session import make_engine
from tests.db.helpers import pg_database
from tests.test_bad_databases import negagraph, one_error_line, snapshot

BAD_ROOT = ["solve", "tic-tac-toe", "--root", "garbage"]
REFUSED = "error: invalid tic-tac-toe position: expected 9 cells, got 7 in 'garbage'"


def test_a_bad_root_creates_no_sqlite_file(tmp_path: Path) -> None:
    line = one_error_line(negagraph(*BAD_ROOT, "--db", f"sqlite:///{tmp_path / 'new.db'}"))
    assert line == REFUSED
    assert snapshot(tmp_path) == {}  # no file, no -wal, no -journal


def test_a_bad_root_leaves_a_database_as_it_was(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ttt.db'}"
    done = negagraph("solve", "tic-tac-toe", "--max-expansions", "5", "--db", url, "-q")
    assert done.returncode == 0, done.stderr
    before = snapshot(tmp_path)  # the database and the budgeted run's resume file
    assert set(before) == {"ttt.db", "ttt.db.resume-1"}
    assert one_error_line(negagraph(*BAD_ROOT, "--db", url)) == REFUSED
    assert snapshot(tmp_path) == before


@pytest.mark.postgres
def test_a_bad_root_gives_an_empty_postgres_database_no_schema() -> None:
    with pg_database() as url:
        assert one_error_line(negagraph(*BAD_ROOT, "--db", url)) == REFUSED
        engine = make_engine(url)
        try:
            assert inspect(engine).get_table_names() == []
        finally:
            engine.dispose()


REFUSED_OPTIONS = [
    (["number-game", "--full"], "number-game has infinitely many positions"),
    (["tic-tac-toe", "--tolerance", "0.1"], "tolerance is for games of chance"),
    (["tic-tac-toe", "--tiers"], "tiers are for full solves (--full)"),
    (["number-game", "--full", "--tiers", "--max-seconds", "1"], "number-game declares no tiers"),
    (["tic-tac-toe", "--workers", "2"], "workers solve the units of a tiered full solve"),
    (["tic-tac-toe", "--full", "--no-tiers", "--workers", "2"], "workers solve the units"),
    (["tic-tac-toe", "--full", "--resident-nodes", "10"], "a resident budget is for partial"),
    (["chess", "--resident-nodes", "10"], "a resident budget is for depth-first partial"),
    (["coin-nim", "--batch-size", "10"], "coin-nim has chance nodes"),
    (["coin-nim", "--full", "--tiers"], "coin-nim has chance nodes"),
]
"""(solve's arguments, the error) of options refused whatever the database holds."""


@pytest.mark.parametrize(("args", "message"), REFUSED_OPTIONS)
def test_options_refused_create_no_sqlite_file(
    tmp_path: Path, args: list[str], message: str
) -> None:
    line = one_error_line(negagraph("solve", *args, "--db", f"sqlite:///{tmp_path / 'new.db'}"))
    assert line.startswith(f"error: {message}"), line
    assert snapshot(tmp_path) == {}


@pytest.mark.postgres
def test_options_refused_give_an_empty_postgres_database_no_schema() -> None:
    with pg_database() as url:
        for args, message in REFUSED_OPTIONS:
            line = one_error_line(negagraph("solve", *args, "--db", url))
            assert line.startswith(f"error: {message}"), line
        engine = make_engine(url)
        try:
            assert inspect(engine).get_table_names() == []
        finally:
            engine.dispose()
