"""``solver.check``: each kind of contract breach is caught with a witness position, and a
correct game passes."""

from __future__ import annotations

import time

import pytest

from solver.check import check_game, sample_positions
from solver.check.base import find_cycle
from solver.check.tiers import check_tiers
from solver.game import GameBase
from solver.games import get_game
from tests.games import bad_games


def test_a_correct_game_passes_with_every_position_checked() -> None:
    report = check_game(bad_games.Heap())
    assert report.ok and report.exhausted and report.positions == 22
    assert report.notes == []


@pytest.mark.parametrize(
    ("cls", "check", "witnesses"),
    [
        (bad_games.WrongSymmetry, "symmetry", {"21", "17", "13", "9", "5", "1"}),
        (bad_games.WrongSymmetry, "canonical", {"21", "19", "17", "15", "13"}),
        (bad_games.FakeAcyclic, "acyclic", {"2"}),
        (bad_games.OutOfRange, "range", {"0"}),
        (bad_games.Restless, "determinism", {"7"}),
        (bad_games.FickleTiers, "determinism", {"21"}),  # what a tiered solve blames
        (bad_games.BadNotation, "notation", {"key 5 (written '6')"}),
        (bad_games.Crashing, "error", {"5"}),
    ],
)
def test_each_breach_is_caught_with_a_witness(
    cls: type[GameBase], check: str, witnesses: set[str]
) -> None:
    report = check_game(cls())
    assert not report.ok
    found = {v.witness for v in report.violations if v.check == check}
    assert found == witnesses, [str(v) for v in report.violations]


def test_the_report_counts_the_violations_it_does_not_list() -> None:
    report = check_game(bad_games.WrongSymmetry(), symmetry_pairs=0)
    assert [v.check for v in report.violations] == ["canonical"] * 5
    assert (report.unlisted, report.found) == (7, 12)
    assert report.to_json()["violations_found"] == 12
    assert report.notes == ["7 more canonical violations not shown"]
    assert check_game(bad_games.Heap()).found == 0


def test_wrong_symmetry_names_the_unsound_pair() -> None:
    report = check_game(bad_games.WrongSymmetry(), symmetry_pairs=1)
    [v] = [v for v in report.violations if v.check == "symmetry"]
    assert report.symmetry_pairs == 1
    assert v.witness == "1" and "unsound" in v.message
    assert "canonical image 0 has [-1, -1]" in v.message


def test_a_lie_about_acyclic_shows_the_cycle() -> None:
    [v] = check_game(bad_games.FakeAcyclic()).violations
    assert v.message.endswith("play repeats: 2 -> 1 -> 2")


def test_symmetry_of_a_builtin_game_is_compared_on_solved_pairs() -> None:
    report = check_game(get_game("tic-tac-toe", symmetry=True), max_positions=500, symmetry_pairs=5)
    assert report.ok and report.symmetry_pairs == 5


def test_correct_tiers_pass() -> None:
    report = check_game(bad_games.TieredHeap())
    assert report.ok and report.exhausted, [str(v) for v in report.violations]


@pytest.mark.parametrize(
    ("cls", "fragment", "witnesses"),
    [
        # a move from 4t..4t+2 enters block t-1, which child_tiers(t) does not list
        (bad_games.SkippingTiers, "which child_tiers", {"21", "20", "18", "17", "16"}),
        (bad_games.CyclicTiers, "has a cycle: 2 -> 1 -> 2", {"tier 2"}),
        (
            bad_games.EndlessTiers,  # tiers 0 to 99,999 are walked; 100,000 is one more
            "reaches more than 100,000 tiers from the initial position's tier (0): tiers "
            "must be finite",
            {"tier 100000"},
        ),
        (
            bad_games.WrongTierPositions,
            "lists a position in tier",
            {"4", "8", "12", "16", "20", "24"},
        ),
        (bad_games.UnnamedTiers, "not a name", {"13", "14", "15", "20", "21"}),  # odd tiers
    ],
)
def test_broken_tiers_are_caught_with_a_witness(
    cls: type[GameBase], fragment: str, witnesses: set[str]
) -> None:
    report = check_game(cls())
    found = [v for v in report.violations if v.check == "tiers"]
    assert found and all(fragment in v.message for v in found), [str(v) for v in found]
    assert {v.witness for v in found} == witnesses


def test_the_tier_walk_stops_at_the_time_budget_with_a_note() -> None:
    game = bad_games.EndlessTiers()
    found, notes = check_tiers(game, [game.initial()], deadline=time.monotonic() - 1)
    assert found == []
    assert notes == [
        "time budget reached after walking 0 tiers of the child-tier relation: the rest "
        "is not checked for a cycle or an end"
    ]


@pytest.mark.parametrize(
    "budget",
    [2000, 2058, 1029],  # the default; twice the positions (the breadth-first half); them
)
def test_a_sample_of_every_reachable_position_says_so(budget: int) -> None:
    report = check_game(bad_games.Heap(heap=1028), max_positions=budget)  # 1,029 positions
    assert report.exhausted and report.positions == 1029
    assert report.notes == []


def test_one_position_beyond_the_budget_is_more_than_it() -> None:
    report = check_game(bad_games.Heap(heap=1029), max_positions=1029)  # 1,030 positions
    assert not report.exhausted and report.positions == 1029
    assert report.notes == [
        "finite is declared; not confirmed: more than 1,029 positions are reachable"
    ]


def test_a_sample_cut_short_by_the_time_budget_does_not_tell() -> None:
    game = bad_games.Heap()
    assert sample_positions(game, 100, deadline=time.monotonic() - 1) == ([21], None)


def test_find_cycle() -> None:
    assert find_cycle({1: [2], 2: [3], 3: []}) is None
    assert find_cycle({1: [2], 2: [3], 3: [1]}) == [1, 2, 3, 1]
    assert find_cycle({0: [1], 1: [1]}) == [1, 1]
