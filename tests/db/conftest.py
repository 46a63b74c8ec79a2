"""Database fixtures: every ``engine`` test runs on SQLite (a temporary file) and on the
local PostgreSQL server (a fresh database per test session, marked ``postgres``).

PostgreSQL being unreachable fails the ``postgres`` tests; it never skips them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from db.migrate import upgrade
from db.session import make_engine, make_session_factory
from tests.built_once import session_folder
from tests.db.helpers import pg_database
from tests.db.references import References

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]

_TABLES = "edges, nodes, solve_runs, variants"


@pytest.fixture(scope="session")
def pg_session_url() -> Iterator[str]:
    """A PostgreSQL database for this test session, migrated to head."""
    with pg_database() as url:
        upgrade(url)
        yield url


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database at schema head, on each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'negagraph.db'}"
        upgrade(url)
        return url
    pg: str = request.getfixturevalue("pg_session_url")
    engine = make_engine(pg)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {_TABLES} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()
    return pg


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on an empty database at schema head (SQLite file or PostgreSQL)."""
    eng = make_engine(db_url)
    try:
        yield eng
    finally:
        eng.dispose()


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    """An engine on a SQLite file at schema head (for SQLite-only behaviour)."""
    url = f"sqlite:///{tmp_path / 'negagraph.db'}"
    upgrade(url)
    eng = make_engine(url)
    try:
        yield eng
    finally:
        eng.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A session inside a transaction that is rolled back afterwards."""
    with engine.connect() as conn:
        trans = conn.begin()
        sess = make_session_factory(engine)(bind=conn)
        try:
            yield sess
        finally:
            sess.close()
            trans.rollback()


@pytest.fixture(scope="session")
def references(tmp_path_factory: pytest.TempPathFactory) -> References:
    """The session's reference solves (:mod:`tests.db.references`), shared by its xdist
    workers (in the folder above theirs) or, without xdist, in the session's folder."""
    return References(session_folder(tmp_path_factory) / "negagraph-references")
