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
  exact: without a chance node on a cycle the iteration settles after finitely many steps
  (:class:`~solver.chance.exact.ExactBounds`);
* on a cycle through a chance node the iteration converges only in the limit: it runs in
  floating point, rounding every chance node's sum outwards by a proven bound on its
  error (:func:`_margins`), until both bounds of every position of the component are
  within the *tolerance* of each other (or stop moving), and those positions are marked
  inexact.

So a reported ``low`` is never above the true least fixpoint and a ``high`` never below the
greatest, whatever the tolerance; only their distance depends on it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.chance.components import component_levels, strongly_connected, sweep_layers
from solver.chance.exact import ExactBounds
from solver.chance.graph import CHANCE, DECISION, ChanceGraph, value_range_of
from solver.game import MoveLabel


def _native_iterate() -> Any:
    """:func:`solver.chance._sweep.iterate`, or ``None`` when the C module is not built (no C
    compiler at install) or ``NEGAGRAPH_PURE_PYTHON`` is set: :func:`_iterate` then sweeps
    with NumPy (:class:`_Sweep`), to the same floats bit for bit."""
    if os.environ.get("NEGAGRAPH_PURE_PYTHON"):
        return None
    try:
        from solver.chance import _sweep
    except ImportError:
        return None
    return _sweep.iterate


NATIVE_ITERATE: Any = _native_iterate()
"""The C value iteration, or ``None`` (see :func:`_native_iterate`)."""

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
    vmin, vmax = value_range_of(graph.game)
    n = len(graph)
    finish = [0] * n
    comp, ncomp = strongly_connected(graph, finish)
    low = np.full(n, float(vmin))
    high = np.full(n, float(vmax))
    node_layer = np.full(n, -1, dtype=np.int32)
    exact = ExactBounds(graph, low, high, (vmin, vmax))
    levels = component_levels(comp.tolist(), ncomp, exact.start, exact.child, exact.kind)
    nlevels = len(levels.by_level)
    sweeps = 0
    iterated: list[int] = []
    for lvl, components in enumerate(levels.by_level):
        iterate = exact.level(levels, components)
        if iterate:
            sweeps += _iterate(
                graph,
                iterate,
                low,
                high,
                tolerance,
                max_sweeps,
                exact.start,
                exact.child,
                node_layer,
            )
            exact.keep(iterate)
        iterated.extend(iterate)
        if report is not None:
            report(lvl + 1, nlevels)
    nodes = np.array(iterated, dtype=np.int64)
    wide = int(np.count_nonzero(~(high[nodes] - low[nodes] <= tolerance)))
    return ChanceSolution(
        graph=graph,
        low=low,
        high=high,
        exact_low=exact.exact_low,
        exact_high=exact.exact_high,
        tolerance=tolerance,
        components=ncomp,
        levels=nlevels,
        sweeps=sweeps,
        wide=wide,
        component=comp,
        finish=np.array(finish, dtype=np.int64),
        node_level=np.array(levels.level, dtype=np.int64)[comp],
        on_cycle=np.array(levels.cyclic, dtype=np.bool_)[comp],
        node_layer=node_layer,
    )


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
    vectorised (in C where :data:`NATIVE_ITERATE` is there, to the same floats). Lows
    only rise and highs only fall, each step rounded outwards, so every value written is
    a sound bound. Stops when every node's bounds are within *tolerance*, when a sweep
    changes nothing, or after *max_sweeps*. Each node's layer is
    written into *node_layer* if given."""
    nodes = np.array(sorted(nodes_list), dtype=np.int64)
    layers = sweep_layers(nodes, start, child)
    if node_layer is not None:
        for i, layer in enumerate(layers):
            node_layer[layer] = i
    if NATIVE_ITERATE is not None:
        bounds = np.zeros(len(layers) + 1, dtype=np.int64)
        np.cumsum([len(layer) for layer in layers], out=bounds[1:])
        return int(
            NATIVE_ITERATE(
                low,
                high,
                np.ascontiguousarray(graph.start, dtype=np.int64),
                np.ascontiguousarray(graph.child, dtype=np.int64),
                np.ascontiguousarray(graph.sign, dtype=np.int8),
                np.ascontiguousarray(graph.weight, dtype=np.float64),
                np.ascontiguousarray(graph.kind, dtype=np.int8),
                np.concatenate(layers),
                bounds,
                tolerance,
                max_sweeps,
            )
        )
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
    "solve_graph",
]
