"""Where a tiered full solve's units (:mod:`solver.tiers.units`) run: the :class:`Runner`
protocol, and :class:`InlineRunner`, which runs them in the solving process one at a
time (Dask workers: :class:`solver.tiers.cluster.DaskRunner`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Protocol

from solver.game import Game
from solver.store import NodeShard, TierRecord, TierStore
from solver.tiers.units import (
    ShardResult,
    SolvedTier,
    Unit,
    solve_shard,
    worker_name,
    write_node_shard,
)


class Runner(Protocol):
    """Where a tiered solve's units run: this process (:class:`InlineRunner`) or Dask
    workers (:class:`solver.tiers.cluster.DaskRunner`)."""

    workers: int
    """The processes running units."""

    @property
    def in_flight(self) -> int:
        """Units submitted and not yet returned by :meth:`wait`."""
        ...

    @property
    def ready(self) -> bool:
        """Whether :meth:`wait` would return at once."""
        ...

    def submit(
        self,
        game: Game,
        shards: Sequence[Unit],
        children: list[TierRecord],
        tables: Sequence[SolvedTier] = (),
    ) -> None:
        """Run *shards* (of one tier, whose solved child tiers are *children*, some of
        which this process holds: *tables*)."""
        ...

    def wait(self) -> ShardResult:
        """The next unit to finish (raising what it raised)."""
        ...

    def close(self) -> None:
        """Drop the units not run (they are run again by the next run)."""
        ...


class InlineRunner:
    """Runs a tiered solve's units in the solving process, one at a time."""

    workers = 1

    def __init__(self, store: TierStore, ident: str) -> None:
        self.store = store
        self.ident = ident
        self.queue: deque[tuple[Game, Unit, list[TierRecord]]] = deque()

    @property
    def in_flight(self) -> int:
        return len(self.queue)

    @property
    def ready(self) -> bool:
        return bool(self.queue)  # run when waited for

    def submit(
        self,
        game: Game,
        shards: Sequence[Unit],
        children: list[TierRecord],
        tables: Sequence[SolvedTier] = (),
    ) -> None:
        # the tables held are this process's own (TABLES): nothing to send
        self.queue.extend((game, shard, children) for shard in shards)

    def wait(self) -> ShardResult:
        game, unit, children = self.queue.popleft()
        if isinstance(unit, NodeShard):
            return write_node_shard(game, self.store, unit, worker=worker_name())
        return solve_shard(game, self.store, self.ident, unit, children)

    def close(self) -> None:
        self.queue.clear()


__all__ = ["InlineRunner", "Runner"]
