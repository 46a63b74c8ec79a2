"""The tier graph of a game with tiers (``docs/design.md`` §5): the tiers reachable from
the root's through :meth:`~solver.game.GameBase.child_tiers`, in the order a tiered
solve discovers them (:mod:`solver.tiers.solve`), the walk bounded by :data:`TIER_LIMIT`
tiers (a relation that reaches more is taken not to end).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from solver.errors import ContractError, SolveError
from solver.game import Game, TieredRules
from solver.memory import format_size, rss

Why = Callable[[int, int], str | None]
"""``(expansions, bytes the next step needs) -> why the run must end now`` (``None``:
go on), as :meth:`solver.run.Limits.why`: ``"request"``, ``"memory"``, a budget."""


def tier_rules(game: Game) -> TieredRules:
    """*game*'s tier hooks.

    :raises ContractError: if it has none."""
    if not isinstance(game, TieredRules) or not game.facts.tiers:
        raise ContractError(f"{game.name} declares no tiers")
    return game


TIER_LIMIT = 100_000
"""Tiers the child-tier relation may reach from the root's tier (and the tablebase
positions'), at most: more, and the relation is taken not to end (``child_tiers(t) =
[t + 1]`` for every *t*), which no tiered solve can walk; ``negagraph check`` says so too.
The games' own reach a few hundred (chess endgames' materials) at most."""

TIER_WALK_CHECK = 1024
"""Tiers walked between two looks at a stop request and the memory limit (the
``why`` of :func:`tier_order`)."""


def endless_tiers(game: Game, whence: str) -> str:
    """What :func:`tier_order` says of a child-tier relation that reaches more than
    :data:`TIER_LIMIT` tiers from *whence* (``"the root's tier"``)."""
    return (
        f"{game.name}: the child-tier relation reaches more than {TIER_LIMIT:,} tiers from "
        f"{whence}: tiers must be finite (child_tiers must come to tiers without children; "
        "negagraph check finds this)"
    )


def tier_order(game: Game, start: Sequence[int], *, why: Why | None = None) -> list[int]:
    """The tiers reachable from the tiers *start* (the root's, then those of the game's
    tablebase positions) through :meth:`~solver.game.GameBase.child_tiers`, parents
    before children (a depth-first post-order, reversed: deterministic).

    Every :data:`TIER_WALK_CHECK` tiers it asks *why* (as ``why(0, 0)``) whether to end:
    a stop request ends it with :class:`KeyboardInterrupt`, the memory limit with a
    :class:`~solver.errors.SolveError` (budgets are for the solve's steps, after it).

    :raises ContractError: if the child-tier relation has a cycle, or reaches more than
        :data:`TIER_LIMIT` tiers."""
    rules = tier_rules(game)
    order: list[int] = []
    state: dict[int, int] = {}  # 0: on the stack, 1: done
    for first in reversed(start):  # the reversal puts the root's tier first
        if first in state:
            continue
        state[first] = 0
        stack = [(first, iter(rules.child_tiers(first)))]
        while stack:
            tier, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                state[tier] = 1
                order.append(tier)
            elif child not in state:
                if len(state) >= TIER_LIMIT:
                    whence = "the root's tier" + (
                        "" if len(start) == 1 else " and those of the game's tablebase positions"
                    )
                    raise ContractError(endless_tiers(game, whence))
                if why is not None and len(state) % TIER_WALK_CHECK == 0:
                    _walk_ends(game, why(0, 0), len(state))
                state[child] = 0
                stack.append((child, iter(rules.child_tiers(child))))
            elif state[child] == 0:
                raise ContractError(
                    f"{game.name}: the child tiers form a cycle through tier {child} "
                    "(child_tiers must be acyclic)"
                )
    order.reverse()
    return order


def _walk_ends(game: Game, reason: str | None, tiers: int) -> None:
    """End :func:`tier_order`'s walk, *tiers* tiers in, if *reason* says to."""
    if reason == "request":
        raise KeyboardInterrupt
    if reason == "memory":
        raise SolveError(
            f"{game.name}: walking the child-tier relation reached the memory limit "
            f"after {tiers:,} tiers ({format_size(rss())} in use): give the solve a "
            "larger --memory-limit"
        )


__all__ = ["TIER_LIMIT", "Why", "endless_tiers", "tier_order", "tier_rules"]
