"""Columnar reads of a stored graph from SQLite, for
:meth:`db.backends.sqlite.backend.SqliteBackend.load`.

Handing rows one by one to Python costs about a microsecond a row before any column is
converted. These readers let SQLite do the per-row work in C instead: per range of ids,
one aggregate query packs every row's integers into one string through ``char()`` (each
argument becomes one code point, so up to 0x10FFFF), keys are concatenated raw, and
numpy unpacks a whole range at once.

A reader checks that what it got is exactly what the row loaders of :mod:`db.rows` would
build (every id of the range once, in order; move orders ``0..k-1``; values in range) and
returns ``False`` when it is not, leaving the graph for the row loader to fill: that one
reads damaged graphs too, and raises its errors about them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.graph import Graph
from solver.values import DEPTH_INF, NEG_INF, POS_INF

NODE_CHUNK = 262_144
"""Node ids read per query (about 20 MB of packed text)."""

EDGE_CHUNK = 262_144
"""Edges read per query, roughly (ranges of parents are sized from the previous one)."""

MAX_SPAN = 1 << 20
"""Most parents a query covers: their offsets must stay below 0x110000, the last code
point (beyond it ``char()`` sends U+FFFD)."""

_HALF = 1 << 15
"""Bound of the high half (``x >> 16``) of an int32 that is not negative."""

_NODE_SQL = (
    "SELECT count(*), count(depth_low), count(depth_high), count(low), count(high), "
    'group_concat("key", \'\'), group_concat(char(id - :start, length("key"), low_final, '
    "high_final, state, dist, depth_low + 1, depth_high + 1, low + :offset, high + :offset), '') "
    "FROM nodes WHERE variant_id = :variant AND id >= :start AND id < :stop"
)
"""Per node, one code point a column. ``char()`` reads NULL as 0 and turns what is not a
code point into U+FFFD, so a depth ``d`` is sent as ``d + 1`` and a bound ``b`` as
``b + _OFFSET``: 0 is NULL (the ``count()`` of the column vouches that no value was sent
as 0), and U+FFFD is a value out of range (or the rare one sent as 65533)."""

_OFFSET = 1 << 19
"""Added to the bounds, which then fit from ``1 - _OFFSET`` to ``0x10FFFF - _OFFSET``
(the infinities are NULLs; no game has finite values anywhere near)."""

_REPLACED = 0xFFFD
"""What ``char()`` makes of an argument that is not a code point."""

_EDGE_COUNT_SQL = (
    "SELECT count(*), group_concat(char(parent - :start, k), '') FROM "
    "(SELECT parent, count(*) AS k FROM edges "
    "WHERE variant_id = :variant AND parent >= :start AND parent < :stop GROUP BY parent)"
)

_EDGE_SQL = (  # children as halves: node ids go beyond 0x10FFFF
    "SELECT count(*), group_concat(char(parent - :start, move_order, child >> 16, "
    "child & 65535), ''), group_concat(move, char(31)) FROM edges "
    "WHERE variant_id = :variant AND parent >= :start AND parent < :stop"
)

_PARENT_RANGE_SQL = (
    "SELECT (SELECT min(parent) FROM edges WHERE variant_id = :variant), "
    "(SELECT max(parent) FROM edges WHERE variant_id = :variant)"
)

_NEG_KEY = 1 << 63


def load_nodes(driver: sqlite3.Connection, variant_id: int) -> Graph | None:
    """A graph of the variant's nodes (no edges, every ``child_count`` 0), or ``None``
    if the stored ids are not exactly 0, 1, ... or a value is out of range."""
    graph = Graph()
    graph.drop_derived()
    low_id, high_id = driver.execute(
        "SELECT (SELECT min(id) FROM nodes WHERE variant_id = ?), "
        "(SELECT max(id) FROM nodes WHERE variant_id = ?)",
        (variant_id, variant_id),
    ).fetchone()
    if low_id is None:
        return graph
    if low_id != 0:
        return None
    with _raw_text(driver):
        for start in range(0, high_id + 1, NODE_CHUNK):
            stop = min(start + NODE_CHUNK, high_id + 1)
            count, *stored, keys, packed = driver.execute(
                _NODE_SQL,
                {"variant": variant_id, "start": start, "stop": stop, "offset": _OFFSET},
            ).fetchone()
            points = _code_points(packed, count, 10)
            if (
                count != stop - start
                or points is None
                or len(keys or b"") != points[:, 1].sum()
                or not np.array_equal(points[:, 0], np.arange(count))
                or points[:, 2:5].max() > 255
                or np.any(points[:, 5:] == _REPLACED)
                or np.count_nonzero(points[:, 6:], axis=0).tolist() != stored
            ):
                return None
            _append_keys(graph, keys, points[:, 1])
            graph.append_nodes(
                count,
                {
                    "low_final": points[:, 2].astype(np.uint8).tobytes(),
                    "high_final": points[:, 3].astype(np.uint8).tobytes(),
                    "state": points[:, 4].astype(np.uint8).tobytes(),
                    "dist": points[:, 5].astype(np.int32).tobytes(),
                    "depth_low": _decode(points[:, 6], 1, DEPTH_INF, np.int32),
                    "depth_high": _decode(points[:, 7], 1, DEPTH_INF, np.int32),
                    "low": _decode(points[:, 8], _OFFSET, NEG_INF, np.int64),
                    "high": _decode(points[:, 9], _OFFSET, POS_INF, np.int64),
                },
            )
    return graph


def load_edge_counts(driver: sqlite3.Connection, variant_id: int, graph: Graph) -> bool:
    """Set each node's ``child_count`` to its number of stored edges and
    ``deferred_edges`` to their total; ``False`` (counts partly set) if an edge leads
    from a missing node or a count is out of range."""
    n = graph.num_nodes
    if not _parents_within(driver, variant_id, n):
        return False
    counts = np.zeros(n, dtype=np.int32)
    with _raw_text(driver):
        for start in range(0, n, NODE_CHUNK):
            stop = min(start + NODE_CHUNK, n)
            found, packed = driver.execute(
                _EDGE_COUNT_SQL, {"variant": variant_id, "start": start, "stop": stop}
            ).fetchone()
            points = _code_points(packed, found, 2)
            if points is None or np.any(points[:, 1] == _REPLACED):
                return False
            counts[start + points[:, 0].astype(np.int64)] = points[:, 1]
    graph.set_edge_counts(counts)
    return True


def load_edges(driver: sqlite3.Connection, variant_id: int, graph: Graph) -> bool:
    """Append every stored edge of the variant, sorted by (parent, move order), to
    *graph*, whose edge columns must be empty; ``False`` (edges partly appended) unless
    they lead between stored nodes with move orders ``0..k-1`` per parent."""
    n = graph.num_nodes
    if not _parents_within(driver, variant_id, n):
        return False
    start, span = 0, NODE_CHUNK
    with _raw_text(driver):
        while start < n:
            stop = min(start + span, n)
            count, packed, moves = driver.execute(
                _EDGE_SQL, {"variant": variant_id, "start": start, "stop": stop}
            ).fetchone()
            points = _code_points(packed, count, 4)
            if points is None:
                return False
            if count:
                try:
                    labels = moves.decode("utf-8").split("\x1f") if moves is not None else []
                except UnicodeDecodeError:
                    return False
                if len(labels) != count or not _append_edges(graph, start, points, labels):
                    return False
            start = stop
            # parents are sent as offsets from start: keep them code points
            span = max(1, min(2 * span, span * EDGE_CHUNK // max(count, 1), MAX_SPAN))
    return True


def _append_edges(
    graph: Graph, start: int, points: npt.NDArray[np.uint32], labels: list[str]
) -> bool:
    """Append one range of parents' edges (see :func:`load_edges`)."""
    parent, order = points[:, 0].astype(np.int64), points[:, 1].astype(np.int64)
    if points[:, 2].max() >= _HALF or np.any(parent[1:] < parent[:-1]):
        return False
    child = _int32(points[:, 2], points[:, 3])
    if child.max() >= graph.num_nodes:
        return False
    firsts = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
    sizes = np.diff(np.r_[firsts, len(parent)])
    if not np.array_equal(order, np.arange(len(parent)) - np.repeat(firsts, sizes)):
        return False
    graph.append_edges((parent + start).astype(np.int32), child, labels)
    return True


def _parents_within(driver: sqlite3.Connection, variant_id: int, n: int) -> bool:
    """Whether every stored edge leads from one of nodes ``0..n-1``."""
    low, high = driver.execute(_PARENT_RANGE_SQL, {"variant": variant_id}).fetchone()
    return low is None or (low >= 0 and high < n)


def _append_keys(graph: Graph, raw: bytes | None, lengths: npt.NDArray[np.uint32]) -> None:
    """Append the keys stored as *raw* (minimal big-endian bytes, concatenated, of
    *lengths*), as :func:`db.rows.load_nodes` does: 64-bit while they fit."""
    data = np.frombuffer(raw or b"", dtype=np.uint8)
    if lengths.max() > 8:
        ends = np.cumsum(lengths).tolist()
        keys = [
            int.from_bytes(data[e - k : e].tobytes(), "big")
            for e, k in zip(ends, lengths.tolist(), strict=True)
        ]
        graph.append_keys(keys)
        return
    # Right-align each key in 8 bytes: byte i of the data goes to its key's row.
    widths = lengths.astype(np.int64)
    starts = np.cumsum(widths) - widths
    slots = np.repeat(np.arange(len(widths)) * 8 + 8 - widths - starts, widths)
    padded = np.zeros(8 * len(widths), dtype=np.uint8)
    padded[slots + np.arange(len(data))] = data
    values = padded.view(">u8")
    if values.max() >= _NEG_KEY:
        graph.widen_keys()  # beyond 63 bits: a list from now on
        graph.append_keys(values.tolist())
    else:
        graph.append_keys(values.astype(np.int64))


def _code_points(packed: bytes | None, rows: int, width: int) -> npt.NDArray[np.uint32] | None:
    """The code points of ``group_concat(char(...))`` over *rows* rows of *width* arguments
    each, as a ``rows`` x *width* array; ``None`` if that is not their number."""
    if not rows:
        return np.zeros((0, width), dtype=np.uint32)
    if packed is None:
        return None
    text = packed.decode("utf-8", "surrogatepass")
    if len(text) != rows * width:
        return None
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return points.reshape(rows, width)


def _int32(high: npt.NDArray[np.uint32], low: npt.NDArray[np.uint32]) -> npt.NDArray[np.int32]:
    """Int32s from their halves (the high half checked below :data:`_HALF`)."""
    return ((high.astype(np.int32) << 16) | low.astype(np.int32)).astype(np.int32)


def _decode(
    points: npt.NDArray[np.uint32], offset: int, null: int, dtype: type[np.signedinteger[Any]]
) -> bytes:
    """The column sent as *points* (see :data:`_NODE_SQL`), as *dtype* bytes."""
    values = points.astype(np.int64) - offset
    values[points == 0] = null
    return values.astype(dtype).tobytes()


@contextmanager
def _raw_text(driver: sqlite3.Connection) -> Iterator[None]:
    """Hand text results over as bytes: keys are concatenated raw, and the packed code
    points may include surrogates, which strict UTF-8 decoding refuses."""
    factory: Any = driver.text_factory
    driver.text_factory = bytes
    try:
        yield
    finally:
        driver.text_factory = factory
