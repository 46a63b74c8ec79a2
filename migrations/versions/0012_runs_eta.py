"""solve_runs.eta_seconds: a running tiered solve's estimate of the time it still needs.

A tiered full solve knows its remaining work once every tier is discovered: each commit
records the seconds it still expects to need at the rate it has solved positions so far
(``eta_seconds``, NULL: not known, or not a tiered solve), so that ``status`` and
``/api/solves`` show it while the run goes on. Runs recorded before this revision have
NULL.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 21:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("solve_runs", sa.Column("eta_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    # Both dialects drop a column in place (SQLite from 3.35), as in 0004.
    op.execute("ALTER TABLE solve_runs DROP COLUMN eta_seconds")
