"""Optimal play from a stored position, as the models of :mod:`api.schemas`: the
principal line realising a bound (DESIGN §4, :func:`describe_line`) and a game of
chance's optimal strategy as a tree (DESIGN §10, :func:`describe_strategy`).

Moves are generated from the positions as reached (:func:`api.views.moves_of`), so labels
and texts follow the asked position's orientation even when the game stores symmetric
representatives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from api.schemas import LineStep, PositionFields, Strategy, StrategyMove, StrategyNode
from api.views import (
    UNKNOWN,
    MoveOf,
    chance_fields,
    child_of,
    moves_of,
    position_fields,
    stored_bounds,
)
from db.records import PositionRecord
from db.repository import Reader, probe_position, stored_positions
from solver.errors import InvalidParameterError
from solver.game import ChanceRules, Game, MoveLabel, PositionKey
from solver.strategy import BOUNDS, Bound, Child, principal_line

LineEnd = Literal["terminal", "unexpanded", "max_plies", "repetition"]
"""Why a principal line ends (see :class:`solver.strategy.Line`)."""


@dataclass(frozen=True)
class _At:
    """A node of a principal line: the position as reached (for move labels and text),
    compared by its stored key (so symmetric transpositions count as repetitions)."""

    stored: PositionKey
    key: PositionKey = field(compare=False)


@dataclass(frozen=True)
class LineView:
    """A principal line: the bound it realises, the start position's fields, the steps
    and why it ended (the HTTP answer, :class:`api.schemas.Line`, adds the variant and
    the limit)."""

    bound: Bound
    start: PositionFields
    steps: list[LineStep]
    end: LineEnd


class _LineGraph:
    """The stored graph a principal line walks, read as the line goes (each node's
    children in one query)."""

    def __init__(self, session: Reader, game: Game, start: PositionRecord) -> None:
        self.session = session
        self.game = game
        self.variant_id = start.variant_id
        self.records: dict[PositionKey, PositionRecord | None] = {start.key: start}

    def bounds(self, node: _At) -> tuple[int, int]:
        return stored_bounds(self.records[node.stored])

    def state(self, node: _At) -> str:
        rec = self.records[node.stored]
        return UNKNOWN if rec is None else rec.state

    def children(self, node: _At) -> list[Child[_At]]:
        moves = moves_of(self.game, node.key)
        missing = {stored for _, _, stored in moves if stored not in self.records}
        if missing:
            found = stored_positions(self.session, self.variant_id, missing, game=self.game)
            for stored in missing:
                self.records[stored] = found.get(stored)
        return [
            child_of(order, move, _At(stored, child), self.records[stored])
            for order, (move, child, stored) in enumerate(moves)
        ]


def describe_line(
    session: Reader, game: Game, key: PositionKey, bound: str, *, max_plies: int | None = None
) -> LineView:
    """The principal line from *key* realising its ``value``, ``low`` or ``high`` *bound*
    (:func:`solver.strategy.principal_line`):
    the start position's fields, the steps (each with its move, the bound its mover
    realises and the reached position's fields) and why the line ended.

    :raises PositionNotFoundError: if the start position (or the variant) is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    :raises ValueError: if *bound* is not one of :data:`solver.strategy.BOUNDS`.
    """
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {', '.join(BOUNDS)}, not {bound!r}")
    if game.facts.chance:
        raise InvalidParameterError(
            f"{game.name} has chance nodes: its optimal play is a strategy (a best move "
            f"for every outcome), not a line: GET /api/games/{game.name}/strategy"
        )
    start = probe_position(session, game, key)
    graph = _LineGraph(session, game, start)
    line = principal_line(
        _At(start.key, key),
        bound,
        bounds=graph.bounds,
        state=graph.state,
        children=graph.children,
        max_plies=max_plies,
        repetition=game.repetition_value,
    )
    first = PositionFields(position=game.format(key), **position_fields(game, start))
    steps = [
        LineStep(
            ply=ply,
            move=step.move,
            bound=step.bound,
            position=game.format(step.node.key),
            **position_fields(game, graph.records[step.node.stored]),
        )
        for ply, step in enumerate(line.steps, start=1)
    ]
    return LineView(bound, first, steps, cast(LineEnd, line.end))


Chosen = tuple[MoveLabel, str | None, PositionKey, PositionKey]
"""A move of a strategy: its label, its probability (chance nodes), the child and the
child as stored."""


class _StrategyTree:
    """A strategy tree as it grows, breadth first, up to *max_nodes* positions."""

    def __init__(
        self, session: Reader, game: Game, key: PositionKey, start: PositionRecord
    ) -> None:
        self.session = session
        self.game = game
        self.variant_id = start.variant_id
        self.records: dict[PositionKey, PositionRecord | None] = {start.key: start}
        self.ids: dict[PositionKey, int] = {start.key: 0}
        self.nodes: list[StrategyNode] = [_strategy_node(game, 0, key, start)]
        self.full = False
        """The node limit is reached: every node still to expand is cut."""

    def grow(
        self, wave: list[tuple[int, PositionKey]], max_nodes: int
    ) -> list[tuple[int, PositionKey]]:
        """Give the nodes of *wave* their children; the wave of new nodes."""
        moves = {i: moves_of(self.game, k) for i, k in wave if self.nodes[i].kind != "terminal"}
        self._read({s for ms in moves.values() for _, _, s in ms})
        following: list[tuple[int, PositionKey]] = []
        for i, k in wave:
            if i not in moves:
                continue
            chosen = _strategy_moves(self.game, k, moves[i], self.records)
            if chosen is None:  # a child is not stored
                self.nodes[i].cut = True
                continue
            new = {s for _, _, _, s in chosen if s not in self.ids}
            if self.full or len(self.nodes) + len(new) > max_nodes:
                self.full = True
                self.nodes[i].cut = True
                continue
            following.extend(self._attach(self.nodes[i], chosen))
        return following

    def _read(self, keys: set[PositionKey]) -> None:
        """Read the records of *keys* not read yet."""
        missing = keys - self.records.keys()
        if missing:
            found = stored_positions(self.session, self.variant_id, missing, chance=True)
            self.records.update((s, found.get(s)) for s in missing)

    def _attach(self, node: StrategyNode, chosen: list[Chosen]) -> list[tuple[int, PositionKey]]:
        """Give *node* the *chosen* moves as children; the nodes new to the tree."""
        new = []
        for label, probability, child, stored in chosen:
            ref = stored in self.ids
            if not ref:
                self.ids[stored] = len(self.nodes)
                rec = self.records[stored]
                assert rec is not None  # _strategy_moves found every child
                self.nodes.append(_strategy_node(self.game, len(self.nodes), child, rec))
                new.append((self.ids[stored], child))
            node.children.append(
                StrategyMove(move=label, probability=probability, node=self.ids[stored], ref=ref)
            )
        return new


def describe_strategy(session: Reader, game: Game, key: PositionKey, *, max_nodes: int) -> Strategy:
    """The optimal strategy of a game of chance from *key* (``docs/design.md`` §10), as
    a tree of at most *max_nodes* positions, breadth first: each node with its position,
    its chance fields (kind, player, bounds, expected plies) and its children: a decision
    node's best move (as its position answer ranks moves: by the mover's ``low``, then
    ``high``, then the game's order), a chance node's every outcome with its probability.
    A position already in the tree is not repeated: the move refers to its node
    (``ref``). A node whose children would pass *max_nodes*, and every node after it, is
    ``cut`` (its children are left out), as is one whose children are not stored.

    :raises InvalidParameterError: if the game has no chance nodes.
    :raises PositionNotFoundError: if the position (or the variant) is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    if not game.facts.chance:
        raise InvalidParameterError(
            f"{game.name} has no chance nodes: its optimal play is a line "
            f"(GET /api/games/{game.name}/line), not a strategy"
        )
    start = probe_position(session, game, key)
    tree = _StrategyTree(session, game, key, start)
    wave = [(0, key)]
    while wave:
        wave = tree.grow(wave, max_nodes)
    return Strategy(
        game=game.name,
        params=dict(game.params),
        position=game.format(key),
        max_nodes=max_nodes,
        nodes=tree.nodes,
        cut=any(n.cut for n in tree.nodes),
    )


def _strategy_node(game: Game, node_id: int, key: PositionKey, rec: PositionRecord) -> StrategyNode:
    """A strategy tree's node, without its children yet."""
    chance = chance_fields(game, key, rec)
    assert chance is not None  # the records of a game of chance have chance values
    return StrategyNode(
        id=node_id, position=game.format(key), **chance.model_dump(), children=[], cut=False
    )


def _strategy_moves(
    game: Game,
    key: PositionKey,
    moves: Sequence[MoveOf],
    records: Mapping[PositionKey, PositionRecord | None],
) -> list[Chosen] | None:
    """The strategy's moves from *key*: a chance node's every outcome, a decision node's
    best move; ``None`` if a child is not stored (or has no chance values)."""
    odds = cast(ChanceRules, game).probabilities(key)
    if odds is not None:
        out: list[Chosen] = []
        for (label, child, stored), p in zip(moves, odds, strict=True):
            if records.get(stored) is None:
                return None
            out.append((label, str(p), child, stored))
        return out
    player = game.player_to_move(key)
    ranked = []
    for order, (label, child, stored) in enumerate(moves):
        rec = records.get(stored)
        if rec is None or rec.chance is None:
            return None
        c = rec.chance
        keeps = game.player_to_move(child) == player
        low, high = (c.low, c.high) if keeps else (-c.high, -c.low)
        chosen: Chosen = (label, None, child, stored)
        ranked.append(((-low, -high, order), chosen))
    return [min(ranked, key=lambda item: item[0])[1]]


__all__ = ["LineEnd", "LineView", "describe_line", "describe_strategy"]
