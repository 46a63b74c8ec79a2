"""negagraph's solver: games, the negamax-graph algorithm, and a classical baseline.

Pure Python with no database dependency; persistence plugs in through
:class:`solver.store.Store`.
"""

from __future__ import annotations

from solver.errors import (
    InvalidParameterError,
    InvalidPositionError,
    NegagraphError,
    SolveError,
    UnknownGameError,
)
from solver.game import Game, Param, PositionKey
from solver.negamax import solve
from solver.run import SolveResult
from solver.store import MemoryStore, Store
from solver.values import Bounds

__all__ = [
    "Bounds",
    "Game",
    "InvalidParameterError",
    "InvalidPositionError",
    "MemoryStore",
    "NegagraphError",
    "Param",
    "PositionKey",
    "SolveError",
    "SolveResult",
    "Store",
    "UnknownGameError",
    "solve",
]
