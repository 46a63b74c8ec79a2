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


def bare_null_window(game: Game) -> tuple[int, int]:
    """(value of the initial position, expansions) by the null-window search negagraph's
    partial mode uses for acyclic games, stripped to what the search itself reads: keys,
    bounds, state and children, in flat arrays. No move labels, reverse edges, finality,
    depths, distances, change tracking or commits: the floor a graph search in Python
    could reach, to compare both negagraph and alpha-beta with (acyclic games only)."""
    keys: list[PositionKey] = []
    low: list[int] = []
    high: list[int] = []
    expanded: list[bool] = []
    first: list[int] = []
    count: list[int] = []
    child: list[int] = []
    index: dict[PositionKey, int] = {}
    children = game.children
    terminal_value = game.terminal_value
    inf = 1 << 62
    expansions = 0

    def add(key: PositionKey) -> int:
        n = index[key] = len(keys)
        keys.append(key)
        tv = terminal_value(key)
        low.append(-inf if tv is None else tv)
        high.append(inf if tv is None else tv)
        expanded.append(tv is not None)
        first.append(0)
        count.append(0)
        return n

    def bounds_from_children(n: int) -> None:
        lo = hi = -inf
        for e in range(first[n], first[n] + count[n]):
            c = child[e]
            if -high[c] > lo:
                lo = -high[c]
            if -low[c] > hi:
                hi = -low[c]
        low[n], high[n] = lo, hi

    def at_least(n: int, t: int) -> bool:
        """Whether the value of *n* (undecided by its bounds) is at least *t*."""
        nonlocal expansions
        if not expanded[n]:
            expansions += 1
            expanded[n] = True
            first[n] = len(child)
            for _, key in children(keys[n]):
                c = index.get(key)
                child.append(add(key) if c is None else c)
            count[n] = len(child) - first[n]
            bounds_from_children(n)
            if low[n] >= t or high[n] < t:
                return low[n] >= t
        for e in range(first[n], first[n] + count[n]):
            c = child[e]
            if high[c] <= -t:
                break
            if low[c] <= -t and not at_least(c, 1 - t):
                break
        bounds_from_children(n)
        return low[n] >= t

    root = add(game.initial())
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        while low[root] != high[root]:
            at_least(root, min(max(0, low[root] + 1), high[root]))
    finally:
        sys.setrecursionlimit(limit)
    return low[root], expansions
