"""Every query in docs/sql.md runs on SQLite and PostgreSQL and answers as documented."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text

from db.store import SqlStore
from solver.chance.bounds import solve_graph
from solver.chance.build import expand_all
from solver.chance.plies import expected_plies
from solver.games import get_game
from solver.negamax import solve

DOC = Path(__file__).resolve().parents[2] / "docs" / "sql.md"
QUERIES = re.findall(r"```sql\n(.*?)```", DOC.read_text(), re.S)


def test_the_doc_has_at_least_six_queries() -> None:
    assert len(QUERIES) >= 6


@pytest.fixture
def solved(engine: Engine) -> Engine:
    solve(get_game("connect-four", width=4, height=4), full=True, store=SqlStore(engine))
    solve(get_game("tic-tac-toe"), full=True, store=SqlStore(engine))
    solve(get_game("number-game"), store=SqlStore(engine))
    solve(get_game("pig", target=10), full=True, store=SqlStore(engine))
    return engine


def rows(engine: Engine, sql: str) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


def test_documented_queries_answer_as_documented(solved: Engine) -> None:
    (
        by_dist,
        repetition,
        longest,
        branching,
        frontier,
        best,
        progress,
        runs,
        steps,
        expanded,
        pig,
        pig_plies,
    ) = [rows(solved, q) for q in QUERIES]
    # 1: the root of connect-four 4x4 is a draw, alone at distance 0
    assert by_dist[0] == (0, 0, 1)
    assert sum(r[2] for r in by_dist) == 161029
    # 2: the number game's root 13 has final bounds 3 and 5
    assert ("number-game", "root=13", "13", 3, 5) in repetition
    # 3: the longest forced wins come first
    assert longest and [r[4] for r in longest] == sorted((r[4] for r in longest), reverse=True)
    # 4: the empty tic-tac-toe board has the most moves of all positions (9)
    assert branching[0][3] == 9 and branching[0][0] == "tic-tac-toe"
    # 5: the number game leaves 59 and 61 unexpanded
    assert {r[2] for r in frontier if r[0] == "number-game"} == {"59", "61"}
    # 6: from x.o/.../... X wins with a2, a3 or c3; b1 loses
    assert {r[0] for r in best if r[2] == 1} == {"a2", "a3", "c3"}
    assert best[-1][0] == "b1" and best[-1][2] == -1 and len(best) == 7
    # 7: every tic-tac-toe position is expanded or terminal
    ttt = {r[2]: r[3] for r in progress if r[0] == "tic-tac-toe"}
    assert ttt == {"expanded": 4520, "terminal": 958}
    # 8: one complete run per solve
    assert [r[3] for r in runs] == ["complete"] * 4
    # 9: the number game's commits: the root opens at [-inf, +inf] and closes at 3 and 5,
    # both final, with the last expansion (only the closing pass comes after); 26
    # expansions in all, as DESIGN counts them when leaves are created eagerly
    assert [r[0] for r in steps] == list(range(1, len(steps) + 1))
    assert steps[0][3:] == (None, None, False, False)
    assert steps[-1][3:] == (3, 5, True, True)
    closed = [r[0] for r in steps if r[5] and r[6]]
    assert steps[closed[0] - 1][2] == 1 and sum(r[2] for r in steps[closed[0] :]) == 0
    assert sum(r[2] for r in steps) == len(expanded) == 26
    # 10: the first commit expands the root, 13; 59 and 61 are never expanded
    assert expanded[0] == (1, "13")
    assert {n for _, n in expanded}.isdisjoint({"59", "61"})
    # 11: Pig to 10: the first player's chance of winning, bracketed within the tolerance
    # around the in-memory solver's (the value of a game of chance, docs/design.md §10)
    solution = solve_graph(expand_all(get_game("pig", target=10)))
    ((params, at_least, at_most),) = pig
    assert params == "faces=6,target=10"
    assert at_least == (solution.low[0] + 1) / 2 and at_most == (solution.high[0] + 1) / 2
    assert 0 < at_most - at_least <= 1e-9 and round(at_least, 4) == 0.7094
    # 12: Pig to 10: the longest expected games from a turn's start, longest first, as
    # the in-memory strategy's expected plies
    graph = solution.graph
    plies = expected_plies(solution)
    assert len(pig_plies) == 5
    assert [r[1] for r in pig_plies] == sorted((r[1] for r in pig_plies), reverse=True)
    for position, value in pig_plies:
        assert position.endswith(":0")
        assert value == plies.plies[graph.index[graph.game.parse(position)]]
