"""Type B move ordering: which child a partial solve expands first.

The partial solve's null-window searches (:mod:`solver.partial.search`) take a node's
children in the order its edges were made, and an edge list made in a good order cuts
early: a move that wins, or nearly, refutes the parent's other moves before they are
expanded. The game's own order (connect-four: centre first) knows nothing of the
position. With ``order="evaluate"`` (``negagraph solve --order evaluate``) a position's
moves are made best first by what the game can say of each resulting position:

* moves into a terminal position the mover wins, first;
* then by the game's **ordering score** of the resulting position (the
  :class:`OrdersMoves` hook, lower first: connect-four counts the winning cells the move
  makes, and puts last a move after which the opponent wins at once), or, for a game
  without one, by its **evaluation** (:mod:`solver.evaluation`) from the side of the
  player to move there (lower is better for the mover);
* ties in the game's order (a stable sort).

Only the order of expansion changes: every bound the solve proves is the game's, so the
root's value, and every value both orders prove final, are the same
(``tests/solver/test_ordering.py``); the positions expanded, and so the node ids, differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, runtime_checkable

from solver.errors import InvalidParameterError
from solver.evaluation import evaluation_of
from solver.game import Game, MoveLabel, PositionKey

Order = Literal["game", "evaluate"]
ORDERS: tuple[Order, ...] = ("game", "evaluate")

Moves = list[tuple[MoveLabel, PositionKey]]
Ordering = Callable[[Moves], Moves]
"""A position's moves (label, resulting key) in the order to expand them."""


@runtime_checkable
class OrdersMoves(Protocol):
    """A game that scores positions for move ordering, finer than its evaluation can
    (whose scale is the value range): the lower the score of the position a move leads
    to, the sooner the move is tried."""

    def order_score(self, key: PositionKey) -> int:
        """The ordering score of position *key* (not terminal), from the side of the
        player to move there: lower is better for the player who moved."""
        ...


def move_ordering(game: Game, order: Order) -> Ordering | None:
    """How a partial solve of *game* orders a position's moves (``None``: the game's own
    order).

    :raises InvalidParameterError: for an unknown *order*, or ``evaluate`` for a game
        with neither an ordering score nor an evaluation."""
    if order not in ORDERS:
        raise InvalidParameterError(
            f"unknown move order {order!r}; choose one of {', '.join(ORDERS)}"
        )
    if order == "game":
        return None
    if isinstance(game, OrdersMoves):
        score: Callable[[PositionKey], int] = game.order_score
    else:
        rules = evaluation_of(game)
        if rules is None:
            raise InvalidParameterError(
                f"{game.name} has no evaluation to order moves by: --order evaluate needs "
                "one (docs/games.md), or use the game's order"
            )
        score = rules.evaluate
    terminal = game.terminal_value

    def rank(move: tuple[MoveLabel, PositionKey]) -> tuple[int, int]:
        value = terminal(move[1])
        if value is not None:
            return (-1, value) if value < 0 else (0, value)  # a win for the mover first
        return 0, score(move[1])

    def ordered(moves: Sequence[tuple[MoveLabel, PositionKey]]) -> Moves:
        return sorted(moves, key=rank)

    return ordered


__all__ = ["ORDERS", "Order", "Ordering", "OrdersMoves", "move_ordering"]
