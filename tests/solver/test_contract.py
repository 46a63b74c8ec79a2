"""The Game contract: declared facts as one frozen, validated record, read by the solver
through ``game.facts`` only; a plain class (no :class:`GameBase`) satisfies the protocol."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pytest

from solver.errors import ContractError
from solver.game import CONTRACT_VERSION, Game, GameFacts, LeakOrder, Param, ParamValue
from solver.games import get_game
from solver.negamax import solve
from tests.games import bad_games

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "params", "facts"),
    [
        ("number-game", {}, GameFacts(finite=False)),
        (
            "tic-tac-toe",
            {"symmetry": True},
            GameFacts(acyclic=True, uses_symmetry=True, tiers=True, players=("X", "O")),
        ),
        (
            "connect-four",
            {"width": 4, "height": 4},
            GameFacts(acyclic=True, tiers=True, players=("X", "O")),
        ),
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

    assert check_game_class(bad_games.TieredHeap) is bad_games.TieredHeap
    with pytest.raises(ContractError, match="declares tiers but does not implement tier, child"):
        check_game_class(bad_games.TiersWithoutHooks)
    with pytest.raises(ContractError, match="which Game contract 2 added"):
        check_game_class(bad_games.TiersOfContractOne)
    with pytest.raises(ContractError, match="declares no tiers"):
        get_game("number-game").tier(13)


class _CyclicOutOfRange(bad_games.OutOfRange):
    """Says play may repeat: its partial solve searches in Python, not in C."""

    acyclic: ClassVar[bool] = False


class _BreadthOutOfRange(bad_games.OutOfRange):
    """Expands its partial solve's leaks breadth first (no null-window search)."""

    leak_order: ClassVar[LeakOrder] = "breadth"


class _BatchedOutOfRange(bad_games.OutOfRange):
    """Gives its terminal values as arrays too."""

    def terminal_values_batch(
        self, keys: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]] | None:
        return keys == 0, np.where(keys == 0, -2, 0).astype(np.int64)


WIDE = 2**70
"""Added to a heap's counters: keys beyond 64 bits (the solver's per-position paths)."""


class _WideOutOfRange(bad_games.OutOfRange):
    """Its keys do not fit 64 bits."""

    def initial(self) -> int:
        return WIDE + super().initial()

    def children(self, key: int) -> list[tuple[str, int]]:
        return [(m, WIDE + c) for m, c in super().children(key - WIDE)]

    def terminal_value(self, key: int) -> int | None:
        return super().terminal_value(key - WIDE)

    def format(self, key: int) -> str:
        return super().format(key - WIDE)


class _SeededOutOfRange(bad_games.Heap):
    """Lists a tablebase position, a heap of 1000 that no move reaches, worth 5."""

    def children(self, key: int) -> list[tuple[str, int]]:
        return [] if key == 1000 else super().children(key)

    def terminal_value(self, key: int) -> int | None:
        return 5 if key == 1000 else super().terminal_value(key)

    def tablebase_positions(self) -> list[int]:
        return [1000]


@pytest.mark.parametrize(
    ("game", "kwargs", "found"),
    [
        (bad_games.OutOfRange(), {}, "'0' has the terminal value -2"),  # the C search
        (_CyclicOutOfRange(), {}, "'0' has the terminal value -2"),
        (_BreadthOutOfRange(), {}, "'0' has the terminal value -2"),
        (bad_games.OutOfRange(), {"root": "0"}, "'0' has the terminal value -2"),
        (bad_games.OutOfRange(), {"full": True}, "'0' has the terminal value -2"),
        (_BatchedOutOfRange(), {"full": True}, "'0' has the terminal value -2"),
        (_WideOutOfRange(), {}, "'0' has the terminal value -2"),
        (_WideOutOfRange(), {"full": True}, "'0' has the terminal value -2"),
        (_SeededOutOfRange(), {"full": True}, "'1000' has the terminal value 5"),
    ],
    ids=[
        "c-search",
        "python-search",
        "breadth-first",
        "terminal-root",
        "full",
        "full-batched",
        "wide-keys",
        "wide-keys-full",
        "tablebase",
    ],
)
def test_a_terminal_value_outside_the_declared_range_is_refused(
    game: Game, kwargs: dict[str, Any], found: str
) -> None:
    with pytest.raises(ContractError) as caught:
        solve(game, **kwargs)
    assert str(caught.value) == (
        f"{game.name}: position {found}, outside the declared value_range (-1, 1) (the "
        "game breaks its contract; negagraph check finds this)"
    )
