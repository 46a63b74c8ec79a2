"""Reference solves shared by the tests of a session: a solved SQLite database is built
once per test session (by whichever xdist worker asks first, under a file lock) and
each test gets its own copy, so that tests comparing against the same reference (an
untiered solve, a tiered one, an uninterrupted command-line run) do not solve it again.

A reference is named by everything that makes it: the game and its parameters and how
it is solved (the options of :func:`solver.negamax.solve`, or the command line's
arguments). A test whose solve is changed by a monkeypatch solves for itself.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from db.migrate import upgrade
from tests.built_once import locked

_schema_head: Path | None = None
"""This process's empty database at schema head (see :func:`empty_database`)."""


def _settle(path: Path) -> None:
    """Fold *path*'s write-ahead log into the file, so that the file alone is the database."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0, wal


def empty_database(path: Path) -> str:
    """The URL of a new SQLite database *path* at schema head: the migrations run once per
    process, later databases are copies of the first (an existing *path* is upgraded)."""
    global _schema_head
    url = f"sqlite:///{path}"
    if path.exists() or _schema_head is None:
        upgrade(url)
        if _schema_head is None and not path.with_name(path.name + "-wal").exists():
            folder = Path(tempfile.mkdtemp(prefix="negagraph-schema-head-"))
            atexit.register(shutil.rmtree, folder, True)
            shutil.copyfile(path, folder / "head.db")
            _schema_head = folder / "head.db"
        return url
    shutil.copyfile(_schema_head, path)
    return url


class References:
    """The session's reference databases, in *root* (shared by the session's workers)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def copy(self, name: str, build: Callable[[str], Any], to: Path) -> tuple[str, Any]:
        """The URL of *to*, a copy of reference *name*, and what *build* returned when it
        made the reference: ``build(url)`` on an empty database at schema head, once a
        session."""
        slug = hashlib.sha256(name.encode()).hexdigest()[:24]
        db, result = self.root / f"{slug}.db", self.root / f"{slug}.pickle"
        with locked(self.root / f"{slug}.lock"):
            if not result.exists():
                part = self.root / f"{slug}.building.db"
                for leftover in part.parent.glob(part.name + "*"):
                    leftover.unlink()
                made = build(empty_database(part))
                _settle(part)
                os.replace(part, db)
                result.write_bytes(pickle.dumps(made))
        shutil.copyfile(db, to)
        return f"sqlite:///{to}", pickle.loads(result.read_bytes())
