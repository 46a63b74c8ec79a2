"""Checkpoints of a SQLite database's write-ahead log (:mod:`db.backends.sqlite.backend`), on a
disk that may be full.

A checkpoint copies the log's pages into the database file, which grows to the size the
log's last commit gave the database, while the log stays whole until every page is
copied. On a
disk without that much room it fails partway (``database or disk is full``) having
grown the file into the last free bytes: the log can then neither restart nor grow, and
the next commit fails, even the small one that records the run's end. So a checkpoint
is only begun when the disk has room for the file to grow to the database's size
(:func:`no_room`); otherwise, or if it fails anyway, the log stays as it is — whole
and valid: SQLite reads it, and the next checkpoint with room copies it — and the
connection is unharmed (no transaction, no lock held).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from typing import Any

log = logging.getLogger(__name__)


def checkpoint(sqlite: Any, mode: str) -> None:
    """Checkpoint the log of *sqlite* (a :mod:`sqlite3` connection outside any
    transaction) in *mode* (``PASSIVE``, ``TRUNCATE``), if the disk has room for it.
    A ``TRUNCATE`` checkpoint waits for readers in mid-read (the busy timeout); one that
    outlasts it leaves the log for the next writer or reader to checkpoint."""
    reason = no_room(sqlite)
    if reason is not None:
        log.info("write-ahead log not copied into the database file: %s", reason)
        return
    try:
        busy, log_pages, done = sqlite.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    except sqlite3.OperationalError as exc:  # a full disk all the same (another writer)
        log.info("write-ahead log not copied into the database file: %s", exc)
        return
    if busy:
        log.info(
            "write-ahead log not truncated (%d of %d pages copied): readers were still reading",
            done,
            log_pages,
        )


def no_room(sqlite: Any) -> str | None:
    """Why the disk of *sqlite*'s database has no room for a checkpoint: the file must
    grow to the size of the database as its log's last commit left it, and the disk has
    less room than that; ``None`` if it has (or the database is not a file)."""
    path = sqlite.execute("PRAGMA database_list").fetchone()[2]
    if not path:
        return None
    (pages,) = sqlite.execute("PRAGMA page_count").fetchone()
    (page_bytes,) = sqlite.execute("PRAGMA page_size").fetchone()
    try:
        growth = pages * page_bytes - os.path.getsize(path)
        disk = os.statvfs(os.path.dirname(path) or ".")
    except OSError:  # a file system that tells nothing: try
        return None
    free = disk.f_bavail * disk.f_frsize
    if free >= growth:
        return None
    return (
        f"the disk has {free / 2**20:.1f} MiB free, the file needs {growth / 2**20:.1f} MiB "
        "more (the log stays beside it)"
    )


def vacuum(sqlite: Any, share: float) -> bool:
    """Rebuild the database of *sqlite* (a :mod:`sqlite3` connection outside any
    transaction) if its free pages are more than *share* of it and the disk has room for
    the rebuild: SQLite writes the live pages to a temporary copy, then back through the
    write-ahead log, so about twice their size. Whether it was rebuilt."""
    (free,) = sqlite.execute("PRAGMA freelist_count").fetchone()
    (pages,) = sqlite.execute("PRAGMA page_count").fetchone()
    if not pages or free <= share * pages:
        return False
    path = sqlite.execute("PRAGMA database_list").fetchone()[2]
    (page_bytes,) = sqlite.execute("PRAGMA page_size").fetchone()
    need = 2 * (pages - free) * page_bytes
    try:
        disk = os.statvfs(os.path.dirname(path) or ".") if path else None
    except OSError:
        disk = None
    if disk is None or disk.f_bavail * disk.f_frsize < need:
        log.info("database file not rebuilt to free %d pages: no room for its copy", free)
        return False
    try:
        sqlite.execute("VACUUM")
    except sqlite3.OperationalError as exc:  # a full disk all the same, a reader's lock
        log.info("database file not rebuilt: %s", exc)
        return False
    return True


__all__ = ["checkpoint", "no_room", "vacuum"]
