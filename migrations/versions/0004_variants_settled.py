"""variants.settled: whether the stored depths and flags are those of a closing pass.

A partial solve ends with a closing pass (depths for every node; for games that may
repeat, exact finality over the whole graph), committed after its last batch. A run that
died between the two used to leave the root decided but the pass missing, for good: the
next run found the root final and stopped at once. Every batch now writes ``settled``
false and the closing pass true, in its own transaction, and a run that finds the root
decided but the graph unsettled finishes the pass.

Existing variants start unsettled: their next partial run redoes the closing pass once
(one retrograde pass), which repairs a graph left by that crash window and changes
nothing otherwise.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column(
        "variants",
        sa.Column("settled", sa.Boolean(), server_default=sa.false(), nullable=False),
    )


def downgrade() -> None:
    """Downgrade schema."""
    # Both dialects drop a column in place (SQLite from 3.35); a batch rebuild would drop
    # the table that nodes and runs reference.
    op.execute("ALTER TABLE variants DROP COLUMN settled")
