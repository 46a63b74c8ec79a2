"""The optimal strategy of a game of chance, and the expected number of plies it takes.

**The strategy** is the one the position answers rank first: at every decision node the
best move of :meth:`~solver.chance.bounds.ChanceSolution.best_move` (the largest ``low`` seen
from the mover, then the largest ``high``, then the game's move order); at a chance node
every outcome, with its probability. When both players follow it, play is a Markov chain.

**Expected plies** ``E(n)``: the expected number of plies from ``n`` to the end of the
game under that chain, where a ply is a player's move and an outcome drawn at a chance
node is not one::

    terminal: E(n) = 0
    decision: E(n) = 1 + E(chosen child)
    chance:   E(n) = sum_c p(c) E(c)

``E(n)`` is infinite (``None`` / ``NULL`` where stored) exactly where the chain started at
``n`` fails to end with probability 1: where it can reach a position from which no
terminal position can be reached (a finite chain that ends almost surely ends within a
finite expected time, so everywhere else ``E(n)`` is finite).

:func:`expected_plies` computes it one level of the graph's components at a time,
children first (the levels :func:`~solver.chance.bounds.solve_graph` solved the bounds by):

* a position on no cycle of the game's graph whose chosen children's expectations are
  exact gets the **exact** fraction;
* positions on cycles of the graph (their component's) are solved in float64, first
  directly (:func:`_solve_directly`): the chain's moves back to an ancestor in the
  depth-first search that found the components lead to a few *feedback* positions (in
  Pig, one per component: the start of a turn, which two 1s in a row return to); their
  values are solved for by LU decomposition and the others follow in one pass. Where a
  component has more than :data:`MAX_FEEDBACK` of them (dice race's one big component
  has thousands) Gauss-Seidel sweeps from 0 by layers take over, as the bounds'
  iteration does. Either way the result is accepted once a bound proven from the
  residuals (below) puts every position within ``tolerance / levels`` of the truth,
  relative to ``max(1, E)`` (sweeps go on until it does), so the errors added up over
  the levels stay within ``tolerance`` (default :data:`DEFAULT_PLIES_TOLERANCE`), up to
  float64 rounding.

The bound: on one level, with ``Q`` the chain's moves inside its components and ``T``
one step of the equations, the truth is ``E* = L + (I - Q)^-1 r`` for any values ``L``
and their residual ``r = T(L) - L``. The expected number of moves ``t`` before the chain
leaves the component (computed alongside, with residual ``r_t``: ``(I - Q) t = 1 - r_t``)
gives ``|(I - Q)^-1 r| <= max|r| / min(1 - r_t) * t`` where ``min(1 - r_t) > 0``, since
``(I - Q)^-1`` is non-negative.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from solver.chance.bounds import ChanceSolution
from solver.chance.components import sweep_layers
from solver.chance.graph import CHANCE, DECISION, FRONTIER, TERMINAL

DEFAULT_PLIES_TOLERANCE = 1e-9
"""How far (relative to ``max(1, E)``) a stored expectation on a cycle may be from the
true one, summed over the levels of components."""

MAX_FEEDBACK = 256
"""Most feedback positions of a component solved directly (:func:`_solve_directly`);
Pig has one per component. (Solving whole components of up to 240 positions by LU
instead took 1.6 s on Pig to 60 with one thread, and 4-15 s when OpenBLAS's threads
competed with other processes for the cores; feedback positions from the bounds' layer
order, up to 130 per component on Pig to 100, made the one pass cost as much as
sweeping.)"""

MAX_AFFINE = 1 << 25
"""Most entries of one level's affine functions (256 MiB); larger levels are swept."""

MAX_PLIES_SWEEPS = 1_000_000
"""Most sweeps per level (a safety stop; positions left looser are counted)."""


@dataclass
class ExpectedPlies:
    """The strategy's chosen moves and every position's expected plies."""

    choice: npt.NDArray[np.int64]
    """The edge index of each decision node's chosen move; -1 at the other nodes."""
    plies: npt.NDArray[np.float64]
    """The expected plies to the end (``inf`` where infinite); exact fractions rounded to
    the nearest float, the others within the tolerance."""
    exact: list[Fraction | None]
    """The exact expectation where it is known."""
    tolerance: float
    sweeps: int
    """Sweeps over the positions on cycles, summed over the levels (0 where the direct
    solutions passed the bound)."""
    loose: int
    """Positions left further from the truth than the tolerance (the sweep limit)."""

    def value(self, node: int) -> Fraction | float | None:
        """*node*'s expected plies: the exact fraction, else the float; ``None`` if
        infinite."""
        q = self.exact[node]
        if q is not None:
            return q
        x = float(self.plies[node])
        return None if np.isinf(x) else x


def best_edges(solution: ChanceSolution) -> npt.NDArray[np.int64]:
    """The edge index of every decision node's best move as
    :meth:`~solver.chance.bounds.ChanceSolution.best_move` ranks them (-1 at other nodes), for
    all nodes at once."""
    g = solution.graph
    n = len(g)
    choice = np.full(n, -1, dtype=np.int64)
    decision = np.flatnonzero(g.kind == DECISION)
    if decision.size == 0:
        return choice
    first = g.start[decision]
    counts = g.start[decision + 1] - first
    offsets = np.zeros(len(decision), dtype=np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    edges = np.repeat(first - offsets, counts) + np.arange(int(counts.sum()), dtype=np.int64)
    kids = g.child[edges]
    positive = g.sign[edges] > 0
    v_low = np.where(positive, solution.low[kids], -solution.high[kids])
    v_high = np.where(positive, solution.high[kids], -solution.low[kids])
    owner = np.repeat(np.arange(len(decision)), counts)
    top = v_low == np.maximum.reduceat(v_low, offsets)[owner]
    v_high = np.where(top, v_high, -np.inf)
    top &= v_high == np.maximum.reduceat(v_high, offsets)[owner]
    candidates = np.where(top, edges, np.iinfo(np.int64).max)
    choice[decision] = np.minimum.reduceat(candidates, offsets)
    return choice


@dataclass
class _Rows:
    """Some nodes' moves in the chain, laid out for vectorised updates."""

    nodes: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    kids: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]

    @classmethod
    def of(
        cls,
        start: npt.NDArray[np.int64],
        child: npt.NDArray[np.int64],
        weight: npt.NDArray[np.float64],
        nodes: npt.NDArray[np.int64],
    ) -> _Rows:
        first = start[nodes]
        counts = start[nodes + 1] - first
        offsets = np.zeros(len(nodes), dtype=np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        edges = np.repeat(first - offsets, counts) + np.arange(int(counts.sum()), dtype=np.int64)
        return cls(nodes, offsets, counts, child[edges], weight[edges])

    def any(self, flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Whether any chosen child of each node has its flag."""
        return np.logical_or.reduceat(flags[self.kids], self.offsets)

    def expect(
        self, cost: npt.NDArray[np.float64], values: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """One step of the equations: each node's cost plus its children's expectation."""
        return cost[self.nodes] + np.add.reduceat(self.weight * values[self.kids], self.offsets)


def _sweep_until_stable(
    rows: list[_Rows], flags: npt.NDArray[np.bool_], seed: npt.NDArray[np.bool_] | None
) -> None:
    """Set *flags* of the rows' nodes to: their seed, or any child's flag; the least such
    fixpoint, by Gauss-Seidel sweeps over the layers until nothing changes."""
    changed = True
    while changed:
        changed = False
        for r in rows:
            new = r.any(flags)
            if seed is not None:
                new |= seed[r.nodes]
            if (new != flags[r.nodes]).any():
                flags[r.nodes] = new
                changed = True


def expected_plies(
    solution: ChanceSolution,
    tolerance: float = DEFAULT_PLIES_TOLERANCE,
    max_sweeps: int = MAX_PLIES_SWEEPS,
    solve_directly: bool = True,
) -> ExpectedPlies:
    """The strategy of :func:`best_edges` and every position's expected plies under it
    (see the module docstring). *tolerance* must be positive; without *solve_directly*
    the positions on cycles are swept from 0 (tests compare both ways)."""
    if not tolerance > 0:
        raise ValueError(f"the tolerance must be positive, not {tolerance!r}")
    g = solution.graph
    kind = g.kind
    choice = best_edges(solution)
    structure = _Structure.of(solution)
    node_level, on_cycle = structure.level, structure.on_cycle
    levels = int(node_level.max()) + 1 if len(g) else 0
    chain = _Chain.of(solution, choice)
    state = _Expectations(solution, chain, structure)
    per_level = tolerance / max(levels, 1)
    order = np.argsort(node_level, kind="stable")
    bounds = np.searchsorted(node_level[order], np.arange(levels + 1))
    for lvl in range(levels):
        nodes = order[bounds[lvl] : bounds[lvl + 1]]
        nodes = nodes[(kind[nodes] != TERMINAL) & (kind[nodes] != FRONTIER)]
        flat = nodes[~on_cycle[nodes]]
        if flat.size:
            state.flat(flat)
        ring = nodes[on_cycle[nodes]]
        if ring.size:
            state.ring(ring, per_level, max_sweeps, solve_directly)
    return ExpectedPlies(
        choice=choice,
        plies=state.plies.copy(),
        exact=state.exact,
        tolerance=tolerance,
        sweeps=state.sweeps,
        loose=state.loose,
    )


@dataclass
class _Structure:
    """What :func:`~solver.chance.bounds.solve_graph` found of the graph's components,
    by node (:class:`~solver.chance.bounds.ChanceSolution`'s fields of the same names)."""

    level: npt.NDArray[np.int64]
    on_cycle: npt.NDArray[np.bool_]
    layer: npt.NDArray[np.int32]
    component: npt.NDArray[np.int64]
    finish: npt.NDArray[np.int64]

    @classmethod
    def of(cls, solution: ChanceSolution) -> _Structure:
        """*solution*'s.

        :raises ValueError: if it does not know them."""
        level, on_cycle, layer = solution.node_level, solution.on_cycle, solution.node_layer
        component, finish = solution.component, solution.finish
        if (
            level is None
            or on_cycle is None
            or layer is None
            or component is None
            or finish is None
        ):
            raise ValueError("expected_plies() needs the components of solve_graph()'s solution")
        return cls(level, on_cycle, layer, component, finish)


@dataclass
class _Chain:
    """The Markov chain of the strategy: every outcome of a chance node, the chosen move
    of a decision node, grouped by parent as a graph's edges are."""

    start: npt.NDArray[np.int64]
    child: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    """The outcome's probability; 1 for a decision node's move."""
    edges: npt.NDArray[np.int64]
    """Each move's edge index in the graph."""
    cost: npt.NDArray[np.float64]
    """The plies a node's move takes: 1 at a decision node, else 0."""
    start_list: list[int]
    child_list: list[int]

    @classmethod
    def of(cls, solution: ChanceSolution, choice: npt.NDArray[np.int64]) -> _Chain:
        """The chain of the decision nodes' chosen edges *choice*."""
        g = solution.graph
        n = len(g)
        kind = g.kind
        counts = np.diff(g.start)
        parent = np.repeat(np.arange(n, dtype=np.int64), counts)
        keep = kind[parent] == CHANCE
        keep[choice[choice >= 0]] = True
        chain_edges = np.flatnonzero(keep)
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent[chain_edges], minlength=n), out=start[1:])
        child = g.child[chain_edges]
        weight = np.where(kind[parent[chain_edges]] == DECISION, 1.0, g.weight[chain_edges])
        cost = (kind == DECISION).astype(np.float64)
        return cls(start, child, weight, chain_edges, cost, start.tolist(), child.tolist())

    def rows(self, nodes: npt.NDArray[np.int64]) -> _Rows:
        """The moves of *nodes*."""
        return _Rows.of(self.start, self.child, self.weight, nodes)


class _Expectations:
    """The expected plies as :func:`expected_plies` solves them, level by level, and
    what it knows of each position so far."""

    def __init__(self, solution: ChanceSolution, chain: _Chain, structure: _Structure) -> None:
        g = solution.graph
        n = len(g)
        kind = g.kind
        self.probability = g.probability
        self.chain = chain
        self.structure = structure
        self.ends = kind == TERMINAL
        """Can reach a terminal position."""
        self.endless = np.zeros(n, dtype=np.bool_)
        """Can reach a position that cannot end."""
        self.values = np.zeros((n, 2), dtype=np.float64)
        """Column 0: the expected plies; column 1 (scratch, 0 outside the level being
        iterated): the expected moves before the chain leaves the component."""
        self.plies = self.values[:, 0]
        self.inside = np.zeros(n, dtype=np.bool_)
        self.exact: list[Fraction | None] = [None] * n
        for v in np.flatnonzero(self.ends).tolist():
            self.exact[v] = Fraction(0)
        # Unexpanded positions (a partial solve's): not known to end, counted as endless.
        unexpanded = kind == FRONTIER
        self.endless[unexpanded] = True
        self.plies[unexpanded] = np.inf
        self.is_exact = self.ends.copy()
        self.sweeps = 0
        self.loose = 0

    def flat(self, nodes: npt.NDArray[np.int64]) -> None:
        """Solve one level's positions on no cycle (their children are solved)."""
        ends, endless, plies, is_exact = self.ends, self.endless, self.plies, self.is_exact
        flat = nodes
        rows = self.chain.rows(flat)
        ends[flat] = rows.any(ends)
        endless[flat] = ~ends[flat] | rows.any(endless)
        plies[flat] = rows.expect(self.chain.cost, plies)
        plies[flat[endless[flat]]] = np.inf
        sure = np.logical_and.reduceat(is_exact[rows.kids], rows.offsets) & ~endless[flat]
        is_exact[flat] = sure
        self._exact(flat[sure].tolist())

    def _exact(self, nodes: list[int]) -> None:
        """The exact expectations of *nodes*, whose chosen children's are exact."""
        chain, exact, probability, plies = self.chain, self.exact, self.probability, self.plies
        start, child, edges, cost = chain.start, chain.child, chain.edges, chain.cost
        for v in nodes:
            total = Fraction(int(cost[v]))
            for e in range(int(start[v]), int(start[v + 1])):
                q = exact[int(child[e])]
                assert q is not None
                p = probability[int(edges[e])]
                total += q if p is None else p * q
            exact[v] = total
            plies[v] = float(total)

    def ring(
        self,
        ring: npt.NDArray[np.int64],
        tolerance: float,
        max_sweeps: int,
        solve_directly: bool,
    ) -> None:
        """Solve one level's positions on cycles (see the module docstring) within
        *tolerance*."""
        chain, s = self.chain, self.structure
        ends, endless, inside = self.ends, self.endless, self.inside
        groups = _layered(ring, s.layer, chain.start_list, chain.child_list)
        layers = [chain.rows(group) for group in groups]
        _sweep_until_stable(layers, ends, None)
        _sweep_until_stable(layers, endless, ~ends)
        self.plies[ring[endless[ring]]] = np.inf
        finite = ring[~endless[ring]]
        if finite.size == 0:
            return
        inside[finite] = True
        groups = [group[~endless[group]] for group in groups]
        layers = [chain.rows(group) for group in groups if group.size]
        direct = solve_directly and _solve_directly(
            finite,
            chain.rows,
            _feedback_order(finite, s.finish, chain.start_list, chain.child_list),
            s.component,
            inside,
            self.values,
            chain.cost,
        )
        done, wide = _iterate(
            layers, inside, self.values, chain.cost, tolerance, max_sweeps, direct
        )
        self.sweeps += done
        self.loose += wide
        inside[finite] = False
        self.values[finite, 1] = 0.0


def _layered(
    nodes: npt.NDArray[np.int64],
    layer_of: npt.NDArray[np.int32],
    start: list[int],
    child: list[int],
) -> list[npt.NDArray[np.int64]]:
    """*nodes* in layers for Gauss-Seidel sweeps: the layers the bounds' iteration used
    (any order is correct; theirs puts most children before their parents), then the
    nodes it did not iterate (on cycles of decision nodes only), layered here."""
    layered = nodes[layer_of[nodes] >= 0]
    order = layered[np.argsort(layer_of[layered], kind="stable")]
    cuts = np.flatnonzero(np.diff(layer_of[order])) + 1
    groups = np.split(order, cuts) if order.size else []
    rest = nodes[layer_of[nodes] < 0]
    if rest.size:
        groups += sweep_layers(rest, start, child)
    return groups


def _iterate(
    layers: list[_Rows],
    inside: npt.NDArray[np.bool_],
    values: npt.NDArray[np.float64],
    cost: npt.NDArray[np.float64],
    tolerance: float,
    max_sweeps: int,
    direct: bool,
) -> tuple[int, int]:
    """Gauss-Seidel sweeps over the nodes of *layers* (one level's positions on cycles,
    every one of which ends almost surely; *inside* marks them) of both columns of
    *values*: the expected plies, and the expected moves before leaving the component (a
    move out of it adds none); from the values there if *direct* (some components solved
    directly, the others 0), else from 0. Stops when the bound of the module docstring
    is within *tolerance* of ``max(1, E)`` everywhere (checked at once if *direct*);
    returns the sweeps and the positions left further than that (after *max_sweeps*)."""
    nodes = np.concatenate([r.nodes for r in layers])
    steps = []
    for r in layers:
        weights = np.stack([r.weight, np.where(inside[r.kids], r.weight, 0.0)], axis=1)
        own = np.stack([cost[r.nodes], np.ones(len(r.nodes))], axis=1)
        steps.append((r, weights, own))
    if not direct:
        values[nodes] = 0.0
    done = 0
    check_at = 0 if direct else 8
    while True:
        if done < check_at and done < max_sweeps:
            done += 1
            for r, weights, own in steps:
                values[r.nodes] = own + np.add.reduceat(weights * values[r.kids], r.offsets, axis=0)
            continue
        check_at = done + max(4, done // 4)  # a check costs a sweep: not after every one
        residual = 0.0
        slack = np.inf
        for r, weights, own in steps:
            step = own + np.add.reduceat(weights * values[r.kids], r.offsets, axis=0)
            gap = step - values[r.nodes]
            residual = max(residual, float(np.max(np.abs(gap[:, 0]))))
            slack = min(slack, float(np.min(1.0 - gap[:, 1])))
        wide = len(nodes)
        if slack > 0:
            bound = residual / slack * values[nodes, 1]
            wide = int((bound > tolerance * np.maximum(values[nodes, 0], 1.0)).sum())
        if wide == 0 or done >= max_sweeps:
            return done, wide


def _feedback_order(
    nodes: npt.NDArray[np.int64],
    finish: npt.NDArray[np.int64],
    start: list[int],
    child: list[int],
) -> tuple[list[npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
    """*nodes* (one level's positions on cycles) in layers, and their **feedback**
    positions: the targets of the chain's moves (*start*, *child*) that go back to a node
    the depth-first search of the components finished later (an ancestor). Without
    those moves the chain is acyclic, and each layer's positions move only to earlier
    layers, feedback positions or outside."""
    order = nodes[np.argsort(finish[nodes], kind="stable")].tolist()
    mine = set(order)
    layer: dict[int, int] = {}
    feedback: set[int] = set()
    for v in order:
        top = 0
        for e in range(start[v], start[v + 1]):
            c = child[e]
            if c in mine:
                if c in layer:  # finished earlier: not a move back
                    d = layer[c] + 1
                    if d > top:
                        top = d
                else:
                    feedback.add(c)
        layer[v] = top
    groups: list[list[int]] = [[] for _ in range(max(layer.values()) + 1)]
    for v in order:
        groups[layer[v]].append(v)
    return [np.array(g, dtype=np.int64) for g in groups], np.array(sorted(feedback), dtype=np.int64)


def _solve_directly(
    nodes: npt.NDArray[np.int64],
    rows_of: Callable[[npt.NDArray[np.int64]], _Rows],
    order: tuple[list[npt.NDArray[np.int64]], npt.NDArray[np.int64]],
    component: npt.NDArray[np.int64],
    inside: npt.NDArray[np.bool_],
    values: npt.NDArray[np.float64],
    cost: npt.NDArray[np.float64],
) -> bool:
    """Solve the equations of one level's positions on cycles (*nodes*; *inside* marks
    them), both columns of *values*, directly where that is cheap; returns whether it did
    (else *values* there are 0).

    With the layers and feedback positions of *order* (:func:`_feedback_order`) and
    the feedback positions' values taken as unknowns, one pass over the layers writes
    every position's values as an affine function of its component's unknowns; the
    feedback positions' own functions then give a small linear system per component,
    ``(I - M) x = a``, solved by LU decomposition (float64, the components at once,
    padded with the identity), and the functions give everything else. Done when no
    component has more than :data:`MAX_FEEDBACK` feedback positions."""
    values[nodes] = 0.0
    groups, feedback = order
    feedback = feedback[np.argsort(component[feedback], kind="stable")]  # by component
    comps, symbol_comp = np.unique(component[feedback], return_inverse=True)
    per_comp = np.bincount(symbol_comp, minlength=len(comps))
    width = int(per_comp.max(initial=0))
    if width > MAX_FEEDBACK or len(nodes) * (2 + width) > MAX_AFFINE:
        return False
    symbol = np.full(len(values), -1, dtype=np.int64)
    firsts = np.zeros(len(comps), dtype=np.int64)
    np.cumsum(per_comp[:-1], out=firsts[1:])
    symbol[feedback] = np.arange(len(feedback)) - firsts[symbol_comp]
    local = np.zeros(len(values), dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    # Columns: the constant parts of the plies and of the span, then the unknowns'
    # coefficients.
    affine = np.zeros((len(nodes), 2 + width))
    for group in groups:
        r = rows_of(group)
        kids = r.kids
        terms = np.zeros((len(kids), 2 + width))
        out = ~inside[kids]
        terms[out, 0] = r.weight[out] * values[kids[out], 0]
        unknown = symbol[kids] >= 0
        terms[unknown, 2 + symbol[kids[unknown]]] = r.weight[unknown]
        known = inside[kids] & ~unknown
        terms[known] = r.weight[known, None] * affine[local[kids[known]]]
        own = np.add.reduceat(terms, r.offsets, axis=0)
        own[:, 0] += cost[r.nodes]
        own[:, 1] += 1.0
        affine[local[r.nodes]] = own
    if feedback.size == 0:  # the chain has no cycle here: the values are the constants
        values[nodes] = affine[:, :2]
        return True
    slot = np.searchsorted(comps, component[feedback])
    matrix = np.zeros((len(comps), width, width))
    matrix[:, np.arange(width), np.arange(width)] = 1.0
    matrix[slot, symbol[feedback]] -= affine[local[feedback], 2:]
    rhs = np.zeros((len(comps), width, 2))
    rhs[slot, symbol[feedback]] = affine[local[feedback], :2]
    try:
        x = np.linalg.solve(matrix, rhs)
    except np.linalg.LinAlgError:  # singular in floats: left to the sweeps
        values[nodes] = 0.0
        return False
    # A component without feedback positions has no unknowns: its values are constant.
    where = np.minimum(np.searchsorted(comps, component[nodes]), len(comps) - 1)
    has = comps[where] == component[nodes]
    solved = affine[:, :2] + np.einsum("nk,nkc->nc", affine[:, 2:], x[where]) * has[:, None]
    values[nodes] = solved
    return True


__all__ = ["DEFAULT_PLIES_TOLERANCE", "ExpectedPlies", "best_edges", "expected_plies"]
