"""Full mode (DESIGN §4): once every reachable position is expanded (breadth first, in
bulk: :mod:`solver.expand`), one retrograde pass computes bounds and depths with
counters, the way tablebases are made. :func:`retrograde` also gives the partial solver
its depths at the end of each run.

Whole-graph passes with numpy over the graph's typed arrays, viewed in place with
:func:`numpy.frombuffer` (views are always dropped before a column grows: a Python
``array`` refuses to resize while it is exported).
"""

from __future__ import annotations

import numpy as np

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


__all__ = ["retrograde", "settle_all_flags"]
