"""The number game: moves against divisors found by brute force here."""

from __future__ import annotations

from collections import deque

import pytest

from solver.errors import InvalidPositionError
from solver.games import get_game
from solver.games.number_game import MAX_NUMBER, NumberGame


def naive_moves(n: int) -> list[int]:
    if n < 6:
        return []
    return [d for d in range(2, n) if n % d == 0] + [n + 2, n + 4]


def test_moves_match_brute_force() -> None:
    game = NumberGame()
    for n in range(1, 400):
        children = game.children(n)
        assert [child for _, child in children] == naive_moves(n), n
        assert [label for label, _ in children] == [str(c) for c in naive_moves(n)]
        assert game.terminal_value(n) == (-n if n < 6 else None)


@pytest.mark.parametrize(
    "n", [65_521, 65_536, 65_537, 65_540, 720_720, 999_983, 1_048_576, 3 * 5 * 7 * 11 * 13 * 17]
)
def test_large_numbers(n: int) -> None:
    game = NumberGame()
    assert [child for _, child in game.children(n)] == naive_moves(n)


def test_huge_number_uses_trial_division() -> None:
    game = NumberGame()
    n = 999_999_999_989  # prime, just below 10**12
    assert [child for _, child in game.children(n)] == [n + 2, n + 4]
    n = 2**39
    assert [child for _, child in game.children(n)] == [2**k for k in range(1, 39)] + [n + 2, n + 4]


def test_defaults_and_attributes() -> None:
    game = NumberGame()
    assert game.initial() == 13
    assert NumberGame(root=100).initial() == 100
    assert get_game("number-game", root="100") == NumberGame(root=100)
    assert game.repetition_value is None
    assert game.priority is not None and game.priority(13) == 13.0
    assert not game.uses_symmetry
    assert game.terminal_value(5) == -5
    assert game.terminal_value(1) == -1
    assert game.terminal_value(6) is None
    assert game.children(13) == [("15", 15), ("17", 17)]
    assert game.children(12) == [("2", 2), ("3", 3), ("4", 4), ("6", 6), ("14", 14), ("16", 16)]


def test_graph_is_cyclic() -> None:
    game = NumberGame()
    # 13 -> 17 -> 21 -> 25 -> 27 -> 9 -> 13: search for a path back to the root.
    parents: dict[int, int] = {}
    queue = deque([13])
    while queue:
        key = queue.popleft()
        for _, child in game.children(key):
            if child == 13:
                path = [key]
                while path[-1] != 13:
                    path.append(parents[path[-1]])
                assert len(path) >= 3
                return
            if child not in parents and child <= 40:
                parents[child] = key
                queue.append(child)
    raise AssertionError("no cycle through 13")


def test_notation() -> None:
    game = NumberGame()
    assert game.parse("13") == 13
    assert game.parse(" 007 ") == 7
    assert game.format(7) == "7"
    assert game.parse(str(MAX_NUMBER)) == MAX_NUMBER
    with pytest.raises(InvalidPositionError, match="larger"):
        game.parse(str(MAX_NUMBER + 1))
    with pytest.raises(InvalidPositionError, match="positive"):
        game.parse("0")
