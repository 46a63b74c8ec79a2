"""chance_nodes.plies and plies_exact: the expected plies of the optimal strategy.

A game of chance's positions get the expected number of plies (players' moves; a drawn
outcome is none) to the end of the game when both players follow the optimal strategy
(``docs/design.md`` §10): ``plies`` as a float, ``NULL`` where play under the strategy
does not end with probability 1, and ``plies_exact`` as an exact fraction where it is
known (positions on no cycle). The view ``chance_values`` shows both. Variants stored
before this revision have ``NULL`` in both: solve them again into a fresh database to
fill them in.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# 0010's view, with the two new columns after ``dist``.
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
    c.plies AS plies,
    c.plies_exact AS plies_exact,
    n.variant_id AS variant_id,
    n.id AS node_id
FROM chance_nodes AS c
JOIN nodes AS n ON n.variant_id = c.variant_id AND n.id = c.id
JOIN variants AS v ON v.id = c.variant_id"""


# 0010's view, restored by the downgrade.
PREVIOUS_CHANCE_VALUES = """\
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
    op.execute("DROP VIEW chance_values")
    op.add_column("chance_nodes", sa.Column("plies", sa.Double(), nullable=True))
    op.add_column("chance_nodes", sa.Column("plies_exact", sa.Text(), nullable=True))
    op.execute(CHANCE_VALUES)


def downgrade() -> None:
    """Downgrade schema."""
    op.execute("DROP VIEW chance_values")
    # Both dialects drop a column in place (SQLite from 3.35), as in 0004.
    op.execute("ALTER TABLE chance_nodes DROP COLUMN plies_exact")
    op.execute("ALTER TABLE chance_nodes DROP COLUMN plies")
    op.execute(PREVIOUS_CHANCE_VALUES)
