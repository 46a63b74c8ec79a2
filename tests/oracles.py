"""Independent reference implementations the tests compare negagraph against.

Nothing here imports the solver's algorithms: an explicit graph game, brute-force
fixpoints by whole-graph iteration, a finite-horizon solver for "endless play is a draw",
and exhaustive strategy checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase

INF = float("inf")


class ExplicitGame(GameBase):
    """A game given as an explicit graph: node ``i`` has ``succ[i]`` (move labels are the
    child ids) or, with no successors, the terminal value ``leaf[i]`` for the mover."""

    name: ClassVar[str] = "explicit"
    repetition_value = 0

    def __init__(
        self,
        succ: Sequence[Sequence[int]],
        leaf: dict[int, int],
        value_range: tuple[int, int] | None = None,
        *,
        acyclic: bool = False,
    ) -> None:
        super().__init__()
        self.value_range = value_range
        self.acyclic = acyclic  # type: ignore[misc]  # per instance here: graphs vary
        self.succ = [list(s) for s in succ]
        self.leaf = dict(leaf)
        for i, s in enumerate(self.succ):
            assert s or i in self.leaf, f"node {i} has neither children nor a value"

    def initial(self) -> int:
        return 0

    def children(self, key: int) -> list[tuple[str, int]]:
        if not self.succ[key]:
            return []
        return [(f"{i}:{c}", c) for i, c in enumerate(self.succ[key])]

    def terminal_value(self, key: int) -> int | None:
        return self.leaf[key] if not self.succ[key] else None

    def parse(self, text: str) -> int:
        try:
            k = int(text)
        except ValueError:
            raise InvalidPositionError(text) from None
        if not 0 <= k < len(self.succ):
            raise InvalidPositionError(text)
        return k

    def format(self, key: int) -> str:
        return str(key)


def brute_bounds(
    succ: Sequence[Sequence[int]], leaf: dict[int, int], expanded: set[int] | None = None
) -> tuple[list[float], list[float]]:
    """Least fixpoint of ``low = max -high(c)``, ``high = max -low(c)`` by sweeping the whole
    graph until nothing changes. Nodes not in *expanded* (if given) count as frontier."""
    n = len(succ)
    low = [-INF] * n
    high = [INF] * n
    for i in range(n):
        if not succ[i]:
            low[i] = high[i] = leaf[i]
    changed = True
    while changed:
        changed = False
        for i in range(n):
            if not succ[i] or (expanded is not None and i not in expanded):
                continue
            lo = max(-high[c] for c in succ[i])
            hi = max(-low[c] for c in succ[i])
            if lo != low[i] or hi != high[i]:
                low[i], high[i] = lo, hi
                changed = True
    return low, high


def brute_finality(
    succ: Sequence[Sequence[int]],
    low: Sequence[float],
    high: Sequence[float],
    expanded: set[int],
    value_range: tuple[int, int] | None = None,
) -> tuple[list[bool], list[bool]]:
    """Greatest fixpoint of the three finality rules, from scratch (plus, with a known
    value range, a low bound at its top and a high bound at its bottom are final)."""
    vmin, vmax = (-INF, INF) if value_range is None else value_range
    n = len(succ)
    lf = [bool(not succ[i] or i in expanded) for i in range(n)]
    hf = list(lf)
    changed = True
    while changed:
        changed = False
        for i in range(n):
            if not succ[i] or i not in expanded or low[i] == high[i]:
                continue
            new_l = lf[i] and (low[i] >= vmax or all(hf[c] for c in succ[i] if -low[c] > low[i]))
            new_h = hf[i] and (
                high[i] <= vmin or any(lf[c] and -low[c] == high[i] for c in succ[i])
            )
            if (new_l, new_h) != (lf[i], hf[i]):
                lf[i], hf[i] = new_l, new_h
                changed = True
    return lf, hf


def draw_value(succ: Sequence[Sequence[int]], leaf: dict[int, int]) -> list[int]:
    """Values when endless play is a draw (0), by finite-horizon minimax with the horizon
    scored 0, iterated until the values stop changing for many more plies than nodes."""
    n = len(succ)
    u = [leaf[i] if not succ[i] else 0 for i in range(n)]
    stable = 0
    for _ in range(50 * n + 50):
        nu = [leaf[i] if not succ[i] else max(-u[c] for c in succ[i]) for i in range(n)]
        stable = stable + 1 if nu == u else 0
        u = nu
        if stable > 2 * n + 2:
            return u
    raise AssertionError("finite-horizon values did not converge")


def check_low_strategy(
    succ: Sequence[Sequence[int]],
    leaf: dict[int, int],
    start: int,
    pick: dict[int, int],
    low: int,
    depth: int,
) -> None:
    """Play *pick* (the mover's choice at each node) for the player to move at *start*
    against every possible reply (the opponent may repeat positions at will); assert every
    play ends at a terminal worth at least *low* to that player within *depth* plies."""

    def walk(node: int, ply: int) -> None:
        assert ply <= depth, f"strategy needs more than {depth} plies"
        if not succ[node]:
            value = leaf[node] if ply % 2 == 0 else -leaf[node]
            assert value >= low, f"strategy ends at {value} < {low}"
            return
        if ply % 2 == 0:
            nxt = [pick[node]]
        else:
            nxt = list(dict.fromkeys(succ[node]))
        for c in nxt:
            walk(c, ply + 1)

    walk(start, 0)
