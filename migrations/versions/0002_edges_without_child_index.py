"""Edges without the child index: parent lookups scan, every solve writes a third less.

The index on ``edges (variant_id, child)`` served only "which positions lead here" (no
part of negagraph asks that often) and the foreign key from ``child`` to ``nodes``. It
cost about a third of the database and, written in random order, most of the time of a
full solve. The foreign key goes with it: deleting a node would otherwise scan every edge
of its variant. Edges still cascade from their parent node (its index is the primary
key), and the solver's loader checks that every stored edge leads to a stored node.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHILD_FK = "fk_edges_variant_id_child_nodes"
_CHILD_INDEX = "ix_edges_variant_id_child"

# SQLite cannot drop a foreign key: the table is rebuilt (as WITHOUT ROWID, like 0001).
_SQLITE_EDGES = """\
CREATE TABLE edges_new (
    variant_id INTEGER NOT NULL,
    parent INTEGER NOT NULL,
    move_order SMALLINT NOT NULL,
    child INTEGER NOT NULL,
    move TEXT NOT NULL,
    CONSTRAINT pk_edges PRIMARY KEY (variant_id, parent, move_order),
    CONSTRAINT fk_edges_variant_id_parent_nodes FOREIGN KEY(variant_id, parent)
        REFERENCES nodes (variant_id, id) ON DELETE CASCADE{child_fk}
) WITHOUT ROWID"""
_SQLITE_CHILD_FK = """,
    CONSTRAINT fk_edges_variant_id_child_nodes FOREIGN KEY(variant_id, child)
        REFERENCES nodes (variant_id, id) ON DELETE CASCADE"""


def _sqlite_rebuild(child_fk: bool) -> None:
    op.execute(_SQLITE_EDGES.format(child_fk=_SQLITE_CHILD_FK if child_fk else ""))
    op.execute(
        "INSERT INTO edges_new (variant_id, parent, move_order, child, move) "
        "SELECT variant_id, parent, move_order, child, move FROM edges"
    )
    op.execute("DROP TABLE edges")
    op.execute("ALTER TABLE edges_new RENAME TO edges")


def upgrade() -> None:
    """Upgrade schema."""
    op.drop_index(_CHILD_INDEX, table_name="edges")
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_rebuild(child_fk=False)
    else:
        op.drop_constraint(_CHILD_FK, "edges", type_="foreignkey")


def downgrade() -> None:
    """Downgrade schema."""
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_rebuild(child_fk=True)
    else:
        op.create_foreign_key(
            _CHILD_FK,
            "edges",
            "nodes",
            ["variant_id", "child"],
            ["variant_id", "id"],
            ondelete="CASCADE",
        )
    op.create_index(_CHILD_INDEX, "edges", ["variant_id", "child"])
