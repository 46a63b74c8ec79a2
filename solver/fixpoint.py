"""Bounds and finality (DESIGN §2-§3): the two fixpoints every other part relies on.

Bounds are the least fixpoint of ``low(n) = max -high(c)`` and ``high(n) = max -low(c)``
over an expanded node's children (a leaf keeps ``[-inf, +inf]``, a terminal its value);
:func:`children_bounds` is that rule and :func:`update_bounds` restores the fixpoint after
expansions. Finality is the greatest fixpoint of the article's three rules, written once
as the predicates :func:`low_final_by_rules` and :func:`high_final_by_rules`;
:func:`propagate_finality` applies them upwards from changed nodes (exact when the game is
acyclic) and :func:`update_finality` computes the exact greatest fixpoint over a region
(needed around cycles). :func:`decided` is the test ``--until value`` stops on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from solver.graph import EXPANDED, Graph, NodeId
from solver.values import DEPTH_INF, NEG_INF, POS_INF


def decided(rep: int, low: int, high: int, low_final: bool, high_final: bool) -> bool:
    """Whether ``clamp(rep, low, high)`` — the value when endless play is worth *rep* — can
    no longer change: both bounds final, or a final bound on the far side of *rep*."""
    return (low_final and high_final) or (low_final and low >= rep) or (high_final and high <= rep)


def expanded_nodes(g: Graph) -> set[NodeId]:
    state = g.state
    return {n for n in range(g.num_nodes) if state[n] == EXPANDED}


def children_bounds(g: Graph, n: NodeId) -> tuple[int, int]:
    """``(max -high(c), max -low(c))`` over the children ``c`` of expanded *n*: the bounds
    the rules give it from its children's."""
    low, high, edge_child = g.low, g.high, g.edge_child
    lo = hi = NEG_INF
    f = g.first_edge[n]
    for e in range(f, f + g.child_count[n]):
        c = edge_child[e]
        v = -high[c]
        if v > lo:
            lo = v
        v = -low[c]
        if v > hi:
            hi = v
    return lo, hi


def children_depths(g: Graph, n: NodeId) -> tuple[int, int]:
    """The depths the retrograde pass gives expanded *n* of an acyclic graph from its
    bounds and its children's: ``depth_low`` = 1 + the smallest ``depth_high`` of a child
    attaining ``low``, ``depth_high`` = 1 + the largest ``depth_low`` of all children
    (:func:`solver.full.retrograde.retrograde_arrays`); an infinite bound has an infinite
    depth."""
    low, high, depth_low, depth_high, edge_child = (
        g.low,
        g.high,
        g.depth_low,
        g.depth_high,
        g.edge_child,
    )
    lo, hi = low[n], high[n]
    f = g.first_edge[n]
    children = range(f, f + g.child_count[n])
    dl = dh = DEPTH_INF
    if lo != NEG_INF:
        best = DEPTH_INF
        for e in children:
            c = edge_child[e]
            if -high[c] == lo and depth_high[c] < best:
                best = depth_high[c]
        if best != DEPTH_INF:
            dl = best + 1
    if hi != POS_INF:
        worst = -1
        for e in children:
            d = depth_low[edge_child[e]]
            if d > worst:
                worst = d
        if 0 <= worst != DEPTH_INF:
            dh = worst + 1
    return dl, dh


def update_depths(g: Graph, seeds: Iterable[NodeId]) -> None:
    """Re-establish the depths of an acyclic graph whose bounds are the fixpoint, after
    the nodes *seeds* (expanded or changed) moved: a worklist re-evaluates each node whose
    depths changed's parents (a mapped graph's hidden ones made resident first)."""
    depth_low, depth_high, state = g.depth_low, g.depth_high, g.state
    queue = deque(n for n in dict.fromkeys(seeds) if state[n] == EXPANDED)
    queued = set(queue)
    while queue:
        n = queue.popleft()
        queued.discard(n)
        dl, dh = children_depths(g, n)
        if dl == depth_low[n] and dh == depth_high[n]:
            continue
        depth_low[n] = dl
        depth_high[n] = dh
        g.touch(n)
        _requeue_parents(g, n, queue, queued)


def update_bounds(g: Graph, seeds: list[NodeId]) -> list[NodeId]:
    """Re-establish the bounds fixpoint after *seeds* were expanded; return the nodes
    whose bounds changed.

    Starting from the previous fixpoint is correct because every change only tightens
    bounds (lows rise, highs fall): a worklist re-evaluates each changed node's parents.
    """
    low, high = g.low, g.high
    committed, dirty = g.committed_nodes, g.dirty
    queue = deque(seeds)
    queued = set(seeds)
    changed: list[NodeId] = []
    while queue:
        n = queue.popleft()
        queued.discard(n)
        lo, hi = children_bounds(g, n)
        if lo != low[n] or hi != high[n]:
            low[n] = lo
            high[n] = hi
            changed.append(n)
            if n < committed:
                dirty.add(n)
            _requeue_parents(g, n, queue, queued)
    return changed


def with_parents(g: Graph, nodes: Iterable[NodeId]) -> list[NodeId]:
    """*nodes*, each followed by its parents: where flags may follow once the bounds of
    *nodes* changed (the seeds of :func:`propagate_finality`)."""
    out: list[NodeId] = []
    for n in nodes:
        out.append(n)
        out.extend(g.parents(n))
    return out


def low_final_by_rules(g: Graph, n: NodeId, vmax: int = POS_INF) -> bool:
    """Whether the rules make ``low(n)`` of expanded *n* final, given its children's flags.

    ``low(n)`` is final when ``low(n) = high(n)``, when it is at the top of the game's
    value range (*vmax*: it cannot rise), or when every child ``c`` that could still
    raise it (``-low(c) > low(n)``) has a final ``high(c)`` (so ``-high(c)``, what ``c``
    gives ``n`` for sure, is settled and ``-low(c)`` can only fall to it).
    """
    lo, low, hf, edge_child = g.low[n], g.low, g.high_final, g.edge_child
    if lo == g.high[n] or lo >= vmax:
        return True
    f = g.first_edge[n]
    for e in range(f, f + g.child_count[n]):
        c = edge_child[e]
        if not hf[c] and -low[c] > lo:  # the rule's "a child could still raise it"
            return False
    return True


def high_final_by_rules(g: Graph, n: NodeId, vmin: int = NEG_INF) -> bool:
    """Whether the rules make ``high(n)`` of expanded *n* final, given its children's
    flags.

    ``high(n)`` is final when ``low(n) = high(n)``, when it is at the bottom of the game's
    value range (*vmin*: it cannot fall), or when some child ``c`` with a final ``low(c)``
    gives exactly ``-low(c) = high(n)`` (no expansion can take that away).
    """
    hi, low, lf, edge_child = g.high[n], g.low, g.low_final, g.edge_child
    if hi == g.low[n] or hi <= vmin:
        return True
    f = g.first_edge[n]
    for e in range(f, f + g.child_count[n]):
        c = edge_child[e]
        if lf[c] and -low[c] == hi:  # the rule's "a child holds it for sure"
            return True
    return False


def propagate_finality(
    g: Graph, seeds: Iterable[NodeId], *, vmin: int = NEG_INF, vmax: int = POS_INF
) -> int:
    """Set flags that the rules make final given the children's current flags, starting at
    *seeds* and moving up to parents whenever a flag turns final; return the work done.

    This is the cheap, local half of finality: it finds everything that follows from
    already-final children (all of it in an acyclic graph) but not flags that hold only
    by the greatest fixpoint around a cycle — :func:`update_finality` finds those. Every
    flag it sets is final in the greatest fixpoint too, so it is always sound.

    *vmin* and *vmax* bound every value of the game (its ``value_range``): a low bound at
    *vmax* cannot rise and a high bound at *vmin* cannot fall, so both are final.
    """
    state = g.state
    lf, hf = g.low_final, g.high_final
    child_count = g.child_count
    committed, dirty = g.committed_nodes, g.dirty
    queue = deque(n for n in dict.fromkeys(seeds) if state[n] == EXPANDED)
    queued = set(queue)
    work = 0
    while queue:
        n = queue.popleft()
        queued.discard(n)
        l_ok, h_ok = lf[n], hf[n]
        if l_ok and h_ok:
            continue
        work += child_count[n] + 1
        if not l_ok:
            l_ok = low_final_by_rules(g, n, vmax)
        if not h_ok:
            h_ok = high_final_by_rules(g, n, vmin)
        if l_ok != lf[n] or h_ok != hf[n]:
            lf[n] = l_ok
            hf[n] = h_ok
            if n < committed:
                dirty.add(n)
            _requeue_parents(g, n, queue, queued)
    return work


def _requeue_parents(g: Graph, n: NodeId, queue: deque[NodeId], queued: set[NodeId]) -> None:
    """Queue the expanded parents of *n* not in *queued*: what they read of *n* (its
    bounds, depths or flags) just changed. A mapped graph's hidden *n* is revealed first,
    so that its parents are resident, their edges too."""
    reveal = g.reveal
    if reveal is not None and g.hidden[n]:
        reveal(n)
    state, edge_parent, rev_next = g.state, g.edge_parent, g.rev_next
    e = g.rev_head[n]
    while e >= 0:
        p = edge_parent[e]
        if p not in queued and state[p] == EXPANDED:
            queued.add(p)
            queue.append(p)
        e = rev_next[e]


def update_finality(
    g: Graph,
    low_candidates: Iterable[NodeId],
    high_candidates: Iterable[NodeId],
    *,
    vmin: int = NEG_INF,
    vmax: int = POS_INF,
) -> None:
    """Recompute finality flags as a greatest fixpoint over the candidate (node, bound)
    pairs; every other flag is taken as it is.

    All candidate flags start final, then a flag is dropped wherever its rule fails and the
    drop is propagated to the parents whose rules read it, until nothing changes. The
    result is exact for the candidates when every non-final flag they depend on is itself a
    candidate (true of the region :func:`walk` returns, and of all expanded nodes); flags
    once final stay final, so final flags never need to be candidates.

    The rules are :func:`low_final_by_rules` and :func:`high_final_by_rules`.
    """
    low, high = g.low, g.high
    lf, hf = g.low_final, g.high_final
    lows = _assume_final(g, lf, low_candidates)
    highs = _assume_final(g, hf, high_candidates)
    order = sorted(lows | highs)
    queue = deque(order)
    queued = set(order)
    while queue:
        n = queue.popleft()
        queued.discard(n)
        if low[n] == high[n]:
            continue
        if lf[n] and n in lows and not low_final_by_rules(g, n, vmax):
            lf[n] = 0
            # parents' high-finality reads this low flag
            _queue_readers(g, n, hf, highs, queue, queued)
        if hf[n] and n in highs and not high_final_by_rules(g, n, vmin):
            hf[n] = 0
            # parents' low-finality reads this high flag
            _queue_readers(g, n, lf, lows, queue, queued)
    _touch_final(g, lf, lows)
    _touch_final(g, hf, highs)


def _assume_final(g: Graph, flags: bytearray, candidates: Iterable[NodeId]) -> set[NodeId]:
    """The expanded nodes of *candidates* whose flag in *flags* is not final, each flag
    set final (the greatest fixpoint's start)."""
    state = g.state
    out = {n for n in candidates if state[n] == EXPANDED and not flags[n]}
    for n in out:
        flags[n] = 1
    return out


def _queue_readers(
    g: Graph,
    n: NodeId,
    flags: bytearray,
    members: set[NodeId],
    queue: deque[NodeId],
    queued: set[NodeId],
) -> None:
    """Queue the parents of *n* in *members* not in *queued* whose flag in *flags* is
    still final: their rule reads the flag of *n* that just dropped."""
    edge_parent, rev_next = g.edge_parent, g.rev_next
    e = g.rev_head[n]
    while e >= 0:
        p = edge_parent[e]
        if flags[p] and p in members and p not in queued:
            queued.add(p)
            queue.append(p)
        e = rev_next[e]


def _touch_final(g: Graph, flags: bytearray, candidates: set[NodeId]) -> None:
    """Note as changed the committed *candidates* whose flag in *flags* stayed final."""
    committed, dirty = g.committed_nodes, g.dirty
    for n in candidates:
        if flags[n] and n < committed:
            dirty.add(n)
