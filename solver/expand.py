"""Expansion: a position's moves, from the game's rules into the graph.

Node by node (:func:`expand_node`: the partial solver's step, and the full solver's when
keys exceed 64 bits), or a batch at a time (:func:`expand_bulk`: full mode's breadth-first
sweep, with a :class:`KeyIndex` (the C key table, or sorted key arrays) instead of the
graph's dict, and no reverse edges until the retrograde pass needs them). Both give the
same node ids (new children numbered in discovery order) and the same columns; terminal
children get their exact values, final, at once. Both check the game's contract: a
position that is not terminal must have moves (:func:`no_moves`), a terminal value must
be within the declared ``value_range`` (:func:`out_of_range`: arrays of them in
:func:`terminal_values`, the nodes a batch added in :func:`check_new_terminals`), and a
game that says it is acyclic must not repeat a position (:func:`repeats`, raised by the
searches that rely on it).

In bulk, the per-node work that must call the game (its moves, canonical forms and
terminal values) stays a plain Python loop; everything else (finding which children are
new, numbering them in discovery order, appending the columns) runs as vector operations.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.errors import ContractError, SolveError
from solver.game import BatchedRules, Game, MoveLabel, PositionKey
from solver.graph import TERMINAL, UNEXPANDED, Graph, NodeId
from solver.keytable import KeyTable
from solver.ordering import Ordering
from solver.values import DEPTH_INF, NEG_INF, POS_INF


def expand_node(
    g: Graph,
    game: Game,
    nid: NodeId,
    canonical: Callable[[PositionKey], PositionKey] | None,
    ordering: Ordering | None = None,
) -> None:
    """Expand node *nid* of *g*: its moves in the game's order (or *ordering*'s),
    children canonical when the game uses symmetry (*canonical*), new ones added as
    nodes.

    :raises SolveError: if the game gives a non-terminal position no moves.
    """
    moves = moves_from(game, g.keys[nid], canonical, ordering)
    g.expand_with(nid, moves, game.terminal_value)


def moves_from(
    game: Game,
    key: PositionKey,
    canonical: Callable[[PositionKey], PositionKey] | None,
    ordering: Ordering | None,
) -> list[tuple[MoveLabel, PositionKey]]:
    """The moves of *key* to expand: in the game's order, or *ordering*'s
    (:mod:`solver.ordering`), children canonical when *canonical* is given.

    :raises SolveError: if the game gives a non-terminal position no moves.
    """
    moves = list(game.children(key))
    if not moves:
        raise no_moves(game, key)
    if ordering is not None:
        moves = ordering(moves)
    if canonical is not None:
        moves = [(m, canonical(ck)) for m, ck in moves]
    return moves


def no_moves(game: Game, key: PositionKey) -> SolveError:
    """The error for a position that is not terminal and has no moves."""
    return SolveError(
        f"{game.name}: position {game.format(key)!r} has no moves "
        "but is not terminal (the game breaks its contract)"
    )


def out_of_range(
    game: Game, key: PositionKey, value: int, value_range: tuple[int, int]
) -> ContractError:
    """The error for a terminal *value* of position *key* outside the game's declared
    *value_range*."""
    return ContractError(
        f"{game.name}: position {game.format(key)!r} has the terminal value {value}, "
        f"outside the declared value_range {value_range} (the game breaks its contract; "
        "negagraph check finds this)"
    )


def check_new_terminals(
    g: Graph, game: Game, start: NodeId, value_range: tuple[int, int] | None
) -> None:
    """The terminal values of *g*'s nodes from *start* on (those a batch of expansions
    added, resident) are within *value_range* (*game*'s declared one, ``None``: any):
    one pass over their columns, where checking each value as the game gives it would
    cost a Python call a position on the solver's hottest path (its C search).

    :raises ContractError: for the first that is not (:func:`out_of_range`).
    """
    if value_range is None or start >= g.num_nodes:
        return
    state = np.frombuffer(g.state, dtype=np.uint8)[start:]
    low = np.frombuffer(g.low, dtype=np.int64)[start:]
    outside = (state == TERMINAL) & ((low < value_range[0]) | (low > value_range[1]))
    first = [(start + at, int(low[at])) for at in np.flatnonzero(outside)[:1].tolist()]
    del state, low  # views of the graph's columns: they must be free to grow
    for nid, value in first:
        raise out_of_range(game, g.keys[nid], value, value_range)


def repeats(game: Game, key: PositionKey) -> SolveError:
    """The error for a position that repeats in a game that says it is acyclic."""
    return SolveError(
        f"{game.name}: position {game.format(key)!r} repeats, but the game declares itself acyclic"
    )


class KeyIndex:
    """Position key -> node id for 64-bit integer keys, without a dict (about 100 bytes a
    node with its int objects): the C key table (:class:`solver._native.KeyTable`, 16-32
    bytes a key, one hash probe a key), or without the C module two sorted arrays (12
    bytes a key, a sort and a copy of the arrays a call)."""

    def __init__(
        self, keys: array[int], order: np.ndarray | None = None, *, table: bool = True
    ) -> None:
        """*order*: the node ids in key order, if known; used only by the sorted arrays,
        and only if it is one (checked: in range and sorting the keys strictly, which
        makes it the permutation). *table*: ``False`` takes the sorted arrays even where
        the C table is there."""
        self.table: Any = None
        if table and KeyTable is not None:
            self.table = KeyTable.from_keys(keys)
            return
        ks = np.frombuffer(keys, dtype=np.int64) if len(keys) else np.zeros(0, np.int64)
        if order is not None and not (
            order.shape == ks.shape
            and order.dtype == np.int32
            and (not ks.size or (0 <= order.min() and order.max() < ks.size))
        ):
            order = None
        if order is not None:
            self.keys = ks[order]
            if np.any(self.keys[1:] <= self.keys[:-1]):
                order = None
        if order is None:
            order = np.argsort(ks, kind="stable")
            self.keys = ks[order]
        self.ids = order.astype(np.int32, copy=False)
        del ks

    @property
    def order(self) -> np.ndarray | None:
        """The node ids in key order, which the sorted arrays keep (and a resume file
        hands on to the next run's index); ``None`` for the C table, which is quick to
        build again."""
        return None if self.table is not None else self.ids

    def resolve(
        self, wanted: np.ndarray, next_id: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Node ids of *wanted* keys, giving unknown keys new ids from *next_id* on in
        order of first occurrence (discovery order). Returns (ids, new keys in id order,
        the position in *wanted* where each new key first occurs)."""
        if self.table is not None:
            wanted = np.ascontiguousarray(wanted, dtype=np.int64)
            ids = np.empty(wanted.size, dtype=np.int64)
            first = np.empty(wanted.size, dtype=np.int64)
            new = self.table.resolve(wanted, next_id, ids, first)
            return ids, wanted[first[:new]], first[:new]
        known = self.keys
        pos = np.searchsorted(known, wanted)
        if known.size:
            found = known[np.minimum(pos, known.size - 1)] == wanted
        else:
            found = np.zeros(wanted.size, dtype=bool)
        ids = np.empty(wanted.size, dtype=np.int64)
        ids[found] = self.ids[pos[found]]
        missing = np.flatnonzero(~found)
        if not missing.size:
            return ids, np.zeros(0, np.int64), missing
        uniq, first, inverse = np.unique(wanted[missing], return_index=True, return_inverse=True)
        rank = np.argsort(first, kind="stable")  # uniq[rank]: discovery order
        new_ids = np.empty(uniq.size, dtype=np.int32)
        new_ids[rank] = np.arange(next_id, next_id + uniq.size)
        ids[missing] = new_ids[inverse.reshape(-1)]
        at = np.searchsorted(known, uniq)
        self.keys = np.insert(known, at, uniq)
        self.ids = np.insert(self.ids, at, new_ids)
        return ids, uniq[rank], missing[first[rank]]


def key_index(g: Graph) -> KeyIndex | None:
    """A :class:`KeyIndex` over *g*'s keys, or ``None`` if they are not 64-bit ints."""
    if not isinstance(g.keys, array):
        return None
    order, g.key_order = g.key_order, None  # the index goes its own way from here
    return KeyIndex(g.keys, order)


def expand_bulk(
    g: Graph,
    game: Game,
    batch: Sequence[NodeId],
    index: KeyIndex,
    canonical: Callable[[PositionKey], PositionKey] | None,
) -> bool:
    """Expand *batch* (unexpanded nodes, ascending) as :func:`expand_node` would, node
    after node — same ids, same columns — but with vector bookkeeping, and the game's
    batched rules (:meth:`~solver.game.GameBase.children_batch` and its kin) when it has
    them. Returns ``False`` (and changes nothing) if a child's key does not fit in 64
    bits: the caller falls back to the dict.
    """
    if not isinstance(g.keys, array):
        return False
    parents = np.array(batch, dtype=np.int64)
    found = moves_of(game, np.frombuffer(g.keys, dtype=np.int64)[parents], canonical)
    if found is None:
        return False
    counts, wanted, labels = found.counts, found.keys, found.label_list()

    ids, new_keys, first_slot = index.resolve(wanted, g.num_nodes)
    del wanted
    per_child_parent = np.repeat(parents, counts)
    dist = np.frombuffer(g.dist, dtype=np.int32)
    new_dist = dist[per_child_parent[first_slot]] + 1
    del dist

    # New nodes: terminal ones exact and final at once, the rest unknown.
    terminal, exact = terminal_values(game, new_keys)
    count = int(new_keys.size)
    flags = terminal.astype(np.uint8).tobytes()
    depths = np.where(terminal, 0, DEPTH_INF).astype(np.int32).tobytes()
    g.append_keys(new_keys)
    g.append_nodes(
        count,
        {
            "state": np.where(terminal, TERMINAL, UNEXPANDED).astype(np.uint8).tobytes(),
            "low": np.where(terminal, exact, NEG_INF).tobytes(),
            "high": np.where(terminal, exact, POS_INF).tobytes(),
            "low_final": flags,
            "high_final": flags,
            "depth_low": depths,
            "depth_high": depths,
            "dist": new_dist.astype(np.int32).tobytes(),
        },
    )
    # Edges, parent by parent in move order. The parents' new state is not marked
    # changed: their stored edges say they are expanded (the loader reads it so), and the
    # solve's last commit rewrites every node.
    g.append_edges(per_child_parent.astype(np.int32), ids.astype(np.int32), labels)
    g.mark_expanded(parents)
    return True


@dataclass(frozen=True)
class Moves:
    """The moves of many positions: per parent its number of moves; the child keys
    (canonical when the variant uses symmetry); each move's label as an index into
    ``names``."""

    counts: npt.NDArray[np.int64]
    keys: npt.NDArray[np.int64]
    labels: npt.NDArray[np.int64]
    names: Sequence[MoveLabel]

    def label_list(self) -> list[MoveLabel]:
        names = self.names
        labels: list[int] = self.labels.tolist()
        return [names[i] for i in labels]


ONE_BY_ONE_CHUNK = 1 << 16
"""Positions whose moves :func:`moves_of` gathers as Python objects at a time."""


def moves_of(
    game: Game,
    keys: npt.NDArray[np.int64],
    canonical: Callable[[PositionKey], PositionKey] | None,
) -> Moves | None:
    """The moves of the positions *keys* (none of them terminal), by the game's batched
    rules when it offers them, else position by position; ``None`` if a child's key does
    not fit 64 bits.

    :raises SolveError: if a position has no moves (the contract requires a terminal
        value then)."""
    batched = game if isinstance(game, BatchedRules) else None
    found = batched.children_batch(keys) if batched is not None else None
    if batched is None or found is None:
        return _moves_one_by_one(game, keys.tolist(), canonical)
    counts = np.asarray(found.counts, dtype=np.int64)
    if counts.size and not counts.all():
        raise no_moves(game, int(keys[np.argmin(counts)]))
    wanted = np.asarray(found.keys, dtype=np.int64)
    if canonical is not None:
        canon = batched.canonical_batch(wanted)
        wanted = (
            np.fromiter(map(canonical, wanted.tolist()), dtype=np.int64, count=wanted.size)
            if canon is None
            else np.asarray(canon, dtype=np.int64)
        )
    return Moves(counts, wanted, np.asarray(found.labels, dtype=np.int64), found.label_names)


def _moves_one_by_one(
    game: Game,
    keys: list[PositionKey],
    canonical: Callable[[PositionKey], PositionKey] | None,
) -> Moves | None:
    """:func:`moves_of` by :meth:`Game.children`, position by position, in chunks of
    :data:`ONE_BY_ONE_CHUNK` positions: the Python objects of a chunk's moves are
    turned into arrays before the next chunk, so a whole chess tier (42 M moves for
    KQvKR) never lives as Python tuples at once."""
    moves_of_one = game.children
    codes: dict[MoveLabel, int] = {}
    counts = array("q")
    key_parts: list[npt.NDArray[np.int64]] = []
    label_parts: list[npt.NDArray[np.int64]] = []
    for at in range(0, len(keys), ONE_BY_ONE_CHUNK):
        pairs: list[tuple[MoveLabel, PositionKey]] = []
        extend = pairs.extend
        before = 0
        for key in keys[at : at + ONE_BY_ONE_CHUNK]:
            extend(moves_of_one(key))
            n = len(pairs)
            if n == before:
                raise no_moves(game, key)
            counts.append(n - before)
            before = n
        child_keys = [k for _, k in pairs]
        if canonical is not None:
            child_keys = list(map(canonical, child_keys))
        try:
            key_parts.append(np.array(child_keys, dtype=np.int64))
        except OverflowError:
            return None
        label_parts.append(
            np.fromiter(
                (codes.setdefault(m, len(codes)) for m, _ in pairs),
                dtype=np.int64,
                count=len(pairs),
            )
        )
        del pairs, child_keys
    wanted = np.concatenate(key_parts) if key_parts else np.zeros(0, dtype=np.int64)
    labels = np.concatenate(label_parts) if label_parts else np.zeros(0, dtype=np.int64)
    return Moves(np.frombuffer(counts, dtype=np.int64), wanted, labels, list(codes))


def terminal_values(
    game: Game, keys: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """Whether each of *keys* is terminal, and its value (0 where it is not).

    :raises ContractError: if a value is outside the game's declared ``value_range``
        (:func:`out_of_range`, for the first such key)."""
    found = game.terminal_values_batch(keys) if isinstance(game, BatchedRules) else None
    if found is not None:
        terminal = np.asarray(found[0], dtype=bool)
        exact = np.where(terminal, np.asarray(found[1], dtype=np.int64), 0)
    else:
        values = list(map(game.terminal_value, keys.tolist()))
        count = len(values)
        terminal = np.fromiter((v is not None for v in values), dtype=bool, count=count)
        exact = np.fromiter((v or 0 for v in values), dtype=np.int64, count=count)
    value_range = game.facts.value_range
    if value_range is not None:
        outside = terminal & ((exact < value_range[0]) | (exact > value_range[1]))
        if outside.any():
            at = int(np.argmax(outside))
            raise out_of_range(game, int(keys[at]), int(exact[at]), value_range)
    return terminal, exact


def unexpanded_from(state: bytearray, start: int, limit: int) -> list[NodeId]:
    """The first *limit* unexpanded node ids at or after *start*, ascending."""
    view = np.frombuffer(state, dtype=np.uint8)
    found: list[NodeId] = []
    pos, n = start, view.size
    window = max(4096, 4 * limit)
    while pos < n and len(found) < limit:
        hits = np.flatnonzero(view[pos : pos + window] == UNEXPANDED)
        found.extend((hits[: limit - len(found)] + pos).tolist())
        pos += window
    del view
    return found


__all__ = [
    "KeyIndex",
    "check_new_terminals",
    "expand_bulk",
    "expand_node",
    "moves_from",
    "key_index",
    "moves_of",
    "no_moves",
    "out_of_range",
    "repeats",
    "terminal_values",
    "unexpanded_from",
]
