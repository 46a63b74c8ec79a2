"""A graph's arrays as table rows and back: what the writers insert and update, and what
the row loaders append (hot paths: whole columns are sliced and converted at once).

Both backends (:mod:`db.backends.sqlite.backend`, :mod:`db.backends.postgres`) write the rows made
here; the loaders read rows sorted by id (nodes) or by parent and move order (edges) and
fill the graph through its own methods (:meth:`~solver.graph.Graph.append_nodes`, ...),
checking cheaply that the stored graph is whole.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from db.errors import DatabaseError
from db.models import NODE_COLUMNS, NODE_UPDATE_COLUMNS
from solver.game import BatchedNotation, Game
from solver.graph import EXPANDED, TERMINAL, Graph
from solver.store import TierEdges, TierNodes, TierValues
from solver.values import (
    DEPTH_INF,
    NEG_INF,
    POS_INF,
    decode_all,
    decode_depth,
    encode,
    encode_depth,
)

NODE_SQL_COLUMNS = ", ".join(f'"{c}"' if c == "key" else c for c in NODE_COLUMNS)
"""The ``nodes`` columns a writer inserts, in the order of :func:`node_columns`."""
EDGE_SQL_COLUMNS = "variant_id, parent, move_order, child, move"
"""The ``edges`` columns a writer inserts, in the order of :func:`edge_columns`."""
UPDATE_SQL_COLUMNS = ", ".join(("id", *NODE_UPDATE_COLUMNS))
"""The columns of :func:`update_rows`."""

NODE_SQL = (
    'SELECT id, "key", low, high, low_final, high_final, depth_low, depth_high, state, '
    "dist FROM nodes WHERE variant_id = ? ORDER BY id"
)
"""The rows :func:`load_nodes` reads (``?``: the variant id)."""
EDGE_SQL = (
    "SELECT parent, move_order, child, move FROM edges "
    "WHERE variant_id = ? ORDER BY parent, move_order"
)
"""The rows :func:`load_edges` reads."""
EDGE_COUNT_SQL = (
    "SELECT parent, count(*) FROM edges WHERE variant_id = ? GROUP BY parent ORDER BY parent"
)
"""The rows :func:`load_edge_counts` reads."""

LOAD_BATCH = 65_536
"""Rows fetched at a time when loading a graph."""

ROW_CHUNK = 65_536
"""Rows built at a time when writing (whole columns are sliced, converted and zipped)."""


def chunks_of(ids: range, size: int = ROW_CHUNK) -> Iterator[tuple[int, int]]:
    """*ids* cut into ``(start, stop)`` pieces of at most *size*."""
    for start in range(ids.start, ids.stop, size):
        yield start, min(start + size, ids.stop)


Spec = None | tuple[int, int] | str
"""How an integer array column of an :class:`ArrayChunk` is written: as it is
(``None``); NULL for values at or below the first number or at or above the second
(:data:`BOUND_NULLS`, :data:`DEPTH_NULLS`); or ``"key"``, each value as its minimal
big-endian bytes (:func:`key_bytes`)."""
BOUND_NULLS = (NEG_INF, POS_INF)
"""The :data:`Spec` of a bound column: the infinities are NULL
(:func:`~solver.values.encode`)."""
DEPTH_NULLS = (-1, DEPTH_INF)
"""The :data:`Spec` of a depth column: unknown depths are NULL
(:func:`~solver.values.encode_depth`)."""


class ArrayChunk(list[Any]):
    """A chunk of rows as columns, like the other chunks, whose columns may be integer
    arrays written as :attr:`specs` says: SQLite binds them in C as they are
    (:mod:`db.backends.sqlite.bulk`); other writers take :func:`plain_columns`."""

    def __init__(self, columns: list[Any], specs: Sequence[Spec]) -> None:
        super().__init__(columns)
        self.specs = specs


def plain_columns(columns: Sequence[Any], specs: Sequence[Spec] | None = None) -> list[Any]:
    """*columns* as Python values (an :class:`ArrayChunk`'s arrays converted as its
    specs say, or as *specs* say); other columns as they are."""
    if specs is None:
        specs = columns.specs if isinstance(columns, ArrayChunk) else [None] * len(columns)
    return [_plain(c, s) for c, s in zip(columns, specs, strict=True)]


def _plain(column: Any, spec: Spec) -> Any:
    if spec is None:
        if isinstance(column, np.ndarray) and column.dtype.kind == "S":  # text, UTF-8
            return [v.decode() for v in column.tolist()]
        return column.tolist() if isinstance(column, np.ndarray) else column
    values = np.asarray(column).tolist()
    if spec == "key":
        return key_bytes(values)
    assert isinstance(spec, tuple)
    low, high = spec
    return [None if v <= low or v >= high else v for v in values]


class ColumnRows(Sequence[tuple[Any, ...]]):
    """Rows given as chunks of columns (:class:`ArrayChunk`): a sequence of row tuples
    for the writers that take rows, the chunks for SQLite's C binding."""

    def __init__(self, chunks: list[ArrayChunk]) -> None:
        self.chunks = chunks
        self._count = sum(len(c[0]) for c in chunks)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        for chunk in self.chunks:
            yield from zip(*plain_columns(chunk), strict=True)

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[Any, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | list[tuple[Any, ...]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        at = index + self._count if index < 0 else index
        if not 0 <= at < self._count:
            raise IndexError(index)
        for chunk in self.chunks:  # the row's chunk, then that row alone
            size = len(chunk[0])
            if at < size:
                return tuple(
                    _plain(column[at : at + 1], spec)[0]
                    for column, spec in zip(chunk, chunk.specs, strict=True)
                )
            at -= size
        raise AssertionError("unreachable: the count is the chunks' sizes")


def value_arrays(graph: Graph, rows: slice | npt.NDArray[np.int64]) -> list[npt.NDArray[Any]]:
    """Nodes *rows* (a slice of ids, or ascending ids): low, high, depth_low, depth_high,
    state, low_final, high_final, as arrays (copies) to be written as :data:`VALUE_SPECS`
    say (the infinities as NULL)."""
    arrays = [
        np.frombuffer(values, dtype=dtype)[rows]
        for values, dtype in (
            (graph.low, np.int64),
            (graph.high, np.int64),
            (graph.depth_low, np.int32),
            (graph.depth_high, np.int32),
            (graph.state, np.uint8),
            (graph.low_final, np.uint8),
            (graph.high_final, np.uint8),
        )
    ]
    return [a.copy() for a in arrays] if isinstance(rows, slice) else arrays


VALUE_SPECS: tuple[Spec, ...] = (
    BOUND_NULLS,
    BOUND_NULLS,
    DEPTH_NULLS,
    DEPTH_NULLS,
    None,
    None,
    None,
)
"""How the arrays of :func:`value_arrays` are written."""
SEQ_NULLS = (-1, POS_INF)
"""The :data:`Spec` of an ``expanded_in`` column: -1 is NULL (not expanded)."""


def node_columns(graph: Graph, game: Game, vid: int, ids: range, seq: int) -> Iterator[list[Any]]:
    """Per chunk of nodes *ids*, their rows' columns (an :class:`ArrayChunk`), in
    :data:`NODE_SQL_COLUMNS` order; those already expanded were expanded by commit
    *seq*."""
    for start, stop in chunks_of(ids):
        keys = graph.keys[start:stop]
        values = value_arrays(graph, slice(start, stop))
        state = values[4]
        key_col, key_spec = key_column(keys)
        yield ArrayChunk(
            [
                np.full(stop - start, vid, dtype=np.int64),
                np.arange(start, stop, dtype=np.int64),
                *values[:4],
                np.frombuffer(graph.dist, dtype=np.int32)[start:stop].copy(),
                *values[4:],
                key_col,
                notation_column(game, keys),
                np.where(state == EXPANDED, seq, -1),
            ],
            (None, None, *VALUE_SPECS[:4], None, *VALUE_SPECS[4:], key_spec, None, SEQ_NULLS),
        )


def mapped_rows(
    graph: Graph, game: Game, vid: int, seq: int
) -> tuple[list[list[Any]], list[list[Any]], ColumnRows]:
    """What :meth:`Graph.pending` says for a graph that holds part of the stored one
    (:attr:`Graph.gid`): the new nodes' columns (one chunk, in id order), the edges of
    the nodes expanded since the last commit, and the updates of changed stored nodes,
    all by stored id. A stub's row says expanded, as stored."""
    assert graph.gid is not None
    gid = np.frombuffer(graph.gid, dtype=np.int64)
    fresh = np.flatnonzero(gid >= graph.committed_gid)
    fresh = fresh[np.argsort(gid[fresh], kind="stable")]
    nodes: list[list[Any]] = []
    if fresh.size:
        all_keys = _int64_view(graph.keys)
        fresh_keys: Any = (
            all_keys[fresh]
            if isinstance(all_keys, np.ndarray)
            else [all_keys[i] for i in fresh.tolist()]
        )
        key_col, key_spec = key_column(fresh_keys)
        values = value_arrays(graph, fresh)
        nodes.append(
            ArrayChunk(
                [
                    np.full(fresh.size, vid, dtype=np.int64),
                    gid[fresh],
                    *values[:4],
                    np.frombuffer(graph.dist, dtype=np.int32)[fresh],
                    *values[4:],
                    key_col,
                    notation_column(game, fresh_keys),
                    np.where(values[4] == EXPANDED, seq, -1),
                ],
                (None, None, *VALUE_SPECS[:4], None, *VALUE_SPECS[4:], key_spec, None, SEQ_NULLS),
            )
        )
    edges: list[list[Any]] = []
    parents = np.array(graph.fresh_parents, dtype=np.int64)
    parents = parents[np.argsort(gid[parents], kind="stable")]
    counts = np.frombuffer(graph.child_count, dtype=np.int32)[parents].astype(np.int64)
    if counts.any():
        starts = np.cumsum(counts) - counts  # each parent's first row
        orders = np.arange(int(counts.sum())) - np.repeat(starts, counts)
        at = np.repeat(np.frombuffer(graph.first_edge, dtype=np.int32)[parents], counts) + orders
        moves = graph.edge_move
        edges.append(
            ArrayChunk(
                [
                    np.full(at.size, vid, dtype=np.int64),
                    np.repeat(gid[parents], counts),
                    orders,
                    gid[np.frombuffer(graph.edge_child, dtype=np.int32)[at]],
                    [moves[e] for e in at.tolist()],
                ],
                (None,) * 5,
            )
        )
    dirty = np.fromiter(graph.dirty, dtype=np.int64, count=len(graph.dirty))
    dirty = dirty[gid[dirty] < graph.committed_gid]
    dirty = dirty[np.argsort(gid[dirty], kind="stable")]
    if not dirty.size:
        return nodes, edges, ColumnRows([])
    values = value_arrays(graph, dirty)
    stub = np.frombuffer(graph.stub, dtype=np.uint8)[dirty].astype(bool)
    values[4] = np.where(stub, EXPANDED, values[4]).astype(np.uint8)
    return nodes, edges, ColumnRows([ArrayChunk([gid[dirty], *values], (None, *VALUE_SPECS))])


def key_bytes(keys: Iterable[int]) -> list[bytes]:
    """Keys as stored: minimal big-endian bytes (at least one)."""
    return [k.to_bytes((k.bit_length() + 7) >> 3 or 1, "big") for k in keys]


def _int64_view(keys: Any) -> Any:
    """A graph's keys in an ``array("q")`` as a numpy view; other keys as they are."""
    if isinstance(keys, array) and keys.typecode == "q":
        return np.frombuffer(keys, dtype=np.int64)
    return keys


def notation_column(game: Game, keys: Sequence[int] | npt.NDArray[np.int64]) -> Any:
    """The notation of each of *keys*, to write: the game's ``format_batch`` of 64-bit
    keys (UTF-8 in a numpy ``S`` array, which SQLite's binder reads as it is), where it
    answers, else ``format_many``'s strings."""
    keys = _int64_view(keys)
    if isinstance(keys, np.ndarray):
        if not keys.size:
            return []
        found = game.format_batch(keys) if isinstance(game, BatchedNotation) else None
        if found is not None:
            return found
        return game.format_many(keys.tolist())
    return game.format_many(keys)


def key_column(keys: Sequence[int] | npt.NDArray[np.int64]) -> tuple[Any, Spec]:
    """A column of keys to write and its :data:`Spec`: 64-bit keys (a graph's
    ``array("q")``, or an array) as they are, which the writers turn into their bytes
    (SQLite's in C, making no Python object a key); other keys as :func:`key_bytes`."""
    keys = _int64_view(keys)
    if isinstance(keys, np.ndarray) and keys.dtype == np.int64:
        if not keys.size or int(keys.min()) >= 0:
            return keys, "key"
        keys = keys.tolist()
    return key_bytes(keys), None


# -- a tiered solve's rows (solver.tiers.solve) ---------------------------------------------

TIER_NODE_SQL = (
    'SELECT "key", dist, state, low FROM nodes WHERE variant_id = ? AND id >= ? AND id < ? '
    "ORDER BY id"
)
"""A tier's positions (``?``: the variant id, the tier's first id and the one after)."""
TIER_VALUE_SQL = (
    "SELECT low, high, depth_low, depth_high FROM nodes "
    "WHERE variant_id = ? AND id >= ? AND id < ? ORDER BY id"
)
"""A solved tier's bounds and depths."""


def tier_node_columns(
    game: Game, vid: int, first_id: int, nodes: TierNodes, values: TierValues, seq: int
) -> Iterator[list[Any]]:
    """Per chunk (an :class:`ArrayChunk`), the rows of a solved shard's positions *nodes*
    (ids from *first_id*; *values* theirs, in the same order), in
    :data:`NODE_SQL_COLUMNS` order: every bound final, the terminal positions as such,
    the others expanded by commit *seq*."""
    for start, stop in chunks_of(range(int(nodes.keys.size))):
        count = stop - start
        keys = nodes.keys[start:stop]
        terminal = nodes.terminal[start:stop]
        ones = np.ones(count, dtype=np.uint8)
        yield ArrayChunk(
            [
                np.full(count, vid, dtype=np.int64),
                np.arange(first_id + start, first_id + stop, dtype=np.int64),
                values.low[start:stop],
                values.high[start:stop],
                values.depth_low[start:stop],
                values.depth_high[start:stop],
                nodes.dist[start:stop],
                np.where(terminal, TERMINAL, EXPANDED).astype(np.uint8),
                ones,
                ones,
                keys,
                notation_column(game, keys),
                np.where(terminal, -1, seq),
            ],
            (None, None, BOUND_NULLS, BOUND_NULLS, DEPTH_NULLS, DEPTH_NULLS)
            + (None,) * 4
            + ("key", None, SEQ_NULLS),
        )


STAGE_CHUNK = 65_536
"""Positions a ``discovered_positions`` row holds at most (migration 0015)."""
STAGE_COLUMNS = ("variant_id", "first_offset", "count", "keys", "dist", "terminal", "value")
"""The ``discovered_positions`` columns, in the order of :func:`staged_rows`."""
STAGED_SQL = (
    "SELECT first_offset, count, keys, dist, terminal, value FROM discovered_positions "
    "WHERE variant_id = ? AND first_offset >= ? AND first_offset < ? ORDER BY first_offset"
)
"""The chunks starting in a range of offsets (``?``: the variant, the range)."""
STAGED_BEFORE_SQL = (
    "SELECT max(first_offset) FROM discovered_positions WHERE variant_id = ? AND first_offset <= ?"
)
"""Where the chunk holding an offset starts (``?``: the variant, the offset)."""


def staged_rows(vid: int, first: int, nodes: TierNodes) -> Iterator[tuple[Any, ...]]:
    """The ``discovered_positions`` rows of discovered positions *nodes*, the first at offset
    *first*: :data:`STAGE_CHUNK` positions a row, as little-endian arrays."""
    for start, stop in chunks_of(range(int(nodes.keys.size)), STAGE_CHUNK):
        terminal = nodes.terminal[start:stop]
        yield (
            vid,
            first + start,
            stop - start,
            nodes.keys[start:stop].astype("<i8").tobytes(),
            nodes.dist[start:stop].astype("<i4").tobytes(),
            terminal.astype(np.uint8).tobytes(),
            nodes.value[start:stop][terminal].astype("<i8").tobytes(),
        )


def staged_nodes(found: Iterable[Sequence[Any]], lo: int, hi: int) -> TierNodes:
    """The positions at offsets *lo* .. *hi* - 1 from the ``discovered_positions`` rows *found*
    (``first_offset, count, keys, dist, terminal, value``, ascending, covering the range).

    :raises DatabaseError: if they do not cover it."""
    keys, dist, terminal, value = [], [], [], []
    at = lo
    for first, count, k, d, t, v in found:
        first, count = int(first), int(count)
        if first + count <= lo or first >= hi:
            continue
        if first > at:
            break
        cut = slice(at - first, min(first + count, hi) - first)
        flags = np.frombuffer(t, dtype=np.uint8).astype(bool)
        values = np.zeros(count, dtype=np.int64)
        values[flags] = np.frombuffer(v, dtype="<i8")
        keys.append(np.frombuffer(k, dtype="<i8")[cut].astype(np.int64))
        dist.append(np.frombuffer(d, dtype="<i4")[cut].astype(np.int32))
        terminal.append(flags[cut])
        value.append(values[cut])
        at = first + cut.stop
    if at < hi:
        raise DatabaseError(
            f"the discovered positions {at:,} .. {hi - 1:,} of a tiered solve are not "
            "stored: the graph is damaged"
        )
    if not keys:
        return TierNodes(
            np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, bool), np.zeros(0, np.int64)
        )
    return TierNodes(
        np.concatenate(keys), np.concatenate(dist), np.concatenate(terminal), np.concatenate(value)
    )


def tier_edge_columns(vid: int, edges: TierEdges) -> Iterator[list[Any]]:
    """Per chunk (an :class:`ArrayChunk`), the rows of a solved tier's moves, in
    :data:`EDGE_SQL_COLUMNS` order."""
    # the labels as UTF-8 in an ``S`` array, which the binder reads as it is
    names = np.array([n.encode() for n in edges.names] or [b""], dtype=np.bytes_)
    for start, stop in chunks_of(range(int(edges.child.size))):
        yield ArrayChunk(
            [
                np.full(stop - start, vid, dtype=np.int64),
                edges.parent[start:stop],
                edges.move_order[start:stop],
                edges.child[start:stop],
                names[edges.move[start:stop]],
            ],
            [None] * 5,
        )


TIER_NODE_ARRAYS: tuple[tuple[type[np.generic], int, bool], ...] = (
    (np.int64, 0, True),
    (np.int32, 0, False),
    (np.uint8, 0, False),
    (np.int64, 0, False),
)
"""The columns of :data:`TIER_NODE_SQL` as arrays (:func:`db.backends.sqlite.bulk.fetch_arrays`:
type, the value of NULL, whether it is a key), as :func:`tier_nodes` makes them."""
TIER_VALUE_ARRAYS: tuple[tuple[type[np.generic], int, bool], ...] = (
    (np.int64, NEG_INF, False),
    (np.int64, POS_INF, False),
    (np.int32, DEPTH_INF, False),
    (np.int32, DEPTH_INF, False),
)
"""The columns of :data:`TIER_VALUE_SQL` as arrays, as :func:`tier_values` makes them."""


def tier_nodes(chunks: Iterable[list[tuple[Any, ...]]], count: int) -> TierNodes:
    """The rows of :data:`TIER_NODE_SQL` as arrays (*count* of them expected)."""
    keys, dist, state, low = _tier_columns(
        chunks,
        count,
        "positions",
        (
            (np.int64, lambda column: [int.from_bytes(k, "big") for k in column]),
            (np.int32, list),
            (np.uint8, list),
            (np.int64, lambda column: [v or 0 for v in column]),
        ),
    )
    return tier_nodes_of([keys, dist, state, low])


def tier_nodes_of(arrays: Sequence[npt.NDArray[Any]]) -> TierNodes:
    """:class:`TierNodes` of :data:`TIER_NODE_SQL`'s columns as arrays."""
    keys, dist, state, low = arrays
    terminal = state == TERMINAL
    return TierNodes(keys, dist, terminal, np.where(terminal, low, 0))


def tier_values(chunks: Iterable[list[tuple[Any, ...]]], count: int) -> TierValues:
    """The rows of :data:`TIER_VALUE_SQL` as arrays (*count* of them expected)."""
    low, high, dlow, dhigh = _tier_columns(
        chunks,
        count,
        "values",
        (
            (np.int64, lambda column: list(decode_all(column, upper=False))),
            (np.int64, lambda column: list(decode_all(column, upper=True))),
            (np.int32, lambda column: list(map(decode_depth, column))),
            (np.int32, lambda column: list(map(decode_depth, column))),
        ),
    )
    return TierValues(low, high, dlow, dhigh)


def tier_read(arrays: list[npt.NDArray[Any]], count: int, what: str) -> list[npt.NDArray[Any]]:
    """*arrays* read in C (:func:`db.backends.sqlite.bulk.fetch_arrays`, room for one row more
    than *count*), checked to hold *count* rows as :func:`_tier_columns` checks them."""
    if arrays[0].size != count:
        raise DatabaseError(
            f"a tier's stored {what} are not all there ({min(arrays[0].size, count)} of {count})"
        )
    return arrays


def _tier_columns(
    chunks: Iterable[list[tuple[Any, ...]]],
    count: int,
    what: str,
    columns: Sequence[tuple[type[np.generic], Callable[[list[Any]], list[Any]]]],
) -> list[npt.NDArray[Any]]:
    """*count* rows (in chunks) as one array per column, each column's values made by
    its converter into its type."""
    arrays = [np.empty(count, dtype) for dtype, _ in columns]
    at = 0
    for rows in chunks:
        stop = at + len(rows)
        if stop > count:
            break
        for j, (values, (_, convert)) in enumerate(zip(arrays, columns, strict=True)):
            values[at:stop] = convert([row[j] for row in rows])
        at = stop
    if at != count:
        raise DatabaseError(f"a tier's stored {what} are not all there ({at} of {count})")
    return arrays


def edge_columns(graph: Graph, vid: int, ids: range) -> Iterator[list[Any]]:
    """Per chunk of edges *ids*, their rows' columns (lists), in :data:`EDGE_SQL_COLUMNS` order."""
    for start, stop in chunks_of(ids):
        parents = np.frombuffer(graph.edge_parent, dtype=np.int32)[start:stop]
        first = np.frombuffer(graph.first_edge, dtype=np.int32)[parents]
        orders = (np.arange(start, stop) - first).tolist()
        del parents, first
        yield [
            np.full(stop - start, vid, dtype=np.int64),
            graph.edge_parent[start:stop],
            orders,
            graph.edge_child[start:stop],
            graph.edge_move[start:stop],
        ]


def node_rows(
    graph: Graph, game: Game, vid: int, ids: range, seq: int
) -> Iterator[tuple[Any, ...]]:
    for columns in node_columns(graph, game, vid, ids, seq):
        yield from zip(*plain_columns(columns), strict=True)


def edge_rows(graph: Graph, vid: int, ids: range) -> Iterator[tuple[Any, ...]]:
    for columns in edge_columns(graph, vid, ids):
        yield from zip(*columns, strict=True)


def update_rows(graph: Graph, ids: Sequence[int]) -> Iterable[tuple[Any, ...]]:
    """(id, low, high, depth_low, depth_high, state, low_final, high_final) of *ids*
    (ascending): column slices for a contiguous range (a :class:`ColumnRows`), else node
    by node.

    A range (every node marked changed: a full solve's end) leaves out terminal nodes:
    they are written with their exact, final values when found and never change."""
    if isinstance(ids, range) and ids.step == 1:
        chunks = []
        for start, stop in chunks_of(ids):
            inner = np.flatnonzero(
                np.frombuffer(graph.state[start:stop], dtype=np.uint8) != TERMINAL
            )
            if inner.size == stop - start:
                at = np.arange(start, stop)
                chunks.append(
                    ArrayChunk([at, *value_arrays(graph, slice(start, stop))], UPDATE_SPECS)
                )
            elif inner.size:
                at = inner + start
                chunks.append(ArrayChunk([at, *value_arrays(graph, at)], UPDATE_SPECS))
        return ColumnRows(chunks)
    return _updates_one_by_one(graph, ids)


UPDATE_SPECS: tuple[Spec, ...] = (None, *VALUE_SPECS)
"""How the arrays of an update chunk (the ids, then :func:`value_arrays`) are written."""


def update_columns(graph: Graph, ids: Sequence[int]) -> ColumnRows:
    """The rows of :func:`update_rows` for *ids* (ascending), every one of them, as
    columns copied out of the graph at once (a batch written while the graph changes)."""
    chunks = []
    for start, stop in chunks_of(range(len(ids))):
        at = np.asarray(ids[start:stop], dtype=np.int64)
        chunks.append(ArrayChunk([at, *value_arrays(graph, at)], UPDATE_SPECS))
    return ColumnRows(chunks)


def _updates_one_by_one(graph: Graph, ids: Sequence[int]) -> Iterator[tuple[Any, ...]]:
    low = graph.low
    high = graph.high
    depth_low = graph.depth_low
    depth_high = graph.depth_high
    state = graph.state
    low_final = graph.low_final
    high_final = graph.high_final
    for i in ids:
        yield (
            i,
            encode(low[i]),
            encode(high[i]),
            encode_depth(depth_low[i]),
            encode_depth(depth_high[i]),
            state[i],
            low_final[i],
            high_final[i],
        )


_col0, _col1, _col2, _col3, _col4, _col5, _col6, _col7, _col8, _col9 = (
    itemgetter(i) for i in range(10)
)


def fetched_chunks(cursor: Any) -> Iterator[list[tuple[Any, ...]]]:
    """An executed DB-API cursor's rows, :data:`LOAD_BATCH` at a time."""
    while True:
        rows = cursor.fetchmany(LOAD_BATCH)
        if not rows:
            return
        yield rows


def load_nodes(graph: Graph, chunks: Iterable[list[tuple[Any, ...]]]) -> None:
    """Append nodes sorted by id (which must run 0, 1, ...) to the graph's arrays, as
    :meth:`Graph.add_node` would, with the stored bounds, flags, depths and state. The
    key index and reverse edges are left to be built when first needed."""
    graph.drop_derived()
    for rows in chunks:
        start = graph.num_nodes
        count = len(rows)
        if rows[0][0] != start or rows[-1][0] != start + count - 1:
            raise DatabaseError(
                f"stored node ids are not contiguous near {start}: the graph is damaged"
            )
        graph.append_keys([int.from_bytes(kb, "big") for kb in map(_col1, rows)])
        graph.append_nodes(
            count,
            {
                "low": decode_all(map(_col2, rows), upper=False),
                "high": decode_all(map(_col3, rows), upper=True),
                "low_final": map(_col4, rows),
                "high_final": map(_col5, rows),
                "depth_low": map(decode_depth, map(_col6, rows)),
                "depth_high": map(decode_depth, map(_col7, rows)),
                "state": map(_col8, rows),
                "dist": map(_col9, rows),
            },
        )


def load_edges(graph: Graph, chunks: Iterable[list[tuple[Any, ...]]]) -> None:
    """Append edges sorted by (parent, move order), as :meth:`Graph.add_edge_raw` would.

    Checks, cheaply, that they lead between stored nodes and that each parent's move
    orders are 0, 1, ...: the primary key makes them distinct and the query sorts them,
    so non-negative orders summing to ``k(k-1)/2`` per ``k``-child parent are exactly
    ``0..k-1``.
    """
    n = graph.num_nodes
    order_sum = 0
    for rows in chunks:
        parents = list(map(_col0, rows))
        children = list(map(_col2, rows))
        if min(map(_col1, rows)) < 0 or min(children) < 0 or max(children) >= n or parents[-1] >= n:
            raise DatabaseError("stored edges lead to missing nodes: the graph is damaged")
        order_sum += sum(map(_col1, rows))
        graph.append_edges(parents, children, map(_col3, rows))
    if order_sum != sum(k * (k - 1) // 2 for k in graph.child_count):
        raise DatabaseError("stored move orders are not 0, 1, ... per node: the graph is damaged")


def load_edge_counts(graph: Graph, chunks: Iterable[list[tuple[Any, ...]]]) -> None:
    """Record each parent's number of stored edges (the edges stay deferred)."""
    n = graph.num_nodes
    counts = np.zeros(n, dtype=np.int32)
    for rows in chunks:
        if rows[-1][0] >= n or rows[0][0] < 0:
            raise DatabaseError("stored edges lead from missing nodes: the graph is damaged")
        parents, ks = zip(*rows, strict=True)
        counts[np.array(parents, dtype=np.int64)] = ks
    graph.set_edge_counts(counts)
