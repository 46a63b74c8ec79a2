"""A tiered solve stops, everything committed, before a tier that the disk has no room
for (:class:`DiskGuard`): a long run then ends with a line saying how much room the next
tier needs, rather than failing on a full disk in the middle of it.

Before each step (discovering a tier, solving one) the guard asks the store how much the
database takes and how much room is left beside it
(:meth:`~solver.store.TierStore.disk_room`; ``None`` where it cannot tell, such as a
PostgreSQL server's disk). The step needs about its tier's positions times the bytes a
position such a step has added so far in this run (the growth of the database between
two checks over the positions of the step between them, for steps of at least
:data:`MEASURED_FROM` positions), at least :data:`PRIOR_BYTES`, twice over (a tier's rows
pass through SQLite's write-ahead log before the file), plus :data:`RESERVE`.
``NEGAGRAPH_DISK_CHECK=0`` turns the check off, for a file system whose free space is
not what it reports (compressed or thin-provisioned ones): a disk that fills is then a
one-line error, the database consistent (``tests/db/test_full_disk.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from solver.memory import format_size
from solver.store import DiskRoom, TierStore

PRIOR_BYTES: dict[tuple[str, bool], float] = {
    ("discover", True): 32.0,
    ("discover", False): 32.0,
    ("solve", True): 32.0,
    ("solve", False): 192.0,
}
"""Bytes of database a position of a step adds at least, by (step, keyed: the compact
layout): connect-four's tiers took 13-21 bytes a position to discover and 17 to solve
compact, 110-130 as a graph (``docs/performance.md``)."""

MEASURED_FROM = 10_000
"""Positions a step must have for its growth to be measured (smaller steps' growth is
mostly the pages every commit touches)."""

WAL_FACTOR = 2.0
"""Room a step needs over its rows' size: the write-ahead log holds them before the file."""

RESERVE = 1 << 20
"""Room always left free (the closing commits and checkpoints, other programs)."""


@dataclass(frozen=True)
class DiskShort:
    """A step the disk has no room for."""

    step: str
    tier: str
    positions: int
    need: int
    room: DiskRoom

    def message(self) -> str:
        """``discovering tier 19 (35,000,000 positions) needs about 2.1 GiB of disk, ...``."""
        doing = "discovering" if self.step == "discover" else "solving"
        return (
            f"{doing} tier {self.tier} ({self.positions:,} positions) needs about "
            f"{format_size(self.need)} of disk, and {format_size(self.room.free)} is free "
            f"beside the database ({self.room.where})"
        )


class DiskGuard:
    """The disk check of one tiered run over *store* (*keyed*: the compact layout)."""

    def __init__(self, store: TierStore, *, keyed: bool) -> None:
        self.store = store
        self.keyed = keyed
        self.per_position: dict[str, float] = {}
        """The most bytes a position a step of each kind added in this run."""
        self._last: tuple[str, int, int] | None = None
        """(step, positions, bytes used) at the last check."""

    def short(self, step: str, tier: str, positions: int) -> DiskShort | None:
        """The shortage if the disk has no room for *step* on *tier* (of about
        *positions* positions), else ``None``."""
        if os.environ.get("NEGAGRAPH_DISK_CHECK") == "0":  # a file system that misreports
            return None
        room = self.store.disk_room()
        if room is None:
            return None
        self._learn(room.used)
        self._last = (step, positions, room.used)
        need = int(self.bytes_a_position(step) * positions * WAL_FACTOR) + RESERVE
        if room.free >= need:
            return None
        return DiskShort(step, tier, positions, need, room)

    def bytes_a_position(self, step: str) -> float:
        """What a position of *step* is expected to add to the database."""
        prior = PRIOR_BYTES[(step, self.keyed)]
        return max(prior, self.per_position.get(step, 0.0))

    def _learn(self, used: int) -> None:
        """Attribute the growth since the last check to the step begun then."""
        if self._last is None:
            return
        step, positions, before = self._last
        if positions >= MEASURED_FROM and used > before:
            grown = (used - before) / positions
            self.per_position[step] = max(self.per_position.get(step, 0.0), grown)


__all__ = ["DiskGuard", "DiskShort", "MEASURED_FROM", "PRIOR_BYTES", "RESERVE", "WAL_FACTOR"]
