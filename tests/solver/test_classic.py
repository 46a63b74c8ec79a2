"""The search family (solver.classic) against plain minimax and the seed games' values.

Plain minimax is ``alphabeta(game, prune=False, tt=False)``; the depth-limited oracle is
written here, on the explicit graphs of ``tests/oracles.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.alphabeta import alphabeta
from solver.classic import FAMILY, METHODS, SearchOptions, search
from solver.errors import InvalidParameterError, SolveError
from solver.games import get_game
from tests.oracles import ExplicitGame

Graph = tuple[list[list[int]], dict[int, int]]


@st.composite
def trees(draw: st.DrawFn, max_nodes: int = 40, *, transpositions: bool = False) -> Graph:
    """A random game tree, grown breadth first: a node at depth ``d`` is a leaf with
    probability ``3d/20``, else it has 1 to 3 children (numbered after it). With
    *transpositions*, some nodes get one more move, to a later node (still acyclic)."""
    succ: list[list[int]] = [[]]
    depth = [0]
    for i in range(max_nodes):
        if i >= len(succ):
            break
        if depth[i] and draw(st.integers(0, 19)) < 3 * depth[i]:
            continue
        k = draw(st.integers(2, 3))
        if len(succ) + k > max_nodes:
            continue
        succ[i] = list(range(len(succ), len(succ) + k))
        succ.extend([] for _ in range(k))
        depth.extend([depth[i] + 1] * k)
    n = len(succ)
    if transpositions:
        for i in range(n - 1):
            if len(succ[i]) > 0 and draw(st.booleans()):
                succ[i].append(draw(st.integers(i + 1, n - 1)))
    return succ, _leaves(draw, succ)


@st.composite
def dags(draw: st.DrawFn, max_nodes: int = 14) -> Graph:
    """A random acyclic graph: moves only to higher-numbered nodes, with transpositions
    (several parents) and repeated moves."""
    n = draw(st.integers(1, max_nodes))
    succ: list[list[int]] = []
    for i in range(n):
        if i == n - 1 or draw(st.integers(0, 9)) < 3:
            succ.append([])
        else:
            succ.append(draw(st.lists(st.integers(i + 1, n - 1), min_size=1, max_size=4)))
    return succ, _leaves(draw, succ)


GRAPHS = trees() | trees(transpositions=True) | dags()
"""Game trees, trees with transpositions, and small dense acyclic graphs."""


def _leaves(draw: st.DrawFn, succ: list[list[int]]) -> dict[int, int]:
    """Leaf values: mostly distinct (a shuffled range, so that bounds are rarely tight by
    chance), shifted, on a random scale (so that windows of 1 fail, and widen, often)."""
    leaves = [i for i, s in enumerate(succ) if not s]
    scale = draw(st.sampled_from([1, 7, 100]))
    shift = draw(st.integers(-len(leaves), 0))
    values = draw(st.permutations(range(len(leaves))))
    return {i: scale * (v + shift) for i, v in zip(leaves, values, strict=True)}


@st.composite
def exact_options(draw: st.DrawFn) -> SearchOptions:
    """Any member of the family in exact mode, with any first guess and window."""
    method = draw(st.sampled_from(METHODS))
    aspiration = None if method == "mtdf" else draw(st.none() | st.integers(1, 5))
    return SearchOptions(
        method=method,
        deepening=draw(st.booleans()),
        aspiration=aspiration,
        guess=draw(st.integers(-600, 600)),
    )


def child_of(label: str | None) -> int:
    """The child an ExplicitGame move label names (``"index:child"``)."""
    assert label is not None
    return int(label.split(":")[1])


def check_exact(game: ExplicitGame, options: SearchOptions) -> None:
    """The family member's value is plain minimax's, and its best move achieves it."""
    plain = alphabeta(game, prune=False, tt=False)
    result = search(game, options=options)
    assert result.value == plain.value
    assert result.exact
    assert result.stats.distinct <= plain.stats.distinct
    if game.succ[0]:
        best = child_of(result.best_move)
        assert best in game.succ[0]
        assert -alphabeta(game, best, prune=False, tt=False).value == plain.value
        assert result.stats.passes >= 1


@settings(max_examples=200, deadline=None)
@given(graph=GRAPHS, options=exact_options())
def test_every_member_equals_plain_minimax(graph: Graph, options: SearchOptions) -> None:
    check_exact(ExplicitGame(*graph), options)


@pytest.mark.parametrize("name", sorted(FAMILY))
@settings(max_examples=60, deadline=None)
@given(graph=GRAPHS)
def test_each_named_member_equals_plain_minimax(name: str, graph: Graph) -> None:
    check_exact(ExplicitGame(*graph), FAMILY[name])


def test_pvs_searches_again_when_a_null_window_fails_high() -> None:
    # 0 -> 1 (worth -2 to 0) and 0 -> 2; 2 -> 3 (leaf) and 2 -> 4 -> {5, 6}. The null
    # window (-2, -1) on move 2 proves only "better than -2" (a lower bound of -1, from
    # 4's first move cutting); the re-search finds the value 0.
    game = ExplicitGame([[1, 2], [], [3, 4], [], [5, 6], [], []], {1: 2, 3: 3, 5: 1, 6: 0})
    assert alphabeta(game, prune=False, tt=False).value == 0
    result = search(game, options=FAMILY["pvs"])
    assert (result.value, result.best_move, result.stats.researches) == (0, "1:2", 1)
    assert search(game).stats.researches == 0  # alpha-beta never searches twice


def limited_value(game: ExplicitGame, evaluate: Callable[[int], int], node: int, depth: int) -> int:
    """Negamax of *node* *depth* plies deep, non-terminal positions there scored by
    *evaluate* (terminal positions always by their value)."""

    @cache
    def value(n: int, d: int) -> int:
        if not game.succ[n]:
            return game.leaf[n]
        if d == 0:
            return evaluate(n)
        return max(-value(c, d - 1) for c in game.succ[n])

    return value(node, depth)


@st.composite
def limited_options(draw: st.DrawFn, evaluate: Callable[[int], int]) -> SearchOptions:
    method = draw(st.sampled_from(METHODS))
    aspiration = None if method == "mtdf" else draw(st.none() | st.integers(1, 5))
    return SearchOptions(
        method=method,
        deepening=draw(st.booleans()),
        aspiration=aspiration,
        depth=draw(st.integers(1, 6)),
        evaluate=evaluate,
        guess=draw(st.integers(-20, 20)),
    )


@settings(max_examples=200, deadline=None)
@given(graph=trees(), data=st.data())
def test_depth_limited_search_of_a_tree_equals_depth_limited_minimax(
    graph: Graph, data: st.DataObject
) -> None:
    # In a tree every position is met at one depth, so the table's bounds are always of
    # the same depth limit and each member computes exactly depth-limited minimax.
    game = ExplicitGame(*graph)
    scores = data.draw(st.lists(st.integers(-9, 9), min_size=len(game.succ)))
    evaluate = scores.__getitem__
    options = data.draw(limited_options(evaluate))
    assert options.depth is not None
    result = search(game, options=options)
    assert result.value == limited_value(game, evaluate, 0, options.depth)
    if result.exact:  # no depth limit was met: the game's own value
        assert result.value == alphabeta(game, prune=False, tt=False).value
    if not game.succ[0]:  # a terminal root: nothing searched
        assert (result.exact, result.depth, result.best_move) == (True, 0, None)
        return
    if not options.deepening:
        assert result.depth == options.depth
    assert result.depth is not None and 1 <= result.depth <= options.depth
    # the best move scores the value at the depth the search ended
    best = child_of(result.best_move)
    assert -limited_value(game, evaluate, best, result.depth - 1) == result.value


@settings(max_examples=200, deadline=None)
@given(graph=trees(transpositions=True) | dags(), data=st.data())
def test_an_exact_depth_limited_result_is_the_game_value(graph: Graph, data: st.DataObject) -> None:
    # With transpositions a table may answer from a deeper search, so the heuristic score
    # can differ from depth-limited minimax; but a result marked exact never does.
    game = ExplicitGame(*graph)
    scores = data.draw(st.lists(st.integers(-9, 9), min_size=len(game.succ)))
    options = data.draw(limited_options(scores.__getitem__))
    result = search(game, options=options)
    if result.exact:
        assert result.value == alphabeta(game, prune=False, tt=False).value
    longest = _longest_line(game)
    if options.depth is not None and options.depth >= longest:
        assert result.exact


def _longest_line(game: ExplicitGame) -> int:
    @cache
    def plies(node: int) -> int:
        return 1 + max((plies(c) for c in game.succ[node]), default=-1)

    return plies(0)


SEEDS: list[tuple[str, dict[str, object], int]] = [
    ("tic-tac-toe", {}, 0),
    ("tic-tac-toe", {"symmetry": True}, 0),
    # docs/pruning.md's e-Valuate rows (the paper's example is 18)
    ("e-valuate", {"expression": "x*(y-z)", "symmetry": False}, 18),
    ("e-valuate", {"expression": "a*b-c*d"}, 29),
    ("e-valuate", {"expression": "(a-b)*(c-d)", "symmetry": False}, 18),
    ("e-valuate", {"expression": "a*(b-c)+d"}, 25),
    ("domino-tiling", {"rows": 3, "cols": 4, "symmetry": False}, 5),
    ("domino-tiling", {"rows": 4, "cols": 4}, 7),
    ("connect-four", {"width": 4, "height": 4}, 0),
    ("connect-four", {"width": 5, "height": 3, "symmetry": True}, 0),
]


@pytest.mark.parametrize(("name", "params", "expected"), SEEDS)
def test_seed_games_values(name: str, params: dict[str, object], expected: int) -> None:
    game = get_game(name, **params)
    best_moves = set()
    for member, options in FAMILY.items():
        result = search(game, options=options)
        assert (result.value, result.exact) == (expected, True), member
        best_moves.add(result.best_move)
    children = dict(game.children(game.initial()))
    for move in best_moves:  # each best move keeps the value
        assert move is not None
        assert -alphabeta(game, children[move], ordering=True).value == expected, move


@pytest.mark.parametrize("member", ["pvs", "mtdf-deepening"])
def test_connect_four_5x4_is_a_draw(member: str) -> None:
    result = search(get_game("connect-four", width=5, height=4), options=FAMILY[member])
    assert (result.value, result.exact) == (0, True)


@pytest.mark.parametrize("member", sorted(FAMILY))
def test_a_repeating_game_is_refused_like_alpha_beta(member: str) -> None:
    with pytest.raises(SolveError, match="repeats; the classic searches need an acyclic"):
        search(get_game("number-game"), options=FAMILY[member])


def test_depth_limited_tic_tac_toe() -> None:
    game = get_game("tic-tac-toe", symmetry=True)
    seen: list[int] = []

    def evaluate(key: int) -> int:
        seen.append(key)
        return 0

    shallow = search(game, options=SearchOptions(method="pvs", depth=2, evaluate=evaluate))
    assert (shallow.value, shallow.exact, shallow.depth) == (0, False, 2)
    assert shallow.best_move in dict(game.children(game.initial()))
    assert seen and all(game.canonical(k) == k for k in seen)  # canonical keys
    assert shallow.stats.frontier == len(seen) and shallow.stats.calls >= len(seen)
    # nine plies reach the end of every line: exact, the evaluation never decides
    deep = search(game, options=SearchOptions(method="mtdf", depth=9, evaluate=lambda k: 1))
    assert (deep.value, deep.exact, deep.depth) == (0, True, 9)
    # iterative deepening stops where no line was cut, before its limit
    ids = search(game, options=SearchOptions(deepening=True, depth=20, evaluate=evaluate))
    assert (ids.value, ids.exact, ids.depth) == (0, True, 9)


def test_a_terminal_root_is_its_value() -> None:
    game = ExplicitGame([[]], {0: 4})
    for options in FAMILY.values():
        result = search(game, options=options)
        assert (result.value, result.best_move, result.exact, result.depth) == (4, None, True, None)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "negascout"}, "unknown search method 'negascout'; choose one of"),
        ({"depth": 0, "evaluate": abs}, "at least 1, not 0"),
        ({"depth": 3}, "a depth limit needs an evaluation"),
        ({"evaluate": abs}, "give a depth or deepening"),
        ({"aspiration": 0}, "positive half-width"),
        ({"method": "mtdf", "aspiration": 2}, "for alphabeta or pvs"),
    ],
)
def test_bad_options_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        SearchOptions(**kwargs)  # type: ignore[arg-type]
