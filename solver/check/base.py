"""What the conformance checks (:mod:`solver.check`, :mod:`solver.check.tiers`) share: a
violation with the position that shows it (:class:`Violation`, :func:`witness`,
:func:`first_of`), and :func:`find_cycle`, which the acyclic and the tier checks run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from solver.game import Game, PositionKey


@dataclass(frozen=True)
class Violation:
    """One broken promise, with a position that shows it."""

    check: str
    """Which check: ``notation``, ``moves``, ``terminal``, ``range``, ``determinism``,
    ``canonical``, ``symmetry``, ``acyclic``, ``finite``, ``tiers``, ``chance``,
    ``evaluate`` or ``error``."""
    message: str
    witness: str
    """The position in the game's notation (its key if it cannot be written)."""

    def __str__(self) -> str:
        return f"{self.check}: {self.message} (witness: {self.witness})"


def witness(game: Game, key: PositionKey) -> str:
    """*key* as a violation's witness: in the game's notation (its key if it cannot be
    written)."""
    try:
        return game.format(key)
    except Exception:
        return f"key {key}"


INT64 = range(-(2**63), 2**63)
"""The keys the batched rules take (numpy int64)."""


def first_of(game: Game, check: str, wrong: list[tuple[PositionKey, str]]) -> list[Violation]:
    """A violation of *check* at the first of the sampled positions *wrong* (each with
    what is wrong there), counting the others."""
    if not wrong:
        return []
    key, message = wrong[0]
    more = f" (and at {len(wrong) - 1} more sampled positions)" if len(wrong) > 1 else ""
    return [Violation(check, message + more, witness(game, key))]


def find_cycle(edges: Mapping[PositionKey, Iterable[PositionKey]]) -> list[PositionKey] | None:
    """A cycle of the graph *edges* (keys of a cycle, first repeated last), or ``None``."""
    colour: dict[PositionKey, int] = {}  # 1: on the stack, 2: done
    for root in edges:
        if root in colour:
            continue
        colour[root] = 1
        path = [root]
        stack = [iter(edges.get(root, ()))]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                colour[path.pop()] = 2
                stack.pop()
                continue
            state = colour.get(child)
            if state == 1:
                return [*path[path.index(child) :], child]
            if state is None and child in edges:
                colour[child] = 1
                path.append(child)
                stack.append(iter(edges[child]))
    return None


__all__ = ["INT64", "Violation", "find_cycle", "first_of", "witness"]
