"""Connect four: the bitboard game against a naive array-based reference written here."""

from __future__ import annotations

import random
from collections import deque
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.errors import InvalidPositionError
from solver.games import get_game
from solver.games.connect_four import ConnectFour

Board = tuple[tuple[int, ...], ...]
"""Naive board: one tuple per column, bottom first, of 1 (x) and 2 (o)."""


class Naive:
    """A deliberately simple connect four on column lists, for cross-checking."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        # Every run of four cells on the board, in any of the four directions.
        self.lines = [
            [(c + i * dc, r + i * dr) for i in range(4)]
            for c in range(width)
            for r in range(height)
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1))
            if 0 <= c + 3 * dc < width and 0 <= r + 3 * dr < height
        ]

    def empty(self) -> Board:
        return tuple(() for _ in range(self.width))

    def cell(self, board: Board, c: int, r: int) -> int:
        column = board[c]
        return column[r] if r < len(column) else 0

    def has_four(self, board: Board, stone: int) -> bool:
        grid = [column + (0,) * (self.height - len(column)) for column in board]
        return any(all(grid[c][r] == stone for c, r in line) for line in self.lines)

    def to_move(self, board: Board) -> int:
        stones = sum(len(col) for col in board)
        return 1 if stones % 2 == 0 else 2

    def terminal(self, board: Board) -> int | None:
        last = 3 - self.to_move(board)
        if self.has_four(board, last):
            return -1
        if all(len(col) == self.height for col in board):
            return 0
        return None

    def moves(self, board: Board) -> list[tuple[str, Board]]:
        if self.terminal(board) is not None:
            return []
        return self.drops(board)

    def drops(self, board: Board) -> list[tuple[str, Board]]:
        """The moves of a position already known not to be terminal."""
        stone = self.to_move(board)
        out = []
        mid = (self.width - 1) / 2  # centre first, the left of two equally central first
        for c in sorted(range(self.width), key=lambda c: (abs(c - mid), c)):
            if len(board[c]) < self.height:
                new = list(board)
                new[c] = board[c] + (stone,)
                out.append((str(c + 1), tuple(new)))
        return out

    def text(self, board: Board) -> str:
        rows = []
        for r in range(self.height - 1, -1, -1):
            rows.append("".join(".xo"[self.cell(board, c, r)] for c in range(self.width)))
        return "/".join(rows)

    def solve(self) -> dict[Board, int]:
        """The value of every position reachable from the empty board."""
        values: dict[Board, int] = {}

        @cache
        def value(board: Board) -> int:
            t = self.terminal(board)
            if t is not None:
                result = t
            else:
                result = max(-value(child) for _, child in self.drops(board))
            values[board] = result
            return result

        value(self.empty())
        return values

    def root_value(self) -> int:
        """The value of the empty board, stopping at the first winning move."""
        memo: dict[Board, int] = {}

        def value(board: Board) -> int:
            if board in memo:
                return memo[board]
            t = self.terminal(board)
            if t is None:
                t = -1
                for _, child in self.drops(board):
                    t = max(t, -value(child))
                    if t == 1:
                        break
            memo[board] = t
            return t

        return value(self.empty())


def negamax(game: ConnectFour) -> tuple[int, int]:
    """Memoised negamax over the game's own moves: (root value, positions visited).

    Values are -1, 0 or 1, so a child worth 1 to the mover ends the search of a node.
    """
    memo: dict[int, int] = {}

    def value(key: int) -> int:
        known = memo.get(key)
        if known is not None:
            return known
        terminal = game.terminal_value(key)
        if terminal is not None:
            best = terminal
        else:
            best = -1
            for _, child in game.children(key):
                best = max(best, -value(child))
                if best == 1:
                    break
        memo[key] = best
        return best

    return value(game.initial()), len(memo)


def test_four_by_four_is_a_draw() -> None:
    value, visited = negamax(ConnectFour(width=4, height=4))
    assert value == 0
    assert visited > 10_000


@pytest.mark.parametrize(
    ("width", "height"),
    [(4, 1), (1, 4), (2, 2), (3, 3), (4, 2), (4, 3), (3, 4), (5, 2)],
)
def test_every_position_matches_naive_reference(width: int, height: int) -> None:
    naive = Naive(width, height)
    reference = naive.solve()
    game = ConnectFour(width=width, height=height)
    values: dict[int, int] = {}

    def value(key: int) -> int:
        if key not in values:
            t = game.terminal_value(key)
            values[key] = t if t is not None else max(-value(c) for _, c in game.children(key))
        return values[key]

    for board, expected in reference.items():
        key = game.parse(naive.text(board))
        assert game.format(key) == naive.text(board)
        assert value(key) == expected, naive.text(board)
        assert game.terminal_value(key) == naive.terminal(board)
        ours = [(label, game.format(child)) for label, child in game.children(key)]
        theirs = [(label, naive.text(child)) for label, child in naive.moves(board)]
        assert ours == theirs
    # The bitboard game reaches exactly the reference's positions.
    reached = {game.initial()}
    queue = deque(reached)
    while queue:
        for _, child in game.children(queue.popleft()):
            if child not in reached:
                reached.add(child)
                queue.append(child)
    assert len(reached) == len(reference)


@pytest.mark.parametrize(("width", "height", "expected"), [(4, 1, 0), (1, 4, 0), (4, 4, 0)])
def test_small_board_values(width: int, height: int, expected: int) -> None:
    assert negamax(ConnectFour(width=width, height=height))[0] == expected


def test_five_by_three_matches_naive_root() -> None:
    assert Naive(5, 3).root_value() == negamax(ConnectFour(width=5, height=3))[0] == 0


def test_key_layout() -> None:
    game = ConnectFour(width=4, height=4)
    # Empty board: one marker bit at the bottom of each 5-bit column.
    assert game.initial() == sum(1 << (5 * c) for c in range(4))
    assert game.format(game.initial()) == "..../..../..../...."
    key = game.parse("2")
    # x in column 2; o to move with no stones: the marker moved up one.
    assert key == game.initial() + (1 << 5)
    assert game.parse("..../..../..../.x..") == key
    assert game.parse("..../..../..../.X..") == key
    assert game.parse("  2 ") == key


def test_move_sequence_notation() -> None:
    game = ConnectFour(width=7, height=6)
    key = game.parse("4453")
    assert game.format(key) == "......./......./......./......./...o.../..oxx.."
    assert game.parse(game.format(key)) == key
    with pytest.raises(InvalidPositionError, match="out of range"):
        game.parse("48")
    with pytest.raises(InvalidPositionError, match="full"):
        game.parse("4444444")
    with pytest.raises(InvalidPositionError, match="over"):
        game.parse("121212121")
    # The win itself is fine; a move after it is not.
    won = game.parse("1212121")
    assert game.terminal_value(won) == -1
    assert game.children(won) == []
    wide = ConnectFour(width=10, height=4)
    with pytest.raises(InvalidPositionError, match="width <= 9"):
        wide.parse("1")
    assert wide.format(wide.parse("........../........../........x./oxoxoxoxox")) == (
        "........../........../........x./oxoxoxoxox"
    )


def test_win_detection_all_directions() -> None:
    game = ConnectFour(width=7, height=6)
    wins = [
        "......./......./......./......./ooo..../xxxx...",  # horizontal
        "......./......./x....../xo...../xo...../xo.....",  # vertical
        "......./......./...x.../..xo.../.xox.../xooox..",  # diagonal /
        "......./......./x....../ox...../xxx..../oooxo..",  # diagonal \
    ]
    for text in wins:
        key = game.parse(text)
        assert game.terminal_value(key) == -1, text
        assert game.children(key) == []
    # Four in a row across the spare bit is not a win (column wrap).
    near = game.parse("x....../x....../x....../o....../o....../ox.....")
    assert game.terminal_value(near) is None


def test_full_board_draw() -> None:
    game = ConnectFour(width=4, height=4)
    key = game.parse("xoxo/xoxo/oxox/oxox")
    assert game.terminal_value(key) == 0
    assert game.children(key) == []


def test_impossible_wins_rejected() -> None:
    game = ConnectFour(width=7, height=6)
    # x has two separate fours that no single last stone completes.
    with pytest.raises(InvalidPositionError, match="last move"):
        game.parse("......./......./x.....x/x.....x/xoo.o.x/xoo.oox")
    with pytest.raises(InvalidPositionError, match="both"):
        game.parse("......./......./......./......./oooo.../xxxx...")
    with pytest.raises(InvalidPositionError, match="floating"):
        game.parse("......./......./......./x....../......./.......")


def test_mirror_symmetry() -> None:
    game = ConnectFour(width=5, height=4, symmetry=True)
    left = game.parse("...../...../...../x....")
    right = game.parse("...../...../...../....x")
    assert left != right
    assert game.canonical(left) == game.canonical(right)
    assert game.canonical(left) in (left, right)
    plain = ConnectFour(width=5, height=4)
    assert plain.canonical(left) == left


@settings(max_examples=60, deadline=None, database=None)
@given(moves=st.lists(st.integers(min_value=1, max_value=7), max_size=42))
def test_move_sequences_match_walk(moves: list[int]) -> None:
    game = ConnectFour(symmetry=True)
    assert game == get_game("connect-four", symmetry="true")
    key = game.initial()
    played = ""
    for column in moves:
        children = dict(game.children(key))
        if str(column) not in children:
            break
        key = children[str(column)]
        played += str(column)
        assert game.parse(played) == key
        assert game.parse(game.format(key)) == key
        # X moves after an even number of stones (also in the canonical image)
        assert game.player_to_move(key) == len(played) % 2
        assert game.player_to_move(game.canonical(key)) == len(played) % 2
        mirrored = "".join(str(8 - int(ch)) for ch in played)
        assert game.canonical(game.parse(mirrored)) == game.canonical(key)


def test_moves_come_centre_first() -> None:
    """Rules version 2: the search tries the central columns first (6 x 4 needs a sixth
    of the expansions of left to right, docs/performance.md)."""
    for width, labels in [
        (7, "4352617"),
        (6, "342516"),
        (5, "32415"),
        (4, "2314"),
        (1, "1"),
        (10, "56473829110"),
    ]:
        game = ConnectFour(width=width, height=4)
        got = "".join(label for label, _ in game.children(game.initial()))
        assert got == labels
        batch = game.children_batch(np.array([game.initial()], dtype=np.int64))
        assert batch is not None
        assert "".join(batch.label_names[int(i)] for i in batch.labels) == labels
    assert ConnectFour.version == 2


@pytest.mark.parametrize("height", range(1, 11))
@pytest.mark.parametrize("width", [1, 2, 4, 7, 10])
def test_random_games_match_naive_on_every_size(width: int, height: int) -> None:
    game = ConnectFour(width=width, height=height)
    naive = Naive(width, height)
    rng = random.Random(width * 100 + height)
    for _ in range(5):
        key, board = game.initial(), naive.empty()
        while True:
            assert game.format(key) == naive.text(board)
            assert game.parse(naive.text(board)) == key
            assert game.terminal_value(key) == naive.terminal(board)
            ours = game.children(key)
            theirs = naive.moves(board)
            assert [label for label, _ in ours] == [label for label, _ in theirs]
            if not ours:
                break
            i = rng.randrange(len(ours))
            key, board = ours[i][1], theirs[i][1]


@pytest.mark.parametrize(("width", "height"), [(4, 4), (5, 4), (7, 6), (9, 6), (10, 10)])
def test_format_many_writes_what_format_writes(width: int, height: int) -> None:
    game = get_game("connect-four", width=width, height=height)
    keys, frontier = [game.initial()], [game.initial()]
    while len(keys) < 3_000:  # breadth first, all plies up to some depth
        frontier = [c for k in frontier for _, c in game.children(k)]
        keys.extend(frontier)
    assert game.format_many(keys) == [game.format(k) for k in keys]
    if width * (height + 1) > 63:  # keys beyond 64 bits: no batched form
        return
    batch = game.format_batch(np.array(keys, dtype=np.int64))  # ASCII bytes
    assert batch is not None and batch.dtype.kind == "S"
    assert [t.decode() for t in batch.tolist()] == [game.format(k) for k in keys]
