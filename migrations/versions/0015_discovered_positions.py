"""discovered_positions: a tiered solve's discovered positions wait here until their tier is
solved, and each node row is written once, complete.

Until this revision a tiered full solve wrote each discovered position as a ``nodes`` row
(unexpanded, bounds unknown) and rewrote it when its tier was solved: every position's
row written twice, its B-tree pages split as the rows grew. Now discovery writes the
positions as arrays, a chunk of positions a row (``first_offset``: the first one's place
in discovery order, which is also its node id; ``count`` positions; ``keys`` their 64-bit
keys, ``dist`` their distances from the root, ``terminal`` one byte each, 1 for a
terminal position, and ``value`` the terminal positions' values, all little-endian), and
the solve of a tier writes its node rows whole and deletes its chunks here.

A database with a tiered solve in progress is converted: the node rows of the tiers not
solved yet (and of the discovered positions of tiers not yet recorded) become chunks
here, and those tiers' moves and ``solve`` marks go (their shards are solved again). A
downgrade cannot make the node rows back (their notation needs the game): it refuses
while chunks are stored.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 22:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 65_536
"""Positions a converted chunk holds at most (as ``solver.tiers.solve`` writes them)."""


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "discovered_positions",
        sa.Column("variant_id", sa.Integer(), nullable=False),
        sa.Column("first_offset", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("keys", sa.LargeBinary(), nullable=False),
        sa.Column("dist", sa.LargeBinary(), nullable=False),
        sa.Column("terminal", sa.LargeBinary(), nullable=False),
        sa.Column("value", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["variant_id"],
            ["variants.id"],
            name=op.f("fk_discovered_positions_variant_id_variants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("variant_id", "first_offset", name=op.f("pk_discovered_positions")),
    )
    bind = op.get_bind()
    for (vid,) in bind.execute(sa.text("SELECT DISTINCT variant_id FROM tiers")).all():
        _convert(bind, int(vid))


def _convert(bind: sa.Connection, vid: int) -> None:
    """Variant *vid*'s unsolved tiers and unrecorded discovered positions: their node
    rows become chunks (as the code of this revision writes them, so that a later change
    of that code does not change the migration)."""
    tiers = bind.execute(
        sa.text(
            "SELECT tier, first_id, nodes, solved_in FROM tiers WHERE variant_id = :v "
            "ORDER BY ordinal"
        ),
        {"v": vid},
    ).all()
    recorded = sum(int(n) for _, _, n, _ in tiers)
    ranges = [(int(f), int(f) + int(n)) for _, f, n, solved in tiers if solved is None]
    top = bind.execute(
        sa.text(
            "SELECT max(first_id + nodes) FROM tier_shards WHERE variant_id = :v "
            "AND step = 'discover' AND first_id >= :r"
        ),
        {"v": vid, "r": recorded},
    ).scalar()
    if top is not None:
        ranges.append((recorded, int(top)))
    for lo, hi in ranges:
        for start in range(lo, hi, CHUNK):
            stop = min(start + CHUNK, hi)
            found = bind.execute(
                sa.text(
                    'SELECT id, "key", dist, state, low FROM nodes WHERE variant_id = :v '
                    "AND id >= :lo AND id < :hi ORDER BY id"
                ),
                {"v": vid, "lo": start, "hi": stop},
            ).all()
            if not found:
                continue
            if [int(r[0]) for r in found] != list(range(start, start + len(found))):
                raise RuntimeError(
                    f"migration 0015: variant {vid}'s discovered positions {start} .. "
                    f"{stop - 1} are not all stored: the graph is damaged"
                )
            terminal = np.array([r[3] == 2 for r in found], dtype=np.uint8)
            bind.execute(
                sa.text(
                    "INSERT INTO discovered_positions (variant_id, first_offset, count, keys, "
                    "dist, terminal, value) VALUES (:v, :f, :c, :k, :d, :t, :x)"
                ),
                {
                    "v": vid,
                    "f": start,
                    "c": len(found),
                    "k": np.array(
                        [int.from_bytes(r[1], "big") for r in found], dtype="<i8"
                    ).tobytes(),
                    "d": np.array([r[2] for r in found], dtype="<i4").tobytes(),
                    "t": terminal.tobytes(),
                    "x": np.array([r[4] for r in found if r[3] == 2], dtype="<i8").tobytes(),
                },
            )
        bounds = {"v": vid, "lo": lo, "hi": hi}
        bind.execute(
            sa.text("DELETE FROM edges WHERE variant_id = :v AND parent >= :lo AND parent < :hi"),
            bounds,
        )
        bind.execute(
            sa.text("DELETE FROM nodes WHERE variant_id = :v AND id >= :lo AND id < :hi"),
            bounds,
        )
        bind.execute(
            sa.text(
                "DELETE FROM tier_shards WHERE variant_id = :v AND step = 'solve' "
                "AND first_id >= :lo AND first_id < :hi"
            ),
            bounds,
        )


def downgrade() -> None:
    """Downgrade schema."""
    stored = op.get_bind().execute(sa.text("SELECT count(*) FROM discovered_positions")).scalar()
    if stored:
        raise RuntimeError(
            "migration 0015 cannot be undone while a tiered solve is in progress (its "
            "discovered positions are stored as arrays, which the older schema cannot "
            "hold): finish the solve, or delete the variant, first"
        )
    op.drop_table("discovered_positions")
