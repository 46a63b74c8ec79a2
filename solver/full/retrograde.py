"""Full mode (DESIGN §4): once every reachable position is expanded (breadth first, in
bulk: :mod:`solver.expand`), one retrograde pass computes bounds and depths with
counters, the way tablebases are made. :func:`retrograde` also gives the partial solver
its depths at the end of each run. A tiered solve (:mod:`solver.tiers.solve`) calls
:func:`retrograde_arrays`, the pass on plain arrays, once per tier, with the solved child
tiers' values as seeds.

Whole-graph passes with numpy over the graph's typed arrays, viewed in place with
:func:`numpy.frombuffer` (views are always dropped before a column grows: a Python
``array`` refuses to resize while it is exported).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from solver.graph import TERMINAL, Graph
from solver.values import DEPTH_INF, NEG_INF, POS_INF

_INT64 = np.iinfo(np.int64)
_INT32 = np.iinfo(np.int32)


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
    """Compute every node's bounds and depths from scratch, with counters
    (:func:`retrograde_arrays` over the whole graph, the terminal nodes as seeds), and
    write them into *g*, marking the committed nodes whose values changed. Works on
    partial graphs (frontier nodes have no events) and leaves the finality flags alone.
    """
    n, m = g.num_nodes, g.num_edges
    if not n:
        return
    state = np.frombuffer(g.state, dtype=np.uint8)
    term = np.flatnonzero(state == TERMINAL)
    del state
    value = np.frombuffer(g.low, dtype=np.int64)[term]
    zeros = np.zeros(term.size, np.int32)
    if m:
        parent = np.frombuffer(g.edge_parent, dtype=np.int32)
        child = np.frombuffer(g.edge_child, dtype=np.int32)
        count = np.frombuffer(g.child_count, dtype=np.int32)
    else:
        parent = child = np.zeros(0, np.int32)
        count = np.zeros(n, np.int32)
    found = retrograde_arrays(n, parent, child, count, term, value, value, zeros, zeros)
    del parent, child, count

    committed = g.committed_nodes
    changed = np.zeros(n, dtype=bool)
    for column, new, dtype in zip(
        (g.low, g.high, g.depth_low, g.depth_high),
        found,
        (np.int64, np.int64, np.int32, np.int32),
        strict=True,
    ):
        view = np.frombuffer(column, dtype=dtype)
        changed |= view != new
        view[:] = new
        del view
    del found
    if committed and not g.all_dirty:
        ids = np.flatnonzero(changed[:committed])
        if ids.size * 2 > committed:
            g.mark_all_dirty()
        else:
            g.dirty.update(ids.tolist())


def _reverse_edges(
    n: int,
    edge_parent: npt.NDArray[np.integer[Any]],
    edge_child: npt.NDArray[np.integer[Any]],
    child_count: npt.NDArray[np.int32],
) -> tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[np.int32]]:
    """The parents grouped by child (``rev_parent[rev_ptr[c]:rev_ptr[c + 1]]``) of the
    *n* nodes' edges, and each node's counter of children (its out-degree)."""
    m = int(edge_child.size)
    if not m:
        return np.zeros(0, dtype=np.int32), np.zeros(n + 1, dtype=np.int32), np.zeros(n, np.int32)
    rev_parent = np.asarray(edge_parent)[np.argsort(edge_child, kind="stable")].astype(
        np.int32 if n < _INT32.max else np.int64, copy=False
    )
    rev_ptr = np.zeros(n + 1, dtype=np.int32 if m < 1 << 31 else np.int64)
    np.cumsum(np.bincount(edge_child, minlength=n), out=rev_ptr[1:])
    return rev_parent, rev_ptr, np.array(child_count, dtype=np.int32)


def retrograde_arrays(
    num_nodes: int,
    edge_parent: npt.NDArray[np.integer[Any]],
    edge_child: npt.NDArray[np.integer[Any]],
    child_count: npt.NDArray[np.int32],
    fixed: npt.NDArray[np.integer[Any]],
    fixed_low: npt.NDArray[np.int64],
    fixed_high: npt.NDArray[np.int64],
    fixed_depth_low: npt.NDArray[np.int32],
    fixed_depth_high: npt.NDArray[np.int32],
) -> tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int32]
]:
    """Every node's low, high, depth_low and depth_high (the sentinels of
    :mod:`solver.values` for the infinities) of the graph given by its edges
    (``edge_parent[i] -> edge_child[i]``) and out-degrees, with counters.

    The nodes *fixed* have given values: terminal positions (``low = high``, depths 0)
    and, in a tiered solve, the positions of solved child tiers. They are the seeds: for
    each threshold ``t`` (their finite lows and highs and the negations, descending), the
    nodes with ``low >= t`` and those with ``high <= -t`` form the attractor sets of a
    win/loss game. A fixed node joins the first at ``t = low``, at level ``depth_low``,
    and the second at ``t = -high``, at level ``depth_high``; a node joins the first when
    some child is in the second, and the second when every child is in the first (a
    counter of children not yet in the first reaches 0). Since the sets only grow as
    ``t`` falls, one pass of counters over all thresholds computes every bound. Within a
    threshold, events are processed level by level (a bucket queue; at equal depth,
    ``low`` events first), which yields DESIGN §4's depths: ``depth_low`` = 1 + the
    smallest ``depth_high`` of a child attaining ``low``, ``depth_high`` = 1 + the
    largest ``depth_low`` over all children. Nodes that are neither fixed nor have edges
    (a partial graph's frontier) never join a set.
    """
    n = num_nodes
    fixed = np.asarray(fixed, dtype=np.int64)
    rev_parent, rev_ptr, counter = _reverse_edges(n, edge_parent, edge_child, child_count)
    # Depths in 32 bits (-1: infinite while computing); bounds too while the values fit
    # (the 32-bit extremes standing for the infinities), else in 64.
    finite_low = fixed_low != NEG_INF
    finite_high = fixed_high != POS_INF
    seed_values = np.concatenate([fixed_low[finite_low], fixed_high[finite_high]])
    maxd = np.full(n, -1, dtype=np.int32)
    wide = bool(seed_values.size) and int(np.abs(seed_values).max()) >= _INT32.max
    bound_type = np.int64 if wide else np.int32
    neg_inf, pos_inf = (NEG_INF, POS_INF) if wide else (_INT32.min, _INT32.max)
    new_low = np.full(n, neg_inf, dtype=bound_type)
    new_high = np.full(n, pos_inf, dtype=bound_type)
    new_dlow = np.full(n, -1, dtype=np.int32)
    new_dhigh = np.full(n, -1, dtype=np.int32)
    in_w = np.zeros(n, dtype=bool)
    in_l = np.zeros(n, dtype=bool)

    # The seeds: (node, level) joining W at threshold low, L at threshold -high.
    w_nodes, w_at, w_level = fixed[finite_low], fixed_low[finite_low], fixed_depth_low[finite_low]
    l_nodes, l_at = fixed[finite_high], -fixed_high[finite_high]
    l_level = fixed_depth_high[finite_high]
    thresholds = np.unique(np.concatenate([seed_values, -seed_values]))[::-1]
    for t in thresholds.tolist():
        wins: dict[int, list[np.ndarray]] = {}
        losses: dict[int, list[np.ndarray]] = {}
        _seed(wins, w_nodes, w_level, w_at == t)
        _seed(losses, l_nodes, l_level, l_at == t)
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
    del rev_parent, rev_ptr, counter, maxd, in_w, in_l

    if not wide:  # back to 64 bits, with the sentinels for the infinities
        low = np.where(new_low == neg_inf, np.int64(NEG_INF), new_low.astype(np.int64))
        high = np.where(new_high == pos_inf, np.int64(POS_INF), new_high.astype(np.int64))
    else:
        low, high = new_low.astype(np.int64), new_high.astype(np.int64)
    # Fixed nodes keep their given values (a fixed node with children is not expanded).
    low[fixed], high[fixed] = fixed_low, fixed_high
    depth_low = np.where(new_dlow < 0, np.int32(DEPTH_INF), new_dlow)
    depth_high = np.where(new_dhigh < 0, np.int32(DEPTH_INF), new_dhigh)
    depth_low[fixed], depth_high[fixed] = fixed_depth_low, fixed_depth_high
    return low, high, depth_low.astype(np.int32), depth_high.astype(np.int32)


def _seed(
    queue: dict[int, list[np.ndarray]],
    nodes: np.ndarray,
    levels: np.ndarray,
    mask: np.ndarray,
) -> None:
    """Put the seeds *nodes[mask]* into *queue* at their levels."""
    nodes, levels = nodes[mask], levels[mask]
    for level in np.unique(levels).tolist():
        queue.setdefault(level, []).append(nodes[levels == level])


def _fresh(batches: list[np.ndarray] | None, seen: np.ndarray) -> np.ndarray | None:
    """The distinct nodes of *batches* not yet in *seen*, sorted (``None`` if there are
    none). Sorting and dropping repeats is several times faster than numpy 2's
    hash-based :func:`numpy.unique` on these arrays."""
    if not batches:
        return None
    nodes = np.concatenate(batches)
    nodes = nodes[~seen[nodes]]
    if not nodes.size:
        return None
    nodes.sort()
    distinct = np.empty(nodes.size, dtype=bool)
    distinct[0] = True
    np.not_equal(nodes[1:], nodes[:-1], out=distinct[1:])
    fresh: np.ndarray = nodes[distinct]
    return fresh


def settle_all_flags(g: Graph) -> None:
    """Mark every bound final (a complete graph's fixpoint is exact everywhere)."""
    n = g.num_nodes
    if g.low_final.count(0) or g.high_final.count(0):
        g.low_final[:] = b"\x01" * n
        g.high_final[:] = b"\x01" * n
        if g.committed_nodes:
            g.mark_all_dirty()


__all__ = ["retrograde", "retrograde_arrays", "settle_all_flags"]
