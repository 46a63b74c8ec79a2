"""Engine and session set-up (db.session) and the error types (db.errors)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, select, text

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
    SqliteOpening,
    check_connection,
    database_url,
    make_engine,
    make_session_factory,
    normalize_url,
    session_scope,
    sqlite_opening,
    translate_errors,
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


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        ("/tmp/x.db", "(a SQLite file is given as sqlite:////tmp/x.db)"),
        ("x.db", "(a SQLite file is given as sqlite:///x.db, relative to the current directory)"),
    ],
)
def test_a_file_path_given_as_url_gets_the_url_to_use(path: str, hint: str) -> None:
    with pytest.raises(DatabaseError) as info:
        make_engine(path)
    message = str(info.value)
    assert message.startswith(f"invalid database URL {path!r}: ") and message.endswith(hint)


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


# -- opening: SQLite files looked at first, PostgreSQL timeouts ---------------------------


def test_sqlite_files_are_checked_before_sqlite_opens_them(tmp_path: Path) -> None:
    def connect(url: str, *, read_only: bool = False) -> None:
        engine = make_engine(url, read_only=read_only)  # looks at nothing yet
        try:
            check_connection(engine)
        finally:
            engine.dispose()

    text_file = tmp_path / "notes.db"
    text_file.write_text("not a database\n")
    with pytest.raises(DatabaseError, match="is not a SQLite database"):
        connect(f"sqlite:///{text_file}")
    with pytest.raises(DatabaseError, match="is a directory, not a database file"):
        connect(f"sqlite:///{tmp_path}")
    with pytest.raises(DatabaseError, match="does not exist"):
        connect(f"sqlite:///{tmp_path / 'absent.db'}", read_only=True)
    assert not (tmp_path / "absent.db").exists()
    assert sqlite_opening(f"sqlite:///{tmp_path / 'new.db'}") == SqliteOpening(
        tmp_path / "new.db", None
    )
    for url in (
        "sqlite://",
        "sqlite:///:memory:",
        "postgresql://u@h/db",
        f"sqlite:///file:{tmp_path / 'x.db'}?mode=ro&uri=true",
    ):
        assert sqlite_opening(url) is None  # nothing to look at: opened as given


def test_a_read_only_engine_never_switches_a_file_to_wal(tmp_path: Path) -> None:
    """Another application's rollback-journal file stays byte for byte as it was, read
    by a reader or refused by a writer's schema check."""
    import sqlite3

    from db.errors import SchemaError as Refused
    from db.migrate import ensure_schema

    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE foo (x INTEGER)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    for read_only in (True, False):
        engine = make_engine(f"sqlite:///{path}", read_only=read_only)
        try:
            with engine.connect() as c:
                assert c.execute(text("PRAGMA journal_mode")).scalar_one() == "delete"
                if read_only:
                    assert c.execute(text("PRAGMA query_only")).scalar_one() == 1
            if not read_only:
                with pytest.raises(Refused, match="holds tables"):
                    ensure_schema(engine)
        finally:
            engine.dispose()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def connect_params(url: str, **kwargs: Any) -> dict[str, Any]:
    """The arguments an engine of *url* hands psycopg (caught as it tries to connect to a
    port where nothing listens)."""
    seen: dict[str, Any] = {}
    engine = make_engine(url, **kwargs)
    event.listen(engine, "do_connect", lambda d, r, cargs, cparams: seen.update(cparams))
    try:
        with pytest.raises(DatabaseError):
            check_connection(engine)
    finally:
        engine.dispose()
    return seen


def test_timeout_settings_must_be_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://postgres@127.0.0.1:1/db"
    monkeypatch.setenv("NEGAGRAPH_PG_CONNECT_TIMEOUT", "soon")
    with pytest.raises(DatabaseError, match=r"\$NEGAGRAPH_PG_CONNECT_TIMEOUT must be a whole"):
        make_engine(url)
    monkeypatch.delenv("NEGAGRAPH_PG_CONNECT_TIMEOUT")
    params = connect_params(url)
    assert params["connect_timeout"] == 10 and params["keepalives_idle"] == 30
    assert "options" not in params  # a writer: no statement timeout
    params = connect_params(url, read_only=True)
    assert params["options"] == ("-c default_transaction_read_only=on -c statement_timeout=300000")
    monkeypatch.setenv("NEGAGRAPH_PG_CONNECT_TIMEOUT", "0")  # 0: wait forever
    monkeypatch.setenv("NEGAGRAPH_PG_STATEMENT_TIMEOUT", "0")  # 0: none
    params = connect_params(url, read_only=True)
    assert "connect_timeout" not in params and "statement_timeout" not in params["options"]
    monkeypatch.delenv("NEGAGRAPH_PG_CONNECT_TIMEOUT")
    assert connect_params(f"{url}?connect_timeout=2")["connect_timeout"] == "2"  # the URL's


@pytest.mark.postgres
def test_postgres_readers_have_a_statement_timeout_and_writers_none(
    pg_session_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEGAGRAPH_PG_STATEMENT_TIMEOUT", "1")
    reader = make_engine(pg_session_url, read_only=True)
    writer = make_engine(pg_session_url)
    try:
        with reader.connect() as conn:
            assert conn.execute(text("SHOW statement_timeout")).scalar_one() == "1s"
            assert conn.execute(text("SHOW default_transaction_read_only")).scalar_one() == "on"
        with pytest.raises(DatabaseError, match=r"a statement ran longer than 1 s \(\$NEGA"):
            with translate_errors(reader), reader.connect() as conn:
                conn.execute(text("SELECT pg_sleep(5)"))
        with writer.connect() as conn:
            assert conn.execute(text("SHOW statement_timeout")).scalar_one() == "0"
            conn.execute(text("SELECT pg_sleep(1.5)"))  # a long statement is fine
    finally:
        reader.dispose()
        writer.dispose()
