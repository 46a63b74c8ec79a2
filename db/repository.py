"""Read-side queries over the stored graphs.

Every function takes a :class:`~sqlalchemy.orm.Session` (or a
:class:`~sqlalchemy.engine.Connection`) first, never commits, and returns frozen records
from :mod:`db.records` rather than ORM objects. Lookups come in pairs: ``probe_*`` raises
:class:`~db.errors.PositionNotFoundError`, ``get_*`` returns a default.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from typing import Any, TypeVar, overload

from sqlalchemy import exc as sa_exc
from sqlalchemy import func, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, aliased

from db import compact, shards
from db.backends.sqlite import keyindex
from db.errors import PositionNotFoundError, RulesVersionError
from db.lock import PG_LOCK_CLASS, stale_reason
from db.models import (
    ChanceNode,
    DiscoveredChunk,
    Edge,
    Node,
    SolveRun,
    Tier,
    TierShard,
    Variant,
    decode_key,
    encode_key,
    utcnow,
)
from db.records import (
    ChanceValues,
    ChildRecord,
    PositionRecord,
    RunRecord,
    VariantRecord,
    VariantSummary,
    WorkerUnits,
    aware,
    bounds_of,
)
from db.shards import DISCOVER, SOLVE
from solver.game import Game, PositionKey, params_text
from solver.graph import STATE_NAMES

Reader = Session | Connection
"""Anything the queries can run on."""

T = TypeVar("T")

_VARIANTS = Variant.__table__
_RUNS = SolveRun.__table__

_NODE_COLUMNS = (
    Node.variant_id,
    Node.id,
    Node.key,
    Node.notation,
    Node.low,
    Node.high,
    Node.low_final,
    Node.high_final,
    Node.depth_low,
    Node.depth_high,
    Node.state,
    Node.dist,
    ChanceNode.low,
    ChanceNode.high,
    ChanceNode.low_exact,
    ChanceNode.high_exact,
    ChanceNode.plies,
    ChanceNode.plies_exact,
)
CHANCE_COLUMNS = 6
"""The ``chance_nodes`` columns at the end of :data:`_NODE_COLUMNS`."""
_CHANCE_JOIN = (ChanceNode.variant_id == Node.variant_id) & (ChanceNode.id == Node.id)
"""Positions of games of chance have a ``chance_nodes`` row (other games: none, and the
outer join finds nothing)."""


def find_variant(session: Reader, game: Game) -> VariantRecord | None:
    """The stored variant of *game* (its name and parameters), or ``None``."""
    return find_variant_by_name(session, game.name, params_text(game.params))


def find_variant_by_name(session: Reader, game: str, params: str) -> VariantRecord | None:
    """The stored variant of game *game* whose parameters' canonical text
    (:func:`solver.game.params_text`) is *params*, or ``None``."""
    row = session.execute(
        select(_VARIANTS).where(Variant.game == game, Variant.params == params)
    ).first()
    return None if row is None else _variant(row)


def get_variant(session: Reader, variant_id: int) -> VariantRecord | None:
    """The variant with id *variant_id*, or ``None``."""
    row = session.execute(select(_VARIANTS).where(Variant.id == variant_id)).first()
    return None if row is None else _variant(row)


def variant_is_closed(session: Reader, variant_id: int) -> bool:
    """Whether nothing stored for the variant can change any more: its graph is settled
    (the last run's closing pass is committed) and the latest run left no unexpanded
    node. Bounds and flags that are final never change, but depths can until then: a
    later expansion may find a faster way to the same value, and between a run's last
    batch and its closing pass the depths are not yet computed. Answers are cacheable
    for good only when this holds."""
    return variant_closure(session, variant_id)[0]


def variant_closure(session: Reader, variant_id: int) -> tuple[bool, int]:
    """:func:`variant_is_closed`, and the variant's node count after its latest run: the
    nodes of a closed graph never change again, even once later runs add other nodes
    (from other roots: no stored node gains a child), so a closed answer about nodes
    with smaller ids stays true for good."""
    settled = select(Variant.settled).where(Variant.id == variant_id).scalar_subquery()
    latest = (
        select(SolveRun.frontier, SolveRun.nodes)
        .where(SolveRun.variant_id == variant_id)
        .order_by(SolveRun.id.desc())
        .limit(1)
        .subquery()
    )
    row = session.execute(select(settled, latest.c.frontier, latest.c.nodes)).first()
    if row is None:  # no run: nothing was ever solved
        return False, 0
    is_settled, left, nodes = row
    return bool(is_settled) and left == 0, int(nodes)


def list_variants(session: Reader) -> list[VariantSummary]:
    """Every stored variant with its node count, the positions a tiered solve of it has
    discovered and not solved yet, and its latest run, by game then parameters."""
    counts: dict[int, int] = {
        variant_id: n
        for variant_id, n in session.execute(
            select(Node.variant_id, func.count()).group_by(Node.variant_id)
        )
    }
    counts.update(_compact_counts(session))
    latest = (
        select(SolveRun.variant_id, func.max(SolveRun.id).label("run_id"))
        .group_by(SolveRun.variant_id)
        .subquery()
    )
    last_runs = {
        run.variant_id: run
        for run in _with_dead(
            session,
            [
                _run(row)
                for row in session.execute(
                    select(_RUNS).join(latest, _RUNS.c.id == latest.c.run_id)
                )
            ],
        )
    }
    discovered = _discovered(session, counts)
    variants = session.execute(select(_VARIANTS).order_by(Variant.game, Variant.params))
    return [
        VariantSummary(v, counts.get(v.id, 0), last_runs.get(v.id), discovered.get(v.id, 0))
        for v in (_variant(row) for row in variants)
    ]


def _compact_counts(session: Reader) -> dict[int, int]:
    """The positions compact variants hold (their solved tiers'), by variant."""
    found = session.execute(
        select(Tier.variant_id, func.sum(Tier.nodes))
        .join(Variant, Variant.id == Tier.variant_id)
        .where(Variant.layout == compact.COMPACT, Tier.solved_in.is_not(None))
        .group_by(Tier.variant_id)
    )
    return {int(vid): int(n) for vid, n in found}


def _discovered(session: Reader, counts: dict[int, int]) -> dict[int, int]:
    """The positions that tiered variants hold discovered and not solved yet (an
    interrupted solve's), by variant: their stored positions as their runs count them
    (:func:`db.shards.stored_figures`) less their node rows (*counts*)."""
    conn = session.connection() if isinstance(session, Session) else session
    tiered = session.execute(select(DiscoveredChunk.variant_id).distinct()).scalars()
    return {vid: shards.stored_figures(conn, vid)[0] - counts.get(vid, 0) for vid in tiered}


def list_runs(session: Reader, variant_id: int | None = None) -> list[RunRecord]:
    """Solve runs, newest first (of one variant if *variant_id* is given); a ``running``
    run whose writer is dead has the status ``dead`` (see :func:`_with_dead`)."""
    query = select(_RUNS).order_by(SolveRun.id.desc())
    if variant_id is not None:
        query = query.where(SolveRun.variant_id == variant_id)
    return _with_workers(
        session, _with_dead(session, [_run(row) for row in session.execute(query)])
    )


def get_run(session: Reader, run_id: int) -> RunRecord | None:
    """The solve run with id *run_id* (``dead`` as in :func:`list_runs`), or ``None``."""
    row = session.execute(select(_RUNS).where(SolveRun.id == run_id)).first()
    return None if row is None else _with_workers(session, _with_dead(session, [_run(row)]))[0]


def _with_workers(session: Reader, runs: list[RunRecord]) -> list[RunRecord]:
    """*runs*, the tiered ones with the shards each process wrote for them."""
    tiered = [r.id for r in runs if r.tiers_total is not None]
    if not tiered:
        return runs
    found: dict[int, dict[str, WorkerUnits]] = {}
    rows = session.execute(
        select(
            TierShard.run_id,
            TierShard.worker,
            TierShard.step,
            func.count(),
            func.sum(TierShard.nodes),
            func.sum(TierShard.seconds),
        )
        .where(TierShard.run_id.in_(tiered))
        .group_by(TierShard.run_id, TierShard.worker, TierShard.step)
        .order_by(TierShard.run_id, TierShard.worker, TierShard.step)
    )
    for run_id, worker, step, units, positions, seconds in rows:
        n = int(positions or 0)
        mine = found.setdefault(run_id, {})
        was = mine.get(worker, WorkerUnits(worker, 0, 0, 0.0))
        mine[worker] = replace(
            was,
            units=was.units + int(units),
            positions=was.positions + n,
            seconds=was.seconds + float(seconds or 0.0),
            discovered=was.discovered + (n if step == DISCOVER else 0),
            solved=was.solved + (n if step == SOLVE else 0),
        )
    return [replace(r, worker_units=tuple(found.get(r.id, {}).values())) for r in runs]


def _with_dead(session: Reader, runs: list[RunRecord]) -> list[RunRecord]:
    """*runs*, those recorded as ``running`` whose writer is gone shown as ``dead``: by
    the writer lock's own rule (:mod:`db.store`): on PostgreSQL nobody holds the
    variant's advisory lock, or the writer is a process of this host that is gone; on
    SQLite its lease is stale (:func:`db.lock.stale_reason`). The row itself says
    ``running`` until the variant's next writer takes it over and records it ``failed``."""
    if not any(r.status == "running" for r in runs):
        return runs
    dialect = session.dialect if isinstance(session, Connection) else session.get_bind().dialect
    held: set[int] | None = None
    if dialect.name == "postgresql":
        held = {
            int(objid)
            for (objid,) in session.execute(
                text(
                    "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND classid = :c AND objsubid = 2"
                ),
                {"c": PG_LOCK_CLASS},
            )
        }
    now = utcnow()
    here = socket.gethostname()

    def dead(r: RunRecord) -> bool:
        if held is not None:  # PostgreSQL: the lock; no lease timeout for other hosts
            if r.variant_id not in held:
                return True
            return r.hostname == here and stale_reason(r, now) is not None
        return stale_reason(r, now) is not None

    return [
        replace(r, status="dead", eta_seconds=None) if r.status == "running" and dead(r) else r
        for r in runs
    ]


def probe_position(session: Reader, game: Game, key: PositionKey) -> PositionRecord:
    """The stored record of position *key* of *game*'s variant.

    The key is canonicalised first when the game uses symmetry, so any member of a
    symmetry class finds the stored representative.

    :raises PositionNotFoundError: if the variant or the position is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    variant = find_variant(session, game)
    params = params_text(game.params)
    if variant is None:
        options = " ".join(
            f"-p {k}={str(v).lower() if isinstance(v, bool) else v}"
            for k, v in sorted(game.params.items())
        )
        raise PositionNotFoundError(
            f"position {game.format(key)!r} not found: {game.name} ({params}) has not been "
            f"solved in this database (solve it with `negagraph solve {game.name} {options}`)"
        )
    if variant.rules_version != game.version:
        raise RulesVersionError.for_variant(game, variant.rules_version)
    stored = game.canonical(key) if game.uses_symmetry else key
    query = select(*_NODE_COLUMNS[: len(_NODE_COLUMNS) - CHANCE_COLUMNS * (not game.facts.chance)])
    tables = compact.stored_tiers(session, variant.id)
    if tables is not None:
        row_record = compact.read_positions(session, variant.id, game, tables, [stored]).get(stored)
        if row_record is None:
            raise PositionNotFoundError(_not_stored(game, key, params, variant.id))
        return row_record
    if game.facts.chance:
        query = query.outerjoin(ChanceNode, _CHANCE_JOIN)
    query = query.where(Node.variant_id == variant.id)
    ranged = _ranged_keys(session, variant.id)
    if ranged is None:
        row = session.execute(query.where(Node.key == encode_key(stored))).first()
    else:  # the node's id through the ranges of its key index, then the row by id
        table, where = ranged
        found = session.execute(
            text(f'SELECT n.id FROM {table} WHERE {where} AND n."key" = :k'),
            {"k": encode_key(stored)},
        ).scalar()
        row = None if found is None else session.execute(query.where(Node.id == found)).first()
    if row is None:
        raise PositionNotFoundError(_not_stored(game, key, params, variant.id))
    return _position(row)


def _not_stored(game: Game, key: PositionKey, params: str, variant_id: int) -> str:
    return (
        f"position {game.format(key)!r} of {game.name} ({params}) is not in the "
        f"database (variant {variant_id}): the solve never reached it, or a tiered full "
        "solve has not solved its tier yet"
    )


@overload
def get_position(session: Reader, game: Game, key: PositionKey) -> PositionRecord | None: ...
@overload
def get_position(
    session: Reader, game: Game, key: PositionKey, default: T
) -> PositionRecord | T: ...
def get_position(session: Reader, game: Game, key: PositionKey, default: object = None) -> object:
    """Like :func:`probe_position`, but returns *default* if the position is not stored.

    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    try:
        return probe_position(session, game, key)
    except PositionNotFoundError:
        return default


def get_node(session: Reader, variant_id: int, node_id: int) -> PositionRecord | None:
    """The position with node id *node_id* in variant *variant_id*, or ``None``."""
    row = session.execute(
        select(*_NODE_COLUMNS)
        .outerjoin(ChanceNode, _CHANCE_JOIN)
        .where(Node.variant_id == variant_id, Node.id == node_id)
    ).first()
    return None if row is None else _position(row)


def position_children(session: Reader, variant_id: int, node_id: int) -> list[ChildRecord]:
    """The moves from node *node_id* in move order, each with its resulting position.

    Empty for unexpanded and terminal positions (and for unknown nodes).
    """
    child = aliased(Node, name="c")
    query = (
        select(
            Edge.move,
            Edge.move_order,
            child.variant_id,
            child.id,
            child.key,
            child.notation,
            child.low,
            child.high,
            child.low_final,
            child.high_final,
            child.depth_low,
            child.depth_high,
            child.state,
            child.dist,
            ChanceNode.low,
            ChanceNode.high,
            ChanceNode.low_exact,
            ChanceNode.high_exact,
        )
        .join(child, (child.variant_id == Edge.variant_id) & (child.id == Edge.child))
        .outerjoin(
            ChanceNode, (ChanceNode.variant_id == child.variant_id) & (ChanceNode.id == child.id)
        )
        .where(Edge.variant_id == variant_id, Edge.parent == node_id)
        .order_by(Edge.move_order)
    )
    return [ChildRecord(row[0], row[1], _position(row[2:])) for row in session.execute(query)]


def position_parents(session: Reader, variant_id: int, node_id: int) -> list[PositionRecord]:
    """The stored positions with a move into node *node_id* (by node id)."""
    query = (
        select(*_NODE_COLUMNS)
        .join(Edge, (Edge.variant_id == Node.variant_id) & (Edge.parent == Node.id))
        .outerjoin(ChanceNode, _CHANCE_JOIN)
        .where(Edge.variant_id == variant_id, Edge.child == node_id)
        .distinct()
        .order_by(Node.id)
    )
    return [_position(row) for row in session.execute(query)]


def find_positions(
    session: Reader, game: Game, keys: Iterable[PositionKey]
) -> dict[PositionKey, PositionRecord]:
    """The stored records of those *keys* (already canonical) that are stored, by key;
    unknown keys are simply absent from the result.

    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    variant = find_variant(session, game)
    if variant is None:
        return {}
    if variant.rules_version != game.version:
        raise RulesVersionError.for_variant(game, variant.rules_version)
    return stored_positions(session, variant.id, keys, chance=game.facts.chance)


CHUNK = 512
"""Keys looked up per query."""


def stored_positions(
    session: Reader,
    variant_id: int,
    keys: Iterable[PositionKey],
    *,
    chance: bool = False,
    game: Game | None = None,
) -> dict[PositionKey, PositionRecord]:
    """The stored records of those *keys* (already canonical) of variant *variant_id*
    that are stored, by key; one query per :data:`CHUNK` keys.

    Like :func:`db.repository.find_positions` for a variant already resolved, but the keys
    are joined in as a ``VALUES`` list rather than an ``IN`` list: without ``ANALYZE``
    statistics SQLite answers ``variant_id = ? AND key IN (...)`` by scanning the whole
    variant, while the join probes the ``(variant_id, key)`` index once per key.

    The queries are :func:`fetch_positions`'s, sent on the reader's own driver connection
    (so within its transaction) without SQLAlchemy's per-statement and per-row work: a
    quarter of the time of a batch lookup's reads. A driver error is raised as
    SQLAlchemy's (:class:`sqlalchemy.exc.DBAPIError`), as a query through it would be.

    A variant in the compact layout (:mod:`db.compact`) is read from its tables, which
    needs its *game* (the tier of a key).
    """
    conn = session.connection() if isinstance(session, Session) else session
    dialect = conn.dialect
    try:
        cursor = conn.connection.cursor()
        try:
            return fetch_positions(
                cursor, dialect.paramstyle, variant_id, keys, chance=chance, game=game
            )
        finally:
            cursor.close()
    except dialect.loaded_dbapi.Error as exc:
        raise sa_exc.DBAPIError.instance(
            "stored_positions", None, exc, dialect.loaded_dbapi.Error, dialect=dialect
        ) from exc


def _ranged_keys(session: Reader, variant_id: int) -> tuple[str, str] | None:
    """How to find keys of *variant_id* when its key index is by range (SQLite, a large
    solve under way: :func:`db.backends.sqlite.keyindex.reader_lookup`), else ``None``."""
    conn = session.connection() if isinstance(session, Session) else session
    if conn.dialect.name != "sqlite":
        return None
    return keyindex.reader_lookup(conn.connection.driver_connection, variant_id)


def _collect(found: dict[PositionKey, PositionRecord], variant_id: int, rows: Any) -> None:
    """Add the records of lookup *rows* (:func:`_lookup_sql`'s columns) to *found*."""
    for row in rows:
        record = _position((variant_id, *row))
        found[record.key] = record


PARAM_MARKERS = {"qmark": "?", "format": "%s", "pyformat": "%s"}
"""Positional parameter markers of the DB-API paramstyles :func:`fetch_positions` speaks
(sqlite3: ``qmark``; psycopg: ``pyformat``, which takes ``%s`` too)."""


def fetch_positions(
    cursor: Any,
    paramstyle: str,
    variant_id: int,
    keys: Iterable[PositionKey],
    *,
    chance: bool = False,
    game: Game | None = None,
) -> dict[PositionKey, PositionRecord]:
    """:func:`stored_positions` on a DB-API *cursor* of a driver with *paramstyle*: the
    same SQL, sent to the driver as is (prepared once per size by drivers that cache
    statements, as sqlite3 does), without SQLAlchemy's per-statement work. A lookup of at
    most :data:`CHUNK` keys is a single statement, so it reads one snapshot even outside
    a transaction (on SQLite, after a look at which key index the variant has:
    :func:`db.backends.sqlite.keyindex.reader_lookup`).

    :raises ValueError: for a paramstyle without positional markers.
    """
    marker = PARAM_MARKERS.get(paramstyle)
    if marker is None:
        raise ValueError(f"unsupported DB-API paramstyle {paramstyle!r}")
    wanted = list(dict.fromkeys(keys))
    found: dict[PositionKey, PositionRecord] = {}
    tables = compact.raw_stored_tiers(cursor, marker, variant_id) if wanted else {}
    if tables:
        return compact.lookup(
            cursor, marker, variant_id, compact.needed(game, variant_id), tables, wanted
        )
    # sqlite3 (qmark): the variant's key index may be by range (db.backends.sqlite.keyindex)
    ranged = None
    if wanted and paramstyle == "qmark":
        ranged = keyindex.reader_lookup(cursor, variant_id)
    for start in range(0, len(wanted), CHUNK):
        chunk = [encode_key(k) for k in wanted[start : start + CHUNK]]
        size = _padded(len(chunk))
        params = [*chunk, *[chunk[-1]] * (size - len(chunk)), variant_id]
        try:
            cursor.execute(_raw_lookup(size, marker, chance, ranged), params)
        except Exception as exc:
            # the solve that finished meanwhile made the index by range whole again
            if ranged is None or "no such index" not in str(exc):
                raise
            ranged = keyindex.reader_lookup(cursor, variant_id)
            cursor.execute(_raw_lookup(size, marker, chance, ranged), params)
        _collect(found, variant_id, cursor.fetchall())
    return found


def _padded(n: int) -> int:
    """*n* rounded up to a power of two (at most :data:`CHUNK`): few statement shapes,
    each prepared once."""
    return min(1 << max(n - 1, 0).bit_length(), CHUNK)


def _lookup_sql(
    keys: list[str], variant: str, chance: bool = False, ranged: tuple[str, str] | None = None
) -> str:
    """The lookup SQL with the parameter markers *keys* and *variant*: the keys as a
    ``VALUES`` list joined to ``nodes`` (plain SQL that SQLite and PostgreSQL share), and
    with *chance* to ``chance_nodes`` too (only games of chance pay for that join);
    *ranged*: the table and condition of a key index by range
    (:func:`db.backends.sqlite.keyindex.lookup`)."""
    rows = ", ".join(f"({k})" for k in keys)
    sql = (
        f'WITH wanted ("key") AS (VALUES {rows}) '
        'SELECT n.id, n."key", n.notation, n.low, n.high, n.low_final, n.high_final, '
        "n.depth_low, n.depth_high, n.state, n.dist"
    )
    table, ranges = ("nodes AS n", "") if ranged is None else (ranged[0], f"{ranged[1]} AND ")
    join = (
        f'FROM wanted JOIN {table} ON {ranges}n.variant_id = {variant} AND n."key" = wanted."key"'
    )
    if not chance:
        return f"{sql} {join}"
    return (
        f"{sql}, c.low, c.high, c.low_exact, c.high_exact, c.plies, c.plies_exact {join} "
        "JOIN chance_nodes AS c ON c.variant_id = n.variant_id AND c.id = n.id"
    )


@cache
def _raw_lookup(
    size: int, marker: str, chance: bool = False, ranged: tuple[str, str] | None = None
) -> str:
    """The lookup of *size* keys with positional *marker* parameters: the keys, then the
    variant id."""
    return _lookup_sql([marker] * size, marker, chance, ranged)


# -- row conversion -----------------------------------------------------------------------


def _variant(v: Any) -> VariantRecord:
    try:
        params_json = json.loads(v.params_json)
    except ValueError:
        params_json = {}
    return VariantRecord(
        id=v.id,
        game=v.game,
        params=v.params,
        params_json=params_json if isinstance(params_json, dict) else {},
        rules_version=v.rules_version,
        created_at=aware(v.created_at) or v.created_at,
        root_key=None if v.root_key is None else decode_key(v.root_key),
        root_position=v.root_notation,
        game_source=v.game_source,
        layout=v.layout,
    )


def _run(r: Any) -> RunRecord:
    return RunRecord(
        id=r.id,
        variant_id=r.variant_id,
        status=r.status,
        started_at=aware(r.started_at) or r.started_at,
        heartbeat_at=aware(r.heartbeat_at) or r.heartbeat_at,
        finished_at=aware(r.finished_at),
        root_key=decode_key(r.root_key),
        root_position=r.root_notation,
        tablebase=bool(r.tablebase),
        max_expansions=r.max_expansions,
        max_seconds=r.max_seconds,
        expansions=r.expansions,
        nodes_added=r.nodes_added,
        edges_added=r.edges_added,
        nodes=r.nodes,
        edges=r.edges,
        frontier=r.frontier,
        root_bounds=bounds_of(r.root_low, r.root_high, r.root_low_final, r.root_high_final),
        seconds=r.seconds,
        pid=r.pid,
        hostname=r.hostname,
        rss_bytes=r.rss_bytes,
        memory_limit=r.memory_limit,
        resident_nodes=r.resident_nodes,
        tiers_done=r.tiers_done,
        tiers_total=r.tiers_total,
        units_done=r.units_done,
        units_total=r.units_total,
        workers=r.workers,
        eta_seconds=r.eta_seconds if r.status == "running" else None,
    )


def _position(row: Any) -> PositionRecord:
    vid, nid, key, notation, low, high, lf, hf, dl, dh, state, dist, *extra = row
    chance = None
    if extra and extra[0] is not None:  # a game of chance's row (an outer join)
        plies = None if extra[4] is None else float(extra[4])
        chance = ChanceValues(float(extra[0]), float(extra[1]), extra[2], extra[3], plies, extra[5])
    return PositionRecord(
        variant_id=vid,
        node_id=nid,
        key=decode_key(key),
        position=notation,
        bounds=bounds_of(low, high, lf, hf),
        depth_low=dl,
        depth_high=dh,
        state=STATE_NAMES[state],
        dist=dist,
        chance=chance,
    )


__all__ = [
    "CHUNK",
    "PARAM_MARKERS",
    "Reader",
    "fetch_positions",
    "find_positions",
    "find_variant",
    "find_variant_by_name",
    "get_node",
    "get_position",
    "get_run",
    "get_variant",
    "list_runs",
    "list_variants",
    "position_children",
    "position_parents",
    "probe_position",
    "stored_positions",
]
