"""Oracle tests for the negamax-graph solver on random cyclic graphs (hypothesis).

Every property is checked against an independent implementation in ``tests/oracles.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.errors import InvalidParameterError, InvalidPositionError, SolveError
from solver.game import Game
from solver.games import get_game
from solver.graph import EXPANDED, TERMINAL, Graph
from solver.negamax import solve
from solver.run import UNTIL, Until
from solver.store import Batch, MemoryStore, Progress, RunOptions
from solver.strategy import Child, choose
from solver.values import DEPTH_INF, NEG_INF, POS_INF, clamp, decode
from tests.oracles import (
    INF,
    ExplicitGame,
    brute_bounds,
    brute_finality,
    check_low_strategy,
    draw_value,
    public,
)


@st.composite
def graphs(draw: st.DrawFn, max_nodes: int = 10) -> tuple[list[list[int]], dict[int, int]]:
    """A random directed graph (cycles and self-loops allowed) with random leaf values."""
    n = draw(st.integers(1, max_nodes))
    succ: list[list[int]] = []
    leaf: dict[int, int] = {}
    for i in range(n):
        if draw(st.integers(0, 9)) < 3:
            leaf[i] = draw(st.integers(-3, 3))
            succ.append([])
        else:
            succ.append(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)))
    return succ, leaf


@st.composite
def dags(draw: st.DrawFn, max_nodes: int = 12) -> tuple[list[list[int]], dict[int, int]]:
    """A random acyclic graph (moves only to higher-numbered nodes; transpositions and
    repeated moves allowed) with random leaf values."""
    n = draw(st.integers(1, max_nodes))
    succ: list[list[int]] = []
    leaf: dict[int, int] = {}
    for i in range(n):
        if i == n - 1 or draw(st.integers(0, 9)) < 3:
            leaf[i] = draw(st.integers(-3, 3))
            succ.append([])
        else:
            succ.append(draw(st.lists(st.integers(i + 1, n - 1), min_size=1, max_size=4)))
    return succ, leaf


def pub(v: int) -> float:
    return -INF if v <= NEG_INF else INF if v >= POS_INF else v


@dataclass
class Snap:
    keys: list[int]
    low: list[float]
    high: list[float]
    lf: list[bool]
    hf: list[bool]
    expanded: set[int]


def snapshot(g: Graph) -> Snap:
    return Snap(
        keys=list(g.keys),
        low=[pub(v) for v in g.low],
        high=[pub(v) for v in g.high],
        lf=[bool(x) for x in g.low_final],
        hf=[bool(x) for x in g.high_final],
        expanded={g.keys[i] for i in range(g.num_nodes) if g.state[i] == EXPANDED},
    )


class SnapshotStore(MemoryStore):
    """A memory store that records the graph at every commit."""

    def __init__(self) -> None:
        super().__init__()
        self.snaps: list[Snap] = []

    def commit(self, batch: Batch, progress: Progress) -> None:
        graph = batch.graph
        # every node column has an entry per node, every edge column one per edge
        n, m = graph.num_nodes, graph.num_edges
        assert {
            len(c)
            for c in (
                graph.keys,
                graph.low,
                graph.high,
                graph.low_final,
                graph.high_final,
                graph.depth_low,
                graph.depth_high,
                graph.dist,
                graph.first_edge,
                graph.child_count,
                graph.rev_head,
            )
        } == {n}
        assert {len(c) for c in (graph.edge_parent, graph.edge_move, graph.rev_next)} == {m}
        self.snaps.append(snapshot(graph))
        super().commit(batch, progress)


def graph_of(store: MemoryStore) -> Graph:
    (g,) = store.graphs.values()
    return g


@settings(max_examples=400, deadline=None)
@given(graphs(), st.integers(1, 3), st.booleans(), st.sampled_from(UNTIL))
def test_partial_solve_matches_brute_force_at_every_batch(
    gl: tuple[list[list[int]], dict[int, int]], batch: int, ranged: bool, until: Until
) -> None:
    check_partial_solve(gl, batch, ranged, until, acyclic=False)


@settings(max_examples=400, deadline=None)
@given(dags(), st.integers(1, 3), st.booleans(), st.sampled_from(UNTIL))
def test_acyclic_partial_solve_matches_brute_force_at_every_batch(
    gl: tuple[list[list[int]], dict[int, int]], batch: int, ranged: bool, until: Until
) -> None:
    # A game that declares itself acyclic gets the recursive search and no finality
    # refreshes: the same oracle, batch by batch.
    check_partial_solve(gl, batch, ranged, until, acyclic=True)


def check_partial_solve(
    gl: tuple[list[list[int]], dict[int, int]],
    batch: int,
    ranged: bool,
    until: Until,
    *,
    acyclic: bool,
) -> None:
    succ, leaf = gl
    # With a value range (every position's value lies in it) bounds at its edges are final.
    # Values flip sign from ply to ply, so the range must hold the terminal values and
    # their negations: (min, max) of the leaves alone is no value range (leaves worth 0
    # and 1 give a position worth -1 below 0) and made the oracle's finality unsound.
    value_range = None
    if ranged and leaf:
        lo, hi = min(leaf.values()), max(leaf.values())
        value_range = (min(lo, -hi), max(hi, -lo))
    game = ExplicitGame(succ, leaf, value_range, acyclic=acyclic)
    full_low, full_high = brute_bounds(succ, leaf)
    store = SnapshotStore()
    result = solve(game, store=store, batch_size=batch, until=until)
    assert result.complete
    if until == "bounds":
        assert result.low_final and result.high_final
        assert (result.low, result.high) == (public(full_low[0]), public(full_high[0]))
    else:  # the value under the repetition rule (0) is decided
        assert result.repetition_value == clamp(
            0,
            decode(public(full_low[0]), upper=False),
            decode(public(full_high[0]), upper=True),
        )
        assert (
            result.low_final
            and result.low is not None
            and result.low >= 0
            or result.high_final
            and result.high is not None
            and result.high <= 0
            or result.low_final
            and result.high_final
        )
    seen_final_low: dict[int, float] = {}
    seen_final_high: dict[int, float] = {}
    for number, snap in enumerate(store.snaps):
        last = number == len(store.snaps) - 1
        low, high = brute_bounds(succ, leaf, snap.expanded)
        lf, hf = brute_finality(succ, low, high, snap.expanded, value_range)
        for i, k in enumerate(snap.keys):
            # bounds are the exact fixpoint of the partial graph
            assert (snap.low[i], snap.high[i]) == (low[k], high[k]), (k, snap)
            # finality is the greatest fixpoint of the rules at the end of the run; after
            # each batch a flag shown final is final (some may lag until the next refresh)
            if last:
                assert (snap.lf[i], snap.hf[i]) == (lf[k], hf[k]), (k, snap)
            assert lf[k] or not snap.lf[i], (k, snap)
            assert hf[k] or not snap.hf[i], (k, snap)
            # a final bound is the bound of the fully expanded graph ...
            if snap.lf[i]:
                assert snap.low[i] == full_low[k]
                seen_final_low.setdefault(k, snap.low[i])
            if snap.hf[i]:
                assert snap.high[i] == full_high[k]
                seen_final_high.setdefault(k, snap.high[i])
        # ... and a flag once final stays final
        index = {k: i for i, k in enumerate(snap.keys)}
        for k in seen_final_low:
            assert snap.lf[index[k]], f"low of {k} lost finality"
        for k in seen_final_high:
            assert snap.hf[index[k]], f"high of {k} lost finality"


def strategy_children(g: Graph, n: int) -> list[Child[int]]:
    out = []
    for order, e in enumerate(g.children(n)):
        c = g.edge_child[e]
        out.append(
            Child(
                order,
                g.edge_move[e],
                c,
                g.low[c],
                g.high[c],
                g.depth_low[c],
                g.depth_high[c],
                g.state[c] == TERMINAL,
                g.state[c] == EXPANDED,
            )
        )
    return out


@settings(max_examples=300, deadline=None)
@given(graphs(max_nodes=9))
def test_full_solve_bounds_depths_and_strategies(
    gl: tuple[list[list[int]], dict[int, int]],
) -> None:
    succ, leaf = gl
    game = ExplicitGame(succ, leaf)
    store = MemoryStore()
    result = solve(game, store=store, full=True)
    assert result.complete
    g = graph_of(store)
    low, high = brute_bounds(succ, leaf)
    draw = draw_value(succ, leaf)
    for n in range(g.num_nodes):
        k = g.keys[n]
        assert (pub(g.low[n]), pub(g.high[n])) == (low[k], high[k])
        assert g.low_final[n] and g.high_final[n]
        # the value when endless play is a draw
        assert clamp(0, g.low[n], g.high[n]) == draw[k]
        # depths are finite exactly where the bounds are
        assert (g.depth_low[n] < DEPTH_INF) == (g.low[n] > NEG_INF)
        assert (g.depth_high[n] < DEPTH_INF) == (g.high[n] < POS_INF)
    # the low strategy never loops and guarantees `low` within `depth_low` plies
    for n in range(g.num_nodes):
        if g.low[n] <= NEG_INF:
            continue
        pick: dict[int, int] = {}
        for m in range(g.num_nodes):
            if g.state[m] == EXPANDED and g.low[m] > NEG_INF:
                best = choose(strategy_children(g, m), "low", g.low[m])
                assert best is not None
                pick[g.keys[m]] = g.keys[best.node]
        check_low_strategy(succ, leaf, g.keys[n], pick, g.low[n], g.depth_low[n])


class ReloadingStore(MemoryStore):
    """A memory store that, like a database, hands each run a freshly loaded copy of the
    committed graph (nodes in id order, edges grouped by parent)."""

    def open(self, game: Game, run: RunOptions) -> Graph:
        g = super().open(game, run)
        h = Graph()
        for n in range(g.num_nodes):
            h.add_node(g.keys[n], g.dist[n], None)
            h.state[n] = g.state[n]
            h.low[n], h.high[n] = g.low[n], g.high[n]
            h.low_final[n], h.high_final[n] = g.low_final[n], g.high_final[n]
            h.depth_low[n], h.depth_high[n] = g.depth_low[n], g.depth_high[n]
        for p in range(g.num_nodes):
            for e in g.children(p):
                h.add_edge_raw(p, g.edge_child[e], g.edge_move[e])
        h.mark_committed()
        (ident,) = self.graphs
        self.graphs[ident] = h
        return h


def graph_state(g: Graph) -> list[tuple[object, ...]]:
    return [
        (
            g.keys[n],
            g.low[n],
            g.high[n],
            g.low_final[n],
            g.high_final[n],
            g.depth_low[n],
            g.depth_high[n],
            g.state[n],
            g.dist[n],
            [(g.edge_move[e], g.edge_child[e]) for e in g.children(n)],
        )
        for n in range(g.num_nodes)
    ]


@settings(max_examples=200, deadline=None)
@given(graphs(), st.lists(st.integers(1, 5), min_size=1, max_size=20), st.booleans())
def test_interrupted_solves_resume_to_the_same_graph(
    gl: tuple[list[list[int]], dict[int, int]], budgets: list[int], full: bool
) -> None:
    succ, leaf = gl
    game = ExplicitGame(succ, leaf)
    once = MemoryStore()
    solve(game, store=once, full=full, batch_size=1)
    pieces = ReloadingStore()
    for budget in [*budgets, None]:
        r = solve(game, store=pieces, full=full, batch_size=1, max_expansions=budget)
        if r.complete:
            break
    assert graph_state(graph_of(once)) == graph_state(graph_of(pieces))


def test_resumed_connect_four_matches_one_run() -> None:
    game = get_game("connect-four", width=4, height=3)
    once = MemoryStore()
    solve(game, store=once)
    pieces = ReloadingStore()
    runs = 0
    while not solve(game, store=pieces, max_expansions=100).complete:
        runs += 1
    assert runs >= 5
    assert graph_state(graph_of(once)) == graph_state(graph_of(pieces))


def test_cycle_without_exit_has_infinite_bounds() -> None:
    game = ExplicitGame([[1], [0]], {})
    r = solve(game, full=True)
    assert (r.low, r.high, r.low_final, r.high_final) == (None, None, True, True)
    assert r.value is None and r.repetition_value == 0
    assert (r.depth_low, r.depth_high) == (None, None)


def test_loop_with_exits_has_distinct_bounds() -> None:
    # A (0) and B (1) move to each other; A can exit to C (2), worth -1 to A, and B can
    # exit to D (3), worth -2 to B. If endless play were -inf for A, A takes the exit
    # (low -1); if it were +inf for A, B must take his (high 2); a draw rule gives 0.
    game = ExplicitGame([[1, 2], [0, 3], [], []], {2: 1, 3: 2})
    r = solve(game, full=True)
    assert (r.low, r.high, r.low_final, r.high_final) == (-1, 2, True, True)
    assert r.value is None and r.repetition_value == 0
    assert (r.depth_low, r.depth_high) == (1, 2)  # A exits; or A loops and B exits


def test_bad_options_are_rejected() -> None:
    game = ExplicitGame([[]], {0: 1})
    with pytest.raises(InvalidParameterError):
        solve(game, max_expansions=-1)
    with pytest.raises(InvalidParameterError):
        solve(game, max_seconds=-0.5)
    with pytest.raises(InvalidParameterError):
        solve(game, batch_size=0)
    with pytest.raises(InvalidPositionError):
        solve(game, root="seven")


def test_terminal_root_needs_no_expansion() -> None:
    r = solve(ExplicitGame([[]], {0: 4}))
    assert (r.low, r.high, r.expansions, r.complete) == (4, 4, 0, True)


class SeededGame(ExplicitGame):
    """An explicit game whose tablebase starts from nodes 0 and 3."""

    def tablebase_positions(self) -> list[int]:
        return [3, 0, 3]


def test_full_solve_seeds_the_tablebase_positions() -> None:
    # 0 -> 1 (leaf); 3 -> 4 (leaf); 2 is unreachable from both; 3 is not reachable from 0
    game = SeededGame([[1], [], [1], [4], []], {1: 1, 4: -1})
    store = MemoryStore()
    r = solve(game, full=True, store=store)
    g = graph_of(store)
    assert r.complete and sorted(g.keys) == [0, 1, 3, 4]
    assert list(g.keys[:2]) == [0, 3]  # the root, then the seeds in the game's order
    assert (g.low[g.index[3]], g.low[g.index[0]]) == (1, -1)
    assert g.dist[g.index[3]] == 0


def test_a_game_that_declares_itself_acyclic_and_repeats_gets_a_clear_error() -> None:
    # 0 -> 1 -> 0 is a cycle; 1 may also move to a terminal position worth 1 to the mover
    # there. Without the declaration the general search copes; with it, the recursive
    # search meets 0 on its own path and says so instead of recursing forever.
    r = solve(ExplicitGame([[1], [0, 2], []], {2: 1}))
    assert (r.low, r.high, r.low_final, r.high_final) == (None, 1, True, True)
    with pytest.raises(SolveError, match="'0' repeats, but the game declares itself acyclic"):
        solve(ExplicitGame([[1], [0, 2], []], {2: 1}, acyclic=True))
