"""SQLite: a key index per variant instead of one unique constraint over all of them.

``nodes`` loses its ``UNIQUE (variant_id, key)`` constraint on SQLite; each variant gets
``nodes_key_<vid>``, unique on ``key`` where ``variant_id = <vid>``, which SQLite uses
for the same lookups. The store may then reshape one variant's index without touching
the others': by id range while a large solve writes, none while a tiered full solve
writes (``db/backends/sqlite/keyindex.py``, docs/design.md). SQLite cannot drop a table
constraint, so the table is rebuilt (its rows copied once: on a large database this
takes a while) by SQLite's own procedure, with foreign keys off
(``db.migrate.foreign_keys_off``) and checked at the end. PostgreSQL keeps its
constraint: nothing changes there.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (
    "variant_id, id, low, high, depth_low, depth_high, dist, state, low_final, high_final, "
    '"key", notation, expanded_in'
)

# The table as 0001 and 0006 made it, with or without the key constraint.
_NODES = """\
CREATE TABLE nodes_new (
    variant_id INTEGER NOT NULL,
    id INTEGER NOT NULL,
    low BIGINT,
    high BIGINT,
    depth_low INTEGER,
    depth_high INTEGER,
    dist INTEGER NOT NULL,
    state SMALLINT NOT NULL,
    low_final BOOLEAN NOT NULL,
    high_final BOOLEAN NOT NULL,
    "key" BLOB NOT NULL,
    notation TEXT NOT NULL,
    expanded_in INTEGER,
    CONSTRAINT pk_nodes PRIMARY KEY (variant_id, id),
    CONSTRAINT ck_nodes_low_le_high CHECK (low <= high),
    CONSTRAINT ck_nodes_state CHECK (state BETWEEN 0 AND 2),
    CONSTRAINT fk_nodes_variant_id_variants FOREIGN KEY(variant_id)
        REFERENCES variants (id) ON DELETE CASCADE{unique}
) WITHOUT ROWID"""

_UNIQUE = """,
    CONSTRAINT uq_nodes_variant_id_key UNIQUE (variant_id, "key")"""


def _rebuild(*, unique: bool) -> None:
    """Rebuild ``nodes`` (SQLite's twelve steps): the views that read it are dropped and
    made again as they were, since SQLite checks them when the new table is renamed."""
    bind = op.get_bind()
    if bind.exec_driver_sql("PRAGMA foreign_keys").scalar():
        raise RuntimeError(
            "migration 0014 rebuilds the nodes table and needs foreign keys off "
            "(db.migrate runs it so): dropping the old table would delete every edge"
        )
    views = bind.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid"
    ).all()
    for name, _ in views:
        op.execute(f'DROP VIEW "{name}"')
    op.execute(_NODES.format(unique=_UNIQUE if unique else ""))
    op.execute(f"INSERT INTO nodes_new ({_COLUMNS}) SELECT {_COLUMNS} FROM nodes")
    op.execute("DROP TABLE nodes")
    op.execute("ALTER TABLE nodes_new RENAME TO nodes")
    for _, sql in views:
        op.execute(sql)
    broken = bind.exec_driver_sql("PRAGMA foreign_key_check").all()
    if broken:
        raise RuntimeError(f"migration 0014: {len(broken)} rows break a foreign key: {broken[:3]}")


def upgrade() -> None:
    """Upgrade schema."""
    if op.get_bind().dialect.name != "sqlite":
        return
    _rebuild(unique=False)
    for (vid,) in op.get_bind().exec_driver_sql("SELECT id FROM variants ORDER BY id").all():
        # As db.backends.sqlite.keyindex.create_whole makes it (a migration must not change
        # with later code).
        op.execute(
            f'CREATE UNIQUE INDEX nodes_key_{int(vid)} ON nodes ("key") '
            f"WHERE variant_id = {int(vid)}"
        )


def downgrade() -> None:
    """Downgrade schema."""
    if op.get_bind().dialect.name != "sqlite":
        return
    _rebuild(unique=True)  # the variants' key indexes go with the old table
