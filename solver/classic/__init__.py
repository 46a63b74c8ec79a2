"""The classic search family beside the alpha-beta baseline: iterative deepening,
PVS/Negascout, aspiration windows and MTD(f), over one transposition table
(:mod:`solver.classic.search`), with the statistics and results the baseline shares
(:mod:`solver.classic.results`)."""

from __future__ import annotations

from solver.classic.engine import Evaluation
from solver.classic.results import SearchResult, SearchStats
from solver.classic.search import FAMILY, METHODS, Method, SearchOptions, search

__all__ = [
    "FAMILY",
    "METHODS",
    "Evaluation",
    "Method",
    "SearchOptions",
    "SearchResult",
    "SearchStats",
    "search",
]
