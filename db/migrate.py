"""Schema migrations from Python: upgrade, downgrade, and the "at head?" check.

The Alembic configuration is built here rather than read from ``pyproject.toml``, with an
absolute ``script_location``, so that the installed ``negagraph`` command migrates from
any working directory. ``alembic`` on the command line (from the repository root) uses the
``[tool.alembic]`` section instead; both run the same ``migrations/env.py``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Engine, inspect

from db.errors import SchemaError
from db.session import database_url, safe_url, translate_errors

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
"""Where the Alembic scripts live (``migrations/`` beside this package)."""


def alembic_config(url: str | URL | Engine | None = None) -> Config:
    """An Alembic configuration for *url* (see :func:`db.session.database_url`), or for
    an engine, whose connection is then passed to ``env.py``."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if isinstance(url, Engine):
        cfg.attributes["engine"] = url
    else:
        cfg.attributes["url"] = database_url(url)
    return cfg


def _run(cfg: Config, action: str, revision: str) -> None:
    engine: Engine | None = cfg.attributes.pop("engine", None)
    run = command.upgrade if action == "upgrade" else command.downgrade
    if engine is None:
        run(cfg, revision)
        return
    with translate_errors(engine), engine.begin() as connection:
        cfg.attributes["connection"] = connection
        run(cfg, revision)


def upgrade(url: str | URL | Engine | None = None, revision: str = "head") -> None:
    """Upgrade the database at *url* (or behind an engine) to *revision* (the head).

    :raises DatabaseError: if the database cannot be reached or opened.
    """
    _run(alembic_config(url), "upgrade", revision)


def downgrade(url: str | URL | Engine | None, revision: str) -> None:
    """Downgrade the database at *url* to *revision* (``"base"`` drops everything).

    :raises DatabaseError: if the database cannot be reached or opened.
    """
    _run(alembic_config(url), "downgrade", revision)


@lru_cache(maxsize=1)
def _script() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config("sqlite://"))


def head_revision() -> str:
    """The schema revision this version of negagraph needs."""
    head = _script().get_current_head()
    assert head is not None, "migrations/versions holds no revision"
    return head


def current_revision(engine: Engine) -> str | None:
    """The database's schema revision, ``None`` for an empty (never migrated) database.

    :raises DatabaseError: if the database cannot be reached or opened.
    """
    with translate_errors(engine), engine.connect() as connection:
        heads = MigrationContext.configure(connection).get_current_heads()
    return heads[0] if len(heads) == 1 else ",".join(heads) if heads else None


def require_head(engine: Engine) -> None:
    """Check that the database is at :func:`head_revision`.

    :raises SchemaError: if it is empty, behind, or at a revision this version of
        negagraph does not know (written by a newer one); the message says what to run.
    :raises DatabaseError: if the database cannot be reached or opened.
    """
    found = current_revision(engine)
    need = head_revision()
    if found == need:
        return
    where = safe_url(engine)
    known = {rev.revision for rev in _script().walk_revisions()}
    if found is not None and not set(found.split(",")) <= known:
        raise SchemaError(
            f"database {where} has schema revision {found}, which this version of "
            f"negagraph does not know (it needs {need}): it was written by another "
            "(newer?) version of negagraph; use that version, or a fresh database"
        )
    raise SchemaError(
        f"database {where} is not at schema head (found {found or 'no schema'}, "
        f"need {need}): run `negagraph db upgrade --db {where}`"
    )


def ensure_schema(engine: Engine) -> bool:
    """Create the schema in an *empty* database; otherwise check it is at the head.

    For commands that should just work on a fresh database (``negagraph solve`` on the
    default SQLite file); a database holding anything else is never touched.

    :returns: whether the schema was created.
    :raises SchemaError: if the database is behind or ahead, or holds tables but no
        negagraph schema.
    :raises DatabaseError: if the database cannot be reached or opened.
    """
    if current_revision(engine) is not None:
        require_head(engine)
        return False
    with translate_errors(engine):
        existing = inspect(engine).get_table_names()
    if existing:
        raise SchemaError(
            f"database {safe_url(engine)} holds tables ({', '.join(sorted(existing)[:5])}) "
            "but no negagraph schema: use an empty database, or run "
            f"`negagraph db upgrade --db {safe_url(engine)}` if it is meant to be shared"
        )
    upgrade(engine)
    return True


__all__ = [
    "ensure_schema",
    "MIGRATIONS_DIR",
    "alembic_config",
    "current_revision",
    "downgrade",
    "head_revision",
    "require_head",
    "upgrade",
]
