"""tier_shards: the units of a tiered solve that are written apart (several processes).

A tier whose moves all leave it (connect-four's) is solved in *shards*: ranges of its
node ids (``first_id .. first_id + nodes - 1``), each solved by any process (a Dask
worker, or the solving process itself) and written in its own transaction with a row
here, which makes writing a shard idempotent (a shard whose row exists is not written
again). Once every shard of a tier is written,
the solving process marks the ``tiers`` row solved in one commit, as before.

``tiers.inner_moves`` says whether discovery saw a move stay within the tier (such a
tier is solved whole, cycles and all); NULL for tiers discovered before this revision.

``solve_runs.units_done``, ``units_total`` and ``workers`` give a run's units of work
solved so far, of those it knows, and the processes solving them; NULL for runs that
are not tiered.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 11:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUN_COLUMNS = ("units_done", "units_total", "workers")


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "tier_shards",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("step", sa.Text(), nullable=False),
        sa.Column("first_id", sa.Integer(), nullable=False),
        sa.Column("tier", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("nodes", sa.Integer(), nullable=False),
        sa.Column("edges", sa.BigInteger(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("worker", sa.Text(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["variants.id"],
            name=op.f("fk_tier_shards_variant_id_variants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "step", "first_id", name=op.f("pk_tier_shards")),
    )
    op.add_column("tiers", sa.Column("inner_moves", sa.Boolean(), nullable=True))
    for name in RUN_COLUMNS:
        op.add_column("solve_runs", sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    # Both dialects drop a column in place (SQLite from 3.35), as in 0004.
    for name in reversed(RUN_COLUMNS):
        op.execute(f"ALTER TABLE solve_runs DROP COLUMN {name}")
    op.execute("ALTER TABLE tiers DROP COLUMN inner_moves")
    op.drop_table("tier_shards")
