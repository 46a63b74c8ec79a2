"""The tiered runner: a full solve a tier at a time (:class:`~solver.tiers.solve.TieredSolve`),
RAM holding a tier and what its moves reach, a :class:`~solver.store.TierStore` the rest;
its units solved in this process or by a Dask cluster's workers (:mod:`solver.tiers.cluster`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from solver.errors import SolveError
from solver.fixpoint import decided
from solver.game import Game, PositionKey
from solver.run import EndedBy, SolveOptions, SolveResult, ended, game_failure, opening
from solver.store import Progress, RunOptions, RunStatus, Store, TierStore
from solver.tiers.graph import tier_order, tier_rules
from solver.tiers.solve import TieredSolve
from solver.values import clamp, encode, encode_depth

if TYPE_CHECKING:
    from solver.tiers.cluster import DaskRunner


def run_tiered(
    game: Game, root_key: PositionKey, store: Store, options: SolveOptions
) -> SolveResult:
    """A tiered full solve of *game* from *root_key* into *store*, a
    :class:`~solver.store.TierStore` (see :func:`solver.negamax.solve`)."""
    assert isinstance(store, TierStore)
    return TieredRun(game, root_key, store, options).run()


class TieredRun:
    """One tiered run: its budgets checked between tiers, its units' runner, and the
    :class:`~solver.tiers.solve.TieredSolve` that does the work."""

    def __init__(
        self, game: Game, root_key: PositionKey, store: TierStore, options: SolveOptions
    ) -> None:
        self.game = game
        self.root_key = root_key
        self.store = store
        self.options = options
        self.started = time.monotonic()
        self.deadline = options.limits.deadline(self.started)
        self.runner: DaskRunner | None = None
        """The Dask cluster's runner of the units, when other processes solve them."""
        self.solver: TieredSolve | None = None

    def why(self, done: int, need: int) -> EndedBy | None:
        """What ends the run after *done* expansions, its next step needing *need* bytes."""
        # With workers, the memory limit is theirs (Dask's), not this process's.
        return self.options.limits.why(done, self.deadline, 0 if self.runner is not None else need)

    def run(self) -> SolveResult:
        """Open the run, solve, close it whatever happens."""
        game, store, limits = self.game, self.store, self.options.limits
        progress = self.options.progress
        # A child-tier relation no solve can walk is refused before the store records a run.
        try:
            tier_order(game, [tier_rules(game).tier(self.root_key)], why=self.why)
        except Exception as exc:
            failure = game_failure(game, exc)
            if failure is not None:
                raise failure from exc
            raise
        store.open(
            game,
            RunOptions(
                self.root_key,
                True,
                limits.max_expansions,
                limits.max_seconds,
                tiered=True,
                layout=self.options.tiered.layout,
            ),
        )
        try:
            solver = self._start()
            status = solver.run()
            final = solver.progress(status, "closing")
            if progress is not None:
                progress(final)
        except BaseException as exc:
            failure = self._fail(exc)
            if failure is not None:
                raise failure from exc
            raise
        if self.runner is not None:
            self.runner.close()
        store.close(final)
        return self._result(solver, final, status)

    def _start(self) -> TieredSolve:
        """The units' runner (a Dask cluster's, if the options ask for one) and the solve."""
        cluster, limits = self.options.tiered, self.options.limits
        if cluster.distributed:
            from solver.tiers.cluster import DaskRunner

            self.runner = DaskRunner(
                self.store.shard_target(),
                workers=None if cluster.scheduler else cluster.workers,
                scheduler=cluster.scheduler,
                memory=limits.memory,
                tell=cluster.notice,
            )
        self.solver = TieredSolve(
            self.game,
            self.root_key,
            self.store,
            why=self.why,
            progress_cb=self.options.progress,
            memory_limit=limits.memory_limit,
            runner=self.runner,
            shard_size=cluster.shard_size,
        )
        return self.solver

    def _fail(self, exc: BaseException) -> SolveError | None:
        """Close a run that *exc* ended (its runner, its record); the one-line error to
        raise instead of *exc* if the game's own code raised it."""
        if self.runner is not None:
            self.runner.close()
        status = ended(exc)
        solver, progress = self.solver, self.options.progress
        closing = solver.progress(status, "closing") if solver else opening(status)
        if progress is not None:
            progress(closing)
        self.store.close(closing)
        return game_failure(self.game, exc)

    def _result(self, solver: TieredSolve, final: Progress, status: RunStatus) -> SolveResult:
        """What the run achieved, from *solver* and its *final* progress."""
        game, root_key = self.game, self.root_key
        low, high, depth_low, depth_high = solver.root
        final_flag = solver.root_solved
        rep = game.repetition_value
        return SolveResult(
            game=game.name,
            params=dict(game.params),
            root=root_key,
            root_text=game.format(root_key),
            low=encode(low),
            high=encode(high),
            low_final=final_flag,
            high_final=final_flag,
            depth_low=encode_depth(depth_low),
            depth_high=encode_depth(depth_high),
            expansions=solver.expansions,
            nodes=final.nodes,
            edges=final.edges,
            status=status,
            seconds=time.monotonic() - self.started,
            repetition_value=(
                clamp(rep, low, high)
                if rep is not None and final_flag and decided(rep, low, high, True, True)
                else None
            ),
            full=True,
            ended_by=None if status == "complete" else cast(EndedBy | None, solver.ended_by),
            memory_limit=self.options.limits.memory_limit,
            peak_rss=solver.peak_rss,
            extra={
                "tiers": final.tiers_total,
                "positions_solved": sum(r.nodes for r in solver.records if r.solved),
                "units": final.units_total,
                "workers": final.workers,
                "discover_seconds": round(solver.sweep_seconds["discover"], 3),
                "solve_seconds": round(solver.sweep_seconds["solve"], 3),
                **{f"unit_{k}_seconds": round(v, 3) for k, v in solver.unit_seconds.items()},
                **({"disk_short": solver.disk_short.message()} if solver.disk_short else {}),
            },
        )
