"""The exact bounds of a chance graph's positions, as fractions, where they follow from
their children's in finitely many steps: a position outside every cycle, or a component
whose cycles are of decision nodes only (``docs/design.md`` §10).
:func:`~solver.chance.bounds.solve_graph` asks :class:`ExactBounds` first, level by level,
and iterates in floats what it leaves.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from solver.chance.components import Levels
from solver.chance.graph import DECISION, FRONTIER, TERMINAL, ChanceGraph


def round_down(q: Fraction) -> float:
    """The largest float not above *q*."""
    x = float(q)
    return math.nextafter(x, -math.inf) if Fraction(x) > q else x


def round_up(q: Fraction) -> float:
    """The smallest float not below *q*."""
    x = float(q)
    return math.nextafter(x, math.inf) if Fraction(x) < q else x


class ExactBounds:
    """Every position's exact bounds known so far (``None`` where not known), beside the
    sound float bounds *low* / *high* (kept in step: a position's exact bounds, once
    known, are written there rounded outwards). Terminal positions start exact."""

    def __init__(
        self,
        graph: ChanceGraph,
        low: npt.NDArray[np.float64],
        high: npt.NDArray[np.float64],
        value_range: tuple[int, int],
    ) -> None:
        n = len(graph)
        self.low = low
        self.high = high
        self.range = value_range
        self.exact_low: list[Fraction | None] = [None] * n
        self.exact_high: list[Fraction | None] = [None] * n
        self.start: list[int] = graph.start.tolist()
        self.child: list[int] = graph.child.tolist()
        self.sign: list[int] = graph.sign.tolist()
        self.kind: list[int] = graph.kind.tolist()
        self.probability = graph.probability
        for v, value in graph.terminal.items():
            self.exact_low[v] = self.exact_high[v] = Fraction(value)
            low[v] = high[v] = float(value)

    def level(self, levels: Levels, components: list[int]) -> list[int]:
        """Solve exactly what can be of one level's *components* (their children are
        solved); returns the nodes left to iterate in floats, ascending by component."""
        kind = self.kind
        iterate: list[int] = []
        for c in components:
            nodes = levels.members[c]
            if kind[nodes[0]] in (TERMINAL, FRONTIER):
                continue  # terminal: exact; unexpanded: the value range's ends
            if not levels.cyclic[c]:
                if not self.settle(nodes[0]):
                    iterate.append(nodes[0])
            elif levels.has_chance[c] or not self.cycle(nodes):
                iterate.extend(nodes)
        return iterate

    def settle(self, v: int) -> bool:
        """Give the node *v* (on no cycle) each exact bound its children's give; returns
        whether both are known (then its floats are theirs, rounded outwards)."""
        lo = self.combine(v, 0)
        if lo is not None:
            self.exact_low[v] = lo
        hi = self.combine(v, 1)
        if hi is not None:
            self.exact_high[v] = hi
        if lo is None or hi is None:
            return False
        self.low[v] = round_down(lo)
        self.high[v] = round_up(hi)
        return True

    def cycle(self, nodes: list[int]) -> bool:
        """Solve a component of decision nodes exactly, if its outside children are exact:
        start at the range's ends and apply the equations until nothing changes (max and
        negation only pick among finitely many values, so this ends). Returns whether it
        could (on False nothing is written)."""
        exact_low, exact_high = self.exact_low, self.exact_high
        saved = [(exact_low[v], exact_high[v]) for v in nodes]
        vmin, vmax = self.range
        for v in nodes:
            exact_low[v] = Fraction(vmin)
            exact_high[v] = Fraction(vmax)
        if not self._fixpoint(nodes):
            for u, (a, b) in zip(nodes, saved, strict=True):
                exact_low[u], exact_high[u] = a, b
            return False
        for v in nodes:
            self.low[v] = round_down(exact_low[v])  # type: ignore[arg-type]
            self.high[v] = round_up(exact_high[v])  # type: ignore[arg-type]
        return True

    def _fixpoint(self, nodes: list[int]) -> bool:
        """Apply the equations to *nodes* until nothing changes; ``False`` as soon as a
        bound cannot be combined exactly."""
        exact_low, exact_high = self.exact_low, self.exact_high
        changed = True
        while changed:
            changed = False
            for v in nodes:
                lo = self.combine(v, 0)
                hi = self.combine(v, 1)
                if lo is None or hi is None:
                    return False
                low_now, high_now = exact_low[v], exact_high[v]
                assert low_now is not None and high_now is not None  # set, never cleared
                if lo > low_now:
                    exact_low[v] = lo
                    changed = True
                if hi < high_now:
                    exact_high[v] = hi
                    changed = True
        return True

    def keep(self, nodes: list[int]) -> None:
        """After iterating *nodes* in floats: a node with one exact side (a chance-free
        node whose other side waits on an inexact child) keeps its exact side in the
        floats too."""
        exact_low, exact_high, low, high = self.exact_low, self.exact_high, self.low, self.high
        for v in nodes:
            lo = exact_low[v]
            if lo is not None:
                low[v] = max(low[v], round_down(lo))
            hi = exact_high[v]
            if hi is not None:
                high[v] = min(high[v], round_up(hi))

    def seen(self, e: int) -> tuple[Fraction | None, Fraction | None]:
        """Edge *e*'s child's exact bounds (low side, high side) seen from the parent."""
        c = self.child[e]
        if self.sign[e] > 0:
            return self.exact_low[c], self.exact_high[c]
        lo, hi = self.exact_high[c], self.exact_low[c]
        return (None if lo is None else -lo), (None if hi is None else -hi)

    def combine(self, v: int, side: int) -> Fraction | None:
        """The exact bound (0: low, 1: high) of *v* from its children's, if all known."""
        if self.kind[v] == DECISION:
            return self._best(v, side)
        return self._expectation(v, side)

    def _best(self, v: int, side: int) -> Fraction | None:
        """A decision node's: the best exact bound, if every child whose bound is not
        known exactly is below it for sure (its float bound from above is no more: a move
        a partial solve left unexplored, or one on a chance cycle)."""
        child, sign, low, high = self.child, self.sign, self.low, self.high
        best: Fraction | None = None
        above = -math.inf
        for e in range(self.start[v], self.start[v + 1]):
            x = self.seen(e)[side]
            if x is None:
                c = child[e]
                top = high[c] if sign[e] > 0 else -low[c]
                above = max(above, float(top))
            elif best is None or x > best:
                best = x
        return None if best is None or above > best else best

    def _expectation(self, v: int, side: int) -> Fraction | None:
        """A chance node's: the expectation of its outcomes' exact bounds, if all known."""
        values = []
        for e in range(self.start[v], self.start[v + 1]):
            x = self.seen(e)[side]
            if x is None:
                return None
            values.append((x, e))
        probability = self.probability
        total = Fraction(0)
        for x, e in values:
            p = probability[e]
            assert p is not None
            total += p * x
        return total


__all__ = ["ExactBounds", "round_down", "round_up"]
