"""What a tiered full solve (:mod:`solver.tiers.solve`) keeps of the tiers whose units are
in flight: a discovered tier whose positions are being written
(:class:`DiscoveredTier`), a tier being solved, its shards and what came back
(:class:`TierRun`), and the solving sweep's state over all of them (:class:`SolveSweep`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from solver.store import RunStatus, Shard, TierNodes, TierRecord, TierValues
from solver.tiers.units import ShardResult, SolvedTier, sorted_tier, values_columns


@dataclass
class DiscoveredTier:
    """A tier discovered, its positions being written."""

    tier: int
    ordinal: int
    first_offset: int
    """Its first position's place in discovery order."""
    count: int
    inner: bool
    expanded: int
    left: int = 0
    """Its units not finished yet."""


def slice_nodes(nodes: TierNodes, lo: int, hi: int) -> TierNodes:
    return TierNodes(
        nodes.keys[lo:hi], nodes.dist[lo:hi], nodes.terminal[lo:hi], nodes.value[lo:hi]
    )


@dataclass
class TierRun:
    """A tier being solved: its shards to run and what came back."""

    record: TierRecord
    shards: list[Shard]
    done_before: int
    """Shards written by earlier runs."""
    complete: bool
    """Whether this run solves every shard (and so holds the whole tier's values)."""
    name: str
    """The tier as the game names it (:meth:`~solver.game.GameBase.tier_name`)."""
    done: int = 0
    """Shards written by this run."""
    valued: int = 0
    """Shards whose values came back."""
    expanded: int = 0
    results: list[ShardResult] | None = None
    held: SolvedTier | None = None
    """The tier's values, once this run has solved all its shards."""

    @property
    def phase(self) -> str:
        return f"solving tier {self.name}: {self.record.nodes:,} positions"

    def add_values(self, result: ShardResult) -> int:
        """Keep a shard's values (the same whoever solved or wrote it: the shard's
        solution is deterministic); returns the shards whose values are in."""
        self.valued += 1
        if self.complete:
            if self.results is None:
                self.results = []
            self.results.append(result)
        return self.valued

    def add_written(self, result: ShardResult) -> None:
        self.done += 1
        if result.edges is not None:  # else written by another run of the same unit
            self.expanded += result.expanded

    def table(self, record: TierRecord) -> SolvedTier | None:
        """The tier's values from its shards, when this process solved them all."""
        if not self.complete or self.results is None:
            return None
        parts = sorted(self.results, key=lambda r: r.first_id)
        keys = np.concatenate([p.keys for p in parts if p.keys is not None])
        if keys.size != record.nodes:
            return None
        columns = [
            np.concatenate([values_columns(p.values)[j] for p in parts if p.values is not None])
            for j in range(4)
        ]
        self.results = None
        return sorted_tier(record, keys, TierValues(*columns))


@dataclass
class SolveSweep:
    """The solving sweep's state: the tiers to solve (children first) and how far each
    has come."""

    todo: list[TierRecord]
    """The tiers not solved yet, children first: the order they are marked solved in."""
    runs: dict[int, TierRun]
    """Each tier of :attr:`todo` by number."""
    written: set[int]
    """Tiers whose shards are all written (solved before, or by this run)."""
    ready: set[int]
    """Tiers whose values the units of their parents can have."""
    started: set[int] = field(default_factory=set)
    """Tiers whose shards were submitted."""
    committed: int = 0
    """Tiers of :attr:`todo` marked solved by this run."""
    ended: RunStatus | None = None
    """Why no more tiers are started (the run ends once those in flight are done)."""

    @property
    def done(self) -> bool:
        return self.committed == len(self.todo)


def id_ordered_keys(table: SolvedTier) -> npt.NDArray[np.int64]:
    if table.ids is None:  # in id order already
        return table.keys
    keys = np.empty_like(table.keys)
    keys[table.ids - table.record.first_id] = table.keys
    return keys


__all__ = ["DiscoveredTier", "SolveSweep", "TierRun", "id_ordered_keys", "slice_nodes"]
