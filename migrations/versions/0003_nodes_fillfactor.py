"""PostgreSQL: nodes pages half full, so that rewriting a node stays in its page.

A full solve writes every node when it is found and rewrites most of them once more at
its end, with their final bounds, flags and depths. In full pages each rewritten row
moves to another page and gets new entries in both of the table's indexes (the key index
in random order); with half the page free, the new version stays beside the old one and
the indexes are left alone (a heap-only tuple). Connect-four 5 x 4 into PostgreSQL: the
final update took 23 s instead of 46 s. SQLite has no such setting: nothing to do there.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 23:55:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FILLFACTOR = 50


def upgrade() -> None:
    """Upgrade schema."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE nodes SET (fillfactor = {FILLFACTOR})")


def downgrade() -> None:
    """Downgrade schema."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE nodes RESET (fillfactor)")
