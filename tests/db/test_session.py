"""Engine and session set-up (db.session) and the error types (db.errors)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select, text

from db.errors import (
    DatabaseError,
    PositionNotFoundError,
    RulesVersionError,
    SchemaError,
    VariantLockedError,
)
from db.models import Variant, decode_key, encode_key
from db.session import (
    DEFAULT_URL,
    check_connection,
    database_url,
    make_engine,
    make_session_factory,
    normalize_url,
    session_scope,
)
from solver.errors import NegagraphError, SolveError


def test_database_url_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEGAGRAPH_DATABASE_URL", raising=False)
    assert database_url() == DEFAULT_URL == "sqlite:///negagraph.db"
    monkeypatch.setenv("NEGAGRAPH_DATABASE_URL", "sqlite:///env.db")
    assert database_url() == "sqlite:///env.db"
    assert database_url("sqlite:///explicit.db") == "sqlite:///explicit.db"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u@h:5432/db", "postgresql+psycopg://u@h:5432/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
        ("sqlite://", "sqlite://"),
    ],
)
def test_urls_are_normalised(url: str, expected: str) -> None:
    assert normalize_url(url).render_as_string(hide_password=False) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("not a url", "invalid database URL"),
        ("mysql://h/db", "unsupported database 'mysql'"),
        ("postgresql+psycopg2://h/db", "unsupported PostgreSQL driver"),
        ("sqlite+aiosqlite:///x.db", "unsupported SQLite driver"),
    ],
)
def test_bad_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(DatabaseError, match=message):
        make_engine(url)


def test_passwords_stay_out_of_messages() -> None:
    engine = make_engine("postgresql://postgres:hunter2@127.0.0.1:1/x")
    try:
        with pytest.raises(DatabaseError) as info:
            check_connection(engine)
    finally:
        engine.dispose()
    assert "hunter2" not in str(info.value) and "***" in str(info.value)


def test_sqlite_connections_are_configured(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect() as conn:
            pragmas = {
                name: conn.execute(text(f"PRAGMA {name}")).scalar_one()
                for name in ("journal_mode", "foreign_keys", "synchronous", "busy_timeout")
            }
    finally:
        engine.dispose()
    assert pragmas == {
        "journal_mode": "wal",
        "foreign_keys": 1,
        "synchronous": 1,  # NORMAL
        "busy_timeout": 30_000,
    }


def test_sqlite_ddl_is_transactional(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect() as conn:
            conn.execute(text("CREATE TABLE t (x INTEGER)"))
            conn.rollback()
            assert conn.execute(text("SELECT count(*) FROM sqlite_master")).scalar_one() == 0
    finally:
        engine.dispose()


def test_session_scope_commits_or_rolls_back(engine: Engine) -> None:
    factory = make_session_factory(engine)
    with session_scope(factory) as session:
        session.add(Variant(game="g", params="", params_json="{}", rules_version=1))
    with pytest.raises(RuntimeError), session_scope(factory) as session:
        session.add(Variant(game="h", params="", params_json="{}", rules_version=1))
        session.flush()
        raise RuntimeError("boom")
    with session_scope(factory) as session:
        assert session.scalars(select(Variant.game)).all() == ["g"]


def test_error_hierarchy() -> None:
    assert issubclass(DatabaseError, NegagraphError) and issubclass(DatabaseError, RuntimeError)
    assert issubclass(SchemaError, DatabaseError)
    assert issubclass(PositionNotFoundError, KeyError)
    assert issubclass(VariantLockedError, SolveError) and issubclass(RulesVersionError, SolveError)
    assert str(PositionNotFoundError("no such position")) == "no such position"


@pytest.mark.parametrize("key", [0, 1, 255, 256, 2**63, 2**64 + 1, 3**200])
def test_key_encoding_round_trips(key: int) -> None:
    data = encode_key(key)
    assert decode_key(data) == key
    assert len(data) == max(1, (key.bit_length() + 7) // 8)
    with pytest.raises(ValueError):
        encode_key(-1)
