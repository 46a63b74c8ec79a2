"""Pig, the dice game (Neller & Presser, "Optimal Play of the Dice Game Pig", 2004).

Two players race to ``target`` points. On a turn the player rolls a die of ``faces``
faces as often as he likes: a 1 ends the turn and loses the points rolled in it (the
*turn total*); any other face adds to the turn total. Instead of rolling (after at least
one roll) he may *hold*: the turn total is added to his score and the turn passes. Whoever
reaches ``target`` (his score plus his turn total) wins: he holds at once.

Positions: a **decision** node (the player to move chooses ``roll`` or ``hold``) and, after
``roll``, a **chance** node (the die's faces, each with probability ``1/faces``), whose
player is the roller: a 1 passes the turn to the other player, any other face keeps it.
Play can cycle (two players who keep rolling 1s return to the same scores), so values are
found by value iteration, with sound bounds (``solver.chance``). The value is the
player's expected result with a win worth 1 and a loss -1, so his chance of winning is
``(value + 1) / 2``.

Notation: the two scores (the first player's first), who is to play, the turn total, and
``rolling`` for the chance node after a roll, joined by colons: ``"12-30:second:5"``,
``"12-30:second:5:rolling"``. A position where the player to move has reached the target
(score plus turn total) is terminal: he wins.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

PLAYERS = ("first", "second")
_NOTATION = re.compile(r"\s*([0-9]{1,4})-([0-9]{1,4}):(first|second):([0-9]{1,4})(:rolling)?\s*\Z")


class Pig(GameBase):
    """Pig (see the module docstring)."""

    name: ClassVar[str] = "pig"
    version: ClassVar[int] = 1
    chance: ClassVar[bool] = True
    value_range = (-1, 1)
    players: ClassVar[tuple[str, str]] = PLAYERS
    description: ClassVar[str] = (
        "Pig: roll a die as often as you like, a 1 loses the turn's points, hold to bank "
        "them; first to the target wins."
    )
    notation: ClassVar[str] = (
        "Scores (the first player's first), who is to play, the turn total, and 'rolling' "
        "after a roll: '12-30:second:5', '12-30:second:5:rolling'. Moves: 'roll', 'hold'; "
        "outcomes: the face rolled."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("target", int, 100, "points to win", min=1, max=200),
        Param("faces", int, 6, "faces of the die", min=2, max=20),
    )

    def _configure(self) -> None:
        self._target = int(self.params["target"])
        self._faces = int(self.params["faces"])
        self._odds = (Fraction(1, self._faces),) * self._faces
        # key = (((turn * T + a) * T + b) * 2 + mover) * 2 + rolling, T = target + 1
        self._t = self._target + 1

    # -- keys -----------------------------------------------------------------------

    def _key(self, a: int, b: int, mover: int, turn: int, rolling: bool) -> PositionKey:
        t = self._t
        return (((turn * t + a) * t + b) * 2 + mover) * 2 + int(rolling)

    def unpack(self, key: PositionKey) -> tuple[int, int, int, int, bool]:
        """``(first's score, second's score, mover, turn total, rolling)`` of *key*."""
        rolling = key & 1
        key >>= 1
        mover = key & 1
        key >>= 1
        key, b = divmod(key, self._t)
        turn, a = divmod(key, self._t)
        return a, b, mover, turn, bool(rolling)

    # -- rules ----------------------------------------------------------------------

    def initial(self) -> PositionKey:
        return self._key(0, 0, 0, 0, False)

    def player_to_move(self, key: PositionKey) -> int:
        return (key >> 1) & 1

    def terminal_value(self, key: PositionKey) -> int | None:
        a, b, mover, turn, rolling = self.unpack(key)
        if not rolling and (a, b)[mover] + turn >= self._target:
            return 1
        return None

    def children(self, key: PositionKey) -> Sequence[tuple[MoveLabel, PositionKey]]:
        a, b, mover, turn, rolling = self.unpack(key)
        if rolling:
            out: list[tuple[MoveLabel, PositionKey]] = [("1", self._key(a, b, 1 - mover, 0, False))]
            for face in range(2, self._faces + 1):
                out.append((str(face), self._key(a, b, mover, turn + face, False)))
            return out
        if (a, b)[mover] + turn >= self._target:
            return []
        out = [("roll", self._key(a, b, mover, turn, True))]
        if turn > 0:
            if mover == 0:
                out.append(("hold", self._key(a + turn, b, 1, 0, False)))
            else:
                out.append(("hold", self._key(a, b + turn, 0, 0, False)))
        return out

    def probabilities(self, key: PositionKey) -> Sequence[Fraction] | None:
        return self._odds if key & 1 else None

    # -- notation -------------------------------------------------------------------

    def format(self, key: PositionKey) -> str:
        a, b, mover, turn, rolling = self.unpack(key)
        return f"{a}-{b}:{PLAYERS[mover]}:{turn}" + (":rolling" if rolling else "")

    def parse(self, text: str) -> PositionKey:
        m = _NOTATION.match(text)
        if m is None:
            raise InvalidPositionError(
                f"expected a Pig position like '12-30:second:5' or '12-30:second:5:rolling', "
                f"got {text!r}"
            )
        a, b, turn = int(m.group(1)), int(m.group(2)), int(m.group(4))
        mover = PLAYERS.index(m.group(3))
        rolling = m.group(5) is not None
        target = self._target
        if a >= target or b >= target:
            raise InvalidPositionError(
                f"scores must be below the target {target}, not {a}-{b} in {text!r}"
            )
        score = (a, b)[mover]
        if turn == 1:
            raise InvalidPositionError(
                f"a turn total of 1 is impossible (a 1 ends the turn): {text!r}"
            )
        most = target - 1 - score if rolling else target - 1 - score + self._faces
        if turn > most or (rolling and turn + score >= target):
            raise InvalidPositionError(
                f"a turn total of {turn} is impossible for a score of {score} with target "
                f"{target} in {text!r}"
            )
        if not rolling and score + turn >= target and turn < 2:
            raise InvalidPositionError(f"no roll reaches {text!r}")
        return self._key(a, b, mover, turn, rolling)


__all__ = ["Pig"]
