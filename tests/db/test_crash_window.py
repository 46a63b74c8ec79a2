"""A solve killed at any step of its closing sequence — after its last batch, after its
closing pass, after recording its end — resumes to exactly the uninterrupted solve's
graph, on SQLite and PostgreSQL, for an acyclic and a cyclic game.

The kills are real (SIGKILL, through ``db.store.writer.CRASH_ENV``), in real ``negagraph solve``
processes; the comparisons are node for node and edge for edge."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
from typing import Any

import pytest
from sqlalchemy import text

from bench.soak import CountingStore, Rows, stored_rows
from db.session import make_engine
from db.store.writer import CRASH_ENV
from solver.games import get_game
from solver.graph import Graph
from solver.negamax import solve
from solver.store import MemoryStore
from tests.db.test_solve_cli import NEGAGRAPH, expected_rows, run

CASES = {
    "tic-tac-toe": "acyclic",
    "number-game": "cyclic",
}


@functools.cache
def uninterrupted(name: str) -> tuple[Graph, int]:
    """The graph of an uninterrupted partial solve of *name* and its number of commits
    (solved once a test process: the tests only read it)."""
    store = CountingStore()
    result = solve(get_game(name), store=store)
    assert result.complete
    (g,) = store.graphs.values()
    return g, store.commits


def killed_solve(name: str, url: str, step: str) -> None:
    proc = subprocess.run(
        [NEGAGRAPH, "solve", name, "--db", url, "--json"],
        env={**os.environ, CRASH_ENV: step},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, (step, proc.returncode, proc.stderr)


def variant_settled(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return bool(conn.execute(text("SELECT settled FROM variants")).scalar_one())
    finally:
        engine.dispose()


def resumed(url: str, *args: str) -> dict[str, Any]:
    """``negagraph solve ARGS`` run to its end on *url*: its JSON result."""
    code, out, err = run("solve", *args, "--db", url, "--json")
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


@pytest.mark.parametrize("step", ["last-batch", "closing-pass", "close"])
@pytest.mark.parametrize("name", sorted(CASES), ids=[f"{n}-{c}" for n, c in sorted(CASES.items())])
def test_a_kill_in_the_closing_sequence_resumes_to_the_uninterrupted_graph(
    db_url: str, name: str, step: str
) -> None:
    g, commits = uninterrupted(name)
    expected = expected_rows(g)
    assert commits >= 3  # batches, then the closing pass
    crash = {
        "last-batch": f"commit:{commits - 1}",
        "closing-pass": f"commit:{commits}",
        "close": "close",
    }[step]
    killed_solve(name, db_url, crash)
    # The root is decided once the last batch is in; only the closing pass settles it.
    assert variant_settled(db_url) is (step != "last-batch")
    if step == "last-batch":
        assert stored_rows(db_url) != expected  # depths (and flags) still missing
    first = resumed(db_url, name)
    assert first["complete"] is True and first["expansions"] == 0
    assert stored_rows(db_url) == expected
    assert variant_settled(db_url)
    # and nothing changes any more
    again = resumed(db_url, name)
    assert again["complete"] is True and again["expansions"] == 0
    assert (again["depth_low"], again["depth_high"]) == (first["depth_low"], first["depth_high"])
    assert stored_rows(db_url) == expected


def test_every_batch_commit_leaves_the_variant_unsettled(db_url: str) -> None:
    """Killed after any batch but the closing pass, the stored variant says unsettled;
    a budgeted run that ends cleanly settles it (its closing pass computes depths)."""
    killed_solve("number-game", db_url, "commit:1")
    assert not variant_settled(db_url)
    code, out, err = run("solve", "number-game", "--db", db_url, "--max-expansions", "3", "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == "budget" and variant_settled(db_url)


@pytest.fixture(scope="module")
def full_solve() -> tuple[int, Rows]:
    """connect-four 4 x 4 solved fully in memory: its expanded positions and its rows."""
    store = MemoryStore()
    solve(get_game("connect-four", width=4, height=4), full=True, store=store)
    (g,) = store.graphs.values()
    return sum(1 for s in g.state if s == 1), expected_rows(g)


@pytest.mark.slow
def test_a_full_solve_killed_after_every_first_commit_still_progresses(
    db_url: str, full_solve: tuple[int, Rows]
) -> None:
    """A full run after one that died commits its first batch at once (not when the new
    positions reach half of those stored): killed right after its first commit, again
    and again, a solve still gains one batch per run, and then finishes identical.
    (Without tiers: a tiered run's commits are whole tiers, tests/db/test_tiered.py.)"""
    from solver.full.run import DEFAULT_FULL_BATCH

    args = ["connect-four", "--full", "--no-tiers", "-p", "width=4", "-p", "height=4"]
    total, expected = full_solve  # expanded positions, rows
    runs = 0
    engine = make_engine(db_url)  # (one for the polls)
    try:
        while True:
            with engine.connect() as conn:
                done = conn.execute(
                    text("SELECT coalesce(sum(expansions), 0) FROM solve_runs")
                ).scalar_one()
            if done >= total:
                break
            proc = subprocess.run(
                [NEGAGRAPH, "solve", *args, "--db", db_url, "--json"],
                env={**os.environ, CRASH_ENV: "commit:1"},
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert proc.returncode == -signal.SIGKILL, proc.stderr
            runs += 1
            assert runs < 50
        with engine.connect() as conn:
            recorded = [
                r[0] for r in conn.execute(text("SELECT expansions FROM solve_runs ORDER BY id"))
            ]
    finally:
        engine.dispose()
    assert runs >= 4 and sum(recorded) == total
    # every run committed after its first batch (at most DEFAULT_FULL_BATCH expansions:
    # fewer while the breadth-first frontier is smaller)
    assert all(0 < n <= DEFAULT_FULL_BATCH for n in recorded), recorded
    result = resumed(db_url, *args)
    assert result["complete"] and stored_rows(db_url) == expected
