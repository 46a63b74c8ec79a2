"""Tiers (Game contract 2) of the built-in games, on every reachable position of small
variants: every move stays in its tier or goes to a declared child tier, the tier graph
is acyclic and ends where play ends, and chess's tier enumerations are complete for
pawnless materials (every position reached from the tablebase is listed by its tier)."""

from __future__ import annotations

from collections import deque
from typing import Any, ClassVar

import pytest

from solver.check import check_game
from solver.check.base import find_cycle
from solver.errors import ContractError, SolveError
from solver.games import get_game
from solver.games.chess_material import material_of_tier, tier_of_material
from solver.tiers.graph import TIER_LIMIT, tier_order
from tests.games import bad_games

SMALL = [
    ("connect-four", {"width": 4, "height": 3}),
    ("connect-four", {"width": 3, "height": 4, "symmetry": True}),
    ("tic-tac-toe", {}),
    ("tic-tac-toe", {"symmetry": True}),
    ("nap", {"n": 9}),
    ("grundy", {"n": 11}),
    ("e-valuate", {"expression": "a*b-c", "digits": "0-2"}),
    ("graph-share", {}),
]


def reachable(game: Any, roots: list[int]) -> dict[int, list[int]]:
    """Every position reachable from *roots* (canonical with symmetry) -> its children."""
    canon = game.canonical if game.uses_symmetry else (lambda k: k)
    edges: dict[int, list[int]] = {}
    todo = deque(canon(r) for r in roots)
    while todo:
        key = todo.popleft()
        if key in edges:
            continue
        edges[key] = [canon(c) for _, c in game.children(key)]
        todo.extend(c for c in edges[key] if c not in edges)
    return edges


@pytest.mark.parametrize(("name", "params"), SMALL)
def test_every_move_respects_the_tiers(name: str, params: dict[str, Any]) -> None:
    game: Any = get_game(name, **params)
    assert game.facts.tiers
    edges = reachable(game, [game.initial()])
    tiers = {key: game.tier(key) for key in edges}
    for key, children in edges.items():
        below = set(game.child_tiers(tiers[key]))
        assert tiers[key] not in below
        for child in children:
            assert tiers[child] == tiers[key] or tiers[child] in below, (key, child)
    # acyclic games move a tier on at every move here: each tier is one ply
    if game.facts.acyclic:
        assert all(tiers[c] == tiers[k] + 1 for k, cs in edges.items() for c in cs)
    graph = {t: list(game.child_tiers(t)) for t in set(tiers.values())}
    assert find_cycle(graph) is None
    # the last tier has no children; every tier but the first is reached
    assert set(tiers.values()) - {tiers[game.canonical(game.initial())]} <= {
        c for cs in graph.values() for c in cs
    }


def test_chess_tiers_are_materials() -> None:
    game: Any = get_game("chess", material="KRPvKR")
    assert material_of_tier(game.tier(game.initial())) == "KRPvKR"
    assert {material_of_tier(t) for t in game.child_tiers(tier_of_material("KPvK"))} == {
        "KvK",
        "KQvK",
        "KRvK",
        "KBvK",
        "KNvK",
    }
    # capture and promotion at once: the promoting pawn takes a piece on the last rank
    assert "KQvK" in {material_of_tier(t) for t in game.child_tiers(tier_of_material("KPvKN"))}


@pytest.mark.parametrize("material", ["KQvK", "KRvK"])
def test_chess_tier_positions_list_every_reachable_pawnless_position(material: str) -> None:
    game: Any = get_game("chess", material=material)
    edges = reachable(game, list(game.tablebase_positions()))
    by_tier: dict[int, set[int]] = {}
    for key in edges:
        by_tier.setdefault(game.tier(key), set()).add(key)
    assert {material_of_tier(t) for t in by_tier} == {material, "KvK"}
    for tier, keys in by_tier.items():
        listed = list(game.tier_positions(tier))
        assert len(listed) == len(set(listed))
        assert keys <= set(listed), material_of_tier(tier)
        assert {game.tier(k) for k in listed} == {tier}


def test_check_holds_batched_notation_to_format() -> None:
    # connect-four offers format_batch: it spells what format() writes (check_game above
    # and below passes it); a wrong one is caught at the position it gets wrong
    found = [
        v for v in check_game(bad_games.WrongFormatBatch()).violations if v.check == "notation"
    ]
    assert [(v.message, v.witness) for v in found] == [
        ("format_batch writes '8' where format() writes '7'", "7")
    ]
    assert check_game(get_game("connect-four", width=4, height=3), max_positions=500).ok


def test_check_holds_batched_tiers_to_tier() -> None:
    # connect-four offers tiers_batch: it agrees with tier() on every sampled position
    report = check_game(get_game("connect-four", width=4, height=3), max_positions=500)
    assert report.ok, [str(v) for v in report.violations]
    # a wrong one is caught at the first sampled position it gets wrong (heap 19: block
    # 4, not 5), and a tiered game without it (GameBase's None) passes
    found = [v for v in check_game(bad_games.WrongTiersBatch()).violations if v.check == "tiers"]
    assert [(v.message, v.witness) for v in found] == [
        ("tiers_batch gives tier 5 where tier() gives 4 (and at 4 more sampled positions)", "19")
    ]
    assert check_game(bad_games.TieredHeap()).ok


class ChainOfTiers(bad_games.EndlessTiers):
    """:class:`~tests.games.bad_games.EndlessTiers` whose child-tier relation ends after
    ``tiers`` tiers (0 to ``tiers - 1``)."""

    name: ClassVar[str] = "chain-of-tiers"
    tiers_reached: ClassVar[int] = TIER_LIMIT

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier + 1,) if tier + 1 < self.tiers_reached else ()


def test_the_tier_order_takes_up_to_the_tier_limit_and_no_more() -> None:
    assert tier_order(ChainOfTiers(), [0]) == list(range(TIER_LIMIT))
    more = type("MoreTiers", (ChainOfTiers,), {"tiers_reached": TIER_LIMIT + 1})
    with pytest.raises(ContractError, match="reaches more than 100,000 tiers from the root's"):
        tier_order(more(), [0])


@pytest.mark.parametrize(
    ("reason", "error", "message"),
    [
        ("request", KeyboardInterrupt, None),
        ("memory", SolveError, "reached the memory limit after 1,024 tiers"),
        ("seconds", ContractError, "reaches more than 100,000 tiers"),  # budgets: later
    ],
)
def test_the_tier_walk_asks_whether_to_end(
    reason: str, error: type[BaseException], message: str | None
) -> None:
    asked: list[tuple[int, int]] = []

    def why(done: int, need: int) -> str:
        asked.append((done, need))
        return reason

    with pytest.raises(error, match=message):
        tier_order(bad_games.EndlessTiers(), [0], why=why)
    assert asked[0] == (0, 0)
