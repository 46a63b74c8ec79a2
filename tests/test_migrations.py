"""Migrations on SQLite and PostgreSQL: empty → head → base → head, no drift between the
models and the migrations (what ``alembic check`` checks), the analysts' view, and the
Alembic configuration both from ``pyproject.toml`` and from :mod:`db.migrate`."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect, text

from db.errors import DatabaseError, SchemaError
from db.migrate import (
    HEAD_REVISION,
    alembic_config,
    compared,
    current_revision,
    downgrade,
    ensure_schema,
    head_revision,
    require_head,
    upgrade,
)
from db.models import Base
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve
from tests.db.helpers import pg_database

ROOT = Path(__file__).resolve().parents[1]
TABLES = {
    "variants",
    "nodes",
    "edges",
    "solve_runs",
    "commits",
    "tiers",
    "tier_shards",
    "chance_nodes",
    "discovered_positions",
    "chance_edges",
}
VIEW_COLUMNS = [
    "game",
    "params",
    "position",
    "low",
    "high",
    "low_final",
    "high_final",
    "value",
    "depth_low",
    "depth_high",
    "state",
    "dist",
    "variant_id",
    "node_id",
]


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A brand-new, empty database on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    with pg_database("negagraph_migrations") as url:
        yield url


@pytest.fixture
def empty_engine(empty_url: str) -> Iterator[Engine]:
    engine = make_engine(empty_url)
    try:
        yield engine
    finally:
        engine.dispose()


def tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names()) - {"alembic_version"}


def views(engine: Engine) -> set[str]:
    return set(inspect(engine).get_view_names())


def test_upgrade_downgrade_upgrade(empty_url: str, empty_engine: Engine) -> None:
    assert current_revision(empty_engine) is None
    with pytest.raises(SchemaError, match="found no schema"):
        require_head(empty_engine)

    upgrade(empty_url)
    assert current_revision(empty_engine) == head_revision() == "0018"
    require_head(empty_engine)
    assert tables(empty_engine) == TABLES
    assert views(empty_engine) == {"position_values", "chance_values"}

    downgrade(empty_url, "base")
    assert current_revision(empty_engine) is None
    assert tables(empty_engine) == set() and views(empty_engine) == set()
    with pytest.raises(SchemaError, match=r"run `negagraph db upgrade --db "):
        require_head(empty_engine)

    upgrade(empty_engine)  # through an engine's connection this time
    assert current_revision(empty_engine) == head_revision()
    assert tables(empty_engine) == TABLES


def test_models_match_migrations(empty_url: str, empty_engine: Engine) -> None:
    upgrade(empty_url)
    with empty_engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": compared(conn.dialect.name)}
        )
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_view_is_queryable(empty_url: str, empty_engine: Engine) -> None:
    upgrade(empty_url)
    with empty_engine.connect() as conn:
        result = conn.execute(text("SELECT * FROM position_values"))
        assert list(result.keys()) == VIEW_COLUMNS
        assert result.all() == []


def test_nodes_and_edges_are_compact_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            sql: dict[str, str] = {
                name: ddl
                for name, ddl in conn.execute(
                    text("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
                )
            }
            indexes = {
                name
                for (name,) in conn.execute(
                    text("SELECT name FROM sqlite_master WHERE type = 'index'")
                )
            }
            journal = conn.execute(text("PRAGMA journal_mode")).scalar_one()
            foreign_keys = conn.execute(text("PRAGMA foreign_keys")).scalar_one()
    finally:
        engine.dispose()
    assert "WITHOUT ROWID" in sql["nodes"] and "WITHOUT ROWID" in sql["edges"]
    assert journal == "wal" and foreign_keys == 1
    node_and_edge_indexes = {i for i in indexes if "nodes" in i or "edges" in i}
    # The primary keys are the tables, and nothing else: each variant gets its own key
    # index (migration 0014, db.backends.sqlite.keyindex) and there is none yet; migration
    # 0002 dropped the parent-lookup index on edges.child.
    assert node_and_edge_indexes == set()


def test_pyproject_configuration_finds_the_scripts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # `alembic` is run from the repository root
    config = Config(toml_file=str(ROOT / "pyproject.toml"))
    assert config.get_alembic_option("script_location") == "migrations"
    assert ScriptDirectory.from_config(config).get_current_head() == head_revision()


def test_db_migrate_works_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    upgrade("sqlite:///relative.db")
    engine = make_engine("sqlite:///relative.db")
    try:
        require_head(engine)
    finally:
        engine.dispose()
    assert (elsewhere / "relative.db").exists()


def test_environment_variable_names_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'from-env.db'}"
    monkeypatch.setenv("NEGAGRAPH_DATABASE_URL", url)
    upgrade()
    engine = make_engine()
    try:
        assert str(engine.url) == url
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_unusable_databases_are_clean_errors(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError, match="cannot use database"):
        upgrade(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}")
    with pytest.raises(DatabaseError, match="cannot use database"):
        upgrade("postgresql://postgres@127.0.0.1:1/nothing")
    with pytest.raises(DatabaseError, match="unsupported database"):
        upgrade("mysql://localhost/x")


def test_alembic_command_line_upgrade_and_check(tmp_path: Path) -> None:
    """What CI and developers run from the repository root (no alembic.ini)."""
    env = {**os.environ, "NEGAGRAPH_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    alembic = str(Path(sys.executable).with_name("alembic"))
    for command in (["upgrade", "head"], ["check"], ["current"]):
        done = subprocess.run(
            [alembic, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
    assert "0018 (head)" in done.stdout


def test_ensure_schema_creates_only_in_empty_databases(
    empty_url: str, empty_engine: Engine
) -> None:
    assert ensure_schema(empty_engine) is True
    assert current_revision(empty_engine) == head_revision()
    assert ensure_schema(empty_engine) is False
    downgrade(empty_url, "base")  # leaves alembic_version behind: a known, older schema
    with empty_engine.begin() as conn:
        conn.execute(text("DROP TABLE alembic_version"))
        conn.execute(text("CREATE TABLE somebody_elses (x INTEGER)"))
    with pytest.raises(SchemaError, match="holds tables"):
        ensure_schema(empty_engine)
    assert tables(empty_engine) == {"somebody_elses"}


def test_0002_keeps_the_edges_and_drops_only_the_child_index(
    empty_url: str, empty_engine: Engine
) -> None:
    """A database solved under 0001 upgrades with every edge intact, and downgrades back."""
    upgrade(empty_url, "0001")
    rows = [(0, 0, 1, "a"), (0, 1, 2, "b"), (1, 0, 2, "c")]
    with empty_engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO variants (id, game, params, params_json, rules_version, created_at) "
                "VALUES (1, 'g', '', '{}', 1, CURRENT_TIMESTAMP)"
            )
        )
        for i in range(3):
            conn.execute(
                text(
                    "INSERT INTO nodes (variant_id, id, dist, state, low_final, high_final, "
                    '"key", notation) VALUES (1, :i, 0, 0, false, false, :k, :n)'
                ),
                {"i": i, "k": bytes([i]), "n": str(i)},
            )
        for parent, order, child, move in rows:
            conn.execute(
                text(
                    "INSERT INTO edges (variant_id, parent, move_order, child, move) "
                    "VALUES (1, :p, :o, :c, :m)"
                ),
                {"p": parent, "o": order, "c": child, "m": move},
            )

    def edges() -> list[tuple[int, int, int, str]]:
        with empty_engine.connect() as conn:
            return [
                tuple(r)
                for r in conn.execute(
                    text("SELECT parent, move_order, child, move FROM edges ORDER BY 1, 2")
                )
            ]

    def edge_indexes_and_keys() -> tuple[set[str | None], int]:
        inspector = inspect(empty_engine)
        return (
            {i["name"] for i in inspector.get_indexes("edges")},
            len(inspector.get_foreign_keys("edges")),
        )

    assert edge_indexes_and_keys() == ({"ix_edges_variant_id_child"}, 2)
    upgrade(empty_url, "0002")
    assert current_revision(empty_engine) == "0002"
    assert edges() == rows
    assert edge_indexes_and_keys() == (set(), 1)
    with empty_engine.begin() as conn:  # deleting the variant still takes its edges along
        conn.execute(text("DELETE FROM variants WHERE id = 1"))
    assert edges() == []
    downgrade(empty_url, "0001")
    assert edge_indexes_and_keys() == ({"ix_edges_variant_id_child"}, 2)


def test_0003_leaves_room_in_postgresql_node_pages(empty_url: str, empty_engine: Engine) -> None:
    def fillfactor() -> str | None:
        if empty_engine.dialect.name != "postgresql":
            return None
        with empty_engine.connect() as conn:
            options = conn.execute(
                text("SELECT reloptions FROM pg_class WHERE relname = 'nodes'")
            ).scalar_one()
        return next((o for o in options or [] if o.startswith("fillfactor")), "default")

    upgrade(empty_url, "0002")
    before = fillfactor()
    upgrade(empty_url, "0003")
    assert current_revision(empty_engine) == "0003"
    if empty_engine.dialect.name == "postgresql":
        assert (before, fillfactor()) == ("default", "fillfactor=50")
    downgrade(empty_url, "0002")
    assert fillfactor() == before


def test_0004_leaves_stored_variants_unsettled_and_keeps_their_nodes(
    empty_url: str, empty_engine: Engine
) -> None:
    """Variants stored before 0004 start unsettled (their next partial run redoes its
    closing pass once); new ones are settled; a downgrade keeps every node and run."""
    upgrade(empty_url, "0003")
    with empty_engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO variants (id, game, params, params_json, rules_version, created_at) "
                "VALUES (1, 'g', '', '{}', 1, CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO nodes (variant_id, id, dist, state, low_final, high_final, "
                "\"key\", notation) VALUES (1, 0, 0, 0, false, false, :k, 'p0')"
            ),
            {"k": b"\0"},
        )
    upgrade(empty_url, "0004")
    assert current_revision(empty_engine) == "0004"

    def settled() -> list[tuple[int, bool]]:
        with empty_engine.connect() as conn:
            return [
                (r[0], bool(r[1]))
                for r in conn.execute(text("SELECT id, settled FROM variants ORDER BY id"))
            ]

    assert settled() == [(1, False)]
    with empty_engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO variants (id, game, params, params_json, rules_version, created_at, "
                "settled) VALUES (2, 'h', '', '{}', 1, CURRENT_TIMESTAMP, true)"
            )
        )
    assert settled() == [(1, False), (2, True)]
    downgrade(empty_url, "0003")
    assert "settled" not in {c["name"] for c in inspect(empty_engine).get_columns("variants")}
    with empty_engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM nodes")).scalar_one() == 1
        assert conn.execute(text("SELECT count(*) FROM variants")).scalar_one() == 2


def test_0005_marks_builtin_variants_and_keeps_everything(
    empty_url: str, empty_engine: Engine
) -> None:
    """Variants stored before 0005 of a built-in game are marked ``builtin``, others stay
    unknown (NULL); the solver records the source of new ones; a downgrade keeps rows."""
    upgrade(empty_url, "0004")
    with empty_engine.begin() as conn:
        for game in ("tic-tac-toe", "someones-plugin"):
            conn.execute(
                text(
                    "INSERT INTO variants (game, params, params_json, rules_version, "
                    "created_at) VALUES (:game, '', '{}', 1, CURRENT_TIMESTAMP)"
                ),
                {"game": game},
            )
    upgrade(empty_url, "0005")
    assert current_revision(empty_engine) == "0005"

    def sources() -> list[tuple[str, str | None]]:
        with empty_engine.connect() as conn:
            return [
                (r[0], r[1])
                for r in conn.execute(text("SELECT game, game_source FROM variants ORDER BY id"))
            ]

    assert sources() == [("tic-tac-toe", "builtin"), ("someones-plugin", None)]
    upgrade(empty_url)  # the store writes at the head only
    store = SqlStore(empty_engine)
    # untiered: a tiered solve's ids follow solve order, which 0016 cannot undo
    solve(get_game("nap", n=3), full=True, store=store, tiers=False)
    assert sources()[-1] == ("nap", "builtin")
    downgrade(empty_url, "0004")
    assert "game_source" not in {c["name"] for c in inspect(empty_engine).get_columns("variants")}
    with empty_engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM variants")).scalar_one() == 3


def test_0018_puts_postgresql_compact_tables_in_blocks_and_back(
    empty_url: str, empty_engine: Engine
) -> None:
    """A compact table of one position a row (0017), with NULLs (infinite bounds and
    depths), becomes blocks of 256 positions on PostgreSQL, its view reading the same
    rows; the downgrade gives the rows back. SQLite's tables do not change."""
    upgrade(empty_url, "0017")
    postgres = empty_engine.dialect.name == "postgresql"
    key = '"key" BIGINT PRIMARY KEY' if postgres else "key INTEGER PRIMARY KEY"
    rng = random.Random(18)
    keys = sorted({rng.getrandbits(63) - (1 << 62) for _ in range(600)})
    rows = [
        (
            k,
            None if i % 7 == 0 else rng.randint(-3, 3),
            rng.randint(-3, 3),
            None if i % 5 == 0 else i % 40,
            i % 40,
        )
        for i, k in enumerate(keys)
    ]
    with empty_engine.begin() as conn:
        vid = conn.execute(
            text(
                "INSERT INTO variants (game, params, params_json, rules_version, created_at, "
                "layout) VALUES ('connect-four', '', '{}', 2, CURRENT_TIMESTAMP, 'compact') "
                "RETURNING id"
            )
        ).scalar_one()
        conn.execute(
            text(
                f"CREATE TABLE compact_{vid}_0 ({key}, low BIGINT, high BIGINT, "
                "depth_low INTEGER, depth_high INTEGER)"
            )
        )
        conn.execute(
            text(f"INSERT INTO compact_{vid}_0 VALUES (:k, :l, :h, :dl, :dh)"),
            [dict(zip(("k", "l", "h", "dl", "dh"), r, strict=True)) for r in rows],
        )
        conn.execute(
            text(
                f'CREATE VIEW compact_{vid} AS SELECT "key", low, high, depth_low, depth_high '
                f"FROM compact_{vid}_0"
            )
        )

    def read() -> tuple[list[tuple[Any, ...]], int]:
        with empty_engine.connect() as conn:
            found = [
                tuple(r) for r in conn.execute(text(f'SELECT * FROM compact_{vid} ORDER BY "key"'))
            ]
            count = conn.execute(text(f"SELECT count(*) FROM compact_{vid}_0")).scalar_one()
        return found, count

    assert read() == (rows, 600)
    upgrade(empty_url, "0018")
    assert read() == (rows, 3 if postgres else 600)  # blocks of 256, 256 and 88
    downgrade(empty_url, "0017")
    assert read() == (rows, 600)


def test_head_revision_is_the_newest_script() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert script.get_current_head() == HEAD_REVISION, (
        "a new migration: set db.migrate.HEAD_REVISION to its revision"
    )


def test_the_command_line_loads_without_alembic() -> None:
    # Alembic (and Mako) cost every `negagraph` start a tenth of a second; only a
    # migration needs them.
    code = "import sys, api.cli; print(sorted(m for m in sys.modules if 'alembic' in m))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"
