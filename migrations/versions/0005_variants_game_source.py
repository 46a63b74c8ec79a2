"""variants.game_source: which game (built-in, plugin and its version, or reference) a
variant came from.

Games now also come from installed plugins (the ``negagraph.games`` entry points) and
``module:Class`` references, so a game's name alone no longer says which code stored the
variant. The column is written when a variant is created: ``builtin``, ``plugin
<distribution> <version>`` or ``reference <module:Class>``; NULL for games outside the
registry (solved from Python). Existing variants of the built-in games are marked
``builtin``; others stay NULL (unknown).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 15:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BUILTIN_GAMES = (
    "chess",
    "connect-four",
    "domino-tiling",
    "e-valuate",
    "graph-share",
    "grundy",
    "nap",
    "number-game",
    "tic-tac-toe",
)
"""The built-in games when this revision was written."""


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("variants", sa.Column("game_source", sa.Text(), nullable=True))
    variants = sa.table("variants", sa.column("game", sa.Text), sa.column("game_source", sa.Text))
    op.execute(
        variants.update().where(variants.c.game.in_(BUILTIN_GAMES)).values(game_source="builtin")
    )


def downgrade() -> None:
    """Downgrade schema."""
    # Both dialects drop a column in place (SQLite from 3.35), as in 0004.
    op.execute("ALTER TABLE variants DROP COLUMN game_source")
