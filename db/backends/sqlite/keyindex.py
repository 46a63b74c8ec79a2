"""The key index of a variant's nodes on SQLite: one per variant, whole or by id range.

On PostgreSQL the ``nodes`` table carries one unique constraint on ``(variant_id, key)``
for every variant. On SQLite each variant has its own index instead (migration 0014),
in one of three forms, told apart by the names in ``sqlite_master``:

- **whole**: ``nodes_key_<vid>``, unique on ``key`` where ``variant_id = <vid>``. A new
  variant gets it, and so does every solved one. SQLite uses it for any query that says
  ``variant_id = ? AND key = ?``, bound parameters included.
- **by range**: ``nodes_key_<vid>_ranged``, unique on ``(id >> 24, key)`` where
  ``variant_id = <vid>``: the keys of each range of :data:`KEY_RANGE` node ids apart.
  A solve switches to it when its variant outgrows :data:`KEY_RANGE` nodes. A new
  node's key then goes into the newest range's part of the index, which stays in the
  page cache, instead of a random place in an index of gigabytes, where every commit
  dirtied pages all over it (the write path that set the pace of large partial solves,
  docs/performance.md). A lookup asks the ranges in one statement (:func:`lookup`;
  the solver's newest first, :func:`newest_first`). The run that completes the solve
  makes the index whole again (:func:`merge`).
- **none**: a tiered full solve writes its positions without a key index (it finds a
  position's children among its own tier and reads the child tiers by id, never by key)
  and builds the whole index once, sorted, when its last tier is solved.

Uniqueness within a variant is the solver's (it looks a key up before it adds a node;
a tier's discovery dedups in memory); the whole index checks it again when it is built.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

RANGE_BITS = 24
KEY_RANGE = 1 << RANGE_BITS
"""Node ids per range of a ranged key index (16,777,216): about 300 MiB of index for
connect-four's keys, within the page cache a 4 GiB memory limit gives SQLite."""


@dataclass(frozen=True)
class KeyIndex:
    """Which key index a variant has on SQLite: at most one of the two."""

    whole: bool
    ranged: bool = False

    @property
    def none(self) -> bool:
        return not self.whole and not self.ranged


WHOLE = KeyIndex(whole=True)
RANGED = KeyIndex(whole=False, ranged=True)
NONE = KeyIndex(whole=False)


def whole_name(vid: int) -> str:
    return f"nodes_key_{int(vid)}"


def ranged_name(vid: int) -> str:
    return f"nodes_key_{int(vid)}_ranged"


def read(cursor: Any, vid: int) -> KeyIndex:
    """The key index variant *vid* has, from ``sqlite_master`` (*cursor*: sqlite3's)."""
    names = {
        name
        for (name,) in cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'nodes' "
            "AND name IN (?, ?)",
            (whole_name(vid), ranged_name(vid)),
        ).fetchall()
    }
    return KeyIndex(whole=whole_name(vid) in names, ranged=ranged_name(vid) in names)


SORT_THREADS = min(4, os.cpu_count() or 1)
"""Threads SQLite's sorter may use to build an index (``PRAGMA threads``: the machine's
cores, up to 4): 5 x 4's 3.9 M keys sort in 2.8 s on two cores against 3.9 s on one
(``docs/performance.md``), for the sorter's second buffer (60 MiB there)."""


def _build(cursor: Any, sql: str) -> None:
    """Run *sql*, a ``CREATE INDEX``, its sort on :data:`SORT_THREADS` threads."""
    cursor.execute(f"PRAGMA threads = {SORT_THREADS}")
    try:
        cursor.execute(sql)
    finally:
        cursor.execute("PRAGMA threads = 0")


def create_whole(cursor: Any, vid: int) -> None:
    """Make variant *vid*'s whole key index if it has none (this sorts every key the
    variant has: a large variant takes a while)."""
    _build(
        cursor,
        f'CREATE UNIQUE INDEX IF NOT EXISTS {whole_name(vid)} ON nodes ("key") '
        f"WHERE variant_id = {int(vid)}",
    )


def drop(cursor: Any, vid: int) -> KeyIndex:
    """Drop variant *vid*'s key index, whichever it has; ``NONE``."""
    cursor.execute(f"DROP INDEX IF EXISTS {whole_name(vid)}")
    cursor.execute(f"DROP INDEX IF EXISTS {ranged_name(vid)}")
    return NONE


def grow(cursor: Any, vid: int, index: KeyIndex, nodes: int) -> KeyIndex:
    """Variant *vid*'s key index once it holds ids ``0 .. nodes - 1``: *index* as it is,
    but ranged from :data:`KEY_RANGE` nodes on (the switch sorts the keys stored so far
    into the new index, once)."""
    if not index.whole or nodes <= KEY_RANGE:
        return index
    started = time.monotonic()
    cursor.execute(f"DROP INDEX {whole_name(vid)}")
    _build(
        cursor,
        f'CREATE UNIQUE INDEX {ranged_name(vid)} ON nodes (id >> {RANGE_BITS}, "key") '
        f"WHERE variant_id = {int(vid)}",
    )
    log.info(
        "variant %d: %d nodes, key index now by ranges of %d ids (%.1f s)",
        vid, nodes, KEY_RANGE, time.monotonic() - started,
    )  # fmt: skip
    return RANGED


def merge(cursor: Any, vid: int, index: KeyIndex) -> KeyIndex:
    """Variant *vid*'s key index made whole (*index*: what it has now); ``WHOLE``."""
    if index.whole:
        return index
    started = time.monotonic()
    create_whole(cursor, vid)
    cursor.execute(f"DROP INDEX IF EXISTS {ranged_name(vid)}")
    log.info("variant %d: whole key index built in %.1f s", vid, time.monotonic() - started)
    return WHOLE


def lookup(vid: int, index: KeyIndex, nodes: int, alias: str = "n") -> tuple[str, str]:
    """How to find keys of variant *vid*, which has key index *index* and ids below
    *nodes*: the table to read (``nodes AS {alias}``, with the index to use) and the
    condition on it, to which the caller adds ``AND {alias}."key" = ...`` (a marker, or a
    joined column). The variant id is written in, not bound: SQLite uses a partial index
    only where it can see that its condition holds. A variant without a key index (a
    tiered solve under way) is scanned."""
    ranges = max(1, -(-nodes // KEY_RANGE)) if index.ranged else 0
    return _lookup(int(vid), ranges, RANGE_BITS, alias)


@lru_cache(maxsize=256)
def _lookup(vid: int, ranges: int, bits: int, alias: str) -> tuple[str, str]:
    """:func:`lookup` of a variant with *ranges* ranges of ``2 ** bits`` ids (0: an index
    not by range), made once (a solve asks at every expansion that looks a key up)."""
    table = f"nodes AS {alias}"
    where = f"{alias}.variant_id = {vid}"
    if ranges:
        table += f" INDEXED BY {ranged_name(vid)}"
        listed = ", ".join(str(r) for r in range(ranges))
        where += f" AND ({alias}.id >> {bits}) IN ({listed})"
    return table, where


def newest_first(index: KeyIndex, alias: str = "n") -> str:
    """What to add to a :func:`lookup` of one key so that it asks the ranges newest first
    and stops at the one that holds it: ``ORDER BY ... DESC LIMIT 1`` where the index is
    by range, else nothing."""
    return f" ORDER BY ({alias}.id >> {RANGE_BITS}) DESC LIMIT 1" if index.ranged else ""


def reader_lookup(raw: Any, vid: int) -> tuple[str, str] | None:
    """:func:`lookup` for a reader of variant *vid* on SQLite's connection *raw*, which
    knows neither the index nor the ids: ``None`` when the plain ``variant_id = ? AND
    key = ?`` serves (a whole index, or none to scan)."""
    index = read(raw, vid)
    if not index.ranged:
        return None
    (top,) = raw.execute("SELECT max(id) FROM nodes WHERE variant_id = ?", (vid,)).fetchone()
    return lookup(vid, index, 0 if top is None else int(top) + 1)


__all__ = [
    "KEY_RANGE",
    "NONE",
    "RANGED",
    "RANGE_BITS",
    "WHOLE",
    "KeyIndex",
    "create_whole",
    "drop",
    "grow",
    "lookup",
    "merge",
    "newest_first",
    "ranged_name",
    "read",
    "reader_lookup",
    "whole_name",
]
