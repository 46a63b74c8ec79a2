"""chance_nodes, chance_edges and the chance_values view: games of chance.

A game with chance nodes (Game contract 3) stores, besides its ``nodes`` and ``edges``
rows, one ``chance_nodes`` row per position (its player, whether it is a chance node, and
its bounds as floats rounded outwards, with the exact fractions where they are known) and
one ``chance_edges`` row per move (the outcome's exact probability at a chance node, and
whether the move keeps the turn). Deterministic games write nothing here. The view
``chance_values`` joins it up for analysts, beside ``position_values``.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 10:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Portable SQL (SQLite and PostgreSQL). ``value`` is set where the exact bounds meet;
# ``first_player_low`` / ``_high`` give the bounds from the first player's side.
CHANCE_VALUES = """\
CREATE VIEW chance_values AS
SELECT
    v.game AS game,
    v.params AS params,
    n.notation AS position,
    CASE WHEN n.state = 2 THEN 'terminal' WHEN c.chance THEN 'chance' ELSE 'decision' END
        AS kind,
    c.player AS player,
    c.low AS low,
    c.high AS high,
    c.low_exact AS low_exact,
    c.high_exact AS high_exact,
    CASE WHEN c.low_exact = c.high_exact THEN c.low_exact END AS value,
    CASE WHEN c.player = 0 THEN c.low ELSE -c.high END AS first_player_low,
    CASE WHEN c.player = 0 THEN c.high ELSE -c.low END AS first_player_high,
    n.dist AS dist,
    n.variant_id AS variant_id,
    n.id AS node_id
FROM chance_nodes AS c
JOIN nodes AS n ON n.variant_id = c.variant_id AND n.id = c.id
JOIN variants AS v ON v.id = c.variant_id"""


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "chance_nodes",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("low", sa.Double(), nullable=False),
        sa.Column("high", sa.Double(), nullable=False),
        sa.Column("low_exact", sa.Text(), nullable=True),
        sa.Column("high_exact", sa.Text(), nullable=True),
        sa.Column("player", sa.SmallInteger(), nullable=False),
        sa.Column("chance", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["variant_id", "id"],
            ["nodes.variant_id", "nodes.id"],
            name=op.f("fk_chance_nodes_variant_id_id_nodes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "id", name=op.f("pk_chance_nodes")),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "chance_edges",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("parent", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("move_order", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("probability", sa.Text(), nullable=True),
        sa.Column("keeps_turn", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["variant_id", "parent", "move_order"],
            ["edges.variant_id", "edges.parent", "edges.move_order"],
            name=op.f("fk_chance_edges_variant_id_parent_move_order_edges"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "parent", "move_order", name=op.f("pk_chance_edges")),
        sqlite_with_rowid=False,
    )
    op.execute(CHANCE_VALUES)


def downgrade() -> None:
    """Downgrade schema."""
    op.execute("DROP VIEW chance_values")
    op.drop_table("chance_edges")
    op.drop_table("chance_nodes")
