"""The database engines the store writes to, a module (or package) each: the base all
share (:mod:`db.backends.base`), PostgreSQL (:mod:`db.backends.postgres`) and SQLite
(:mod:`db.backends.sqlite`); :func:`backend_for` picks the one of an engine's dialect.
"""

from __future__ import annotations

from sqlalchemy import Engine

from db.backends.base import Backend
from db.backends.postgres import PostgresBackend
from db.backends.sqlite.backend import SqliteBackend
from db.errors import DatabaseError


def backend_for(engine: Engine, *, check_foreign_keys: bool = False) -> Backend:
    """The backend of *engine*'s dialect (SQLite or PostgreSQL)."""
    kinds: dict[str, type[Backend]] = {"sqlite": SqliteBackend, "postgresql": PostgresBackend}
    kind = kinds.get(engine.dialect.name)
    if kind is None:
        raise DatabaseError(f"negagraph stores in SQLite or PostgreSQL, not {engine.dialect.name}")
    return kind(engine, check_foreign_keys=check_foreign_keys)


__all__ = ["backend_for"]
