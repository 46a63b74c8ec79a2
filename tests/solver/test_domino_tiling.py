"""The tiling game: a brute force on sets of squares written here, bounds, notation, errors."""

from __future__ import annotations

import itertools
from functools import cache

import pytest

from solver.alphabeta import alphabeta
from solver.errors import InvalidParameterError, InvalidPositionError
from solver.games import get_game
from solver.games.domino_tiling import DominoTiling
from solver.negamax import solve

Square = tuple[int, int]


def placements(rows: int, cols: int) -> list[frozenset[Square]]:
    """Every domino on the board as a pair of (row, column) squares."""
    out = []
    for r, c in itertools.product(range(rows), range(cols)):
        if c + 1 < cols:
            out.append(frozenset({(r, c), (r, c + 1)}))
        if r + 1 < rows:
            out.append(frozenset({(r, c), (r + 1, c)}))
    return out


def brute_force(rows: int, cols: int) -> int:
    """Dominoes on the board at the end of optimal play (MAX, first, maximises)."""
    dominoes = placements(rows, cols)

    @cache
    def value(covered: frozenset[Square], max_to_move: bool) -> int:
        options = [value(covered | d, not max_to_move) for d in dominoes if not covered & d]
        if not options:
            return len(covered) // 2
        return max(options) if max_to_move else min(options)

    return value(frozenset(), True)


def smallest_maximal_tiling(rows: int, cols: int) -> int:
    """Fewest dominoes in a maximal partial tiling (every placement order is tried)."""
    dominoes = placements(rows, cols)
    best = rows * cols
    seen: set[frozenset[Square]] = set()
    stack = [frozenset[Square]()]
    while stack:
        covered = stack.pop()
        free = [d for d in dominoes if not covered & d]
        if not free:
            best = min(best, len(covered) // 2)
        for d in free:
            nxt = covered | d
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return best


BOARDS = [(1, 1), (1, 5), (2, 2), (2, 3), (3, 3), (2, 5), (3, 4), (4, 3), (4, 4)]


@pytest.mark.parametrize(("rows", "cols"), BOARDS, ids=[f"{r}x{c}" for r, c in BOARDS])
def test_agrees_with_brute_force(rows: int, cols: int) -> None:
    expected = brute_force(rows, cols)
    assert smallest_maximal_tiling(rows, cols) <= expected <= rows * cols // 2
    for symmetry in (False, True):
        game = DominoTiling(rows=rows, cols=cols, symmetry=symmetry)
        got: list[int | None] = [
            alphabeta(game, tt=False).value if rows * cols <= 12 else expected,
            alphabeta(game).value,
            alphabeta(game, ordering=True).value,
        ]
        partial = solve(game)
        full = solve(game, full=True)
        assert partial.complete and full.complete
        got += [partial.value, full.value]
        assert got == [expected] * 5, (rows, cols, symmetry)


def test_known_small_values() -> None:
    # 1xn: a single line; 2xn: MAX always completes the tiling on these widths.
    assert [brute_force(1, n) for n in range(1, 9)] == [0, 1, 1, 2, 2, 3, 3, 3]
    assert [alphabeta(DominoTiling(rows=1, cols=n)).value for n in range(1, 9)] == [
        0,
        1,
        1,
        2,
        2,
        3,
        3,
        3,
    ]
    assert [alphabeta(DominoTiling(rows=2, cols=n)).value for n in range(1, 7)] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]


def test_larger_board_within_bounds() -> None:
    game = DominoTiling(rows=4, cols=5)
    value = alphabeta(game, ordering=True).value
    assert solve(game).value == value == 9
    assert smallest_maximal_tiling(4, 5) <= value <= 10


def test_every_position_value_from_the_movers_view() -> None:
    game = DominoTiling(rows=2, cols=3, symmetry=False)
    full = solve(game, full=True)
    assert full.value == 3
    dominoes = placements(2, 3)

    @cache
    def max_value(covered: frozenset[Square]) -> int:  # MAX's view, whoever moves
        max_to_move = len(covered) // 2 % 2 == 0
        options = [max_value(covered | d) for d in dominoes if not covered & d]
        if not options:
            return len(covered) // 2
        return max(options) if max_to_move else min(options)

    for covered_count in range(0, 7, 2):
        for squares in itertools.combinations(itertools.product(range(2), range(3)), covered_count):
            text = "/".join(
                "".join("x" if (r, c) in squares else "." for c in range(3)) for r in range(2)
            )
            try:
                key = game.parse(text)
            except InvalidPositionError:
                continue
            expected = max_value(frozenset(squares))
            sign = 1 if game.player_to_move(key) == 0 else -1
            assert alphabeta(game, key).value == sign * expected, text


# -- rules, key, notation -----------------------------------------------------------------


def test_moves_and_terminal_values() -> None:
    game = DominoTiling(rows=2, cols=3, symmetry=False)
    root = game.initial()
    assert game.format(root) == ".../..."
    assert [m for m, _ in game.children(root)] == [
        "a1-b1",
        "a1-a2",
        "b1-c1",
        "b1-b2",
        "c1-c2",
        "a2-b2",
        "b2-c2",
    ]
    key = dict(game.children(root))["b1-b2"]
    assert game.format(key) == ".x./.x."
    assert game.player_to_move(key) == 1
    assert [m for m, _ in game.children(key)] == ["a1-a2", "c1-c2"]
    full = game.parse("xxx/xxx")
    assert game.children(full) == []
    assert game.terminal_value(full) == -3 and game.player_to_move(full) == 1
    two = game.parse("xx./xx.")
    assert game.player_to_move(two) == 0
    assert [m for m, _ in game.children(two)] == ["c1-c2"]
    assert game.terminal_value(two) is None
    assert game.terminal_value(game.parse("xx./.xx")) == 2  # MAX to move, 2 dominoes
    # One domino at the end of a 1x3 board: a single square is left, no domino fits.
    line = DominoTiling(rows=1, cols=3)
    middle = line.parse("xx.")
    assert line.children(middle) == []
    assert line.terminal_value(middle) == -1  # MIN to move: worth 1 to MAX


def test_symmetries() -> None:
    square = DominoTiling(rows=3, cols=3)
    key = square.parse("xx./.../...")
    images = {
        square.canonical(square.parse(t))
        for t in [
            "xx./.../...",
            ".xx/.../...",
            ".../.../xx.",
            ".../.../.xx",
            "x../x../...",
            "..x/..x/...",
            ".../x../x..",
            ".../..x/..x",
        ]
    }
    assert images == {square.canonical(key)}
    wide = DominoTiling(rows=2, cols=3)
    a = wide.parse("xx./...")
    assert {
        wide.canonical(wide.parse(t)) for t in ["xx./...", ".xx/...", ".../xx.", ".../.xx"]
    } == {wide.canonical(a)}
    # A rectangle has no quarter turn: a vertical domino is not a horizontal one.
    assert wide.canonical(wide.parse("x../x..")) != wide.canonical(a)


def test_parse_accepts_hash_and_upper_case() -> None:
    game = DominoTiling(rows=2, cols=2)
    assert game.parse("##/..") == game.parse("XX/..") == game.parse("xx/..") == 0b0011


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty position: the empty board is '../..'"),
        ("x./..", "cannot be covered exactly by dominoes"),
        ("x./.x", "cannot be covered exactly by dominoes"),
        ("../../..", "expected 2 rows of 2 squares"),
        ("xo/..", "invalid square 'o' at b1"),
    ],
)
def test_bad_positions(text: str, message: str) -> None:
    with pytest.raises(InvalidPositionError) as info:
        DominoTiling(rows=2, cols=2).parse(text)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"rows": 0}, "'rows' must be at least 1"),
        ({"cols": 9}, "'cols' must be at most 8"),
        ({"rows": "two"}, "'rows' must be an integer"),
    ],
)
def test_bad_parameters(params: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        get_game("domino-tiling", **params)
    assert message in str(info.value)


def test_value_range_holds() -> None:
    game = DominoTiling(rows=3, cols=3, symmetry=False)
    assert game.value_range == (-4, 4)
    full = solve(game, full=True)
    assert full.value is not None and -4 <= full.value <= 4
    for key in range(1 << 9):
        try:
            key = game.parse(game.format(key))
        except InvalidPositionError:
            continue
        value = game.terminal_value(key)
        assert value is None or -4 <= value <= 4
