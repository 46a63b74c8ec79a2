"""How :func:`solver.check.check_game` samples a game's positions: breadth first from
the initial position, then random playouts, then breadth first from the sampled positions
not expanded yet, to tell whether the sample is every reachable position
(:func:`sample_positions`).
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
) -> tuple[list[PositionKey], bool | None]:
    """Up to *max_positions* distinct positions: breadth first from the initial position
    (half the budget), then random playouts from it. Also whether they are every
    reachable position (within *bound*): ``True`` if so, ``False`` if a position beyond
    them is reachable, ``None`` if *deadline* came before either was known. To tell, the
    sampled positions the breadth-first search did not expand are expanded at the end,
    breadth first, the positions they lead to sampled while the budget lasts."""
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
    if not queue:
        return order, True
    searched = len(order)
    _playouts(game, order, seen, max_positions, seed=seed, deadline=deadline, bound=bound)
    queue.extend(order[searched:])  # sampled by the playouts, not expanded
    return order, _close(game, order, seen, queue, max_positions, deadline, bound)


def _playouts(
    game: Game,
    order: list[PositionKey],
    seen: set[PositionKey],
    max_positions: int,
    *,
    seed: int,
    deadline: float | None,
    bound: Callable[[PositionKey], bool] | None,
) -> None:
    """Random playouts from the initial position, adding the positions they meet to
    *order* and *seen* until there are *max_positions* (or ``4 * max_positions`` moves
    have been played)."""
    start = game.initial()
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


def _close(
    game: Game,
    order: list[PositionKey],
    seen: set[PositionKey],
    queue: deque[PositionKey],
    max_positions: int,
    deadline: float | None,
    bound: Callable[[PositionKey], bool] | None,
) -> bool | None:
    """Expand the sampled positions *queue*, breadth first, sampling the new positions
    they lead to while there are fewer than *max_positions*: ``True`` if none is left
    (the sample is every reachable position), ``False`` at the first new one beyond the
    budget, ``None`` at *deadline*."""
    while queue:
        if late(deadline):
            return None
        for _, child in safe_moves(game, queue.popleft()):
            if child in seen or (bound is not None and not bound(child)):
                continue
            if len(order) >= max_positions:
                return False
            seen.add(child)
            order.append(child)
            queue.append(child)
    return True


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
