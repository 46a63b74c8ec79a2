"""Dice race: a race to the goal in which a roll of 1 sends the roller back to the start,
so play can come back to a position it has left: chance inside cycles.

Each player has a token on a track from 0 to ``goal``; both start at 0. On his turn a
player either **steps** (his token moves one square: safe) or **rolls** a die of
``faces`` faces: a 1 sends his token back to 0, any other face moves it that many squares.
Then the turn passes. The first token to reach ``goal`` wins (-1 for the player to move
when the other player's token is there).

The roll is a **chance** node whose player is the roller; every outcome passes the turn.

Notation: both tokens (the first player's first), who is to play, and ``rolling`` for the
chance node after a roll, joined by colons: ``"3-5:first"``, ``"3-5:first:rolling"``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

PLAYERS = ("first", "second")
_NOTATION = re.compile(r"\s*([0-9]{1,3})-([0-9]{1,3}):(first|second)(:rolling)?\s*\Z")


class DiceRace(GameBase):
    """Dice race (see the module docstring)."""

    name: ClassVar[str] = "dice-race"
    version: ClassVar[int] = 1
    chance: ClassVar[bool] = True
    value_range = (-1, 1)
    players: ClassVar[tuple[str, str]] = PLAYERS
    description: ClassVar[str] = (
        "Dice race: step one square, or roll a die and risk a 1 that sends you back to "
        "the start; first to the goal wins."
    )
    notation: ClassVar[str] = (
        "Both tokens (the first player's first), who is to play, and 'rolling' after a "
        "roll: '3-5:first', '3-5:first:rolling'. Moves: 'step', 'roll'; outcomes: the face."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("goal", int, 10, "squares to the goal", min=1, max=100),
        Param("faces", int, 6, "faces of the die", min=2, max=20),
    )

    def _configure(self) -> None:
        self._goal = int(self.params["goal"])
        self._faces = int(self.params["faces"])
        self._odds = (Fraction(1, self._faces),) * self._faces

    def _key(self, a: int, b: int, mover: int, rolling: bool) -> PositionKey:
        return ((a * (self._goal + 1) + b) * 2 + mover) * 2 + int(rolling)

    def unpack(self, key: PositionKey) -> tuple[int, int, int, bool]:
        """``(first's square, second's square, mover, rolling)`` of *key*."""
        rolling = key & 1
        mover = (key >> 1) & 1
        a, b = divmod(key >> 2, self._goal + 1)
        return a, b, mover, bool(rolling)

    def initial(self) -> PositionKey:
        return self._key(0, 0, 0, False)

    def player_to_move(self, key: PositionKey) -> int:
        return (key >> 1) & 1

    def terminal_value(self, key: PositionKey) -> int | None:
        a, b, mover, _ = self.unpack(key)
        return -1 if (b, a)[mover] >= self._goal else None

    def _moved(self, a: int, b: int, mover: int, square: int) -> PositionKey:
        square = min(square, self._goal)
        if mover == 0:
            return self._key(square, b, 1, False)
        return self._key(a, square, 0, False)

    def children(self, key: PositionKey) -> Sequence[tuple[MoveLabel, PositionKey]]:
        a, b, mover, rolling = self.unpack(key)
        if max(a, b) >= self._goal:
            return []
        mine = (a, b)[mover]
        if rolling:
            out: list[tuple[MoveLabel, PositionKey]] = [("1", self._moved(a, b, mover, 0))]
            for face in range(2, self._faces + 1):
                out.append((str(face), self._moved(a, b, mover, mine + face)))
            return out
        return [
            ("step", self._moved(a, b, mover, mine + 1)),
            ("roll", self._key(a, b, mover, True)),
        ]

    def probabilities(self, key: PositionKey) -> Sequence[Fraction] | None:
        return self._odds if key & 1 else None

    def format(self, key: PositionKey) -> str:
        a, b, mover, rolling = self.unpack(key)
        return f"{a}-{b}:{PLAYERS[mover]}" + (":rolling" if rolling else "")

    def parse(self, text: str) -> PositionKey:
        m = _NOTATION.match(text)
        if m is None:
            raise InvalidPositionError(
                f"expected two squares and who is to play, like '3-5:first' or "
                f"'3-5:first:rolling', got {text!r}"
            )
        a, b = int(m.group(1)), int(m.group(2))
        if a > self._goal or b > self._goal:
            raise InvalidPositionError(f"squares go from 0 to the goal {self._goal}: {text!r}")
        if a >= self._goal and b >= self._goal:
            raise InvalidPositionError(f"both tokens cannot be at the goal: {text!r}")
        mover = PLAYERS.index(m.group(3))
        rolling = m.group(4) is not None
        if rolling and max(a, b) >= self._goal:
            raise InvalidPositionError(f"nobody rolls once the race is over: {text!r}")
        return self._key(a, b, mover, rolling)


__all__ = ["DiceRace"]
