"""Independent reference implementations the tests compare negagraph against.

Nothing here imports the solver's algorithms: an explicit graph game, brute-force
fixpoints by whole-graph iteration, a finite-horizon solver for "endless play is a draw",
and exhaustive strategy checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase

INF = float("inf")


def public(v: float) -> int | None:
    """An oracle's bound in negagraph's public encoding (``None`` where infinite)."""
    return None if math.isinf(v) else int(v)


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


# -- games of chance ---------------------------------------------------------------------


class ExplicitChanceGame(GameBase):
    """A game of chance given as an explicit graph: node ``i`` belongs to ``player[i]``;
    it is terminal (``leaf[i]``, its value for its player) when ``succ[i]`` is empty, a
    chance node when ``odds[i]`` is given (the probability of each successor), else a
    decision node."""

    name: ClassVar[str] = "explicit-chance"
    chance: ClassVar[bool] = True

    def __init__(
        self,
        succ: Sequence[Sequence[int]],
        leaf: dict[int, int],
        player: Sequence[int],
        odds: Mapping[int, Sequence[Fraction]],
        value_range: tuple[int, int],
    ) -> None:
        super().__init__()
        self.value_range = value_range
        self.succ = [list(s) for s in succ]
        self.leaf = dict(leaf)
        self.player = list(player)
        self.odds = {i: tuple(p) for i, p in odds.items()}

    def initial(self) -> int:
        return 0

    def children(self, key: int) -> list[tuple[str, int]]:
        return [(f"{i}:{c}", c) for i, c in enumerate(self.succ[key])]

    def terminal_value(self, key: int) -> int | None:
        return self.leaf[key] if not self.succ[key] else None

    def probabilities(self, key: int) -> Sequence[Fraction] | None:
        return self.odds.get(key)

    def player_to_move(self, key: int) -> int:
        return self.player[key]

    def parse(self, text: str) -> int:
        return int(text)

    def format(self, key: int) -> str:
        return str(key)


def expectiminimax(game: ExplicitChanceGame, node: int) -> Fraction:
    """The lecture notes' recursion on an acyclic game, from the first player's (MAX's)
    side: a terminal's utility, a chance node's probability-weighted sum, the largest
    child at MAX's nodes and the smallest at MIN's."""
    succ = game.succ[node]
    if not succ:
        value = Fraction(game.leaf[node])
        return value if game.player[node] == 0 else -value
    values = [expectiminimax(game, c) for c in succ]
    if node in game.odds:
        return sum((p * v for p, v in zip(game.odds[node], values, strict=True)), Fraction(0))
    return max(values) if game.player[node] == 0 else min(values)


def _solve_exact(rows: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction]:
    """Gaussian elimination over the rationals (the matrix is non-singular)."""
    n = len(rhs)
    a = [row[:] + [b] for row, b in zip(rows, rhs, strict=True)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if a[r][col] != 0)
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[r][col] != 0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[i][n] / a[i][i] for i in range(n)]


def _chain_steps(
    game: ExplicitChanceGame, chosen: Callable[[int], int]
) -> dict[int, list[tuple[int, Fraction]]]:
    """The Markov chain of a strategy: every non-terminal node's successors with their
    probabilities (a decision node's one successor *chosen(node)*, with probability 1)."""
    step: dict[int, list[tuple[int, Fraction]]] = {}
    for i in range(len(game.succ)):
        if not game.succ[i]:
            continue
        if i in game.odds:
            step[i] = list(zip(game.succ[i], game.odds[i], strict=True))
        else:
            step[i] = [(chosen(i), Fraction(1))]
    return step


def _reaching(step: dict[int, list[tuple[int, Fraction]]], targets: set[int]) -> set[int]:
    """*targets* and every node of the chain *step* that reaches one of them."""
    reach = set(targets)
    grew = True
    while grew:
        grew = False
        for i, moves in step.items():
            if i not in reach and any(c in reach for c, _ in moves):
                reach.add(i)
                grew = True
    return reach


def _chain_value(
    game: ExplicitChanceGame, me: int, choice: dict[int, int], endless: Fraction
) -> dict[int, Fraction]:
    """Every node's expected result for player *me* when every decision node plays
    ``choice[node]`` (a successor), with endless play worth *endless*: absorption
    probabilities of the Markov chain, solved exactly."""
    n = len(game.succ)
    step = _chain_steps(game, lambda i: choice[i])
    # States that reach a terminal with positive probability; the others never end.
    ends = {i for i in range(n) if not game.succ[i]}
    reach = _reaching(step, ends)
    payoff = {
        i: Fraction(game.leaf[i] if game.player[i] == me else -game.leaf[i]) - endless for i in ends
    }
    live = sorted(reach - ends)
    pos = {s: k for k, s in enumerate(live)}
    rows = [[Fraction(0)] * len(live) for _ in live]
    rhs = [Fraction(0)] * len(live)
    for s in live:
        rows[pos[s]][pos[s]] += 1
        for c, p in step[s]:
            if c in ends:
                rhs[pos[s]] += p * payoff[c]
            elif c in pos:
                rows[pos[s]][pos[c]] -= p
    y = _solve_exact(rows, rhs) if live else []
    out = {i: endless for i in range(n)}
    for i in ends:
        out[i] = payoff[i] + endless
    for s in live:
        out[s] = y[pos[s]] + endless
    return out


def stochastic_value(game: ExplicitChanceGame, node: int, endless: Fraction) -> Fraction:
    """The value of *node* for its player when endless play is worth *endless* to him,
    by exhaustive search over both players' stationary strategies (turn-based stochastic
    games have optimal ones): the best over his strategies of the worst over the
    opponent's. Asserts that max-min equals min-max, which that theory promises."""
    me = game.player[node]
    decisions = [i for i in range(len(game.succ)) if game.succ[i] and i not in game.odds]
    mine = [i for i in decisions if game.player[i] == me]
    theirs = [i for i in decisions if game.player[i] != me]

    def strategies(nodes: list[int]) -> list[dict[int, int]]:
        out: list[dict[int, int]] = [{}]
        for i in nodes:
            out = [{**s, i: c} for s in out for c in dict.fromkeys(game.succ[i])]
        return out

    table = [
        [_chain_value(game, me, {**a, **b}, endless)[node] for b in strategies(theirs)]
        for a in strategies(mine)
    ]
    maxmin = max(min(row) for row in table)
    minmax = min(max(col) for col in zip(*table, strict=True))
    assert maxmin == minmax, f"no saddle point at {node}: {maxmin} < {minmax}"
    return maxmin


def value_iteration(
    game: ExplicitChanceGame, sweeps: int, *, settle: bool = False
) -> tuple[list[float], list[float]]:
    """Plain value iteration in floats (Gauss-Seidel, from the range's ends): every
    node's (low, high) after *sweeps* sweeps, from its player's side; with *settle*,
    after the first sweep that changes no value by more than 1e-15, if one comes before
    (a chain that keeps to a cycle with a probability near 1 closes in slowly: thousands
    of sweeps)."""
    vmin, vmax = game.value_range  # type: ignore[misc]
    n = len(game.succ)
    low = [float(vmin)] * n
    high = [float(vmax)] * n
    for i in range(n):
        if not game.succ[i]:
            low[i] = high[i] = float(game.leaf[i])
    for _ in range(sweeps):
        before = (low.copy(), high.copy()) if settle else None
        for i in range(n):
            if not game.succ[i]:
                continue
            seen = [
                (low[c], high[c]) if game.player[c] == game.player[i] else (-high[c], -low[c])
                for c in game.succ[i]
            ]
            if i in game.odds:
                low[i] = sum(float(p) * lo for p, (lo, _) in zip(game.odds[i], seen, strict=True))
                high[i] = sum(float(p) * hi for p, (_, hi) in zip(game.odds[i], seen, strict=True))
            else:
                low[i] = max(lo for lo, _ in seen)
                high[i] = max(hi for _, hi in seen)
        if (
            before is not None
            and max(
                (abs(a - b) for a, b in zip(before[0] + before[1], low + high, strict=True)),
                default=0.0,
            )
            <= 1e-15
        ):
            break
    return low, high


def strategy_plies(
    game: ExplicitChanceGame, choice: Mapping[int, int]
) -> dict[int, Fraction | None]:
    """The expected number of plies (a player's move is one, an outcome drawn is none)
    from every node to the end when every decision node plays ``choice[node]`` (the
    index of its move; its first move if it has no entry), ``None`` where the chain does
    not end with probability 1: reachability for that, then the linear system of the
    rest solved exactly by Gaussian elimination."""
    n = len(game.succ)
    step = _chain_steps(game, lambda i: game.succ[i][choice.get(i, 0)])
    ends = {i for i in range(n) if not game.succ[i]}
    reach = _reaching(step, ends)  # can reach an end
    endless = _reaching(step, set(range(n)) - reach)  # can reach a node that never ends
    live = sorted(set(step) - endless)
    pos = {s: k for k, s in enumerate(live)}
    rows = [[Fraction(0)] * len(live) for _ in live]
    rhs = [Fraction(0 if s in game.odds else 1) for s in live]
    for s in live:
        rows[pos[s]][pos[s]] += 1
        for c, p in step[s]:
            if c in pos:
                rows[pos[s]][pos[c]] -= p
    y = _solve_exact(rows, rhs) if live else []
    out: dict[int, Fraction | None] = {i: None for i in endless}
    out.update({i: Fraction(0) for i in ends})
    out.update({s: y[pos[s]] for s in live})
    return out
