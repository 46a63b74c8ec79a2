"""A classical baseline: depth-first negamax with alpha-beta pruning (seeds 001, 002, 004).

Optional transposition table and move ordering. For acyclic games only: it is the oracle
the tests compare the graph solver with, and the yardstick for expansion counts (how many
distinct positions a depth-first search visits to prove the root's value). The rest of the
classic family (iterative deepening, PVS, aspiration windows, MTD(f)) is
:mod:`solver.classic`, which shares its statistics and result types.
"""

from __future__ import annotations

import sys

from solver.classic.results import SearchResult, SearchStats
from solver.classic.table import order_moves
from solver.errors import SolveError
from solver.game import Game, PositionKey
from solver.values import NEG_INF, POS_INF

_EXACT, _LOWER, _UPPER = 0, 1, 2


def alphabeta(
    game: Game,
    root: PositionKey | None = None,
    *,
    prune: bool = True,
    tt: bool = True,
    ordering: bool = False,
) -> SearchResult:
    """Negamax value of *root* by depth-first search.

    :param prune: alpha-beta pruning (``False``: plain minimax, every move searched).
    :param tt: a transposition table keyed by position (canonical when the game uses
        symmetry), storing exact values and bounds with their best move.
    :param ordering: search the table's best move first, then moves into terminal
        positions that win at once, then the rest in the game's order.
    :raises SolveError: if the game has a cycle (this baseline needs acyclic games).

    >>> from solver.games import get_game
    >>> alphabeta(get_game("tic-tac-toe")).value
    0
    """
    key = game.initial() if root is None else root
    if game.uses_symmetry:
        key = game.canonical(key)
    search = _Search(game, prune=prune, tt=tt, ordering=ordering)
    tv = game.terminal_value(key)
    if tv is not None:
        search.stats.distinct = 1
        return SearchResult(tv, None, search.stats)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        value, best_i = search.search(key, NEG_INF, POS_INF)
    finally:
        sys.setrecursionlimit(limit)
    return SearchResult(value, list(game.children(key))[best_i][0], search.stats)


class _Search:
    """One depth-first search's state: options, statistics, table, path."""

    def __init__(self, game: Game, *, prune: bool, tt: bool, ordering: bool) -> None:
        self.game = game
        self.prune, self.tt, self.ordering = prune, tt, ordering
        self.canon = game.canonical if game.uses_symmetry else None
        self.stats = SearchStats()
        self.table: dict[PositionKey, tuple[int, int, int]] = {}
        self.seen: set[PositionKey] = set()
        self.on_path: set[PositionKey] = set()

    def search(self, k: PositionKey, alpha: int, beta: int) -> tuple[int, int]:
        """(value, index of the best move) of non-terminal *k* within (alpha, beta)."""
        stats = self.stats
        stats.calls += 1
        if k not in self.seen:
            self.seen.add(k)
            stats.distinct += 1
        hint = -1
        if self.tt:
            entry = self.table.get(k)
            if entry is not None:
                value, flag, hint = entry
                if flag == _EXACT or (
                    flag == _LOWER and value >= beta or flag == _UPPER and value <= alpha
                ):
                    stats.tt_hits += 1
                    return value, hint
        moves = self._moves(k)
        self.on_path.add(k)
        best, best_i = self._best(moves, self._order(moves, hint), alpha, beta)
        self.on_path.discard(k)
        if self.tt:
            self.table[k] = (best, self._flag(best, alpha, beta), best_i)
        return best, best_i

    def _moves(self, k: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = list(self.game.children(k))
        canon = self.canon
        return moves if canon is None else [(m, canon(c)) for m, c in moves]

    def _order(self, moves: list[tuple[str, PositionKey]], hint: int) -> list[int]:
        """The order to search *moves* in: the game's, or (``ordering``) the table's best
        move first, then moves into terminal positions that win at once, then the rest."""
        if self.ordering:
            return order_moves(self.game, moves, hint)
        return list(range(len(moves)))

    def _best(
        self, moves: list[tuple[str, PositionKey]], order: list[int], alpha: int, beta: int
    ) -> tuple[int, int]:
        """The best of *moves* searched in *order* within (alpha, beta), and its index."""
        game, prune = self.game, self.prune
        best, best_i = NEG_INF, order[0]
        for i in order:
            c = moves[i][1]
            if c in self.on_path:
                raise SolveError(
                    f"{game.name}: position {game.format(c)!r} repeats; the alpha-beta "
                    "baseline needs an acyclic game"
                )
            tv = game.terminal_value(c)
            if tv is not None:
                v = -tv
            else:
                v = -self.search(c, -beta, -max(alpha, best) if prune else POS_INF)[0]
            if v > best:
                best, best_i = v, i
            if prune and best >= beta:
                self.stats.cutoffs += 1
                break
        return best, best_i

    def _flag(self, best: int, alpha: int, beta: int) -> int:
        """What the table learns of a value *best* searched within (alpha, beta)."""
        if not self.prune or alpha < best < beta:
            return _EXACT
        return _UPPER if best <= alpha else _LOWER


__all__ = ["SearchResult", "SearchStats", "alphabeta"]
