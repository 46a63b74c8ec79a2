"""The runners :func:`solver.negamax.solve` hands a run to, one a mode: partial
(:mod:`~solver.runners.partial`), full (:mod:`~solver.runners.full`), tiered
(:mod:`~solver.runners.tiered`) and chance (:mod:`~solver.runners.chance`). Each is a
:data:`Runner`: it opens the run in the store, runs it and closes it whatever happens;
the partial and full ones share :mod:`~solver.runners.graph_run`.
"""

from __future__ import annotations

from collections.abc import Callable

from solver.game import Game, PositionKey
from solver.run import SolveOptions, SolveResult
from solver.store import Store

Runner = Callable[[Game, PositionKey, Store, SolveOptions], SolveResult]
"""A runner: ``(game, root_key, store, options) -> SolveResult``, the options checked."""
