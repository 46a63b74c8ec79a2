"""The tier graph of a game with tiers (``docs/design.md`` §5): the tiers reachable from
the root's through :meth:`~solver.game.GameBase.child_tiers`, in the order a tiered
solve (:mod:`solver.tiered`) discovers them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from solver.errors import ContractError
from solver.game import Game, TieredRules

Why = Callable[[int, int], str | None]
"""``(expansions, bytes the next step needs) -> why the run must end now`` (``None``:
go on), as :meth:`solver.negamax.Limits.why`: ``"request"``, ``"memory"``, a budget."""


def tier_rules(game: Game) -> TieredRules:
    """*game*'s tier hooks.

    :raises ContractError: if it has none."""
    if not isinstance(game, TieredRules) or not game.facts.tiers:
        raise ContractError(f"{game.name} declares no tiers")
    return game


def tier_order(game: Game, start: Sequence[int]) -> list[int]:
    """The tiers reachable from the tiers *start* (the root's, then those of the game's
    tablebase positions) through :meth:`~solver.game.GameBase.child_tiers`, parents
    before children (a depth-first post-order, reversed: deterministic).

    :raises ContractError: if the child-tier relation has a cycle."""
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
                state[child] = 0
                stack.append((child, iter(rules.child_tiers(child))))
            elif state[child] == 0:
                raise ContractError(
                    f"{game.name}: the child tiers form a cycle through tier {child} "
                    "(child_tiers must be acyclic)"
                )
    order.reverse()
    return order


__all__ = ["Why", "tier_order", "tier_rules"]
