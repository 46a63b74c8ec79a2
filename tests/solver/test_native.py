"""The C inner loop of the acyclic search (solver._native) against the Python one.

Both must take the same expansions in the same order and leave identical graphs at every
commit: every column, the move labels, the key index and what each commit writes (new
nodes, new edges, changed old nodes). The oracle tests in test_negamax.py run the C loop
(the default); these tests run both and compare them, on random acyclic graphs, on
connect-four with and without symmetry, across resumed runs, and where the game breaks
its contract or its keys outgrow 64 bits.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solver.partial.search as search
from solver.errors import SolveError
from solver.game import Game
from solver.games import get_game
from solver.graph import UNEXPANDED, Graph, NodeState
from solver.negamax import solve
from solver.run import SolveResult
from solver.store import Batch, MemoryStore, Progress
from tests.oracles import ExplicitGame
from tests.solver.test_negamax import dags

ROOT = Path(__file__).resolve().parents[2]

NODE_COLUMNS = (
    "keys",
    "state",
    "low",
    "high",
    "low_final",
    "high_final",
    "dist",
    "first_edge",
    "child_count",
    "depth_low",
    "depth_high",
)
EDGE_COLUMNS = ("edge_child", "edge_parent")


def test_the_c_loop_is_built() -> None:
    """The install compiles solver/_native.c (setup.py); without it everything works,
    slower, so a missing build must not go unnoticed here."""
    try:
        importlib.import_module("solver._native")
    except ImportError as e:  # pragma: no cover - the failure message is the point
        pytest.fail(
            f"solver._native is not built ({e}): install with a C compiler, "
            "e.g. `pip install -e .` with gcc and the Python headers"
        )
    if not os.environ.get("NEGAGRAPH_PURE_PYTHON"):
        assert search.acyclic_test is not None


def test_negagraph_pure_python_turns_the_c_loop_off() -> None:
    code = "import solver.partial.search as m; print(m.acyclic_test is None)"
    env = {**os.environ, "NEGAGRAPH_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "True"


def columns(g: Graph) -> dict[str, Any]:
    cols: dict[str, Any] = {name: list(getattr(g, name)) for name in NODE_COLUMNS}
    cols.update({name: list(getattr(g, name)) for name in EDGE_COLUMNS})
    cols["edge_move"] = list(g.edge_move)
    cols["index"] = dict(g.index)
    return cols


@dataclass
class Commit:
    new_nodes: range
    new_edges: range
    dirty: list[int]
    columns: dict[str, Any]


class RecordingStore(MemoryStore):
    """A memory store that records what every commit would write, and the graph."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[Commit] = []

    def commit(self, batch: Batch, progress: Progress) -> None:
        graph = batch.graph
        new_nodes, new_edges, dirty = graph.pending()
        self.commits.append(Commit(new_nodes, new_edges, list(dirty), columns(graph)))
        super().commit(batch, progress)


def run(game: Game, native: bool, **options: Any) -> tuple[RecordingStore, Any]:
    """Solve *game* with the C loop or without; (store, result or the exception)."""
    saved = search.acyclic_test
    assert saved is not None, "solver._native is not built"
    store = RecordingStore()
    try:
        if not native:
            search.acyclic_test = None
        try:
            outcome: Any = solve(game, store=store, **options)
        except Exception as e:  # compared below, with the graph it leaves
            outcome = e
    finally:
        search.acyclic_test = saved
    return store, outcome


def same_runs(game: Game, **options: Any) -> SolveResult | Exception:
    """Solve *game* both ways and check every commit and the outcome are the same."""
    c_store, c_out = run(game, True, **options)
    py_store, py_out = run(game, False, **options)
    assert len(c_store.commits) == len(py_store.commits)
    for number, (a, b) in enumerate(zip(c_store.commits, py_store.commits, strict=True)):
        assert a == b, f"commit {number} differs"
    (c_graph,) = c_store.graphs.values()
    (py_graph,) = py_store.graphs.values()
    assert columns(c_graph) == columns(py_graph)
    assert type(c_out) is type(py_out)
    if isinstance(c_out, SolveError):  # others: the game's, or worded by each loop
        assert str(c_out) == str(py_out)
    elif isinstance(c_out, SolveResult):
        assert (
            c_out.low,
            c_out.high,
            c_out.low_final,
            c_out.high_final,
            c_out.expansions,
            c_out.nodes,
            c_out.edges,
        ) == (
            py_out.low,
            py_out.high,
            py_out.low_final,
            py_out.high_final,
            py_out.expansions,
            py_out.nodes,
            py_out.edges,
        )
    assert isinstance(c_out, SolveResult | Exception)
    return c_out


@settings(max_examples=300, deadline=None)
@given(dags(max_nodes=16), st.integers(1, 4), st.booleans(), st.booleans())
def test_random_acyclic_graphs_are_solved_alike(
    gl: tuple[list[list[int]], dict[int, int]], batch: int, ranged: bool, value: bool
) -> None:
    succ, leaf = gl
    value_range = None
    if ranged:
        lo, hi = min(leaf.values()), max(leaf.values())
        value_range = (min(lo, -hi), max(hi, -lo))
    game = ExplicitGame(succ, leaf, value_range, acyclic=True)
    out = same_runs(game, batch_size=batch, until="value" if value else "bounds")
    assert isinstance(out, SolveResult) and out.complete


@settings(max_examples=100, deadline=None)
@given(dags(max_nodes=16), st.lists(st.integers(1, 3), min_size=1, max_size=6))
def test_runs_resumed_after_budgets_are_solved_alike(
    gl: tuple[list[list[int]], dict[int, int]], budgets: list[int]
) -> None:
    """Runs cut short by expansion budgets, each going on from the graph the last one
    left (the same store), then a run to the end."""
    succ, leaf = gl
    game = ExplicitGame(succ, leaf, acyclic=True)
    stores = []
    for native in (True, False):
        saved = search.acyclic_test
        store = RecordingStore()
        try:
            if not native:
                search.acyclic_test = None
            for budget in budgets:
                solve(game, store=store, max_expansions=budget, batch_size=2)
            solve(game, store=store)
        finally:
            search.acyclic_test = saved
        stores.append(store)
    assert stores[0].commits == stores[1].commits


@pytest.mark.parametrize("symmetry", [False, True])
@pytest.mark.parametrize("size", [(4, 4), (3, 5)])
def test_connect_four_is_solved_alike(size: tuple[int, int], symmetry: bool) -> None:
    w, h = size
    game = get_game("connect-four", width=w, height=h, symmetry=symmetry)
    out = same_runs(game)
    assert isinstance(out, SolveResult) and out.value == 0 and out.complete


class Breaks(ExplicitGame):
    """An acyclic explicit game whose rules misbehave at position *bad*: ``raise`` in
    children(), ``raise-terminal`` in terminal_value() of a child, ``triples`` (moves
    that are not pairs), ``no-moves`` (none, yet not terminal), ``float`` (a terminal
    value that is no integer)."""

    def __init__(self, succ: list[list[int]], leaf: dict[int, int], bad: int, how: str):
        super().__init__(succ, leaf, acyclic=True)
        self.bad, self.how = bad, how

    def children(self, key: int) -> list[Any]:
        moves = super().children(key)
        if key == self.bad:
            if self.how == "raise":
                raise RuntimeError(f"no rules for {key}")
            if self.how == "triples":
                return [(m, c, 0) for m, c in moves]
            if self.how == "no-moves":
                return []
        return moves

    def terminal_value(self, key: int) -> Any:
        if key == self.bad and self.how == "raise-terminal":
            raise RuntimeError(f"no value for {key}")
        value = super().terminal_value(key)
        if key == self.bad and self.how == "float" and value is not None:
            return value + 0.5
        return value


CHAIN = [[1, 2], [3, 4], [4, 5], [6, 5], [6, 7], [], [], []]
CHAIN_LEAF = {5: 1, 6: -1, 7: 0}


@pytest.mark.parametrize("how", ["raise", "raise-terminal", "triples", "no-moves"])
@pytest.mark.parametrize("bad", [0, 1, 3, 4])
def test_a_game_that_breaks_its_rules_fails_alike(bad: int, how: str) -> None:
    """The same exception, and the graph as the Python loop leaves it: every expansion
    before the failing one, none of the failing one."""
    game = Breaks(CHAIN, CHAIN_LEAF, bad, how)
    out = same_runs(game, batch_size=1)
    assert isinstance(out, Exception)
    expected = {
        "raise": RuntimeError,
        "raise-terminal": RuntimeError,
        "triples": ValueError,
        "no-moves": SolveError,
    }[how]
    assert isinstance(out, expected)


@pytest.mark.parametrize("c_loop", [True, False])
def test_a_terminal_value_that_is_no_integer_fails_and_loses_nothing(c_loop: bool) -> None:
    game = Breaks(CHAIN, CHAIN_LEAF, 5, "float")
    store, out = run(game, c_loop, batch_size=1)
    assert isinstance(out, TypeError)
    (g,) = store.graphs.values()
    n, m = g.num_nodes, g.num_edges
    assert {len(getattr(g, c)) for c in NODE_COLUMNS} == {n} and len(g.index) == n
    assert {len(getattr(g, c)) for c in EDGE_COLUMNS} == {m} and len(g.edge_move) == m
    assert 5 not in g.index  # the expansion that found 5 was not applied
    assert same_runs(game, batch_size=1).__class__ is TypeError


def test_a_repeating_game_that_declares_itself_acyclic_fails_alike() -> None:
    out = same_runs(ExplicitGame([[1], [2, 3], [0, 3], []], {3: 1}, acyclic=True))
    assert isinstance(out, SolveError) and "repeats" in str(out)


class Wide(ExplicitGame):
    """Positions from *wide_from* on have keys beyond 64 bits."""

    OFFSET = 1 << 70

    def __init__(self, succ: list[list[int]], leaf: dict[int, int], wide_from: int):
        super().__init__(succ, leaf, acyclic=True)
        self.wide_from = wide_from

    def initial(self) -> int:
        return self.wide(0)

    def wide(self, key: int) -> int:
        return key + self.OFFSET if key >= self.wide_from else key

    def children(self, key: int) -> list[tuple[str, int]]:
        return [(m, self.wide(c)) for m, c in super().children(key % self.OFFSET)]

    def terminal_value(self, key: int) -> int | None:
        return super().terminal_value(key % self.OFFSET)

    def format(self, key: int) -> str:
        return str(key % self.OFFSET)


@settings(max_examples=100, deadline=None)
@given(dags(max_nodes=14), st.integers(0, 14), st.integers(1, 3))
def test_keys_beyond_64_bits_hand_over_to_the_python_loop(
    gl: tuple[list[list[int]], dict[int, int]], wide_from: int, batch: int
) -> None:
    succ, leaf = gl
    out = same_runs(Wide(succ, leaf, wide_from), batch_size=batch)
    assert isinstance(out, SolveResult) and out.complete
    plain = solve(ExplicitGame(succ, leaf, acyclic=True), batch_size=batch)
    assert (out.low, out.high, out.expansions) == (plain.low, plain.high, plain.expansions)


class Checked(MemoryStore):
    """A memory store that checks the frontier each commit reports against a count."""

    def commit(self, batch: Batch, progress: Progress) -> None:
        graph = batch.graph
        assert progress.frontier == graph.state.count(UNEXPANDED)
        super().commit(batch, progress)


@pytest.mark.parametrize("c_loop", [True, False])
@pytest.mark.parametrize(
    "game,options",
    [
        (get_game("connect-four", width=4, height=4), {}),
        (get_game("connect-four", width=4, height=4), {"max_expansions": 500}),
        (get_game("tic-tac-toe"), {"batch_size": 3}),
        (get_game("domino-tiling", rows=3, cols=4), {}),
        (get_game("number-game"), {}),  # a priority: batches of leaks
        (ExplicitGame([[1, 2], [0, 3], [1, 3], []], {3: 1}), {"batch_size": 1}),  # cycles
    ],
)
def test_the_frontier_each_commit_reports_is_the_count(
    game: Game, options: dict[str, Any], c_loop: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not c_loop:
        monkeypatch.setattr(search, "acyclic_test", None)
    store = Checked()
    solve(game, store=store, **options)
    solve(game, store=store)  # resumed: the tally starts from a stored graph


def test_the_c_loop_spells_the_node_states_as_the_python_side() -> None:
    # _native.c reads and writes the graph's state column with its own #defines: they must
    # be solver.graph.NodeState's codes, every one of them.
    source = (ROOT / "solver" / "_native.c").read_text(encoding="utf-8")
    defines = dict(re.findall(r"^#define (UNEXPANDED|EXPANDED|TERMINAL) (\d+)$", source, re.M))
    assert {name: int(code) for name, code in defines.items()} == {
        state.name: state.value for state in NodeState
    }
