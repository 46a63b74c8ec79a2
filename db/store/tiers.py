"""A tiered full solve's reads and writes (:class:`solver.store.TierStore`, but for
opening and closing): :class:`TierWrites`.

Recording a tier, numbering the tiers and marking a tier solved are commits of the
variant (:meth:`db.store.writer.Writer.batch`); the units (a discovered tier's
positions, a solved shard) are transactions of their own (:mod:`db.shards`), a solved
shard written behind (:mod:`db.store.behind`) unless ``NEGAGRAPH_WRITE_BEHIND=0``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection

from db import compact, shards
from db.backends.sqlite import keyindex
from db.errors import DatabaseError
from db.migrate import ensure_schema
from db.models import Commit, DiscoveredChunk, Node, SolveRun, Tier, Variant
from db.shards import SqlShardTarget
from db.store.writer import Write, Writer
from solver.errors import SolveError
from solver.game import Game, params_text
from solver.store import (
    NodeShard,
    Progress,
    Shard,
    TierNodes,
    TierPart,
    TierRecord,
    TierValues,
)

log = logging.getLogger(__name__)


class TierWrites:
    """A tiered full solve's reads and writes of one run (see the module docs)."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer

    def solved_without_tiers(self, game: Game) -> bool:
        """Whether *game*'s variant holds positions outside tiers (see
        :class:`~solver.store.TierStore`)."""
        engine = self.writer.engine
        ensure_schema(engine)
        with self.writer.errors(), engine.connect() as conn:
            vid = conn.execute(
                select(Variant.id).where(
                    Variant.game == game.name, Variant.params == params_text(game.params)
                )
            ).scalar()
            if vid is None:
                return False
            top = conn.execute(select(func.max(Node.id)).where(Node.variant_id == vid)).scalar()
            tiered = int(
                conn.execute(select(func.sum(Tier.nodes)).where(Tier.variant_id == vid)).scalar()
                or 0
            )
            # a tier being discovered: its written shards are the tiered solve's
            found = shards.written_nodes(conn, vid, tiered)
            covered = max([tiered, *(first + count for first, count in found)])
            return top is not None and covered < int(top) + 1

    def tier_records(self) -> list[TierRecord]:
        """The variant's stored tiers, in discovery order."""
        conn = self.writer.connection()
        with self.writer.errors(), conn.begin():
            found = conn.execute(
                select(
                    Tier.tier,
                    Tier.ordinal,
                    func.coalesce(Tier.first_id, -1),
                    Tier.nodes,
                    Tier.edges,
                    Tier.inner_moves,
                    Tier.first_offset,
                )
                .where(Tier.variant_id == self.writer.variant_id)
                .order_by(Tier.ordinal)
            )
            records = [TierRecord(*row) for row in found]
        _check_records(records)
        return records

    def stored_nodes(self) -> int:
        """The variant's stored nodes (its largest node id + 1)."""
        conn = self.writer.connection()
        with self.writer.errors(), conn.begin():
            top = conn.execute(
                select(func.max(Node.id)).where(Node.variant_id == self.writer.variant_id)
            ).scalar()
        return 0 if top is None else int(top) + 1

    def write_nodes(self, shard: NodeShard, game: Game, worker: str, started: float) -> bool:
        """Write a discovered tier's positions through the run's own connection (see
        :func:`db.shards.write_nodes`)."""
        w = self.writer
        conn = w.connection()
        assert w.variant_id is not None and w.run_id is not None
        with w.errors():
            written = shards.write_nodes(
                conn, w.backend, w.variant_id, w.run_id, shard, worker, started
            )
        w.after_shard()
        return written

    def written_nodes(self, from_id: int) -> list[tuple[int, int]]:
        """The discovered shards of tiers not recorded yet (see
        :class:`~solver.store.TierStore`)."""
        conn = self.writer.connection()
        assert self.writer.variant_id is not None
        with self.writer.errors(), conn.begin():
            return shards.written_nodes(conn, self.writer.variant_id, from_id)

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
        """Record a discovered tier whose positions are written (see
        :class:`~solver.store.TierStore`)."""
        w = self.writer
        vid = w.variant_id
        assert vid is not None

        def write(conn: Connection, cursor: Any, seq: int) -> None:
            if w.settled:
                conn.execute(update(Variant).where(Variant.id == vid).values(settled=False))
            conn.execute(
                insert(Tier).values(
                    variant_id=vid,
                    tier=tier,
                    ordinal=ordinal,
                    first_id=None,
                    first_offset=first_offset,
                    nodes=count,
                    discovered_in=seq,
                    inner_moves=inner_moves,
                )
            )
            if w.compact:
                compact.create_table(conn, vid, ordinal)
            if last:
                _number_tiers(conn, vid)

        w.batch(progress, first_offset + count, progress.edges, write)
        w.settled = False
        w.after_batch()
        w.backend.tier_written(w.connection())
        if last:
            return next(r for r in self.tier_records() if r.ordinal == ordinal)
        return TierRecord(tier, ordinal, -1, count, None, inner_moves, first_offset)

    def number_tiers(self, progress: Progress) -> list[TierRecord]:
        """Give the tiers not numbered yet their node ids (see
        :class:`~solver.store.TierStore`)."""
        vid = self.writer.variant_id
        assert vid is not None
        self.writer.batch(
            progress, progress.nodes, progress.edges, lambda conn, _c, _s: _number_tiers(conn, vid)
        )
        self.writer.after_batch()
        return self.tier_records()

    def tier_nodes(
        self, record: TierRecord, lo: int = 0, hi: int | None = None, *, written: bool = False
    ) -> TierNodes:
        """A stored tier's positions (at offsets *lo* .. *hi* - 1), in id order."""
        w = self.writer
        assert w.variant_id is not None
        if w.behind.enabled and not (record.solved or written):
            # Discovered positions, stored long before: read apart while a shard is
            # written behind (write_shard).
            stop = record.nodes if hi is None else hi
            return shards.discovered_nodes(w.read, record.offset + lo, record.offset + stop)
        conn = w.connection()
        with w.errors():
            return shards.read_tier_nodes(
                conn,
                w.backend,
                w.variant_id,
                record,
                lo,
                hi,
                written=written,
                layout_compact=w.compact,
            )

    def tier_values(self, record: TierRecord) -> TierValues:
        """A solved tier's bounds and depths, in id order."""
        w = self.writer
        conn = w.connection()
        assert w.variant_id is not None
        with w.errors():
            return shards.read_tier_values(
                conn, w.backend, w.variant_id, record, layout_compact=w.compact
            )

    def write_shard(
        self, game: Game, shard: Shard, part: TierPart, worker: str, started: float
    ) -> int | None:
        """Write a solved shard through the run's own connection (see
        :func:`db.shards.write_shard`): *written behind*, as a running batch is
        (:mod:`db.store.commit`), unless ``NEGAGRAPH_WRITE_BEHIND=0``. Its rows are
        written by a thread of its own while the solver solves the next shard, whose
        positions it reads apart (:meth:`tier_nodes`); whatever uses the writer's
        connection next waits for it, and raises its error. The edges it writes are
        returned at once: no one else writes this run's shards (the run holds the
        variant)."""
        w = self.writer
        conn = w.connection()
        vid, run_id = w.variant_id, w.run_id
        assert vid is not None and run_id is not None

        def write() -> int | None:
            with w.errors():
                edges = shards.write_shard(
                    conn,
                    w.backend,
                    vid,
                    run_id,
                    game,
                    shard,
                    part,
                    worker,
                    started,
                    layout_compact=w.compact,
                )
            w.after_shard()
            return edges

        if not w.behind.enabled:
            return write()
        w.behind.start(write, f"negagraph shard {shard.first_id}")
        return int(part.edges.child.size)

    def written_shards(self, record: TierRecord) -> list[tuple[int, int, int]]:
        """The shards of tier *record* written so far (see :class:`~solver.store.TierStore`)."""
        conn = self.writer.connection()
        assert self.writer.variant_id is not None
        with self.writer.errors(), conn.begin():
            return shards.written_shards(conn, self.writer.variant_id, record)

    def next_commit(self) -> int:
        """The number of the variant's next commit."""
        return self.writer.seq + 1

    def finish_tier(self, record: TierRecord, progress: Progress, *, last: bool) -> TierRecord:
        """Mark a tier whose shards are all written solved (see
        :class:`~solver.store.TierStore`): its edges are its shards'."""
        w = self.writer
        assert w.variant_id is not None
        found = self.written_shards(record)
        covered = sum(n for _, n, _ in found)
        if covered != record.nodes:
            raise DatabaseError(
                f"tier {record.tier}: its written shards hold {covered:,} of its "
                f"{record.nodes:,} positions: the graph is damaged"
            )
        written = sum(e for _, _, e in found)
        write = self._solved(record, progress, written, last=last)
        w.batch(progress, progress.nodes, progress.edges, write)
        if last and w.keys is not None:
            w.keys = keyindex.WHOLE
        w.settled = last
        w.after_batch()
        w.backend.tier_written(w.connection())
        return replace(record, edges=written)

    def _solved(self, record: TierRecord, progress: Progress, written: int, *, last: bool) -> Write:
        """What the commit that marks tier *record* solved writes (its shards hold
        *written* edges)."""
        w = self.writer
        vid = w.variant_id
        assert vid is not None

        def write(conn: Connection, cursor: Any, seq: int) -> None:
            conn.execute(
                update(Tier)
                .where(Tier.variant_id == vid, Tier.tier == record.tier)
                .values(edges=written, solved_in=seq)
            )
            # its discovered positions are node rows now
            conn.execute(
                delete(DiscoveredChunk).where(
                    DiscoveredChunk.variant_id == vid,
                    DiscoveredChunk.first_offset >= record.offset,
                    DiscoveredChunk.first_offset < record.offset + record.nodes,
                )
            )
            # the commit's own row and the run's, with the edges now known
            conn.execute(
                update(Commit)
                .where(Commit.variant_id == vid, Commit.seq == seq)
                .values(edges=progress.edges + written)
            )
            conn.execute(
                update(SolveRun)
                .where(SolveRun.id == w.run_id)
                .values(edges=progress.edges + written, edges_added=progress.edges_added + written)
            )
            if w.compact:  # the view over the solved tiers' tables, this one's too
                compact.refresh_view(conn, vid, sorted(compact.tier_tables(conn, vid).values()))
            if last:
                conn.execute(update(Variant).where(Variant.id == vid).values(settled=True))
                if w.keys is not None and w.keys.none:
                    log.info("building the key index of %d positions", progress.nodes)
                    keyindex.create_whole(cursor, vid)

        return write

    def report(self, progress: Progress) -> None:
        """Record *progress* in the run's row (fenced, one short transaction)."""
        conn = self.writer.connection()
        with self.writer.errors(), conn.begin():
            self.writer.fence(conn, progress, final=False)

    def shard_target(self) -> SqlShardTarget:
        """This run's database, variant and run, for worker processes."""
        w = self.writer
        if w.variant_id is None or w.run_id is None:
            raise SolveError(f"{w!r} is not open")
        url = w.engine.url.render_as_string(hide_password=False)
        return SqlShardTarget(url, w.variant_id, w.run_id)


def _check_records(records: list[TierRecord]) -> None:
    """Refuse stored tiers that do not follow one another (in discovery order, and by
    node id once numbered)."""
    if [r.ordinal for r in records] != list(range(len(records))) or any(
        r.offset != sum(p.nodes for p in records[: r.ordinal]) for r in records
    ):
        raise DatabaseError("the stored tiers do not follow one another: the graph is damaged")
    if any(r.numbered for r in records):  # all of them, their ids one after another
        at, spans = 0, sorted((r.first_id, r.nodes) for r in records)
        for first, count in spans:
            if first != at:
                raise DatabaseError(
                    "the stored tiers' node ids do not follow one another: the graph is damaged"
                )
            at += count


def _number_tiers(conn: Connection, vid: int) -> None:
    """Give variant *vid*'s tiers that have none their node ids, in solve order (the
    reverse of discovery order): a tier at *offset* of *n* positions, of *total*, gets
    ``total - offset - n`` on (see :meth:`TierWrites.number_tiers`)."""
    total = conn.execute(
        select(func.coalesce(func.sum(Tier.nodes), 0)).where(Tier.variant_id == vid)
    ).scalar_one()
    conn.execute(
        update(Tier)
        .where(Tier.variant_id == vid, Tier.first_id.is_(None))
        .values(first_id=int(total) - Tier.first_offset - Tier.nodes)
    )


__all__ = ["TierWrites"]
