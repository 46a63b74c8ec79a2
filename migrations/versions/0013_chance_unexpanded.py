"""chance_values.kind says 'unexpanded' for a position not expanded yet.

Partial solves of games of chance (``docs/design.md`` §10) store positions they have not
expanded (``nodes.state`` 0); whether such a position is a chance node is not known
before it is expanded (``chance_nodes.chance`` is false until then), so the view
``chance_values`` now calls its kind ``unexpanded`` instead of ``decision``. Nothing else
changes.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 03:15:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KIND = "CASE WHEN n.state = 2 THEN 'terminal' WHEN c.chance THEN 'chance' ELSE 'decision' END"
_NEW_KIND = (
    "CASE WHEN n.state = 2 THEN 'terminal' WHEN n.state = 0 THEN 'unexpanded' "
    "WHEN c.chance THEN 'chance' ELSE 'decision' END"
)


def _view(kind: str) -> str:
    # 0011's view (kept here as it was: a migration must not change with later code).
    return f"""\
CREATE VIEW chance_values AS
SELECT
    v.game AS game,
    v.params AS params,
    n.notation AS position,
    {kind}
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


def upgrade() -> None:
    """Upgrade schema."""
    op.execute("DROP VIEW chance_values")
    op.execute(_view(_NEW_KIND))


def downgrade() -> None:
    """Downgrade schema."""
    op.execute("DROP VIEW chance_values")
    op.execute(_view(_KIND))
