"""solve_runs: the memory a run uses, its limit, and the nodes it holds in RAM.

``solve --memory-limit`` bounds a run's memory; each commit records the process's
resident set size (``rss_bytes``), the limit (``memory_limit``, NULL: none) and how many
of the graph's nodes the run holds in RAM (``resident_nodes``), so that ``status`` and
``/api/solves`` show them while the run goes on. Runs recorded before this revision have
NULL in all three.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("rss_bytes", "memory_limit", "resident_nodes")


def upgrade() -> None:
    """Upgrade schema."""
    for name in COLUMNS:
        op.add_column("solve_runs", sa.Column(name, sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    # Both dialects drop a column in place (SQLite from 3.35), as in 0004.
    for name in reversed(COLUMNS):
        op.execute(f"ALTER TABLE solve_runs DROP COLUMN {name}")
