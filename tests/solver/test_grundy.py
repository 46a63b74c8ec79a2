"""Grundy's game: nimbers and moves against a reference on sorted heap tuples."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.games.grundy import Grundy

# The nimbers as given in the brief, described there as g(1..21). They are OEIS A002188
# from offset 0, i.e. g(0..20): g(3) = 1 because a heap of 3 has a move (3=2+1) to a
# dead position. The tests index the list from 0.
BRIEF_NIMBERS = [0, 0, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 3, 2, 1, 3, 2, 4, 3, 0]


@cache
def nimber(n: int) -> int:
    """Sprague–Grundy value of a single heap, by the mex rule (independent of the game)."""
    options = {nimber(a) ^ nimber(n - a) for a in range(1, (n + 1) // 2) if a != n - a}
    g = 0
    while g in options:
        g += 1
    return g


def naive_moves(heaps: tuple[int, ...]) -> set[tuple[int, ...]]:
    out = set()
    for i, h in enumerate(heaps):
        for a in range(1, h):
            if a != h - a:
                rest = heaps[:i] + heaps[i + 1 :] + (a, h - a)
                out.add(tuple(sorted(rest, reverse=True)))
    return out


def test_reference_nimbers_match_oeis() -> None:
    assert [nimber(n) for n in range(21)] == BRIEF_NIMBERS
    # Read as g(1..21) the list would be wrong from the first heap with a move:
    assert nimber(3) == 1 != BRIEF_NIMBERS[3 - 1]


@pytest.mark.parametrize("n", range(1, 16))
def test_first_player_wins_iff_nimber_nonzero(n: int) -> None:
    game = Grundy(n=n)

    @cache
    def wins(key: int) -> bool:
        return any(not wins(child) for _, child in game.children(key))

    assert wins(game.initial()) == (nimber(n) != 0)


def test_seven_is_a_loss() -> None:
    game = Grundy(n=7)

    @cache
    def value(key: int) -> int:
        t = game.terminal_value(key)
        return t if t is not None else max(-value(c) for _, c in game.children(key))

    assert value(game.initial()) == -1
    assert game.format(game.initial()) == "7"
    assert [label for label, _ in game.children(game.initial())] == ["7=6+1", "7=5+2", "7=4+3"]


def test_equal_heaps_give_one_move_each_split() -> None:
    game = Grundy(n=12)
    key = game.parse("4+4+4")
    assert game.children(key) == [("4=3+1", game.parse("4+4+3+1"))]
    assert game.format(game.parse("1+2+1+6")) == "6+2+1+1"
    assert game.parse("1 2,1+6") == game.parse("6+2+1+1")


def test_dead_heaps_are_kept() -> None:
    game = Grundy(n=9)
    key = game.parse("2+2+2+1+1+1")
    assert game.format(key) == "2+2+2+1+1+1"
    assert game.terminal_value(key) == -1
    assert game.children(key) == []
    assert game.parse("2+1") != game.parse("2") != game.parse("1")


def test_keys_do_not_depend_on_n() -> None:
    assert Grundy(n=7).parse("4+2+1") == Grundy(n=60).parse("4+2+1")


@settings(max_examples=200, deadline=None, database=None)
@given(heaps=st.lists(st.integers(min_value=1, max_value=20), min_size=1, max_size=8))
def test_moves_match_reference(heaps: list[int]) -> None:
    game = Grundy(n=60)
    if sum(heaps) > 60:
        return
    key = game.parse("+".join(map(str, heaps)))
    ordered = tuple(sorted(heaps, reverse=True))
    assert game.heaps(key) == list(ordered)
    children = game.children(key)
    got = [tuple(game.heaps(child)) for _, child in children]
    assert len(got) == len(set(got)), "a split was listed twice"
    assert set(got) == naive_moves(ordered)
    for label, child in children:
        whole, parts = label.split("=")
        a, b = map(int, parts.split("+"))
        assert a > b >= 1 and a + b == int(whole)
        assert sorted(game.heaps(child)) == sorted(
            [*ordered[: ordered.index(int(whole))], *ordered[ordered.index(int(whole)) + 1 :], a, b]
        )
    assert (game.terminal_value(key) == -1) == (not children)
