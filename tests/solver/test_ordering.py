"""Type B move ordering (solver.ordering): a partial solve that makes each position's
moves best first by the game's ordering score or evaluation proves the same values as
one in the game's order — the root's, and every position's that both prove final —
against the brute-force fixpoint on random graphs with random evaluations (cycles
included), and with fewer expansions on connect-four."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from db.session import make_engine
from db.store import SqlStore
from solver.errors import InvalidParameterError
from solver.evaluation import EVALUATION_CONTRACT
from solver.games import get_game
from solver.negamax import solve
from solver.ordering import move_ordering
from solver.store import MemoryStore
from tests.oracles import ExplicitGame, brute_bounds
from tests.solver.test_negamax import dags, graphs, pub


class EvaluatedGame(ExplicitGame):
    """An explicit graph with an evaluation given as a table (in the value range)."""

    contract: ClassVar[int] = EVALUATION_CONTRACT

    def __init__(self, succ: Any, leaf: dict[int, int], scores: list[int], **kw: Any) -> None:
        super().__init__(succ, leaf, (-3, 3), **kw)
        self.scores = scores

    def evaluate(self, key: int) -> int:
        return self.scores[key]


def final_values(game: Any, order: str) -> tuple[tuple[int, int], dict[int, int], int]:
    """The root's bounds, the value of every position proved final (both bounds), and
    the expansions, of a partial solve of *game* in *order*."""
    store = MemoryStore()
    r = solve(game, store=store, order=order)  # type: ignore[arg-type]
    (g,) = store.graphs.values()
    final = {
        g.keys[n]: g.low[n]
        for n in range(g.num_nodes)
        if g.low_final[n] and g.high_final[n] and g.low[n] == g.high[n]
    }
    return (g.low[0], g.high[0]), final, r.expansions  # node 0: the root


@settings(max_examples=150, deadline=None)
@given(st.one_of(graphs(), dags()), st.data())
def test_the_order_changes_no_value_proved(graph: Any, data: st.DataObject) -> None:
    succ, leaf = graph
    scores = data.draw(st.lists(st.integers(-3, 3), min_size=len(succ), max_size=len(succ)))
    acyclic = all(c > i for i, s in enumerate(succ) for c in s)
    game = EvaluatedGame(succ, leaf, scores, acyclic=acyclic)
    root_game, finals_game, _ = final_values(game, "game")
    root_eval, finals_eval, _ = final_values(game, "evaluate")
    assert root_eval == root_game
    low, high = brute_bounds(succ, leaf)
    assert (pub(root_eval[0]), pub(root_eval[1])) == (low[0], high[0])
    for key, value in finals_eval.items():
        assert low[key] == high[key] == value, key
        if key in finals_game:
            assert finals_game[key] == value


@pytest.mark.parametrize(("width", "height", "value"), [(5, 4, 0), (4, 5, 0), (4, 4, 0)])
def test_connect_four_in_its_threats_order_expands_fewer(
    width: int, height: int, value: int
) -> None:
    game = get_game("connect-four", width=width, height=height)
    root_game, finals_game, game_order = final_values(game, "game")
    root_eval, finals_eval, evaluated = final_values(game, "evaluate")
    assert root_game == root_eval == (value, value)
    assert evaluated < game_order
    for key in finals_eval.keys() & finals_game.keys():
        assert finals_eval[key] == finals_game[key]


def test_connect_four_orders_a_winning_move_first() -> None:
    game = get_game("connect-four", width=4, height=4)
    ordering = move_ordering(game, "evaluate")
    assert ordering is not None
    key = game.parse("..../..../ooo./xxx.")  # X to move wins in column 4
    moves = ordering(list(game.children(key)))
    assert [m for m, _ in moves][0] == "4" != [m for m, _ in game.children(key)][0]
    assert game.terminal_value(moves[0][1]) == -1


def test_refusals() -> None:
    with pytest.raises(InvalidParameterError, match="unknown move order 'best'"):
        move_ordering(get_game("tic-tac-toe"), "best")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="grundy has no evaluation"):
        solve(get_game("grundy"), store=MemoryStore(), order="evaluate")
    with pytest.raises(InvalidParameterError, match="a move order is for partial solves"):
        solve(get_game("tic-tac-toe"), store=MemoryStore(), full=True, order="evaluate")


def test_an_evicting_solve_orders_its_moves_alike(tmp_path: Path) -> None:
    """Into SQLite with a resident budget, evicting (:mod:`solver.partial.cache`): the
    moves made in the same order as in memory, so the same expansions."""
    game = get_game("connect-four", width=5, height=4)
    _, _, in_memory = final_values(game, "evaluate")
    engine = make_engine(f"sqlite:///{tmp_path / 'ordered.db'}")
    try:
        r = solve(game, store=SqlStore(engine), order="evaluate", resident_nodes=5_000)
    finally:
        engine.dispose()
    assert (r.low, r.high, r.expansions) == (0, 0, in_memory)
