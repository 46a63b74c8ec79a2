"""Type A estimates (``solver.estimate``) against plain minimax on random trees and graphs
with an evaluation, known values as leaves, the clock, and the refusals."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.alphabeta import alphabeta
from solver.errors import InvalidParameterError
from solver.estimate import estimate
from solver.game import GameBase
from solver.games import get_game
from tests.oracles import ExplicitGame
from tests.solver.test_classic import GRAPHS, Graph, child_of, trees


class EvaluatedGame(ExplicitGame):
    """An explicit acyclic graph with an evaluation: a score given per node (the leaf's
    value at a leaf, as the contract requires)."""

    def __init__(self, graph: Graph, scores: list[int]) -> None:
        super().__init__(*graph, acyclic=True)
        self.scores = scores

    def evaluate(self, key: int) -> int:
        return self.leaf[key] if not self.succ[key] else self.scores[key]


def scored(graph: Graph, data: st.DataObject) -> EvaluatedGame:
    n = len(graph[0])
    return EvaluatedGame(graph, data.draw(st.lists(st.integers(-9, 9), min_size=n, max_size=n)))


def true_value(game: ExplicitGame, node: int) -> int:
    return alphabeta(game, node, prune=False, tt=False).value


def longest_line(game: ExplicitGame) -> int:
    @cache
    def plies(node: int) -> int:
        return 1 + max((plies(c) for c in game.succ[node]), default=-1)

    return plies(0)


def limited_value(game: EvaluatedGame, known: Collection[int], node: int, depth: int) -> int:
    """Negamax of *node* *depth* plies deep: terminal and *known* positions (but the
    search's root, 0) their true value, the others at the depth limit the evaluation."""
    values = {k: true_value(game, k) for k in known}

    @cache
    def value(n: int, d: int) -> int:
        if not game.succ[n]:
            return game.leaf[n]
        if n in values and n != 0:
            return values[n]
        if d == 0:
            return game.evaluate(n)
        return max(-value(c, d - 1) for c in game.succ[n])

    return value(node, depth)


@settings(max_examples=200, deadline=None)
@given(graph=GRAPHS, data=st.data())
def test_deep_enough_an_estimate_is_the_exact_value(graph: Graph, data: st.DataObject) -> None:
    game = scored(graph, data)
    if not game.succ[0]:
        return  # a terminal root is refused (test_a_terminal_position_is_refused)
    longest = longest_line(game)
    result = estimate(game, 0, depth=longest + data.draw(st.integers(0, 2)))
    assert (result.score, result.exact) == (true_value(game, 0), True)
    assert 1 <= result.depth <= longest
    assert -true_value(game, child_of(result.best_move)) == result.score
    assert result.positions >= 1 and result.seconds >= 0


@settings(max_examples=200, deadline=None)
@given(graph=trees(), data=st.data())
def test_known_values_are_leaves(graph: Graph, data: st.DataObject) -> None:
    # In a tree every position is met at one depth, so the search computes exactly
    # depth-limited minimax, here with the known positions as leaves.
    game = scored(graph, data)
    if not game.succ[0]:
        return
    known = set(data.draw(st.lists(st.integers(0, len(game.succ) - 1), max_size=10)))
    asked: list[int] = []

    def lookup(k: int) -> int | None:
        asked.append(k)
        return true_value(game, k) if k in known else None

    depth = data.draw(st.integers(1, 5))
    result = estimate(game, 0, depth=depth, known=lookup)
    assert 0 not in asked  # the root is always searched
    assert result.score == limited_value(game, known, 0, result.depth)
    if result.depth < depth:  # deepening stopped early: nothing was cut
        assert result.exact
    if result.exact:
        assert result.score == true_value(game, 0)
    best = child_of(result.best_move)
    assert -limited_value(game, known, best, result.depth - 1) == result.score


def test_known_children_make_a_one_ply_search_exact() -> None:
    # 0 -> 1, 2; 1 and 2 have deep subtrees, but their values are known.
    game = EvaluatedGame(
        ([[1, 2], [3, 4], [5, 6], [], [], [], []], {3: 1, 4: 2, 5: -4, 6: 3}), [0] * 7
    )
    values = {1: true_value(game, 1), 2: true_value(game, 2)}
    plain = estimate(game, 0, depth=1)
    assert plain.exact is False
    proven = estimate(game, 0, depth=1, known=values.get)
    assert (proven.score, proven.exact, proven.best_move) == (true_value(game, 0), True, "0:1")


def test_a_seconds_budget_keeps_the_last_completed_iteration() -> None:
    game = get_game("connect-four", width=7, height=6)
    start = time.monotonic()
    result = estimate(game, game.initial(), seconds=0.3)
    took = time.monotonic() - start
    assert took < 30  # it returns (the budget is 0.3 s; the limit only catches a hang)
    assert result.depth >= 1 and not result.exact
    assert result.best_move in dict(game.children(game.initial()))
    assert result.rate > 0


def test_depth_one_completes_whatever_the_budget() -> None:
    game = get_game("connect-four", width=7, height=6)
    result = estimate(game, game.initial(), seconds=1e-9)
    assert result.depth >= 1 and result.best_move in dict(game.children(game.initial()))


def test_moves_are_named_in_the_position_asked_about() -> None:
    # With symmetry the search runs on canonical positions; the move is the asked one's.
    game = get_game("tic-tac-toe", symmetry=True)
    key = game.parse("..o/.x./...")  # o in a corner, x in the centre
    result = estimate(game, key, depth=9)
    assert result.exact and result.score == 0
    moves = dict(game.children(key))
    assert result.best_move in moves
    assert -estimate(game, moves[result.best_move], depth=9).score == 0


def test_a_cyclic_game_scores_repetitions_by_its_value_of_endless_play() -> None:
    game = get_game("chess", material="KRvK")
    result = estimate(game, game.initial(), depth=4)
    assert result.depth == 4 and result.best_move in dict(game.children(game.initial()))


@pytest.mark.parametrize(
    ("make", "kwargs", "message"),
    [
        (lambda: get_game("nap"), {"depth": 2}, "nap has no evaluation"),
        (lambda: get_game("number-game"), {"depth": 2}, "gives endless play no value"),
        (lambda: get_game("tic-tac-toe"), {}, "not neither"),
        (lambda: get_game("tic-tac-toe"), {"depth": 2, "seconds": 1.0}, "not both"),
        (lambda: get_game("tic-tac-toe"), {"depth": 0}, "at least 1 ply, not 0"),
        (lambda: get_game("tic-tac-toe"), {"seconds": 0.0}, "positive number of seconds"),
        (lambda: get_game("tic-tac-toe"), {"seconds": float("nan")}, "positive number"),
    ],
)
def test_bad_requests_are_refused(
    make: Callable[[], GameBase], kwargs: dict[str, float], message: str
) -> None:
    game = make()
    with pytest.raises(InvalidParameterError, match=message):
        estimate(game, game.initial(), **kwargs)  # type: ignore[arg-type]


def test_a_terminal_position_is_refused() -> None:
    game = get_game("tic-tac-toe")
    with pytest.raises(InvalidParameterError, match="is over .* no move to estimate"):
        estimate(game, game.parse("xxx/oo./..."), depth=3)
