"""PostgreSQL compact tables hold blocks of positions, not one position a row.

On PostgreSQL a row of one position (a 64-bit key, two bounds, two depths) cost 87
bytes with its header, line pointer and B-tree entry (connect-four 4 x 4). A compact
table's row now holds up to 256 consecutive positions of its tier as arrays, keyed by
the block's first key (``db.compact``, "PostgreSQL: blocks of positions"): 11 bytes a
position on the same solve. This revision rewrites the compact tables a database holds
already into blocks, and their views to unnest them; SQLite's tables (the rowid is the
key) are unchanged.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 03:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BLOCK = 256
"""Positions a block holds (``db.compact.BLOCK`` when this revision was written)."""

_COLUMNS = '"key", low, high, depth_low, depth_high'


def _tables(element_type: str) -> dict[int, list[str]]:
    """The compact tables whose ``key`` column is of *element_type* (``bigint``: one
    position a row; ``ARRAY``: blocks), by variant."""
    found = op.get_bind().execute(
        sa.text(
            "SELECT c.table_name FROM information_schema.columns AS c "
            "JOIN variants AS v ON c.table_name LIKE 'compact\\_' || v.id || '\\_%' "
            "WHERE c.table_schema = current_schema() AND c.column_name = 'key' "
            "AND c.data_type = :t AND v.layout = 'compact' ORDER BY c.table_name"
        ),
        {"t": element_type},
    )
    tables: dict[int, list[str]] = {}
    for (name,) in found:
        tables.setdefault(int(name.split("_")[1]), []).append(name)
    return tables


def _rewrite(element_type: str, ddl: str, copy: str, select: str) -> None:
    """Rewrite every compact table whose ``key`` is of *element_type*: each is renamed to
    ``<name>_old``, made anew by *ddl* and filled by *copy* (both formatted with the
    table's name), the old one dropped; then each variant's view is remade over its
    tables, each read by *select*."""
    tables = _tables(element_type)
    for vid, names in tables.items():
        op.execute(f"DROP VIEW IF EXISTS compact_{vid}")
        for name in names:
            op.execute(f"ALTER TABLE {name} RENAME TO {name}_old")
            op.execute(ddl.format(name=name))
            op.execute(copy.format(name=name))
            op.execute(f"DROP TABLE {name}_old")
        parts = " UNION ALL ".join(select.format(name=n) for n in names)
        op.execute(f"CREATE VIEW compact_{vid} AS {parts}")


_UNNEST = (
    f"CROSS JOIN LATERAL unnest(b.key, b.low, b.high, b.depth_low, b.depth_high) AS u({_COLUMNS})"
)


def upgrade() -> None:
    """Upgrade schema."""
    if op.get_bind().dialect.name != "postgresql":
        return
    _rewrite(
        "bigint",
        'CREATE TABLE {name} (first_key BIGINT PRIMARY KEY, "key" BIGINT[] NOT NULL, '
        "low BIGINT[] NOT NULL, high BIGINT[] NOT NULL, depth_low INTEGER[] NOT NULL, "
        "depth_high INTEGER[] NOT NULL)",
        'INSERT INTO {name} SELECT min("key"), array_agg("key" ORDER BY "key"), '
        'array_agg(low ORDER BY "key"), array_agg(high ORDER BY "key"), '
        'array_agg(depth_low ORDER BY "key"), array_agg(depth_high ORDER BY "key") '
        f'FROM (SELECT {_COLUMNS}, (row_number() OVER (ORDER BY "key") - 1) / {BLOCK} '
        "AS block FROM {name}_old) AS r GROUP BY block",
        f"SELECT u.* FROM {{name}} AS b {_UNNEST}",
    )


def downgrade() -> None:
    """Downgrade schema."""
    if op.get_bind().dialect.name != "postgresql":
        return
    _rewrite(
        "ARRAY",
        'CREATE TABLE {name} ("key" BIGINT PRIMARY KEY, low BIGINT, '
        "high BIGINT, depth_low INTEGER, depth_high INTEGER)",
        f"INSERT INTO {{name}} SELECT u.* FROM {{name}}_old AS b {_UNNEST}",
        f"SELECT {_COLUMNS} FROM {{name}}",
    )
