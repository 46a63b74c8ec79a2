"""A run's vocabulary: what :func:`solver.negamax.solve` takes, reports and gives back.

:class:`SolveOptions` holds a solve's options — its :class:`Limits` (budgets, a request to
stop, the memory limit), the batch size and progress callback, and one group of options a
mode: :class:`PartialOptions`, :class:`TieredOptions` (tiers and the processes that solve
their units), :class:`ChanceOptions` — and refuses, in :meth:`SolveOptions.check`, what no
store could take, so that a caller can refuse bad arguments before it opens (or creates)
a database (:func:`check_arguments`). A run reports :class:`~solver.store.Progress` to a
:data:`ProgressCallback` and ends with a :class:`SolveResult`; :data:`EndedBy` says what
ended it short of its target.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from solver.errors import InvalidParameterError, NegagraphError, SolveError
from solver.game import Game, PositionKey
from solver.memory import MemoryBudget, rss
from solver.ordering import Order, move_ordering
from solver.store import Progress, RunStatus, Store
from solver.values import NEG_INF, POS_INF

ProgressCallback = Callable[[Progress], None]

Until = Literal["bounds", "value"]
"""When a partial solve ends: both root bounds final, or the root's value under the
game's repetition rule decided (see :func:`solver.negamax.solve`)."""
UNTIL: tuple[Until, ...] = get_args(Until)

EndedBy = Literal["request", "expansions", "seconds", "memory", "disk"]
"""What ended a run before its target: a request to stop (Ctrl-C), the expansion budget,
the time budget, or the memory limit."""


@dataclass(frozen=True)
class Limits:
    """A run's budgets: at most *max_expansions* expansions (exact: the batch that
    reaches it is cut short), *max_seconds* of wall time, *stop* (a request to stop,
    e.g. from a signal handler) and *memory_limit* (bytes of RSS, see
    :mod:`solver.memory`; its shares in :attr:`memory`); the last three are checked
    between batches.

    >>> Limits(max_expansions=10).cap(64, done=7)
    3
    >>> Limits(max_seconds=-1)
    Traceback (most recent call last):
    ...
    solver.errors.InvalidParameterError: max_seconds must be >= 0, not -1
    """

    max_expansions: int | None = None
    max_seconds: float | None = None
    stop: Callable[[], bool] | None = None
    memory_limit: int | None = None
    memory: MemoryBudget | None = field(init=False, repr=False, compare=False)
    """The memory limit's shares (``None`` without a limit), made once, here."""

    def __post_init__(self) -> None:
        n, s = self.max_expansions, self.max_seconds
        if n is not None and n < 0:
            raise InvalidParameterError(f"max_expansions must be >= 0, not {n}")
        if s is not None and (s < 0 or math.isnan(s)):
            raise InvalidParameterError(f"max_seconds must be >= 0, not {s}")
        limit = self.memory_limit
        object.__setattr__(self, "memory", None if limit is None else MemoryBudget(limit))

    @property
    def unbounded(self) -> bool:
        """Neither an expansion nor a time budget (a request to stop is no bound)."""
        return self.max_expansions is None and self.max_seconds is None

    def deadline(self, started: float) -> float | None:
        """The :func:`time.monotonic` time at which a run started at *started* ends."""
        return None if self.max_seconds is None else started + self.max_seconds

    def cap(self, limit: int, done: int) -> int:
        """*limit* expansions, or fewer if the budget leaves fewer after *done*."""
        n = self.max_expansions
        return limit if n is None else min(limit, n - done)

    def reached(self, done: int, deadline: float | None) -> Literal["budget", "stopped"] | None:
        """``"stopped"`` if a stop was requested, ``"budget"`` if a budget is spent after
        *done* expansions (or *deadline* is past), else ``None``."""
        reason = self.why(done, deadline)
        return None if reason is None else "stopped" if reason == "request" else "budget"

    def why(self, done: int, deadline: float | None, reserve: int = 0) -> EndedBy | None:
        """What ends the run now, after *done* expansions, if anything: a request, the
        expansion budget, the time budget, or the memory limit (the process's RSS plus
        *reserve*, the bytes its end still needs, plus the
        :attr:`~solver.memory.MemoryBudget.headroom` for the next batch, reaching it)."""
        if self.stop is not None and self.stop():
            return "request"
        if self.max_expansions is not None and done >= self.max_expansions:
            return "expansions"
        if deadline is not None and time.monotonic() >= deadline:
            return "seconds"
        memory = self.memory
        if memory is not None and rss() + reserve + memory.headroom >= memory.limit:
            return "memory"
        return None


@dataclass(frozen=True)
class SolveResult:
    """What a call of :func:`solver.negamax.solve` achieved. An infinite bound is ``None``
    (:func:`solver.values.encode`); a game of chance's bounds are floats, never infinite."""

    game: str
    params: dict[str, Any]
    root: PositionKey
    """The root's key (canonical when the game uses symmetry)."""
    root_text: str
    """The root in the game's notation."""
    low: float | int | None
    """The root's low bound (``None``: -inf)."""
    high: float | int | None
    """The root's high bound (``None``: +inf)."""
    low_final: bool
    high_final: bool
    depth_low: int | None
    """Plies within which the low bound is realised (``None`` if infinite)."""
    depth_high: int | None
    expansions: int
    """Expansions done by this call (not counting earlier runs on the same store)."""
    nodes: int
    """Nodes in the stored graph after this call."""
    edges: int
    status: RunStatus
    """``complete``, ``budget`` or ``stopped``."""
    seconds: float
    repetition_value: int | None = None
    """The root's value when endless play is worth the game's repetition value."""
    full: bool = False
    ended_by: EndedBy | None = None
    """Why a run that is not complete ended (``None`` when it is complete)."""
    memory_limit: int | None = None
    """The run's memory limit in bytes, if it had one."""
    peak_rss: int = 0
    """The most memory (RSS, bytes) the run was seen using, at its batch boundaries."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Both root bounds are final (and, in full mode, everything is expanded)."""
        return self.status == "complete"

    @property
    def value(self) -> int | None:
        """The exact value when ``low == high``, else ``None``."""
        low = self.low
        return int(low) if low is not None and low == self.high else None


# -- options ------------------------------------------------------------------------------

Layout = Literal["graph", "compact"]
"""How a database stores a solve (:attr:`TieredOptions.layout`)."""
LAYOUTS: tuple[Layout, ...] = get_args(Layout)

RESIDENT_PARTIAL = "a resident budget is for partial solves into a database"

WORKERS_WITHOUT_TIERS = (
    "workers solve the units of a tiered full solve: give --full, on a game that declares "
    "tiers, into a database"
)


@dataclass(frozen=True)
class PartialOptions:
    """The options of a partial solve (:mod:`solver.partial.run`)."""

    until: Until = "bounds"
    """``"bounds"``: the run ends when both root bounds are final; ``"value"``: as soon as
    the root's value under the game's repetition rule is decided."""
    resident_nodes: int | None = None
    """Evict once the graph in RAM holds more nodes than this (:mod:`solver.partial.cache`);
    ``None``: from the memory limit, where the run can evict."""
    order: Order = "game"
    """The order in which a node's moves are made, and so searched
    (:mod:`solver.ordering`): the game's, or ``"evaluate"``, best first by the game's
    ordering score or evaluation."""


@dataclass(frozen=True)
class TieredOptions:
    """The options of a tiered full solve (:mod:`solver.tiers.solve`) and of the processes
    that solve its units (:mod:`solver.tiers.cluster`)."""

    tiers: bool | None = None
    """A tiered solve or not; ``None``: when it can be, on a variant not solved otherwise."""
    workers: int = 1
    """Processes solving the units: 1 is this process alone; more start a local cluster."""
    scheduler: str | None = None
    """The address of a running Dask scheduler to hand the units to, instead of *workers*."""
    shard_size: int | None = None
    """Positions a unit (see :func:`solver.negamax.solve`)."""
    notice: Callable[[str], None] | None = None
    """Called with one-line notices for the user (the cluster's address)."""
    layout: Layout | None = None
    """How a database stores the solve: ``"compact"`` (values by key, no graph; a new
    variant), ``"graph"``, or ``None``: as the variant is stored (a graph if new)."""

    @property
    def distributed(self) -> bool:
        """Units solved by other processes (workers or a scheduler)."""
        return self.workers > 1 or self.scheduler is not None


@dataclass(frozen=True)
class ChanceOptions:
    """The options of a game of chance's solve (:mod:`solver.chance`)."""

    tolerance: float | None = None
    """How close value iteration brings the bounds of a position on a cycle through a
    chance node (``None``: :data:`solver.chance.DEFAULT_TOLERANCE`)."""


@dataclass(frozen=True)
class SolveOptions:
    """Everything :func:`solver.negamax.solve` takes besides the game, the root and the
    store, one group a mode; :meth:`check` refuses what no store could take."""

    full: bool = False
    """Expand everything reachable (a tablebase), rather than what the root needs."""
    limits: Limits = field(default_factory=Limits)
    batch_size: int | None = None
    """Expansions a committed batch (default: chosen by the mode)."""
    progress: ProgressCallback | None = None
    partial: PartialOptions = field(default_factory=PartialOptions)
    tiered: TieredOptions = field(default_factory=TieredOptions)
    chance: ChanceOptions = field(default_factory=ChanceOptions)

    def check(self, game: Game) -> None:
        """Refuse what a solve of *game* refuses of these options whatever its store is
        and holds (the limits refused theirs when they were made).

        :raises InvalidParameterError: for what :func:`solver.negamax.solve` says it
            raises it for.
        """
        until, resident = self.partial.until, self.partial.resident_nodes
        tiered = self.tiered
        if until not in UNTIL:
            raise InvalidParameterError(f"until must be 'bounds' or 'value', not {until!r}")
        if self.batch_size is not None and self.batch_size < 1:
            raise InvalidParameterError(f"batch_size must be >= 1, not {self.batch_size}")
        if self.full and not game.facts.finite and self.limits.unbounded:
            raise InvalidParameterError(
                f"{game.name} has infinitely many positions: a full solve needs a budget "
                "(max_expansions or max_seconds)"
            )
        if tiered.workers < 1:
            raise InvalidParameterError(f"workers must be at least 1, not {tiered.workers}")
        if tiered.shard_size is not None and tiered.shard_size < 1:
            raise InvalidParameterError(f"shard_size must be at least 1, not {tiered.shard_size}")
        if tiered.layout is not None:
            _check_layout(game, self.full, tiered)
        if resident is not None:
            _check_resident(game, self.full, resident)
        if self.partial.order != "game":
            _check_order(game, self.full, self.partial.order)
        if game.facts.chance:
            _check_chance(game, self.batch_size, tiered, self.chance.tolerance)
        else:
            _check_exact(game, self.full, tiered, self.chance.tolerance)


def check_arguments(
    game: Game,
    *,
    full: bool = False,
    max_expansions: int | None = None,
    max_seconds: float | None = None,
    batch_size: int | None = None,
    until: Until = "bounds",
    tiers: bool | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    shard_size: int | None = None,
    tolerance: float | None = None,
    resident_nodes: int | None = None,
    layout: Layout | None = None,
    order: Order = "game",
) -> None:
    """Refuse what :func:`solver.negamax.solve` refuses of these arguments whatever its
    store is and holds (:meth:`SolveOptions.check`), so that a caller can refuse them
    before it opens, or creates, a database (as ``negagraph solve`` does).
    :func:`~solver.negamax.solve` checks them first, then refuses more of a store that is
    not a database (tiers, workers and a resident budget need one) or of a variant solved
    without tiers (workers).

    >>> from solver.games import get_game
    >>> check_arguments(get_game("tic-tac-toe"), full=True, workers=2)
    >>> check_arguments(get_game("number-game"), full=True)
    Traceback (most recent call last):
    ...
    solver.errors.InvalidParameterError: number-game has infinitely many positions: ...

    :raises InvalidParameterError: for what :func:`~solver.negamax.solve` says it raises
        it for.
    """
    SolveOptions(
        full=full,
        limits=Limits(max_expansions, max_seconds),  # the budgets' own checks
        batch_size=batch_size,
        partial=PartialOptions(until, resident_nodes, order),
        tiered=TieredOptions(tiers, workers, scheduler, shard_size, layout=layout),
        chance=ChanceOptions(tolerance),
    ).check(game)


def _check_layout(game: Game, full: bool, tiered: TieredOptions) -> None:
    """Refuse an unknown layout, and the compact one where no tiered full solve runs."""
    if tiered.layout not in LAYOUTS:
        raise InvalidParameterError(
            f"layout must be one of {', '.join(LAYOUTS)}, not {tiered.layout!r}"
        )
    if tiered.layout == "compact" and (
        not full or not game.facts.tiers or game.facts.chance or tiered.tiers is False
    ):
        raise InvalidParameterError(
            "the compact layout is for tiered full solves (--full, a game that declares "
            f"tiers, not --no-tiers){'' if game.facts.tiers else f'; {game.name} declares none'}"
        )


def _check_resident(game: Game, full: bool, resident_nodes: int) -> None:
    """Refuse a resident budget where :mod:`solver.partial.cache` cannot evict."""
    if resident_nodes < 1:
        raise InvalidParameterError(f"a resident budget is at least 1 node, not {resident_nodes}")
    if full or game.facts.chance:
        raise InvalidParameterError(RESIDENT_PARTIAL)
    if game.priority is not None or game.facts.leak_order == "breadth":
        raise InvalidParameterError(
            f"a resident budget is for depth-first partial solves; {game.name} expands its "
            "leaks by priority or breadth first"
        )


def _check_chance(
    game: Game, batch_size: int | None, tiered: TieredOptions, tolerance: float | None
) -> None:
    """Refuse what a game of chance's solve (one commit, one process) cannot take."""
    if batch_size is not None:
        raise InvalidParameterError(
            f"{game.name} has chance nodes: its solve commits one batch at the end of "
            "the run, so it takes no batch size"
        )
    if tiered.tiers or tiered.distributed:
        raise InvalidParameterError(
            f"{game.name} has chance nodes: its full solve runs in one process, without "
            "tiers or workers"
        )
    if tolerance is not None and not 0 < tolerance <= 1:
        raise InvalidParameterError(f"tolerance must be in (0, 1], not {tolerance}")


def _check_order(game: Game, full: bool, order: Order) -> None:
    """:raises InvalidParameterError: for a move order other than the game's in a full
    solve or a game of chance, or one the game cannot give (:mod:`solver.ordering`)."""
    if full or game.facts.chance:
        raise InvalidParameterError(
            "a move order is for partial solves of games without chance: a full solve "
            "expands every position whatever the order"
        )
    move_ordering(game, order)


def _check_exact(game: Game, full: bool, tiered: TieredOptions, tolerance: float | None) -> None:
    """Refuse a tolerance, and tiers or workers where they cannot be, in a game without
    chance."""
    tiers = tiered.tiers
    if tolerance is not None:
        raise InvalidParameterError(
            f"tolerance is for games of chance; {game.name}'s values are exact"
        )
    if tiers and not full:
        raise InvalidParameterError("tiers are for full solves (--full)")
    if tiers and not game.facts.tiers:
        raise InvalidParameterError(f"{game.name} declares no tiers")
    if tiered.distributed and (tiers is False or not full or not game.facts.tiers):
        raise InvalidParameterError(
            WORKERS_WITHOUT_TIERS + (" (not --no-tiers)" if tiers is False else "")
        )


# -- a run's end ------------------------------------------------------------------------


def game_failure(game: Game, exc: BaseException) -> SolveError | None:
    """A one-line :class:`SolveError` for *exc* if the game's own code raised it (a bug
    in a plugin, say: its traceback passes through the module of the game's class), else
    ``None`` (negagraph's own errors, Ctrl-C, failures elsewhere keep their type)."""
    if not isinstance(exc, Exception) or isinstance(exc, NegagraphError):
        return None
    source = sys.modules.get(type(game).__module__)
    path = getattr(source, "__file__", None)
    tb = exc.__traceback__
    while tb is not None:
        if path is not None and tb.tb_frame.f_code.co_filename == path:
            return SolveError(
                f"{game.name}: the game's own code failed "
                f"({type(game).__qualname__} in {path}): "
                f"{type(exc).__name__}: {exc}"
            )
        tb = tb.tb_next
    return None


def ended(exc: BaseException) -> RunStatus:
    """The status of a run that *exc* ended: Ctrl-C (a :class:`KeyboardInterrupt`) is a
    stop on request that lost the batch in flight, anything else a failure."""
    return "stopped" if isinstance(exc, KeyboardInterrupt) else "failed"


def opening(status: RunStatus, nodes: int = 0, edges: int = 0) -> Progress:
    """The progress of a run that ended before its first step (nothing done), over a
    graph of *nodes* and *edges*."""
    return Progress(
        status,
        0,
        nodes,
        edges,
        0,
        0,
        0,
        NEG_INF,
        POS_INF,
        False,
        False,
        0.0,
        phase="closing",
    )


ModeRunner = Callable[[Game, PositionKey, Store, SolveOptions], SolveResult]
"""How :func:`solver.negamax.solve` hands over a run, one a mode (``run_partial``,
``run_full``, ``run_tiered``, ``run_chance`` in the ``run`` module of each mode's
package): ``(game, root_key, store, options) -> SolveResult``, the options checked; the
runner opens the run in the store, runs it and closes it whatever happens."""


__all__ = [
    "ModeRunner",
    "UNTIL",
    "ChanceOptions",
    "EndedBy",
    "Limits",
    "PartialOptions",
    "ProgressCallback",
    "SolveOptions",
    "SolveResult",
    "TieredOptions",
    "Until",
    "check_arguments",
]
