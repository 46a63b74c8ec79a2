"""Coin nim: the lecture notes' example of chance, "each player tosses a fair coin before
choosing his move", on a pile of stones.

A pile of ``n`` stones. Before each move the player to move tosses a fair coin: on heads
he takes 1 or 2 stones, on tails 2 or 3 (never more than the pile holds; a pile of 1 on
tails is taken whole). Whoever takes the last stone wins, so a player facing an empty pile
has lost (-1).

The toss is a **chance** node whose player is the tosser (the turn stays his whatever
the coin shows); its two outcomes lead to his **decision** nodes. Every move takes a
stone, so the game is acyclic and its values are exact fractions (powers of 2 below).

Notation: the pile, who is to play, and the coin once tossed, joined by colons:
``"7:first"`` (before the toss), ``"7:first:heads"``, ``"7:second:tails"``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

PLAYERS = ("first", "second")
COIN = ("", "heads", "tails")
TAKE = ((), (1, 2), (2, 3))
"""The stones a player may take after the toss: none before it, then by the coin."""
_HALF = (Fraction(1, 2), Fraction(1, 2))
_NOTATION = re.compile(r"\s*([0-9]{1,3}):(first|second)(?::(heads|tails))?\s*\Z")


class CoinNim(GameBase):
    """Coin nim (see the module docstring)."""

    name: ClassVar[str] = "coin-nim"
    version: ClassVar[int] = 1
    chance: ClassVar[bool] = True
    acyclic: ClassVar[bool] = True
    value_range = (-1, 1)
    players: ClassVar[tuple[str, str]] = PLAYERS
    description: ClassVar[str] = (
        "Coin nim: toss a coin, then take 1-2 stones (heads) or 2-3 (tails); "
        "whoever takes the last stone wins."
    )
    notation: ClassVar[str] = (
        "The pile, who is to play, and the coin once tossed: '7:first', '7:first:heads', "
        "'7:second:tails'. Moves: the stones taken, '1' to '3'; outcomes: 'heads', 'tails'."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("n", int, 10, "stones in the pile at the start", min=0, max=500),
    )

    def _configure(self) -> None:
        self._n = int(self.params["n"])

    @staticmethod
    def _key(pile: int, mover: int, coin: int) -> PositionKey:
        return (pile * 2 + mover) * 3 + coin

    @staticmethod
    def unpack(key: PositionKey) -> tuple[int, int, int]:
        """``(pile, mover, coin)``: coin 0 before the toss, 1 heads, 2 tails."""
        rest, coin = divmod(key, 3)
        pile, mover = divmod(rest, 2)
        return pile, mover, coin

    def initial(self) -> PositionKey:
        return self._key(self._n, 0, 0)

    def player_to_move(self, key: PositionKey) -> int:
        return self.unpack(key)[1]

    def terminal_value(self, key: PositionKey) -> int | None:
        return -1 if key < 6 else None  # an empty pile: the previous player took the last

    def children(self, key: PositionKey) -> Sequence[tuple[MoveLabel, PositionKey]]:
        pile, mover, coin = self.unpack(key)
        if pile == 0:
            return []
        if coin == 0:
            return [("heads", self._key(pile, mover, 1)), ("tails", self._key(pile, mover, 2))]
        takes = [t for t in TAKE[coin] if t <= pile] or [pile]
        return [(str(t), self._key(pile - t, 1 - mover, 0)) for t in takes]

    def probabilities(self, key: PositionKey) -> Sequence[Fraction] | None:
        return _HALF if key % 3 == 0 and key >= 6 else None

    def format(self, key: PositionKey) -> str:
        pile, mover, coin = self.unpack(key)
        return ":".join(filter(None, (str(pile), PLAYERS[mover], COIN[coin])))

    def parse(self, text: str) -> PositionKey:
        m = _NOTATION.match(text)
        if m is None:
            raise InvalidPositionError(
                f"expected a pile, who is to play and perhaps the coin, like '7:first' or "
                f"'7:second:heads', got {text!r}"
            )
        pile = int(m.group(1))
        if pile > self._n:
            raise InvalidPositionError(f"a pile of {pile} is more than n={self._n}: {text!r}")
        coin = COIN.index(m.group(3)) if m.group(3) else 0
        if pile == 0 and coin:
            raise InvalidPositionError(f"nobody tosses at an empty pile: {text!r}")
        return self._key(pile, PLAYERS.index(m.group(2)), coin)


__all__ = ["CoinNim"]
