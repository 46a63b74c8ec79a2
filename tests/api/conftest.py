"""API fixtures: apps built with ``create_app({...})`` over databases solved once per test
session, on SQLite (a temporary file) and on the local PostgreSQL server (a fresh
database). PostgreSQL being unreachable fails the ``postgres`` tests; it never skips them.

The solved databases are shared by many tests, which is safe because the API cannot write
(the tests check that too); tests that need a database in another state (empty, not
migrated, holding another rules version) get their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from db.migrate import upgrade
from tests.api.helpers import fresh_database, make_app, solve_into

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]

SOLVED: list[tuple[str, dict[str, Any], bool]] = [
    ("tic-tac-toe", {}, True),
    ("tic-tac-toe", {"symmetry": True}, True),
    ("number-game", {}, False),  # partial solve from 13: low 3, high 5, both final
    ("connect-four", {"width": 4, "height": 3}, True),
]
"""What the shared databases hold: (game, parameters, tablebase mode)."""


# -- databases ------------------------------------------------------------------------------


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgres``."""
    name: str = request.param
    return name


@pytest.fixture(scope="session")
def solved_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database at schema head holding the :data:`SOLVED` variants."""
    with fresh_database(backend, tmp_path_factory.mktemp("solved")) as url:
        upgrade(url)
        for game, params, full in SOLVED:
            solve_into(url, game, params, full)
        yield url


@pytest.fixture
def empty_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database at schema head, holding nothing."""
    with fresh_database(backend, tmp_path) as url:
        upgrade(url)
        yield url


@pytest.fixture
def unmigrated_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database without the schema."""
    with fresh_database(backend, tmp_path) as url:
        yield url


# -- apps -------------------------------------------------------------------------------------


@pytest.fixture
def app(solved_url: str) -> Iterator[Flask]:
    """The app over the shared solved database."""
    with make_app(solved_url) as a:
        yield a


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
