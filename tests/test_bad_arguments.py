"""A solve refused for its arguments — a root that does not parse — is one ``error:``
line, exit status 1, and creates or changes nothing: no SQLite file appears, an existing
one is left byte for byte, an empty PostgreSQL database gets no schema. Real
``negagraph`` processes."""

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
