"""Initial schema: variants, nodes, edges, solve_runs and the position_values view.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 15:12:43.083894
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The analysts' view: one readable row per stored position. Portable SQL (SQLite and
# PostgreSQL); NULL bounds and depths are infinite, ``value`` is set when the bounds meet.
POSITION_VALUES = """\
CREATE VIEW position_values AS
SELECT
    v.game AS game,
    v.params AS params,
    n.notation AS position,
    n.low AS low,
    n.high AS high,
    n.low_final AS low_final,
    n.high_final AS high_final,
    CASE WHEN n.low = n.high THEN n.low END AS value,
    n.depth_low AS depth_low,
    n.depth_high AS depth_high,
    CASE n.state
        WHEN 0 THEN 'unexpanded'
        WHEN 1 THEN 'expanded'
        WHEN 2 THEN 'terminal'
    END AS state,
    n.dist AS dist,
    n.variant_id AS variant_id,
    n.id AS node_id
FROM nodes AS n
JOIN variants AS v ON v.id = n.variant_id"""


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "variants",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game", sa.Text(), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.Column("params_json", sa.Text(), nullable=False),
        sa.Column("rules_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("root_key", sa.LargeBinary(), nullable=True),
        sa.Column("root_notation", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_variants")),
        sa.UniqueConstraint("game", "params", name=op.f("uq_variants_game_params")),
    )
    # Columns widest first: no alignment padding in PostgreSQL rows. On SQLite both big
    # tables are WITHOUT ROWID, so the primary key is the table (no separate rowid tree).
    op.create_table(
        "nodes",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("low", sa.BigInteger(), nullable=True),
        sa.Column("high", sa.BigInteger(), nullable=True),
        sa.Column("depth_low", sa.Integer(), nullable=True),
        sa.Column("depth_high", sa.Integer(), nullable=True),
        sa.Column("dist", sa.Integer(), nullable=False),
        sa.Column("state", sa.SmallInteger(), nullable=False),
        sa.Column("low_final", sa.Boolean(), nullable=False),
        sa.Column("high_final", sa.Boolean(), nullable=False),
        sa.Column("key", sa.LargeBinary(), nullable=False),
        sa.Column("notation", sa.Text(), nullable=False),
        sa.CheckConstraint("low <= high", name=op.f("ck_nodes_low_le_high")),
        sa.CheckConstraint("state BETWEEN 0 AND 2", name=op.f("ck_nodes_state")),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["variants.id"],
            name=op.f("fk_nodes_variant_id_variants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "id", name=op.f("pk_nodes")),
        sa.UniqueConstraint("variant_id", "key", name=op.f("uq_nodes_variant_id_key")),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "edges",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("parent", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("move_order", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("child", sa.Integer(), nullable=False),
        sa.Column("move", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["variant_id", "child"],
            ["nodes.variant_id", "nodes.id"],
            name=op.f("fk_edges_variant_id_child_nodes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["variant_id", "parent"],
            ["nodes.variant_id", "nodes.id"],
            name=op.f("fk_edges_variant_id_parent_nodes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "parent", "move_order", name=op.f("pk_edges")),
        sqlite_with_rowid=False,
    )
    # Parent lookups (and the child foreign key); children come from the primary key.
    op.create_index("ix_edges_variant_id_child", "edges", ["variant_id", "child"])
    op.create_table(
        "solve_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("root_key", sa.LargeBinary(), nullable=False),
        sa.Column("root_notation", sa.Text(), nullable=False),
        sa.Column("tablebase", sa.Boolean(), nullable=False),
        sa.Column("max_expansions", sa.BigInteger(), nullable=True),
        sa.Column("max_seconds", sa.Float(), nullable=True),
        sa.Column("expansions", sa.BigInteger(), nullable=False),
        sa.Column("nodes_added", sa.BigInteger(), nullable=False),
        sa.Column("edges_added", sa.BigInteger(), nullable=False),
        sa.Column("nodes", sa.BigInteger(), nullable=False),
        sa.Column("edges", sa.BigInteger(), nullable=False),
        sa.Column("frontier", sa.BigInteger(), nullable=False),
        sa.Column("root_low", sa.BigInteger(), nullable=True),
        sa.Column("root_high", sa.BigInteger(), nullable=True),
        sa.Column("root_low_final", sa.Boolean(), nullable=False),
        sa.Column("root_high_final", sa.Boolean(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("hostname", sa.Text(), nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'complete', 'budget', 'stopped', 'failed')",
            name=op.f("ck_solve_runs_status"),
        ),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["variants.id"],
            name=op.f("fk_solve_runs_variant_id_variants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_solve_runs")),
    )
    op.create_index(op.f("ix_solve_runs_variant_id"), "solve_runs", ["variant_id"])
    op.execute(POSITION_VALUES)


def downgrade() -> None:
    """Downgrade schema."""
    op.execute("DROP VIEW position_values")
    op.drop_index(op.f("ix_solve_runs_variant_id"), table_name="solve_runs")
    op.drop_table("solve_runs")
    op.drop_index("ix_edges_variant_id_child", table_name="edges")
    op.drop_table("edges")
    op.drop_table("nodes")
    op.drop_table("variants")
