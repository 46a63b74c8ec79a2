"""Baselines that use nothing of negagraph but a game's rules.

``memo_negamax`` is the plain dict-memoised negamax the solver is measured against: it
stores one value per position in a dict and nothing else (no edges, bounds, flags or
depths), for acyclic games only.
"""

from __future__ import annotations

import sys

from solver.game import Game, PositionKey


def memo_negamax(game: Game, root: PositionKey | None = None) -> tuple[int, int]:
    """(value of *root*, number of positions memoised), by depth-first negamax."""
    memo: dict[PositionKey, int] = {}
    children = game.children
    terminal_value = game.terminal_value

    def value(key: PositionKey) -> int:
        v = memo.get(key)
        if v is not None:
            return v
        tv = terminal_value(key)
        if tv is not None:
            memo[key] = tv
            return tv
        best = -(1 << 60)
        for _, child in children(key):
            c = -value(child)
            if c > best:
                best = c
        memo[key] = best
        return best

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        v = value(game.initial() if root is None else root)
    finally:
        sys.setrecursionlimit(limit)
    return v, len(memo)
