"""tiers.first_offset: a tier's place in discovery order, apart from its node ids, which
a tiered solve now gives in solve order.

A tiered full solve discovers its tiers parents first and solves them children first.
Its node ids used to follow discovery, so each solved tier's node rows and edges went
into the middle of their tables, before the tiers solved already: a B-tree seek a row.
Now ``first_offset`` is where the tier's positions are in discovery order (what its
discovered positions and its discovery units are keyed by), and ``first_id``, NULL until
every tier is discovered, is given in solve order: the tier solved first gets ids from
0, so every solved tier's rows are appended.

Existing tiers keep their ids (``first_offset`` = ``first_id``), except the tiers of a
solve in progress that has solved none yet: their ids go back to NULL, to be given
anew. A downgrade refuses while a variant's ids do not follow discovery order.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 23:35:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("tiers", sa.Column("first_offset", sa.BigInteger(), nullable=True))
    op.execute("UPDATE tiers SET first_offset = first_id")
    with op.batch_alter_table("tiers") as batch:
        batch.alter_column("first_offset", existing_type=sa.BigInteger(), nullable=False)
        batch.alter_column("first_id", existing_type=sa.Integer(), nullable=True)
    op.execute(
        "UPDATE tiers SET first_id = NULL WHERE variant_id NOT IN "
        "(SELECT variant_id FROM tiers WHERE solved_in IS NOT NULL)"
    )


def downgrade() -> None:
    """Downgrade schema."""
    moved = (
        op.get_bind()
        .execute(
            sa.text(
                "SELECT count(*) FROM tiers WHERE first_id IS NOT NULL AND first_id <> first_offset"
            )
        )
        .scalar()
    )
    if moved:
        raise RuntimeError(
            "migration 0016 cannot be undone: a tiered solve gave its node ids in solve "
            "order, which the older schema cannot describe"
        )
    op.execute("UPDATE tiers SET first_id = first_offset WHERE first_id IS NULL")
    with op.batch_alter_table("tiers") as batch:
        batch.alter_column("first_id", existing_type=sa.Integer(), nullable=False)
        batch.drop_column("first_offset")
