"""NAP: "no three in arithmetic progression".

Players alternately mark an unmarked integer of ``1..n`` such that no three marked
integers form an arithmetic progression. The player who cannot move loses. The longest
possible game from the empty board marks a largest 3-AP-free subset of ``1..n`` (the
Salem–Spencer number).

Key: the bitmask of marked integers, bit ``i - 1`` for integer ``i``.

Legal moves use reflections: with ``R`` the bit-reversed mask, shifting ``R`` by a fixed
amount gives ``{2x - b : b marked}``, the marked set reflected about ``x``. An unmarked
``m`` is illegal when it is such a reflection about a marked ``a`` (``m`` would end a
progression ``b, a, m``) or when the set reflected about ``m`` meets the marked set
(``m`` would be the middle of one).
"""

from __future__ import annotations

import logging
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

logger = logging.getLogger(__name__)

MAX_N = 60
"""Largest ``n``."""


class Nap(GameBase):
    """NAP (see the module docstring)."""

    name: ClassVar[str] = "nap"
    version: ClassVar[int] = 1
    acyclic: ClassVar[bool] = True  # every move marks an integer
    tiers: ClassVar[bool] = True  # the marked integers: every move goes one tier on
    description: ClassVar[str] = (
        "Players alternately mark an integer of 1..n so that no three marked integers "
        "form an arithmetic progression; the player who cannot move loses."
    )
    notation: ClassVar[str] = (
        "The marked integers in braces, separated by commas, e.g. '{1,4,5}'; '{}' is the "
        "empty board. Braces are optional, any order and spaces are accepted. "
        "Moves are labelled by the integer marked."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("n", int, 8, "mark integers from 1 to n", min=1, max=MAX_N),
    )

    def _configure(self) -> None:
        n = int(self.params["n"])
        self._n = n
        self._full = (1 << n) - 1
        self._bits_format = f"0{n}b"
        # Index x (an integer 1..n): shifting (reversed << n) right by this gives the
        # marked set reflected about x, bit 2x - b - 1 for each marked b.
        self._shift: tuple[int, ...] = tuple(2 * n + 1 - 2 * x for x in range(n + 1))
        self._labels: tuple[str, ...] = tuple(str(x) for x in range(n + 1))

    def _reflected(self, key: PositionKey) -> tuple[int, int]:
        """``(reversed << n, end-forbidden set)`` for the marked set *key*."""
        rev = int(format(key, self._bits_format)[::-1], 2) << self._n
        shift = self._shift
        ends = 0
        rest = key
        while rest:
            low = rest & -rest
            ends |= rev >> shift[low.bit_length()]
            rest ^= low
        return rev, ends

    def tier(self, key: PositionKey) -> int:
        """The marked integers."""
        return key.bit_count()

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier + 1,) if tier < self._n else ()

    def initial(self) -> PositionKey:
        return 0

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        rev, ends = self._reflected(key)
        shift, labels = self._shift, self._labels
        candidates = self._full & ~(key | ends)
        result: list[tuple[MoveLabel, PositionKey]] = []
        while candidates:
            low = candidates & -candidates
            m = low.bit_length()
            if not key & (rev >> shift[m]):
                result.append((labels[m], key | low))
            candidates ^= low
        return result

    def terminal_value(self, key: PositionKey) -> int | None:
        rev, ends = self._reflected(key)
        shift = self._shift
        candidates = self._full & ~(key | ends)
        while candidates:
            low = candidates & -candidates
            if not key & (rev >> shift[low.bit_length()]):
                return None
            candidates ^= low
        return -1

    def marked(self, key: PositionKey) -> list[int]:
        """The marked integers of *key*, ascending."""
        return [i + 1 for i in range(key.bit_length()) if key >> i & 1]

    def format(self, key: PositionKey) -> str:
        return "{" + ",".join(map(str, self.marked(key))) + "}"

    def parse(self, text: str) -> PositionKey:
        s = text.strip()
        if not s:
            raise InvalidPositionError("empty position: '{}' is the empty board")
        opened, closed = s.startswith("{"), s.endswith("}")
        if opened != closed:
            raise InvalidPositionError(f"unbalanced braces in {text!r}")
        inner = s[1:-1].strip() if opened else s
        if not inner:
            return 0
        seen: set[int] = set()
        for part in inner.split(","):
            item = part.strip()
            if not (item.isascii() and item.isdigit()):
                raise InvalidPositionError(
                    f"expected integers separated by ',', got {item!r} in {text!r}"
                )
            if len(item) > 3 or not 1 <= int(item) <= self._n:
                raise InvalidPositionError(f"{item} is out of range 1..{self._n}")
            value = int(item)
            if value in seen:
                raise InvalidPositionError(f"{value} is marked twice in {text!r}")
            seen.add(value)
        ordered = sorted(seen)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                if 2 * b - a in seen:
                    raise InvalidPositionError(
                        f"impossible position {text!r}: {a}, {b}, {2 * b - a} "
                        "form an arithmetic progression"
                    )
        return sum(1 << (v - 1) for v in ordered)


__all__ = ["MAX_N", "Nap"]
