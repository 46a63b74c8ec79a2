"""Tic-tac-toe: counts and values against a naive string-board reference written here."""

from __future__ import annotations

import itertools
from collections import deque
from functools import cache

import pytest

from solver.errors import InvalidPositionError
from solver.games.tic_tac_toe import TicTacToe

NAIVE_LINES = [
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),
    (0, 4, 8),
    (2, 4, 6),
]


def naive_winner(board: str) -> str | None:
    for a, b, c in NAIVE_LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


def naive_moves(board: str) -> list[str]:
    if naive_winner(board) or "." not in board:
        return []
    stone = "x" if board.count("x") == board.count("o") else "o"
    return [board[:i] + stone + board[i + 1 :] for i in range(9) if board[i] == "."]


def naive_reachable() -> set[str]:
    seen = {"." * 9}
    queue = deque(seen)
    while queue:
        for child in naive_moves(queue.popleft()):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return seen


def naive_images(board: str) -> set[str]:
    """The board under the 8 symmetries (rotations and reflections)."""
    grid = [board[0:3], board[3:6], board[6:9]]
    images = set()
    for _ in range(4):
        grid = ["".join(grid[2 - r][c] for r in range(3)) for c in range(3)]  # rotate
        images.add("".join(grid))
        images.add("".join(row[::-1] for row in grid))
    return images


def flat(text: str) -> str:
    return text.replace("/", "")


def reachable(game: TicTacToe, canonical: bool) -> set[int]:
    start = game.canonical(game.initial()) if canonical else game.initial()
    seen = {start}
    queue = deque(seen)
    while queue:
        for _, child in game.children(queue.popleft()):
            if canonical:
                child = game.canonical(child)
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return seen


def test_game_graph_has_5478_positions() -> None:
    game = TicTacToe()
    keys = reachable(game, canonical=False)
    assert len(keys) == 5478
    reference = naive_reachable()
    assert len(reference) == 5478
    assert {flat(game.format(k)) for k in keys} == reference


def test_symmetry_classes() -> None:
    game = TicTacToe(symmetry=True)
    classes = reachable(game, canonical=True)
    reference = {min(naive_images(b)) for b in naive_reachable()}
    assert len(classes) == len(reference) == 765
    for key in classes:
        images = {game.parse(image) for image in naive_images(flat(game.format(key)))}
        assert game.canonical(key) == key == min(images)


def test_parse_accepts_exactly_the_reachable_positions() -> None:
    game = TicTacToe()
    reference = naive_reachable()
    accepted = set()
    for cells in itertools.product(".xo", repeat=9):
        board = "".join(cells)
        try:
            key = game.parse(board)
        except InvalidPositionError:
            continue
        assert flat(game.format(key)) == board
        accepted.add(board)
    assert accepted == reference


def test_values_match_naive_minimax() -> None:
    @cache
    def naive_value(board: str) -> int:
        if naive_winner(board):
            return -1
        moves = naive_moves(board)
        return max((-naive_value(m) for m in moves), default=0)

    game = TicTacToe()

    @cache
    def value(key: int) -> int:
        t = game.terminal_value(key)
        return t if t is not None else max(-value(c) for _, c in game.children(key))

    assert value(game.initial()) == naive_value("." * 9) == 0
    for key in reachable(game, canonical=False):
        board = flat(game.format(key))
        assert value(key) == naive_value(board), board
        assert [flat(game.format(c)) for _, c in game.children(key)] == naive_moves(board)


def test_notation_and_labels() -> None:
    game = TicTacToe()
    key = game.parse("x.o/.x./..o")
    assert key == 1 + 2 * 3**2 + 1 * 3**4 + 2 * 3**8
    assert game.parse("X.O.X...O") == key
    assert game.parse(" x.o/.X./..o ") == key
    assert game.format(key) == "x.o/.x./..o"
    assert game.format(game.initial()) == ".../.../..."
    labels = [label for label, _ in game.children(game.initial())]
    assert labels == ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    # a1 is the top-left cell, c3 the bottom-right one.
    assert game.format(dict(game.children(game.initial()))["a1"]) == "x../.../..."
    assert game.format(dict(game.children(game.initial()))["c3"]) == ".../.../..x"
    assert game.children(key) == [
        ("b1", game.parse("xxo/.x./..o")),
        ("a2", game.parse("x.o/xx./..o")),
        ("c2", game.parse("x.o/.xx/..o")),
        ("a3", game.parse("x.o/.x./x.o")),
        ("b3", game.parse("x.o/.x./.xo")),
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("xxx/oo./...", -1),  # X just won: O, to move, has lost
        ("xox/xoo/oxx", 0),  # full board without a line: draw
        ("xox/oxo/xox", -1),  # X completes two lines with the last cell
        ("ooo/xx./x..", -1),  # O just won
        ("xx./oo./x..", None),
    ],
)
def test_terminal_values(text: str, value: int | None) -> None:
    game = TicTacToe()
    key = game.parse(text)
    assert game.terminal_value(key) == value
    assert (game.children(key) == []) == (value is not None)


def test_side_to_move() -> None:
    game = TicTacToe()
    after_x = game.parse("x../.../...")
    children = game.children(after_x)
    assert all(game.format(c).count("o") == 1 for _, c in children)
    assert len(children) == 8
    assert game.players == ("X", "O")
    assert game.player_to_move(game.initial()) == 0 and game.player_to_move(after_x) == 1
    # every reachable position: O is to move exactly when X has one mark more
    seen, todo = {game.initial()}, [game.initial()]
    while todo:
        key = todo.pop()
        text = game.format(key)
        assert game.player_to_move(key) == text.count("x") - text.count("o")
        for _, child in game.children(key):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    assert len(seen) == 5478
