"""The store interface the solver writes through, and the in-memory store.

A store keeps one graph per game variant. :func:`solver.negamax.solve` calls
:meth:`Store.open` once, :meth:`Store.commit` after every batch (one transaction each: a
:class:`Batch`, the graph's pending new nodes, new edges and changed nodes, plus the
run's progress) and :meth:`Store.close` at the end, whatever the outcome.
``db.store.SqlStore`` implements it with SQLAlchemy; :class:`MemoryStore` keeps graphs
in memory so that a budgeted solve can be continued by calling
:func:`~solver.negamax.solve` again with the same store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args, runtime_checkable

import numpy as np
import numpy.typing as npt

from solver.game import Game, MoveLabel, PositionKey, params_text
from solver.graph import Graph

StoredNode = tuple[int, PositionKey, tuple[int, int, int, int, int, int], int, int]
"""A stored node as :meth:`NodeSource.nodes` gives it: ``(id, key, (low, high, low_final,
high_final, depth_low, depth_high), state, dist)``, values as the graph holds them."""


@runtime_checkable
class NodeSource(Protocol):
    """What a store gives a bounded-memory run: reads of its committed graph."""

    def find_nodes(self, keys: Sequence[PositionKey]) -> list[StoredNode]:
        """The stored nodes of those of *keys* that are stored, by id."""
        ...

    def children(self, parent: int) -> list[tuple[MoveLabel, StoredNode]]:
        """Stored node *parent*'s edges in move order: ``(move, child)``."""
        ...

    def parent_nodes(self, child: int) -> list[StoredNode]:
        """The stored parents of stored node *child*, once each, by id."""
        ...

    def stored_keys(self, count: int) -> Iterator[list[PositionKey]]:
        """The keys of stored nodes ``0 .. count - 1``, in chunks."""
        ...

    def limit_cache(self, nbytes: int) -> None:
        """Hold what the store caches in this process (SQLite's page cache) to *nbytes*,
        and let what it writes before copying it into place (SQLite's write-ahead log)
        grow as large."""
        ...

    def swap(self, old: Graph, new: Graph) -> None:
        """Commit *new* from now on instead of *old* (everything of *old* committed)."""
        ...

    def in_flight(self, most: int) -> npt.NDArray[np.int64] | None:
        """The stored ids of the nodes whose rows a batch still being written holds, if
        there are at most *most* (``None``: no batch is being written, or more: then
        what the run reads next waits for the batch). An eviction keeps them resident,
        with their children when they are expanded, so that what the run reads back
        does not wait for that batch (``db.store.SqlStore.commit``)."""
        ...

    def load_all(self, old: Graph) -> Graph:
        """The whole committed graph, in place of *old* (see :meth:`swap`)."""
        ...


@dataclass(frozen=True)
class RunOptions:
    """What a solve run was asked to do (recorded by persistent stores)."""

    root: PositionKey
    """The root position's key."""
    full: bool
    """Tablebase mode: expand everything reachable."""
    max_expansions: int | None
    """Expansion budget of this run, if any."""
    max_seconds: float | None
    """Time budget of this run, if any."""
    tiered: bool = False
    """A tiered full solve (:mod:`solver.tiers.solve`): the store does not load the graph; the
    run reads and writes it a tier at a time through :class:`TierStore`."""
    layout: str | None = None
    """A tiered run's storage: ``"compact"`` asks a new variant for the compact layout
    (values by key, no graph); ``None`` or ``"graph"``: the variant's own (a graph if
    new)."""
    lazy_above: int | None = None
    """A run that evicts (:mod:`solver.partial.cache`) and keeps depths exact, with this resident
    budget: a store that can opens a stored graph of more nodes with only its root
    resident (a mapped graph), when the last run closed cleanly; others load it whole."""


RunStatus = Literal["running", "complete", "budget", "stopped", "failed"]
"""How a run stands or ended: ``budget`` when a budget ran out, ``stopped`` on Ctrl-C or
a stop request, ``failed`` on an error."""
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)


@dataclass(frozen=True)
class Progress:
    """A snapshot of a run, passed to :meth:`Store.commit` and to progress callbacks."""

    status: RunStatus
    expansions: int
    """Expansions done by this run."""
    nodes: int
    edges: int
    nodes_added: int
    """Nodes created by this run."""
    edges_added: int
    frontier: int
    """Unexpanded, non-terminal nodes in the graph."""
    root_low: int
    root_high: int
    root_low_final: bool
    root_high_final: bool
    seconds: float
    """Wall time of this run so far."""
    rss: int = 0
    """The process's resident set size (bytes) when the snapshot was taken."""
    memory_limit: int | None = None
    """The run's memory limit (bytes), if it has one."""
    resident_nodes: int = 0
    """Nodes of the graph held in RAM (all of them: the whole graph is resident)."""
    tiers_done: int = 0
    """Tiered full solves: tiers discovered (while discovering) or solved (while solving)."""
    tiers_total: int = 0
    """Tiered full solves: the tiers reachable from the root (0: not a tiered solve)."""
    units_done: int = 0
    """Tiered full solves: units of work (a tier, or a shard of one) done in the current
    sweep (discovery: tiers discovered; solving: tiers and shards solved)."""
    units_total: int = 0
    """Tiered full solves: the units of the current sweep known so far."""
    workers: int = 0
    """Tiered full solves: the processes solving units (1: the run's own)."""
    eta: float | None = None
    """Tiered full solves: seconds the run still needs, estimated once the remaining work
    is known (while solving tiers)."""
    phase: str = "expanding"
    """The step the run is in: ``expanding`` (the figures are this batch's), or a long
    step that reports nothing until it ends: ``committing N nodes``, ``retrograde``,
    ``finality``, ``loading edges``, ``closing`` (the figures are then the latest
    batch's). Stores ignore it."""


BatchMode = Literal["plain", "mapped", "chance"]
"""Which rows a batch holds (:class:`Batch`)."""


@dataclass(frozen=True)
class Batch:
    """What one :meth:`Store.commit` holds, as the solver tells it: the graph whose
    pending rows it writes, and which kind of batch it is, so that a store writes it
    without asking the graph which mode the run is in.

    >>> from solver.graph import Graph
    >>> Batch.of(Graph())
    Batch(mode='plain', settled=True, rewrite=False)
    """

    graph: Graph = field(repr=False)
    """The graph whose pending rows (:meth:`Graph.pending`) the commit writes, and then
    marks committed."""
    mode: BatchMode
    """``plain``: every node is resident and node ids are the stored ids (the rows are
    :meth:`Graph.pending`'s); ``mapped``: the graph holds part of the stored one
    (:attr:`Graph.gid`), so rows go by stored id; ``chance``: a game of chance's, with its
    own rows besides (:attr:`Graph.chance`)."""
    settled: bool
    """The graph is settled once the batch is committed (:attr:`Graph.settled`: a run's
    closing pass); every other batch leaves it unsettled."""
    rewrite: bool
    """The batch rewrites every committed node (:meth:`Graph.mark_all_dirty`)."""

    @classmethod
    def of(cls, graph: Graph) -> Batch:
        """The batch of what *graph* holds uncommitted, as its run left it."""
        mode: BatchMode = "plain"
        if graph.chance is not None:
            assert not graph.mapped  # games of chance never evict
            mode = "chance"
        elif graph.mapped:
            mode = "mapped"
        return cls(graph, mode, settled=graph.settled, rewrite=graph.all_dirty)

    @property
    def running(self) -> bool:
        """A batch of a search under way: not a closing pass's, not one that rewrites
        every node, not a game of chance's (a store may write it while the run goes on)."""
        return self.mode != "chance" and not self.settled and not self.rewrite


class Store(Protocol):
    """Where the solver's graph lives between and during runs."""

    def open(self, game: Game, run: RunOptions) -> Graph:
        """The stored graph of *game*'s variant (empty if new), ready to be extended.

        A persistent store also takes the variant's writer lock and records the run.

        :raises SolveError: if the variant is locked by another writer, or the store holds
            the game under another rules version.
        """
        ...

    def commit(self, batch: Batch, progress: Progress) -> None:
        """Durably write *batch* (``batch.graph.pending()``) and *progress* in one
        transaction, then call ``batch.graph.mark_committed()``."""
        ...

    def close(self, progress: Progress) -> None:
        """Record the run's final status and release the writer lock."""
        ...


@dataclass(frozen=True)
class TierRecord:
    """A stored tier of a tiered full solve (a ``tiers`` row: ``docs/design.md`` §5)."""

    tier: int
    ordinal: int
    """Its place in the discovery order (parents first), from 0."""
    first_id: int
    """Its positions are nodes ``first_id .. first_id + nodes - 1`` (-1 until every tier
    is discovered: ids are given in solve order, :attr:`numbered`)."""
    nodes: int
    edges: int | None
    """Its positions' moves, once solved (``None`` before)."""
    inner_moves: bool | None = None
    """Whether a move stays within the tier (``None``: not known, as for tiers
    discovered before the database recorded it): such a tier is solved whole."""
    first_offset: int | None = None
    """Its first position's place among the positions in discovery order (``None``: the
    same as :attr:`first_id`, as in tiers numbered before ids were given in solve
    order)."""

    @property
    def solved(self) -> bool:
        return self.edges is not None

    @property
    def numbered(self) -> bool:
        """Whether its node ids are given."""
        return self.first_id >= 0

    @property
    def offset(self) -> int:
        """Its first position's place in discovery order (its discovered positions'
        and discovery units' key)."""
        return self.first_id if self.first_offset is None else self.first_offset

    @property
    def ids(self) -> range:
        return range(self.first_id, self.first_id + self.nodes)


@dataclass(frozen=True)
class TierNodes:
    """A stored tier's positions in id order (64-bit keys)."""

    keys: npt.NDArray[np.int64]
    dist: npt.NDArray[np.int32]
    terminal: npt.NDArray[np.bool_]
    value: npt.NDArray[np.int64]
    """Terminal positions' values (0 elsewhere)."""


@dataclass(frozen=True)
class TierValues:
    """A solved tier's bounds and depths in id order (the sentinels of
    :mod:`solver.values` for the infinities)."""

    low: npt.NDArray[np.int64]
    high: npt.NDArray[np.int64]
    depth_low: npt.NDArray[np.int32]
    depth_high: npt.NDArray[np.int32]


@dataclass(frozen=True)
class DiskRoom:
    """What a database takes on its disk and the room left beside it."""

    used: int
    """Bytes of the database (a SQLite file and its write-ahead log)."""
    free: int
    """Bytes free on its file system (for this user)."""
    where: str
    """The directory the database is in."""


@runtime_checkable
class TierStore(Protocol):
    """What a tiered full solve (:mod:`solver.tiers.solve`) needs of a store opened with
    :attr:`RunOptions.tiered`: each call that writes is one transaction (one commit of
    the variant), so a killed solve resumes from whole tiers."""

    def solved_without_tiers(self, game: Game) -> bool:
        """Whether *game*'s variant holds positions outside tiers (a partial solve, or a
        full solve without tiers); callable before :meth:`Store.open`."""
        ...

    def open(self, game: Game, run: RunOptions) -> Graph:
        """:meth:`Store.open`; with :attr:`RunOptions.tiered` the graph is not loaded."""
        ...

    def close(self, progress: Progress) -> None:
        """:meth:`Store.close`."""
        ...

    def tier_records(self) -> list[TierRecord]:
        """The variant's stored tiers, in discovery order."""
        ...

    def keyed_tiers(self) -> bool:
        """Whether the open run stores each tier's positions in key order (the compact
        layout, which then appends every shard's rows): the solve sorts a discovered
        tier's positions by key before writing them."""
        ...

    def stored_nodes(self) -> int:
        """The variant's stored nodes (tiers' or not)."""
        ...

    def write_nodes(self, shard: NodeShard, game: Game, worker: str, started: float) -> bool:
        """Store the positions of *shard* of a discovered tier until their tier is solved
        (keys, distances, terminal values: no node rows yet), with its ``tier_shards``
        row, in one transaction fenced by the run; ``False`` if they were stored
        already."""
        ...

    def written_nodes(self, from_id: int) -> list[tuple[int, int]]:
        """The discovered shards from node *from_id* on, of tiers not recorded yet:
        ``(first_id, positions)``, ascending."""
        ...

    def record_tier(
        self,
        tier: int,
        ordinal: int,
        first_offset: int,
        count: int,
        progress: Progress,
        *,
        inner_moves: bool,
        last: bool,
    ) -> TierRecord:
        """Record a discovered tier, whose positions (*first_offset* .. *first_offset* +
        *count* - 1 in discovery order) are all written (one commit); with *last* (the
        last tier of the order), the same commit numbers the tiers (:meth:`number_tiers`)."""
        ...

    def number_tiers(self, progress: Progress) -> list[TierRecord]:
        """Give the node ids of the tiers not numbered yet, every tier being recorded
        (one commit; :meth:`record_tier` of the last tier does it in its own): in solve
        order, the reverse of discovery, the tier solved first from 0, so that each
        solved tier's rows go after those of the tiers solved before it. The records,
        numbered."""
        ...

    def tier_nodes(
        self, record: TierRecord, lo: int = 0, hi: int | None = None, *, written: bool = False
    ) -> TierNodes:
        """A stored tier's positions (those at offsets *lo* .. *hi* - 1): as discovered
        until the tier is solved; with *written*, from the node rows its solved shards
        wrote (all of them must be)."""
        ...

    def tier_values(self, record: TierRecord) -> TierValues:
        """A solved tier's bounds and depths."""
        ...

    def write_shard(
        self, game: Game, shard: Shard, part: TierPart, worker: str, started: float
    ) -> int | None:
        """Write a solved shard's positions (every bound final; those not terminal
        expanded) and moves, and its ``tier_shards`` row (with the seconds
        since the unit *started*, :func:`time.monotonic`), in one transaction fenced by
        the run; the edges written, or ``None`` if the shard was
        written already (by an earlier run, or by another process running it too)."""
        ...

    def written_shards(self, record: TierRecord) -> list[tuple[int, int, int]]:
        """The shards of tier *record* written so far: ``(first offset, positions,
        edges)``, ascending."""
        ...

    def next_commit(self) -> int:
        """The number the variant's next commit will have (a tier's shards record it as
        their positions' ``expanded_in``)."""
        ...

    def finish_tier(self, record: TierRecord, progress: Progress, *, last: bool) -> TierRecord:
        """Mark tier *record*, whose shards are all written, solved (one commit, the
        number :meth:`next_commit` gave); with *last*, the variant's graph is complete and
        settled."""
        ...

    def report(self, progress: Progress) -> None:
        """Record *progress* in the run's row between commits (the units done within a
        tier, for ``status`` and the API)."""
        ...

    def shard_target(self) -> ShardTarget:
        """What another process needs to run this run's shards (picklable)."""
        ...

    def disk_room(self) -> DiskRoom | None:
        """The database's bytes on its disk and the room left there, or ``None`` where
        the store cannot tell (a server's disk, a database in memory)."""
        ...


@dataclass(frozen=True)
class Shard:
    """A unit of a tier's solve: the positions at offsets :attr:`lo` .. :attr:`hi` - 1
    of tier :attr:`record` (all of them for a tier solved whole)."""

    record: TierRecord
    lo: int
    hi: int
    seq: int
    """The commit that will mark the tier solved (its positions' ``expanded_in``)."""
    whole: bool
    """The whole tier, moves within it included (else every move leaves the tier)."""

    @property
    def first_id(self) -> int:
        return self.record.first_id + self.lo

    @property
    def nodes(self) -> int:
        return self.hi - self.lo


@dataclass(frozen=True)
class NodeShard:
    """A unit of a tier's discovery: storing its positions :attr:`nodes`, the first at
    place :attr:`first_id` in discovery order (their node ids come later, in solve order:
    :meth:`TierStore.number_tiers`)."""

    tier: int
    first_id: int
    nodes: TierNodes

    @property
    def count(self) -> int:
        return int(self.nodes.keys.size)


class ShardWriter(Protocol):
    """What a process running shards needs of the database (:class:`TierStore` has it
    too: the solving process runs shards itself)."""

    def write_nodes(self, shard: NodeShard, game: Game, worker: str, started: float) -> bool:
        """:meth:`TierStore.write_nodes`."""
        ...

    def tier_nodes(
        self, record: TierRecord, lo: int = 0, hi: int | None = None, *, written: bool = False
    ) -> TierNodes:
        """:meth:`TierStore.tier_nodes`."""
        ...

    def tier_values(self, record: TierRecord) -> TierValues:
        """:meth:`TierStore.tier_values`."""
        ...

    def write_shard(
        self, game: Game, shard: Shard, part: TierPart, worker: str, started: float
    ) -> int | None:
        """:meth:`TierStore.write_shard`."""
        ...


class ShardTarget(Protocol):
    """A picklable handle on a run's database, which a worker process opens."""

    @property
    def ident(self) -> str:
        """The database and variant (what a worker's cached tiers belong to)."""
        ...

    def open(self) -> ShardWriter:
        """A writer for this process (cached: one connection per process)."""
        ...


@dataclass(frozen=True)
class TierEdges:
    """A tier's moves, parent by parent (ascending ids) in move order."""

    parent: npt.NDArray[np.int64]
    child: npt.NDArray[np.int64]
    move_order: npt.NDArray[np.int32]
    move: npt.NDArray[np.int32]
    """Each move's label, as an index into :attr:`names`."""
    names: Sequence[str]
    """The labels in the game's notation."""


@dataclass(frozen=True)
class TierPart:
    """A solved shard's rows: its positions, their values and their moves."""

    edges: TierEdges
    lo: int
    """The positions' first offset in the tier."""
    nodes: TierNodes
    """The positions, in id order."""
    values: TierValues
    """Their bounds and depths (final), in the same order."""

    @property
    def expanded(self) -> int:
        """The positions expanded (those not terminal)."""
        return int(self.nodes.terminal.size - np.count_nonzero(self.nodes.terminal))


class MemoryStore:
    """Keeps each variant's graph in memory; solving again continues where it stopped."""

    def __init__(self) -> None:
        self.graphs: dict[tuple[str, int, str], Graph] = {}
        self.runs: list[Progress] = []

    def open(self, game: Game, run: RunOptions) -> Graph:
        ident = (game.name, game.version, params_text(game.params))
        graph = self.graphs.get(ident)
        if graph is None:
            graph = self.graphs[ident] = Graph()
        return graph

    def commit(self, batch: Batch, progress: Progress) -> None:
        batch.graph.mark_committed()

    def close(self, progress: Progress) -> None:
        self.runs.append(progress)

    def __repr__(self) -> str:
        return f"<MemoryStore variants={len(self.graphs)}>"
