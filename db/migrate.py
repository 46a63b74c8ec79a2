"""Schema migrations from Python: upgrade, downgrade, and the "at head?" check.

The Alembic configuration is built here rather than read from ``pyproject.toml``, with an
absolute ``script_location``, so that the installed ``negagraph`` command migrates from
any working directory. ``alembic`` on the command line (from the repository root) uses the
``[tool.alembic]`` section instead; both run the same ``migrations/env.py``.

Alembic itself (with Mako, which it loads) is imported only to migrate: checking that a
database is at :data:`HEAD_REVISION` reads ``alembic_version`` with SQLAlchemy alone,
which spares every ``negagraph`` command that opens an existing database a tenth of a
second of start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import URL, Column, Engine, MetaData, String, Table, inspect, select
from sqlalchemy.engine import Connection

from db.errors import SchemaError
from db.session import database_url, safe_url, translate_errors

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
"""Where the Alembic scripts live (``migrations/`` beside this package)."""

SCHEMA_LOCK = int.from_bytes(b"negaschm", "big") - (1 << 63)
"""The PostgreSQL advisory lock (a signed 64-bit key) every migration holds for its
transaction, so that concurrent first runs on an empty database create the schema once."""

HEAD_REVISION = "0018"
"""The schema revision this version of negagraph needs: the newest script in
``migrations/versions`` (tests/test_migrations.py holds the two together; a new migration
updates this line)."""

_VERSION_TABLE = Table("alembic_version", MetaData(), Column("version_num", String(32)))


def compared(dialect: str) -> Callable[[object, str | None, str, bool, object], bool]:
    """The ``include_object`` of a comparison between the models and a database of
    *dialect* (``alembic check``, the tests): on SQLite, not the key indexes, which are
    one per variant and made by the store (:mod:`db.backends.sqlite.keyindex`), nor the key
    constraint the models declare for PostgreSQL alone; on both, not the tables of
    compact variants (:mod:`db.compact`), one set per variant."""

    def include(obj: object, name: str | None, type_: str, reflected: bool, to: object) -> bool:
        if type_ == "table" and reflected and (name or "").startswith("compact_"):
            return False  # a compact variant's tables, made by the store (db.compact)
        if dialect != "sqlite":
            return True
        if type_ == "index" and reflected and (name or "").startswith("nodes_key_"):
            return False
        return not (type_ == "unique_constraint" and name == "uq_nodes_variant_id_key")

    return include


@contextmanager
def foreign_keys_off(connection: Connection) -> Iterator[None]:
    """SQLite: no foreign-key actions while migrating, as SQLite's own procedure for
    rebuilding a table asks (dropping the old ``nodes`` table would otherwise delete
    every row that refers to it); the migration that rebuilds one checks the keys with
    ``PRAGMA foreign_key_check`` instead. Set outside any transaction (SQLite ignores it
    inside one); other dialects: nothing."""
    if connection.dialect.name != "sqlite":
        yield
        return
    raw = connection.connection.driver_connection
    assert raw is not None
    raw.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        raw.execute("PRAGMA foreign_keys = ON")


def alembic_config(url: str | URL | Engine | None = None) -> Config:
    """An Alembic configuration for *url* (see :func:`db.session.database_url`), or for
    an engine, whose connection is then passed to ``env.py``."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if isinstance(url, Engine):
        cfg.attributes["engine"] = url
    else:
        cfg.attributes["url"] = database_url(url)
    return cfg


def _run(cfg: Config, action: str, revision: str) -> str | None:
    from alembic import command
    from alembic.util import CommandError

    engine: Engine | None = cfg.attributes.pop("engine", None)
    migrate = command.upgrade if action == "upgrade" else command.downgrade
    where = safe_url(engine if engine is not None else cfg.attributes["url"])

    def run(cfg: Config, revision: str) -> None:
        try:
            migrate(cfg, revision)
        except CommandError as exc:  # e.g. a revision written by a newer negagraph
            raise SchemaError(
                f"cannot {action} database {where} to {revision}: {exc} (this version of "
                f"negagraph knows the revisions up to {head_revision()}; a database written "
                "by a newer version needs that version)"
            ) from None

    if engine is None:
        run(cfg, revision)
        return cfg.attributes.get("revision_before")
    with translate_errors(engine), engine.connect() as connection:
        # SQLite: take the write lock before reading the schema revision, so that a second
        # migration waits (busy timeout) and then finds the work done (PostgreSQL: env.py
        # takes an advisory lock).
        connection.execution_options(sqlite_begin="IMMEDIATE")
        with foreign_keys_off(connection), connection.begin():
            cfg.attributes["connection"] = connection
            run(cfg, revision)
    return cfg.attributes.get("revision_before")


def upgrade(url: str | URL | Engine | None = None, revision: str = "head") -> str | None:
    """Upgrade the database at *url* (or behind an engine) to *revision* (the head).

    Migrations of one database run one at a time (PostgreSQL: an advisory lock; SQLite:
    ``BEGIN IMMEDIATE``): a second one waits, then finds the work done.

    :returns: the revision the database was at when this migration started (``None``: it
        had no schema, so this call created it).
    :raises DatabaseError: if the database cannot be reached or opened.
    """
    return _run(alembic_config(url), "upgrade", revision)


def downgrade(url: str | URL | Engine | None, revision: str) -> None:
    """Downgrade the database at *url* to *revision* (``"base"`` drops everything).

    :raises DatabaseError: if the database cannot be reached or opened.
    """
    _run(alembic_config(url), "downgrade", revision)


def head_revision() -> str:
    """The schema revision this version of negagraph needs (:data:`HEAD_REVISION`)."""
    return HEAD_REVISION


def known_revisions() -> set[str]:
    """Every revision in ``migrations/versions`` (read with Alembic)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return {rev.revision for rev in script.walk_revisions()}


def current_revision(engine: Engine) -> str | None:
    """The database's schema revision (comma-separated if it has several heads), ``None``
    for an empty (never migrated) database.

    :raises DatabaseError: if the database cannot be reached or opened.
    """
    with translate_errors(engine), engine.connect() as connection:
        if not inspect(connection).has_table(_VERSION_TABLE.name):
            return None
        heads = sorted(connection.scalars(select(_VERSION_TABLE.c.version_num)))
    return ",".join(heads) if heads else None


def _foreign_tables(engine: Engine) -> list[str]:
    """The tables of a database without Alembic's version table (so never migrated by
    negagraph: another application's), sorted; empty for any other database."""
    with translate_errors(engine):
        names = inspect(engine).get_table_names()
    return [] if "alembic_version" in names else sorted(names)


def _listed(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def require_head(engine: Engine) -> None:
    """Check that the database is at :func:`head_revision`.

    :raises SchemaError: if it is empty, behind, at a revision this version of negagraph
        does not know (written by a newer one), or another application's (tables but no
        negagraph schema); the message says what to run.
    :raises DatabaseError: if the database cannot be reached or opened.
    """
    found = current_revision(engine)
    need = head_revision()
    if found == need:
        return
    where = safe_url(engine)
    if found is not None and not set(found.split(",")) <= known_revisions():
        raise SchemaError(
            f"database {where} has schema revision {found}, which this version of "
            f"negagraph does not know (it needs {need}): it was written by another "
            "(newer?) version of negagraph; use that version, or a fresh database"
        )
    if found is None:
        others = _foreign_tables(engine)
        if others:
            raise SchemaError(
                f"database {where} is not a negagraph database: it holds tables "
                f"({_listed(others)}) but no negagraph schema (not at schema head, need "
                f"{need}); give the URL of a negagraph database"
            )
    raise SchemaError(
        f"database {where} is not at schema head (found {found or 'no schema'}, "
        f"need {need}): run `negagraph db upgrade --db {where}`"
    )


def check_other_tables(engine: Engine) -> None:
    """Refuse to create the schema in a database that holds another application's tables.

    :raises SchemaError: if the database has no negagraph schema but holds tables; the
        message names them and says how to share the database anyway.
    :raises DatabaseError: if the database cannot be reached or opened.
    """
    if current_revision(engine) is not None:
        return
    others = _foreign_tables(engine)
    if others:
        where = safe_url(engine)
        raise SchemaError(
            f"database {where} holds tables ({_listed(others)}) but no negagraph schema: "
            "use an empty database, or run "
            f"`negagraph db upgrade --allow-other-tables --db {where}` if it is meant "
            "to be shared"
        )


def ensure_schema(engine: Engine) -> bool:
    """Create the schema in an *empty* database; otherwise check it is at the head.

    For commands that should just work on a fresh database (``negagraph solve`` on the
    default SQLite file, :class:`db.store.SqlStore` on a new file); a database holding
    anything else is never touched. Concurrent calls on one empty database create the
    schema once: the others wait for it (see :func:`upgrade`).

    :returns: whether this call created the schema (not a concurrent one).
    :raises SchemaError: if the database is behind or ahead, or holds tables but no
        negagraph schema.
    :raises DatabaseError: if the database cannot be reached or opened.
    """
    if current_revision(engine) is not None:
        require_head(engine)
        return False
    check_other_tables(engine)
    with translate_errors(engine):
        if inspect(engine).has_table("alembic_version"):  # downgraded to the base
            require_head(engine)
    before = upgrade(engine)
    require_head(engine)
    return before is None


__all__ = [
    "MIGRATIONS_DIR",
    "SCHEMA_LOCK",
    "alembic_config",
    "check_other_tables",
    "current_revision",
    "downgrade",
    "ensure_schema",
    "head_revision",
    "require_head",
    "upgrade",
]
