"""How :func:`solver.check.check_game` samples a game's positions: breadth first from
the initial position, then random playouts (:func:`sample_positions`).
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Sequence

from solver.game import Game, MoveLabel, PositionKey


def sample_positions(
    game: Game,
    max_positions: int,
    *,
    seed: int = 0,
    deadline: float | None = None,
    bound: Callable[[PositionKey], bool] | None = None,
) -> tuple[list[PositionKey], bool]:
    """Up to *max_positions* distinct positions: breadth first from the initial position
    (half the budget), then random playouts from it. Also whether the breadth-first search
    reached every position (then the sample is all of them, when they fit)."""
    start = game.initial()
    seen = {start}
    order = [start]
    queue = deque([start])
    half = max(1, max_positions // 2)
    while queue and len(order) < half and not late(deadline):
        for _, child in safe_moves(game, queue.popleft()):
            if child not in seen and (bound is None or bound(child)):
                seen.add(child)
                order.append(child)
                queue.append(child)
    exhausted = not queue
    if exhausted:
        return order, True
    rng = random.Random(seed)
    tries = 0
    while len(order) < max_positions and tries < 4 * max_positions and not late(deadline):
        key = start
        for _ in range(10_000):
            tries += 1
            children = safe_moves(game, key)
            if not children:
                break
            key = rng.choice(list(children))[1]
            if bound is not None and not bound(key):
                break
            if key not in seen:
                seen.add(key)
                order.append(key)
                if len(order) >= max_positions:
                    break
    return order, False


def safe_moves(game: Game, key: PositionKey) -> Sequence[tuple[MoveLabel, PositionKey]]:
    """``children(key)``, or none if it raises (:func:`~solver.check.check_position`
    reports that, with *key* as the witness)."""
    try:
        return game.children(key)
    except Exception:
        return ()


def late(deadline: float | None) -> bool:
    """Whether the :func:`time.monotonic` *deadline* (if any) has passed."""
    return deadline is not None and time.monotonic() > deadline


__all__ = ["late", "safe_moves", "sample_positions"]
