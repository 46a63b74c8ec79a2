"""Full mode (DESIGN §4): every reachable position expanded breadth first in bulk, then
one retrograde pass that computes bounds and depths with counters, the way tablebases are
made. :func:`retrograde` also gives the partial solver its depths at the end of each run.

Whole-graph passes with numpy.
The per-node work that must call the game (its moves, canonical forms and terminal
values) stays a plain Python loop; everything else — finding which children are new,
numbering them in discovery order, appending the columns, walking parents — runs as
vector operations over the graph's typed arrays, viewed in place with
:func:`numpy.frombuffer` (views are always dropped before a column grows: a Python
``array`` refuses to resize while it is exported).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

import numpy as np

from solver.errors import SolveError
from solver.game import Game, PositionKey
from solver.graph import EXPANDED, TERMINAL, UNEXPANDED, Graph, NodeId
from solver.values import DEPTH_INF, NEG_INF, POS_INF

_INT64 = np.iinfo(np.int64)
_INT32 = np.iinfo(np.int32)


class KeyIndex:
    """Position key -> node id for 64-bit integer keys: two sorted arrays (12 bytes a
    node) instead of a dict (about 100 bytes a node with its int objects)."""

    def __init__(self, keys: array[int], order: np.ndarray | None = None) -> None:
        """*order*: the node ids in key order, if known; used only if it is one (checked:
        in range and sorting the keys strictly, which makes it the permutation)."""
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

    def resolve(
        self, wanted: np.ndarray, next_id: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Node ids of *wanted* keys, giving unknown keys new ids from *next_id* on in
        order of first occurrence (discovery order). Returns (ids, new keys in id order,
        the position in *wanted* where each new key first occurs)."""
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
    """Expand *batch* (unexpanded nodes, ascending) as :meth:`_Solver.expand` would —
    same ids, same columns — but with vector bookkeeping. Returns ``False`` (and changes
    nothing) if a child's key does not fit in 64 bits: the caller falls back to the dict.
    """
    keys = g.keys
    moves_of = game.children
    pairs: list[tuple[str, PositionKey]] = []
    extend = pairs.extend
    counts = array("q")
    before = 0
    for nid in batch:
        extend(moves_of(keys[nid]))
        n = len(pairs)
        if n == before:
            raise SolveError(
                f"{game.name}: position {game.format(keys[nid])!r} has no moves "
                "but is not terminal (the game breaks its contract)"
            )
        counts.append(n - before)
        before = n
    child_keys = [k for _, k in pairs]
    if canonical is not None:
        child_keys = list(map(canonical, child_keys))
    try:
        wanted = np.array(child_keys, dtype=np.int64)
    except OverflowError:
        return False
    del child_keys

    num_nodes, num_edges = g.num_nodes, g.num_edges
    ids, new_keys, first_slot = index.resolve(wanted, num_nodes)
    del wanted
    parents = np.array(batch, dtype=np.int64)
    per_child_parent = np.repeat(parents, np.frombuffer(counts, dtype=np.int64))
    dist = np.frombuffer(g.dist, dtype=np.int32)
    new_dist = dist[per_child_parent[first_slot]] + 1
    del dist

    # New nodes: terminal ones exact and final at once, the rest unknown.
    terminal_value = game.terminal_value
    values = list(map(terminal_value, new_keys.tolist()))
    g.keys.frombytes(new_keys.tobytes())  # type: ignore[union-attr]
    g.dist.frombytes(new_dist.astype(np.int32).tobytes())
    count = len(values)
    g.state.extend([UNEXPANDED if v is None else TERMINAL for v in values])
    g.low.extend([NEG_INF if v is None else v for v in values])
    g.high.extend([POS_INF if v is None else v for v in values])
    final = bytes([v is not None for v in values])
    g.low_final.extend(final)
    g.high_final.extend(final)
    depths = [DEPTH_INF if v is None else 0 for v in values]
    g.depth_low.extend(depths)
    g.depth_high.extend(depths)
    g.first_edge.frombytes(np.full(count, -1, dtype=np.int32).tobytes())
    g.child_count.frombytes(np.zeros(count, dtype=np.int32).tobytes())

    # Edges, parent by parent in move order.
    g.edge_parent.frombytes(per_child_parent.astype(np.int32).tobytes())
    g.edge_child.frombytes(ids.astype(np.int32).tobytes())
    g.edge_move.extend([m for m, _ in pairs])
    # The parents' new state is not marked dirty: their stored edges say they are
    # expanded (the loader reads it so), and the solve's last commit rewrites every node.
    first_edge, child_count, state = g.first_edge, g.child_count, g.state
    e = num_edges
    for nid, c in zip(batch, counts, strict=True):
        first_edge[nid] = e
        child_count[nid] = c
        state[nid] = EXPANDED
        e += c
    return True


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


def _gather(ptr: np.ndarray, values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Concatenate ``values[ptr[n]:ptr[n + 1]]`` over *nodes* (a ragged gather)."""
    starts = ptr[nodes]
    lengths = ptr[nodes + 1] - starts
    total = int(lengths.sum())
    if not total:
        return values[:0]
    offsets = np.cumsum(lengths) - lengths
    return values[np.repeat(starts - offsets, lengths) + np.arange(total)]


def retrograde(g: Graph) -> None:
    """Compute every node's bounds and depths from scratch, with counters.

    For each threshold ``t`` (the terminal values and their negations, descending), the
    nodes with ``low >= t`` and those with ``high <= -t`` form the attractor sets of a
    win/loss game; since the sets only grow as ``t`` falls, one pass of counters over all
    thresholds computes every bound. Within a threshold, events are processed level by
    level in order of depth (a bucket queue; at equal depth, ``low`` events first), which
    yields DESIGN §4's depths: ``depth_low`` = 1 + the smallest ``depth_high`` of a child
    attaining ``low``, ``depth_high`` = 1 + the largest ``depth_low`` over all children.
    Each level is a handful of vector operations over the nodes it settles. Works on
    partial graphs (frontier nodes have no events) and leaves the finality flags alone.
    """
    n, m = g.num_nodes, g.num_edges
    if not n:
        return
    state = np.frombuffer(g.state, dtype=np.uint8)
    low = np.frombuffer(g.low, dtype=np.int64)
    term = np.flatnonzero(state == TERMINAL)
    term_value = low[term]
    del state, low

    # Parents grouped by child: rev_parent[rev_ptr[c]:rev_ptr[c + 1]].
    if m:
        child = np.frombuffer(g.edge_child, dtype=np.int32)
        rev_parent = np.frombuffer(g.edge_parent, dtype=np.int32)[np.argsort(child, kind="stable")]
        rev_ptr = np.zeros(n + 1, dtype=np.int32 if m < 1 << 31 else np.int64)
        np.cumsum(np.bincount(child, minlength=n), out=rev_ptr[1:])
        del child
    else:
        rev_parent = np.zeros(0, dtype=np.int32)
        rev_ptr = np.zeros(n + 1, dtype=np.int32)
    counter = np.array(np.frombuffer(g.child_count, dtype=np.int32)) if m else np.zeros(n, np.int32)
    # Depths in 32 bits (-1: infinite while computing); bounds too while the values fit
    # (the 32-bit extremes standing for the infinities), else in 64.
    maxd = np.full(n, -1, dtype=np.int32)
    wide = bool(term_value.size) and int(np.abs(term_value).max()) >= _INT32.max
    bound_type = np.int64 if wide else np.int32
    neg_inf, pos_inf = (NEG_INF, POS_INF) if wide else (_INT32.min, _INT32.max)
    new_low = np.full(n, neg_inf, dtype=bound_type)
    new_high = np.full(n, pos_inf, dtype=bound_type)
    new_dlow = np.full(n, -1, dtype=np.int32)
    new_dhigh = np.full(n, -1, dtype=np.int32)
    in_w = np.zeros(n, dtype=bool)
    in_l = np.zeros(n, dtype=bool)

    values = np.unique(term_value)
    for t in np.unique(np.concatenate([values, -values]))[::-1].tolist():
        wins: dict[int, list[np.ndarray]] = {0: [term[term_value == t]]}
        losses: dict[int, list[np.ndarray]] = {0: [term[term_value == -t]]}
        while wins or losses:
            d = min(min(wins, default=_INT64.max), min(losses, default=_INT64.max))
            settled = _fresh(wins.pop(d, None), in_w)
            if settled is not None:
                in_w[settled] = True
                new_low[settled] = t
                new_dlow[settled] = d
                parents = _gather(rev_ptr, rev_parent, settled)
                if parents.size:
                    maxd[parents] = np.maximum(maxd[parents], d)
                    uniq, hits = np.unique(parents, return_counts=True)
                    counter[uniq] -= hits.astype(np.int32)
                    done = uniq[counter[uniq] == 0]
                    levels = maxd[done] + 1
                    for level in np.unique(levels).tolist():
                        losses.setdefault(level, []).append(done[levels == level])
            settled = _fresh(losses.pop(d, None), in_l)
            if settled is not None:
                in_l[settled] = True
                new_high[settled] = -t
                new_dhigh[settled] = d
                parents = _gather(rev_ptr, rev_parent, settled)
                parents = parents[~in_w[parents]]
                if parents.size:
                    wins.setdefault(d + 1, []).append(parents)
    del rev_parent, rev_ptr, counter, maxd, in_w, in_l, term, term_value

    committed = g.committed_nodes
    changed = np.zeros(n, dtype=bool)
    for column, new in (
        (g.low, new_low),
        (g.high, new_high),
        (g.depth_low, new_dlow),
        (g.depth_high, new_dhigh),
    ):
        if column is g.low or column is g.high:
            if not wide:  # back to 64 bits, with the sentinels for the infinities
                new = np.where(
                    new == neg_inf,
                    np.int64(NEG_INF),
                    np.where(new == pos_inf, np.int64(POS_INF), new.astype(np.int64)),
                )
            view = np.frombuffer(column, dtype=np.int64)
        else:
            new = np.where(np.less(new, 0), np.int32(DEPTH_INF), new)
            view = np.frombuffer(column, dtype=np.int32)
        changed |= view != new
        view[:] = new
        del view, new
    if committed and not g.all_dirty:
        ids = np.flatnonzero(changed[:committed])
        if ids.size * 2 > committed:
            g.mark_all_dirty()
        else:
            g.dirty.update(ids.tolist())


def _fresh(batches: list[np.ndarray] | None, seen: np.ndarray) -> np.ndarray | None:
    """The distinct nodes of *batches* not yet in *seen* (``None`` if there are none)."""
    if not batches:
        return None
    nodes = np.unique(np.concatenate(batches))
    nodes = nodes[~seen[nodes]]
    return nodes if nodes.size else None


def settle_all_flags(g: Graph) -> None:
    """Mark every bound final (a complete graph's fixpoint is exact everywhere)."""
    n = g.num_nodes
    if g.low_final.count(0) or g.high_final.count(0):
        g.low_final[:] = b"\x01" * n
        g.high_final[:] = b"\x01" * n
        if g.committed_nodes:
            g.mark_all_dirty()


__all__ = [
    "KeyIndex",
    "expand_bulk",
    "key_index",
    "retrograde",
    "settle_all_flags",
    "unexpanded_from",
]
