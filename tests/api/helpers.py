"""Helpers of the API tests: throw-away databases on SQLite and the local PostgreSQL
server (the approach of ``tests/db/helpers.py``), solving into them, and apps over them."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask

from api import create_app
from api.database import get_database
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve

PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_USER = "postgres"
PG_ADMIN_DB = "test"


def _admin() -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(
            host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=PG_ADMIN_DB,
            autocommit=True, connect_timeout=10,
        )
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is unreachable at {PG_USER}@{PG_HOST}:{PG_PORT}/{PG_ADMIN_DB}: {exc}",
            pytrace=False,
        )


@contextmanager
def pg_database(prefix: str = "negagraph_api_test") -> Iterator[str]:
    """A fresh, uniquely named PostgreSQL database (its URL), dropped afterwards."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        with _admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_database(backend: str, directory: Path) -> Iterator[str]:
    """The URL of a new, empty database (no schema) on *backend*."""
    if backend == "sqlite":
        path = directory / f"negagraph-{secrets.token_hex(4)}.db"
        path.touch()
        yield f"sqlite:///{path}"
    else:
        with pg_database() as url:
            yield url


def solve_into(url: str, game: str, params: dict[str, Any], full: bool) -> None:
    engine = make_engine(url)
    try:
        solve(get_game(game, **params), full=full, store=SqlStore(engine))
    finally:
        engine.dispose()


@contextmanager
def make_app(url: str, **config: Any) -> Iterator[Flask]:
    """An app over *url*; its engine is disposed afterwards."""
    app = create_app({"TESTING": True, "DATABASE_URL": url, **config})
    try:
        yield app
    finally:
        get_database(app).dispose()


def assert_error(status: int, body: Any, code: int, *fragments: str) -> None:
    """*body* is an error answer of the one shape, status *code*, naming *fragments*."""
    assert status == code, body
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    for fragment in fragments:
        assert fragment in body["error"]["message"], body
