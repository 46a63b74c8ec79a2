"""Grundy's game ("division nim"): split a heap into two unequal heaps.

A position is a multiset of heaps. A move splits one heap into two non-empty heaps of
different sizes; heaps of 1 and 2 can never be split. The player who cannot move loses.
Splitting keeps the total, so every position reachable from a heap of ``n`` has ``n``
tokens.

Key: the count of heaps of each size, each in a fixed bit field. Size ``s`` (1 to 60)
owns ``(60 // s).bit_length()`` bits — enough for the most heaps of that size a total of
60 allows — with larger sizes in higher bits. The layout does not depend on ``n``, so a
position has the same key in every variant. A move is then one addition:
``key - one[s] + one[a] + one[b]``.
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

logger = logging.getLogger(__name__)

MAX_TOTAL = 60
"""Largest total number of tokens (and largest ``n``)."""


def _layout() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Bit offset and width of each heap size's field (index 0 unused)."""
    offsets = [0]
    widths = [0]
    offset = 0
    for s in range(1, MAX_TOTAL + 1):
        width = (MAX_TOTAL // s).bit_length()
        offsets.append(offset)
        widths.append(width)
        offset += width
    return tuple(offsets), tuple(widths)


_OFFSET, _WIDTH = _layout()
_ONE = (0, *(1 << _OFFSET[s] for s in range(1, MAX_TOTAL + 1)))
_FIELD = tuple(((1 << w) - 1) << off for off, w in zip(_OFFSET, _WIDTH, strict=True))
_SIZE_AT_BIT = tuple(s for s in range(1, MAX_TOTAL + 1) for _ in range(_WIDTH[s]))
_BELOW = tuple((1 << off) - 1 for off in _OFFSET)
_MOVABLE = _ONE[3]
"""Keys at or above this hold a heap of 3 or more, so have a move."""
_SPLITS: tuple[tuple[tuple[MoveLabel, int], ...], ...] = tuple(
    tuple(
        (f"{s}={a}+{s - a}", _ONE[a] + _ONE[s - a] - _ONE[s])
        for a in range(s - 1, s // 2, -1)
        if a != s - a
    )
    for s in range(MAX_TOTAL + 1)
)
_SEPARATORS = re.compile(r"[+,\s]+")


class Grundy(GameBase):
    """Grundy's game (see the module docstring)."""

    name: ClassVar[str] = "grundy"
    version: ClassVar[int] = 1
    acyclic: ClassVar[bool] = True  # every move adds a heap
    tiers: ClassVar[bool] = True  # the heaps: every move goes one tier on
    description: ClassVar[str] = (
        "Grundy's game: split a heap into two unequal heaps; the player who cannot move loses."
    )
    notation: ClassVar[str] = (
        "Heap sizes joined by '+', e.g. '4+2+1' (any order is accepted and sorted, "
        "largest first; ',' or spaces also separate heaps). The heaps may total at most n. "
        "Moves are written 'heap=larger+smaller', e.g. '7=4+3'."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("n", int, 7, "size of the starting heap", min=1, max=MAX_TOTAL),
    )

    def _configure(self) -> None:
        self._n = int(self.params["n"])

    def tier(self, key: PositionKey) -> int:
        """The number of heaps."""
        return len(self.heaps(key))

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier + 1,) if tier < self._n else ()

    def initial(self) -> PositionKey:
        return _ONE[self._n]

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        result: list[tuple[MoveLabel, PositionKey]] = []
        rest = key
        while rest >= _MOVABLE:
            size = _SIZE_AT_BIT[rest.bit_length() - 1]
            for label, delta in _SPLITS[size]:
                result.append((label, key + delta))
            rest &= _BELOW[size]
        return result

    def terminal_value(self, key: PositionKey) -> int | None:
        return -1 if key < _MOVABLE else None

    def heaps(self, key: PositionKey) -> list[int]:
        """The heap sizes of *key*, largest first."""
        out: list[int] = []
        for s in range(MAX_TOTAL, 0, -1):
            count = (key & _FIELD[s]) >> _OFFSET[s]
            out.extend([s] * count)
        return out

    def format(self, key: PositionKey) -> str:
        return "+".join(map(str, self.heaps(key)))

    def parse(self, text: str) -> PositionKey:
        s = text.strip()
        if not s:
            raise InvalidPositionError("empty position: expected heap sizes like '4+2+1'")
        parts = _SEPARATORS.split(s)
        heaps: list[int] = []
        for part in parts:
            if not (part.isascii() and part.isdigit()):
                raise InvalidPositionError(
                    f"expected heap sizes joined by '+', got {part!r} in {text!r}"
                )
            if len(part) > 3 or int(part) > self._n:
                raise InvalidPositionError(f"heap {part} is larger than n={self._n} in {text!r}")
            size = int(part)
            if size < 1:
                raise InvalidPositionError(f"heap sizes must be positive, not {part!r}")
            heaps.append(size)
        total = sum(heaps)
        if total > self._n:
            raise InvalidPositionError(f"heaps in {text!r} total {total}, more than n={self._n}")
        return sum(_ONE[h] for h in heaps)


__all__ = ["MAX_TOTAL", "Grundy"]
