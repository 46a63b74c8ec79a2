"""A partial chance solve stopped by budgets and continued retraces the uninterrupted one
(solver/chance/partial.py): the same positions with the same ids, states, bounds, flags,
exact fractions, expected plies and moves, on random games (with and without cycles)
and on Pig; a stored graph the schedule did not make is continued as it is."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver import solve
from solver.chance.bounds import solve_graph
from solver.chance.build import expand_all, seeded_builder
from solver.errors import SolveError
from solver.game import Game
from solver.games.pig import Pig
from solver.graph import Graph
from solver.run import SolveResult
from solver.store import MemoryStore
from tests.oracles import ExplicitChanceGame
from tests.solver.test_chance import RANGE, chance_games


def snapshot(store: MemoryStore) -> tuple[Any, ...]:
    """Everything the store holds of its one variant, by node id."""
    (g,) = store.graphs.values()
    c = g.chance
    moves = [[(g.edge_move[e], g.edge_child[e]) for e in g.children(v)] for v in range(len(g))]
    return (
        list(g.keys),
        bytes(g.state),
        list(g.low),
        list(g.high),
        bytes(g.low_final),
        bytes(g.high_final),
        list(g.dist),
        moves,
        c.low.tolist(),
        c.high.tolist(),
        c.low_exact,
        c.high_exact,
        c.player.tolist(),
        c.chance.tolist(),
        c.plies,
        c.plies_exact,
    )


@contextmanager
def first_batch(size: int | None) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        if size is not None:
            mp.setattr("solver.chance.solve.FIRST_BATCH", size)
        yield


def in_budgets(game: Game, budget: int, most: int = 25) -> tuple[MemoryStore, list[SolveResult]]:
    """Partial runs of *budget* expansions each until one is complete."""
    store = MemoryStore()
    runs: list[SolveResult] = []
    while not runs or not runs[-1].complete:
        assert len(runs) < most
        runs.append(solve(game, store=store, max_expansions=budget))
        assert runs[-1].expansions <= budget
        assert runs[-1].complete or (runs[-1].ended_by, runs[-1].status) == (
            "expansions",
            "budget",
        )
    return store, runs


def assert_budgets_retrace(game: Game, budget: int, batch: int | None) -> list[SolveResult]:
    with first_batch(batch):
        whole = MemoryStore()
        uninterrupted = solve(game, store=whole)
        store, runs = in_budgets(game, budget)
    assert uninterrupted.complete
    assert sum(r.expansions for r in runs) == uninterrupted.expansions
    assert (runs[-1].low, runs[-1].high) == (uninterrupted.low, uninterrupted.high)
    assert runs[-1].extra == uninterrupted.extra
    assert snapshot(store) == snapshot(whole)
    return runs


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chance_games(acyclic=False, most=16) | chance_games(acyclic=True, most=16),
    st.integers(1, 5),
    st.integers(1, 3),
)
def test_budgeted_runs_retrace_the_uninterrupted_solve(
    game: ExplicitChanceGame, budget: int, batch: int
) -> None:
    """Each run stops within a batch or between two; the next replays the stored graph's
    batches and finishes the one cut short. A run whose root is decided while the
    uninterrupted solve still has a batch to finish ends ``budget``, not ``complete``."""
    assert_budgets_retrace(game, budget, batch)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(60, 1300))
def test_budgeted_pig_runs_retrace_the_uninterrupted_solve(budget: int) -> None:
    """Pig to 10 (1,255 expansions uninterrupted). Continued from the stored graph as it
    was, a run cut at 1,000 ended with 16 positions fewer and 8 undecided that the
    uninterrupted solve decides; one cut at 400 with 148 fewer and 229 others."""
    assert_budgets_retrace(Pig(target=10), budget, None)


def test_a_run_that_decides_the_root_within_a_batch_cut_short_is_not_complete() -> None:
    """Pig to 10 with a three-sided die: at 1,680 expansions the root is decided, with 98
    positions unexpanded, while the uninterrupted solve's last batch (which expands all
    1,818) is under way: the run ends with the root's bounds final and status
    ``budget``, and the next run finishes the batch."""
    runs = assert_budgets_retrace(Pig(target=10, faces=3), 1680, None)
    assert [r.status for r in runs] == ["budget", "complete"]
    assert runs[0].low_final and runs[0].high_final and runs[0].ended_by == "expansions"
    assert runs[0].extra["chance"]["unexpanded"] == 98
    assert runs[1].expansions == 1818 - 1680 and runs[1].extra["chance"]["unexpanded"] == 0


@pytest.mark.parametrize(("budget", "replayed"), [(1000, True), (1300, False)])
def test_a_stored_graph_the_schedule_did_not_make_is_continued_as_it_is(
    monkeypatch: pytest.MonkeyPatch, budget: int, replayed: bool
) -> None:
    """A full solve's first expansions, then a partial run. The first 1,000 are those of
    the partial solve's first batch (breadth first from the root): the replay takes them
    and the run ends as the uninterrupted partial solve. After 1,300 the replay departs
    from the stored graph, and the run goes on from it as it is (to the same value)."""
    seeded: list[int] = []

    def counted(game: Game, root: Any, graph: Graph) -> Any:
        seeded.append(graph.num_nodes)
        return seeded_builder(game, root, graph)

    monkeypatch.setattr("solver.chance.partial.seeded_builder", counted)
    store = MemoryStore()
    cut = solve(Pig(target=10), store=store, full=True, max_expansions=budget)
    assert cut.status == "budget" and cut.expansions == budget
    done = solve(Pig(target=10), store=store)
    assert done.complete and done.expansions > 0
    assert seeded == ([] if replayed else [cut.nodes])
    if replayed:
        whole = MemoryStore()
        solve(Pig(target=10), store=whole)
        assert snapshot(store) == snapshot(whole)
    truth = solve_graph(expand_all(Pig(target=10)))
    assert done.low is not None and done.high is not None
    assert truth.low[0] - 2e-9 <= done.low <= done.high <= truth.high[0] + 2e-9


def test_a_stored_graph_whose_moves_changed_is_refused() -> None:
    """The replay departs where a stored position's moves differ; continuing the stored
    graph as it is then finds them and refuses it, as without the replay."""
    half = {0: [Fraction(1, 2)] * 2}
    leaf = {2: 1, 4: -1}
    game = ExplicitChanceGame([[1, 2], [3, 0], [], [4], []], leaf, [0] * 5, half, RANGE)
    changed = ExplicitChanceGame([[1, 2], [2, 0], [], [4], []], leaf, [0] * 5, half, RANGE)
    store = MemoryStore()
    with first_batch(1):
        assert solve(game, store=store, max_expansions=2).status == "budget"
        with pytest.raises(SolveError, match="the stored graph is not the one the rules give"):
            solve(changed, store=store)
