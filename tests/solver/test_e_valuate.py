"""e-Valuate: the paper's example, a brute force written here, closed forms, notation, errors.

The brute force knows the expressions as Python functions and plays on dictionaries of
variable values; it shares nothing with :mod:`solver.games.e_valuate` but the rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache

import pytest

from solver.alphabeta import alphabeta
from solver.errors import InvalidParameterError, InvalidPositionError
from solver.games import get_game
from solver.games.e_valuate import EValuate, format_digits, normal_form, parse_digits
from solver.negamax import solve

Expr = Callable[[dict[str, int]], int]


def brute_force(names: str, expr: Expr, digits: tuple[int, ...]) -> int:
    """The minimax value: MAX proposes any digit, MIN gives it to any free variable."""

    @cache
    def max_node(assigned: frozenset[tuple[str, int]]) -> int:
        values = dict(assigned)
        if len(values) == len(names):
            return expr(values)
        return max(min_node(assigned, d) for d in digits)

    def min_node(assigned: frozenset[tuple[str, int]], d: int) -> int:
        taken = {name for name, _ in assigned}
        return min(max_node(assigned | {(v, d)}) for v in names if v not in taken)

    return max_node(frozenset())


def values(game: EValuate, *, plain: bool = True) -> tuple[int, ...]:
    """MAX's value by alpha-beta (without a table, if *plain*), alpha-beta with table and
    ordering, a partial solve and a full solve."""
    out = [alphabeta(game, tt=False).value] if plain else []
    out.append(alphabeta(game, ordering=True).value)
    partial = solve(game)
    full = solve(game, full=True)
    assert partial.complete and full.complete
    assert partial.value is not None and full.value is not None
    out += [partial.value, full.value]
    return tuple(out)


# The paper's introduction: "With optimal play from both players, a possible sequence of
# moves is ... with E evaluating to the minimax value 18." The example is E = x(y - z).
def test_paper_example_is_18() -> None:
    game = EValuate()
    assert game.params["expression"] == "x*(y-z)"
    assert brute_force("xyz", lambda v: v["x"] * (v["y"] - v["z"]), tuple(range(10))) == 18
    assert values(game) == (18, 18, 18, 18)


def test_paper_example_lines_of_play() -> None:
    # MIN's replies to a first proposal d, worked out by hand (MAX's value afterwards):
    # * d in x leaves d*(y-z): MAX proposes e, MIN puts it in y (then z = 0: d*e) or in
    #   z (then y = 9: d*(9-e)), so MAX gets d * max_e min(e, 9-e) = 4d;
    # * d in y leaves x*(d-z): e in x gives e*d (z = 0), e in z gives 9*(d-e) if e <= d
    #   (x = 9) and 0 otherwise (x = 0);
    # * d in z leaves x*(y-d): MAX proposes 9 twice, 9*(9-d).
    # Only 6 and 7 reach the minimax value 18, e.g. the line 7 -> z, 9 -> x, 9 -> y.
    def by_hand(d: int) -> dict[str, int]:
        y = max(min(e * d, 9 * (d - e) if e <= d else 0) for e in range(10))
        return {"x": 4 * d, "y": y, "z": 9 * (9 - d)}

    game = EValuate()
    after = {}
    for label, child in game.children(game.initial()):
        replies = {m: alphabeta(game, grand).value for m, grand in game.children(child)}
        after[int(label)] = replies
    assert after == {d: by_hand(d) for d in range(10)}
    best = {d: min(r.values()) for d, r in after.items()}
    assert max(best.values()) == 18
    assert [d for d, v in best.items() if v == 18] == [7, 6]
    # The paper's first line of play starts with MAX proposing 5; MIN's best reply is to
    # give it to y, which holds MAX to 15 (x would allow 20, z 36).
    assert after[5] == {"x": 20, "y": 15, "z": 36}
    assert game.terminal_value(game.parse("x=9,y=9,z=7")) == 18


SMALL: list[tuple[str, Expr, str]] = [
    ("x*(y-z)", lambda v: v["x"] * (v["y"] - v["z"]), "0-9"),
    ("x-y", lambda v: v["x"] - v["y"], "0-9"),
    ("x*y-z", lambda v: v["x"] * v["y"] - v["z"], "0-9"),
    ("x*x-y", lambda v: v["x"] * v["x"] - v["y"], "0-9"),  # x is substituted everywhere
    ("(a-b)*(c-d)", lambda v: (v["a"] - v["b"]) * (v["c"] - v["d"]), "0-4"),
    ("a*b-c*d", lambda v: v["a"] * v["b"] - v["c"] * v["d"], "1,3,5,7"),
    ("2*a-(b+3)*-c*b", lambda v: 2 * v["a"] - (v["b"] + 3) * -v["c"] * v["b"], "0-2,7"),
    ("a-b*(c-d)+e", lambda v: v["a"] - v["b"] * (v["c"] - v["d"]) + v["e"], "0,5,9"),
]


@pytest.mark.parametrize(("text", "expr", "digits"), SMALL, ids=[s[0] for s in SMALL])
def test_agrees_with_brute_force(text: str, expr: Expr, digits: str) -> None:
    names = "".join(sorted({ch for ch in text if ch.isalpha()}))
    expected = brute_force(names, expr, parse_digits(digits))
    for symmetry in (False, True):
        game = EValuate(expression=text, digits=digits, symmetry=symmetry)
        assert values(game) == (expected,) * 4, (text, symmetry)


def test_every_position_agrees_with_brute_force() -> None:
    """Not only the root: every reachable position's value, from the mover's view."""
    game = EValuate(expression="x*y-z", digits="0,2,5", symmetry=False)
    full = solve(game, full=True)
    keys = _reachable(game)
    # MAX to move: each variable is free or holds one of 3 values (4**3 positions); MIN to
    # move: one of 3 pending values with at least one variable free (3 * (4**3 - 3**3)).
    assert len(keys) == full.nodes == 4**3 + 3 * (4**3 - 3**3)
    for key in keys:
        expected = _brute_from(game, key)
        got = alphabeta(game, key).value
        sign = 1 if game.player_to_move(key) == 0 else -1
        assert got == sign * expected, game.format(key)


def _reachable(game: EValuate) -> list[int]:
    seen = {game.initial()}
    stack = [game.initial()]
    while stack:
        for _, child in game.children(stack.pop()):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return sorted(seen)


def _brute_from(game: EValuate, key: int) -> int:
    """MAX's value of a position given in notation, by brute force on the text."""
    head, _, tail = game.format(key).partition(";")
    assigned = {p.split("=")[0]: p.split("=")[1] for p in head.split(",")}
    free = [v for v, d in assigned.items() if d == "?"]
    fixed = {v: int(d) for v, d in assigned.items() if d != "?"}
    digits = game.digits

    @cache
    def max_node(done: frozenset[tuple[str, int]]) -> int:
        if len(done) == len(free):
            return game.value_of({**fixed, **dict(done)})
        return max(min_node(done, d) for d in digits)

    def min_node(done: frozenset[tuple[str, int]], d: int) -> int:
        taken = {v for v, _ in done}
        return min(max_node(done | {(v, d)}) for v in free if v not in taken)

    if tail:
        return min_node(frozenset(), int(tail.split("=")[1]))
    return max_node(frozenset())


# -- closed forms, at sizes beyond the brute force ----------------------------------------


def difference_of_sums(p: int, q: int, digits: tuple[int, ...]) -> int:
    """Value of ``(sum of p variables) - (sum of q variables)``: only how many slots of each
    sign are left matters, so the game reduces to this recursion on the counts."""

    @cache
    def v(p: int, q: int) -> int:
        if p == q == 0:
            return 0
        options = []
        for d in digits:
            replies = []
            if p:
                replies.append(d + v(p - 1, q))
            if q:
                replies.append(-d + v(p, q - 1))
            options.append(min(replies))
        return max(options)

    return v(p, q)


def test_difference_of_sums_recursion_matches_brute_force() -> None:
    for p, q in [(1, 1), (2, 1), (1, 2), (2, 2)]:
        names = "abcdefgh"[: p + q]

        def expr(v: dict[str, int], plus: str = names[:p], minus: str = names[p:]) -> int:
            return sum(v[n] for n in plus) - sum(v[n] for n in minus)

        assert difference_of_sums(p, q, tuple(range(10))) == brute_force(
            names, expr, tuple(range(10))
        )


@pytest.mark.parametrize(
    ("text", "digits", "expected", "plain"),
    [
        # A plain sum: every proposal lands in the sum, wherever MIN puts it, so MAX
        # proposes his largest value every time: k * max(D).
        ("a+b+c+d+e+f+g+h", "0,5,9", 8 * 9, False),
        ("a+b+c+d+e+f+g", "2,3,7", 7 * 7, True),
        # A product of non-negative values is non-decreasing in every variable: max(D)^k.
        ("a*b*c*d*e*f", "0-9", 9**6, False),
        ("a*b*c*d*e*f*g*h", "0,1,2", 2**8, False),
        # x - y: MIN gives d to x (then y gets min D) or to y (then x gets max D), so the
        # value is max over d of min(d - min D, max D - d).
        ("x-y", "0-9", 4, True),
        ("x-y", "1,2,8", max(min(d - 1, 8 - d) for d in (1, 2, 8)), True),
        # Differences of sums: the recursion on slot counts above.
        ("a+b+c+d-e-f-g", "0,4,9", difference_of_sums(4, 3, (0, 4, 9)), False),
        ("a-b-c-d-e-f-g-h-i", "1-3", difference_of_sums(1, 8, (1, 2, 3)), False),
    ],
)
def test_closed_forms(text: str, digits: str, expected: int, plain: bool) -> None:
    game = EValuate(expression=text, digits=digits, symmetry=True)
    assert values(game, plain=plain) == (expected,) * (4 if plain else 3)


def test_closed_form_without_symmetry() -> None:
    # Beyond what the brute force above does in reasonable time, symmetry off.
    game = EValuate(expression="a+b+c+d+e+f", digits="0,5,9")
    assert alphabeta(game, ordering=True).value == 6 * 9
    assert solve(game).value == 6 * 9


def test_difference_of_sums_values() -> None:
    assert difference_of_sums(1, 1, tuple(range(10))) == 4  # x - y, as above
    assert difference_of_sums(3, 0, (2, 3, 7)) == 21  # a plain sum
    assert difference_of_sums(0, 2, (2, 3, 7)) == -4  # -(a+b): MAX proposes 2 twice


# -- symmetry ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("x*(y-z)", 1),
        ("x+y+z", 6),
        ("x*y+z", 2),
        ("a*b+c*d", 8),  # a<->b, c<->d and the swap of the two products
        ("a*b*c+d*e*f", 72),
        ("a-b-c", 2),
        ("(a-b)*(c-d)", 2),  # the two factors swap; a<->b alone changes the sign
        ("a+b+c+d+e+f+g+h+i", 362880),  # beyond brute force: interchangeable classes
    ],
)
def test_symmetry_group(text: str, size: int) -> None:
    assert EValuate(expression=text, symmetry=True).symmetry_group_size == size


def test_normal_form_sees_commutativity_and_associativity() -> None:
    a = EValuate(expression="(x+y)+z*w").tree
    b = EValuate(expression="w*z+(y+x)").tree
    assert normal_form(a) == normal_form(b)
    c = EValuate(expression="x-(y-z)").tree
    d = EValuate(expression="x+z-y").tree
    assert normal_form(c) == normal_form(d)
    assert normal_form(c) != normal_form(EValuate(expression="x-y-z").tree)


def test_symmetry_merges_interchangeable_variables() -> None:
    game = EValuate(expression="a*b+c", symmetry=True)
    one = game.parse("a=3,b=?,c=?")
    other = game.parse("a=?,b=3,c=?")
    assert game.canonical(one) == game.canonical(other)
    assert game.canonical(game.parse("a=?,b=?,c=3")) != game.canonical(one)


# -- the rules, the key and the notation --------------------------------------------------


def test_moves_and_side_to_move() -> None:
    game = EValuate()
    root = game.initial()
    assert game.player_to_move(root) == 0
    assert [m for m, _ in game.children(root)] == [str(d) for d in range(9, -1, -1)]
    child = dict(game.children(root))["7"]
    assert game.format(child) == "x=?,y=?,z=?;proposed=7"
    assert game.player_to_move(child) == 1
    assert [m for m, _ in game.children(child)] == ["x", "y", "z"]
    after = dict(game.children(child))["y"]
    assert game.format(after) == "x=?,y=7,z=?"
    assert game.player_to_move(after) == 0
    assert [m for m, _ in game.children(game.parse("x=1,y=7,z=?;proposed=2"))] == ["z"]
    end = game.parse("x=2,y=7,z=3")
    assert game.children(end) == []
    assert game.terminal_value(end) == 2 * (7 - 3)
    assert game.terminal_value(game.parse("x=2,y=3,z=7")) == -8
    assert game.terminal_value(after) is None


def test_repeated_variable_is_substituted_everywhere() -> None:
    game = EValuate(expression="x*x-x+y")
    assert game.names == ("x", "y")
    key = game.parse("x=?,y=?;proposed=4")
    child = dict(game.children(key))["x"]
    assert game.format(child) == "x=4,y=?"
    assert game.terminal_value(game.parse("x=4,y=1")) == 16 - 4 + 1
    assert game.value_of({"x": 4, "y": 1}) == 13


def test_notation_round_trip_and_leniency() -> None:
    game = EValuate(expression="b*(a+c)")
    assert game.names == ("a", "b", "c")
    key = game.parse(" c = 3 , a=?;proposed = 7 ")
    assert game.format(key) == "a=?,b=?,c=3;proposed=7"
    assert game.parse(game.format(key)) == key
    assert game.parse(";proposed=7") == game.parse("a=?,b=?,c=?;proposed=7")
    assert game.format(game.initial()) == "a=?,b=?,c=?"


def test_parameters_are_normalised() -> None:
    game = get_game("e-valuate", expression=" ( x ) * ((y) - z) ", digits="3,0,1,2")
    assert game.params == {"expression": "x*(y-z)", "digits": "0-3", "symmetry": True}
    assert game == get_game("e-valuate", expression="x*(y-z)", digits="0-3")
    assert get_game("e-valuate", expression="a-(b-c)").params["expression"] == "a-(b-c)"
    assert get_game("e-valuate", expression="(a-b)-c").params["expression"] == "a-b-c"
    assert get_game("e-valuate", expression="a*(b*c)").params["expression"] == "a*(b*c)"
    assert get_game("e-valuate", expression="-(a+b)*--c").params["expression"] == "-(a+b)*--c"


def test_digits() -> None:
    assert parse_digits("0-9") == tuple(range(10))
    assert parse_digits("1,3,5") == (1, 3, 5)
    assert parse_digits(" 7, 0-3 ") == (0, 1, 2, 3, 7)
    assert format_digits((0, 1, 2, 3, 7)) == "0-3,7"
    assert format_digits((1, 2, 5)) == "1,2,5"
    assert EValuate(digits="10-12,99").digits == (10, 11, 12, 99)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("x/y", "invalid character '/' at position 2"),
        ("x + y ^ 2", "invalid character '^' at position 7"),
        ("x+*y", "expected a variable, a number or '(' at position 3, found '*'"),
        ("x+", "ends early at position 3"),
        ("xy", "expected an operator (+, -, *) at position 2, found 'y' (write 'x*y'"),
        ("2(x)", "expected an operator (+, -, *) at position 2, found '('"),
        ("(x+y", "missing ')' for the '(' at position 1"),
        ("x+y)", "unmatched ')' at position 4"),
        ("(x y)", "expected ')' at position 4, found 'y'"),
        ("()", "expected a variable, a number or '(' at position 2, found ')'"),
        ("", "the expression is empty"),
        ("x+é", "invalid character 'é' at position 3"),
        ("x+1234567", "more than 6 digits"),
        ("2+3", "has no variables"),
        ("(" * 60 + "x" + ")" * 60, "nesting deeper than 50"),
        ("x" + "*x" * 20, "values must stay within 2**53"),
    ],
)
def test_bad_expressions(expression: str, message: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        EValuate(expression=expression, digits="0-99")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("digits", "message"),
    [
        ("9-0", "empty range '9-0'"),
        ("1,1", "digits value 1 is given twice"),
        ("0-3,2", "digits value 2 is given twice"),
        ("0-100", "above the largest allowed, 99"),
        ("a", "bad digits item 'a'"),
        ("1,,2", "bad digits item ''"),
        ("-1", "bad digits item '-1'"),
        ("", "digits is empty"),
    ],
)
def test_bad_digits(digits: str, message: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        EValuate(digits=digits)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("w=1", "unknown variable 'w'"),
        ("x=1,x=2", "variable 'x' is given twice"),
        ("x=10", "10 is not one of the digits 0-9"),
        ("x=1;proposed=", "expected a value, got ''"),
        ("x=1;7", "expected ';proposed=d'"),
        ("x=1,y=2,z=3;proposed=4", "every variable is instantiated"),
        ("x:1", "expected 'variable=value' or 'variable=?', got 'x:1'"),
        ("", "empty position: give assignments like 'x=?,y=?,z=?'"),
    ],
)
def test_bad_positions(text: str, message: str) -> None:
    with pytest.raises(InvalidPositionError) as info:
        EValuate().parse(text)
    assert message in str(info.value)


def test_tree_size_matches_the_papers_recursion() -> None:
    """Plain minimax visits every non-terminal node of the paper's tree: with T(0) = 0 and
    T(k) = 1 + |D| (1 + k T(k - 1)) (its recursion (1), leaves left out)."""

    def tree(k: int, d: int) -> int:
        return 0 if k == 0 else 1 + d * (1 + k * tree(k - 1, d))

    for text, digits in [("x*(y-z)", "0-9"), ("a*b-c*d", "0-4"), ("a+b", "1,2,3")]:
        game = EValuate(expression=text, digits=digits)
        result = alphabeta(game, prune=False, tt=False)
        assert result.stats.calls == tree(len(game.names), len(game.digits))
    assert list(itertools.islice((tree(k, 10) for k in range(1, 7)), 6)) == [
        11,
        231,
        6941,
        277651,
        13882561,
        832953671,
    ]


@pytest.mark.parametrize("text", ["x*(y-z)", "-(a*b)+3", "x*x-y", "2-a"])
def test_value_range_holds(text: str) -> None:
    game = EValuate(expression=text, digits="0,3,9", symmetry=False)
    assert game.value_range is not None
    low, high = game.value_range
    seen = [game.terminal_value(k) for k in _reachable(game)]
    terminal = [v for v in seen if v is not None]
    assert terminal and all(low <= v <= high for v in terminal)
    assert all(low <= -v <= high for v in terminal)  # MIN's view is in range too
