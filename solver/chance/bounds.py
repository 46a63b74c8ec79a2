"""The bounds of a game of chance's positions: expectiminimax on the graph, with sound
bounds, cycles included.

Bounds, as for deterministic games (``docs/design.md`` §10): ``low(n)`` is what ``n``'s
player can expect if endless play counted as the worst value of the game's range for him,
``high(n)`` if it counted as the best. With ``v(c)`` the child's bound seen from ``n``
(``low(c)`` / ``high(c)`` for the same player, ``-high(c)`` / ``-low(c)`` across a change):

* decision node: ``low(n) = max_c v_low(c)``, ``high(n) = max_c v_high(c)``;
* chance node: ``low(n) = sum_c p(c) v_low(c)``, ``high(n)`` likewise.

They are the limits of value iteration started from the range's ends (lows from the
bottom, highs from the top); every iterate is a sound bound (a ``low`` never above the
limit, a ``high`` never below it), since the equations are monotone.

:func:`solve_graph` computes them one strongly connected component (SCC) of the graph at
a time, children first:

* a position outside every cycle, or on cycles of decision nodes only, gets its **exact**
  bounds as fractions (Python's :class:`~fractions.Fraction`) whenever its children's are
  exact: without a chance node on a cycle the iteration settles after finitely many steps;
* on a cycle through a chance node the iteration converges only in the limit: it runs in
  floating point, rounding every chance node's sum outwards by a proven bound on its
  error (:func:`_margins`), until both bounds of every position of the component are
  within the *tolerance* of each other (or stop moving), and those positions are marked
  inexact.

So a reported ``low`` is never above the true least fixpoint and a ``high`` never below the
greatest, whatever the tolerance; only their distance depends on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from solver.chance.components import strongly_connected, sweep_layers
from solver.chance.graph import (
    CHANCE,
    DECISION,
    FRONTIER,
    TERMINAL,
    ChanceGraph,
    value_range_of,
)
from solver.game import MoveLabel

UNIT_ROUNDOFF = 2.0**-53
"""Half a unit in the last place of 1.0: the relative error of one float64 operation."""

TINY = 2.0**-1000
"""Added to every margin: covers underflow, far below any tolerance anyone asks for."""

DEFAULT_TOLERANCE = 1e-9
"""How close the two bounds of a position on a chance cycle are brought by default."""

DEFAULT_MAX_SWEEPS = 1_000_000
"""Most sweeps of value iteration per level of components (a safety stop: the bounds stay
sound; the positions left wider than the tolerance are reported as such)."""


@dataclass
class ChanceSolution:
    """The bounds of every position of a :class:`ChanceGraph`.

    ``low`` and ``high`` are floats rounded outwards (``low`` down, ``high`` up), so they
    bracket the true bounds; ``exact_low`` / ``exact_high`` hold the exact fractions where
    they are known (``None`` elsewhere: positions on a cycle through a chance node).
    """

    graph: ChanceGraph
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    exact_low: list[Fraction | None]
    exact_high: list[Fraction | None]
    tolerance: float
    components: int
    levels: int
    sweeps: int
    """Sweeps of value iteration, summed over the levels that needed any."""
    wide: int
    """Positions whose bounds ended further apart than the tolerance without being exact
    (endless play matters there, or the sweep limit was reached)."""
    node_level: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    """Each node's level of the components' DAG (its component's children are on lower
    levels), as :func:`solve_graph` solved them; ``None`` if not known."""
    on_cycle: npt.NDArray[np.bool_] | None = field(default=None, repr=False)
    """Whether each node's component has a cycle (more than one node, or a move to
    itself); ``None`` if not known."""
    component: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    """Each node's strongly connected component (:func:`strongly_connected`); ``None``
    if not known."""
    finish: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    """The order in which :func:`strongly_connected`'s depth-first search finished each
    node; ``None`` if not known."""
    node_layer: npt.NDArray[np.int32] | None = field(default=None, repr=False)
    """Each node's layer (:func:`~solver.chance.components.sweep_layers`) among the nodes
    its level iterated, -1 for nodes solved without iterating; ``None`` if not known."""

    def exact(self, node: int) -> bool:
        return self.exact_low[node] is not None and self.exact_high[node] is not None

    def bounds(self, node: int) -> tuple[Fraction | float, Fraction | float]:
        """The node's bounds: exact fractions where known, else the sound floats."""
        lo = self.exact_low[node]
        hi = self.exact_high[node]
        return (
            float(self.low[node]) if lo is None else lo,
            float(self.high[node]) if hi is None else hi,
        )

    def value(self, node: int = 0) -> Fraction | float:
        """The node's value when its bounds meet exactly, else their midpoint (within
        the tolerance of both when the node is not :attr:`wide`)."""
        lo = self.exact_low[node]
        if lo is not None and lo == self.exact_high[node]:
            return lo
        return (float(self.low[node]) + float(self.high[node])) / 2

    def move_values(self, node: int) -> list[tuple[MoveLabel, float, float]]:
        """Each move's (or outcome's) bounds seen from *node*'s player, in move order."""
        g = self.graph
        out = []
        for e in g.moves(node):
            c = int(g.child[e])
            if g.sign[e] > 0:
                lo, hi = float(self.low[c]), float(self.high[c])
            else:
                lo, hi = -float(self.high[c]), -float(self.low[c])
            out.append((g.labels[e], lo, hi))
        return out

    def best_move(self, node: int) -> MoveLabel | None:
        """The decision node's best move: the largest ``low`` (ties: the largest ``high``,
        then move order); ``None`` at terminal and chance nodes."""
        if self.graph.kind[node] != DECISION:
            return None
        moves = self.move_values(node)
        best = max(range(len(moves)), key=lambda i: (moves[i][1], moves[i][2], -i))
        return moves[best][0]


def round_down(q: Fraction) -> float:
    """The largest float not above *q*."""
    x = float(q)
    return math.nextafter(x, -math.inf) if Fraction(x) > q else x


def round_up(q: Fraction) -> float:
    """The smallest float not below *q*."""
    x = float(q)
    return math.nextafter(x, math.inf) if Fraction(x) < q else x


def _margins(
    weighted_abs: npt.NDArray[np.float64], counts: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """A bound on the rounding error of a chance node's float sum ``sum_i p_i * v_i``.

    Each probability is stored as the nearest float (relative error at most ``u``, the
    unit roundoff), each product adds at most ``u`` and a sum of ``k`` terms at most
    ``(k - 1) u`` times the sum of the terms' magnitudes, so the computed sum is within
    ``(k + 1) u (1 + u)^(k+1) * sum |p_i v_i|`` of the exact one. Doubling that covers the
    higher-order terms for any ``k < 2^50`` and the rounding of the margin's own
    subtraction; :data:`TINY` covers underflow.
    """
    return 2.0 * (counts + 2) * UNIT_ROUNDOFF * weighted_abs + TINY


def solve_graph(
    graph: ChanceGraph,
    tolerance: float = DEFAULT_TOLERANCE,
    max_sweeps: int = DEFAULT_MAX_SWEEPS,
    report: Callable[[int, int], None] | None = None,
) -> ChanceSolution:
    """Every position's bounds (see the module docstring).

    *tolerance* must be positive. *report* is called with the levels of components
    done and their number, after each level.
    """
    game = graph.game
    vmin, vmax = value_range_of(game)
    n = len(graph)
    finish = [0] * n
    comp, ncomp = strongly_connected(graph, finish)
    start = graph.start
    child = graph.child
    sign = graph.sign
    kind = graph.kind
    probability = graph.probability

    members: list[list[int]] = [[] for _ in range(ncomp)]
    for v, c in enumerate(comp.tolist()):
        members[c].append(v)
    # Levels of the components' DAG: a component's level is one more than its children's
    # highest, so the components of one level depend only on lower levels.
    level = [0] * ncomp
    cyclic = [False] * ncomp
    has_chance = [False] * ncomp
    comp_list = comp.tolist()
    child_list = child.tolist()
    start_list = start.tolist()
    kind_list = kind.tolist()
    for c in range(ncomp):
        top = 0
        nodes = members[c]
        if len(nodes) > 1:
            cyclic[c] = True
        for v in nodes:
            if kind_list[v] == CHANCE:
                has_chance[c] = True
            for e in range(start_list[v], start_list[v + 1]):
                d = comp_list[child_list[e]]
                if d == c:
                    cyclic[c] = True
                elif level[d] + 1 > top:
                    top = level[d] + 1
        level[c] = top
    nlevels = max(level, default=-1) + 1
    by_level: list[list[int]] = [[] for _ in range(nlevels)]
    for c in range(ncomp):
        by_level[level[c]].append(c)

    low = np.full(n, float(vmin))
    high = np.full(n, float(vmax))
    node_layer = np.full(n, -1, dtype=np.int32)
    exact_low: list[Fraction | None] = [None] * n
    exact_high: list[Fraction | None] = [None] * n
    for v, value in graph.terminal.items():
        exact_low[v] = exact_high[v] = Fraction(value)
        low[v] = high[v] = float(value)
    sign_list = sign.tolist()

    def seen(e: int) -> tuple[Fraction | None, Fraction | None]:
        """Edge *e*'s child's exact bounds (low side, high side) seen from the parent."""
        c = child_list[e]
        if sign_list[e] > 0:
            return exact_low[c], exact_high[c]
        lo, hi = exact_high[c], exact_low[c]
        return (None if lo is None else -lo), (None if hi is None else -hi)

    def combine(v: int, side: int) -> Fraction | None:
        """The exact bound (0: low, 1: high) of *v* from its children's, if all known."""
        if kind_list[v] == DECISION:
            # The best exact bound, if every child whose bound is not known exactly is
            # below it for sure (its float bound from above is no more: a move a
            # partial solve left unexplored, or one on a chance cycle).
            best: Fraction | None = None
            above = -math.inf
            for e in range(start_list[v], start_list[v + 1]):
                x = seen(e)[side]
                if x is None:
                    c = child_list[e]
                    top = high[c] if sign_list[e] > 0 else -low[c]
                    above = max(above, float(top))
                elif best is None or x > best:
                    best = x
            return None if best is None or above > best else best
        values = []
        for e in range(start_list[v], start_list[v + 1]):
            x = seen(e)[side]
            if x is None:
                return None
            values.append((x, e))
        total = Fraction(0)
        for x, e in values:
            p = probability[e]
            assert p is not None
            total += p * x
        return total

    sweeps = 0
    float_nodes_by_level: list[list[int]] = []
    for lvl in range(nlevels):
        iterate: list[int] = []
        for c in by_level[lvl]:
            nodes = members[c]
            if kind_list[nodes[0]] in (TERMINAL, FRONTIER):
                continue  # terminal: exact; unexpanded: the value range's ends
            if not cyclic[c]:
                v = nodes[0]
                for side in (0, 1):
                    q = combine(v, side)
                    if q is not None:
                        if side == 0:
                            exact_low[v] = q
                        else:
                            exact_high[v] = q
                if exact_low[v] is not None and exact_high[v] is not None:
                    low[v] = round_down(exact_low[v])  # type: ignore[arg-type]
                    high[v] = round_up(exact_high[v])  # type: ignore[arg-type]
                    continue
                iterate.append(v)
            elif not has_chance[c] and _exact_cycle(
                nodes, start_list, combine, exact_low, exact_high, vmin, vmax
            ):
                for v in nodes:
                    low[v] = round_down(exact_low[v])  # type: ignore[arg-type]
                    high[v] = round_up(exact_high[v])  # type: ignore[arg-type]
            else:
                iterate.extend(nodes)
        if iterate:
            sweeps += _iterate(
                graph,
                iterate,
                low,
                high,
                tolerance,
                max_sweeps,
                start_list,
                child_list,
                node_layer,
            )
            # A node with one exact side (a chance-free node whose other side waits on an
            # inexact child) keeps its exact side in the floats too.
            for v in iterate:
                if exact_low[v] is not None:
                    low[v] = max(low[v], round_down(exact_low[v]))  # type: ignore[arg-type]
                if exact_high[v] is not None:
                    high[v] = min(high[v], round_up(exact_high[v]))  # type: ignore[arg-type]
        float_nodes_by_level.append(iterate)
        if report is not None:
            report(lvl + 1, nlevels)
    wide = sum(
        1 for nodes in float_nodes_by_level for v in nodes if not (high[v] - low[v] <= tolerance)
    )
    return ChanceSolution(
        graph=graph,
        low=low,
        high=high,
        exact_low=exact_low,
        exact_high=exact_high,
        tolerance=tolerance,
        components=ncomp,
        levels=nlevels,
        sweeps=sweeps,
        wide=wide,
        component=comp,
        finish=np.array(finish, dtype=np.int64),
        node_level=np.array(level, dtype=np.int64)[comp],
        on_cycle=np.array(cyclic, dtype=np.bool_)[comp],
        node_layer=node_layer,
    )


def _exact_cycle(
    nodes: list[int],
    start_list: list[int],
    combine: Callable[[int, int], Fraction | None],
    exact_low: list[Fraction | None],
    exact_high: list[Fraction | None],
    vmin: int,
    vmax: int,
) -> bool:
    """Solve a component of decision nodes exactly, if its outside children are exact:
    start at the range's ends and apply the equations until nothing changes (max and
    negation only pick among finitely many values, so this ends). Returns whether it
    could (on False nothing is written)."""
    saved = [(exact_low[v], exact_high[v]) for v in nodes]
    for v in nodes:
        exact_low[v] = Fraction(vmin)
        exact_high[v] = Fraction(vmax)
    changed = True
    while changed:
        changed = False
        for v in nodes:
            lo = combine(v, 0)
            hi = combine(v, 1)
            if lo is None or hi is None:
                for u, (a, b) in zip(nodes, saved, strict=True):
                    exact_low[u], exact_high[u] = a, b
                return False
            low_now, high_now = exact_low[v], exact_high[v]
            assert low_now is not None and high_now is not None  # set above, never cleared
            if lo > low_now:
                exact_low[v] = lo
                changed = True
            if hi < high_now:
                exact_high[v] = hi
                changed = True
    return True


@dataclass
class _Sweep:
    """One layer's nodes and edges, laid out for vectorised updates."""

    nodes: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    kids: npt.NDArray[np.int64]
    positive: npt.NDArray[np.bool_]
    prob: npt.NDArray[np.float64]
    chance: npt.NDArray[np.bool_]
    any_chance: bool

    @classmethod
    def of(cls, graph: ChanceGraph, nodes: npt.NDArray[np.int64]) -> _Sweep:
        first = graph.start[nodes]
        counts = graph.start[nodes + 1] - first
        offsets = np.zeros(len(nodes), dtype=np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        edge = np.repeat(first - offsets, counts) + np.arange(int(counts.sum()), dtype=np.int64)
        prob = graph.weight[edge]
        chance = graph.kind[nodes] == CHANCE
        return cls(
            nodes=nodes,
            offsets=offsets,
            counts=counts,
            kids=graph.child[edge],
            positive=graph.sign[edge] > 0,
            prob=prob,
            chance=chance,
            any_chance=bool(chance.any()),
        )

    def update(self, low: npt.NDArray[np.float64], high: npt.NDArray[np.float64]) -> bool:
        """Apply the equations once to this layer's nodes; whether anything moved."""
        cl = low[self.kids]
        ch = high[self.kids]
        v_low = np.where(self.positive, cl, -ch)
        v_high = np.where(self.positive, ch, -cl)
        new_low = np.maximum.reduceat(v_low, self.offsets)
        new_high = np.maximum.reduceat(v_high, self.offsets)
        if self.any_chance:
            prob, offsets, counts = self.prob, self.offsets, self.counts
            s_low = np.add.reduceat(prob * v_low, offsets)
            s_high = np.add.reduceat(prob * v_high, offsets)
            m_low = _margins(np.add.reduceat(prob * np.abs(v_low), offsets), counts)
            m_high = _margins(np.add.reduceat(prob * np.abs(v_high), offsets), counts)
            new_low = np.where(self.chance, s_low - m_low, new_low)
            new_high = np.where(self.chance, s_high + m_high, new_high)
        old_low = low[self.nodes]
        old_high = high[self.nodes]
        moved = bool((new_low > old_low).any() or (new_high < old_high).any())
        if moved:
            low[self.nodes] = np.maximum(old_low, new_low)
            high[self.nodes] = np.minimum(old_high, new_high)
        return moved


def _iterate(
    graph: ChanceGraph,
    nodes_list: Sequence[int],
    low: npt.NDArray[np.float64],
    high: npt.NDArray[np.float64],
    tolerance: float,
    max_sweeps: int,
    start: list[int],
    child: list[int],
    node_layer: npt.NDArray[np.int32] | None = None,
) -> int:
    """Value iteration over *nodes_list*, whose children are either among them or
    already final in *low* / *high*; returns the sweeps it took.

    Gauss-Seidel by layers (:func:`~solver.chance.components.sweep_layers`), each layer
    vectorised. Lows only rise and highs only fall, each step rounded outwards, so every
    value written is a sound bound. Stops when every node's bounds are within
    *tolerance*, when a sweep changes nothing, or after *max_sweeps*. Each node's layer is
    written into *node_layer* if given."""
    nodes = np.array(sorted(nodes_list), dtype=np.int64)
    layers = sweep_layers(nodes, start, child)
    if node_layer is not None:
        for i, layer in enumerate(layers):
            node_layer[layer] = i
    sweeps = [_Sweep.of(graph, layer) for layer in layers]
    done = 0
    while done < max_sweeps:
        done += 1
        moved = False
        for sweep in sweeps:
            moved |= sweep.update(low, high)
        if not moved or float(np.max(high[nodes] - low[nodes])) <= tolerance:
            break
    return done


__all__ = [
    "DEFAULT_MAX_SWEEPS",
    "DEFAULT_TOLERANCE",
    "ChanceSolution",
    "round_down",
    "round_up",
    "solve_graph",
]
