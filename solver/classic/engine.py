"""One pass of the search family: fail-soft negamax with alpha-beta or PVS, to a depth.

The :class:`Engine` keeps what passes share — the transposition table, the statistics and
the set of positions seen — so that iterative deepening, aspiration windows and MTD(f)
(:mod:`solver.classic.search`) call :meth:`Engine.search` on the root again and again,
each pass ordered by what the previous ones stored.

Two optional hooks serve estimates beyond a store (:mod:`solver.estimate`): *known*
values (a store's proven ones) end the search of a position as exhaustive knowledge
wherever it is met, and a *deadline* stops a pass, by :class:`OutOfTime`, so that the
caller keeps its last completed iteration.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from solver.classic.results import SearchStats
from solver.classic.table import EXHAUSTIVE, Table, order_moves
from solver.errors import SolveError
from solver.game import Game, MoveLabel, PositionKey
from solver.values import NEG_INF

Evaluation = Callable[[PositionKey], int]
"""A heuristic score of a non-terminal position from the mover's side, in the game's
value range (the key is canonical where the game uses symmetry)."""

Known = Callable[[PositionKey], int | None]
"""The proven value of a position from the mover's side (its canonical key where the
game uses symmetry), or ``None`` where it is not known."""

Moves = Sequence[tuple[MoveLabel, PositionKey]]

CLOCK_EVERY = 256
"""Calls of :meth:`Engine.search` between looks at the clock (a power of two): often
enough to stop within a few milliseconds, rarely enough to cost nothing measurable."""


class OutOfTime(Exception):
    """The engine's deadline passed during a pass (private to the search family: the
    caller that set the deadline catches it and keeps its last completed pass)."""


class Engine:
    """The state the passes of one search share: options, table, statistics, path."""

    def __init__(
        self,
        game: Game,
        *,
        pvs: bool,
        evaluate: Evaluation | None,
        known: Known | None = None,
        repetition: int | None = None,
    ) -> None:
        self.game = game
        self.pvs = pvs
        self.evaluate = evaluate
        self.known = known
        self.repetition = repetition
        """The score of a move back to a position on the current line (the game's value
        of endless play), heuristic: ``None`` makes a repetition an error."""
        self.deadline: float | None = None
        """A :func:`time.monotonic` time after which a pass raises :class:`OutOfTime`."""
        self.canon = game.canonical if game.uses_symmetry else None
        self.stats = SearchStats()
        self.table = Table()
        self.seen: set[PositionKey] = set()
        self.on_path: set[PositionKey] = set()

    def moves(self, k: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        """The moves of *k* in the game's order, to canonical positions."""
        moves = list(self.game.children(k))
        canon = self.canon
        return moves if canon is None else [(m, canon(c)) for m, c in moves]

    def search(self, k: PositionKey, alpha: int, beta: int, depth: int) -> tuple[int, int, bool]:
        """(value, best move's index, exhaustive) of the non-terminal position *k*
        searched *depth* plies deep within (*alpha*, *beta*), fail-soft: a value at most
        *alpha* is an upper bound, at least *beta* a lower bound. Exhaustive: no depth
        limit was met below *k*, so the value is the game's (or a true bound)."""
        stats = self.stats
        stats.calls += 1
        if self.deadline is not None and not stats.calls & (CLOCK_EVERY - 1):
            self._check_clock()
        if k not in self.seen:
            self.seen.add(k)
            stats.distinct += 1
        if self.known is not None:
            proven = self.known(k)
            if proven is not None:
                return proven, -1, True
        hint = -1
        entry = self.table.get(k)
        if entry is not None:
            lower, upper, draft, hint = entry
            if draft >= depth and (lower == upper or lower >= beta or upper <= alpha):
                stats.tt_hits += 1
                return (upper if upper <= alpha else lower), hint, draft == EXHAUSTIVE
        if depth <= 0:
            stats.frontier += 1
            return (0 if self.evaluate is None else self.evaluate(k)), -1, False
        moves = self.moves(k)
        self.on_path.add(k)
        best, best_i, exhaustive = self._best(
            moves, order_moves(self.game, moves, hint), alpha, beta, depth - 1
        )
        self.on_path.discard(k)
        self.table.store(k, best, alpha, beta, EXHAUSTIVE if exhaustive else depth, best_i)
        return best, best_i, exhaustive

    def _check_clock(self) -> None:
        """:raises OutOfTime: if the deadline has passed."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime

    def _best(
        self, moves: Moves, order: list[int], alpha: int, beta: int, depth: int
    ) -> tuple[int, int, bool]:
        """(best value, its index, exhaustive) of *moves* searched in *order* within
        (*alpha*, *beta*), each child *depth* plies deep."""
        game = self.game
        best, best_i, exhaustive = NEG_INF, order[0], True
        for n, i in enumerate(order):
            c = moves[i][1]
            tv = game.terminal_value(c)
            if c in self.on_path:
                if self.repetition is None:
                    raise SolveError(
                        f"{game.name}: position {game.format(c)!r} repeats; the classic "
                        "searches need an acyclic game"
                    )
                v, exhaustive = -self.repetition, False
            elif tv is not None:
                v = -tv
            else:
                v, ex = self._child(c, max(alpha, best), beta, depth, null=self.pvs and n > 0)
                exhaustive = exhaustive and ex
            if v > best:
                best, best_i = v, i
            if best >= beta:
                self.stats.cutoffs += 1
                break
        return best, best_i, exhaustive

    def _child(
        self, c: PositionKey, alpha: int, beta: int, depth: int, *, null: bool
    ) -> tuple[int, bool]:
        """(value, exhaustive) of the non-terminal child *c* from the parent's view within
        (*alpha*, *beta*). With *null* (PVS, a move after the first), a null window
        (*alpha*, *alpha* + 1) first tests whether the move beats *alpha*; only if it does
        (and cannot already cut) is it searched again with the whole window."""
        if null and alpha + 1 < beta:
            v, _, ex = self.search(c, -alpha - 1, -alpha, depth)
            if -v <= alpha or -v >= beta:
                return -v, ex
            self.stats.researches += 1
        v, _, ex = self.search(c, -beta, -alpha, depth)
        return -v, ex


__all__ = ["CLOCK_EVERY", "Engine", "Evaluation", "Known", "OutOfTime"]
