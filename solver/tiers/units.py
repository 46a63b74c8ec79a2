"""The unit of work of a tiered full solve's second sweep: solving one *shard* of a tier
(``docs/design.md`` §5, ``docs/distributed.md``).

A shard is a range of a tier's positions (by node id). In a tier whose moves all leave
it (connect-four's), a position's bounds and depths follow from its children's alone,
all in solved child tiers, so any process can solve any shard once the child tiers are
written: :func:`solve_shard` reads the shard's positions and its child tiers from the
database, expands the positions, runs :func:`~solver.full.retrograde.retrograde_arrays` with
the children as fixed seeds, and writes the shard's moves and values with its
``tier_shards`` row in one transaction. A tier with moves within it is one shard, solved
whole (cycles and all). Writing a shard twice writes nothing the second time, so a unit
lost with its worker simply runs again.

The solving process runs the units itself (:class:`~solver.tiers.solve.TieredSolve`) or hands
them to Dask workers (:mod:`solver.tiers.cluster`), which run a shard in two tasks
(:func:`solve_part`, then :func:`write_part`, its values sent back by :func:`values_of`)
and a discovered tier's slice in one (:func:`write_nodes_part`); each process keeps the
child tiers it was sent or read (:class:`TierTables`) for the next shards.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from solver.errors import ContractError, SolveError
from solver.expand import Moves, moves_of
from solver.full.retrograde import retrograde_arrays
from solver.game import BatchedRules, Game
from solver.store import (
    NodeShard,
    Shard,
    ShardTarget,
    ShardWriter,
    TierEdges,
    TierNodes,
    TierPart,
    TierRecord,
    TierValues,
)
from solver.tiers.combine import children_values
from solver.tiers.lookup import SortedKeys
from solver.values import DEPTH_INF, NEG_INF, POS_INF


@dataclass
class SolvedTier:
    """A solved tier held for its parents: keys sorted, their ids, their values (in id
    order: ``values.low[id - first_id]``)."""

    record: TierRecord
    keys: npt.NDArray[np.int64]
    ids: npt.NDArray[np.int64] | None
    """``None``: the keys are in id order already (a compact variant's tiers are), the
    id of ``keys[i]`` being ``first_id + i`` (8 bytes a position less held)."""
    values: TierValues
    index: SortedKeys = field(init=False, repr=False)
    """:attr:`keys` with their directory, to find children by."""

    def __post_init__(self) -> None:
        self.index = SortedKeys(self.keys)


@dataclass(frozen=True)
class ShardResult:
    """What running a shard did."""

    step: str
    """``discover`` (a :class:`~solver.store.NodeShard` written), ``solve`` (a
    :class:`~solver.store.Shard` written) or ``values`` (a shard solved on a Dask
    worker, its values on their way to the solving process before its rows are
    written: :func:`values_of`)."""
    tier: int
    first_id: int
    nodes: int
    edges: int | None
    """Edges written (``None``: the shard was written already, and nothing was)."""
    expanded: int
    """Positions expanded."""
    seconds: float
    worker: str
    steps: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Seconds reading (the shard and any child tier not held yet), solving, writing."""
    keys: npt.NDArray[np.int64] | None = None
    """With ``keep``: the shard's positions' keys, in id order ..."""
    values: TierValues | None = None
    """... and their bounds and depths (the solving process's own units, for its cache)."""


class TierTables:
    """The solved tiers a process holds for the shards it runs, per database and
    variant (:attr:`ShardTarget.ident`): only the child tiers of the latest unit stay."""

    def __init__(self) -> None:
        self.tables: dict[tuple[str, int], SolvedTier] = {}

    def get(self, ident: str, writer: ShardWriter, record: TierRecord) -> SolvedTier:
        table = self.tables.get((ident, record.tier))
        if table is None or (table.record.first_id, table.record.nodes) != (
            record.first_id,
            record.nodes,
        ):
            nodes = writer.tier_nodes(record, written=True)
            table = sorted_tier(record, nodes.keys, writer.tier_values(record))
            self.tables[(ident, record.tier)] = table
        return table

    def put(self, ident: str, table: SolvedTier) -> None:
        self.tables[(ident, table.record.tier)] = table

    def keep(self, ident: str, tiers: set[int]) -> None:
        for key in [k for k in self.tables if k[0] != ident or k[1] not in tiers]:
            del self.tables[key]

    def clear(self) -> None:
        self.tables.clear()


TABLES = TierTables()
"""This process's solved tiers (a worker's, or the solving process's own)."""


def worker_name() -> str:
    """``host:pid`` of this process, as ``tier_shards.worker`` records it."""
    return f"{socket.gethostname()}:{os.getpid()}"


Unit = Shard | NodeShard
"""A unit of work: a shard of a tier to solve, or a discovered tier's positions to write."""


def write_nodes_part(target: ShardTarget, game: Game, shard: NodeShard) -> ShardResult:
    """A discovery unit on a Dask worker: write *shard*'s positions through the run's
    database, opened by *target*."""
    return write_node_shard(game, target.open(), shard, worker=worker_name())


@dataclass(frozen=True)
class SolvedShard:
    """A shard solved and not yet written (:func:`solve_part`): what :func:`write_part`
    writes, kept by the Dask worker that solved it until then."""

    game: Game
    shard: Shard
    part: TierPart
    keys: npt.NDArray[np.int64]
    """The shard's positions' keys, in id order ..."""
    values: TierValues
    """... and their bounds and depths."""
    spent: float
    """Seconds spent reading and solving (the unit's time before writing)."""
    steps: tuple[float, float]
    """Of which reading, solving."""
    worker: str


def solve_part(
    target: ShardTarget,
    game: Game,
    shard: Shard,
    children: Sequence[TierRecord],
    tables: Sequence[SolvedTier] = (),
) -> SolvedShard:
    """The first half of a shard's unit on a Dask worker: solve it (the child tiers from
    *tables* or the database), write nothing. Its values go to the solving process
    (:func:`values_of`) as soon as they are known, so that the parent tier's units can
    start while this shard's rows are still being written (:func:`write_part`)."""
    writer = target.open()
    for table in tables:
        TABLES.put(target.ident, table)
    return _solve(game, writer, target.ident, shard, children)


def _solve(
    game: Game, writer: ShardWriter, ident: str, shard: Shard, children: Sequence[TierRecord]
) -> SolvedShard:
    """Solve *shard*, its child tiers being *children* (solved, written): from this
    process's :data:`TABLES`, else read through *writer*.

    :raises ContractError: if a move of a tier solved in shards stays within it.
    :raises SolveError: if a child is not where the tiers say it is.
    """
    started = time.monotonic()
    record = shard.record
    TABLES.keep(ident, {c.tier for c in children})
    found = [TABLES.get(ident, writer, c) for c in children]
    nodes = writer.tier_nodes(record, shard.lo, shard.hi)
    read = time.monotonic()
    if shard.whole:
        own = sorted_tier(record, nodes.keys, _start_values(nodes))
        part, values = _solve_whole(game, record, nodes, own, found)
    else:
        part, values = _solve_range(game, shard, nodes, found)
    done = time.monotonic()
    return SolvedShard(
        game,
        shard,
        part,
        nodes.keys,
        values,
        done - started,
        (read - started, done - read),
        worker_name(),
    )


def values_of(solved: SolvedShard) -> ShardResult:
    """What the solving process needs of a solved shard at once: its values (step
    ``values``: nothing written yet)."""
    shard = solved.shard
    return ShardResult(
        "values",
        shard.record.tier,
        shard.first_id,
        shard.nodes,
        None,
        0,
        solved.spent,
        solved.worker,
        (*solved.steps, 0.0),
        solved.keys,
        solved.values,
    )


def write_part(target: ShardTarget, solved: SolvedShard) -> ShardResult:
    """The second half of a shard's unit: write what :func:`solve_part` found (nothing if
    the shard is written already)."""
    return _write(target.open(), solved, keep=False)


def _write(writer: ShardWriter, solved: SolvedShard, *, keep: bool) -> ShardResult:
    """Write *solved* through *writer*; the unit's result (with *keep*, the shard's
    values too)."""
    shard = solved.shard
    started = time.monotonic()
    worker = worker_name()
    edges = writer.write_shard(solved.game, shard, solved.part, worker, started - solved.spent)
    done = time.monotonic()
    return ShardResult(
        "solve",
        shard.record.tier,
        shard.first_id,
        shard.nodes,
        edges,
        solved.part.expanded,
        solved.spent + done - started,
        worker,
        (*solved.steps, done - started) if keep else (0.0, 0.0, done - started),
        solved.keys if keep else None,
        solved.values if keep else None,
    )


def write_node_shard(
    game: Game, writer: ShardWriter, shard: NodeShard, *, worker: str
) -> ShardResult:
    """Write the positions of *shard* of a discovered tier."""
    started = time.monotonic()
    written = writer.write_nodes(shard, game, worker, started)
    done = time.monotonic()
    return ShardResult(
        "discover",
        shard.tier,
        shard.first_id,
        shard.count,
        0 if written else None,
        0,
        done - started,
        worker,
        (0.0, 0.0, done - started),
    )


def solve_shard(
    game: Game,
    writer: ShardWriter,
    ident: str,
    shard: Shard,
    children: Sequence[TierRecord],
) -> ShardResult:
    """Solve and write *shard* in this process (its child tiers being *children*),
    the result carrying its values (for this process's :data:`TABLES`).

    :raises ContractError: if a move of a tier solved in shards stays within it.
    :raises SolveError: if a child is not where the tiers say it is.
    """
    return _write(writer, _solve(game, writer, ident, shard, children), keep=True)


def _start_values(nodes: TierNodes) -> TierValues:
    """Terminal positions exact, the others unknown."""
    terminal = nodes.terminal
    return TierValues(
        np.where(terminal, nodes.value, NEG_INF),
        np.where(terminal, nodes.value, POS_INF),
        np.where(terminal, 0, DEPTH_INF).astype(np.int32),
        np.where(terminal, 0, DEPTH_INF).astype(np.int32),
    )


def _solve_range(
    game: Game, shard: Shard, nodes: TierNodes, tables: list[SolvedTier]
) -> tuple[TierPart, TierValues]:
    """A shard of a tier whose moves all leave it: each position's value from its
    children's, all in solved child tiers (:func:`~solver.tiers.combine.children_values`:
    no fixpoint needed)."""
    record = shard.record
    values = _start_values(nodes)
    at = np.flatnonzero(~nodes.terminal)
    moves, child_ids = _children(game, record, nodes.keys[at], None, tables)
    found = children_values(moves.counts, *values_columns(_child_values(child_ids, tables)))
    for column, new in zip(values_columns(values), values_columns(found), strict=True):
        column[at] = new
    return _part(record, shard.lo, nodes, values, at, moves.counts, child_ids, moves), values


def _solve_whole(
    game: Game, record: TierRecord, nodes: TierNodes, own: SolvedTier, tables: list[SolvedTier]
) -> tuple[TierPart, TierValues]:
    """A whole tier: its positions 0..n-1 locally, then the distinct children outside
    it, fixed with their values like its terminal positions."""
    values = own.values
    n = int(nodes.keys.size)
    live = np.flatnonzero(~nodes.terminal)
    moves: Moves | None
    if live.size:
        moves, child_ids = _children(game, record, nodes.keys[live], own, tables)
        counts = moves.counts
    else:
        moves, child_ids, counts = None, np.zeros(0, np.int64), np.zeros(0, np.int64)
    inside = (child_ids >= record.first_id) & (child_ids < record.first_id + n)
    outside = np.unique(child_ids[~inside])
    local_child = np.where(
        inside, child_ids - record.first_id, n + np.searchsorted(outside, child_ids)
    )
    child_count = np.zeros(n + outside.size, dtype=np.int32)
    child_count[live] = counts
    out = _child_values(outside, tables)
    term = np.flatnonzero(nodes.terminal)
    found = retrograde_arrays(
        n + int(outside.size),
        np.repeat(live, counts),
        local_child,
        child_count,
        np.concatenate([term, n + np.arange(outside.size)]),
        np.concatenate([values.low[term], out.low]),
        np.concatenate([values.high[term], out.high]),
        np.concatenate([values.depth_low[term], out.depth_low]),
        np.concatenate([values.depth_high[term], out.depth_high]),
    )
    del local_child, child_count
    solved: tuple[np.ndarray, ...] = found
    for column, new in zip(values_columns(values), solved, strict=True):
        column[live] = new[live]
    return _part(record, 0, nodes, values, live, counts, child_ids, moves), values


NOT_DETERMINISTIC = (
    "the game's moves are not deterministic (children() answers differently from call "
    "to call, or canonical() or tier() does); negagraph check tests this"
)
"""The likely cause of a move that a tier's discovery did not see: the game's rules, not
the database (which a tiered solve alone writes, each tier whole or not at all)."""


def _children(
    game: Game,
    record: TierRecord,
    keys: npt.NDArray[np.int64],
    own: SolvedTier | None,
    tables: list[SolvedTier],
) -> tuple[Moves, npt.NDArray[np.int64]]:
    """The moves of the positions *keys* of tier *record*, and each child's node id
    (looked up in the tier itself, *own*, or in its solved child tiers *tables*)."""
    moves = expand_keys(game, keys)
    if own is None and len(tables) == 1:  # one child tier (connect-four): no tier asked
        ids = _find(tables[0], moves.keys)
        if ids is not None:
            return moves, ids
    child_tiers = tiers_of(game, moves.keys)
    child_ids = np.empty(moves.keys.size, dtype=np.int64)
    by_tier = {t.record.tier: t for t in tables}
    for child in np.unique(child_tiers).tolist():
        mask = child_tiers == child
        if child == record.tier:
            if own is None:
                raise ContractError(
                    f"{game.name}: a move of tier {record.tier} stays within it, which the "
                    f"tier's discovery did not see: {NOT_DETERMINISTIC}"
                )
            table = own
        elif child in by_tier:
            table = by_tier[child]
        else:  # discovery routed every move it saw to a declared, stored tier
            raise ContractError(
                f"{game.name}: a move of tier {record.tier} leads to tier {child}, which the "
                f"tier's discovery did not see: {NOT_DETERMINISTIC}"
            )
        child_ids[mask] = lookup(game, table, moves.keys[mask])
    return moves, child_ids


def expand_keys(game: Game, keys: npt.NDArray[np.int64]) -> Moves:
    """The moves of the positions *keys* (canonical children when the game uses
    symmetry)."""
    moves = moves_of(game, keys, game.canonical if game.uses_symmetry else None)
    if moves is None:
        raise SolveError(
            f"{game.name}: a position's key does not fit 64 bits, which a tiered "
            "solve needs: solve it with --no-tiers"
        )
    return moves


def tiers_of(game: Game, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The tier of every key (the game's batched hook when it offers one)."""
    found = game.tiers_batch(keys) if isinstance(game, BatchedRules) else None
    if found is not None:
        return np.asarray(found, dtype=np.int64)
    tier = game.tier  # type: ignore[attr-defined]
    return np.fromiter(map(tier, keys.tolist()), dtype=np.int64, count=keys.size)


def _find(table: SolvedTier, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
    """The node ids of *keys* in *table*'s tier (``None`` unless all are there)."""
    pos = table.index.find(keys)
    if pos is None:
        return None
    if table.ids is None:
        pos += table.record.first_id
        return pos
    found: npt.NDArray[np.int64] = table.ids[pos]
    return found


def lookup(game: Game, table: SolvedTier, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The node ids of *keys*, all positions of *table*'s tier."""
    ids = _find(table, keys)
    if ids is not None:
        return ids
    bad = keys
    if table.keys.size:
        pos = np.minimum(np.searchsorted(table.keys, keys), table.keys.size - 1)
        bad = keys[table.keys[pos] != keys]
    raise ContractError(
        f"{game.name}: a move leads to position {game.format(int(bad[0]))!r} of tier "
        f"{table.record.tier}, which the tier's discovery did not find: "
        f"{NOT_DETERMINISTIC}"
    )


def _child_values(ids: npt.NDArray[np.int64], tables: list[SolvedTier]) -> TierValues:
    """Bounds and depths of the solved nodes *ids* (in any order, repeats allowed), all
    in *tables*' tiers."""
    if len(tables) == 1:
        table = tables[0]
        at = ids - table.record.first_id  # the tier's values are in id order
        return TierValues(*(column[at] for column in values_columns(table.values)))
    found = _unknown(ids.size)
    for table in tables:
        record = table.record
        inside = (ids >= record.first_id) & (ids < record.first_id + record.nodes)
        at = ids[inside] - record.first_id
        for column, source in zip(values_columns(found), values_columns(table.values), strict=True):
            column[inside] = source[at]
    return found


def _unknown(n: int) -> TierValues:
    """*n* positions' values, all unknown."""
    return TierValues(
        np.full(n, NEG_INF, np.int64),
        np.full(n, POS_INF, np.int64),
        np.full(n, DEPTH_INF, np.int32),
        np.full(n, DEPTH_INF, np.int32),
    )


def values_columns(values: TierValues) -> tuple[np.ndarray, ...]:
    """The four columns of *values* (arrays: writable in place)."""
    return values.low, values.high, values.depth_low, values.depth_high


def _part(
    record: TierRecord,
    lo: int,
    nodes: TierNodes,
    values: TierValues,
    parents: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    child_ids: npt.NDArray[np.int64],
    moves: Moves | None,
) -> TierPart:
    """The rows of the positions *nodes* of tier *record* (from offset *lo* on, their
    values *values*): them, and the moves of those at *parents* (offsets in *nodes*)."""
    starts = np.cumsum(counts) - counts
    edges = TierEdges(
        parent=np.repeat(parents, counts) + record.first_id + lo,
        child=child_ids,
        move_order=(np.arange(child_ids.size) - np.repeat(starts, counts)).astype(np.int32),
        move=(moves.labels if moves is not None else np.zeros(0, np.int64)).astype(np.int32),
        names=list(moves.names) if moves is not None else [],
    )
    return TierPart(edges, lo, nodes, values)


def sorted_tier(record: TierRecord, keys: npt.NDArray[np.int64], values: TierValues) -> SolvedTier:
    """Tier *record* (positions *keys* in id order, values *values*) for lookups."""
    if bool(np.all(keys[1:] > keys[:-1])):  # sorted already: a compact variant's tier
        return SolvedTier(record, keys, None, values)
    order = np.argsort(keys, kind="stable")
    return SolvedTier(record, keys[order], order.astype(np.int64) + record.first_id, values)


def plan_shards(
    record: TierRecord, written: Sequence[tuple[int, int, int]], size: int, seq: int
) -> list[Shard]:
    """The shards of tier *record* still to solve: the gaps between the shards already
    *written* (``(offset, positions, edges)``), cut every *size* positions; a tier with
    moves within it (or not known not to have any) is one whole shard."""
    if record.inner_moves is not False:
        return [] if written else [Shard(record, 0, record.nodes, seq, whole=True)]
    done = [(lo, count) for lo, count, _ in written]
    return [Shard(record, lo, hi, seq, whole=False) for lo, hi in gaps(0, record.nodes, done, size)]


def gaps(
    start: int, stop: int, written: Sequence[tuple[int, int]], size: int
) -> list[tuple[int, int]]:
    """The ranges of *start* .. *stop* - 1 not in *written* (``(first, count)``,
    ascending), cut every *size*."""
    found: list[tuple[int, int]] = []
    at = start
    for lo, count in [*written, (stop, 0)]:
        lo = min(max(lo, start), stop)
        for first in range(at, lo, size):
            found.append((first, min(first + size, lo)))
        at = max(at, lo + count)
    return found


__all__ = [
    "TABLES",
    "ShardResult",
    "SolvedTier",
    "TierTables",
    "Unit",
    "expand_keys",
    "gaps",
    "lookup",
    "plan_shards",
    "write_nodes_part",
    "solve_part",
    "values_of",
    "write_part",
    "SolvedShard",
    "solve_shard",
    "write_node_shard",
    "sorted_tier",
    "tiers_of",
    "values_columns",
]
