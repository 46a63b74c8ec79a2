"""The number game: a small infinite, cyclic game for exercising the cyclic solver.

A position is a positive integer *n*. Numbers below 6 end the game: the player to move
scores ``-n``. From any other number the player to move goes to a proper divisor ``d``
of *n* (``1 < d < n``), or to ``n + 2``, or to ``n + 4``. Play can go on forever
(13 → 15 → 17 → …) and can cycle (9 → 13 → … → 9), so the graph is infinite and cyclic;
the game gives endless play no value (:attr:`NumberGame.repetition_value` is ``None``).

Keys are the numbers themselves.
"""

from __future__ import annotations

import logging
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

logger = logging.getLogger(__name__)

MAX_NUMBER = 10**12
"""Largest number accepted as a position or as the ``root`` parameter.

Listing the divisors of larger numbers by trial division would be too slow.
"""

_TERMINAL_BELOW = 6
_TABLE_START = 1 << 10
_TABLE_CAP = 1 << 16

# Lazily grown, shared by every instance: _DIVISORS[n] holds the divisors d of n with
# 1 < d < n in ascending order, _LABELS[n] the interned text of n.
_DIVISORS: list[tuple[int, ...]] = []
_LABELS: list[str] = []


def _grow_tables(limit: int) -> None:
    """Make the shared divisor and label tables cover every number below *limit*."""
    size = max(len(_DIVISORS), _TABLE_START)
    while size < limit:
        size *= 2
    size = min(size, _TABLE_CAP)
    if size <= len(_DIVISORS):
        return
    lists: list[list[int]] = [[] for _ in range(size)]
    for d in range(2, size // 2 + 1):
        for m in range(2 * d, size, d):
            lists[m].append(d)
    _DIVISORS[:] = [tuple(ds) for ds in lists]
    _LABELS[:] = [str(n) for n in range(size)]
    logger.debug("number-game divisor table grown to %d entries", size)


def _divisors_by_trial(n: int) -> tuple[int, ...]:
    """The divisors d of *n* with ``1 < d < n``, ascending, by trial division."""
    factors: list[tuple[int, int]] = []
    rest = n
    p = 2
    while p * p <= rest:
        if rest % p == 0:
            e = 0
            while rest % p == 0:
                rest //= p
                e += 1
            factors.append((p, e))
        p += 1 if p == 2 else 2
    if rest > 1:
        factors.append((rest, 1))
    divisors = [1]
    for p, e in factors:
        divisors = [d * p**k for d in divisors for k in range(e + 1)]
    return tuple(sorted(d for d in divisors if 1 < d < n))


class NumberGame(GameBase):
    """The number game (see the module docstring)."""

    name: ClassVar[str] = "number-game"
    version: ClassVar[int] = 1
    finite: ClassVar[bool] = False
    description: ClassVar[str] = (
        "From n, move to a divisor d (1 < d < n), to n+2 or to n+4; "
        "a number n below 6 ends the game with value -n for the player to move. "
        "Infinite and cyclic."
    )
    notation: ClassVar[str] = (
        "The position's number in decimal, e.g. '13' (a positive integer, at most 10^12). "
        "Moves are labelled by the number moved to."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("root", int, 13, "the starting number", min=1, max=MAX_NUMBER),
    )

    def _configure(self) -> None:
        self._root = int(self.params["root"])
        self.repetition_value = None
        self.priority = float
        _grow_tables(min(self._root + 64, _TABLE_CAP))

    def initial(self) -> PositionKey:
        return self._root

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        if key < _TERMINAL_BELOW:
            return []
        if key + 4 >= len(_DIVISORS) and len(_DIVISORS) < _TABLE_CAP:
            _grow_tables(key + 5)
        labels = _LABELS
        if key + 4 < len(labels):
            result = [(labels[d], d) for d in _DIVISORS[key]]
            result.append((labels[key + 2], key + 2))
            result.append((labels[key + 4], key + 4))
            return result
        divisors = _DIVISORS[key] if key < len(_DIVISORS) else _divisors_by_trial(key)
        result = [(labels[d] if d < len(labels) else str(d), d) for d in divisors]
        result.append((str(key + 2), key + 2))
        result.append((str(key + 4), key + 4))
        return result

    def terminal_value(self, key: PositionKey) -> int | None:
        return -key if key < _TERMINAL_BELOW else None

    def evaluate(self, key: PositionKey) -> int:
        """One move ahead: ``-n`` at a terminal *n*; else the largest divisor ``d < 6``
        (moving there wins ``d``), or 0 when there is none."""
        if key < _TERMINAL_BELOW:
            return -key
        return max((d for d in range(2, _TERMINAL_BELOW) if key % d == 0), default=0)

    def parse(self, text: str) -> PositionKey:
        s = text.strip()
        if not s:
            raise InvalidPositionError("empty position: expected a positive integer")
        if not (s.isascii() and s.isdigit()):
            raise InvalidPositionError(f"expected a positive integer, not {text!r}")
        if len(s.lstrip("0")) > len(str(MAX_NUMBER)):
            raise InvalidPositionError(f"number {s[:20]}... is larger than {MAX_NUMBER}")
        n = int(s)
        if n < 1:
            raise InvalidPositionError(f"expected a positive integer, not {text!r}")
        if n > MAX_NUMBER:
            raise InvalidPositionError(f"number {n} is larger than {MAX_NUMBER}")
        return n

    def format(self, key: PositionKey) -> str:
        return str(key)


__all__ = ["MAX_NUMBER", "NumberGame"]
