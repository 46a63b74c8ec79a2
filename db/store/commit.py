"""The batch commit (:meth:`db.store.SqlStore.commit`): what a :class:`~solver.store.Batch`
holds, written in one transaction (:meth:`db.store.writer.Writer.batch`), in the solving
thread or behind it (:mod:`db.store.behind`).

The batch says which rows it holds: ``plain`` and ``chance`` batches the graph's pending
rows (:meth:`~solver.graph.Graph.pending`; a ``chance`` batch with its own rows besides,
:mod:`db.store.chance_rows`), ``mapped`` ones rows by stored id
(:func:`db.rows.mapped_rows`). A running batch (:attr:`~solver.store.Batch.running`) is
written behind unless ``NEGAGRAPH_WRITE_BEHIND=0``; its rows are then copied out of the
graph first, since the graph changes while they are written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from sqlalchemy import update
from sqlalchemy.engine import Connection

from db import rows
from db.models import Variant
from db.store.behind import Flight
from db.store.chance_rows import write_chance_rows
from db.store.writer import Write, Writer
from solver.game import Game
from solver.store import Batch, Progress


@dataclass(frozen=True)
class _Rows:
    """A batch's rows, as the backend writes them."""

    nodes: Iterable[list[Any]]
    edges: Iterable[list[Any]]
    updates: Iterable[tuple[Any, ...]]
    count: int
    """The rows in :attr:`updates`."""
    figures: tuple[int, int]
    """The graph's nodes and edges once the batch is committed."""
    new_nodes: range = range(0)
    """The new nodes' ids (``plain`` and ``chance`` batches)."""
    new_edges: range = range(0)


def commit_batch(writer: Writer, batch: Batch, progress: Progress) -> None:
    """Write *batch* and *progress* in one transaction, then mark the graph committed
    (see the module docs).

    :raises VariantLockedError: if this run's lease was taken over by another writer.
    :raises DatabaseError: if the database refuses the batch (nothing of it is kept),
        or refused the batch written behind before it.
    """
    graph = batch.graph
    _, game = writer.require_open(graph)
    writer.behind.wait()
    vid = writer.variant_id
    assert vid is not None
    behind = writer.behind.enabled and batch.running and not writer.tiered
    seq = writer.seq + 1  # the number Writer.batch gives this batch
    found = _rows(batch, game, vid, seq, copy=behind)
    write = _write(writer, batch, found, vid, seq)
    if not behind:
        writer.batch(progress, *found.figures, write)
        graph.mark_committed()
        writer.settled = batch.settled
        writer.after_batch()
        return
    writer.end_reading()  # this thread's read transaction; the batch's thread writes
    writer.behind.flight = _flight(batch, found.new_nodes)
    graph.mark_committed()
    writer.settled = batch.settled
    work = partial(writer.batch, replace(progress), *found.figures, write)

    def written() -> None:
        work()
        writer.after_batch()

    writer.behind.start(written, f"negagraph batch {seq}")


def _rows(batch: Batch, game: Game, vid: int, seq: int, *, copy: bool) -> _Rows:
    """*batch*'s rows, for commit *seq* of variant *vid*; with *copy*, copied out of the
    graph now (a batch written behind)."""
    graph = batch.graph
    if batch.mode == "mapped":
        nodes, edges, updates = rows.mapped_rows(graph, game, vid, seq)
        return _Rows(nodes, edges, updates, len(updates), (graph.total_nodes, graph.total_edges))
    new_nodes, new_edges, dirty = graph.pending()
    node_rows: Iterable[list[Any]] = ()
    edge_rows: Iterable[list[Any]] = ()
    if new_nodes:
        node_rows = rows.node_columns(graph, game, vid, new_nodes, seq)
    if new_edges:
        edge_rows = rows.edge_columns(graph, vid, new_edges)
    update_rows: Iterable[tuple[Any, ...]] = ()
    if copy:
        node_rows, edge_rows = list(node_rows), list(edge_rows)
        update_rows = rows.update_columns(graph, dirty) if dirty else ()
    elif dirty:
        update_rows = rows.update_rows(graph, dirty)
    figures = (graph.num_nodes, graph.total_edges)
    return _Rows(node_rows, edge_rows, update_rows, len(dirty), figures, new_nodes, new_edges)


def _write(writer: Writer, batch: Batch, found: _Rows, vid: int, seq: int) -> Write:
    """What commit *seq* writes of *batch* besides its run and ``commits`` rows."""
    settled = batch.settled if batch.settled != writer.settled else None
    chance = batch.graph if batch.mode == "chance" else None

    def write(conn: Connection, cursor: Any, at: int) -> None:
        assert at == seq
        if settled is not None:
            conn.execute(update(Variant).where(Variant.id == vid).values(settled=settled))
        writer.backend.write_rows(
            cursor, vid, seq, found.nodes, found.edges, found.updates, found.count
        )
        if chance is not None:
            write_chance_rows(
                writer.backend, writer.marker, cursor, chance, vid, found.new_nodes, found.new_edges
            )

    return write


def _flight(batch: Batch, new_nodes: range) -> Flight:
    """The stored ids the batch written behind holds (:meth:`WriteBehind.in_flight`)."""
    graph = batch.graph
    changed = np.fromiter(graph.dirty, dtype=np.int64, count=len(graph.dirty))
    if batch.mode == "mapped":
        assert graph.gid is not None
        gid = np.frombuffer(graph.gid, dtype=np.int64)
        return (graph.committed_gid, graph.total_nodes, gid[changed])
    return (new_nodes.start, new_nodes.stop, changed)


__all__ = ["commit_batch"]
