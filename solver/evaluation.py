"""The evaluation: an optional hook of the Game contract (contract 4).

A game that has an evaluation answers :meth:`Evaluates.evaluate`: a heuristic estimate
of a position's value for the player to move (the negamax convention), an integer within
the game's declared ``value_range``, the same every time it is asked, and equal to
:meth:`~solver.game.Game.terminal_value` where the position is terminal. It is an
*estimate*: the solver never stores it as a bound and a proof never depends on it; it can
only choose where a search looks first. A game with batched rules may also evaluate many
64-bit keys in one numpy call (:class:`BatchedEvaluates`); the per-position hook stays
the reference.

Callers find out whether a game has one with :func:`evaluation_of` (an ``isinstance``
on the runtime-checkable protocol, as for :class:`~solver.game.BatchedRules`), never by
probing attributes. ``negagraph check`` holds a game's evaluation to the promises above
(:mod:`solver.check.evaluation`).

>>> from solver.games import get_game
>>> game = get_game("tic-tac-toe")
>>> rules = evaluation_of(game)
>>> rules is not None and rules.evaluate(game.parse("xx./oo./...")) == 1
True
>>> evaluation_of(get_game("nap")) is None
True
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from solver.game import Game, GameBase, PositionKey

EVALUATION_CONTRACT = 4
"""The Game contract version that added the evaluation: a game built on
:class:`~solver.game.GameBase` and written for an earlier one is never asked for it (a
method of that name meant something else to its author)."""


@runtime_checkable
class Evaluates(Protocol):
    """The optional evaluation: a game that has this member can estimate a position's
    value (see the module docstring for the promises it keeps)."""

    def evaluate(self, key: PositionKey) -> int:
        """A heuristic estimate of *key*'s value for the player to move: an integer
        within the declared ``value_range``, deterministic, equal to ``terminal_value``
        at a terminal position."""
        ...


@runtime_checkable
class BatchedEvaluates(Protocol):
    """The optional batched evaluation, beside the batched rules: many 64-bit keys at
    once, the answers exactly :meth:`Evaluates.evaluate`'s."""

    def evaluate_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """:meth:`Evaluates.evaluate` of every key of *keys* as an int64 array, or
        ``None`` when the game cannot for these keys (then per key)."""
        ...


def evaluation_of(game: Game) -> Evaluates | None:
    """*game* as an :class:`Evaluates` if it has an evaluation (and, built on
    :class:`~solver.game.GameBase`, is written for contract
    :data:`EVALUATION_CONTRACT` or later), else ``None``."""
    if not isinstance(game, Evaluates):
        return None
    if isinstance(game, GameBase) and game.contract < EVALUATION_CONTRACT:
        return None
    return game


def batched_evaluation_of(game: Game) -> BatchedEvaluates | None:
    """*game* as a :class:`BatchedEvaluates` if it has an evaluation
    (:func:`evaluation_of`) and a batched form of it, else ``None``."""
    if evaluation_of(game) is None or not isinstance(game, BatchedEvaluates):
        return None
    return game


__all__ = [
    "EVALUATION_CONTRACT",
    "BatchedEvaluates",
    "Evaluates",
    "batched_evaluation_of",
    "evaluation_of",
]
