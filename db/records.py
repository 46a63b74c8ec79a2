"""Read-side records: small frozen dataclasses that outlive the session that read them.

Bounds are :class:`~solver.values.Bounds` and depths are ints, both ``None`` where infinite
as in SQL; timestamps are timezone-aware UTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from solver.game import MoveLabel, ParamValue, PositionKey
from solver.values import Bounds


def bounds_of(low: int | None, high: int | None, low_final: bool, high_final: bool) -> Bounds:
    """:class:`Bounds` from SQL columns (``NULL`` bounds are infinite, as in :class:`Bounds`).

    >>> bounds_of(None, 3, False, True)
    Bounds(None, 3, low_final=False, high_final=True)
    """
    return Bounds(low, high, bool(low_final), bool(high_final))


def aware(moment: datetime | None) -> datetime | None:
    """A stored timestamp as aware UTC (SQLite hands back naive ones)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class VariantRecord:
    """A stored game variant."""

    id: int
    game: str
    """The game's registry name."""
    params: str
    """Canonical parameter text, e.g. ``height=4,symmetry=false,width=5``."""
    params_json: Mapping[str, ParamValue] = field(compare=False, hash=False)
    """The parameters as a mapping."""
    rules_version: int
    created_at: datetime
    root_key: PositionKey | None = None
    """Root of the latest solve run (``None`` if never solved)."""
    root_position: str | None = None
    """The same root in the game's notation."""
    game_source: str | None = None
    """Where the game came from (``builtin``, ``plugin <dist> <version>``, ``reference
    <ref>``), or ``None`` if unknown."""
    layout: str = "graph"
    """``graph`` (nodes and edges) or ``compact`` (values by key: :mod:`db.compact`)."""


@dataclass(frozen=True)
class RunRecord:
    """A solve run: its options, its progress at the latest commit, and its outcome."""

    id: int
    variant_id: int
    status: str
    """``running``, ``complete``, ``budget``, ``stopped`` (on request: Ctrl-C), ``failed``,
    or ``dead``: recorded as running, but its writer is gone (killed, crashed), judged
    when read (see :func:`db.repository.list_runs`)."""
    started_at: datetime
    heartbeat_at: datetime
    """Time of the latest commit."""
    finished_at: datetime | None
    root_key: PositionKey
    root_position: str
    tablebase: bool
    """Tablebase mode (``solve --full``)."""
    max_expansions: int | None
    max_seconds: float | None
    expansions: int
    nodes_added: int
    edges_added: int
    nodes: int
    edges: int
    frontier: int
    root_bounds: Bounds
    """The root's bounds at the latest commit."""
    seconds: float
    pid: int
    hostname: str
    rss_bytes: int | None = None
    """The process's RSS at the latest commit (``None``: recorded before migration 0007)."""
    memory_limit: int | None = None
    """The run's memory limit in bytes (``None``: none, or recorded before 0007)."""
    resident_nodes: int | None = None
    """Nodes held in RAM at the latest commit."""
    tiers_done: int | None = None
    """A tiered run's tiers discovered or solved at the latest commit (``None``: not
    tiered, or recorded before migration 0008)."""
    tiers_total: int | None = None
    """The tiers reachable from a tiered run's root."""
    units_done: int | None = None
    """A tiered run's units of work done in its current sweep (tiers while discovering,
    shards while solving), as of its latest report (``None``: not tiered, or recorded
    before migration 0009)."""
    units_total: int | None = None
    """The units of its current sweep known to the run."""
    workers: int | None = None
    """The processes solving its units (1: the run's own)."""
    eta_seconds: float | None = None
    """A running tiered run's estimate at its latest commit of the seconds it still
    needs, once every tier is discovered (``None``: not known, the run has ended, or it
    was recorded before migration 0012)."""
    worker_units: tuple[WorkerUnits, ...] = ()
    """The shards each process wrote for the run (migration 0009's ``tier_shards``)."""


@dataclass(frozen=True)
class WorkerUnits:
    """What one process (``host:pid``) did for a run: shards written, their positions,
    its seconds on them."""

    worker: str
    units: int
    positions: int
    """The positions of its units of both sweeps: a position is in a unit that writes it
    discovered, then in one that solves it."""
    seconds: float
    discovered: int = 0
    """The positions of its units of the discovering sweep (written discovered)."""
    solved: int = 0
    """The positions of its units of the solving sweep (solved)."""


@dataclass(frozen=True)
class VariantSummary:
    """A variant with its size and its latest run (for listings)."""

    variant: VariantRecord
    nodes: int
    """Stored positions."""
    last_run: RunRecord | None
    """The most recent run, or ``None`` if there has been none."""
    discovered_unsolved: int = 0
    """Positions a tiered solve has discovered whose tier is not solved yet: they wait in
    ``discovered_positions`` (migration 0015) and have no node rows, so *nodes* leaves
    them out."""

    @property
    def root_bounds(self) -> Bounds | None:
        """The root's bounds after the latest run."""
        return None if self.last_run is None else self.last_run.root_bounds


@dataclass(frozen=True)
class ChanceValues:
    """A position of a game of chance: its bounds as the chance solver stored them
    (``chance_nodes``), floats rounded outwards with the exact fractions where known."""

    low: float
    high: float
    low_exact: str | None
    high_exact: str | None
    plies: float | None = None
    """The expected plies to the end under the optimal strategy (``None``: infinite, or
    stored before migration 0011)."""
    plies_exact: str | None = None
    """The same as an exact fraction where it is known."""


@dataclass(frozen=True)
class PositionRecord:
    """A stored position with its bounds (from the point of view of the player to move)."""

    variant_id: int
    node_id: int
    key: PositionKey
    """The stored (canonical) key."""
    position: str
    """The position in the game's notation."""
    bounds: Bounds
    depth_low: int | None
    """Plies within which ``bounds.low`` is guaranteed (``None``: infinite)."""
    depth_high: int | None
    """Plies the opponent can keep the mover to ``bounds.high`` (``None``: infinite)."""
    state: str
    """``unexpanded``, ``expanded`` or ``terminal``."""
    dist: int
    """Plies from the solve root where the position was first reached."""
    chance: ChanceValues | None = None
    """A game of chance's own values (``None`` for other games)."""

    @property
    def value(self) -> int | None:
        """The exact value when the bounds meet."""
        return self.bounds.value

    @property
    def is_final(self) -> bool:
        return self.bounds.is_final


@dataclass(frozen=True)
class ChildRecord:
    """One move from a position, with the resulting position's own record."""

    move: MoveLabel
    """The move in the game's notation."""
    move_order: int
    """Index among the parent's moves (the game's move order)."""
    child: PositionRecord
    """The resulting position; its bounds are from *its* mover's point of view (negate
    them for the parent's)."""


__all__ = [
    "ChanceValues",
    "ChildRecord",
    "PositionRecord",
    "RunRecord",
    "VariantRecord",
    "VariantSummary",
    "WorkerUnits",
    "aware",
    "bounds_of",
]
