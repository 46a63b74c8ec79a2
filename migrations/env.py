"""Alembic environment for negagraph.

The database comes from, in order: a connection passed in ``config.attributes
["connection"]`` (tests, :mod:`db.migrate` with an engine), a URL in
``config.attributes["url"]``, ``-x db=URL`` on the alembic command line,
``sqlalchemy.url`` in the config, else :func:`db.session.database_url` (the
``NEGAGRAPH_DATABASE_URL`` environment variable or the default SQLite file) — the same
settings function the application uses.
"""

from __future__ import annotations

import logging
import os
from logging.config import fileConfig

from alembic import context
from alembic.util import CommandError
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from db.migrate import SCHEMA_LOCK, compared, foreign_keys_off
from db.models import Base
from db.session import database_url, make_engine, normalize_url, translate_errors

config = context.config

if config.config_file_name is not None and os.path.exists(config.config_file_name):
    fileConfig(config.config_file_name)
elif config.cmd_opts is not None:  # the alembic command line, without an alembic.ini
    logging.basicConfig(format="%(levelname)-5.5s [%(name)s] %(message)s")
    logging.getLogger("alembic").setLevel(logging.INFO)

target_metadata = Base.metadata


def _url() -> str:
    explicit = (
        config.attributes.get("url")
        or context.get_x_argument(as_dictionary=True).get("db")
        or _ini_url()
    )
    return database_url(explicit)


def _ini_url() -> str | None:
    try:
        return config.get_main_option("sqlalchemy.url")
    except CommandError:  # no alembic.ini: the usual case, settings live in pyproject.toml
        return None


def _configure(dialect: str, **kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        include_object=compared(dialect),
        **kwargs,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    """Emit the migration SQL for the configured URL without connecting."""
    url = normalize_url(_url())
    _configure(
        url.get_backend_name(),
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    # SQLite connections from db.session.make_engine have real transactions, DDL included,
    # so every dialect migrates atomically.
    _configure(connection.dialect.name, connection=connection, transactional_ddl=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # One migration at a time (two solves starting on an empty database, say): the
            # next one waits here, then finds the schema at the head and does nothing.
            # SQLite serialises them with BEGIN IMMEDIATE (db.migrate).
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK})
        # What this migration found, once it holds the lock (db.migrate.upgrade says it).
        heads = context.get_context().get_current_heads()
        config.attributes["revision_before"] = ",".join(heads) or None
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate through the supplied connection, or a short-lived engine for the URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_url(), poolclass=NullPool)
    try:
        with translate_errors(engine), engine.connect() as conn, foreign_keys_off(conn):
            _run(conn.execution_options(sqlite_begin="IMMEDIATE"))
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
