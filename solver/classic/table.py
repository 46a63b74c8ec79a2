"""The transposition table of the search family, and the move order every search uses.

An entry holds what searches have learnt of a position: a lower and an upper bound on its
value (both can be known at once, which MTD(f)'s null-window passes rely on), the
*draft* they hold for and the index of the best move found. The draft is the depth the
position was searched to; a search that reached no depth limit below the position
proved true bounds, whatever the depth, and stores the draft :data:`EXHAUSTIVE`.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver.game import Game, MoveLabel, PositionKey
from solver.values import DEPTH_INF, NEG_INF, POS_INF

EXHAUSTIVE = DEPTH_INF
"""The draft of bounds that no depth limit cut short: true for every depth."""

Entry = tuple[int, int, int, int]
"""(lower, upper, draft, best move's index)."""


class Table:
    """Bounds by position (canonical keys where the game uses symmetry)."""

    def __init__(self) -> None:
        self.entries: dict[PositionKey, Entry] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: PositionKey) -> Entry | None:
        """The entry of *key*, if any."""
        return self.entries.get(key)

    def store(
        self, key: PositionKey, value: int, alpha: int, beta: int, draft: int, best_i: int
    ) -> None:
        """Record *value*, the result of a fail-soft search of *key* within
        (*alpha*, *beta*) to *draft*: an upper bound if it failed low, a lower bound if it
        failed high, else exact. Bounds of the same draft are merged; a deeper draft
        replaces a shallower one, which never replaces a deeper one."""
        lower = value if value > alpha else NEG_INF
        upper = value if value < beta else POS_INF
        old = self.entries.get(key)
        if old is not None:
            old_lower, old_upper, old_draft, _ = old
            if old_draft > draft:
                return
            if old_draft == draft:
                merged = (max(lower, old_lower), min(upper, old_upper))
                if merged[0] <= merged[1]:  # heuristic bounds can disagree: keep the new
                    lower, upper = merged
        self.entries[key] = (lower, upper, draft, best_i)


def order_moves(game: Game, moves: Sequence[tuple[MoveLabel, PositionKey]], hint: int) -> list[int]:
    """The indices of *moves* in search order: the move at *hint* first (the table's best
    move; ``-1`` for none), then moves into terminal positions that win at once, then
    the rest, each group in the game's order."""
    terminal_value = game.terminal_value

    def rank(i: int) -> int:
        if i == hint:
            return 0
        tv = terminal_value(moves[i][1])
        return 1 if tv is not None and tv < 0 else 2

    return sorted(range(len(moves)), key=rank)


__all__ = ["EXHAUSTIVE", "Entry", "Table", "order_moves"]
