"""The SQL store the solver writes through: :class:`SqlStore` (SQLite or PostgreSQL).

One :class:`SqlStore` serves one solve run: :meth:`~SqlStore.open` finds or creates the
variant, takes its writer lock, records a ``solve_runs`` row and loads the stored graph;
:meth:`~SqlStore.commit` writes one batch in one transaction; :meth:`~SqlStore.close`
records the outcome and releases the lock. A crash (even ``kill -9``) loses at most the
batch in flight: every batch is a single transaction, so readers and the next run see
whole batches only.

The writer lock (one writer per variant: an advisory lock on PostgreSQL, a lease row on
SQLite) is :mod:`db.lock`; every commit is *fenced* by it
(:meth:`db.store.writer.Writer.fence`). What differs between the two engines (the
writer's connection and lock, how a batch is written, how a graph is read) is a backend
(:mod:`db.backends`); the rows themselves are made and read by :mod:`db.rows`.

:class:`SqlStore` is a facade over one part per thing it serves, all sharing the run's
:class:`~db.store.writer.Writer`: opening and closing a run (:mod:`db.store.opening`,
:mod:`db.store.closing`), the batch commit (:mod:`db.store.commit`, with a game of
chance's rows, :mod:`db.store.chance_rows`, and the thread that writes behind,
:mod:`db.store.behind`), a tiered solve's reads and writes (:mod:`db.store.tiers`) and a
bounded-memory run's reads of evicted nodes (:mod:`db.store.nodes`).

Full solves
-----------
A full solve writes each node twice: when it is discovered (its key, distance and, for a
terminal position, its exact value) and once more at its last commit, with the bounds,
flags and depths of the retrograde pass. Expanding a node does not rewrite its row: its
edges record the expansion, and the loader reads a node with stored edges as expanded
(marking it changed, so the next run's first commit says so). A resumed full solve loads
the nodes and each node's number of edges only; the run that finishes the expansion loads
the edges, once, for the retrograde pass (:meth:`~solver.graph.Graph.require_edges`).
On SQLite files, a run that ends cleanly before the solve is complete leaves its graph
in a resume file for the next one, which loads that instead of the tables once it has
checked that it matches them (:mod:`db.backends.sqlite.resume`).

Settled graphs
--------------
``variants.settled`` is :attr:`~solver.graph.Graph.settled` as committed: every batch
writes it false, a run's closing pass (depths, exact finality) true, in the batch's own
transaction. A run that died between its last batch and its closing pass leaves it false,
and the next run finishes the pass before it reports the solve complete.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, select

from db.backends import backend_for
from db.backends.base import Backend
from db.errors import RulesVersionError
from db.lock import LEASE_TIMEOUT, LOCK_WAIT
from db.migrate import require_head
from db.models import Variant
from db.session import safe_url, sqlite_file, translate_errors
from db.shards import SqlShardTarget
from db.store import closing
from db.store.commit import commit_batch
from db.store.nodes import NodeReads
from db.store.opening import open_run, settled_of
from db.store.tiers import TierWrites
from db.store.writer import Writer
from solver.game import Game, MoveLabel, PositionKey, params_text
from solver.graph import Graph
from solver.store import (
    Batch,
    DiskRoom,
    NodeShard,
    Progress,
    RunOptions,
    RunStatus,
    Shard,
    StoredNode,
    TierNodes,
    TierPart,
    TierRecord,
    TierValues,
)


class SqlStore:
    """A :class:`~solver.store.Store` in a SQL database (see the module docs for locking),
    also a :class:`~solver.store.TierStore` and a :class:`solver.store.NodeSource`.

    >>> from db.session import make_engine
    >>> store = SqlStore(make_engine("sqlite:///solved.db"))  # doctest: +SKIP
    >>> solve(get_game("tic-tac-toe"), full=True, store=store)  # doctest: +SKIP

    :param engine: an engine from :func:`db.session.make_engine`: at the schema head, or
        empty (the schema is then created, as ``negagraph solve`` does).
    :param lease_timeout: seconds without a heartbeat after which a SQLite lease taken on
        another host counts as abandoned.
    :param lock_wait: PostgreSQL only: how long to wait for the server to free the
        advisory lock of a writer that died on this host (it notices within moments).
    :param check_foreign_keys: enforce the foreign keys on the writer's own connection
        too. Off by default: the store only writes nodes of its own variant and edges
        from nodes it has written in the same or an earlier batch, and the checks cost
        about a third of the insert speed on SQLite, more than a third of a full solve's
        time on PostgreSQL. (Every other connection enforces them.) PostgreSQL skips
        them for the writer's batches through ``SET LOCAL session_replication_role =
        replica``, which takes a superuser or, from PostgreSQL 15, a role granted ``SET ON
        PARAMETER session_replication_role``; without that right the checks run.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        lease_timeout: float = LEASE_TIMEOUT,
        lock_wait: float = LOCK_WAIT,
        check_foreign_keys: bool = False,
    ) -> None:
        self.engine = engine
        self.lease_timeout = lease_timeout
        self.lock_wait = lock_wait
        self.check_foreign_keys = check_foreign_keys
        self.writer = Writer(engine, backend_for(engine, check_foreign_keys=check_foreign_keys))
        """The run's connection and state, which every part shares."""
        self.nodes = NodeReads(self.writer)
        """A bounded-memory run's reads (:class:`solver.store.NodeSource`)."""
        self.tiers = TierWrites(self.writer)
        """A tiered solve's reads and writes (:class:`solver.store.TierStore`)."""

    def __repr__(self) -> str:
        return repr(self.writer)

    @property
    def backend(self) -> Backend:
        """What differs between SQLite and PostgreSQL (:mod:`db.backends`)."""
        return self.writer.backend

    @property
    def variant_id(self) -> int | None:
        """The open variant's id (``None`` before :meth:`open`)."""
        return self.writer.variant_id

    @property
    def run_id(self) -> int | None:
        """The current run's ``solve_runs.id`` (``None`` when no run is open)."""
        return self.writer.run_id

    # -- the Store protocol -----------------------------------------------------------

    def open(self, game: Game, run: RunOptions) -> Graph:
        """Take *game*'s variant for writing, record the run and load the stored graph
        (:func:`db.store.opening.open_run`)."""
        return open_run(
            self.writer, game, run, lease_timeout=self.lease_timeout, lock_wait=self.lock_wait
        )

    def commit(self, batch: Batch, progress: Progress) -> None:
        """Write *batch* and *progress* in one transaction, then mark the graph committed
        (:func:`db.store.commit.commit_batch`: a running batch is written behind)."""
        commit_batch(self.writer, batch, progress)

    def close(self, progress: Progress) -> None:
        """Record the run's final status and release the writer lock (idempotent;
        :func:`db.store.closing.close`)."""
        closing.close(self.writer, progress)

    def abandon(self, status: RunStatus) -> None:
        """Record the run's end as *status* if it is still open, keeping the figures of
        its last commit, and release the lock: for a caller whose :func:`solve` was cut
        short (a second Ctrl-C can land anywhere, even between :meth:`open` and the
        solver's own clean-up). Does nothing once :meth:`close` has run."""
        closing.abandon(self.writer, status)

    # -- solver.store.NodeSource (db.store.nodes) --------------------------------------

    def find_nodes(self, keys: Sequence[PositionKey]) -> list[StoredNode]:
        return self.nodes.find_nodes(keys)

    def stored_keys(self, count: int) -> Iterator[list[PositionKey]]:
        return self.nodes.stored_keys(count)

    def children(self, parent: int) -> list[tuple[MoveLabel, StoredNode]]:
        return self.nodes.children(parent)

    def parent_nodes(self, child: int) -> list[StoredNode]:
        return self.nodes.parent_nodes(child)

    def limit_cache(self, nbytes: int) -> None:
        self.nodes.limit_cache(nbytes)

    def swap(self, old: Graph, new: Graph) -> None:
        self.nodes.swap(old, new)

    def in_flight(self, most: int) -> np.ndarray[Any, np.dtype[np.int64]] | None:
        return self.nodes.in_flight(most)

    def load_all(self, old: Graph) -> Graph:
        return self.nodes.load_all(old)

    # -- solver.store.TierStore (db.store.tiers) ---------------------------------------

    def solved_without_tiers(self, game: Game) -> bool:
        return self.tiers.solved_without_tiers(game)

    def tier_records(self) -> list[TierRecord]:
        return self.tiers.tier_records()

    def keyed_tiers(self) -> bool:
        return self.writer.compact

    def stored_nodes(self) -> int:
        return self.tiers.stored_nodes()

    def write_nodes(self, shard: NodeShard, game: Game, worker: str, started: float) -> bool:
        return self.tiers.write_nodes(shard, game, worker, started)

    def written_nodes(self, from_id: int) -> list[tuple[int, int]]:
        return self.tiers.written_nodes(from_id)

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
        return self.tiers.record_tier(
            tier, ordinal, first_offset, count, progress, inner_moves=inner_moves, last=last
        )

    def number_tiers(self, progress: Progress) -> list[TierRecord]:
        return self.tiers.number_tiers(progress)

    def tier_nodes(
        self, record: TierRecord, lo: int = 0, hi: int | None = None, *, written: bool = False
    ) -> TierNodes:
        return self.tiers.tier_nodes(record, lo, hi, written=written)

    def tier_values(self, record: TierRecord) -> TierValues:
        return self.tiers.tier_values(record)

    def write_shard(
        self, game: Game, shard: Shard, part: TierPart, worker: str, started: float
    ) -> int | None:
        return self.tiers.write_shard(game, shard, part, worker, started)

    def written_shards(self, record: TierRecord) -> list[tuple[int, int, int]]:
        return self.tiers.written_shards(record)

    def next_commit(self) -> int:
        return self.tiers.next_commit()

    def finish_tier(self, record: TierRecord, progress: Progress, *, last: bool) -> TierRecord:
        return self.tiers.finish_tier(record, progress, last=last)

    def report(self, progress: Progress) -> None:
        self.tiers.report(progress)

    def shard_target(self) -> SqlShardTarget:
        return self.tiers.shard_target()

    def disk_room(self) -> DiskRoom | None:
        path = sqlite_file(self.engine.url)
        if path is None:
            return None
        try:
            used = sum(f.stat().st_size for f in (path, Path(f"{path}-wal")) if f.exists())
            free = shutil.disk_usage(path.parent).free
        except OSError:  # a file system that tells nothing
            return None
        return DiskRoom(used, free, str(path.parent))


def load_graph(engine: Engine, game: Game) -> Graph:
    """A read-only snapshot of *game*'s stored graph (empty if the variant is not stored),
    without taking the writer lock: the latest committed batch, as a new run would see it.

    :raises RulesVersionError: if the variant is stored under another rules version.
    :raises SchemaError: if the database is not at the schema head.
    :raises DatabaseError: if the database cannot be used.
    """
    require_head(engine)
    params = params_text(game.params)
    with translate_errors(engine), engine.connect() as conn, conn.begin():
        row = conn.execute(
            select(Variant.id, Variant.rules_version).where(
                Variant.game == game.name, Variant.params == params
            )
        ).first()
        if row is None:
            return Graph()
        if row.rules_version != game.version:
            raise RulesVersionError.for_variant(game, row.rules_version, safe_url(engine))
        graph = backend_for(engine).load(conn, row.id)
        graph.settled = settled_of(conn, row.id)
        return graph


__all__ = ["SqlStore", "load_graph"]
