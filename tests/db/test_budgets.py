"""Budgets mean what they say: ``max_expansions`` is exact (the batch that reaches it is
cut short), and a solve split by budgets still retraces the uninterrupted one node for
node where the search is depth first."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.soak import stored_rows
from solver.games import get_game
from solver.graph import Graph
from solver.negamax import solve
from solver.store import MemoryStore
from tests.db.test_solve_cli import expected_rows, run

Case = tuple[str, dict[str, Any], str | None]

DEPTH_FIRST: list[Case] = [
    ("connect-four", {"width": 4, "height": 3}, None),
    ("tic-tac-toe", {}, None),
    ("number-game", {}, None),
    ("nap", {"n": 10}, None),
    ("e-valuate", {}, None),
    ("graph-share", {}, None),
]
BREADTH_FIRST: list[Case] = [("chess", {"material": "KRvK"}, "k7/8/2K5/8/8/8/8/7R w - -")]


def snapshot(g: Graph) -> tuple[Any, ...]:
    return (
        list(g.keys),
        bytes(g.state),
        list(g.low),
        list(g.high),
        bytes(g.low_final),
        bytes(g.high_final),
        list(g.depth_low),
        list(g.depth_high),
        list(g.edge_child),
        list(g.edge_move),
    )


def budgeted(
    name: str, params: dict[str, Any], root: str | None, budget: int
) -> tuple[Graph, list[int], Any]:
    store = MemoryStore()
    expansions = []
    while True:
        r = solve(get_game(name, **params), root, store=store, max_expansions=budget)
        expansions.append(r.expansions)
        if r.complete:
            (g,) = store.graphs.values()
            return g, expansions, r
        assert r.status == "budget"


def uninterrupted(name: str, params: dict[str, Any], root: str | None) -> tuple[Graph, Any]:
    store = MemoryStore()
    r = solve(get_game(name, **params), root, store=store)
    (g,) = store.graphs.values()
    return g, r


@pytest.mark.slow
@pytest.mark.parametrize("budget", [3, 150])
@pytest.mark.parametrize(
    ("name", "params", "root"),
    DEPTH_FIRST + BREADTH_FIRST,
    ids=[c[0] for c in DEPTH_FIRST + BREADTH_FIRST],
)
def test_expansion_budgets_are_exact(
    name: str, params: dict[str, Any], root: str | None, budget: int
) -> None:
    g0, r0 = uninterrupted(name, params, root)
    g, expansions, r = budgeted(name, params, root, budget)
    assert expansions[:-1] == [budget] * (len(expansions) - 1)
    assert 0 <= expansions[-1] <= budget
    assert (r.low, r.high, r.low_final, r.high_final) == (
        r0.low,
        r0.high,
        r0.low_final,
        r0.high_final,
    )
    if (name, params, root) in DEPTH_FIRST:
        # a restarted search retraces the interrupted one: node for node
        assert sum(expansions) == r0.expansions
        assert snapshot(g) == snapshot(g0)


def test_the_cli_honours_an_expansion_budget_exactly(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'b.db'}"
    args = ["solve", "connect-four", "-p", "width=4", "-p", "height=4", "--db", url, "--json"]
    totals = []
    for _ in range(3):  # batches grow with the graph: the later budgets cut them short
        code, out, err = run(*args, "--max-expansions", "1000")
        assert code == 0, err
        totals.append(json.loads(out)["expansions"])
    assert totals == [1000, 1000, 1000]
    code, out, err = run(*args)
    assert code == 0, err
    assert json.loads(out)["complete"]
    store = MemoryStore()
    solve(get_game("connect-four", width=4, height=4), store=store)
    (g,) = store.graphs.values()
    assert stored_rows(url) == expected_rows(g)


def test_a_time_budget_stops_the_run_and_is_recorded(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    code, out, err = run(
        "solve",
        "connect-four",
        "-p",
        "width=5",
        "-p",
        "height=5",
        "--db",
        url,
        "--json",
        "--max-seconds",
        "1",
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "budget" and result["expansions"] > 0
    assert result["seconds"] >= 1  # never early
    code, out, _ = run("status", "--db", url, "--json")
    (variant,) = json.loads(out)["variants"]
    assert variant["runs"][0]["status"] == "budget"
