"""Opening a solve run (:meth:`db.store.SqlStore.open`): find or create the variant, take
its writer lock, record the run and load the stored graph.

A run loads the stored graph whole, or from a resume file (SQLite,
:mod:`db.backends.sqlite.resume`), or, for a run that evicts and finds more stored nodes
than it may hold, with only its root resident (a mapped graph, :mod:`solver.partial.cache`); a
tiered full solve loads nothing (its tiers are read and written a tier at a time).
"""

from __future__ import annotations

import json
import logging
from array import array
from functools import partial

from sqlalchemy import func, select, update
from sqlalchemy.engine import Connection

from db import compact, rows, shards
from db.backends.base import driver
from db.backends.sqlite import keyindex, resume
from db.backends.sqlite.keyindex import KeyIndex
from db.errors import DatabaseError, RulesVersionError
from db.migrate import ensure_schema
from db.models import Commit, Node, SolveRun, Tier, Variant, utcnow
from db.session import is_negagraph_engine, safe_url
from db.store.closing import release
from db.store.writer import Writer
from solver.errors import SolveError
from solver.game import Game, params_text
from solver.games import source_of
from solver.graph import Graph
from solver.store import RunOptions
from solver.values import decode, decode_depth

log = logging.getLogger(__name__)


def open_run(
    writer: Writer, game: Game, run: RunOptions, *, lease_timeout: float, lock_wait: float
) -> Graph:
    """Take *game*'s variant for writing, record the run and load the stored graph.

    An empty database (a new SQLite file, say) first gets the schema, as with
    ``negagraph solve``.

    :raises SchemaError: if the database is not at the schema head.
    :raises RulesVersionError: if the variant is stored under another rules version.
    :raises VariantLockedError: if another live writer holds the variant.
    :raises DatabaseError: if the database cannot be used.
    """
    if writer.conn is not None:
        raise SolveError(f"{writer!r} is already open (one run per store)")
    if not is_negagraph_engine(writer.engine):
        raise DatabaseError("SqlStore needs an engine made by db.session.make_engine")
    ensure_schema(writer.engine)
    with writer.errors():
        conn = writer.engine.connect()
    writer.conn = conn
    try:
        with writer.errors():
            writer.backend.setup(conn)
            variant_id = _find_or_create_variant(writer, conn, game)
            writer.run_id = writer.backend.lock(
                conn, variant_id, game, run, lease_timeout=lease_timeout, lock_wait=lock_wait
            )
            with conn.begin():
                graph = _stored_graph(writer, conn, variant_id, game, run)
            if graph.deferred_edges:
                graph.edge_loader = partial(_reload_edges, writer)
            writer.backend.prepare(conn)
    except BaseException:
        release(writer, failed=True)
        raise
    writer.graph = graph
    writer.game = game
    log.info(
        "opened %s %s (variant %d, run %d): %d nodes, %d edges",
        game.name,
        params_text(game.params),
        variant_id,
        writer.run_id,
        graph.num_nodes,
        graph.total_edges,
    )
    return graph


def _stored_graph(
    writer: Writer, conn: Connection, variant_id: int, game: Game, run: RunOptions
) -> Graph:
    """The run's graph, as the variant stores it (inside the opening's transaction)."""
    writer.tiered = run.tiered
    writer.compact = _compact(conn, variant_id, game, run)
    writer.keys = _key_index(writer, conn, variant_id, tiered=run.tiered)
    if run.tiered:  # read and written a tier at a time (solver.tiers.solve)
        graph: Graph | None = Graph()
    else:
        _refuse_unfinished_tiers(conn, variant_id, game)
        graph = _resumed(writer, conn, variant_id, run)
    settled = settled_of(conn, variant_id)
    if graph is None and run.lazy_above is not None and settled:
        graph = _lazy(writer, conn, variant_id, run)
    if graph is None:
        graph = writer.backend.load(conn, variant_id, edges=not run.full)
    graph.settled = writer.settled = settled
    writer.seq = _latest_commit(conn, variant_id)
    graph.after_crash = _previous_died(conn, variant_id, writer.run_id)
    return graph


def _find_or_create_variant(writer: Writer, conn: Connection, game: Game) -> int:
    params = params_text(game.params)
    query = select(Variant.id, Variant.rules_version).where(
        Variant.game == game.name, Variant.params == params
    )
    with conn.begin():
        row = conn.execute(query).first()
        if row is None:
            conn.execute(
                writer.backend.insert_new(
                    Variant,
                    ["game", "params"],
                    {
                        "game": game.name,
                        "params": params,
                        "params_json": json.dumps(dict(game.params), sort_keys=True),
                        "rules_version": game.version,
                        "game_source": source_of(game),
                        "created_at": utcnow(),
                        "settled": True,
                    },
                )
            )
            row = conn.execute(query).one()
            if writer.sqlite:
                keyindex.create_whole(driver(conn), row[0])
    variant_id, stored = row
    if stored != game.version:
        raise RulesVersionError.for_variant(game, stored, safe_url(writer.engine))
    writer.variant_id = variant_id
    return int(variant_id)


def _key_index(
    writer: Writer, conn: Connection, variant_id: int, *, tiered: bool
) -> KeyIndex | None:
    """The variant's key index on SQLite (``None``: PostgreSQL's constraint); a tiered
    solve that starts on a variant without nodes drops it, to build it whole at its
    end (:mod:`db.backends.sqlite.keyindex`)."""
    if not writer.sqlite:
        return None
    found = keyindex.read(driver(conn), variant_id)
    if tiered and not found.none and _top_id(conn, variant_id) is None:
        found = keyindex.drop(driver(conn), variant_id)
    return found


def _top_id(conn: Connection, variant_id: int) -> int | None:
    top = conn.execute(select(func.max(Node.id)).where(Node.variant_id == variant_id)).scalar()
    return None if top is None else int(top)


def _resumed(writer: Writer, conn: Connection, variant_id: int, run: RunOptions) -> Graph | None:
    """The run's graph from the variant's resume file (see
    :mod:`db.backends.sqlite.resume`), if there is one that matches the database; any
    resume file is removed."""
    writer.resume_path = path = writer.backend.resume_path(variant_id)
    writer.resume_full = run.full
    if path is None:
        return None
    kept = resume.take(path)
    if kept is None:
        return None
    meta, graph = kept
    assert writer.run_id is not None
    problem = resume.mismatch(conn, variant_id, writer.run_id, meta, graph)
    if problem is None and not run.full and (meta.get("full") or graph.deferred_edges):
        # Rows of nodes a full run expanded still say unexpanded; a partial run
        # rewrites them, and only the database says which they are.
        problem = "it was written by a full run, and this one is partial"
    if problem is not None:
        log.info("not resuming from %s: %s", path, problem)
        return None
    graph.mark_committed()
    log.info("resuming from %s (written by run %d)", path, meta["run_id"])
    return graph


def _lazy(writer: Writer, conn: Connection, variant_id: int, run: RunOptions) -> Graph | None:
    """The variant's graph with only the root resident (a mapped graph: the rest is
    read back as the search needs it, :mod:`solver.partial.cache`), or ``None`` if the root is
    not stored yet."""
    (root,) = rows.key_bytes([run.root])
    latest = conn.execute(
        select(Commit.nodes, Commit.edges)
        .where(Commit.variant_id == variant_id)
        .order_by(Commit.seq.desc())
        .limit(1)
    ).first()
    frontier = conn.execute(
        select(SolveRun.frontier)
        .where(SolveRun.variant_id == variant_id, SolveRun.id != writer.run_id)
        .order_by(SolveRun.id.desc())
        .limit(1)
    ).scalar()
    if latest is None or frontier is None:
        return None
    table, where = writer.key_lookup(variant_id, latest.nodes)
    found = conn.exec_driver_sql(
        "SELECT n.id, n.low, n.high, n.low_final, n.high_final, n.depth_low, n.depth_high, "
        f'n.state, n.dist FROM {table} WHERE {where} AND n."key" = {writer.marker}',
        (root,),
    ).first()
    if found is None:
        return None
    assert run.lazy_above is not None
    if latest.nodes <= run.lazy_above:
        return None  # it fits: loaded whole, searched in C until it outgrows it
    graph = Graph()
    graph.frontier_hint = frontier
    graph.gid = array("q")
    graph.outside_nodes = latest.nodes
    graph.outside_edges = latest.edges
    graph.committed_gid = latest.nodes
    values = (
        decode(found.low, upper=False),
        decode(found.high, upper=True),
        int(found.low_final),
        int(found.high_final),
        decode_depth(found.depth_low),
        decode_depth(found.depth_high),
    )
    graph.add_stored(found.id, run.root, values, found.state, found.dist)
    graph.hidden[0] = 0  # the root's parents, if any, are not the run's concern
    graph.dirty.clear()
    graph.mark_committed()
    log.info("opened lazily: the root of %d stored nodes resident", latest.nodes)
    return graph


def _previous_died(conn: Connection, variant_id: int, run_id: int | None) -> bool:
    """Whether the variant's run before run *run_id* died (still ``running`` with a dead
    writer, or ``failed``: a lease taken over is marked failed)."""
    status = conn.execute(
        select(SolveRun.status)
        .where(SolveRun.variant_id == variant_id, SolveRun.id != run_id)
        .order_by(SolveRun.id.desc())
        .limit(1)
    ).scalar()
    return status in ("running", "failed")


def _reload_edges(writer: Writer, graph: Graph) -> None:
    """:attr:`Graph.edge_loader` of a full solve's graph (see
    :meth:`db.backends.base.Backend.load`)."""
    conn, _ = writer.require_open(graph)
    assert writer.variant_id is not None
    writer.behind.wait()
    with writer.errors(), conn.begin():
        writer.backend.reload_edges(conn, writer.variant_id, graph)


def _compact(conn: Connection, variant_id: int, game: Game, run: RunOptions) -> bool:
    """Whether the run writes the compact layout (:mod:`db.compact`): a tiered run on a
    variant stored so, or one asked for it on a variant that holds nothing yet (which
    this opening's transaction marks compact).

    :raises SolveError: for a run that is not tiered on a compact variant, or the
        compact layout asked of a variant stored as a graph."""
    named = f"{game.name} ({params_text(game.params) or 'default parameters'})"
    stored = compact.layout_of(conn, variant_id)
    if not run.tiered:
        if stored == compact.COMPACT:
            raise SolveError(
                f"{named} is stored in the compact layout of a tiered full solve (values by "
                "key, no graph): only solve --full continues it"
            )
        return False
    if stored == compact.COMPACT:
        return True
    if run.layout != compact.COMPACT:
        return False
    held = conn.execute(select(func.count()).where(Tier.variant_id == variant_id)).scalar()
    if held or _top_id(conn, variant_id) is not None:
        raise SolveError(
            f"{named} is stored as a graph already: the compact layout is for a variant "
            "solved from the start with --layout compact (leave the option out to continue "
            "this one, or solve into another database)"
        )
    conn.execute(update(Variant).where(Variant.id == variant_id).values(layout=compact.COMPACT))
    return True


def _refuse_unfinished_tiers(conn: Connection, variant_id: int, game: Game) -> None:
    """A run that is not tiered must not change a tiered solve in progress (it would
    rewrite the tiers' rows behind their records)."""
    left = conn.execute(
        select(func.count()).where(Tier.variant_id == variant_id, Tier.solved_in.is_(None))
    ).scalar()
    tiered = conn.execute(
        select(func.sum(Tier.nodes)).where(Tier.variant_id == variant_id)
    ).scalar()
    if not left and shards.written_nodes(conn, variant_id, int(tiered or 0)):
        left = 1  # a tier's positions are being written
    if left:
        raise SolveError(
            f"{game.name} ({params_text(game.params) or 'default parameters'}) has a tiered "
            f"full solve in progress ({left} tiers not solved yet): finish it with solve --full"
        )


def settled_of(conn: Connection, variant_id: int) -> bool:
    """``variants.settled`` of variant *variant_id* (see :mod:`db.store`)."""
    return bool(conn.execute(select(Variant.settled).where(Variant.id == variant_id)).scalar_one())


def _latest_commit(conn: Connection, variant_id: int) -> int:
    """The variant's latest ``commits.seq`` (0 if none)."""
    latest = conn.execute(
        select(func.max(Commit.seq)).where(Commit.variant_id == variant_id)
    ).scalar()
    return int(latest or 0)


__all__ = ["open_run", "settled_of"]
