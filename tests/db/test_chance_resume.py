"""A partial solve of a game of chance stopped by a budget and run again ends as the
uninterrupted solve does, position for position, on SQLite and PostgreSQL: the same
positions (by key), states, bounds (integers, floats, exact fractions), flags, expected
plies and moves, each position under the same id. (A user's Pig to 100 stopped at 30,000
expansions and continued missed 36 positions and left 1,094 undecided that the
uninterrupted solve decides; Pig to 10 stopped at 1,000 missed 16 and left 8.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from db.migrate import upgrade
from tests.db.test_chance_store import by_key, rows
from tests.db.test_solve_cli import run

PIG = ("solve", "pig", "-p", "target=10", "--json")
"""Pig to 10 with a six-sided die: 1,710 positions in a partial solve, which its first
batch (1,024 expansions) does not reach."""


IDS = "SELECT id, key FROM nodes ORDER BY id"


def solved(url: str, *budget: str) -> dict[str, Any]:
    code, out, err = run(*PIG, "--db", url, *budget)
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


class Reference:
    """The uninterrupted solve's answer and rows (a plain class: hypothesis prints its
    arguments, a dataclass field by field)."""

    def __init__(self, url: str) -> None:
        self.answer = solved(url)
        self.rows = by_key(url)
        self.ids = [(i, bytes(k)) for i, k in rows(url, IDS)]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    whole = Reference(f"sqlite:///{tmp_path_factory.mktemp('whole') / 'whole.db'}")
    assert whole.answer["complete"] and whole.answer["chance"]["unexpanded"] > 0
    return whole


def assert_resumed_equals_uninterrupted(url: str, budget: int, uninterrupted: Reference) -> None:
    whole, expected = uninterrupted.answer, uninterrupted.rows
    first = solved(url, "--max-expansions", str(budget))
    assert first["expansions"] == min(budget, whole["expansions"])
    answers = [first]
    while not answers[-1]["complete"]:
        assert len(answers) < 4, budget
        answers.append(solved(url))
    assert sum(a["expansions"] for a in answers) == whole["expansions"], budget
    assert answers[-1]["chance"]["unexpanded"] == whole["chance"]["unexpanded"], budget
    got = by_key(url)
    assert got.keys() == expected.keys(), (budget, len(got), len(expected))
    differ = [key for key, row in got.items() if row != expected[key]]
    assert not differ, (budget, len(differ), got[differ[0]], expected[differ[0]])
    assert [(i, bytes(k)) for i, k in rows(url, IDS)] == uninterrupted.ids, budget


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(budget=st.integers(1, 1800))
def test_a_budgeted_then_resumed_solve_is_the_uninterrupted_one_on_sqlite(
    tmp_path_factory: pytest.TempPathFactory,
    uninterrupted: Reference,
    budget: int,
) -> None:
    """Any budget: one run within it, then the same command without it."""
    path: Path = tmp_path_factory.mktemp("resumed") / "resumed.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    assert_resumed_equals_uninterrupted(url, budget, uninterrupted)


@pytest.mark.parametrize("budget", [400, 1000])
def test_a_budgeted_then_resumed_solve_is_the_uninterrupted_one(
    db_url: str, budget: int, uninterrupted: Reference
) -> None:
    """The report's case on each backend, cut in the first batch (1,024 expansions): at
    400 (continued from the stored graph as it was: 148 positions fewer, 229 others) and
    at 1,000 (16 fewer, 8 left undecided)."""
    assert_resumed_equals_uninterrupted(db_url, budget, uninterrupted)
