"""Type A estimates: a heuristic search from a position the store has not decided.

A solve proves values; where it has not reached (an unsolved game, the frontier of a
partial solve) a player still wants a move. :func:`estimate` searches for one the way
game programs do (Shannon's *type A* strategy: every move, to a fixed depth): iterative
deepening of PVS in aspiration windows (:mod:`solver.classic`), the game's evaluation
(:mod:`solver.evaluation`) scoring the positions at the depth limit, and the values a
store has proven (*known*) ending the search wherever they are met, as exact leaves.

The score is a heuristic estimate unless the search proved it (``exact``: no line was
cut by the depth limit, every leaf a terminal position or a known value). Estimates are
never written to a store: they are not bounds, and a proof must never depend on one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from solver.classic.engine import Engine, Known, OutOfTime
from solver.classic.search import Pass, SearchOptions, deep_recursion, iterations
from solver.errors import InvalidParameterError
from solver.evaluation import evaluation_of
from solver.game import Game, MoveLabel, PositionKey

ASPIRATION = 1
"""Half the width of each iteration's first window around the previous score (widened
twice as far on the failing side until the score falls inside)."""


@dataclass(frozen=True)
class Estimate:
    """What a heuristic search of a position found."""

    best_move: MoveLabel
    """The move the last completed iteration scored best, in the notation of the
    position asked about."""
    score: int
    """The position's score from the mover's side at that depth: heuristic unless
    *exact*."""
    depth: int
    """The depth limit (plies) of the last completed iteration."""
    exact: bool
    """The search proved *score*: it is the game's value."""
    positions: int
    """Positions searched, counting repeats (an iteration cut short by the clock too)."""
    seconds: float
    """Wall-clock time of the search."""

    @property
    def rate(self) -> float:
        """Positions searched per second."""
        return self.positions / self.seconds if self.seconds > 0 else 0.0


def estimate(
    game: Game,
    key: PositionKey,
    *,
    depth: int | None = None,
    seconds: float | None = None,
    known: Known | None = None,
    cap: float | None = None,
) -> Estimate:
    """A heuristic search of the non-terminal position *key*, *depth* plies deep or for
    about *seconds* (iterations 1, 2, ... until the clock runs out: the last completed
    one stands, and depth 1 always completes). *cap* (a server's limit, in seconds)
    stops a search of either kind the same way: a depth search then ends short of
    *depth*, which the answer's ``depth`` shows. *known* gives proven values of positions
    (canonical keys where the game uses symmetry), which end the search there as exact
    leaves; the root itself is always searched, so that there is a move to answer.

    A game that is not acyclic is searched with its value of endless play scoring a move
    back to a position of the current line (a heuristic score, never exact).

    :raises InvalidParameterError: if the game has no evaluation (or has chance nodes,
        or repeats positions without a value for endless play), the position is terminal
        (its value is the game's rule, not an estimate), or not exactly one of *depth*
        (at least 1) and *seconds* (more than 0) is given.

    >>> from solver.games import get_game
    >>> game = get_game("tic-tac-toe")
    >>> result = estimate(game, game.initial(), depth=9)
    >>> result.score, result.exact, result.depth
    (0, True, 9)
    """
    rules = estimate_rules(game, depth=depth, seconds=seconds)
    tv = game.terminal_value(key)
    if tv is not None:
        raise InvalidParameterError(
            f"position {game.format(key)!r} is over (worth {tv} to the player to move): "
            "there is no move to estimate"
        )
    canon: Callable[[PositionKey], PositionKey] | None = (
        game.canonical if game.uses_symmetry else None
    )
    root = key if canon is None else canon(key)
    engine = Engine(
        game,
        pvs=True,
        evaluate=rules,
        known=None if known is None else _below(root, known),
        repetition=None if game.facts.acyclic else game.repetition_value,
    )
    options = SearchOptions(
        method="pvs", deepening=True, aspiration=ASPIRATION, depth=depth, evaluate=rules
    )
    budget = min(t for t in (seconds, cap, math.inf) if t is not None)
    start = time.monotonic()
    last: tuple[Pass, int] | None = None
    with deep_recursion():
        try:
            for done in iterations(engine, root, options):
                last = done
                if budget < math.inf:  # armed once depth 1 has completed
                    engine.deadline = start + budget
        except OutOfTime:
            pass
    elapsed = time.monotonic() - start
    assert last is not None  # the first iteration runs without a deadline
    (score, best_i, exact), reached = last
    best_child = engine.moves(root)[best_i][1]
    return Estimate(
        best_move=_label_of(game, key, best_child, canon),
        score=score,
        depth=reached,
        exact=exact,
        positions=engine.stats.calls,
        seconds=elapsed,
    )


def estimate_rules(
    game: Game, *, depth: int | None, seconds: float | None
) -> Callable[[PositionKey], int]:
    """The evaluation :func:`estimate` would search *game* with, once the game and the
    limits pass its checks (callers check a request before reading a store for it).

    :raises InvalidParameterError: as :func:`estimate` does, but for the position.
    """
    if (depth is None) == (seconds is None):
        raise InvalidParameterError(
            "an estimate needs either a depth (plies) or a time budget (seconds), not "
            + ("neither" if depth is None else "both")
        )
    if depth is not None and depth < 1:
        raise InvalidParameterError(f"the search depth must be at least 1 ply, not {depth}")
    if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
        raise InvalidParameterError(
            f"the time budget must be a positive number of seconds, not {seconds}"
        )
    rules = evaluation_of(game)
    facts = game.facts
    if rules is None or facts.chance:
        raise InvalidParameterError(
            f"{game.name} has no evaluation, so it cannot be estimated beyond the "
            "database (only games with an evaluate() hook can, and none with chance nodes)"
        )
    if not facts.acyclic and facts.repetition_value is None:
        raise InvalidParameterError(
            f"{game.name} can repeat positions and gives endless play no value, so a "
            "search cannot score a repetition: it cannot be estimated"
        )
    return rules.evaluate


def _below(root: PositionKey, known: Known) -> Known:
    """*known* everywhere but at *root* (searched whatever is known of it)."""

    def below(k: PositionKey) -> int | None:
        return None if k == root else known(k)

    return below


def _label_of(
    game: Game,
    key: PositionKey,
    child: PositionKey,
    canon: Callable[[PositionKey], PositionKey] | None,
) -> MoveLabel:
    """The label of a move from *key* to *child* (a canonical key where *canon* is the
    game's symmetry: then the first move to a position symmetric to it)."""
    for move, c in game.children(key):
        if (c if canon is None else canon(c)) == child:
            return move
    raise AssertionError(f"no move of {game.format(key)!r} leads to the position searched")


__all__ = ["ASPIRATION", "Estimate", "estimate", "estimate_rules"]
