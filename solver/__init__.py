"""negagraph's solver: games, the negamax-graph algorithm, and a classical baseline.

Pure Python with no database dependency; persistence plugs in through
:class:`solver.store.Store`.

The names below are loaded when first used (``from solver import solve``): importing a
submodule such as :mod:`solver.errors` runs this package first, and the command line,
which needs only some of them, should not pay for numpy and the whole solver at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

_HOMES = {
    "Bounds": "solver.values",
    "Game": "solver.game",
    "InvalidParameterError": "solver.errors",
    "InvalidPositionError": "solver.errors",
    "MemoryStore": "solver.store",
    "NegagraphError": "solver.errors",
    "Param": "solver.game",
    "PositionKey": "solver.game",
    "SolveError": "solver.errors",
    "SolveResult": "solver.run",
    "Store": "solver.store",
    "UnknownGameError": "solver.errors",
    "solve": "solver.negamax",
}
"""The module each public name comes from."""


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'solver' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


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
