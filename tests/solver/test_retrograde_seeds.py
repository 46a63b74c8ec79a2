"""retrograde_arrays and its seeds: with the terminal nodes as seeds it is the pass that
:func:`solver.full.retrograde.retrograde` was before it was factored out (a frozen copy below);
solving tier by tier, the solved child tiers' nodes seeded with their values, gives every
node the bounds and depths of the global pass; seeds with one infinite bound and depths
above 0 satisfy DESIGN §2's and §6's equations. Each property is also shown to catch a
wrongly seeded pass (the seeds all at level 0, or terminals that only join one set) on
some graph its strategy generates (:func:`hypothesis.find`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from solver.full.retrograde import retrograde, retrograde_arrays
from solver.graph import TERMINAL, Graph
from solver.values import DEPTH_INF, NEG_INF, POS_INF

Arrays = tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int32]
]
Solver = Callable[..., Arrays]
Seeds = dict[int, tuple[int, int, int, int]]  # node -> (low, high, depth_low, depth_high)
FIND = settings(max_examples=2000, database=None, derandomize=True)

# -- the pass before the refactoring, frozen (the reference for terminal seeds) ---------

_INT64 = np.iinfo(np.int64)
_INT32 = np.iinfo(np.int32)


def _gather(ptr: np.ndarray, values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    starts = ptr[nodes]
    lengths = ptr[nodes + 1] - starts
    total = int(lengths.sum())
    if not total:
        return values[:0]
    offsets = np.cumsum(lengths) - lengths
    return values[np.repeat(starts - offsets, lengths) + np.arange(total)]


def _fresh(batches: list[np.ndarray] | None, seen: np.ndarray) -> np.ndarray | None:
    if not batches:
        return None
    nodes = np.unique(np.concatenate(batches))
    nodes = nodes[~seen[nodes]]
    return nodes if nodes.size else None


def _frozen_retrograde(g: Graph) -> None:  # noqa: C901, PLR0915
    n, m = g.num_nodes, g.num_edges
    if not n:
        return
    state = np.frombuffer(g.state, dtype=np.uint8)
    low = np.frombuffer(g.low, dtype=np.int64)
    term = np.flatnonzero(state == TERMINAL)
    term_value = low[term]
    del state, low

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
            if not wide:
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


# -- graphs -----------------------------------------------------------------------------

Succ = list[list[int]]


@st.composite
def graphs(draw: st.DrawFn, max_nodes: int = 12) -> tuple[Succ, dict[int, int]]:
    """A random graph (cycles, self-loops and repeated moves allowed): 30% terminal nodes
    (values -2..2, sometimes scaled past 32 bits), 10% frontier nodes (no moves)."""
    n = draw(st.integers(1, max_nodes))
    scale = draw(st.sampled_from([1, 1, 1, 1 << 40]))
    succ: Succ = []
    leaf: dict[int, int] = {}
    for i in range(n):
        kind = draw(st.integers(0, 9))
        if kind < 3:
            leaf[i] = draw(st.integers(-2, 2)) * scale
        succ.append(
            draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)) if kind > 3 else []
        )
    return succ, leaf


@st.composite
def tiered_graphs(draw: st.DrawFn, max_nodes: int = 14) -> tuple[Succ, dict[int, int], list[int]]:
    """A graph as :func:`graphs` draws, its nodes in tiers 0..k, every move staying in its
    tier or going to a higher one (cycles only inside a tier)."""
    n = draw(st.integers(1, max_nodes))
    k = draw(st.integers(0, 3))
    tier = draw(st.lists(st.integers(0, k), min_size=n, max_size=n))
    succ: Succ = []
    leaf: dict[int, int] = {}
    for i in range(n):
        kind = draw(st.integers(0, 9))
        if kind < 3:
            leaf[i] = draw(st.integers(-2, 2))
        reach = [j for j in range(n) if tier[j] >= tier[i]]
        moves = st.lists(st.sampled_from(reach), min_size=1, max_size=3)
        succ.append(draw(moves) if kind > 3 else [])
    return succ, leaf, tier


def _edges(
    succ: Succ,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    counts = np.array([len(c) for c in succ], dtype=np.int32)
    parent = np.repeat(np.arange(len(succ), dtype=np.int64), counts)
    child = np.array([c for cs in succ for c in cs], dtype=np.int64)
    return parent, child, counts


def _solve(succ: Succ, seeds: Seeds, solver: Solver = retrograde_arrays) -> Arrays:
    parent, child, counts = _edges(succ)
    # Shuffled edges: the pass must not need them grouped by parent.
    order = np.random.default_rng(len(child)).permutation(len(child))
    fixed = np.array(sorted(seeds), dtype=np.int64)
    lo, hi, dl, dh = (np.array([seeds[i][j] for i in fixed.tolist()]) for j in range(4))
    return solver(
        len(succ),
        parent[order],
        child[order].astype(np.int32),
        counts,
        fixed,
        lo.astype(np.int64),
        hi.astype(np.int64),
        dl.astype(np.int32),
        dh.astype(np.int32),
    )


def _terminal_seeds(leaf: dict[int, int]) -> Seeds:
    return {i: (v, v, 0, 0) for i, v in leaf.items()}


def _columns(g: Graph) -> Arrays:
    return (
        np.frombuffer(g.low, dtype=np.int64).copy(),
        np.frombuffer(g.high, dtype=np.int64).copy(),
        np.frombuffer(g.depth_low, dtype=np.int32).copy(),
        np.frombuffer(g.depth_high, dtype=np.int32).copy(),
    )


def _graph(succ: Succ, leaf: dict[int, int]) -> Graph:
    g = Graph()
    for i in range(len(succ)):
        g.add_node(i, 0, leaf.get(i))
    for i, children in enumerate(succ):
        if children:
            g.set_children(i, [(str(j), c) for j, c in enumerate(children)])
    g.mark_committed()
    return g


def _same(a: Arrays, b: Arrays) -> bool:
    xs: list[np.ndarray] = [*a]
    ys: list[np.ndarray] = [*b]
    return all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(xs, ys, strict=True))


# Wrongly seeded passes: the properties below must tell them from the real one.


def _level_zero(
    n: int, p: Any, c: Any, k: Any, fixed: Any, lo: Any, hi: Any, dl: Any, dh: Any
) -> Arrays:
    """Every seed at level 0 (the fixed nodes' own depths reported as given)."""
    zeros = np.zeros(fixed.size, np.int32)
    low, high, depth_low, depth_high = retrograde_arrays(n, p, c, k, fixed, lo, hi, zeros, zeros)
    depth_low[fixed], depth_high[fixed] = dl, dh
    return low, high, depth_low, depth_high


def _wins_only(
    n: int, p: Any, c: Any, k: Any, fixed: Any, lo: Any, hi: Any, dl: Any, dh: Any
) -> Arrays:
    """Seeds that join W but never L (their highs reported as given)."""
    inf = np.full(fixed.size, POS_INF, np.int64)
    low, high, depth_low, depth_high = retrograde_arrays(n, p, c, k, fixed, lo, inf, dl, dh)
    high[fixed], depth_high[fixed] = hi, dh
    return low, high, depth_low, depth_high


# -- 1. terminal seeds: the pass as it was ---------------------------------------------


def _matches_frozen(succ: Succ, leaf: dict[int, int], solver: Solver = retrograde_arrays) -> bool:
    frozen, wrapped = _graph(succ, leaf), _graph(succ, leaf)
    _frozen_retrograde(frozen)
    retrograde(wrapped)
    expected = _columns(frozen)
    assert _same(_columns(wrapped), expected)
    assert (wrapped.dirty, wrapped.all_dirty) == (frozen.dirty, frozen.all_dirty)
    return _same(_solve(succ, _terminal_seeds(leaf), solver), expected)


@settings(max_examples=400, deadline=None)
@given(graphs())
def test_terminal_seeds_give_the_pass_before_the_refactoring(
    gl: tuple[Succ, dict[int, int]],
) -> None:
    assert _matches_frozen(*gl)


def test_terminal_seeds_tell_a_wrong_seeding() -> None:
    succ, leaf = find(
        graphs(), lambda gl: not _matches_frozen(gl[0], gl[1], solver=_wins_only), settings=FIND
    )
    assert leaf


def test_retrograde_on_an_empty_graph_and_one_without_edges() -> None:
    g = Graph()
    retrograde(g)
    assert _matches_frozen([[], [], []], {0: 1, 2: -(1 << 40)})


# -- 2. tier by tier ---------------------------------------------------------------------


def _tier_by_tier(
    succ: Succ, leaf: dict[int, int], tier: list[int], solver: Solver = retrograde_arrays
) -> Arrays:
    """Each tier solved alone, from the highest down, the tiers it reaches as seeds."""
    n = len(succ)
    found: Arrays = (
        np.full(n, NEG_INF, np.int64),
        np.full(n, POS_INF, np.int64),
        np.full(n, DEPTH_INF, np.int32),
        np.full(n, DEPTH_INF, np.int32),
    )
    columns: list[np.ndarray] = [*found]
    for t in sorted(set(tier), reverse=True):
        nodes = [i for i in range(n) if tier[i] == t]
        outside = sorted({c for i in nodes for c in succ[i] if tier[c] != t})
        local = {node: j for j, node in enumerate(nodes + outside)}
        local_succ = [[local[c] for c in succ[i]] for i in nodes] + [[] for _ in outside]
        seeds = {local[i]: (v, v, 0, 0) for i, v in leaf.items() if tier[i] == t}
        for c in outside:
            lo, hi, dl, dh = (int(column[c]) for column in columns)
            seeds[local[c]] = (lo, hi, dl, dh)
        solved: list[np.ndarray] = [*_solve(local_succ, seeds, solver)]
        for column, values in zip(columns, solved, strict=True):
            column[nodes] = values[: len(nodes)]
    return found


def _tiers_agree(
    g: tuple[Succ, dict[int, int], list[int]], solver: Solver = retrograde_arrays
) -> bool:
    succ, leaf, tier = g
    return _same(_tier_by_tier(succ, leaf, tier, solver), _solve(succ, _terminal_seeds(leaf)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiered_graphs())
def test_tier_by_tier_gives_the_global_bounds_and_depths(
    g: tuple[Succ, dict[int, int], list[int]],
) -> None:
    assert _tiers_agree(g)


def test_tier_by_tier_tells_seeds_put_at_level_0() -> None:
    succ, _, tier = find(
        tiered_graphs(), lambda g: not _tiers_agree(g, solver=_level_zero), settings=FIND
    )
    assert len(set(tier)) > 1


def test_tier_by_tier_tells_seeds_that_never_join_l() -> None:
    find(tiered_graphs(), lambda g: not _tiers_agree(g, solver=_wins_only), settings=FIND)


def test_a_chain_of_tiers_with_a_cycle_and_infinite_bounds() -> None:
    # Tier 2: a terminal (-1) and a two-node cycle with no way out. Tier 1: a cycle that
    # one side can leave for the terminal (3: low 1, high +inf; 4: low -inf, high -1) and
    # a node that can enter either. Tier 0: their parents, one on a self-loop.
    succ = [[4], [0, 3, 1], [5, 3], [4, 6], [3], [7, 6], [], [8], [7]]
    leaf = {6: -1}
    tier = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    g = (succ, leaf, tier)
    assert _tiers_agree(g)
    assert not _tiers_agree(g, solver=_level_zero)
    low, high, depth_low, depth_high = _solve(succ, _terminal_seeds(leaf))
    assert NEG_INF in low and POS_INF in high and (depth_low > 1).any()


# -- 3. seeds with one infinite bound, at depths above 0 ---------------------------------


def test_seeds_with_one_infinite_bound_and_positive_depths() -> None:
    inf = DEPTH_INF
    seeds: Seeds = {
        0: (2, POS_INF, 3, inf),  # wins 2 within 3 plies, the opponent can play on for ever
        1: (NEG_INF, -1, inf, 4),  # loses 1 or more within 4 plies, or plays on for ever
        9: (-1, -1, 0, 0),  # a terminal
    }
    succ = [
        [],  # 0
        [],  # 1
        [0],  # 2: high -2, after the 3 plies of 0's low
        [1],  # 3: low 1 in 5 plies
        [0, 1],  # 4: low 1 in 5 plies, high +inf
        [2, 3],  # 5: low 2 in 5 plies (via 2), high +inf (3 can play on)
        [0, 3],  # 6: high -1 in 1 + max(3, 5) = 6 plies, low -inf
        [6, 11],  # 7: low 1 in 7 plies (via 6), high +inf via the self-loop of 11
        [1, 10],  # 8: low 1: via 10 in 3 plies rather than via 1 in 5
        [],  # 9
        [12],  # 10: high -1 in 2 plies
        [11, 6],  # 11: low 1 in 7 plies (via 6), high +inf (the self-loop)
        [9],  # 12: low 1 in 1 ply
    ]
    expected = {
        2: (NEG_INF, -2, inf, 4),
        3: (1, POS_INF, 5, inf),
        4: (1, POS_INF, 5, inf),
        5: (2, POS_INF, 5, inf),
        6: (NEG_INF, -1, inf, 6),
        7: (1, POS_INF, 7, inf),
        8: (1, POS_INF, 3, inf),
        10: (-1, -1, 2, 2),
        11: (1, POS_INF, 7, inf),
        12: (1, 1, 1, 1),
    }
    found = _solve(succ, seeds)
    rows = {i: tuple(int(column[i]) for column in found) for i in range(len(succ))}
    assert rows == {**seeds, **expected}
    _check_equations(succ, seeds, found)
    assert not _same(_solve(succ, seeds, _level_zero), found)
    assert not _same(_solve(succ, seeds, _wins_only), found)


def _check_equations(succ: Succ, seeds: Seeds, found: Arrays) -> None:
    """The bounds are the fixpoint of DESIGN §2's equations started from the infinities
    (the seeds held at their values), the depths satisfy §6's."""
    n = len(succ)
    low, high, depth_low, depth_high = (column.tolist() for column in found)
    lo, hi = [NEG_INF] * n, [POS_INF] * n
    for i, (v, w, _, _) in seeds.items():
        lo[i], hi[i] = v, w
    changed = True
    while changed:
        changed = False
        for i in range(n):
            if i not in seeds and succ[i]:
                new = max(-hi[c] for c in succ[i]), max(-lo[c] for c in succ[i])
                changed |= new != (lo[i], hi[i])
                lo[i], hi[i] = new
    assert (low, high) == (lo, hi)
    for i in range(n):
        if i in seeds:
            assert (low[i], high[i], depth_low[i], depth_high[i]) == seeds[i]
            continue
        want_low = want_high = DEPTH_INF
        if low[i] != NEG_INF:
            want_low = 1 + min(depth_high[c] for c in succ[i] if -high[c] == low[i])
        if high[i] != POS_INF:
            want_high = 1 + max(depth_low[c] for c in succ[i])
        assert (depth_low[i], depth_high[i]) == (want_low, want_high), i


@st.composite
def seeded_graphs(draw: st.DrawFn, max_nodes: int = 12) -> tuple[Succ, Seeds]:
    """A random graph whose fixed nodes (30%) have any bounds ``low <= high`` in -2..2 or
    infinite and depths 0..6 (``DEPTH_INF`` with an infinite bound)."""
    n = draw(st.integers(1, max_nodes))
    succ: Succ = []
    seeds: Seeds = {}
    for i in range(n):
        kind = draw(st.integers(0, 9))
        if kind < 3:
            lo = draw(st.sampled_from([NEG_INF, -2, -1, 0, 1, 2]))
            hi = draw(st.sampled_from([x for x in [-2, -1, 0, 1, 2, POS_INF] if x >= lo]))
            dl = DEPTH_INF if lo == NEG_INF else draw(st.integers(0, 6))
            dh = DEPTH_INF if hi == POS_INF else draw(st.integers(0, 6))
            seeds[i] = (lo, hi, dl, dh)
        succ.append(
            draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)) if kind > 3 else []
        )
    return succ, seeds


@settings(max_examples=400, deadline=None)
@given(seeded_graphs())
def test_any_seeds_satisfy_the_equations(g: tuple[Succ, Seeds]) -> None:
    succ, seeds = g
    _check_equations(succ, seeds, _solve(succ, seeds))


def _satisfies(g: tuple[Succ, Seeds], solver: Solver) -> bool:
    try:
        _check_equations(g[0], g[1], _solve(g[0], g[1], solver))
    except AssertionError:
        return False
    return True


def test_the_equations_tell_a_wrong_seeding() -> None:
    find(seeded_graphs(), lambda g: not _satisfies(g, _level_zero), settings=FIND)
    find(seeded_graphs(), lambda g: not _satisfies(g, _wins_only), settings=FIND)
