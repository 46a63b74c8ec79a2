"""The Game contract: declared facts as one frozen, validated record, read by the solver
through ``game.facts`` only; a plain class (no :class:`GameBase`) satisfies the protocol."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from solver.errors import ContractError
from solver.game import CONTRACT_VERSION, Game, GameFacts, Param, ParamValue
from solver.games import get_game
from solver.negamax import solve

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "params", "facts"),
    [
        ("number-game", {}, GameFacts(finite=False)),
        (
            "tic-tac-toe",
            {"symmetry": True},
            GameFacts(acyclic=True, uses_symmetry=True, tiers=True),
        ),
        ("connect-four", {"width": 4, "height": 4}, GameFacts(acyclic=True, tiers=True)),
        ("grundy", {}, GameFacts(acyclic=True, tiers=True)),
        ("nap", {}, GameFacts(acyclic=True, tiers=True)),
        (
            "chess",
            {"material": "KRvK"},
            GameFacts(
                value_range=(-1, 1),
                repetition_value=0,
                uses_symmetry=True,
                leak_order="breadth",
                players=("White", "Black"),
                tiers=True,
            ),
        ),
        (
            "domino-tiling",
            {"rows": 3, "cols": 4, "symmetry": False},
            GameFacts(acyclic=True, value_range=(-6, 6)),
        ),
    ],
)
def test_builtin_games_declare_their_facts(
    name: str, params: dict[str, object], facts: GameFacts
) -> None:
    game = get_game(name, **params)
    assert game.facts == facts
    assert game.contract == CONTRACT_VERSION
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.facts.acyclic = not facts.acyclic  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"value_range": (1, -1)}, "low <= high"),
        ({"value_range": (0.5, 1)}, "two integers"),
        ({"value_range": [-1, 1]}, "two integers"),
        ({"value_range": (1, 2, 3)}, "two integers"),
        ({"repetition_value": "draw"}, "repetition_value"),
        ({"leak_order": "random"}, "leak_order must be one of depth, breadth"),
        ({"acyclic": 1}, "acyclic must be true or false"),
        ({"chance": True}, r"chance nodes must declare a value_range \(-r, r\)"),
        ({"chance": True, "value_range": (0, 1)}, "value_range"),
        ({"chance": True, "value_range": (-1, 1), "tiers": True}, "cannot declare tiers"),
        ({"tiers": 1}, "tiers must be true or false"),
    ],
)
def test_malformed_facts_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ContractError, match=message):
        GameFacts(**kwargs)  # type: ignore[arg-type]


class PlainSubtraction:
    """A subtraction game (take 1 or 2 from a heap; no move loses) written without
    GameBase: attributes and methods only."""

    name: ClassVar[str] = "plain-subtraction"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "take 1 or 2"
    notation: ClassVar[str] = "the heap size"
    parameters: ClassVar[tuple[Param, ...]] = ()
    params: dict[str, ParamValue] = {}
    facts = GameFacts(acyclic=True, value_range=(-1, 1))
    repetition_value = None
    uses_symmetry = False
    priority = None

    def initial(self) -> int:
        return 10

    def children(self, key: int) -> list[tuple[str, int]]:
        return [(str(t), key - t) for t in (1, 2) if t <= key]

    def terminal_value(self, key: int) -> int | None:
        return -1 if key == 0 else None

    def canonical(self, key: int) -> int:
        return key

    def parse(self, text: str) -> int:
        return int(text)

    def format(self, key: int) -> str:
        return str(key)

    def format_many(self, keys: Sequence[int]) -> list[str]:
        return [str(k) for k in keys]

    def tablebase_positions(self) -> Iterable[int] | None:
        return None

    def player_to_move(self, key: int) -> int | None:
        return None


def test_a_plain_class_satisfies_the_protocol_and_solves() -> None:
    game: Game = PlainSubtraction()
    assert isinstance(game, Game)
    for full in (False, True):
        result = solve(game, full=full)
        assert result.value == 1  # 10 is not a multiple of 3: the mover wins
    assert solve(game, root="9").value == -1


def test_no_getattr_probing_of_games() -> None:
    """The solver, the database layer and the API read games through the contract only."""
    probe = re.compile(r"getattr\(\s*(self\.)?game\b")
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("solver", "db", "api")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if probe.search(line)
    ]
    assert offenders == []


def test_tiers_need_their_hooks_and_contract_2() -> None:
    from solver.games import check_game_class
    from tests.games import bad_games

    assert check_game_class(bad_games.TieredHeap) is bad_games.TieredHeap
    with pytest.raises(ContractError, match="declares tiers but does not implement tier, child"):
        check_game_class(bad_games.TiersWithoutHooks)
    with pytest.raises(ContractError, match="which Game contract 2 added"):
        check_game_class(bad_games.TiersOfContractOne)
    with pytest.raises(ContractError, match="declares no tiers"):
        get_game("number-game").tier(13)
