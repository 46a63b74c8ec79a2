"""tiers: the progress of a tiered full solve, one row per tier of a variant.

A tiered full solve (``solve --full`` of a game that declares tiers) first *discovers*
each tier, parents first: its positions are written as nodes with ids
``first_id .. first_id + nodes - 1`` (a tier's ids are contiguous) and a row here with
``solved_in`` NULL. It then *solves* the tiers children first: a tier's edges and the
bounds of its positions are written, and ``solved_in`` set to that commit's number, in
one transaction. A killed solve resumes at the first tier without its row (discovery) or
with ``solved_in`` NULL (solving). Variants solved otherwise have no rows here.

``solve_runs.tiers_done`` and ``tiers_total`` give a tiered run's progress at its latest
commit (tiers discovered while discovering, solved while solving, of those reachable
from the root); NULL for runs that are not tiered.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUN_COLUMNS = ("tiers_done", "tiers_total")


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "tiers",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("tier", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("first_id", sa.Integer(), nullable=False),
        sa.Column("nodes", sa.Integer(), nullable=False),
        sa.Column("edges", sa.BigInteger(), nullable=True),
        sa.Column("discovered_in", sa.Integer(), nullable=False),
        sa.Column("solved_in", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["variants.id"],
            name=op.f("fk_tiers_variant_id_variants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "tier", name=op.f("pk_tiers")),
    )
    for name in RUN_COLUMNS:
        op.add_column("solve_runs", sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    # Both dialects drop a column in place (SQLite from 3.35), as in 0004.
    for name in reversed(RUN_COLUMNS):
        op.execute(f"ALTER TABLE solve_runs DROP COLUMN {name}")
    op.drop_table("tiers")
