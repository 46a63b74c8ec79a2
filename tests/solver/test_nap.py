"""NAP: longest games against Salem–Spencer numbers found by brute force here."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.errors import InvalidPositionError
from solver.games.nap import Nap

# SS(N) for N = 4..20 as given by the seed. Every entry agrees with the brute force below
# (and with OEIS A003002).
SEED_SS = dict(zip(range(4, 21), [3, 4, 4, 4, 4, 5, 5, 6, 6, 7, 8, 8, 8, 8, 8, 8, 9], strict=True))


def has_3ap(values: Sequence[int]) -> bool:
    chosen = set(values)
    return any(2 * b - a in chosen for a in chosen for b in chosen if a < b)


def ss_by_subsets(n: int) -> int:
    """Largest 3-AP-free subset of 1..n, trying every subset (largest first)."""
    for size in range(n, -1, -1):
        if any(not has_3ap(c) for c in itertools.combinations(range(1, n + 1), size)):
            return size
    raise AssertionError("unreachable")


def ss_by_backtracking(n: int) -> tuple[int, int]:
    """(largest 3-AP-free subset of 1..n, number of such subsets), building sets upwards."""
    best = 0
    count = 0

    def extend(start: int, chosen: list[int]) -> None:
        nonlocal best, count
        count += 1
        best = max(best, len(chosen))
        for c in range(start, n + 1):
            if any(2 * b - a == c for i, a in enumerate(chosen) for b in chosen[i + 1 :]):
                continue
            chosen.append(c)
            extend(c + 1, chosen)
            chosen.pop()

    extend(1, [])
    return best, count


def longest_game(game: Nap) -> tuple[int, int]:
    """(longest path from the empty board, positions in the graph), memoised on keys."""
    memo: dict[int, int] = {}

    def longest(key: int) -> int:
        known = memo.get(key)
        if known is None:
            known = max((1 + longest(c) for _, c in game.children(key)), default=0)
            memo[key] = known
        return known

    return longest(game.initial()), len(memo)


def test_brute_force_methods_agree() -> None:
    for n in range(1, 15):
        assert ss_by_subsets(n) == ss_by_backtracking(n)[0], n


def test_seed_table_matches_brute_force() -> None:
    for n, seed in SEED_SS.items():
        assert ss_by_backtracking(n)[0] == seed, f"seed says SS({n}) = {seed}"


@pytest.mark.parametrize("n", range(1, 21))
def test_longest_game_is_salem_spencer_number(n: int) -> None:
    expected, subsets = ss_by_backtracking(n)
    if n in SEED_SS:
        assert expected == SEED_SS[n]
    length, positions = longest_game(Nap(n=n))
    assert length == expected
    # Every 3-AP-free subset is a position and nothing else is.
    assert positions == subsets


def test_notation() -> None:
    game = Nap(n=9)
    assert game.format(game.initial()) == "{}"
    assert game.parse("{}") == game.parse(" { } ") == 0
    key = game.parse("{5, 1,4}")
    assert key == 0b11001
    assert game.format(key) == "{1,4,5}"
    assert game.parse("1,4,5") == key
    with pytest.raises(InvalidPositionError, match="arithmetic progression"):
        game.parse("{1,5,9}")
    with pytest.raises(InvalidPositionError, match="twice"):
        game.parse("{4,4}")
    with pytest.raises(InvalidPositionError, match="out of range"):
        game.parse("{10}")


def test_moves_from_a_position() -> None:
    game = Nap(n=9)
    # With 1 and 5 marked: 3 would be a middle, 9 an end.
    assert [label for label, _ in game.children(game.parse("{1,5}"))] == [
        "2",
        "4",
        "6",
        "7",
        "8",
    ]
    assert game.children(game.parse("{1,5}"))[0] == ("2", game.parse("{1,2,5}"))


def test_terminal_position() -> None:
    game = Nap(n=4)
    key = game.parse("{1,2,4}")
    assert game.children(key) == []
    assert game.terminal_value(key) == -1
    assert game.terminal_value(game.parse("{1,2}")) is None


@settings(max_examples=150, deadline=None, database=None)
@given(
    n=st.integers(min_value=1, max_value=60),
    order=st.permutations(list(range(1, 61))),
    size=st.integers(min_value=0, max_value=20),
)
def test_moves_match_naive_rule(n: int, order: list[int], size: int) -> None:
    game = Nap(n=n)
    marked: list[int] = []
    for candidate in order:
        if len(marked) >= size:
            break
        if candidate <= n and not has_3ap([*marked, candidate]):
            marked.append(candidate)
    key = game.parse("{" + ",".join(map(str, marked)) + "}")
    legal = [m for m in range(1, n + 1) if m not in marked and not has_3ap([*marked, m])]
    children = game.children(key)
    assert [int(label) for label, _ in children] == legal
    for label, child in children:
        assert child == key | 1 << (int(label) - 1)
    assert (game.terminal_value(key) is None) == bool(legal)
