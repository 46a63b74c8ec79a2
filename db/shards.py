"""Writing the shards of a tiered solve (:mod:`solver.tiers.units`), from the solving process or
from another (a Dask worker): each shard's rows (a discovered tier's positions, or a
solved tier's moves and its positions' bounds and depths) and its ``tier_shards`` row
(migration 0009) in one transaction.

The transaction is *fenced* by the run that planned the shard, as the run's own commits
are (:mod:`db.lock`): it first touches the run's row ``WHERE status = 'running'``, so a
worker still busy with a run that has ended (stopped, killed and taken over) writes
nothing. A shard whose row exists is not written again, which makes running a unit twice
harmless: Dask runs a lost worker's units again, and a resumed solve skips the shards
written. On PostgreSQL two processes writing the same shard at once collide on the
rows' primary keys; the loser finds the winner's row and writes nothing. A shard's rows
are made before its transaction begins, so that SQLite writers, which queue for the
database's one write lock, hold it only to write.

:class:`SqlShardTarget` is what a worker is given: the database's URL (password
included: workers connect as the solving process does), the variant and the run; it
opens one connection per worker process and keeps it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection

from db import compact, rows
from db.backends import backend_for
from db.backends.base import Backend, driver
from db.errors import VariantLockedError
from db.models import SolveRun, Tier, TierShard, utcnow
from db.session import make_engine, safe_url, translate_errors
from solver.game import Game
from solver.store import NodeShard, Shard, TierNodes, TierPart, TierRecord, TierValues

log = logging.getLogger(__name__)

DISCOVER = "discover"
"""``tier_shards.step`` of a discovered tier's positions."""
SOLVE = "solve"
"""``tier_shards.step`` of a solved tier's moves and values."""


def write_shard(
    conn: Connection,
    backend: Backend,
    vid: int,
    run_id: int,
    game: Game,
    shard: Shard,
    part: TierPart,
    worker: str,
    started: float,
    *,
    layout_compact: bool = False,
) -> int | None:
    """Write solved *shard* (see the module docs): its positions' node rows, whole, and
    its moves (with *layout_compact*, its positions' rows of the compact layout); the
    edges it has, or ``None`` if it was written already.

    :raises VariantLockedError: if run *run_id* no longer holds the variant.
    """
    mark = (SOLVE, shard.record.tier, shard.first_id, shard.nodes, int(part.edges.child.size))
    if layout_compact:  # values by key: no node rows, no edges (db.compact)
        ordinal = shard.record.ordinal
        written = _write_marked(
            conn,
            vid,
            run_id,
            mark,
            lambda cursor: compact.write_rows(
                cursor, backend, vid, ordinal, part.nodes.keys, part.values
            ),
            worker,
            started,
        )
        return int(part.edges.child.size) if written else None
    # The rows are made ready before the transaction: SQLite writers queue for its lock.
    # The moves go chunk by chunk (SQLite binds each chunk into its scratch table before
    # making the next): a tier solved whole may have tens of millions (KQvKR: 42 M),
    # whose rows as Python objects at once took 4 GiB.
    first_id = shard.record.first_id + part.lo
    staged = backend.stage(
        conn,
        rows.tier_node_columns(game, vid, first_id, part.nodes, part.values, shard.seq),
        rows.tier_edge_columns(vid, part.edges),
        [],
    )
    written = _write_marked(
        conn,
        vid,
        run_id,
        mark,
        lambda cursor: backend.write_staged(cursor, vid, shard.seq, staged),
        worker,
        started,
    )
    return int(part.edges.child.size) if written else None


def write_nodes(
    conn: Connection,
    backend: Backend,
    vid: int,
    run_id: int,
    shard: NodeShard,
    worker: str,
    started: float,
) -> bool:
    """Store the positions of *shard* of a discovered tier (``discovered_positions`` rows,
    migration 0015: they become node rows when their tier is solved) with its
    ``tier_shards`` row; ``False`` if they were stored already."""
    mark = (DISCOVER, shard.tier, shard.first_id, shard.count, 0)
    return _write_marked(
        conn,
        vid,
        run_id,
        mark,
        lambda cursor: backend.write_table(
            cursor,
            "discovered_positions",
            rows.STAGE_COLUMNS,
            rows.staged_rows(vid, shard.first_id, shard.nodes),
        ),
        worker,
        started,
    )


def _write_marked(
    conn: Connection,
    vid: int,
    run_id: int,
    mark: tuple[str, int, int, int, int],
    write: Callable[[Any], None],
    worker: str,
    started: float,
) -> bool:
    """Run *write* (given the driver's cursor) and record *mark* (``step, tier,
    first_id, nodes, edges``) in ``tier_shards`` with the seconds since *started* (the
    unit's start, :func:`time.monotonic`), in one transaction fenced by run *run_id*;
    ``False`` (nothing written) if the mark is there already."""
    step, tier, first_id, count, edges = mark
    try:
        with conn.begin():
            fenced = conn.execute(
                update(SolveRun)
                .where(SolveRun.id == run_id, SolveRun.status == "running")
                .values(heartbeat_at=utcnow())
            )
            if fenced.rowcount != 1:
                raise VariantLockedError(
                    f"run {run_id} no longer holds the variant: the {step} shard of tier "
                    f"{tier} at node {first_id} was not written"
                )
            if _written(conn, vid, step, first_id):
                return False
            cursor = driver(conn).cursor()
            try:
                write(cursor)
            finally:
                cursor.close()
            conn.execute(
                insert(TierShard).values(
                    variant_id=vid,
                    step=step,
                    first_id=first_id,
                    tier=tier,
                    nodes=count,
                    edges=edges,
                    run_id=run_id,
                    worker=worker,
                    seconds=time.monotonic() - started,
                    written_at=utcnow(),
                )
            )
    except sa_exc.IntegrityError:
        # Another process wrote the same shard at the same time (PostgreSQL): its row
        # must be there now; if not, the collision was something else.
        with conn.begin():
            if _written(conn, vid, step, first_id):
                log.info("%s shard at node %d was written by another process", step, first_id)
                return False
        raise
    return True


def _written(conn: Connection, vid: int, step: str, first_id: int) -> bool:
    return (
        conn.execute(
            select(TierShard.nodes).where(
                TierShard.variant_id == vid,
                TierShard.step == step,
                TierShard.first_id == first_id,
            )
        ).first()
        is not None
    )


def written_shards(conn: Connection, vid: int, record: TierRecord) -> list[tuple[int, int, int]]:
    """The solved shards of tier *record*: ``(offset in the tier, positions, edges)``."""
    found = conn.execute(
        select(TierShard.first_id, TierShard.nodes, TierShard.edges)
        .where(TierShard.variant_id == vid, TierShard.step == SOLVE, TierShard.tier == record.tier)
        .order_by(TierShard.first_id)
    )
    return [(first - record.first_id, nodes, edges) for first, nodes, edges in found]


def written_nodes(conn: Connection, vid: int, from_id: int) -> list[tuple[int, int]]:
    """The discovered shards of tiers not recorded yet (from node *from_id* on):
    ``(first_id, positions)``, ascending."""
    found = conn.execute(
        select(TierShard.first_id, TierShard.nodes)
        .where(
            TierShard.variant_id == vid,
            TierShard.step == DISCOVER,
            TierShard.first_id >= from_id,
        )
        .order_by(TierShard.first_id)
    )
    return [(int(first), int(nodes)) for first, nodes in found]


def stored_figures(conn: Connection, vid: int) -> tuple[int, int]:
    """The nodes and edges tiered variant *vid* holds: by its tiers, and by the units
    written for tiers not yet recorded or solved (an interrupted run's), which are kept
    for the next run: what a tiered run's record says at its end."""
    recorded = conn.execute(
        select(func.coalesce(func.sum(Tier.nodes), 0)).where(Tier.variant_id == vid)
    ).one()
    nodes = int(recorded[0])
    nodes += int(
        conn.execute(
            select(func.coalesce(func.sum(TierShard.nodes), 0)).where(
                TierShard.variant_id == vid,
                TierShard.step == DISCOVER,
                TierShard.first_id >= nodes,
            )
        ).scalar_one()
    )
    solved = select(func.coalesce(func.sum(Tier.edges), 0)).where(
        Tier.variant_id == vid, Tier.solved_in.is_not(None)
    )
    unsolved = (
        select(func.coalesce(func.sum(TierShard.edges), 0))
        .join(Tier, (Tier.variant_id == TierShard.variant_id) & (Tier.tier == TierShard.tier))
        .where(TierShard.variant_id == vid, TierShard.step == SOLVE, Tier.solved_in.is_(None))
    )
    edges = int(conn.execute(solved).scalar_one() or 0) + int(
        conn.execute(unsolved).scalar_one() or 0
    )
    return nodes, edges


def read_tier_nodes(
    conn: Connection,
    backend: Backend,
    vid: int,
    record: TierRecord,
    lo: int,
    hi: int | None,
    *,
    written: bool = False,
    layout_compact: bool = False,
) -> TierNodes:
    """Tier *record*'s positions at offsets *lo* .. *hi* - 1, in id order: from its node
    rows (*layout_compact*: its compact table) once it is solved or (*written*) its
    shards are all written, else as discovered (``discovered_positions``, which its
    solve deletes)."""
    stop = record.nodes if hi is None else hi
    if layout_compact and (record.solved or written):
        with conn.begin():
            keys, values = compact.read_tier(conn, backend, vid, record.ordinal, record.nodes)
        nodes = compact.tier_nodes(keys, values)
        return TierNodes(*(column[lo:stop] for column in vars(nodes).values()))
    params = (vid, record.first_id + lo, record.first_id + stop)
    with conn.begin():
        if not (record.solved or written):
            return discovered_nodes(
                lambda sql, params: _fetched(backend, conn, sql, (vid, *params)),
                record.offset + lo,
                record.offset + stop,
            )
        arrays = backend.fetch_arrays(
            conn, rows.TIER_NODE_SQL, params, rows.TIER_NODE_ARRAYS, stop - lo + 1
        )
        if arrays is not None:
            return rows.tier_nodes_of(rows.tier_read(arrays, stop - lo, "positions"))
        return rows.tier_nodes(backend.fetch(conn, rows.TIER_NODE_SQL, params), stop - lo)


def discovered_nodes(
    query: Callable[[str, tuple[Any, ...]], list[Any]], first: int, last: int
) -> TierNodes:
    """The discovered positions (``discovered_positions``) at *first* .. *last* - 1 in
    discovery order, read by *query* (``sql, params -> rows``; the variant id goes before the
    params)."""
    (start,) = query(rows.STAGED_BEFORE_SQL, (first,))[0]
    found = query(rows.STAGED_SQL, (first if start is None else start, last))
    return rows.staged_nodes(found, first, last)


def _fetched(
    backend: Backend, conn: Connection, sql: str, params: tuple[Any, ...]
) -> list[tuple[Any, ...]]:
    return [row for chunk in backend.fetch(conn, sql, params) for row in chunk]


def read_tier_values(
    conn: Connection,
    backend: Backend,
    vid: int,
    record: TierRecord,
    *,
    layout_compact: bool = False,
) -> TierValues:
    """Solved tier *record*'s bounds and depths, in id order."""
    if layout_compact:
        with conn.begin():
            return compact.read_tier(conn, backend, vid, record.ordinal, record.nodes)[1]
    params = (vid, record.first_id, record.first_id + record.nodes)
    with conn.begin():
        arrays = backend.fetch_arrays(
            conn, rows.TIER_VALUE_SQL, params, rows.TIER_VALUE_ARRAYS, record.nodes + 1
        )
        if arrays is not None:
            return TierValues(*rows.tier_read(arrays, record.nodes, "values"))
        return rows.tier_values(backend.fetch(conn, rows.TIER_VALUE_SQL, params), record.nodes)


@dataclass(frozen=True)
class SqlShardTarget:
    """A run's database as a worker process opens it (picklable)."""

    url: str
    """The database URL, password included."""
    variant_id: int
    run_id: int

    @property
    def ident(self) -> str:
        # the run's: what a process holds of an earlier run is not taken for this one's
        return f"{safe_url(self.url)}#{self.variant_id}#{self.run_id}"

    def open(self) -> SqlShardWriter:
        key = (self.url, self.variant_id, self.run_id)
        writer = _WRITERS.get(key)
        if writer is None:
            for old in list(_WRITERS.values()):  # one run at a time per worker
                old.close()
            _WRITERS.clear()
            writer = _WRITERS[key] = SqlShardWriter(self)
        return writer


@dataclass
class SqlShardWriter:
    """A worker process's connection to a run's database (:class:`SqlShardTarget`)."""

    target: SqlShardTarget
    engine: Engine = field(init=False)
    backend: Backend = field(init=False)
    conn: Connection = field(init=False)
    """The writing connection (a SQLite one takes the write lock as it begins)."""
    reader: Connection = field(init=False)
    """The reading one (never holds SQLite's write lock: other workers write meanwhile)."""
    compact: bool = field(init=False)
    """The variant is stored in the compact layout (:mod:`db.compact`)."""

    def __post_init__(self) -> None:
        self.engine = make_engine(self.target.url)
        self.backend = backend_for(self.engine)
        self.backend.shared_writes = True  # other workers write meanwhile
        with translate_errors(self.engine):
            self.conn = self.engine.connect()
            self.backend.setup(self.conn)
            self.backend.prepare(self.conn)
            self.reader = self.engine.connect()
            with self.reader.begin():
                layout = compact.layout_of(self.reader, self.target.variant_id)
            self.compact = layout == compact.COMPACT

    def tier_nodes(
        self, record: TierRecord, lo: int = 0, hi: int | None = None, *, written: bool = False
    ) -> TierNodes:
        with self._errors():
            vid = self.target.variant_id
            return read_tier_nodes(
                self.reader,
                self.backend,
                vid,
                record,
                lo,
                hi,
                written=written,
                layout_compact=self.compact,
            )

    def tier_values(self, record: TierRecord) -> TierValues:
        with self._errors():
            return read_tier_values(
                self.reader,
                self.backend,
                self.target.variant_id,
                record,
                layout_compact=self.compact,
            )

    def write_nodes(self, shard: NodeShard, game: Game, worker: str, started: float) -> bool:
        with self._errors():
            return write_nodes(
                self.conn,
                self.backend,
                self.target.variant_id,
                self.target.run_id,
                shard,
                worker,
                started,
            )

    def write_shard(
        self, game: Game, shard: Shard, part: TierPart, worker: str, started: float
    ) -> int | None:
        with self._errors():
            return write_shard(
                self.conn,
                self.backend,
                self.target.variant_id,
                self.target.run_id,
                game,
                shard,
                part,
                worker,
                started,
                layout_compact=self.compact,
            )

    def close(self) -> None:
        try:
            self.reader.close()
            self.conn.close()
        finally:
            self.engine.dispose()

    def _errors(self) -> Any:
        return translate_errors(self.engine)


_WRITERS: dict[tuple[str, int, int], SqlShardWriter] = {}
"""This worker process's open writer (see :meth:`SqlShardTarget.open`)."""


__all__ = [
    "DISCOVER",
    "SOLVE",
    "SqlShardTarget",
    "SqlShardWriter",
    "read_tier_nodes",
    "read_tier_values",
    "stored_figures",
    "write_nodes",
    "write_shard",
    "written_nodes",
    "written_shards",
]
