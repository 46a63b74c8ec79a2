"""Writing the shards of a tiered solve (:mod:`solver.units`), from the solving process or
from another (a Dask worker): each shard's edges, its positions' bounds and depths and
its ``tier_shards`` row (migration 0009) in one transaction.

The transaction is *fenced* by the run that planned the shard, as the run's own commits
are (:mod:`db.lock`): it first touches the run's row ``WHERE status = 'running'``, so a
worker still busy with a run that has ended (stopped, killed and taken over) writes
nothing. A shard whose row exists is not written again, which makes running a unit twice
harmless: Dask runs a lost worker's units again, and a resumed solve skips the shards
written. On PostgreSQL two processes writing the same shard at once collide on the
edges' primary key; the loser finds the winner's row and writes nothing.

:class:`SqlShardTarget` is what a worker is given: the database's URL (password
included: workers connect as the solving process does), the variant and the run; it
opens one connection per worker process and keeps it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, insert, select, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection

from db import rows
from db.backend import Backend, backend_for, driver
from db.errors import VariantLockedError
from db.models import SolveRun, TierShard, utcnow
from db.session import make_engine, safe_url, translate_errors
from solver.store import Shard, TierNodes, TierPart, TierRecord, TierValues

log = logging.getLogger(__name__)


def write_shard(
    conn: Connection,
    backend: Backend,
    vid: int,
    run_id: int,
    shard: Shard,
    part: TierPart,
    worker: str,
    seconds: float,
) -> int | None:
    """Write *shard* (see the module docs); the edges written, or ``None`` if it was
    written already.

    :raises VariantLockedError: if run *run_id* no longer holds the variant.
    """
    try:
        with conn.begin():
            fenced = conn.execute(
                update(SolveRun)
                .where(SolveRun.id == run_id, SolveRun.status == "running")
                .values(heartbeat_at=utcnow())
            )
            if fenced.rowcount != 1:
                raise VariantLockedError(
                    f"run {run_id} no longer holds the variant: shard of tier "
                    f"{shard.record.tier} at node {shard.first_id} not written"
                )
            if _written(conn, vid, shard):
                return None
            edges = int(part.edges.child.size)
            cursor = driver(conn).cursor()
            try:
                backend.write_rows(
                    cursor,
                    vid,
                    shard.seq,
                    (),
                    rows.tier_edge_columns(vid, part.edges),
                    rows.tier_update_rows(shard.record.first_id, part.values, part.at),
                    int(part.at.size),
                )
            finally:
                cursor.close()
            conn.execute(
                insert(TierShard).values(
                    variant_id=vid,
                    tier=shard.record.tier,
                    first_id=shard.first_id,
                    nodes=shard.nodes,
                    edges=edges,
                    run_id=run_id,
                    worker=worker,
                    seconds=float(seconds),
                    written_at=utcnow(),
                )
            )
    except sa_exc.IntegrityError:
        # Another process wrote the same shard at the same time (PostgreSQL): its row
        # must be there now; if not, the collision was something else.
        with conn.begin():
            if _written(conn, vid, shard):
                log.info("shard at node %d was written by another process", shard.first_id)
                return None
        raise
    return edges


def _written(conn: Connection, vid: int, shard: Shard) -> bool:
    return (
        conn.execute(
            select(TierShard.nodes).where(
                TierShard.variant_id == vid, TierShard.first_id == shard.first_id
            )
        ).first()
        is not None
    )


def written_shards(conn: Connection, vid: int, record: TierRecord) -> list[tuple[int, int, int]]:
    """The written shards of tier *record*: ``(offset in the tier, positions, edges)``."""
    found = conn.execute(
        select(TierShard.first_id, TierShard.nodes, TierShard.edges)
        .where(TierShard.variant_id == vid, TierShard.tier == record.tier)
        .order_by(TierShard.first_id)
    )
    return [(first - record.first_id, nodes, edges) for first, nodes, edges in found]


def read_tier_nodes(
    conn: Connection, backend: Backend, vid: int, record: TierRecord, lo: int, hi: int | None
) -> TierNodes:
    """Tier *record*'s positions at offsets *lo* .. *hi* - 1, in id order."""
    stop = record.nodes if hi is None else hi
    with conn.begin():
        chunks = backend.fetch(
            conn, rows.TIER_NODE_SQL, (vid, record.first_id + lo, record.first_id + stop)
        )
        return rows.tier_nodes(chunks, stop - lo)


def read_tier_values(
    conn: Connection, backend: Backend, vid: int, record: TierRecord
) -> TierValues:
    """Solved tier *record*'s bounds and depths, in id order."""
    with conn.begin():
        chunks = backend.fetch(
            conn, rows.TIER_VALUE_SQL, (vid, record.first_id, record.first_id + record.nodes)
        )
        return rows.tier_values(chunks, record.nodes)


@dataclass(frozen=True)
class SqlShardTarget:
    """A run's database as a worker process opens it (picklable)."""

    url: str
    """The database URL, password included."""
    variant_id: int
    run_id: int

    @property
    def ident(self) -> str:
        return f"{safe_url(self.url)}#{self.variant_id}"

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

    def __post_init__(self) -> None:
        self.engine = make_engine(self.target.url)
        self.backend = backend_for(self.engine)
        with translate_errors(self.engine):
            self.conn = self.engine.connect()
            self.backend.setup(self.conn)
            self.backend.prepare(self.conn)

    def tier_nodes(self, record: TierRecord, lo: int = 0, hi: int | None = None) -> TierNodes:
        with self._errors():
            return read_tier_nodes(self.conn, self.backend, self.target.variant_id, record, lo, hi)

    def tier_values(self, record: TierRecord) -> TierValues:
        with self._errors():
            return read_tier_values(self.conn, self.backend, self.target.variant_id, record)

    def write_shard(self, shard: Shard, part: TierPart, worker: str, seconds: float) -> int | None:
        with self._errors():
            return write_shard(
                self.conn,
                self.backend,
                self.target.variant_id,
                self.target.run_id,
                shard,
                part,
                worker,
                seconds,
            )

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            self.engine.dispose()

    def _errors(self) -> Any:
        return translate_errors(self.engine)


_WRITERS: dict[tuple[str, int, int], SqlShardWriter] = {}
"""This worker process's open writer (see :meth:`SqlShardTarget.open`)."""


__all__ = [
    "SqlShardTarget",
    "SqlShardWriter",
    "read_tier_nodes",
    "read_tier_values",
    "write_shard",
    "written_shards",
]
