"""The tier checks of :func:`solver.check.check_game`: each sampled position's tier
promises (:func:`check_position_tiers`, which :func:`solver.check.check_position` runs),
and, over the sample as a whole (:func:`check_tiers`): the child-tier relation from the
initial position's tier ends (it reaches at most :data:`~solver.tiers.graph.TIER_LIMIT`
tiers, as a tiered solve needs) and has no cycle, ``tier_positions`` lists each sampled
tier's positions, and ``tiers_batch`` agrees with ``tier``.

>>> from solver.games import get_game
>>> game = get_game("tic-tac-toe")
>>> check_tiers(game, [game.initial()])
([], [])
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from itertools import islice
from typing import Any

import numpy as np

from solver.check.base import INT64, Violation, find_cycle, first_of, witness
from solver.game import BatchedRules, Game, MoveLabel, PositionKey
from solver.tiers.graph import TIER_LIMIT

TIER_GRAPH_LIMIT = TIER_LIMIT
"""Tiers explored from the initial position's by :func:`check_tiers` at most: the
relation reaching more is a violation (a tiered solve refuses the game)."""

TIER_SAMPLE = 2000
"""Positions of a tier's :meth:`~solver.game.GameBase.tier_positions` checked at most."""


def _walk(
    hooks: Any, start: int, deadline: float | None
) -> tuple[dict[int, list[int]], int | None, bool]:
    """The child-tier relation from the tier *start* (each tier's children besides
    itself), walked depth first; the first tier found beyond :data:`TIER_GRAPH_LIMIT`
    (``None`` if the relation ends within them); whether the walk ran out of time (at
    *deadline*) before either."""
    edges: dict[int, list[int]] = {}
    todo = [start]
    while todo:
        t = todo.pop()
        if t in edges:
            continue
        if len(edges) >= TIER_GRAPH_LIMIT:
            return edges, t, False
        if deadline is not None and time.monotonic() > deadline:
            return edges, None, True
        # a tier listing endless children shows an endless relation as well
        edges[t] = [c for c in islice(hooks.child_tiers(t), TIER_GRAPH_LIMIT + 1) if c != t]
        todo.extend(c for c in edges[t] if c not in edges)
    return edges, None, False


def check_position_tiers(
    game: Game,
    key: PositionKey,
    children: Sequence[tuple[MoveLabel, PositionKey]],
    symmetry: bool,
) -> list[Violation]:
    """The tier promises at *key* (see :attr:`~solver.game.GameFacts.tiers`)."""
    out: list[Violation] = []
    hooks: Any = game  # the tier hooks are not part of the Game protocol
    tier = hooks.tier(key)
    if not isinstance(tier, int) or isinstance(tier, bool):
        return [Violation("tiers", f"tier() is {tier!r}, not an integer", witness(game, key))]
    name = hooks.tier_name(tier)
    if not isinstance(name, str) or not name:
        out.append(
            Violation("tiers", f"tier_name({tier}) is {name!r}, not a name", witness(game, key))
        )
    below = list(hooks.child_tiers(tier))
    if tier in below:
        out.append(
            Violation(
                "tiers",
                f"child_tiers({tier}) lists the tier itself (moves within a tier need no "
                "declaring)",
                witness(game, key),
            )
        )
    for label, child in children:
        c = game.canonical(child) if symmetry else child
        t = hooks.tier(c)
        if t != tier and t not in below:
            out.append(
                Violation(
                    "tiers",
                    f"move {label} goes from tier {tier} to tier {t}, which child_tiers({tier}) "
                    f"= {below} does not list",
                    witness(game, key),
                )
            )
            break
    if symmetry and hooks.tier(game.canonical(key)) != tier:
        out.append(
            Violation(
                "tiers",
                "the canonical image is in another tier than the position",
                witness(game, key),
            )
        )
    return out


def check_tiers(
    game: Game, keys: Sequence[PositionKey], *, deadline: float | None = None
) -> tuple[list[Violation], list[str]]:
    """The tier graph from the initial position's tier ends (it reaches at most
    :data:`TIER_GRAPH_LIMIT` tiers) and is acyclic, and the positions each sampled tier's
    ``tier_positions`` lists (the first :data:`TIER_SAMPLE`) are in that tier, each once,
    canonical with symmetry; when the game offers ``tiers_batch`` for *keys*, it gives
    every key's ``tier``. Returns the violations, and notes: the walk of the tier graph
    stops at *deadline* (:func:`time.monotonic`), its rest unchecked."""
    out: list[Violation] = []
    notes: list[str] = []
    hooks: Any = game
    start = hooks.tier(game.initial())
    edges, beyond, late = _walk(hooks, start, deadline)
    if beyond is not None:
        out.append(
            Violation(
                "tiers",
                f"the child-tier relation reaches more than {TIER_GRAPH_LIMIT:,} tiers from "
                f"the initial position's tier ({start}): tiers must be finite (a tiered "
                "solve refuses the game)",
                f"tier {beyond}",
            )
        )
    if late:
        notes.append(
            f"time budget reached after walking {len(edges):,} tiers of the child-tier "
            "relation: the rest is not checked for a cycle or an end"
        )
    cycle = find_cycle(edges)
    if cycle is not None:
        out.append(
            Violation(
                "tiers",
                "the child-tier relation has a cycle: " + " -> ".join(map(str, cycle)),
                f"tier {cycle[0]}",
            )
        )
    tiers = [hooks.tier(k) for k in keys]
    out.extend(_check_tiers_batch(game, keys, tiers))
    out.extend(_check_tier_positions(game, sorted(set(tiers))))
    return out, notes


def _check_tier_positions(game: Game, tiers: Sequence[int]) -> list[Violation]:
    """The first :data:`TIER_SAMPLE` positions ``tier_positions`` lists for each of
    *tiers* are in that tier, each once, canonical with symmetry."""
    out: list[Violation] = []
    hooks: Any = game
    symmetry = game.facts.uses_symmetry
    for tier in tiers:
        listed = hooks.tier_positions(tier)
        if listed is None:
            continue
        seen: set[PositionKey] = set()
        for key in islice(listed, TIER_SAMPLE):
            problem = (
                "twice"
                if key in seen
                else f"in tier {t}"
                if (t := hooks.tier(key)) != tier
                else "not canonical"
                if symmetry and game.canonical(key) != key
                else None
            )
            if problem is not None:
                out.append(
                    Violation(
                        "tiers",
                        f"tier_positions({tier}) lists a position {problem}",
                        witness(game, key),
                    )
                )
                break
            seen.add(key)
    return out


def _check_tiers_batch(
    game: Game, keys: Sequence[PositionKey], tiers: Sequence[int]
) -> list[Violation]:
    """``tiers_batch`` of the sampled *keys* (those that fit 64 bits) is their *tiers*
    (``tier`` of each), when the game offers it (a ``None`` answer offers nothing)."""
    if not isinstance(game, BatchedRules):
        return []
    fit = [(k, t) for k, t in zip(keys, tiers, strict=True) if k in INT64]
    if not fit:
        return []
    array = np.array([k for k, _ in fit], dtype=np.int64)
    try:
        found = game.tiers_batch(array)
    except Exception as e:
        return [Violation("tiers", f"tiers_batch raised {type(e).__name__}: {e}", "-")]
    if found is None:
        return []
    got = np.asarray(found).tolist()
    if not isinstance(got, list) or len(got) != len(fit):
        n = len(got) if isinstance(got, list) else "no"
        return [Violation("tiers", f"tiers_batch of {len(fit)} keys gives {n} tiers", "-")]
    wrong = [
        (k, f"tiers_batch gives tier {b} where tier() gives {t}")
        for (k, t), b in zip(fit, got, strict=True)
        if b != t
    ]
    return first_of(game, "tiers", wrong)


__all__ = ["TIER_GRAPH_LIMIT", "TIER_SAMPLE", "check_position_tiers", "check_tiers"]
