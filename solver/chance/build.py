"""Expanding a game of chance into a :class:`~solver.chance.graph.ChanceGraph`: the
positions in discovery order, each expanded at most once, checked against the chance
contract (whose every position is, probabilities that are positive fractions summing to
1, terminal values within the declared range).

:class:`Builder` grows the graph breadth first from its unexpanded positions (all of it,
:func:`expand_all`, or in a partial solve's batches); :func:`seeded_builder` starts one from what
a store holds of the variant, expanding the stored positions again.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import cast

import numpy as np

from solver.chance.graph import (
    CHANCE,
    DECISION,
    FRONTIER,
    TERMINAL,
    ChanceGraph,
    value_range_of,
)
from solver.errors import ContractError, SolveError
from solver.game import ChanceRules, Game, MoveLabel, PositionKey
from solver.graph import Graph, NodeState

PEAK_FACTOR = 3.0
"""A chance solve's peak RSS growth over its expansion's: solving, the expected plies,
the rows and the commit come on top of the graph (Pig to 60: 2.9 times)."""


def _player(game: Game, key: PositionKey) -> int:
    p = game.player_to_move(key)
    if p not in (0, 1):
        raise ContractError(
            f"{game.name}: player_to_move({game.format(key)!r}) is {p!r}; a game with "
            "chance nodes must say whose every position is (0 or 1)"
        )
    return int(p)


Checked = dict[int, tuple[object, list[Fraction], list[float]]]
"""Probability sequences checked, by identity: the sequence, its fractions, their floats."""


def _probabilities(
    game: Game, key: PositionKey, moves: int, seen: Checked
) -> tuple[list[Fraction], list[float]] | None:
    """The probabilities of *key*'s outcomes, checked, and the nearest float of each.
    *seen* remembers the sequences already checked by identity (games usually return
    one shared tuple per kind of throw), which saves most of the checking."""
    raw = cast(ChanceRules, game).probabilities(key)
    if raw is None:
        return None
    known = seen.get(id(raw))
    if known is not None and known[0] is raw and len(known[1]) == moves:
        return known[1], known[2]
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
    floats = [float(p) for p in probs]
    seen[id(raw)] = (raw, probs, floats)
    return probs, floats


REPORT_EVERY = 1 << 16
"""Positions between two progress reports of an expansion."""


class Builder:
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
        self._checked: Checked = {}
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
        odds = _probabilities(game, key, len(moves), self._checked)
        self.kinds[node] = DECISION if odds is None else CHANCE
        if node < self._last:
            self.in_order = False
        self._last = node
        me = self.players[node]
        index, symmetric, pool, players = self.index, self.symmetric, self._pool, self.players
        dist = self.dist[node] + 1
        new: list[int] = []
        kids: list[int] = []
        signs: list[int] = []
        for _label, raw in moves:
            if symmetric:
                turn = _player(game, raw)
                ckey = game.canonical(raw)
                c = index.get(ckey)
                if c is None:
                    c = self.add(ckey, dist)
                    new.append(c)
            else:
                c = index.get(raw)
                if c is None:
                    c = self.add(raw, dist)  # (checks its player)
                    new.append(c)
                turn = players[c]
            # The sign is the raw child's: its canonical image has the same value for its
            # own player, who may be the other one (a symmetry that swaps the players).
            signs.append(1 if turn == me else -1)
            kids.append(c)
        k = len(kids)
        self.sign.extend(signs)
        self.child.extend(kids)
        self.parent.extend([node] * k)
        if odds is None:
            self.probability.extend([None] * k)
            self.weights.extend([0.0] * k)
        else:
            self.probability.extend(odds[0])
            self.weights.extend(odds[1])
        self.labels.extend([pool.setdefault(label, label) for label, _raw in moves])
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
    builder = Builder(game, start_key, max_nodes)
    builder.grow([0], report=report)
    graph = builder.graph()
    builder.release()
    return graph


def seeded_builder(game: Game, root_key: PositionKey, graph: Graph) -> Builder:
    """A builder holding what *graph* (a store's) holds of the variant, with the same ids:
    its expanded positions are expanded again, which must give the stored moves.

    :raises SolveError: if they do not (the game's rules changed without a new rules
        version), or if the stored graph has another root.
    """
    builder = Builder(game, root_key)
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


__all__ = ["PEAK_FACTOR", "REPORT_EVERY", "Builder", "expand_all", "seeded_builder"]
