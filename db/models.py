"""The SQL schema of negagraph (SQLAlchemy 2.x typed declarative models).

One row of ``variants`` per game configuration (game name + canonical parameter text);
its solved graph is the ``nodes`` and ``edges`` rows carrying its ``variant_id``, numbered
exactly like the solver's in-memory :class:`~solver.graph.Graph` (node ids in discovery
order, edges by parent and move order). ``solve_runs`` records every solve run and is also
the SQLite writer lease (see :mod:`db.store`). The schema is created and changed only by
the Alembic migrations under ``migrations/``; keep the two in step (``alembic check``).

Conventions for analysts: bounds are from the point of view of the player to move at the
node, ``NULL`` meaning infinite (``low`` NULL = -inf, ``high`` NULL = +inf, depths NULL =
infinite); ``notation`` is the game's text notation of the position. The view
``position_values`` (created by the migration) joins it all up readably.

Rows are kept compact because a large solve writes millions of them: 32-bit ids and
depths, booleans for flags, keys as minimal big-endian bytes, and on SQLite both big
tables are ``WITHOUT ROWID`` so that the primary key *is* the table.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Double,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from solver.game import PositionKey
from solver.store import RUN_STATUSES

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Constraint names (Alembic ``naming.rst``), so migrations can refer to them."""

# ``solve_runs.status`` holds solver.store.RUN_STATUSES; ``running`` rows are live (or
# crashed) writers: readers show crashed ones as ``dead`` (db.repository.list_runs), the
# next writer of the variant records them ``failed``.


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (what every timestamp column stores)."""
    return datetime.now(UTC)


def encode_key(key: PositionKey) -> bytes:
    """A position key as stored in ``nodes.key``: minimal big-endian unsigned bytes.

    >>> encode_key(0), encode_key(255), encode_key(256)
    (b'\\x00', b'\\xff', b'\\x01\\x00')

    :raises ValueError: for a negative key.
    """
    if key < 0:
        raise ValueError(f"position keys are non-negative, not {key}")
    return key.to_bytes(max(1, (key.bit_length() + 7) >> 3), "big")


def decode_key(data: bytes) -> PositionKey:
    """The inverse of :func:`encode_key`.

    >>> decode_key(encode_key(2**70 + 5)) == 2**70 + 5
    True
    """
    return int.from_bytes(data, "big")


class Base(DeclarativeBase):
    """Declarative base: shared metadata with the naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {int: BigInteger, datetime: DateTime(timezone=True)}


class Variant(Base):
    """A game configuration: the game's registry name plus its canonical parameters."""

    __tablename__ = "variants"
    __table_args__ = (UniqueConstraint("game", "params"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(Text)
    """Registry name, e.g. ``connect-four``."""
    params: Mapped[str] = mapped_column(Text)
    """Canonical parameter text, e.g. ``height=4,symmetry=false,width=5``."""
    params_json: Mapped[str] = mapped_column(Text)
    """The same parameters as a JSON object."""
    rules_version: Mapped[int] = mapped_column(Integer)
    """The game's rules version the stored keys and values belong to."""
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    root_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    """Root position of the latest solve run (key bytes, as ``nodes.key``)."""
    root_notation: Mapped[str | None] = mapped_column(Text)
    """Root position of the latest solve run, in the game's notation."""
    settled: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """The stored depths and finality flags are those of a run's closing pass over the
    stored graph (no batch committed since). False while a solve is under way, or after
    a run died before its closing pass; the next solve finishes the pass."""
    layout: Mapped[str] = mapped_column(Text, server_default=text("'graph'"))
    """``graph`` (node and edge rows) or ``compact`` (a complete tiered solve's tables of
    bounds and depths by key, migration 0017: :mod:`db.compact`)."""
    game_source: Mapped[str | None] = mapped_column(Text)
    """Where the game came from when the variant was created: ``builtin``, ``plugin
    <distribution> <version>`` or ``reference <module:Class>``; NULL if unknown (a game
    outside the registry, or a variant older than revision 0005 of a game not built in)."""

    def __repr__(self) -> str:
        return f"<Variant {self.id} {self.game} {self.params!r} v{self.rules_version}>"


class Node(Base):
    """One position of a variant's graph with its bounds, finality flags and depths.

    Columns are ordered widest first so PostgreSQL rows need no alignment padding.
    """

    __tablename__ = "nodes"
    __table_args__ = (
        # PostgreSQL: one key index for all variants. SQLite: one per variant, made and
        # reshaped by the store (db.backends.sqlite.keyindex, migration 0014).
        UniqueConstraint("variant_id", "key").ddl_if(dialect="postgresql"),
        CheckConstraint("low <= high", name="low_le_high"),
        # BETWEEN, not IN (0, 1, 2): SQLite evaluates IN lists per row far more slowly.
        CheckConstraint("state BETWEEN 0 AND 2", name="state"),
        # PostgreSQL: room in each page for a rewritten row (migration 0003).
        {"sqlite_with_rowid": False, "postgresql_with": {"fillfactor": 50}},
    )

    variant_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("variants.id", ondelete="CASCADE"), primary_key=True
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    """The solver's node id: discovery order within the variant, from 0 (a tiered full
    solve: tier by tier in solve order, docs/design.md §5)."""
    low: Mapped[int | None] = mapped_column(BigInteger)
    """Lower bound for the mover (NULL: -infinity)."""
    high: Mapped[int | None] = mapped_column(BigInteger)
    """Upper bound for the mover (NULL: +infinity)."""
    depth_low: Mapped[int | None] = mapped_column(Integer)
    """Plies within which ``low`` is guaranteed (NULL: infinite)."""
    depth_high: Mapped[int | None] = mapped_column(Integer)
    """Plies the opponent can hold the mover to ``high`` (NULL: infinite)."""
    dist: Mapped[int] = mapped_column(Integer)
    """Plies from the solve root where the position was first reached."""
    state: Mapped[int] = mapped_column(SmallInteger)
    """0 unexpanded, 1 expanded, 2 terminal."""
    low_final: Mapped[bool] = mapped_column(Boolean)
    high_final: Mapped[bool] = mapped_column(Boolean)
    key: Mapped[bytes] = mapped_column(LargeBinary)
    """The position key as minimal big-endian unsigned bytes (:func:`encode_key`)."""
    notation: Mapped[str] = mapped_column(Text)
    """The position in the game's text notation."""
    expanded_in: Mapped[int | None] = mapped_column(Integer)
    """The commit (``commits.seq``) whose batch expanded the node; NULL while it is
    unexpanded, and for terminal nodes (migration 0006)."""

    def __repr__(self) -> str:
        return f"<Node {self.variant_id}:{self.id} {self.notation!r} [{self.low}, {self.high}]>"


NODE_UPDATE_COLUMNS = (
    "low",
    "high",
    "depth_low",
    "depth_high",
    "state",
    "low_final",
    "high_final",
)
"""The columns of ``nodes`` that change after a node is written (bounds, depths, state,
flags), in the order the writers send them: the store's UPDATE statements and scratch
table are made from this list and :class:`Node`'s column types."""

NODE_COLUMNS = (
    "variant_id",
    "id",
    "low",
    "high",
    "depth_low",
    "depth_high",
    "dist",
    "state",
    "low_final",
    "high_final",
    "key",
    "notation",
    "expanded_in",
)
"""Every column of ``nodes``, in the order the writers insert them."""


class Edge(Base):
    """A move: ``parent``'s child number ``move_order`` is ``child``, reached by ``move``."""

    __tablename__ = "edges"
    __table_args__ = (
        ForeignKeyConstraint(
            ["variant_id", "parent"], ["nodes.variant_id", "nodes.id"], ondelete="CASCADE"
        ),
        {"sqlite_with_rowid": False},
    )

    variant_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    parent: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    """Node id of the position the move is played from."""
    move_order: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    """Index of the move among the parent's moves, from 0 (the game's move order)."""
    child: Mapped[int] = mapped_column(Integer)
    """Node id of the resulting (canonical) position, a node of the same variant (not
    declared as a foreign key: that would need an index on it, a third of the database;
    see migration 0002)."""
    move: Mapped[str] = mapped_column(Text)
    """The move in the game's notation."""

    def __repr__(self) -> str:
        return f"<Edge {self.variant_id}:{self.parent}[{self.move_order}] {self.move!r}>"


class ChanceNode(Base):
    """A position of a game of chance (``docs/design.md`` §10): whose it is, whether it
    is a chance node, and its bounds as the chance solver found them. One row per node of
    a variant whose game has chance nodes; ``nodes.low`` / ``nodes.high`` hold the same
    bounds rounded outwards to integers (sound, coarse), so that readers that know
    nothing of chance read true bounds."""

    __tablename__ = "chance_nodes"
    __table_args__ = (
        ForeignKeyConstraint(
            ["variant_id", "id"], ["nodes.variant_id", "nodes.id"], ondelete="CASCADE"
        ),
        {"sqlite_with_rowid": False},
    )

    variant_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    low: Mapped[float] = mapped_column(Double)
    """The lower bound from the node's player's side, rounded down (never above the
    true bound): what he can expect if endless play counted as the worst result."""
    high: Mapped[float] = mapped_column(Double)
    """The upper bound, rounded up (never below the true bound)."""
    low_exact: Mapped[str | None] = mapped_column(Text)
    """The lower bound as an exact fraction (``'3/16'``, ``'-1'``) where it is known;
    ``NULL`` on cycles through chance nodes (then ``low`` is within the solve's
    tolerance)."""
    high_exact: Mapped[str | None] = mapped_column(Text)
    player: Mapped[int] = mapped_column(SmallInteger)
    """0 for the first player, 1 for the second (a chance node's: the one whose turn goes
    on while the outcome is drawn)."""
    chance: Mapped[bool] = mapped_column(Boolean)
    """Whether an outcome is drawn here (else the player chooses, or the game is over)."""
    plies: Mapped[float | None] = mapped_column(Double)
    """The expected number of plies (players' moves; drawn outcomes are none) to the end
    of the game when both players follow the optimal strategy (``docs/design.md`` §10);
    ``NULL`` where play under it does not end with probability 1 (migration 0011)."""
    plies_exact: Mapped[str | None] = mapped_column(Text)
    """The same as an exact fraction where it is known (off cycles), else ``NULL``."""


class ChanceEdge(Base):
    """A move of a game of chance: the outcome's probability at a chance node, and
    whether the move keeps the turn (the point of view does not change)."""

    __tablename__ = "chance_edges"
    __table_args__ = (
        ForeignKeyConstraint(
            ["variant_id", "parent", "move_order"],
            ["edges.variant_id", "edges.parent", "edges.move_order"],
            ondelete="CASCADE",
        ),
        {"sqlite_with_rowid": False},
    )

    variant_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    parent: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    move_order: Mapped[int] = mapped_column(SmallInteger, primary_key=True, autoincrement=False)
    probability: Mapped[str | None] = mapped_column(Text)
    """The outcome's probability as an exact fraction (``'1/6'``) at a chance node,
    ``NULL`` at a decision node."""
    keeps_turn: Mapped[bool] = mapped_column(Boolean)
    """True if the child belongs to the parent's player (no change of point of view)."""


class SolveRun(Base):
    """One solve run of a variant: what it was asked, how far it got, and its lease."""

    __tablename__ = "solve_runs"
    __table_args__ = (
        CheckConstraint(
            "status IN (" + ", ".join(f"'{s}'" for s in RUN_STATUSES) + ")", name="status"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    variant_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("variants.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(Text)
    """running, complete, budget (a budget ran out), stopped or failed."""
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(default=utcnow)
    """Time of the run's latest commit (the SQLite lease's heartbeat)."""
    finished_at: Mapped[datetime | None] = mapped_column()
    root_key: Mapped[bytes] = mapped_column(LargeBinary)
    root_notation: Mapped[str] = mapped_column(Text)
    tablebase: Mapped[bool] = mapped_column(Boolean)
    """Tablebase mode (``solve --full``): expand everything reachable."""
    max_expansions: Mapped[int | None] = mapped_column()
    max_seconds: Mapped[float | None] = mapped_column(Float)
    expansions: Mapped[int] = mapped_column(default=0)
    nodes_added: Mapped[int] = mapped_column(default=0)
    edges_added: Mapped[int] = mapped_column(default=0)
    nodes: Mapped[int] = mapped_column(default=0)
    """Nodes in the variant's graph at the latest commit."""
    edges: Mapped[int] = mapped_column(default=0)
    frontier: Mapped[int] = mapped_column(default=0)
    root_low: Mapped[int | None] = mapped_column()
    """Root lower bound at the latest commit (NULL: -infinity)."""
    root_high: Mapped[int | None] = mapped_column()
    """Root upper bound at the latest commit (NULL: +infinity)."""
    root_low_final: Mapped[bool] = mapped_column(Boolean, default=False)
    root_high_final: Mapped[bool] = mapped_column(Boolean, default=False)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    """Wall time of the run so far."""
    rss_bytes: Mapped[int | None] = mapped_column(BigInteger)
    """The solving process's resident set size at the latest commit (migration 0007)."""
    memory_limit: Mapped[int | None] = mapped_column(BigInteger)
    """The run's ``--memory-limit`` in bytes (NULL: none)."""
    resident_nodes: Mapped[int | None] = mapped_column(BigInteger)
    """Nodes of the graph the run held in RAM at the latest commit."""
    tiers_done: Mapped[int | None] = mapped_column(Integer)
    """A tiered run's tiers discovered (while discovering) or solved (while solving) at
    its latest commit (migration 0008; NULL: not tiered)."""
    tiers_total: Mapped[int | None] = mapped_column(Integer)
    """The tiers reachable from a tiered run's root."""
    units_done: Mapped[int | None] = mapped_column(Integer)
    """A tiered run's units of work (tiers and shards of tiers) discovered or solved at
    its latest commit (migration 0009; NULL: not tiered)."""
    units_total: Mapped[int | None] = mapped_column(Integer)
    """The units the run knows of in its current sweep (discovery or solving)."""
    workers: Mapped[int | None] = mapped_column(Integer)
    """The processes solving the run's units (1: the run's own)."""
    eta_seconds: Mapped[float | None] = mapped_column(Float)
    """A tiered run's estimate at its latest commit of the seconds it still needs, once
    every tier is discovered (migration 0012; NULL: not known)."""
    pid: Mapped[int] = mapped_column(Integer)
    hostname: Mapped[str] = mapped_column(Text)

    def __repr__(self) -> str:
        return f"<SolveRun {self.id} variant={self.variant_id} {self.status}>"


class Commit(Base):
    """One committed batch of a variant's solves (migration 0006): enough to replay a
    solve commit by commit. The nodes of commit *k* are those with ``id < nodes``; the
    expanded ones among them have ``expanded_in <= k``; their edges are their
    expansions'."""

    __tablename__ = "commits"

    variant_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("variants.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    """1, 2, ... per variant, across its runs."""
    run_id: Mapped[int] = mapped_column(Integer, ForeignKey("solve_runs.id", ondelete="CASCADE"))
    committed_at: Mapped[datetime] = mapped_column()
    nodes: Mapped[int] = mapped_column(Integer)
    """The variant's nodes after this commit."""
    edges: Mapped[int] = mapped_column(Integer)
    """The variant's edges after this commit."""
    expansions: Mapped[int] = mapped_column(Integer)
    """The run's expansions so far."""
    root_low: Mapped[int | None] = mapped_column(BigInteger)
    """The run root's bounds and flags after this commit (NULL: infinite)."""
    root_high: Mapped[int | None] = mapped_column(BigInteger)
    root_low_final: Mapped[bool] = mapped_column(Boolean)
    root_high_final: Mapped[bool] = mapped_column(Boolean)

    def __repr__(self) -> str:
        return f"<Commit {self.variant_id}:{self.seq} run={self.run_id} nodes={self.nodes}>"


class Tier(Base):
    """One tier of a variant's tiered full solve (migration 0008; see
    ``docs/design.md`` §5): its nodes are ids ``first_id .. first_id + nodes - 1``,
    discovered by commit ``discovered_in``; ``solved_in`` is the commit that wrote its edges
    and bounds (NULL: not solved yet)."""

    __tablename__ = "tiers"

    variant_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("variants.id", ondelete="CASCADE"), primary_key=True
    )
    tier: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    """The game's tier number (e.g. connect-four's stones on the board)."""
    ordinal: Mapped[int] = mapped_column(Integer)
    """Its place in the discovery order (parents first), from 0."""
    first_id: Mapped[int | None] = mapped_column(Integer)
    """Its first node id (migration 0016: NULL until every tier is discovered; ids are
    given in solve order)."""
    nodes: Mapped[int] = mapped_column(Integer)
    edges: Mapped[int | None] = mapped_column(BigInteger)
    """The tier's edges (its positions' moves), once solved."""
    discovered_in: Mapped[int] = mapped_column(Integer)
    solved_in: Mapped[int | None] = mapped_column(Integer)
    inner_moves: Mapped[bool | None] = mapped_column(Boolean)
    """Whether a move stays within the tier (migration 0009; NULL: not known)."""
    first_offset: Mapped[int] = mapped_column(BigInteger)
    """Its first position's place in discovery order (migration 0016): where its
    discovered positions and discovery units are."""

    def __repr__(self) -> str:
        return f"<Tier {self.variant_id}:{self.tier} {self.first_id}+{self.nodes}>"


class TierShard(Base):
    """A written shard of a tier (migration 0009): the tier's nodes ``first_id ..
    first_id + nodes - 1``, written (``step`` ``discover``), or their edges and bounds
    (``solve``), by one transaction of run ``run_id`` on process *worker*."""

    __tablename__ = "tier_shards"

    variant_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("variants.id", ondelete="CASCADE"), primary_key=True
    )
    step: Mapped[str] = mapped_column(Text, primary_key=True)
    """``discover`` (the positions' rows) or ``solve`` (their moves and values)."""
    first_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    tier: Mapped[int] = mapped_column(BigInteger)
    nodes: Mapped[int] = mapped_column(Integer)
    edges: Mapped[int] = mapped_column(BigInteger)
    run_id: Mapped[int] = mapped_column(Integer)
    worker: Mapped[str] = mapped_column(Text)
    """The process that wrote it (``host:pid``, or the Dask worker's name)."""
    seconds: Mapped[float] = mapped_column(Float)
    """Its solving and writing time."""
    written_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"<TierShard {self.variant_id}:{self.tier}@{self.first_id}>"


class DiscoveredChunk(Base):
    """A chunk of a tiered solve's discovered positions, waiting for their tier's solve
    (migration 0015): ``count`` positions from ``first_offset`` on (their place in
    discovery order: :attr:`Tier.first_offset`), as little-endian arrays: ``keys``
    (64-bit), ``dist`` (32-bit), ``terminal`` (a byte each, 1: terminal) and ``value``
    (the terminal ones' values, 64-bit). Solving the tier writes their node rows and
    deletes the chunk."""

    __tablename__ = "discovered_positions"

    variant_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("variants.id", ondelete="CASCADE"), primary_key=True
    )
    first_offset: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    count: Mapped[int] = mapped_column(Integer)
    keys: Mapped[bytes] = mapped_column(LargeBinary)
    dist: Mapped[bytes] = mapped_column(LargeBinary)
    terminal: Mapped[bytes] = mapped_column(LargeBinary)
    value: Mapped[bytes] = mapped_column(LargeBinary)

    def __repr__(self) -> str:
        return f"<DiscoveredChunk {self.variant_id}@{self.first_offset}+{self.count}>"


__all__ = [
    "NAMING_CONVENTION",
    "RUN_STATUSES",
    "Base",
    "Commit",
    "DiscoveredChunk",
    "Edge",
    "Node",
    "SolveRun",
    "Tier",
    "TierShard",
    "Variant",
    "decode_key",
    "encode_key",
    "utcnow",
]
