"""Chance nodes (solver/chance/) against independent oracles: the lecture notes'
expectiminimax recursion on random acyclic games (exact fractions), exhaustive stationary
strategies with exact Markov-chain values on random cyclic ones (the solver's float bounds
must bracket them), and the built-in games of chance."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver import solve
from solver.chance.bounds import solve_graph
from solver.chance.build import expand_all
from solver.chance.components import strongly_connected
from solver.chance.exact import round_down, round_up
from solver.chance.graph import CHANCE, DECISION, TERMINAL
from solver.errors import ContractError, InvalidPositionError, SolveError
from solver.game import GameBase
from solver.games.coin_nim import CoinNim
from solver.games.dice_race import DiceRace
from solver.games.pig import Pig
from solver.graph import Graph
from solver.run import SolveResult
from solver.store import MemoryStore
from tests.oracles import ExplicitChanceGame, expectiminimax, stochastic_value, value_iteration

RANGE = (-2, 2)


@st.composite
def chance_games(draw: st.DrawFn, acyclic: bool, most: int = 8) -> ExplicitChanceGame:
    """A random game of up to *most* nodes: terminals worth -2..2, decision nodes of one
    or two moves, chance nodes of two or three outcomes with random probabilities;
    acyclic games only move to higher-numbered nodes (the last node is terminal)."""
    n = draw(st.integers(2, most))
    succ: list[list[int]] = []
    leaf: dict[int, int] = {}
    odds: dict[int, list[Fraction]] = {}
    player = [draw(st.integers(0, 1)) for _ in range(n)]
    for i in range(n):
        targets = st.integers(i + 1, n - 1) if acyclic else st.integers(0, n - 1)
        kind = (
            "terminal"
            if (acyclic and i == n - 1)
            else draw(st.sampled_from(["terminal", "decision", "chance", "chance"]))
        )
        if i == 0 and kind == "terminal" and n > 1:
            kind = "chance"
        if kind == "terminal":
            succ.append([])
            leaf[i] = draw(st.integers(*RANGE))
        elif kind == "decision":
            succ.append(draw(st.lists(targets, min_size=1, max_size=2)))
        else:
            kids = draw(st.lists(targets, min_size=2, max_size=3))
            weights = draw(st.lists(st.integers(1, 5), min_size=len(kids), max_size=len(kids)))
            succ.append(kids)
            odds[i] = [Fraction(w, sum(weights)) for w in weights]
    if not leaf:  # at least one way to end
        succ[n - 1] = []
        odds.pop(n - 1, None)
        leaf[n - 1] = draw(st.integers(*RANGE))
    return ExplicitChanceGame(succ, leaf, player, odds, RANGE)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chance_games(acyclic=True))
def test_acyclic_values_are_the_exact_expectiminimax(game: ExplicitChanceGame) -> None:
    graph = expand_all(game)
    solution = solve_graph(graph)
    for node, key in enumerate(graph.keys):
        expected = expectiminimax(game, key)
        if game.player[key] == 1:
            expected = -expected
        assert solution.exact_low[node] == expected
        assert solution.exact_high[node] == expected
        assert solution.low[node] <= expected <= solution.high[node]
    assert solution.wide == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chance_games(acyclic=False))
def test_cyclic_bounds_bracket_the_exact_values(game: ExplicitChanceGame) -> None:
    """low is the value when endless play is the worst result for the node's player,
    high when it is the best: the solver's floats must bracket both exact values, within
    the tolerance where it says it converged, and its exact fractions must equal them."""
    tolerance = 1e-9
    graph = expand_all(game)
    solution = solve_graph(graph, tolerance=tolerance)
    lo_vi, hi_vi = value_iteration(game, sweeps=1_000_000, settle=True)
    for node, key in enumerate(graph.keys):
        true_low = stochastic_value(game, key, Fraction(RANGE[0]))
        true_high = stochastic_value(game, key, Fraction(RANGE[1]))
        assert true_low - 1e-7 <= solution.low[node] <= true_low
        assert true_high <= solution.high[node] <= true_high + 1e-7
        if solution.exact_low[node] is not None:
            assert solution.exact_low[node] == true_low
        if solution.exact_high[node] is not None:
            assert solution.exact_high[node] == true_high
        # Plain value iteration from the range's ends agrees (to its own precision).
        assert lo_vi[key] == pytest.approx(float(true_low), abs=1e-6)
        assert hi_vi[key] == pytest.approx(float(true_high), abs=1e-6)
        if true_low == true_high:
            # Where the two meet, the iteration brings the bounds within the tolerance
            # (unless the sweep limit stopped it, which 'wide' would count).
            assert solution.high[node] - solution.low[node] <= tolerance or solution.wide


def test_components_are_numbered_children_first() -> None:
    game = ExplicitChanceGame(
        succ=[[1, 2], [0, 3], [3], []],
        leaf={3: 1},
        player=[0, 1, 1, 0],
        odds={},
        value_range=(-1, 1),
    )
    comp, count = strongly_connected(expand_all(game))
    assert count == 3
    assert comp[0] == comp[1]  # the cycle 0 <-> 1
    assert comp[3] < comp[2] < comp[0]


def test_rounding_is_outwards() -> None:
    third = Fraction(1, 3)
    assert Fraction(round_down(third)) < third < Fraction(round_up(third))
    assert round_down(Fraction(1, 2)) == round_up(Fraction(1, 2)) == 0.5


@pytest.mark.parametrize(
    ("n", "value"),
    [(0, "-1"), (1, "1"), (2, "1"), (3, "0"), (4, "-1/2"), (10, "3/16"), (15, "17/512")],
)
def test_coin_nim_values(n: int, value: str) -> None:
    game = CoinNim(n=n)
    solution = solve_graph(expand_all(game))
    assert solution.value(0) == Fraction(value)
    assert solution.exact(0)


def test_coin_nim_strategy() -> None:
    game = CoinNim(n=10)
    graph = expand_all(game)
    solution = solve_graph(graph)
    assert graph.kind[0] == CHANCE and graph.player[0] == 0
    # With 4 stones and heads, take 1 (leave 3: worth 0 to the opponent) rather than 2
    # (leave 2: he wins): the lecture notes' MAX node after the toss.
    node = graph.index[game.parse("4:first:heads")]
    assert graph.kind[node] == DECISION
    assert solution.best_move(node) == "1"
    assert solution.move_values(node) == [("1", 0.0, 0.0), ("2", -1.0, -1.0)]
    assert solution.best_move(0) is None  # a chance node has no move to choose


def test_dice_race_has_chance_inside_cycles() -> None:
    game = DiceRace(goal=6, faces=4)
    graph = expand_all(game)
    comp, count = strongly_connected(graph)
    biggest = max(range(count), key=lambda c: int((comp == c).sum()))
    inside = [v for v in range(len(graph)) if comp[v] == biggest]
    assert any(graph.kind[v] == CHANCE for v in inside) and len(inside) > 10
    solution = solve_graph(graph, tolerance=1e-12)
    assert solution.wide == 0
    assert 0 < solution.high[0] - solution.low[0] <= 1e-12
    # Independent value iteration converges to the same value.
    explicit = _explicit(game, graph)
    lo, hi = value_iteration(explicit, sweeps=400)
    assert lo[0] == pytest.approx(solution.value(0), abs=1e-9)
    assert hi[0] == pytest.approx(solution.value(0), abs=1e-9)


def _explicit(game: DiceRace | Pig | CoinNim, graph: object) -> ExplicitChanceGame:
    from solver.chance.graph import ChanceGraph

    assert isinstance(graph, ChanceGraph)
    succ = [[int(graph.child[e]) for e in graph.moves(v)] for v in range(len(graph))]
    odds = {
        v: [p for e in graph.moves(v) if (p := graph.probability[e]) is not None]
        for v in range(len(graph))
        if graph.kind[v] == CHANCE
    }
    return ExplicitChanceGame(
        succ,
        dict(graph.terminal),
        graph.player.tolist(),
        odds,
        (-1, 1),
    )


def test_pig_small_target_against_value_iteration() -> None:
    game = Pig(target=8, faces=4)
    graph = expand_all(game)
    solution = solve_graph(graph)
    assert graph.kind[0] == DECISION
    assert all(graph.kind[v] == TERMINAL for v in graph.terminal)
    lo, hi = value_iteration(_explicit(game, graph), sweeps=2000)
    for v in range(len(graph)):
        assert solution.low[v] <= lo[v] + 1e-12
        assert solution.high[v] >= hi[v] - 1e-12
        assert solution.high[v] - solution.low[v] <= 1e-9


@pytest.mark.parametrize(
    "text",
    ["", "12-30", "12-30 third 5", "100-0:first:0", "0-0:first:1", "98-0:first:5:rolling"],
)
def test_pig_refuses_malformed_positions(text: str) -> None:
    with pytest.raises(InvalidPositionError):
        Pig().parse(text)


def test_pig_notation_round_trips() -> None:
    game = Pig(target=20)
    graph = expand_all(game)
    for key in graph.keys:
        assert game.parse(game.format(key)) == key


def test_chance_games_must_say_whose_positions_are() -> None:
    game = ExplicitChanceGame([[1], []], {1: 1}, [0, 2], {}, (-1, 1))
    with pytest.raises(ContractError, match="must say whose every position is"):
        expand_all(game)


@pytest.mark.parametrize(
    ("odds", "message"),
    [
        ({0: [Fraction(1, 2), Fraction(1, 3)]}, "sum to 5/6, not 1"),
        ({0: [Fraction(1)]}, "2 outcomes but 1 probabilities"),
        ({0: [Fraction(3, 2), Fraction(-1, 2)]}, "each must be a positive Fraction"),
        ({0: [0.5, 0.5]}, "each must be a positive Fraction"),
    ],
)
def test_bad_probabilities_are_refused(odds: dict[int, list[Fraction]], message: str) -> None:
    game = ExplicitChanceGame([[1, 2], [], []], {1: 1, 2: -1}, [0, 0, 1], odds, (-1, 1))
    with pytest.raises(ContractError, match=message):
        expand_all(game)


class DeadEnd(ExplicitChanceGame):
    """Node 1 has no moves and no value: a broken game."""

    def terminal_value(self, key: int) -> int | None:
        return None


def test_bad_terminal_values_and_dead_ends_are_refused() -> None:
    game = ExplicitChanceGame([[1], []], {1: 5}, [0, 0], {}, (-1, 1))
    with pytest.raises(ContractError, match="within the declared value_range"):
        expand_all(game)
    with pytest.raises(SolveError, match="'1' has no moves but terminal_value"):
        expand_all(DeadEnd([[1], []], {}, [0, 0], {}, (-1, 1)))


def test_tiers_workers_and_batch_sizes_are_refused_for_games_of_chance() -> None:
    from solver import solve
    from solver.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="runs in one process, without tiers"):
        solve(Pig(target=10), full=True, workers=2)
    with pytest.raises(InvalidParameterError, match="takes no batch size"):
        solve(Pig(target=10), batch_size=10)


def _exact_root(result: SolveResult) -> tuple[str | None, str | None]:
    return result.extra["chance"]["low_exact"], result.extra["chance"]["high_exact"]


def _stored(store: MemoryStore) -> Graph:
    (graph,) = store.graphs.values()
    return graph


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chance_games(acyclic=True, most=24))
def test_a_partial_solve_finds_the_exact_root_value_and_final_flags_are_final(
    game: ExplicitChanceGame,
) -> None:
    """Expanding one position a batch (the most pruning), the partial solve ends with the
    root's exact value of the full solve, having expanded no more, and every position it
    flags final holds its exact expectiminimax value."""
    full = solve(game, full=True)
    store = MemoryStore()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("solver.chance.solve.FIRST_BATCH", 1)
        part = solve(game, store=store)
    assert part.complete and part.low_final and part.high_final
    assert _exact_root(part) == _exact_root(full) != (None, None)
    assert part.expansions <= full.expansions
    graph = _stored(store)
    columns = graph.chance
    for node in range(graph.num_nodes):
        key = graph.keys[node]
        truth = expectiminimax(game, key) * (1 if game.player[key] == 0 else -1)
        assert columns.low[node] <= truth <= columns.high[node]
        if graph.low_final[node]:
            assert graph.high_final[node]
            assert columns.low_exact[node] == columns.high_exact[node] == str(truth)
        else:
            assert (
                graph.state[node] == 0
                or columns.low_exact[node] != str(truth)
                or (columns.high_exact[node] != str(truth))
            )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chance_games(acyclic=False))
def test_a_partial_solve_of_a_cyclic_game_brackets_the_true_bounds(
    game: ExplicitChanceGame,
) -> None:
    """On cycles the bounds are the complete graph's (within the tolerance) at the root
    and wherever a flag says final; elsewhere they are sound. (The solves between
    batches are cut to one sweep a level: the roughest bounds they can give.)"""
    store = MemoryStore()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("solver.chance.solve.FIRST_BATCH", 1)
        mp.setattr("solver.chance.solve.ROUGH_SWEEPS", 1)
        part = solve(game, store=store)
    assert part.complete
    graph = _stored(store)
    columns = graph.chance
    for node in range(graph.num_nodes):
        key = graph.keys[node]
        true_low = stochastic_value(game, key, Fraction(RANGE[0]))
        true_high = stochastic_value(game, key, Fraction(RANGE[1]))
        assert columns.low[node] <= true_low and true_high <= columns.high[node]
        if graph.low_final[node]:
            assert true_low - 1e-7 <= columns.low[node]
            assert columns.high[node] <= true_high + 1e-7
            for exact, truth in ((columns.low_exact, true_low), (columns.high_exact, true_high)):
                assert exact[node] is None or Fraction(exact[node]) == truth


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chance_games(acyclic=True, most=16), st.integers(1, 4))
def test_budgeted_runs_continue_each_other_to_the_full_graph(
    game: ExplicitChanceGame, budget: int
) -> None:
    """Partial runs of a few expansions each, then a full one, continue the stored graph:
    the end is the full solve's graph, position for position (by key), move for move."""
    store = MemoryStore()
    part = None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("solver.chance.solve.FIRST_BATCH", 1)
        for _ in range(100):
            part = solve(game, store=store, max_expansions=budget)
            assert part.expansions <= budget
            if part.complete:
                break
            assert part.status == "budget" and part.ended_by == "expansions"
        assert part is not None and part.complete
        assert _exact_root(part) == _exact_root(solve(game, full=True))
        done = solve(game, store=store, full=True)
    assert done.complete
    graph = _stored(store)
    whole = expand_all(game)
    solution = solve_graph(whole)
    assert graph.num_nodes == len(whole) and graph.num_edges == whole.edges
    for node in range(graph.num_nodes):
        other = whole.index[graph.keys[node]]
        assert graph.low_final[node] and graph.high_final[node]
        assert graph.chance.low_exact[node] == str(solution.exact_low[other])
        assert graph.chance.high_exact[node] == str(solution.exact_high[other])
        kids = [graph.keys[c] for c in graph.child_ids(node)]
        assert kids == [whole.keys[int(whole.child[e])] for e in whole.moves(other)]


def test_a_request_to_stop_commits_what_was_expanded() -> None:
    store = MemoryStore()
    asked: list[bool] = []

    def stop() -> bool:  # the CLI's first Ctrl-C: after the first batch
        asked.append(True)
        return len(asked) > 1

    stopped = solve(Pig(target=20), store=store, stop=stop)
    assert stopped.status == "stopped" and stopped.ended_by == "request"
    assert 0 < stopped.expansions < stopped.nodes < 17404
    assert _stored(store).num_nodes == stopped.nodes  # committed
    done = solve(Pig(target=20), store=store)
    assert done.complete and done.expansions > 0
    assert done.low == pytest.approx(solve(Pig(target=20), full=True).low, abs=2e-9)


class BetterMove(ExplicitChanceGame):
    """The player chooses between two coin tosses. The *worse* one's heads loses (-2)
    and its tails starts a chain of tosses: it is worth at most 0. The other's heads win
    1 and its tails toss again, *long* times, to 2 at the end: it is worth more than 1,
    which only following its chain to the end tells exactly; a partial solve does that
    and leaves the worse chain alone once its first toss shows it cannot be better."""

    def __init__(self, worse: int, long: int) -> None:
        half = [Fraction(1, 2)] * 2
        # 0 the choice, 1 the worse toss, 2 its heads (-2), then the worse chain
        self.worse_chain = range(3, 3 + worse)
        first = self.worse_chain.stop + 1  # the long chain's first toss
        one = first + long + 1
        succ: list[list[int]] = [[1, first], [2, 3], []]
        odds: dict[int, list[Fraction]] = {1: half}
        for i in self.worse_chain:
            succ.append([i + 1, 2])
            odds[i] = half
        succ.append([])
        for i in range(first, first + long):
            succ.append([one, i + 1])
            odds[i] = half
        succ += [[], []]
        leaf = {2: -2, self.worse_chain.stop: 2, first + long: 2, one: 1}
        super().__init__(succ, leaf, [0] * len(succ), odds, RANGE)


def test_a_partial_solve_leaves_provably_worse_moves_unexplored() -> None:
    game = BetterMove(worse=40, long=12)
    full = solve(game, full=True)
    store = MemoryStore()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("solver.chance.solve.FIRST_BATCH", 1)
        part = solve(game, store=store)
    assert _exact_root(part) == _exact_root(full) != (None, None)
    assert part.complete and part.extra["chance"]["best_move"] == "1:44"  # the long toss
    graph = _stored(store)
    expanded = {graph.keys[v] for v in range(graph.num_nodes) if graph.state[v] != 0}
    # Batches of expansions run ahead of the solves: two of the worse chain's 40 tosses
    # are looked at before the first one proves the move worse (15 without that proof).
    assert 1 in expanded and len(expanded & set(game.worse_chain)) <= 2
    assert part.expansions <= full.expansions - 35  # 19 of 58 (32 without the proof)


def test_a_full_solve_in_memory_reports_the_chance_values() -> None:
    from solver import solve

    result = solve(CoinNim(n=10), full=True)
    assert result.complete and result.full
    assert result.extra["chance"]["low_exact"] == result.extra["chance"]["high_exact"] == "3/16"
    assert result.extra["chance"]["exact"] is True
    assert result.low == result.high == 3 / 16
    assert result.extra["chance"]["kind"] == "chance"


def test_a_game_class_declaring_chance_needs_the_hook_and_contract_3() -> None:
    from solver.games import check_game_class

    assert check_game_class(Pig) is Pig

    class NoOdds(DiceRace):
        name = "no-odds"
        probabilities = GameBase.probabilities

    class OldContract(DiceRace):
        name = "old-contract"
        contract = 2

    with pytest.raises(ContractError, match="declares chance nodes but does not implement"):
        check_game_class(NoOdds)
    with pytest.raises(ContractError, match="which Game contract 3 added"):
        check_game_class(OldContract)


class BadOdds(ExplicitChanceGame):
    """Position 0 is a chance node whose probabilities sum to 5/6; position 2 belongs
    to nobody."""

    def player_to_move(self, key: int) -> int:
        return 7 if key == 2 else self.player[key]


@pytest.mark.parametrize("game", [Pig(target=12), CoinNim(n=6), DiceRace(goal=5)])
def test_check_passes_the_games_of_chance(game: Pig | CoinNim | DiceRace) -> None:
    from solver.check import check_game

    report = check_game(game, max_positions=500)
    assert report.ok, report.violations


def test_check_reports_broken_chance_contracts() -> None:
    from solver.check import check_game

    game = BadOdds(
        [[1, 2], [], []], {1: 1, 2: -1}, [0, 0, 1], {0: [Fraction(1, 2), Fraction(1, 3)]}, (-1, 1)
    )
    report = check_game(game, max_positions=10)
    found = {(v.check, v.witness, v.message) for v in report.violations}
    assert ("chance", "0", "the probabilities sum to 5/6, not 1") in found
    assert ("chance", "2", "player_to_move() is 7, not 0 or 1 (a chance game must say)") in found


@pytest.mark.slow
def test_pig_to_100_matches_the_published_optimum() -> None:
    """Neller and Presser (2004): under optimal play the first player wins 53.06% of
    games. Their optimal policy at a score of 41 against 49: roll until the turn total is
    22 or more, except at exactly 27, where one more roll is right (a published sample of
    the policy's irregular thresholds)."""
    game = Pig(target=100)
    graph = expand_all(game)
    solution = solve_graph(graph)
    assert solution.wide == 0
    low, high = solution.low[0], solution.high[0]
    assert high - low <= 1e-9
    assert round((low + 1) / 2, 4) == round((high + 1) / 2, 4) == 0.5306

    def decision(text: str) -> str:
        node = graph.index[game.parse(text)]
        (roll, roll_low, roll_high), (hold, hold_low, hold_high) = solution.move_values(node)
        assert (roll, hold) == ("roll", "hold")
        # The decision is proved: one move's lower bound is above the other's upper.
        assert roll_low > hold_high or hold_low > roll_high
        return "roll" if roll_low > hold_high else "hold"

    expected = {k: "roll" for k in range(2, 22)} | {k: "hold" for k in range(22, 27)}
    expected |= {27: "roll", 28: "hold", 30: "hold"}
    assert {k: decision(f"41-49:first:{k}") for k in expected} == expected


def test_the_c_value_iteration_is_built() -> None:
    """The install compiles solver/chance/_sweep.c (setup.py); without it chance solves
    sweep with NumPy, to the same floats but slower: a missing build must show here."""
    import importlib
    import os

    from solver.chance import bounds

    try:
        importlib.import_module("solver.chance._sweep")
    except ImportError as e:  # pragma: no cover - the failure message is the point
        pytest.fail(f"solver.chance._sweep is not built ({e}): install with a C compiler")
    assert (bounds.NATIVE_ITERATE is None) == bool(os.environ.get("NEGAGRAPH_PURE_PYTHON"))


@pytest.mark.parametrize("seed", range(12))
def test_the_c_and_numpy_value_iterations_give_the_same_floats(seed: int) -> None:
    """On random cyclic games with chance nodes of up to 40 outcomes (NumPy sums more
    than 8 terms pairwise, which the C sums follow), and Pig, both paths of _iterate
    give every bound, as the same float, in the same number of sweeps. (Bit for bit but
    for a zero's sign: of 0.0 and -0.0, NumPy's vectorised maximum of many moves may
    keep either.)"""
    import random

    from solver.chance import _sweep, bounds

    rng = random.Random(seed)
    n = rng.randint(20, 60)
    succ: list[list[int]] = []
    leaf: dict[int, int] = {}
    odds: dict[int, list[Fraction]] = {}
    for i in range(n):
        kind = rng.choice(["terminal", "decision", "chance", "chance"]) if i else "chance"
        if kind == "terminal":
            succ.append([])
            leaf[i] = rng.randint(-3, 3)
        elif kind == "decision":
            succ.append([rng.randrange(n) for _ in range(rng.randint(1, 12))])
        else:
            kids = [rng.randrange(n) for _ in range(rng.randint(2, 40))]
            weights = [rng.randint(1, 9) for _ in kids]
            succ.append(kids)
            odds[i] = [Fraction(w, sum(weights)) for w in weights]
    game: GameBase = ExplicitChanceGame(
        succ, leaf, [rng.randint(0, 1) for _ in range(n)], odds, (-3, 3)
    )
    if seed == 0:
        game = Pig(target=12, faces=5)
    graph = expand_all(game)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bounds, "NATIVE_ITERATE", _sweep.iterate)
        native = solve_graph(graph, tolerance=1e-12)
        mp.setattr(bounds, "NATIVE_ITERATE", None)
        numpy = solve_graph(graph, tolerance=1e-12)
    assert native.sweeps == numpy.sweeps > 0
    assert native.low.tolist() == numpy.low.tolist()
    assert native.high.tolist() == numpy.high.tolist()
