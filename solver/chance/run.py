"""The chance runner: a game of chance solved in one process with its whole graph in
memory (:func:`solver.chance.solve_chance`), under the run's limits."""

from __future__ import annotations

from solver.chance import DEFAULT_TOLERANCE, solve_chance
from solver.game import Game, PositionKey
from solver.run import SolveOptions, SolveResult
from solver.store import Store


def run_chance(
    game: Game, root_key: PositionKey, store: Store, options: SolveOptions
) -> SolveResult:
    """A solve of *game*, which has chance nodes, from *root_key* into *store* (see
    :func:`solver.negamax.solve`; its options checked by
    :meth:`~solver.run.SolveOptions.check`)."""
    tolerance = options.chance.tolerance
    return solve_chance(
        game,
        root_key,
        store,
        options.progress,
        DEFAULT_TOLERANCE if tolerance is None else tolerance,
        full=options.full,
        limits=options.limits,
    )
