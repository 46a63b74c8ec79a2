"""Games of chance: expectiminimax on graphs, with sound bounds, cycles included.

A game that declares ``chance`` (contract 3) has two kinds of non-terminal positions: at a
**decision** node a player chooses a move; at a **chance** node an outcome is drawn with
the probabilities :meth:`~solver.game.GameBase.probabilities` gives (positive fractions
summing to 1). Players no longer alternate strictly (in Pig a roll keeps the turn), so
every position says whose it is (:meth:`~solver.game.GameBase.player_to_move`: a chance
node's player is the one whose turn goes on when the outcome is drawn: the player who
rolls), and an edge changes the point of view exactly when its two ends have different
players. Values stay from the point of view of the position's player (negamax).

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
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from solver.errors import ContractError, SolveError
from solver.game import ChanceRules, Game, MoveLabel, PositionKey
from solver.graph import Graph, NodeState
from solver.memory import format_size, headroom, rss
from solver.run import EndedBy, Limits, ProgressCallback, SolveResult
from solver.store import Batch, Progress, RunOptions, RunStatus, Store
from solver.values import DEPTH_INF, NEG_INF, POS_INF

if TYPE_CHECKING:
    from solver.chance_plies import ExpectedPlies

TERMINAL, DECISION, CHANCE, FRONTIER = 0, 1, 2, 3
"""The kinds of position (:attr:`ChanceGraph.kind`); ``FRONTIER``: not expanded yet (a
partial solve's), its bounds the ends of the game's value range."""

KIND_NAMES = ("terminal", "decision", "chance", "unexpanded")

UNIT_ROUNDOFF = 2.0**-53
"""Half a unit in the last place of 1.0: the relative error of one float64 operation."""

TINY = 2.0**-1000
"""Added to every margin: covers underflow, far below any tolerance anyone asks for."""

DEFAULT_TOLERANCE = 1e-9
"""How close the two bounds of a position on a chance cycle are brought by default."""

PEAK_FACTOR = 3.0
"""A chance solve's peak RSS growth over its expansion's: solving, the expected plies,
the rows and the commit come on top of the graph (Pig to 60: 2.9 times)."""

COMMIT_SHARE = 0.85
"""What the commit of a chance solve's rows adds to its RSS, as a share of what its
expansion took (Pig to 60: about 0.75), reserved by the check before it."""

DEFAULT_MAX_SWEEPS = 1_000_000
"""Most sweeps of value iteration per level of components (a safety stop: the bounds stay
sound; the positions left wider than the tolerance are reported as such)."""


@dataclass
class ChanceGraph:
    """A chance game's graph as far as it is expanded, in columns indexed by node id
    (discovery order: breadth first from the root, in the batches of a partial solve);
    positions not expanded yet have the kind :data:`FRONTIER` and no moves.

    Edges are grouped by parent (``start[n]:start[n + 1]``), in the game's move order.
    """

    game: Game
    keys: list[PositionKey]
    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    dist: npt.NDArray[np.int32]
    """Plies from the root (breadth first: the fewest)."""
    terminal: dict[int, int]
    """Terminal node id -> its value for its player."""
    start: npt.NDArray[np.int64]
    child: npt.NDArray[np.int64]
    sign: npt.NDArray[np.int8]
    """+1 if the edge's child has its parent's player, -1 if the point of view changes."""
    probability: list[Fraction | None]
    """The outcome's probability on a chance node's edges, ``None`` on a decision node's."""
    weight: npt.NDArray[np.float64]
    """The same as the nearest float64 (0 on a decision node's edges)."""
    labels: list[MoveLabel]
    index: dict[PositionKey, int] = field(repr=False)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def edges(self) -> int:
        return len(self.child)

    def moves(self, node: int) -> range:
        """The edge indices of *node*."""
        return range(int(self.start[node]), int(self.start[node + 1]))


def value_range_of(game: Game) -> tuple[int, int]:
    """The game's declared value range, which a chance game must declare.

    :raises ContractError: if it declares none.
    """
    vr = game.facts.value_range
    if vr is None:
        raise ContractError(
            f"{game.name}: a game with chance nodes must declare its value_range "
            "(endless play and unexplored positions start at its ends)"
        )
    return vr


def _player(game: Game, key: PositionKey) -> int:
    p = game.player_to_move(key)
    if p not in (0, 1):
        raise ContractError(
            f"{game.name}: player_to_move({game.format(key)!r}) is {p!r}; a game with "
            "chance nodes must say whose every position is (0 or 1)"
        )
    return int(p)


def _probabilities(
    game: Game, key: PositionKey, moves: int, seen: dict[int, tuple[object, list[Fraction]]]
) -> list[Fraction] | None:
    """The probabilities of *key*'s outcomes, checked. *seen* remembers the sequences
    already checked by identity (games usually return one shared tuple per kind of
    throw), which saves most of the checking."""
    raw = cast(ChanceRules, game).probabilities(key)
    if raw is None:
        return None
    known = seen.get(id(raw))
    if known is not None and known[0] is raw and len(known[1]) == moves:
        return known[1]
    probs: list[Fraction] = []
    for p in raw:
        if isinstance(p, bool) or not isinstance(p, (int, Fraction)) or p <= 0:
            raise ContractError(
                f"{game.name}: probabilities({game.format(key)!r}) holds {p!r}; each must "
                "be a positive Fraction (or int)"
            )
        probs.append(Fraction(p))
    if len(probs) != moves:
        raise ContractError(
            f"{game.name}: position {game.format(key)!r} has {moves} outcomes but "
            f"{len(probs)} probabilities"
        )
    if sum(probs) != 1:
        raise ContractError(
            f"{game.name}: the probabilities of {game.format(key)!r} sum to {sum(probs)}, not 1"
        )
    seen[id(raw)] = (raw, probs)
    return probs


REPORT_EVERY = 1 << 16
"""Positions between two progress reports of an expansion."""


class _Builder:
    """A chance graph as it is expanded: positions in discovery order, each expanded at
    most once (:meth:`expand`), its moves appended in the game's order; :meth:`graph`
    lays it out as a :class:`ChanceGraph` (edges grouped by parent in id order)."""

    def __init__(self, game: Game, root: PositionKey, max_nodes: int | None = None) -> None:
        self.game = game
        self.range = value_range_of(game)
        self.symmetric = game.facts.uses_symmetry
        self.max_nodes = max_nodes
        self.keys: list[PositionKey] = [root]
        self.index: dict[PositionKey, int] = {root: 0}
        self.players: list[int] = [_player(game, root)]
        self.dist: list[int] = [0]
        self.kinds: list[int] = [FRONTIER]
        self.terminal: dict[int, int] = {}
        # Each edge's parent, child, sign and float probability, in expansion order.
        self.parent = array("q")
        self.child = array("q")
        self.sign = array("b")
        self.weights = array("d")
        self.probability: list[Fraction | None] = []
        self.labels: list[MoveLabel] = []
        self.expanded = 0
        self.in_order = True
        """Whether the edges are grouped by parent in id order (every expansion so far
        was of a higher id than the one before), as :meth:`graph` lays them out."""
        self._last = -1
        self._checked: dict[int, tuple[object, list[Fraction]]] = {}
        self._pool: dict[MoveLabel, MoveLabel] = {}  # one string per distinct label

    def add(self, key: PositionKey, dist: int) -> int:
        """A new unexpanded position (:data:`FRONTIER`) for canonical *key*; its id."""
        c = len(self.keys)
        if self.max_nodes is not None and c >= self.max_nodes:
            raise SolveError(
                f"{self.game.name}: more than {self.max_nodes:,} positions; "
                "the chance solver keeps its graph in memory"
            )
        self.index[key] = c
        self.keys.append(key)
        self.players.append(_player(self.game, key))
        self.dist.append(dist)
        self.kinds.append(FRONTIER)
        return c

    def expand(self, node: int) -> list[int]:
        """Expand the unexpanded position *node*: its kind, and its moves with their
        children (new ones added unexpanded); returns the ids of the new ones.

        :raises ContractError: if the game breaks the chance contract.
        :raises SolveError: if a non-terminal position has no moves.
        """
        game = self.game
        key = self.keys[node]
        self.expanded += 1
        value = game.terminal_value(key)
        if value is not None:
            lo, hi = self.range
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ContractError(
                    f"{game.name}: terminal value {value!r} of {game.format(key)!r} is not an "
                    f"integer within the declared value_range ({lo}, {hi})"
                )
            self.kinds[node] = TERMINAL
            self.terminal[node] = value
            return []
        moves = game.children(key)
        if not moves:
            raise SolveError(
                f"{game.name}: position {game.format(key)!r} has no moves "
                "but terminal_value() is None"
            )
        probs = _probabilities(game, key, len(moves), self._checked)
        self.kinds[node] = DECISION if probs is None else CHANCE
        if node < self._last:
            self.in_order = False
        self._last = node
        me = self.players[node]
        index, symmetric, pool = self.index, self.symmetric, self._pool
        new: list[int] = []
        for i, (label, raw) in enumerate(moves):
            turn = _player(game, raw)
            ckey = game.canonical(raw) if symmetric else raw
            c = index.get(ckey)
            if c is None:
                c = self.add(ckey, self.dist[node] + 1)
                new.append(c)
            # The sign is the raw child's: its canonical image has the same value for its
            # own player, who may be the other one (a symmetry that swaps the players).
            self.sign.append(1 if turn == me else -1)
            self.child.append(c)
            self.parent.append(node)
            if probs is None:
                self.probability.append(None)
                self.weights.append(0.0)
            else:
                self.probability.append(probs[i])
                self.weights.append(float(probs[i]))
            self.labels.append(pool.setdefault(label, label))
        return new

    def grow(
        self,
        queue: Iterable[int],
        limit: int | None = None,
        stop: Callable[[], bool] | None = None,
        report: Callable[[int, int], None] | None = None,
    ) -> bool:
        """Expand breadth first from the unexpanded positions *queue*, their new children
        after them: at most *limit* positions, stopping early when *stop* (asked every
        1,024 expansions) says so. Returns whether the queue ran out (nothing reachable
        from it is left unexpanded). *report* is called with the expansions and
        positions so far every :data:`REPORT_EVERY` expansions."""
        todo = deque(queue)
        kinds = self.kinds
        done = 0
        while todo:
            node = todo.popleft()
            if kinds[node] != FRONTIER:
                continue
            if (limit is not None and done >= limit) or (
                stop is not None and done % 1024 == 0 and done and stop()
            ):
                todo.appendleft(node)
                break
            todo.extend(self.expand(node))
            done += 1
            if report is not None and done % REPORT_EVERY == 0:
                report(done, len(self.keys))
        return not any(kinds[v] == FRONTIER for v in todo)

    def release(self) -> None:
        """Drop the edges' columns (:meth:`graph` has copied them): expanding ends."""
        self.parent, self.child, self.sign, self.weights = (
            array("q"),
            array("q"),
            array("b"),
            array("d"),
        )

    def graph(self) -> ChanceGraph:
        """The graph expanded so far (it shares the key list and index: expanding more
        afterwards changes them under it)."""
        n = len(self.keys)
        parent = np.frombuffer(self.parent, dtype=np.int64)
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent, minlength=n), out=start[1:])
        child = np.frombuffer(self.child, dtype=np.int64).copy()
        sign = np.frombuffer(self.sign, dtype=np.int8).copy()
        weight = np.frombuffer(self.weights, dtype=np.float64).copy()
        probability, labels = self.probability, self.labels
        if not self.in_order:
            order = np.argsort(parent, kind="stable")
            child, sign, weight = child[order], sign[order], weight[order]
            at = order.tolist()
            probability = [probability[i] for i in at]
            labels = [labels[i] for i in at]
        del parent  # (a view of the array, which may grow after)
        return ChanceGraph(
            game=self.game,
            keys=self.keys,
            kind=np.array(self.kinds, dtype=np.int8),
            player=np.array(self.players, dtype=np.int8),
            dist=np.array(self.dist, dtype=np.int32),
            terminal=self.terminal,
            start=start,
            child=child,
            sign=sign,
            probability=probability,
            weight=weight,
            labels=labels,
            index=self.index,
        )


def expand_all(
    game: Game,
    root: PositionKey | None = None,
    max_nodes: int | None = None,
    report: Callable[[int, int], None] | None = None,
) -> ChanceGraph:
    """Every position reachable from *root* (default: the game's initial position), breadth
    first, with each position's kind, player, moves and probabilities.

    :raises ContractError: if the game breaks the chance contract (no player, bad
        probabilities, a terminal value outside the declared range).
    :raises SolveError: if a non-terminal position has no moves, or the graph outgrows
        *max_nodes*.

    *report* is called with the positions expanded and found so far, every
    :data:`REPORT_EVERY` expansions.
    """
    start_key = game.initial() if root is None else root
    if game.facts.uses_symmetry:
        start_key = game.canonical(start_key)
    builder = _Builder(game, start_key, max_nodes)
    builder.grow([0], report=report)
    graph = builder.graph()
    builder.release()
    return graph


def strongly_connected(
    graph: ChanceGraph, finish: list[int] | None = None
) -> tuple[npt.NDArray[np.int64], int]:
    """Each node's strongly connected component, numbered children first: every edge
    goes to a component with a number no larger than its parent's (Tarjan's algorithm,
    without recursion). Returns the component of each node and the count; *finish*, if
    given (*n* entries), receives the order in which the depth-first search finished
    the nodes (an edge to a node finished later goes back to an ancestor)."""
    n = len(graph)
    finished = 0
    start = graph.start.tolist()
    child = graph.child.tolist()
    order = [-1] * n
    low = [0] * n
    comp = [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if order[root] >= 0:
            continue
        work = [(root, start[root])]
        order[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, e = work[-1]
            end = start[v + 1]
            while e < end:
                w = child[e]
                e += 1
                if order[w] < 0:
                    work[-1] = (v, e)
                    order[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, start[w]))
                    break
                if on_stack[w] and order[w] < low[v]:
                    low[v] = order[w]
            else:
                work.pop()
                if finish is not None:
                    finish[v] = finished
                    finished += 1
                if work:
                    u = work[-1][0]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == order[v]:
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        comp[w] = ncomp
                        if w == v:
                            break
                    ncomp += 1
    return np.array(comp, dtype=np.int64), ncomp


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
    """Each node's layer (:func:`_layers`) among the nodes its level iterated, -1 for
    nodes solved without iterating; ``None`` if not known."""

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


def _layers(
    nodes: npt.NDArray[np.int64], start: list[int], child: list[int]
) -> list[npt.NDArray[np.int64]]:
    """*nodes* (sorted) in layers for Gauss-Seidel sweeps: an edge to a node of a higher
    id (discovery order: mostly a move forward) puts its parent in a later layer than its
    child, so most children are updated before their parents within one sweep; edges
    back to lower ids (the moves that close cycles) use the previous sweep's values."""
    inside = set(nodes.tolist())
    layer: dict[int, int] = {}
    for v in reversed(nodes.tolist()):
        top = 0
        for e in range(start[v], start[v + 1]):
            c = child[e]
            if c > v and c in inside:
                d = layer[c] + 1
                if d > top:
                    top = d
        layer[v] = top
    count = max(layer.values()) + 1
    groups: list[list[int]] = [[] for _ in range(count)]
    for v in nodes.tolist():
        groups[layer[v]].append(v)
    return [np.array(g, dtype=np.int64) for g in groups]


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

    Gauss-Seidel by layers (:func:`_layers`), each layer vectorised. Lows only rise and
    highs only fall, each step rounded outwards, so every value written is a sound bound.
    Stops when every node's bounds are within *tolerance*, when a sweep changes nothing,
    or after *max_sweeps*. Each node's layer is written into *node_layer* if given."""
    nodes = np.array(sorted(nodes_list), dtype=np.int64)
    layers = _layers(nodes, start, child)
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


def settled(solution: ChanceSolution) -> npt.NDArray[np.bool_]:
    """The positions whose value is known: exact bounds that meet, or float bounds that
    meet (rounded outwards, so nothing more can be learnt about them in floats)."""
    known = np.array(
        [
            a is not None and a == b
            for a, b in zip(solution.exact_low, solution.exact_high, strict=True)
        ],
        dtype=np.bool_,
    )
    return known | (solution.high <= solution.low)


def _edge_parents(graph: ChanceGraph) -> npt.NDArray[np.int64]:
    return np.repeat(np.arange(len(graph), dtype=np.int64), np.diff(graph.start))


def _spans(start: npt.NDArray[np.int64], nodes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The indices ``start[v]:start[v + 1]`` of each of *nodes*, one after the other (the
    edge indices of *nodes*, for a graph's ``start``)."""
    first = start[nodes]
    counts = start[nodes + 1] - first
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    spans: npt.NDArray[np.int64] = np.repeat(first, counts) - offsets
    return spans + np.arange(int(counts.sum()), dtype=np.int64)


def _walked(solution: ChanceSolution, known: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The moves :func:`relevant_frontier` walks (by edge index): every outcome of a chance
    node and every move of a decision node whose bound from above, seen from the mover,
    is above the node's lower bound, into a position whose value is not *known*."""
    g = solution.graph
    parent = _edge_parents(g)
    kid = g.child
    v_high = np.where(g.sign > 0, solution.high[kid], -solution.low[kid])
    walk: npt.NDArray[np.bool_] = (g.kind[parent] == CHANCE) | (v_high > solution.low[parent])
    return walk & ~known[kid]


def relevant_frontier(
    solution: ChanceSolution, known: npt.NDArray[np.bool_] | None = None
) -> npt.NDArray[np.int64]:
    """The unexpanded positions that can still change the root's bounds, ascending.

    They are found walking from the root through positions whose value is not known
    (:func:`settled`): at a chance node every outcome, at a decision node every move
    whose bound from above (seen from the mover) is above the node's lower bound. A move
    at or below it can neither raise the node's ``low`` (its own ``low`` is no higher)
    nor set the node's ``high`` (the move giving the ``low`` has a ``high`` at least as
    high, and if that one equals the ``low`` the node's value is known). Since every
    bound is sound, this holds in the complete graph too: the root's bounds with the
    positions not walked to left unexpanded are those of the complete graph."""
    g = solution.graph
    known = settled(solution) if known is None else known
    if known[0] or len(g) == 0:
        return np.zeros(0, dtype=np.int64)
    kid = g.child
    walk = _walked(solution, known)
    seen = np.zeros(len(g), dtype=np.bool_)
    seen[0] = True
    active = np.zeros(1, dtype=np.int64)
    found: list[npt.NDArray[np.int64]] = []
    while active.size:
        kinds = g.kind[active]
        found.append(active[kinds == FRONTIER])
        inner = active[(kinds == DECISION) | (kinds == CHANCE)]
        edges = _spans(g.start, inner)
        kids = np.unique(kid[edges[walk[edges]]])
        kids = kids[~seen[kids]]
        seen[kids] = True
        active = kids
    return np.sort(np.concatenate(found))


def final_nodes(
    solution: ChanceSolution, known: npt.NDArray[np.bool_] | None = None
) -> npt.NDArray[np.bool_]:
    """The positions whose bounds no further expansion changes: those whose value is
    known (:func:`settled`) and those from which :func:`relevant_frontier`'s walk,
    started there, reaches no unexpanded position (for the reason it gives). A complete
    graph's are all final."""
    g = solution.graph
    known = settled(solution) if known is None else known
    frontier = np.flatnonzero(g.kind == FRONTIER)
    if frontier.size == 0:
        return np.ones(len(g), dtype=np.bool_)
    # Walk the walked moves backwards from the unexpanded positions.
    walked = np.flatnonzero(_walked(solution, known))
    parent = _edge_parents(g)[walked]
    kid = g.child[walked]
    order = np.argsort(kid, kind="stable")
    into = np.zeros(len(g) + 1, dtype=np.int64)
    np.cumsum(np.bincount(kid, minlength=len(g)), out=into[1:])
    parents_by_child = parent[order]
    reaches = np.zeros(len(g), dtype=np.bool_)
    reaches[frontier] = True
    active = frontier
    while active.size:
        ups = np.unique(parents_by_child[_spans(into, active)])
        ups = ups[~reaches[ups] & ~known[ups]]
        reaches[ups] = True
        active = ups
    return known | ~reaches


@dataclass
class ChanceColumns:
    """What a store writes for a game of chance besides the graph's own columns, by node
    id and by edge index (the ``chance_nodes`` and ``chance_edges`` tables)."""

    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    low_exact: list[str | None]
    high_exact: list[str | None]
    player: npt.NDArray[np.int8]
    chance: npt.NDArray[np.bool_]
    probability: list[str | None]
    keeps_turn: npt.NDArray[np.bool_]
    plies: list[float | None] = field(default_factory=list)
    """The expected plies to the end under the optimal strategy (``None``: infinite;
    :mod:`solver.chance_plies`)."""
    plies_exact: list[str | None] = field(default_factory=list)
    """The same as an exact fraction where it is known."""
    edges_from: int = 0
    """The graph's edge index of ``probability[0]`` and ``keeps_turn[0]``: they cover the
    edges from there on (those a store has not written yet)."""
    changed: Sequence[int] = ()
    """Stored positions whose rows a store must rewrite (bounds, kind, plies), ascending;
    the node columns above cover every position."""


def _json_number(x: Fraction | float | None) -> float | None:
    """An expectation as a JSON number (``None`` stays ``None``)."""
    return None if x is None else float(x)


def fraction_text(q: Fraction | None) -> str | None:
    """An exact value as stored: ``'3/16'``, ``'-1'`` (``None`` stays ``None``).

    >>> fraction_text(Fraction(3, 16)), fraction_text(Fraction(-1)), fraction_text(None)
    ('3/16', '-1', None)
    """
    return None if q is None else str(q)


def to_graph(
    solution: ChanceSolution,
    graph: Graph | None = None,
    plies: ExpectedPlies | None = None,
    final: npt.NDArray[np.bool_] | None = None,
) -> Graph:
    """The solved chance graph as a :class:`~solver.graph.Graph` (what stores write).

    *graph* (default: a new one) may hold what an earlier run stored of the solution's
    graph: its first positions, with the same ids and, for those it has expanded, the
    same moves. Its positions whose flags were not final are updated (marked changed, and
    listed in :attr:`ChanceColumns.changed`), the new positions and the moves of the
    positions expanded since are appended. Each position gets its state, its bounds
    rounded outwards to integers, both flags as *final* says (default
    :func:`final_nodes`), depths unknown (0 at the end of the game), and the chance
    columns (floats, exact fractions, players, probabilities, the expected plies *plies*,
    computed here if not given) go to :attr:`Graph.chance`."""
    from solver.chance_plies import expected_plies  # it imports this module

    if plies is None:
        plies = expected_plies(solution)
    if final is None:
        final = final_nodes(solution)
    g = solution.graph
    n = len(g)
    graph = Graph() if graph is None else graph
    old = graph.num_nodes
    kind = g.kind
    columns: dict[str, npt.NDArray[Any]] = {
        "state": np.select(
            [kind == TERMINAL, kind == FRONTIER],
            [int(NodeState.TERMINAL), int(NodeState.UNEXPANDED)],
            int(NodeState.EXPANDED),
        ).astype(np.uint8),
        "low": np.floor(solution.low).astype(np.int64),
        "high": np.ceil(solution.high).astype(np.int64),
        "low_final": final.astype(np.uint8),
        "high_final": final.astype(np.uint8),
        "depth_low": np.where(kind == TERMINAL, 0, DEPTH_INF).astype(np.int32),
        "depth_high": np.where(kind == TERMINAL, 0, DEPTH_INF).astype(np.int32),
        "dist": g.dist.astype(np.int32),
    }
    fresh = np.zeros(n, dtype=np.bool_)  # positions whose moves are not in *graph*
    fresh[old:] = True
    changed = np.zeros(0, dtype=np.int64)
    if old:
        state = np.frombuffer(graph.state, dtype=np.uint8)
        fresh[:old] = state == int(NodeState.UNEXPANDED)
        done = np.frombuffer(graph.low_final, dtype=np.uint8) & np.frombuffer(
            graph.high_final, dtype=np.uint8
        )
        changed = np.flatnonzero(done == 0)
        del state, done
        for name, values in columns.items():
            if name != "dist":
                target = np.frombuffer(getattr(graph, name), dtype=values.dtype)
                target[changed] = values[changed]
                del target
        graph.dirty.update(changed.tolist())
    if n > old:
        graph.append_keys(g.keys[old:])
        graph.append_nodes(n - old, {name: v[old:].tobytes() for name, v in columns.items()})
    edges_from = graph.num_edges
    every = not old  # every edge is new (no copies)
    if every:
        new_edges = np.zeros(0, dtype=np.int64)  # (all of them: not used)
        at: list[int] = []
        parents = np.repeat(np.arange(n, dtype=np.int32), np.diff(g.start))
        graph.append_edges(parents, g.child.astype(np.int32), g.labels)
        del parents
    else:
        parent = _edge_parents(g)
        new_edges = np.flatnonzero(fresh[parent])
        at = new_edges.tolist()
        graph.append_edges(
            parent[new_edges].astype(np.int32),
            g.child[new_edges].astype(np.int32),
            [g.labels[e] for e in at],
        )
        del parent
    graph.chance = ChanceColumns(
        low=solution.low,
        high=solution.high,
        low_exact=[fraction_text(q) for q in solution.exact_low],
        high_exact=[fraction_text(q) for q in solution.exact_high],
        player=g.player,
        chance=kind == CHANCE,
        probability=[fraction_text(g.probability[e]) for e in (range(g.edges) if every else at)],
        keeps_turn=g.sign > 0 if every else g.sign[new_edges] > 0,
        plies=[None if math.isinf(x) else x for x in plies.plies.tolist()],
        plies_exact=[fraction_text(q) for q in plies.exact],
        edges_from=edges_from,
        changed=changed.tolist(),
    )
    return graph


def _seeded(game: Game, root_key: PositionKey, graph: Graph) -> _Builder:
    """A builder holding what *graph* (a store's) holds of the variant, with the same ids:
    its expanded positions are expanded again, which must give the stored moves.

    :raises SolveError: if they do not (the game's rules changed without a new rules
        version), or if the stored graph has another root.
    """
    builder = _Builder(game, root_key)
    n = graph.num_nodes
    if not n:
        return builder
    keys = list(graph.keys)
    if keys[0] != root_key:
        raise SolveError(
            f"{game.name}: this variant is stored from the position {game.format(keys[0])!r};"
            f" a game of chance is solved from one root per variant, not also from "
            f"{game.format(root_key)!r} (use another database)"
        )
    for key, dist in zip(keys[1:], graph.dist.tolist()[1:], strict=True):
        builder.add(key, dist)
    graph.require_edges()
    state = graph.state
    for v in range(n):
        if state[v] == NodeState.UNEXPANDED:
            continue
        before = len(builder.child)
        new = builder.expand(v)
        ok = not new and (builder.kinds[v] == TERMINAL) == (state[v] == NodeState.TERMINAL)
        if ok and state[v] == NodeState.EXPANDED:
            ok = builder.child[before:].tolist() == graph.child_ids(v)
        if not ok:
            raise SolveError(
                f"{game.name}: the stored graph is not the one the rules give: the moves of "
                f"{game.format(keys[v])!r} differ (did the game change without a new "
                "rules_version?)"
            )
    builder.expanded = 0
    return builder


ROUGH_SWEEPS = 16
"""Most sweeps of value iteration per level of components in the solves between a
partial solve's batches. They stop early, so their bounds are looser (still sound): the
positions they find relevant include those the tight bounds would, and once none is
left the graph is solved in full and looked at again. On Pig to 40 the sweeps of
solves to the end took most of a partial solve's time."""

FIRST_BATCH = 1024
"""Expansions between the first two solves of a partial chance solve's graph; each batch
after is as large as everything expanded before it (so the solves cost about twice the
last)."""


def solve_chance(
    game: Game,
    root_key: PositionKey,
    store: Store,
    progress: ProgressCallback | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    full: bool = True,
    limits: Limits | None = None,
) -> SolveResult:
    """Solve a game of chance from *root_key* into *store* (:func:`solve_graph` on the
    graph in memory) and commit it as one batch at the end of the run.

    A **full** solve expands everything reachable. A **partial** one expands in batches,
    solving the graph after each, only the unexpanded positions that can still change the
    root's bounds (:func:`relevant_frontier`), until none is left: the root's bounds are
    then those of the full graph, with less of it expanded where some moves are provably
    worse than others. Flags are final where nothing left unexpanded can change the
    bounds (:func:`final_nodes`).

    A stored graph (an earlier run's, partial or stopped by a budget) is continued: its
    expanded positions are expanded again (the same moves, else an error), the rest goes
    on from its unexpanded ones, and the commit appends the new positions and rewrites
    the ones that were not final. A partial run expands them again replaying its
    schedule of batches from the root, and so continues exactly where the stopped run
    stopped, within the batch it cut short (:mod:`solver.chance_partial`): stopped and
    continued, a partial solve ends as the uninterrupted one. A budget of *limits*
    (expansions, seconds) or its request to stop (the CLI's first Ctrl-C) ends the
    expansion early; what was expanded is then solved and committed (the run's status
    ``budget`` or ``stopped``, also when a partial run's root is decided before the
    uninterrupted solve would end), for the next run to continue. An exception (a second
    Ctrl-C) loses the run's expansions.

    Under the memory limit of *limits* (bytes of RSS) the expansion stops as soon as the
    solve's projected peak (:data:`PEAK_FACTOR` times what the graph has taken so far)
    would pass it, and every later step checks the RSS itself: the solve then ends with
    an error, having written nothing, instead of running past the limit.

    :raises SolveError: if the stored graph is not the one the rules give, or if the
        memory limit is reached.
    """
    # (imported here: both modules import this one)
    from solver.chance_partial import Expansion, Schedule, solve_partial
    from solver.chance_plies import expected_plies

    started = time.monotonic()
    limits = Limits() if limits is None else limits
    memory_limit = limits.memory_limit
    budget = Limits(limits.max_expansions, limits.max_seconds, limits.stop)
    deadline = budget.deadline(started)
    run = RunOptions(root_key, full, limits.max_expansions, limits.max_seconds)
    graph = store.open(game, run)
    peak = 0
    run_of = Expansion()  # the builder, and how many of its expansions are replayed

    def snapshot(
        status: RunStatus,
        nodes: int,
        edges: int,
        added: int,
        added_edges: int,
        low: int = NEG_INF,
        high: int = POS_INF,
        low_final: bool = False,
        high_final: bool = False,
        phase: str = "expanding",
        frontier: int = 0,
    ) -> Progress:
        nonlocal peak
        used = rss()
        peak = max(peak, used)
        return Progress(
            status=status,
            expansions=max(0, run_of.done),
            nodes=nodes,
            edges=edges,
            nodes_added=added,
            edges_added=added_edges,
            frontier=frontier,
            root_low=low,
            root_high=high,
            root_low_final=low_final,
            root_high_final=high_final,
            seconds=time.monotonic() - started,
            rss=used,
            resident_nodes=nodes,
            phase=phase,
        )

    stored = graph.num_nodes
    stored_edges = graph.total_edges
    before = rss()

    def check(step: str, found: int, factor: float = 1.0, reserve: int = 0) -> None:
        """End the solve if *step*'s projected peak (*factor* times the growth so far,
        plus *reserve*) reaches the memory limit, with *found* positions in the graph."""
        if memory_limit is None:
            return
        used = rss()
        need = before + int((used - before) * factor) + reserve
        if need + headroom(memory_limit) >= memory_limit:
            raise SolveError(
                f"{game.name}: a game of chance is solved with its whole graph in memory, "
                f"and {step} at {found:,} positions it would need about {format_size(need)}"
                f" or more (now {format_size(used)}), past the {format_size(memory_limit)} "
                "--memory-limit: give a larger one (nothing was written)"
            )

    def expanding(done: int, found: int) -> None:
        check("expanding", found, PEAK_FACTOR)
        if progress is not None:
            phase = f"expanding: {max(0, run_of.done):,} expanded"
            if run_of.replaying:
                phase = f"replaying the stored solve's batches: {found:,} positions"
            edges = 0 if run_of.builder is None else len(run_of.builder.child)
            progress(snapshot("running", found, edges, 0, 0, phase=phase))

    ended_by: EndedBy | None = None

    def stop() -> bool:
        nonlocal ended_by
        ended_by = budget.why(run_of.done, deadline)
        return ended_by is not None

    def between(solution: ChanceSolution, todo_nodes: npt.NDArray[np.int64]) -> None:
        if progress is None:
            return
        lo, hi = math.floor(solution.low[0]), math.ceil(solution.high[0])
        phase = (
            f"partial: {max(0, run_of.done):,} expanded, root "
            f"[{solution.low[0]:.6g}, {solution.high[0]:.6g}], "
            f"{todo_nodes.size:,} positions to expand next"
        )
        if run_of.replaying:
            phase = f"replaying the stored solve's batches: {len(solution.low):,} positions"
        args = (len(solution.low), solution.graph.edges, 0, 0, lo, hi)
        progress(snapshot("running", *args, phase=phase, frontier=todo_nodes.size))

    try:
        if progress is not None:
            progress(snapshot("running", stored, stored_edges, 0, 0, phase="expanding"))
        known: npt.NDArray[np.bool_] | None = None  # positions whose value is known
        if full:
            builder = run_of.builder = _seeded(game, root_key, graph)
            todo = [v for v, k in enumerate(builder.kinds) if k == FRONTIER]
            if not stop():
                builder.grow(todo, budget.max_expansions, stop, expanding)
                stop()
            chance_graph = builder.graph()
            builder.release()
            check("expanding", len(chance_graph), PEAK_FACTOR)
            if progress is not None:
                progress(
                    snapshot(
                        "running", len(chance_graph), chance_graph.edges, 0, 0, phase="solving"
                    )
                )
            solution = solve_graph(chance_graph, tolerance=tolerance)
            finished = True  # (complete where the root is final)
        else:
            schedule = Schedule(
                tolerance, FIRST_BATCH, ROUGH_SWEEPS, budget, stop, expanding, check, between
            )
            partial = solve_partial(game, root_key, graph, schedule, run_of)
            chance_graph, solution = partial.graph, partial.solution
            known, finished = partial.known, partial.finished
            if not finished and ended_by is None:
                stop()  # (a batch cut short by the expansion budget, which grow checks)
            partial.builder.release()
            del partial
        size = len(chance_graph)
        grown = rss() - before  # what the expansion took
        plies = expected_plies(solution)
        check("solving", size)
        final = final_nodes(solution, known)
        solved = to_graph(solution, graph, plies, final)
        check("writing", size, reserve=int(COMMIT_SHARE * grown))  # the commit's rows
        low = int(solved.low[0])
        high = int(solved.high[0])
        root_final = bool(final[0])
        status: RunStatus = (
            "complete"
            if root_final and finished
            else "stopped"
            if ended_by == "request"
            else "budget"
        )
        frontier = int(np.count_nonzero(chance_graph.kind == FRONTIER))
        added, added_edges = size - stored, solved.num_edges - stored_edges
        result = snapshot(
            status,
            size,
            solved.total_edges,
            added,
            added_edges,
            low,
            high,
            root_final,
            root_final,
            frontier=frontier,
        )
        if added or solved.chance.changed:
            if progress is not None:
                phase = f"committing {added:,} nodes, {len(solved.chance.changed):,} updated"
                progress(replace(result, status="running", phase=phase))
            solved.settled = True
            store.commit(Batch.of(solved), result)
    except BaseException as exc:
        failed: RunStatus = "stopped" if isinstance(exc, KeyboardInterrupt) else "failed"
        store.close(snapshot(failed, stored, stored_edges, 0, 0))
        raise
    store.close(result)
    if progress is not None:
        progress(result)
    lo_q, hi_q = solution.bounds(0)
    value = solution.value(0)
    exact = solution.exact(0)
    return SolveResult(
        game=game.name,
        params=dict(game.params),
        root=root_key,
        root_text=game.format(root_key),
        low=float(solution.low[0]),
        high=float(solution.high[0]),
        low_final=root_final,
        high_final=root_final,
        depth_low=None,
        depth_high=None,
        expansions=result.expansions,
        nodes=result.nodes,
        edges=result.edges,
        status=status,
        seconds=time.monotonic() - started,
        full=full,
        peak_rss=peak,
        ended_by=None if status == "complete" else ended_by,
        extra={
            "chance": {
                "low_exact": fraction_text(lo_q) if isinstance(lo_q, Fraction) else None,
                "high_exact": fraction_text(hi_q) if isinstance(hi_q, Fraction) else None,
                "exact": exact,
                "value": float(value),
                "tolerance": tolerance,
                "wide": solution.wide,
                "components": solution.components,
                "levels": solution.levels,
                "sweeps": solution.sweeps,
                "player": int(chance_graph.player[0]),
                "kind": KIND_NAMES[int(chance_graph.kind[0])],
                "best_move": solution.best_move(0),
                "plies": _json_number(plies.value(0)),
                "plies_exact": fraction_text(plies.exact[0]),
                "unexpanded": frontier,
            }
        },
    )


__all__ = [
    "CHANCE",
    "DECISION",
    "FRONTIER",
    "DEFAULT_TOLERANCE",
    "TERMINAL",
    "ChanceColumns",
    "ChanceGraph",
    "ChanceSolution",
    "expand_all",
    "final_nodes",
    "relevant_frontier",
    "settled",
    "fraction_text",
    "solve_chance",
    "to_graph",
    "round_down",
    "round_up",
    "solve_graph",
    "strongly_connected",
]
