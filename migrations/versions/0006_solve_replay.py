"""Replays: ``nodes.expanded_in`` and the ``commits`` table.

A solve can be stepped through commit by commit (the explorer's replay, or SQL): each
committed batch gets a ``commits`` row (the variant's node and edge counts after it, the
run root's bounds), and each node the commit whose batch expanded it. Node ids are the
order of discovery, so the nodes of commit *k* are those with ``id < commits.nodes``.
Graphs stored before this revision have no commits and NULL ``expanded_in``: they replay
as one step.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 03:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("nodes", sa.Column("expanded_in", sa.Integer(), nullable=True))
    op.create_table(
        "commits",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("committed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("nodes", sa.Integer(), nullable=False),
        sa.Column("edges", sa.Integer(), nullable=False),
        sa.Column("expansions", sa.Integer(), nullable=False),
        sa.Column("root_low", sa.BigInteger(), nullable=True),
        sa.Column("root_high", sa.BigInteger(), nullable=True),
        sa.Column("root_low_final", sa.Boolean(), nullable=False),
        sa.Column("root_high_final", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["solve_runs.id"],
            name=op.f("fk_commits_run_id_solve_runs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["variants.id"],
            name=op.f("fk_commits_variant_id_variants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "seq", name=op.f("pk_commits")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("commits")
    # Both dialects drop a column in place (SQLite from 3.35), as in 0004.
    op.execute("ALTER TABLE nodes DROP COLUMN expanded_in")
