"""The compact layout of a complete variant (``docs/design.md`` §5, "The compact layout"):
what a tiered full solve asked for it (``--layout compact``) stores instead of node and
edge rows.

In a complete solve every position's moves and notation follow from the rules; only the
values do not. So each tier's positions go to a table of their own,
``compact_<variant>_<ordinal>`` (the tier's place in discovery order), one row a
position, keyed by the position's 64-bit key as a signed integer (on SQLite the rowid
itself, so the key costs no index), holding its two bounds and two depths::

    key INTEGER PRIMARY KEY, low, high, depth_low, depth_high

NULL is an infinite bound or depth, as in ``nodes``; every bound is final, and a position
is terminal exactly where ``depth_low`` is 0. The tier's rows are written in key order
(a tier's positions are sorted by key before its shards are planned), so SQLite appends
them and fills its pages. The view ``compact_<variant>`` is the union of the variant's
tables, for SQL.

A position is read by its key from its tier's table: the game says the tier
(:meth:`solver.game.TieredRules.tier`), the ``tiers`` table which table it is.

**PostgreSQL: blocks of positions.** A PostgreSQL row costs a 24-byte header and a
4-byte line pointer before its data, and a B-tree entry of about 20 bytes: one position a
row took 87 bytes on connect-four 4 x 4. So on PostgreSQL a row holds a *block* of up to
:data:`BLOCK` consecutive positions of the tier (in key order), as arrays, keyed by the
block's first key::

    first_key BIGINT PRIMARY KEY, "key" BIGINT[], low BIGINT[], high BIGINT[],
    depth_low INTEGER[], depth_high INTEGER[]

(the arrays' elements in step, NULL an infinite bound or depth). A position is found in
the block with the greatest ``first_key`` at most its key (one index probe), and the view
unnests the blocks into the same five columns as SQLite's tables, so SQL over
``compact_<variant>`` reads alike on both engines. A shard's positions are cut into
blocks of their own (a block never spans two transactions).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import select, text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from db import rows
from db.backends.base import Backend, driver
from db.errors import DatabaseError
from db.models import Tier, Variant
from db.records import PositionRecord, bounds_of
from solver.game import Game, PositionKey
from solver.store import TierNodes, TierValues
from solver.tiers.graph import tier_rules
from solver.values import DEPTH_INF, NEG_INF, POS_INF

GRAPH = "graph"
"""``variants.layout`` of node and edge rows."""
COMPACT = "compact"
"""``variants.layout`` of a complete tiered solve's tables of values by key."""
LAYOUTS = (GRAPH, COMPACT)

COLUMNS = ("key", "low", "high", "depth_low", "depth_high")
"""A compact table's columns, in the order of :func:`write_rows` and :func:`read_tier`."""
_SPECS: tuple[rows.Spec, ...] = (
    None,
    rows.BOUND_NULLS,
    rows.BOUND_NULLS,
    rows.DEPTH_NULLS,
    rows.DEPTH_NULLS,
)
_ARRAYS: tuple[tuple[type[np.generic], int, bool], ...] = (
    (np.int64, 0, False),
    (np.int64, NEG_INF, False),
    (np.int64, POS_INF, False),
    (np.int32, DEPTH_INF, False),
    (np.int32, DEPTH_INF, False),
)
_SIGN = 1 << 63

BLOCK = 256
"""Positions a row of a PostgreSQL compact table holds at most (a shard's last block may
hold fewer). 256 positions are about 8 KB of arrays, which PostgreSQL compresses and
keeps out of line (TOAST); a lookup reads one block."""


def table(vid: int, ordinal: int) -> str:
    """The table of tier *ordinal* (its place in discovery order) of variant *vid*."""
    return f"compact_{int(vid)}_{int(ordinal)}"


def view(vid: int) -> str:
    """The view joining variant *vid*'s tables."""
    return f"compact_{int(vid)}"


def signed(key: PositionKey) -> int:
    """*key* (64 bits) as the signed integer a compact table stores."""
    return int(key) - (1 << 64) if int(key) >= _SIGN else int(key)


def unsigned(stored: int) -> int:
    """A stored key as the game's key."""
    return stored + (1 << 64) if stored < 0 else stored


def layout_of(conn: Any, vid: int) -> str:
    """Variant *vid*'s layout (a SQLAlchemy connection or session)."""
    found = conn.execute(select(Variant.layout).where(Variant.id == vid)).scalar()
    return GRAPH if found is None else str(found)


def create_table(conn: Connection, vid: int, ordinal: int) -> None:
    """Make tier *ordinal*'s table (inside the caller's transaction: the commit that
    records the tier). One left by a variant that had the same id before (SQLite reuses
    the ids of deleted rows) is dropped first."""
    name = table(vid, ordinal)
    conn.execute(text(f"DROP VIEW IF EXISTS {view(vid)}"))  # remade as tiers are solved
    conn.execute(text(f"DROP TABLE IF EXISTS {name}"))
    if conn.dialect.name == "sqlite":
        ddl = (
            f"CREATE TABLE {name} (key INTEGER PRIMARY KEY, low INTEGER, "
            "high INTEGER, depth_low INTEGER, depth_high INTEGER)"
        )
    else:
        ddl = (
            f'CREATE TABLE {name} (first_key BIGINT PRIMARY KEY, "key" BIGINT[] NOT NULL, '
            "low BIGINT[] NOT NULL, high BIGINT[] NOT NULL, depth_low INTEGER[] NOT NULL, "
            "depth_high INTEGER[] NOT NULL)"
        )
    conn.execute(text(ddl))


def _select_rows(dialect: str, name: str) -> str:
    """A ``SELECT`` of table *name*'s positions as rows of :data:`COLUMNS` (on PostgreSQL
    its blocks unnested)."""
    if dialect == "sqlite":
        return f'SELECT "key", low, high, depth_low, depth_high FROM {name}'
    return (
        'SELECT u."key", u.low, u.high, u.depth_low, u.depth_high '
        f"FROM {name} AS b CROSS JOIN LATERAL "
        "unnest(b.key, b.low, b.high, b.depth_low, b.depth_high) "
        'AS u("key", low, high, depth_low, depth_high)'
    )


def refresh_view(conn: Connection, vid: int, ordinals: Sequence[int]) -> None:
    """(Re)make the view of variant *vid* over the tables of tiers *ordinals* (inside the
    caller's transaction)."""
    conn.execute(text(f"DROP VIEW IF EXISTS {view(vid)}"))
    if not ordinals:
        return
    parts = " UNION ALL ".join(_select_rows(conn.dialect.name, table(vid, o)) for o in ordinals)
    conn.execute(text(f"CREATE VIEW {view(vid)} AS {parts}"))


def drop_tables(conn: Connection, vid: int, ordinals: Iterable[int]) -> None:
    """Drop variant *vid*'s view and tables (a variant deleted)."""
    conn.execute(text(f"DROP VIEW IF EXISTS {view(vid)}"))
    for ordinal in ordinals:
        conn.execute(text(f"DROP TABLE IF EXISTS {table(vid, ordinal)}"))


def write_rows(
    cursor: Any,
    backend: Backend,
    vid: int,
    ordinal: int,
    keys: npt.NDArray[np.int64],
    values: TierValues,
) -> None:
    """Insert a solved shard's positions (*keys* ascending, *values* theirs) into tier
    *ordinal*'s table, through the DB-API *cursor* of the caller's transaction."""
    name = table(vid, ordinal)
    if backend.engine.dialect.name != "sqlite":
        backend.write_table(cursor, name, BLOCK_COLUMNS, _blocks(keys, values))
        return
    for start, stop in rows.chunks_of(range(int(keys.size))):
        columns = [
            keys[start:stop],
            values.low[start:stop],
            values.high[start:stop],
            values.depth_low[start:stop],
            values.depth_high[start:stop],
        ]
        backend.write_columns(cursor, name, COLUMNS, columns, _SPECS)


BLOCK_COLUMNS = ("first_key", "key", "low", "high", "depth_low", "depth_high")
"""A PostgreSQL compact table's columns: a block's first key, then :data:`COLUMNS` as
arrays."""


def _blocks(
    keys: npt.NDArray[np.int64], values: TierValues
) -> Iterator[tuple[int, list[int], list[Any], list[Any], list[Any], list[Any]]]:
    """A shard's positions (*keys* ascending) as rows of :data:`BLOCK_COLUMNS`."""
    columns = (
        (values.low, NEG_INF),
        (values.high, POS_INF),
        (values.depth_low, DEPTH_INF),
        (values.depth_high, DEPTH_INF),
    )
    for start in range(0, int(keys.size), BLOCK):
        stop = start + BLOCK
        block = keys[start:stop].tolist()
        low, high, dlow, dhigh = (_nulls(a[start:stop], inf) for a, inf in columns)
        yield block[0], block, low, high, dlow, dhigh


def _nulls(array: npt.NDArray[Any], infinite: int) -> list[Any]:
    """*array*'s values, ``None`` (NULL) where *infinite*."""
    if not (array == infinite).any():
        return array.tolist()  # type: ignore[no-any-return]
    return [None if v == infinite else v for v in array.tolist()]


def read_tier(
    conn: Connection, backend: Backend, vid: int, ordinal: int, count: int
) -> tuple[npt.NDArray[np.int64], TierValues]:
    """Tier *ordinal*'s keys (ascending) and values, *count* positions expected.

    :raises DatabaseError: if the table holds another number of positions.
    """
    name = table(vid, ordinal)
    if conn.dialect.name == "sqlite":
        sql = f'{_select_rows("sqlite", name)} ORDER BY "key"'
        arrays = backend.fetch_arrays(conn, sql, (), _ARRAYS, count + 1)
        if arrays is None:
            arrays = _fetched_arrays(backend.fetch(conn, sql, ()), count)
    else:
        arrays = _unblocked(backend.fetch(conn, _BLOCKS_IN_ORDER.format(name=name), ()), count)
    if arrays[0].size != count:
        raise DatabaseError(
            f"tier {ordinal} of variant {vid} holds {min(arrays[0].size, count):,} of its "
            f"{count:,} positions: the compact table is damaged"
        )
    keys, low, high, dlow, dhigh = arrays
    return keys, TierValues(low, high, dlow, dhigh)


_BLOCKS_IN_ORDER = 'SELECT "key", low, high, depth_low, depth_high FROM {name} ORDER BY first_key'
"""A PostgreSQL compact table's blocks in key order."""


def _unblocked(chunks: Iterator[list[tuple[Any, ...]]], count: int) -> list[npt.NDArray[Any]]:
    """Blocks read in key order as :data:`_ARRAYS`' arrays (at most *count* + 1
    positions)."""
    columns: list[list[Any]] = [[] for _ in _ARRAYS]
    for chunk in chunks:
        for block in chunk:
            for column, values in zip(columns, block, strict=True):
                column.extend(values)
        if len(columns[0]) > count:
            break
    return [
        np.array([null if v is None else v for v in column[: count + 1]], dtype=dtype)
        for column, (dtype, null, _) in zip(columns, _ARRAYS, strict=True)
    ]


def _fetched_arrays(chunks: Iterator[list[tuple[Any, ...]]], count: int) -> list[npt.NDArray[Any]]:
    """Rows read through Python as :data:`_ARRAYS`' arrays (at most *count* + 1 rows)."""
    found: list[tuple[Any, ...]] = []
    for chunk in chunks:
        found.extend(chunk)
        if len(found) > count:
            break
    columns = list(zip(*found, strict=True)) if found else [()] * len(_ARRAYS)
    return [
        np.array([null if v is None else v for v in column], dtype=dtype)
        for column, (dtype, null, _) in zip(columns, _ARRAYS, strict=True)
    ]


def tier_nodes(keys: npt.NDArray[np.int64], values: TierValues) -> TierNodes:
    """A solved tier's positions as :class:`TierNodes` (distances are not stored: 0)."""
    terminal = values.depth_low == 0
    return TierNodes(
        keys, np.zeros(keys.size, dtype=np.int32), terminal, np.where(terminal, values.low, 0)
    )


def tier_tables(conn: Any, vid: int) -> dict[int, int]:
    """Variant *vid*'s solved tiers: tier number -> ordinal (its table)."""
    found = conn.execute(
        select(Tier.tier, Tier.ordinal).where(Tier.variant_id == vid, Tier.solved_in.is_not(None))
    )
    return {int(tier): int(ordinal) for tier, ordinal in found}


def stored_tiers(session: Any, variant_id: int) -> dict[int, int] | None:
    """A compact variant's solved tiers (:func:`tier_tables`), or ``None`` for a graph
    (a SQLAlchemy session or connection)."""
    if layout_of(session, variant_id) != COMPACT:
        return None
    return tier_tables(session, variant_id)


def raw_stored_tiers(cursor: Any, marker: str, variant_id: int) -> dict[int, int]:
    """:func:`stored_tiers` on a DB-API *cursor* (empty: a graph, or nothing solved)."""
    cursor.execute(
        "SELECT t.tier, t.ordinal FROM tiers AS t JOIN variants AS v ON v.id = t.variant_id "
        f"WHERE v.id = {marker} AND v.layout = 'compact' AND t.solved_in IS NOT NULL",
        (variant_id,),
    )
    return {int(tier): int(ordinal) for tier, ordinal in cursor.fetchall()}


def needed(game: Game | None, variant_id: int) -> Game:
    """*game*, which reading compact variant *variant_id* needs (the tiers of keys).

    :raises ValueError: for ``None``."""
    if game is None:
        raise ValueError(f"variant {variant_id} is stored compact: reading it needs its game")
    return game


def read_positions(
    session: Any,
    variant_id: int,
    game: Game | None,
    tables: dict[int, int],
    keys: Sequence[PositionKey],
) -> dict[PositionKey, PositionRecord]:
    """:func:`lookup` through a SQLAlchemy *session*'s (or connection's) DB-API connection.

    :raises ValueError: without the *game* the compact layout needs."""
    conn = session.connection() if isinstance(session, Session) else session
    marker = "?" if conn.dialect.name == "sqlite" else "%s"
    cursor = driver(conn).cursor()
    try:
        return lookup(cursor, marker, variant_id, needed(game, variant_id), tables, keys)
    finally:
        cursor.close()


def lookup(
    cursor: Any,
    marker: str,
    vid: int,
    game: Game,
    tables: dict[int, int],
    keys: Sequence[PositionKey],
) -> dict[PositionKey, PositionRecord]:
    """The stored records of *keys* (canonical) of compact variant *vid*, by key, read
    through DB-API *cursor* (positional *marker*: ``?`` or ``%s``); keys whose tier is not
    solved, or not of the game's tiers, are absent."""
    by_table: dict[int, list[int]] = {}
    tier_of = tier_rules(game).tier
    for key in keys:
        ordinal = tables.get(int(tier_of(key)))
        if ordinal is not None:
            by_table.setdefault(ordinal, []).append(signed(key))
    found: dict[PositionKey, PositionRecord] = {}
    for ordinal, wanted in by_table.items():
        for start in range(0, len(wanted), 512):
            chunk = wanted[start : start + 512]
            if marker == "?":  # SQLite
                marks = ", ".join([marker] * len(chunk))
                cursor.execute(
                    f'SELECT "key", low, high, depth_low, depth_high FROM {table(vid, ordinal)} '
                    f'WHERE "key" IN ({marks})',
                    chunk,
                )
            else:
                cursor.execute(_IN_BLOCKS.format(name=table(vid, ordinal)), (chunk,))
            for row in cursor.fetchall():
                record = position_record(game, vid, *row)
                found[record.key] = record
    return found


_IN_BLOCKS = (
    "SELECT q.k, b.low[p.i], b.high[p.i], b.depth_low[p.i], b.depth_high[p.i] "
    "FROM unnest(%s::bigint[]) AS q(k) CROSS JOIN LATERAL ("
    '  SELECT "key", low, high, depth_low, depth_high FROM {name}'
    "  WHERE first_key <= q.k ORDER BY first_key DESC LIMIT 1) AS b "
    'CROSS JOIN LATERAL (SELECT array_position(b."key", q.k) AS i) AS p WHERE p.i IS NOT NULL'
)
"""The positions of keys (a PostgreSQL array parameter) in a compact table's blocks: for
each key, the block with the greatest first key at most it, and the key's place in it."""


def position_record(
    game: Game, vid: int, key: int, low: Any, high: Any, dlow: Any, dhigh: Any
) -> PositionRecord:
    """A compact row as the record a node row would give (every bound final; the node id
    is the key, and the distance from the root, which the layout does not keep, 0)."""
    real = unsigned(int(key))
    return PositionRecord(
        variant_id=vid,
        node_id=real,
        key=real,
        position=game.format(real),
        bounds=bounds_of(low, high, True, True),
        depth_low=dlow,
        depth_high=dhigh,
        state="terminal" if dlow == 0 else "expanded",
        dist=0,
    )


__all__ = [
    "COLUMNS",
    "COMPACT",
    "GRAPH",
    "LAYOUTS",
    "create_table",
    "layout_of",
    "lookup",
    "needed",
    "raw_stored_tiers",
    "read_positions",
    "read_tier",
    "refresh_view",
    "signed",
    "stored_tiers",
    "table",
    "tier_nodes",
    "tier_tables",
    "unsigned",
    "view",
    "write_rows",
]
