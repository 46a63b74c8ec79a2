"""The search family: iterative deepening, PVS, aspiration windows and MTD(f).

Each runs passes of :class:`~solver.classic.engine.Engine` over one transposition table,
in the table's best move first, then immediate wins, then the game's order:

* **alpha-beta** (``method="alphabeta"``): one full-window pass;
* **PVS / Negascout** (``method="pvs"``): the first move with the full window, each later
  one with a null window, searched again with the full window when it fails high;
* **MTD(f)** (``method="mtdf"``): null-window passes only, each moving a bound of the root
  until they meet, starting from a first *guess*; the table holds both bounds;
* **iterative deepening** (``deepening=True``): passes at depth 1, 2, ..., each ordered
  by the best moves the previous one stored, until one reaches no depth limit (then its
  value is exact) or reaches ``depth``; MTD(f)'s guess is the previous iteration's value;
* **aspiration windows** (``aspiration=w``): each pass starts with the window
  (guess - w, guess + w) around the previous iteration's value (or *guess*), widened
  on the failing side, twice as far each time, until the value falls inside.

Exact mode (``depth=None``) solves acyclic games; a position that repeats raises the
same :class:`~solver.errors.SolveError` as :func:`solver.alphabeta.alphabeta`. With a
``depth`` limit the positions met there are scored by an ``evaluate`` callable, and the
result is a heuristic score unless no line of play was that long (``exact``). Without a
limit an evaluation scores only the frontier of iterative deepening's shallow passes,
which then order the deeper ones; without one the shallow passes score it 0.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from solver.classic.engine import Engine, Evaluation
from solver.classic.results import SearchResult
from solver.classic.table import EXHAUSTIVE
from solver.errors import InvalidParameterError
from solver.game import Game, PositionKey
from solver.values import NEG_INF, POS_INF

Method = Literal["alphabeta", "pvs", "mtdf"]
METHODS: tuple[Method, ...] = ("alphabeta", "pvs", "mtdf")

Pass = tuple[int, int, bool]
"""(value, best move's index, exhaustive) of the root after one pass or several."""


@dataclass(frozen=True)
class SearchOptions:
    """How :func:`search` searches; checked when made.

    :raises InvalidParameterError: for an unknown method, a depth below 1, a depth
        without an evaluation, an evaluation that would never be used (no depth and no
        deepening), or an aspiration window that is not positive or is given to MTD(f).
    """

    method: Method = "alphabeta"
    """The search of each pass: ``alphabeta``, ``pvs`` or ``mtdf``."""
    deepening: bool = False
    """Iterative deepening: passes at depth 1, 2, ... (up to ``depth``, if given)."""
    aspiration: int | None = None
    """Half the width of the aspiration window around the previous value (``None``:
    every pass has the full window)."""
    depth: int | None = None
    """The depth limit in plies (``None``: search to the end; the value is exact)."""
    evaluate: Evaluation | None = field(default=None, compare=False)
    """The score of a position at the depth limit, from the mover's side."""
    guess: int = 0
    """The first pass's guess of the value (MTD(f), aspiration windows)."""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InvalidParameterError(
                f"unknown search method {self.method!r}; choose one of {', '.join(METHODS)}"
            )
        if self.depth is not None and self.depth < 1:
            raise InvalidParameterError(f"the depth limit must be at least 1, not {self.depth}")
        if self.depth is not None and self.evaluate is None:
            raise InvalidParameterError("a depth limit needs an evaluation for its frontier")
        if self.evaluate is not None and self.depth is None and not self.deepening:
            raise InvalidParameterError(
                "an evaluation scores the frontier of a depth limit or of iterative "
                "deepening; give a depth or deepening"
            )
        if self.aspiration is not None and (self.aspiration < 1 or self.method == "mtdf"):
            raise InvalidParameterError(
                "an aspiration window is a positive half-width, for alphabeta or pvs"
            )


FAMILY: dict[str, SearchOptions] = {
    "deepening": SearchOptions(deepening=True),
    "pvs": SearchOptions(method="pvs"),
    "aspiration": SearchOptions(method="pvs", deepening=True, aspiration=1),
    "mtdf": SearchOptions(method="mtdf"),
    "mtdf-deepening": SearchOptions(method="mtdf", deepening=True),
}
"""The family in exact mode, by name: iterative deepening of alpha-beta, PVS, iterative
deepening of PVS in aspiration windows, MTD(f) and MTD(f) in iterative deepening."""


def search(
    game: Game, root: PositionKey | None = None, options: SearchOptions | None = None
) -> SearchResult:
    """The negamax value of *root* (the initial position by default) by *options*.

    :raises SolveError: if a position repeats on a line within the depth searched.

    >>> from solver.games import get_game
    >>> search(get_game("tic-tac-toe"), options=FAMILY["mtdf"]).value
    0
    >>> result = search(get_game("tic-tac-toe"), options=FAMILY["aspiration"])
    >>> result.value, result.exact, result.depth
    (0, True, 9)
    """
    opts = SearchOptions() if options is None else options
    key = game.initial() if root is None else root
    if game.uses_symmetry:
        key = game.canonical(key)
    engine = Engine(game, pvs=opts.method == "pvs", evaluate=opts.evaluate)
    tv = game.terminal_value(key)
    if tv is not None:
        engine.stats.distinct = 1
        return SearchResult(tv, None, engine.stats, depth=None if opts.depth is None else 0)
    with deep_recursion():
        (value, best_i, exact), depth = _run(engine, key, opts)
    best_move = list(game.children(key))[best_i][0]
    return SearchResult(value, best_move, engine.stats, exact=exact, depth=depth)


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Room on the stack for searches as deep as the longest line (one frame pair a ply)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def _run(engine: Engine, key: PositionKey, opts: SearchOptions) -> tuple[Pass, int | None]:
    """The root's pass (or last iteration) and its depth limit."""
    if not opts.deepening:
        depth = EXHAUSTIVE if opts.depth is None else opts.depth
        return _pass(engine, key, depth, opts.guess, opts), opts.depth
    *_, last = iterations(engine, key, opts)
    return last


def iterations(engine: Engine, key: PositionKey, opts: SearchOptions) -> Iterator[tuple[Pass, int]]:
    """Iterative deepening of the non-terminal *key*: each iteration's pass and depth
    limit, at depth 1, 2, ... until one reaches no depth limit (its value is exact) or
    reaches ``opts.depth``; each pass guesses the previous one's value. A caller that
    stops early (a deadline) keeps the last iteration it was given."""
    guess, depth = opts.guess, 0
    while True:
        depth += 1
        result = _pass(engine, key, depth, guess, opts)
        yield result, depth
        if result[2] or depth == opts.depth:
            return
        guess = result[0]


def _pass(engine: Engine, key: PositionKey, depth: int, guess: int, opts: SearchOptions) -> Pass:
    """One iteration: MTD(f)'s passes, an aspiration window's, or one full-window pass."""
    if opts.method == "mtdf":
        return _mtdf(engine, key, depth, guess)
    if opts.aspiration is not None:
        return _aspiration(engine, key, depth, guess, opts.aspiration)
    engine.stats.passes += 1
    return engine.search(key, NEG_INF, POS_INF, depth)


def _aspiration(engine: Engine, key: PositionKey, depth: int, guess: int, window: int) -> Pass:
    """Passes in windows around *guess*, each failure widening its side twice as far."""
    alpha, beta = guess - window, guess + window
    while True:
        engine.stats.passes += 1
        value, best_i, exhaustive = engine.search(key, alpha, beta, depth)
        if alpha < value < beta:
            return value, best_i, exhaustive
        window *= 2
        if value <= alpha:
            alpha = max(value - window, NEG_INF)
        else:
            beta = min(value + window, POS_INF)


def _mtdf(engine: Engine, key: PositionKey, depth: int, guess: int) -> Pass:
    """MTD(f): null-window passes from *guess* until the root's bounds meet. Each pass
    either raises the lower bound or lowers the upper one, so they meet."""
    lower, upper = NEG_INF, POS_INF
    lower_exhaustive = upper_exhaustive = False
    g, best_i = guess, 0
    while lower < upper:
        beta = g + 1 if g == lower else g
        engine.stats.passes += 1
        g, i, exhaustive = engine.search(key, beta - 1, beta, depth)
        if g < beta:
            upper, upper_exhaustive = g, exhaustive
        else:
            lower, lower_exhaustive, best_i = g, exhaustive, i
    return lower, best_i, lower == upper and lower_exhaustive and upper_exhaustive


__all__ = [
    "FAMILY",
    "METHODS",
    "Method",
    "Pass",
    "SearchOptions",
    "deep_recursion",
    "iterations",
    "search",
]
