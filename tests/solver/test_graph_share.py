"""Graph sharing: the paper's worked example, a brute force written here, closed forms."""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Sequence
from functools import cache

import pytest

from solver.alphabeta import alphabeta
from solver.errors import InvalidParameterError, InvalidPositionError
from solver.games import get_game
from solver.games.graph_share import GraphShare, _swap_test, automorphisms, build_graph
from solver.negamax import solve

# The friendship graph F3 of the paper's Figure 2, written out by hand: centre 0, and the
# triangles 0-1-2, 0-3-4, 0-5-6.
FRIENDSHIP_3 = [(0, 1), (0, 2), (1, 2), (0, 3), (0, 4), (3, 4), (0, 5), (0, 6), (5, 6)]


def brute_force(edges: Sequence[tuple[int, int]], mode: str, colors: int) -> int:
    """MAX's share under optimal play, from the rules alone: MAX proposes a colour, MIN
    colours any uncoloured element with it; a shared element is MAX's when the coloured
    elements it touches are not all of one colour."""
    vertices = sorted({v for e in edges for v in e})
    if mode == "vertices":
        elements: list[object] = list(vertices)
        touches: list[list[object]] = [[u, v] for u, v in edges]
    else:
        elements = list(edges)
        touches = [[e for e in edges if v in e] for v in vertices]

    def share(colouring: dict[object, int]) -> int:
        return sum(len({colouring[x] for x in group}) > 1 for group in touches)

    @cache
    def max_node(done: frozenset[tuple[object, int]]) -> int:
        if len(done) == len(elements):
            return share(dict(done))
        return max(min_node(done, c) for c in range(colors))

    def min_node(done: frozenset[tuple[object, int]], c: int) -> int:
        taken = {x for x, _ in done}
        return min(max_node(done | {(x, c)}) for x in elements if x not in taken)

    return max_node(frozenset())


def all_values(game: GraphShare, *, plain: bool = True) -> list[int | None]:
    out: list[int | None] = [alphabeta(game, tt=False).value] if plain else []
    out += [alphabeta(game).value, alphabeta(game, ordering=True).value]
    partial = solve(game)
    full = solve(game, full=True)
    assert partial.complete and full.complete
    return [*out, partial.value, full.value]


# Example 1 of section 5: "We illustrate the games we have described on the Friendship
# graph (see Figure 2). We assume |C| = 2 and optimal play from both players."
def test_paper_example_vertex_colouring_shares_four_edges() -> None:
    # "(V, E) game: We show that MAX's share is 4 edges. MAX ensures that [his share is at
    # least 4] by proposing three red and four blue colors (in any order). [...] On the
    # other hand MIN ensures that [it is at most 4] [...] at least one of the 3 triangles
    # will be monochromatic. The other two will each have utmost two edges whose ends
    # are colored differently."
    game = GraphShare(graph="friendship-3", mode="vertices", colors=2)
    assert game.edges == tuple(FRIENDSHIP_3)
    assert brute_force(FRIENDSHIP_3, "vertices", 2) == 4
    assert all_values(game) == [4] * 5
    assert all_values(GraphShare(symmetry=False)) == [4] * 5


def test_paper_example_edge_colouring_shares_two_vertices() -> None:
    # "(E, V) game: Here MAX's share is 2 vertices. MAX chooses one red and eight blue
    # colors (in any order) [...] MIN assigns red colors to the edges [...] This ensures
    # [MAX's share is at most 2]."
    game = GraphShare(graph="friendship-3", mode="edges", colors=2)
    assert brute_force(FRIENDSHIP_3, "edges", 2) == 2
    assert all_values(game, plain=False) == [2] * 4


def test_paper_strategy_three_red_four_blue_guarantees_four() -> None:
    # MAX's strategy of the paper, checked against every order MIN may colour in: the
    # 3 + 4 colours are proposed in a fixed order and MIN places each as he likes.
    game = GraphShare(graph="friendship-3", mode="vertices", colors=2, symmetry=False)
    proposals = ["a", "a", "a", "b", "b", "b", "b"]

    @cache
    def worst(key: int, turn: int) -> int:
        if turn == len(proposals):
            value = game.terminal_value(key)
            assert value is not None
            return value
        pending = dict(game.children(key))[proposals[turn]]
        return min(worst(child, turn + 1) for _, child in game.children(pending))

    assert worst(game.initial(), 0) == 4


SMALL = [
    ("path-2", [(0, 1)], "vertices", 2, 1),
    ("path-4", [(0, 1), (1, 2), (2, 3)], "vertices", 2, None),
    ("path-4", [(0, 1), (1, 2), (2, 3)], "edges", 2, None),
    ("cycle-4", [(0, 1), (1, 2), (2, 3), (0, 3)], "vertices", 3, None),
    ("cycle-5", [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)], "vertices", 2, None),
    ("cycle-5", [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)], "edges", 2, None),
    ("complete-4", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], "edges", 2, None),
    ("star-3", [(0, 1), (0, 2), (0, 3)], "vertices", 2, None),
    ("edges:0-1,1-2,2-0,2-3", [(0, 1), (1, 2), (0, 2), (2, 3)], "edges", 3, None),
    ("edges:5-7,7-9", [(5, 7), (7, 9)], "vertices", 2, None),
]


@pytest.mark.parametrize(
    ("graph", "edges", "mode", "colors", "known"),
    SMALL,
    ids=[f"{g}-{m}-{c}" for g, _, m, c, _ in SMALL],
)
def test_agrees_with_brute_force(
    graph: str, edges: list[tuple[int, int]], mode: str, colors: int, known: int | None
) -> None:
    expected = brute_force(edges, mode, colors)
    if known is not None:
        assert expected == known
    for symmetry in (False, True):
        game = GraphShare(graph=graph, mode=mode, colors=colors, symmetry=symmetry)
        assert sorted(game.edges) == sorted((min(e), max(e)) for e in edges)
        assert all_values(game, plain=len(game.element_names) <= 5) == [expected] * (
            5 if len(game.element_names) <= 5 else 4
        ), (graph, mode, colors, symmetry)


# -- closed forms, at sizes beyond the brute force ----------------------------------------


def turan_edges(n: int, parts: int) -> int:
    """Edges of the complete graph K_n whose ends lie in different parts of the most even
    partition of its vertices into *parts* parts (the Turán number t(n, parts))."""
    sizes = [n // parts + (1 if i < n % parts else 0) for i in range(parts)]
    return math.comb(n, 2) - sum(math.comb(s, 2) for s in sizes)


@pytest.mark.parametrize(("n", "colors"), [(7, 2), (9, 3), (8, 4)])
def test_complete_graph_vertex_colouring_is_turan(n: int, colors: int) -> None:
    # In K_n every vertex is like every other, so MIN's choices do not matter: MAX picks
    # the colour counts, and spreads them as evenly as possible.
    game = GraphShare(graph=f"complete-{n}", mode="vertices", colors=colors)
    expected = turan_edges(n, colors)
    assert alphabeta(game, ordering=True).value == expected
    assert solve(game).value == expected
    assert solve(game, full=True).value == expected


def test_one_colour_gives_max_nothing() -> None:
    for graph, mode in [("friendship-4", "vertices"), ("cycle-9", "edges")]:
        game = GraphShare(graph=graph, mode=mode, colors=1)
        assert alphabeta(game).value == 0
        assert solve(game).value == 0


def test_enough_colours_give_max_everything() -> None:
    # With at least as many colours as elements, MAX proposes a new colour every time.
    game = GraphShare(graph="cycle-5", mode="vertices", colors=5)
    assert alphabeta(game, ordering=True).value == 5
    assert solve(game).value == 5
    # Edge colouring: every vertex of degree >= 2 (here all but the path's two ends).
    game = GraphShare(graph="path-6", mode="edges", colors=5)
    assert alphabeta(game, ordering=True).value == 4
    assert solve(game, full=True).value == 4


def test_star_edge_colouring_gives_max_the_centre_only() -> None:
    # Leaves have one edge each, so are MIN's; MAX proposes two different colours.
    for n in (2, 5, 9):
        game = GraphShare(graph=f"star-{n}", mode="edges", colors=2)
        assert alphabeta(game, ordering=True).value == 1
        assert solve(game).value == 1
    assert alphabeta(GraphShare(graph="star-1", mode="edges")).value == 0


# -- graphs, symmetry ---------------------------------------------------------------------


def test_builtin_graphs() -> None:
    assert build_graph("friendship-3") == (tuple(range(7)), tuple(FRIENDSHIP_3))
    assert build_graph("cycle-4") == ((0, 1, 2, 3), ((0, 1), (1, 2), (2, 3), (0, 3)))
    assert build_graph("path-3") == ((0, 1, 2), ((0, 1), (1, 2)))
    assert build_graph("complete-3") == ((0, 1, 2), ((0, 1), (0, 2), (1, 2)))
    assert build_graph("star-2") == ((0, 1, 2), ((0, 1), (0, 2)))
    assert build_graph("edges: 3-1, 1-2") == ((1, 2, 3), ((1, 3), (1, 2)))


@pytest.mark.parametrize(
    ("graph", "size"),
    [("friendship-3", 48), ("cycle-5", 10), ("path-4", 2), ("complete-4", 24), ("star-3", 6)],
)
def test_automorphism_counts(graph: str, size: int) -> None:
    vertices, edges = build_graph(graph)
    autos = automorphisms(vertices, edges, 10_000)
    assert autos is not None and len(autos) == size
    assert automorphisms(vertices, edges, size - 1) is None


@pytest.mark.parametrize(
    ("params", "size"),
    [
        ({"graph": "friendship-3"}, 96),  # 48 automorphisms x 2 colour permutations
        ({"graph": "friendship-3", "mode": "edges"}, 96),
        ({"graph": "cycle-5", "colors": 3}, 60),
        ({"graph": "edges:0-1"}, 4),
        ({"graph": "edges:0-1", "mode": "edges"}, 2),  # swapping the ends fixes the edge
        ({"graph": "complete-7"}, math.factorial(7) * 2),  # interchangeable vertices
    ],
)
def test_symmetry_group_sizes(params: dict[str, object], size: int) -> None:
    assert GraphShare(**params, symmetry=True).symmetry_group_size == size


def test_symmetry_includes_colour_permutations() -> None:
    game = GraphShare(graph="path-3")
    assert game.canonical(game.parse("0=a;proposed=b")) == game.canonical(
        game.parse("0=b;proposed=a")
    )
    assert game.canonical(game.parse("0=a")) == game.canonical(game.parse("2=b"))
    assert game.canonical(game.parse("0=a")) != game.canonical(game.parse("1=a"))


# -- rules, key, notation -----------------------------------------------------------------


def test_moves_values_and_notation() -> None:
    game = GraphShare(symmetry=False)
    root = game.initial()
    assert game.format(root) == "0=?,1=?,2=?,3=?,4=?,5=?,6=?"
    assert game.player_to_move(root) == 0
    assert [m for m, _ in game.children(root)] == ["a", "b"]
    pending = dict(game.children(root))["b"]
    assert game.format(pending) == "0=?,1=?,2=?,3=?,4=?,5=?,6=?;proposed=b"
    assert game.player_to_move(pending) == 1
    assert [m for m, _ in game.children(pending)] == [str(v) for v in range(7)]
    done = game.parse("0=a,1=b,2=b,3=a,4=a,5=b,6=a")
    assert game.children(done) == []
    # Edges with ends of different colours: 0-1, 0-2, 0-5, 5-6.
    assert game.terminal_value(done) == 4
    assert game.parse(" 3 = a ; proposed = b ") == game.parse("0=?,3=a;proposed=b")
    assert game.parse(";proposed=a") == game.parse("0=?;proposed=a")

    edges = GraphShare(graph="path-3", mode="edges", symmetry=False)
    assert edges.format(edges.initial()) == "0-1=?,1-2=?"
    key = edges.parse("2-1=a,0-1=b")
    assert edges.format(key) == "0-1=b,1-2=a"
    assert edges.terminal_value(key) == 1  # vertex 1 sees two colours; 0 and 2 one edge
    assert [m for m, _ in edges.children(edges.parse("0-1=a;proposed=b"))] == ["1-2"]


def test_parameters_are_normalised() -> None:
    game = get_game("graph-share", graph="edges: 1-0 ,2-1")
    assert game.params["graph"] == "edges:0-1,1-2"
    assert game == get_game("graph-share", graph="edges:0-1,1-2")


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        ("petersen", "unknown graph 'petersen': use friendship-N"),
        ("cycle-2", "cycle-N needs 3 <= N <= 30"),
        ("complete-31", "complete-N needs 2 <= N <= 30"),
        ("friendship-15", "friendship-N needs 1 <= N <= 14"),
        ("path-1", "path-N needs 2 <= N <= 30"),
        ("edges:", "lists no edges"),
        ("edges:0-0", "self-loop '0-0'"),
        ("edges:0-1,1-0", "edge '1-0' is listed twice"),
        ("edges:0-1,1-x", "bad edge '1-x'"),
        ("edges:0-1,,1-2", "bad edge ''"),
        ("edges:0-100", "bad edge '0-100'"),
    ],
)
def test_bad_graphs(graph: str, message: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        GraphShare(graph=graph)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"mode": "faces"}, "'mode' must be one of vertices, edges"),
        ({"colors": 0}, "'colors' must be at least 1"),
        ({"colors": 7}, "'colors' must be at most 6"),
    ],
)
def test_bad_parameters(params: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        get_game("graph-share", **params)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty position: give colours like '0=?,1=?,2=?'"),
        ("7=a", "'7' is not a coloured vertex of graph friendship-3"),
        ("0-1=a", "'0-1' is not a coloured vertex"),
        ("0=c", "'c' is not a colour"),
        ("0=a,0=b", "'0' is given twice"),
        ("0=a;b", "expected ';proposed=c'"),
        ("0=a,1=a,2=a,3=a,4=a,5=a,6=a;proposed=b", "every element is coloured"),
        ("0:a", "expected 'element=colour' or 'element=?', got '0:a'"),
    ],
)
def test_bad_positions(text: str, message: str) -> None:
    with pytest.raises(InvalidPositionError) as info:
        GraphShare().parse(text)
    assert message in str(info.value)


def test_bad_edge_position() -> None:
    game = GraphShare(graph="path-3", mode="edges")
    with pytest.raises(InvalidPositionError, match="'0-2' is not a coloured edge"):
        game.parse("0-2=a")


def test_value_range_holds() -> None:
    game = GraphShare(graph="friendship-3", mode="edges", symmetry=False)
    assert game.value_range == (-7, 7)  # seven vertices are shared
    stack, seen = [game.initial()], {game.initial()}
    while stack:
        key = stack.pop()
        value = game.terminal_value(key)
        assert value is None or 0 <= value <= 7
        for _, child in game.children(key):
            if child not in seen:
                seen.add(child)
                stack.append(child)


def _brute_swappable(sets: list[frozenset[int]], a: int, b: int) -> bool:
    family = sorted(sorted(s) for s in sets)
    swap = {a: b, b: a}
    return sorted(sorted(swap.get(x, x) for x in s) for s in sets) == family


@pytest.mark.parametrize(
    ("graph", "mode"),
    [
        ("complete-7", "edges"),
        ("complete-7", "vertices"),
        ("star-6", "edges"),
        ("star-6", "vertices"),
        ("friendship-3", "edges"),
        ("cycle-6", "edges"),
        ("path-5", "edges"),
        ("edges:0-1,0-2,0-3,1-4,2-4,3-4,5-6", "edges"),
        ("edges:0-1,0-2,0-3,1-4,2-4,3-4,5-6", "vertices"),
    ],
)
def test_swap_test_agrees_with_comparing_whole_families(graph: str, mode: str) -> None:
    game = get_game("graph-share", graph=graph, mode=mode, symmetry=False)
    assert isinstance(game, GraphShare)
    sets = [frozenset(s) for s in game.shared_sets]
    m = len(game.element_names)
    swappable = _swap_test(sets, m)
    for a in range(m):
        for b in range(m):
            if a != b:
                assert swappable(a, b) == _brute_swappable(sets, a, b), (a, b)


def test_complete_30_edges_builds_in_well_under_a_second() -> None:
    # Its swap classes took 16 s to find by sorting the whole family for each pair.
    start = time.perf_counter()
    game = get_game("graph-share", graph="complete-30", mode="edges", colors=6)
    assert time.perf_counter() - start < 5  # generous on a loaded machine; ~0.3 s alone
    assert game.uses_symmetry


def _all_automorphisms(n: int, edges: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    edge_set = {frozenset(e) for e in edges}
    return [
        p
        for p in itertools.permutations(range(n))
        if {frozenset((p[u], p[v])) for u, v in edges} == edge_set
    ]


def test_automorphisms_are_every_adjacency_preserving_permutation() -> None:
    rng = random.Random(7)
    for _ in range(150):
        n = rng.randint(1, 7)
        density = rng.choice([0.2, 0.5, 0.8])
        edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < density]
        expected = _all_automorphisms(n, edges)
        for cap in (2, 10, 5040):
            found = automorphisms(range(n), edges, cap)
            if len(expected) > cap:
                assert found is None, (n, edges, cap)
            else:
                assert found is not None and sorted(found) == sorted(expected), (n, edges)


RIGID_CUBIC = (
    "edges:0-1,0-9,0-16,1-6,1-22,2-10,2-13,2-29,3-9,3-11,3-23,4-5,4-10,4-26,5-20,5-29,6-15,"
    "6-24,7-17,7-18,7-27,8-14,8-18,8-23,9-14,10-22,11-12,11-19,12-24,12-25,13-16,13-22,"
    "14-15,15-27,16-24,17-20,17-21,18-28,19-20,19-28,21-26,21-28,23-27,25-26,25-29"
)
"""A random cubic graph on 30 vertices (rigid): mapping vertices in index order took over
20 s (minutes) to find its one automorphism."""


def test_a_rigid_cubic_graph_on_30_vertices_builds_fast() -> None:
    start = time.perf_counter()
    vertices, edges = build_graph(RIGID_CUBIC)
    assert automorphisms(vertices, edges, 2000) == [tuple(range(30))]
    get_game("graph-share", graph=RIGID_CUBIC, mode="edges", colors=3)
    assert time.perf_counter() - start < 5
