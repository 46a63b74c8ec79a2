"""What a classic search returns: the root's value, its best move and the statistics.

Shared by the alpha-beta baseline (:mod:`solver.alphabeta`) and the search family
(:mod:`solver.classic.search`), so that the benchmarks compare like with like.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SearchStats:
    """What a search did."""

    calls: int = 0
    """Positions searched, counting repeats (the tree size seen by the search); a
    depth-limited search also counts the positions it scores at its depth limit."""
    distinct: int = 0
    """Distinct positions searched."""
    tt_hits: int = 0
    """Searches answered from the transposition table."""
    cutoffs: int = 0
    """Beta cutoffs (moves not searched)."""
    frontier: int = 0
    """Positions scored by the evaluation at the depth limit (counted in ``calls`` too)."""
    passes: int = 0
    """Searches of the root: one per iteration of iterative deepening, plus the repeats
    after an aspiration window failed, plus every null-window pass of MTD(f)."""
    researches: int = 0
    """PVS re-searches: a null-window search of a later move failed high, so the move was
    searched again with the full window."""


@dataclass(frozen=True)
class SearchResult:
    """The root's value (from the mover's view), its best move and the statistics."""

    value: int
    best_move: str | None
    stats: SearchStats = field(compare=False)
    exact: bool = True
    """Whether *value* is the game's value: the search reached no depth limit (or only
    limits beyond every line of play). ``False``: a heuristic score from the evaluation."""
    depth: int | None = None
    """The depth limit of the last pass (plies from the root), ``None`` when the search
    had no limit."""


__all__ = ["SearchResult", "SearchStats"]
