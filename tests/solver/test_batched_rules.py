"""Batched rules (Game contract 2): connect-four's ``children_batch``,
``terminal_values_batch``, ``canonical_batch`` and ``tiers_batch``, in C
(``solver/games/_connect_four.c``) and in numpy, against its per-position hooks (the
oracle) on random positions of many board sizes, and a full solve that uses them builds
the very graph the per-position path builds."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.game import BatchedRules
from solver.games import get_game
from solver.games.connect_four import ConnectFour, _c_rules
from solver.negamax import solve
from solver.store import MemoryStore
from tests.solver.test_native import EDGE_COLUMNS, NODE_COLUMNS


class PerPosition(ConnectFour):
    """Connect-four without its batched rules: the per-position path."""

    def children_batch(self, keys: Any) -> None:
        return None

    def terminal_values_batch(self, keys: Any) -> None:
        return None

    def canonical_batch(self, keys: Any) -> None:
        return None

    def tiers_batch(self, keys: Any) -> None:
        return None


@contextmanager
def rules_in(path: str) -> Iterator[None]:
    """Connect-four's batched rules in C (*path* ``c``) or in numpy (``numpy``)."""
    before = os.environ.get("NEGAGRAPH_PURE_PYTHON")
    if path == "numpy":
        os.environ["NEGAGRAPH_PURE_PYTHON"] = "1"
    else:
        os.environ.pop("NEGAGRAPH_PURE_PYTHON", None)
    try:
        assert (_c_rules() is not None) == (path == "c")  # the C module is built
        yield
    finally:
        if before is None:
            os.environ.pop("NEGAGRAPH_PURE_PYTHON", None)
        else:
            os.environ["NEGAGRAPH_PURE_PYTHON"] = before


def playout_keys(game: Any, seed: int, games: int) -> list[int]:
    """Every position of *games* random games (terminal ones included)."""
    rng = random.Random(seed)
    keys = []
    for _ in range(games):
        key = game.initial()
        while True:
            keys.append(key)
            moves = game.children(key)
            if not moves:
                break
            key = rng.choice(moves)[1]
    return keys


@settings(max_examples=60, deadline=None)
@given(
    width=st.integers(1, 9),
    height=st.integers(1, 6),
    symmetry=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_batched_rules_equal_the_per_position_ones(
    width: int, height: int, symmetry: bool, seed: int
) -> None:
    game: Any = get_game("connect-four", width=width, height=height, symmetry=symmetry)
    keys = playout_keys(game, seed, 20)
    for path in ("c", "numpy"):
        with rules_in(path):
            batched_against_single(game, keys)


def batched_against_single(game: Any, keys: list[int]) -> None:
    array = np.array(keys, dtype=np.int64)
    moves = game.children_batch(array)
    assert moves.counts.tolist() == [len(game.children(k)) for k in keys]
    batched = [
        (moves.label_names[label], key)
        for label, key in zip(moves.labels.tolist(), moves.keys.tolist(), strict=True)
    ]
    assert batched == [move for k in keys for move in game.children(k)]
    terminal, values = game.terminal_values_batch(array)
    expected = [game.terminal_value(k) for k in keys]
    assert terminal.tolist() == [v is not None for v in expected]
    assert [int(v) for v, t in zip(values, terminal, strict=True) if t] == [
        v for v in expected if v is not None
    ]
    assert game.canonical_batch(array).tolist() == [game.canonical(k) for k in keys]


@settings(max_examples=60, deadline=None)
@given(
    width=st.integers(1, 9),
    height=st.integers(1, 6),
    symmetry=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_batched_tiers_equal_the_per_position_ones(
    width: int, height: int, symmetry: bool, seed: int
) -> None:
    game: Any = get_game("connect-four", width=width, height=height, symmetry=symmetry)
    keys = playout_keys(game, seed, 20)  # the empty board to full ones, and won ones
    for path in ("c", "numpy"):
        with rules_in(path):
            tiers_against_single(game, keys)


def tiers_against_single(game: Any, keys: list[int]) -> None:
    tiers = game.tiers_batch(np.array(keys, dtype=np.int64))
    assert tiers.dtype == np.int64
    assert tiers.tolist() == [game.tier(k) for k in keys]
    # the children a tiered solve routes, as they come and canonical
    children = game.children_batch(np.array(keys, dtype=np.int64)).keys
    for batch in (children, game.canonical_batch(children)):
        assert game.tiers_batch(batch).tolist() == [game.tier(k) for k in batch.tolist()]
    assert game.tiers_batch(np.zeros(0, dtype=np.int64)).tolist() == []


def test_games_without_batched_tiers_answer_none() -> None:
    game = get_game("tic-tac-toe")  # tiers, but no tiers_batch: GameBase's default
    assert isinstance(game, BatchedRules) and game.facts.tiers
    assert game.tiers_batch(np.array([game.initial()], dtype=np.int64)) is None


def test_boards_beyond_63_bits_have_no_batched_rules() -> None:
    game: Any = get_game("connect-four", width=8, height=8, symmetry=True)  # 8 x 9 bits
    none = np.zeros(1, dtype=np.int64)
    assert game.children_batch(none) is None
    assert game.terminal_values_batch(none) is None
    assert game.canonical_batch(none) is None
    assert game.tiers_batch(none) is None
    # and a full solve of such a board goes the per-position way (keys beyond 64 bits)


@pytest.mark.parametrize(
    ("width", "height", "symmetry"), [(4, 4, False), (4, 3, True), (3, 5, False), (5, 3, True)]
)
def test_a_full_solve_with_batched_rules_builds_the_same_graph(
    width: int, height: int, symmetry: bool
) -> None:
    graphs = []
    for cls in (ConnectFour, PerPosition):
        store = MemoryStore()
        solve(cls(width=width, height=height, symmetry=symmetry), full=True, store=store)
        (g,) = store.graphs.values()
        graphs.append(g)
    batched, single = graphs
    for column in (*NODE_COLUMNS, *EDGE_COLUMNS):
        assert bytes(getattr(batched, column)) == bytes(getattr(single, column)), column
    assert list(batched.edge_move) == list(single.edge_move)


def test_unaligned_keys_get_the_same_moves() -> None:
    game: Any = get_game("connect-four", width=5, height=4)
    keys = playout_keys(game, 5, 3)
    raw = bytearray(8 * len(keys) + 1)
    unaligned = np.frombuffer(raw, dtype=np.int64, count=len(keys), offset=1)
    unaligned[:] = keys
    aligned = np.array(keys, dtype=np.int64)
    for hook in ("children_batch", "terminal_values_batch", "tiers_batch"):
        got, want = getattr(game, hook)(unaligned), getattr(game, hook)(aligned)
        assert repr(got) == repr(want), hook
