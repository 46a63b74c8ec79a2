"""The optimal strategy of a game of chance and its expected plies (solver/chance/plies.py)
against an independent oracle: the strategy is the best move the solution ranks first at
every decision node, and the expected plies under it equal the exact solution of the
strategy's Markov chain (reachability, then Gaussian elimination over the rationals) on
random games with and without cycles, coin nim, dice race and Pig."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings

from solver.chance.bounds import ChanceSolution, solve_graph
from solver.chance.build import expand_all
from solver.chance.graph import DECISION, ChanceGraph
from solver.chance.plies import ExpectedPlies, best_edges, expected_plies
from solver.games.coin_nim import CoinNim
from solver.games.dice_race import DiceRace
from solver.games.pig import Pig
from tests.oracles import ExplicitChanceGame, strategy_plies
from tests.solver.test_chance import _explicit, chance_games


def check_against_oracle(
    explicit: ExplicitChanceGame,
    graph: ChanceGraph,
    solution: ChanceSolution,
    converted: bool = False,
    directly: bool = True,
) -> ExpectedPlies:
    """The chosen moves are the solution's best moves, and every position's expected
    plies is the oracle's: equal where exact, else within the tolerance from below.
    *explicit* is the game solved, or with *converted* the graph made explicit (its
    nodes are the graph's ids). Without *directly* positions on cycles are swept only."""
    result = expected_plies(solution, solve_directly=directly)
    ids = list(range(len(graph))) if converted else [int(k) for k in graph.keys]
    choice: dict[int, int] = {}
    for node, key in enumerate(ids):
        edge = int(result.choice[node])
        if graph.kind[node] != DECISION:
            assert edge == -1
            continue
        assert graph.labels[edge] == solution.best_move(node)
        choice[key] = edge - int(graph.start[node])
    truth = strategy_plies(explicit, choice)
    for node, key in enumerate(ids):
        expected = truth[key]
        got = float(result.plies[node])
        if expected is None:
            assert math.isinf(got) and result.exact[node] is None
            assert result.value(node) is None
            continue
        if result.exact[node] is not None:
            assert result.exact[node] == expected
            assert got == float(expected)
        else:
            scale = max(1.0, float(expected))
            assert abs(got - float(expected)) <= result.tolerance * scale
    assert result.loose == 0
    return result


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chance_games(acyclic=True))
def test_acyclic_games_get_the_exact_expectation(game: ExplicitChanceGame) -> None:
    graph = expand_all(game)
    result = check_against_oracle(game, graph, solve_graph(graph))
    assert all(q is not None for q in result.exact)


@pytest.mark.parametrize("directly", [True, False])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=chance_games(acyclic=False))
def test_cyclic_games_against_the_exact_markov_chain(
    game: ExplicitChanceGame, directly: bool
) -> None:
    """Solved directly, and by sweeps alone."""
    graph = expand_all(game)
    check_against_oracle(game, graph, solve_graph(graph), directly=directly)


def test_a_game_that_never_ends_has_infinite_plies() -> None:
    # 0 (chance) draws 1 or 2; 1 is a decision node whose best move loops to itself
    # (its high, endless play at best, beats the loss 3), 2 moves to the win 4: half of
    # the games from 0 never end, so 0 and 1 are infinite; 2 is 1 ply.
    game = ExplicitChanceGame(
        succ=[[1, 2], [1, 3], [4], [], []],
        leaf={3: -1, 4: -1},
        player=[0, 0, 0, 0, 1],
        odds={0: [Fraction(1, 2), Fraction(1, 2)]},
        value_range=(-1, 1),
    )
    graph = expand_all(game)
    result = check_against_oracle(game, graph, solve_graph(graph))
    assert [result.value(graph.index[k]) for k in range(5)] == [None, None, 1, 0, 0]


@pytest.mark.parametrize(
    ("n", "plies"),
    # Worked by hand: with 1 stone any coin takes it (1 ply); with 2, heads takes 2 and
    # tails takes 2; with 3, heads finds both moves lost and plays the first (take 1:
    # 1 + the opponent's 1 ply with 2 left), tails takes 3: (2 + 1) / 2.
    [(0, "0"), (1, "1"), (2, "1"), (3, "3/2")],
)
def test_coin_nim_by_hand(n: int, plies: str) -> None:
    game = CoinNim(n=n)
    graph = expand_all(game)
    result = check_against_oracle(_explicit(game, graph), graph, solve_graph(graph), True)
    assert result.exact[0] == Fraction(plies)


def test_coin_nim_is_exact_everywhere() -> None:
    game = CoinNim(n=15)
    graph = expand_all(game)
    result = check_against_oracle(_explicit(game, graph), graph, solve_graph(graph), True)
    assert all(q is not None for q in result.exact)
    assert result.sweeps == 0


@pytest.mark.parametrize("directly", [True, False])
@pytest.mark.parametrize(
    "game", [DiceRace(goal=4, faces=3), DiceRace(goal=6, faces=4), Pig(target=6, faces=3)]
)
def test_games_with_chance_on_cycles(game: DiceRace | Pig, directly: bool) -> None:
    graph = expand_all(game)
    solution = solve_graph(graph, tolerance=1e-12)
    result = check_against_oracle(_explicit(game, graph), graph, solution, True, directly)
    assert result.exact[0] is None and 0 < result.plies[0] < math.inf
    assert (result.sweeps > 0) != directly  # solved directly: checked, no sweep


def test_best_edges_follow_best_move_on_pig() -> None:
    graph = expand_all(Pig(target=20))
    solution = solve_graph(graph)
    choice = best_edges(solution)
    for node in range(len(graph)):
        move = solution.best_move(node)
        edge = int(choice[node])
        assert (move is None) == (edge < 0)
        if move is not None:
            assert graph.labels[edge] == move and edge in graph.moves(node)


def test_the_tolerance_must_be_positive() -> None:
    solution = solve_graph(expand_all(CoinNim(n=3)))
    with pytest.raises(ValueError, match="positive"):
        expected_plies(solution, tolerance=0)
