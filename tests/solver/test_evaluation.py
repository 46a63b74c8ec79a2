"""The evaluation (``solver.evaluation``): the contract's promises held by ``negagraph
check``, and the built-in games' evaluations against references written here."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.check import check_game
from solver.evaluation import batched_evaluation_of, evaluation_of
from solver.game import Game, GameBase, PositionKey
from solver.games import get_game, load_reference
from solver.games.connect_four import ConnectFour
from solver.negamax import solve
from tests.games import bad_games
from tests.solver.test_connect_four import Board, Naive


def estimate(game: Game, key: PositionKey) -> int:
    """*game*'s evaluation of *key* (the game must have one)."""
    rules = evaluation_of(game)
    assert rules is not None
    return rules.evaluate(key)


def test_a_correct_evaluation_passes() -> None:
    report = check_game(bad_games.EvaluatedHeap())
    assert report.ok and report.exhausted and report.notes == []


@pytest.mark.parametrize(
    ("cls", "fragment", "witnesses"),
    [
        (bad_games.EvaluationOutOfRange, "outside the declared value_range", {"5"}),
        (bad_games.RestlessEvaluation, "on a second call", {"7"}),
        (bad_games.WrongAtTerminal, "terminal position whose value is -1", {"0"}),
        (bad_games.WrongEvaluateBatch, "evaluate_batch gives 0", {"9"}),
        (bad_games.CrashingEvaluation, "raised ZeroDivisionError", {"3"}),
    ],
)
def test_each_broken_promise_is_caught_with_a_witness(
    cls: type[GameBase], fragment: str, witnesses: set[str]
) -> None:
    report = check_game(cls())
    assert {v.check for v in report.violations} == {"evaluate"}, [str(v) for v in report.violations]
    assert {v.witness for v in report.violations} == witnesses
    assert all(fragment in v.message for v in report.violations)


def test_an_evaluation_of_an_earlier_contract_is_never_asked() -> None:
    game = bad_games.EvaluationOfContractThree()
    assert evaluation_of(game) is None and batched_evaluation_of(game) is None
    report = check_game(game)
    assert report.ok
    assert report.notes == [
        "evaluate() is not used: the game is written for Game contract 3, "
        "and the evaluation came with contract 4"
    ]


def test_a_broken_evaluation_is_caught_in_a_plugin_loaded_by_reference() -> None:
    cls = load_reference("tests/games/bad_games.py:EvaluationOutOfRange")
    [v] = check_game(cls()).violations
    assert (v.check, v.witness) == ("evaluate", "5")


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("connect-four", {"width": 7, "height": 6}),
        ("connect-four", {"width": 5, "height": 4, "symmetry": True}),
        ("connect-four", {"width": 10, "height": 10}),
        ("tic-tac-toe", {}),
        ("number-game", {"root": 13}),
        ("chess", {"material": "KQvKR"}),
        ("chess", {"material": "KPvK", "symmetry": False}),
    ],
)
def test_the_builtin_evaluations_pass_check(name: str, params: dict[str, object]) -> None:
    game = get_game(name, **params)
    assert evaluation_of(game) is not None
    report = check_game(game, max_positions=400, max_seconds=60, symmetry_pairs=0)
    assert report.ok, [str(v) for v in report.violations]


def test_games_without_an_evaluation_say_so() -> None:
    assert evaluation_of(get_game("grundy")) is None
    assert batched_evaluation_of(get_game("tic-tac-toe")) is None
    assert batched_evaluation_of(get_game("connect-four")) is not None


# -- connect-four: the bitboards against a naive count on the reference board -----------


def naive_evaluate(naive: Naive, board: Board) -> int:
    """Connect-four's evaluation (``solver.games.connect_four_threats``) by brute force:
    every line of four, every cell."""
    terminal = naive.terminal(board)
    if terminal is not None:
        return terminal
    me = naive.to_move(board)

    def winning(stone: int) -> set[tuple[int, int]]:
        return {
            (c, r)
            for line in naive.lines
            for c, r in line
            if r >= len(board[c])
            and all(naive.cell(board, cc, rr) == stone for cc, rr in line if (cc, rr) != (c, r))
        }

    mine, theirs = winning(me), winning(3 - me)
    playable = {(c, len(board[c])) for c in range(naive.width) if len(board[c]) < naive.height}
    if mine & playable:
        return 1
    forced = theirs & playable
    if len(forced) >= 2 or any((c, r + 1) in theirs for c, r in forced):
        return -1
    lead = len(mine) - len(theirs) - 2 * len(forced)
    return 1 if lead >= 2 else -1 if lead <= -2 else 0


@settings(max_examples=150, deadline=None)
@given(
    size=st.sampled_from([(7, 6), (5, 4), (4, 4), (6, 5), (9, 6)]),  # keys of <= 63 bits
    moves=st.lists(st.integers(0, 9), max_size=45),
)
def test_connect_four_evaluation_matches_a_naive_count(
    size: tuple[int, int], moves: list[int]
) -> None:
    """Random games: at every position the bitboard evaluation, its batched form and the
    naive count agree; a mover who can win at once is estimated at 1."""
    width, height = size
    naive, game = Naive(width, height), ConnectFour(width=width, height=height)
    board, key = naive.empty(), game.initial()
    boards, keys = [board], [key]
    for m in moves:
        drops = naive.moves(board)
        if not drops:
            break
        label, board = drops[m % len(drops)]
        key = dict(game.children(key))[label]
        boards.append(board)
        keys.append(key)
    batch = game.evaluate_batch(np.array(keys, dtype=np.int64))
    assert batch is not None
    for b, k, v in zip(boards, keys, batch.tolist(), strict=True):
        expected = naive_evaluate(naive, b)
        assert estimate(game, k) == v == expected, naive.text(b)
        if any(game.terminal_value(c) == -1 for _, c in game.children(k)):
            assert expected == 1


def test_connect_four_evaluation_of_known_positions() -> None:
    game = ConnectFour(width=7, height=6)
    assert estimate(game, game.initial()) == 0
    assert estimate(game, game.parse("334455")) == 1  # x completes four at 2 or 6
    assert estimate(game, game.parse("44556")) == -1  # o cannot block both ends of xxx
    assert estimate(game, game.parse("4444")) == estimate(game, game.parse("3344")) == 0
    assert estimate(game, game.parse("4545454")) == -1  # x four in column 4: o has lost
    assert ConnectFour(width=10, height=10).evaluate_batch(np.array([0])) is None


# -- tic-tac-toe and the number game: every estimate that is not 0 is the exact value ---


def test_every_tic_tac_toe_estimate_is_zero_or_exact() -> None:
    game = get_game("tic-tac-toe")

    @cache
    def value(key: int) -> int:
        t = game.terminal_value(key)
        return t if t is not None else max(-value(c) for _, c in game.children(key))

    seen, stack, decided = {game.initial()}, [game.initial()], 0
    while stack:
        key = stack.pop()
        guess = estimate(game, key)
        assert guess in (0, value(key)), game.format(key)
        decided += guess != 0 and game.terminal_value(key) is None
        for _, child in game.children(key):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    assert len(seen) == 5478 and decided > 1000


@pytest.mark.parametrize("n", [*range(1, 40), 1_000_000_007, 10**12])
def test_the_number_game_estimate_is_a_win_the_mover_can_take(n: int) -> None:
    game = get_game("number-game", root=n)
    guess = estimate(game, n)
    if n < 6:
        assert guess == -n == game.terminal_value(n)
        return
    assert guess == max((d for _, d in game.children(n) if d < 6), default=0)
    if guess > 0 and n < 40:
        result = solve(game, n, max_expansions=20_000)
        assert result.low is not None and result.low >= guess


# -- chess: material and mobility ---------------------------------------------------------


@pytest.mark.parametrize(
    ("material", "fen", "expected"),
    [
        ("KQvK", "4k3/8/8/8/8/8/8/3QK3 w - - 0 1", 1),
        ("KQvK", "4k3/8/8/8/8/8/8/3QK3 b - - 0 1", -1),
        ("KRvKR", "r3k3/8/8/8/8/8/8/R3K3 w - - 0 1", 0),
        ("KQvK", "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1", -1),  # mated: the terminal value
        ("KQvK", "k7/8/1QK5/8/8/8/8/8 b - - 0 1", 0),  # stalemate: the terminal value
        ("KBvK", "4k3/8/8/8/8/8/8/3BK3 w - - 0 1", 0),  # a dead draw, though a bishop up
    ],
)
def test_chess_estimates(material: str, fen: str, expected: int) -> None:
    game = get_game("chess", material=material)
    assert estimate(game, game.parse(fen)) == expected


def test_the_tutorial_shows_what_check_prints_of_a_wrong_evaluation() -> None:
    """docs/games.md's example is what a real ``negagraph check`` prints (time aside)."""
    root = Path(__file__).resolve().parents[2]
    command = "negagraph check tests/games/bad_games.py:WrongAtTerminal"
    done = subprocess.run(
        [Path(sys.executable).with_name("negagraph"), *command.split()[1:]],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 1
    shown = re.sub(r", [\d.]+s\n", ", 0.0s\n", done.stdout) + done.stderr
    assert f"$ {command}\n{shown}" in (root / "docs" / "games.md").read_text()
