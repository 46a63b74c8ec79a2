"""The negamax-graph solver's entry point, :func:`solve`: it checks its options
(:class:`~solver.run.SolveOptions`) and hands the run to one runner,
a :data:`~solver.run.ModeRunner` (the ``run`` module of each mode's package).

Semantics are in DESIGN.md §1-4. In short, every node has ``low <= high`` (the least
fixpoint of ``low(n) = max -high(c)``, ``high(n) = max -low(c)``), finality flags (the
greatest fixpoint of the article's three rules) and depths (how many plies the strategy
realising each bound needs).

The runners:

* **partial** (default, :mod:`solver.partial.run`): expand *leaks* — frontier nodes
  that can still change a non-final root bound — until both root bounds are final, by
  priority, breadth first, or as a null-window search meets them (:mod:`solver.partial.search`).
* **full** (tablebase, :mod:`solver.full.run`): expand every reachable position
  breadth first, then compute bounds and depths with one retrograde pass using counters.
* **tiered** (:mod:`solver.tiers.run`): a full solve a tier at a time, into a
  database.
* **chance** (:mod:`solver.chance.run`): a game with chance nodes.

Everything works on plain ints in the compact arrays of :class:`~solver.graph.Graph`.
"""

from __future__ import annotations

from collections.abc import Callable

from solver.chance.run import run_chance
from solver.errors import InvalidParameterError, InvalidPositionError
from solver.full.run import run_full
from solver.game import Game, PositionKey
from solver.ordering import Order
from solver.partial.run import run_partial
from solver.run import (
    RESIDENT_PARTIAL,
    WORKERS_WITHOUT_TIERS,
    ChanceOptions,
    Layout,
    Limits,
    ModeRunner,
    PartialOptions,
    ProgressCallback,
    SolveOptions,
    SolveResult,
    TieredOptions,
    Until,
)
from solver.store import MemoryStore, NodeSource, Store, TierStore
from solver.tiers.run import run_tiered


def solve(
    game: Game,
    root: PositionKey | str | None = None,
    *,
    full: bool = False,
    max_expansions: int | None = None,
    max_seconds: float | None = None,
    store: Store | None = None,
    batch_size: int | None = None,
    progress: ProgressCallback | None = None,
    stop: Callable[[], bool] | None = None,
    until: Until = "bounds",
    memory_limit: int | None = None,
    tiers: bool | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    notice: Callable[[str], None] | None = None,
    shard_size: int | None = None,
    tolerance: float | None = None,
    resident_nodes: int | None = None,
    layout: Layout | None = None,
    order: Order = "game",
) -> SolveResult:
    """Solve *game* from *root* (a key, a position in the game's notation, or the game's
    initial position), continuing whatever *store* already holds for the variant.

    The solve stops when both root bounds are final (in full mode: when everything
    reachable is expanded and solved), when a budget runs out, or when *stop* returns true
    (checked between batches). Every batch is committed to *store* before the next starts,
    so stopping loses nothing; calling :func:`solve` again with the same store goes on.
    The expansion budget is exact: the batch that reaches it is cut short. The time budget
    and *stop* are checked between batches, so a run ends within one batch (and its
    commit) of them. A resumed solve retraces an uninterrupted one exactly, node for node,
    whatever stopped it — except where an expansion budget cut short a round of a game
    expanded by priority or breadth first (chess): the positions expanded after that may
    differ, never the bounds and flags the solve ends with.

    >>> from solver.games import get_game
    >>> r = solve(get_game("number-game"))
    >>> (r.low, r.high, r.low_final, r.high_final)
    (3, 5, True, True)

    :param store: where the graph lives; a fresh :class:`~solver.store.MemoryStore` if
        ``None`` (pass your own to continue a budgeted solve).
    :param batch_size: expansions per committed batch (in partial mode, the leaks of one
        round when the game has a priority or breadth-first leak order; default: grows
        with the graph, 1 while it is small, in full mode 20,000).
    :param progress: called with a :class:`~solver.store.Progress` after every batch,
        and when a long step starts (its :attr:`~solver.store.Progress.phase` names it:
        a commit, the retrograde pass, closing the run).
    :param until: ``"bounds"`` (default): a partial solve ends when both root bounds are
        final; ``"value"``: as soon as the root's value under the game's repetition rule
        is decided (e.g. a chess win: ``low = 1`` final, whatever ``high``).
    :param memory_limit: bytes of RSS the process must stay under: checked between
        batches with a reserve for the run's end (:mod:`solver.memory`); reaching it ends
        the run like a spent budget (:attr:`SolveResult.ended_by` ``"memory"``). The
        whole graph stays in RAM, so a run resumed under the same limit goes little
        further (the loaded graph is somewhat more compact than the grown one).
    :param tiers: a full solve a tier at a time (:mod:`solver.tiers.solve`): RAM holds a tier
        and what its moves reach, the store the rest. Default: when the game declares
        tiers, the store is a database (:class:`~solver.store.TierStore`) and the variant
        holds no graph solved otherwise. Budgets and *stop* are then checked between
        tiers (a tier is one commit).
    :param workers: processes solving a tiered solve's units (:mod:`solver.tiers.cluster`):
        1 (default) is this process alone; more starts a local Dask cluster of that
        many worker processes for the run.
    :param scheduler: the address of a running Dask scheduler to hand a tiered solve's
        units to (its workers reach the database), instead of *workers*.
    :param shard_size: positions per unit of a tiered solve: a shard of a tier whose
        moves all leave it (default :data:`solver.tiers.solve.SOLVE_CHUNK`), a slice of a
        discovered tier written (default :data:`solver.tiers.solve.DISCOVERY_SLICE` in this
        process, :data:`~solver.tiers.solve.SOLVE_CHUNK` on workers).
    :param tolerance: games of chance only: how close value iteration brings the two
        bounds of a position on a cycle through a chance node (default
        :data:`solver.chance.DEFAULT_TOLERANCE`; ``docs/design.md`` §10).
    :param notice: called with one-line notices for the user (the Dask cluster's
        workers and dashboard address).
    :param layout: how a database stores a tiered full solve: ``"compact"``, one row a
        position in tables by tier, keyed by the position's key, with its bounds and depths
        and no graph (``docs/design.md`` §5, "The compact layout"; a new variant only),
        ``"graph"``, or ``None``: as the variant is stored (a graph if new).
    :param order: the order in which a partial solve makes a position's moves, and so
        searches them (:mod:`solver.ordering`): ``"game"``, the game's own, or
        ``"evaluate"``, best first by the game's ordering score or evaluation (the values
        proved are the same; the positions expanded fewer where the order is good).
    :param resident_nodes: a partial depth-first solve into a database: evict after a
        commit once the graph in RAM holds more nodes than this, keeping half
        (:mod:`solver.partial.cache`; the results are the same). Default: from *memory_limit*,
        for an acyclic game (the closing pass of a game that may repeat positions loads
        the whole graph).
    :raises InvalidParameterError: for negative budgets or a bad batch size, or a full
        solve of an infinite game without a budget, or *tiers* where they cannot be, or
        workers for a solve that is not tiered.
    :raises InvalidPositionError: if *root* does not parse.
    :raises SolveError: if the game breaks its contract or the store refuses the variant.
    :raises TypeError: if *game* is not a game object (a game's name, say).
    """
    _check_game(game)
    options = SolveOptions(
        full=full,
        limits=Limits(max_expansions, max_seconds, stop, memory_limit),
        batch_size=batch_size,
        progress=progress,
        partial=PartialOptions(until, resident_nodes, order),
        tiered=TieredOptions(tiers, workers, scheduler, shard_size, notice, layout),
        chance=ChanceOptions(tolerance),
    )
    options.check(game)
    root_key = _root_key(game, root)
    store = store if store is not None else MemoryStore()
    return choose_runner(game, store, options)(game, root_key, store, options)


def choose_runner(game: Game, store: Store, options: SolveOptions) -> ModeRunner:
    """The runner of a solve of *game* into *store* under *options* (checked); refuse
    what this store cannot take (a resident budget, tiers and workers need a database).

    >>> from solver.games import get_game
    >>> choose_runner(get_game("tic-tac-toe"), MemoryStore(), SolveOptions(full=True)).__name__
    'run_full'

    :raises InvalidParameterError: for options this store, or what it holds, refuses.
    """
    if options.partial.resident_nodes is not None and not isinstance(store, NodeSource):
        raise InvalidParameterError(RESIDENT_PARTIAL)
    if game.facts.chance:
        return run_chance
    if _tiered(game, store, options):
        return run_tiered
    return run_full if options.full else run_partial


def _check_game(game: object) -> None:
    """Refuse what is not a game object (a game's name, say).

    :raises TypeError: for anything but a :class:`~solver.game.Game`.
    """
    if isinstance(game, str):
        raise TypeError(
            f"solve() takes a game object, not its name {game!r}: "
            f"use solve(solver.games.get_game({game!r}, ...))"
        )
    if not isinstance(game, Game):
        raise TypeError(
            f"solve() takes a game object (see solver.game.Game), not {type(game).__name__}"
            ": use solver.games.get_game(name, ...)"
        )


def _root_key(game: Game, root: PositionKey | str | None) -> PositionKey:
    """The key of :func:`solve`'s *root* (canonical where the game uses symmetry)."""
    if root is None:
        root_key = game.initial()
    elif isinstance(root, str):
        root_key = game.parse(root)
    elif isinstance(root, int) and not isinstance(root, bool) and root >= 0:
        root_key = root
    else:
        raise InvalidPositionError(f"root must be a position key or notation, not {root!r}")
    return game.canonical(root_key) if game.uses_symmetry else root_key


def _tiered(game: Game, store: Store, options: SolveOptions) -> bool:
    """Whether :func:`solve` goes a tier at a time (:attr:`TieredOptions.tiers` ``None``:
    when it can, on a variant not solved otherwise); refuse tiers, or workers, it cannot
    have."""
    full, tiers = options.full, options.tiered.tiers
    if tiers is None:
        tiers = (
            full
            and game.facts.tiers
            and isinstance(store, TierStore)
            and not store.solved_without_tiers(game)
        )
    elif tiers and not isinstance(store, TierStore):
        raise InvalidParameterError(
            "a tiered solve needs a database to keep its tiers in (the in-memory store "
            "holds the whole graph anyway)"
        )
    if options.tiered.layout == "compact" and not tiers:
        raise InvalidParameterError(
            "the compact layout is for tiered full solves into a database"
            + (" (this variant was solved without tiers)" if isinstance(store, TierStore) else "")
        )
    if options.tiered.distributed and not tiers:
        raise InvalidParameterError(
            WORKERS_WITHOUT_TIERS
            + (" (this variant was solved without tiers)" if isinstance(store, TierStore) else "")
        )
    return bool(tiers)


__all__ = ["choose_runner", "solve"]
