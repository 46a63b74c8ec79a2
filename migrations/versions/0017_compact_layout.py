"""variants.layout: a variant stored in the compact layout of complete solves.

A tiered full solve asked for the compact layout (``negagraph solve --full --layout
compact``) stores no node or edge rows: each tier's positions go to a table of their own,
``compact_<variant>_<ordinal>``, one row a position keyed by the position's 64-bit key
(the rowid itself on SQLite), holding its two bounds and two depths; the view
``compact_<variant>`` joins them. Those tables are made by the store, per variant, and
are not part of this schema; this revision only records which layout a variant has.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28 20:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column(
        "variants",
        sa.Column("layout", sa.Text(), server_default=sa.text("'graph'"), nullable=False),
    )


def downgrade() -> None:
    """Downgrade schema."""
    compact = (
        op.get_bind()
        .execute(sa.text("SELECT count(*) FROM variants WHERE layout <> 'graph'"))
        .scalar()
    )
    if compact:
        raise RuntimeError(
            "migration 0017 cannot be undone: a variant is stored in the compact layout, "
            "which the older schema cannot describe"
        )
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later, PostgreSQL): a batch copy of
    # the table would break the views that read it
    op.drop_column("variants", "layout")
