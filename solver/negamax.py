"""The negamax-graph solver: bounds, finality, leak-driven expansion, retrograde, depths.

Semantics are in DESIGN.md §1-4. In short, every node has ``low <= high`` (the least
fixpoint of ``low(n) = max -high(c)``, ``high(n) = max -low(c)``), finality flags (the
greatest fixpoint of the article's three rules) and depths (how many plies the strategy
realising each bound needs). The public entry point is :func:`solve`.

Two modes:

* **partial** (default): expand *leaks* — frontier nodes that can still change a
  non-final root bound — and update bounds (incremental fixpoint) and finality
  (incremental greatest fixpoint) until both root bounds are final. Games with a priority
  or breadth-first leak order get batches of leaks best first; the others a null-window
  search (alpha-beta's, over the graph's exact bounds, see :meth:`_Solver.search`) that
  expands the frontier nodes it meets one at a time, committing every few of them.
* **full** (tablebase): expand every reachable position breadth first, then compute bounds
  and depths with one retrograde pass using counters.

Everything works on plain ints in the compact arrays of :class:`~solver.graph.Graph`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Literal, cast

import numpy as np

from solver.cache import Cache, NodeSource
from solver.chance import DEFAULT_TOLERANCE, solve_chance
from solver.errors import InvalidParameterError, InvalidPositionError, SolveError
from solver.expand import (
    check_new_terminals,
    expand_bulk,
    expand_node,
    key_index,
    unexpanded_from,
)
from solver.fixpoint import (
    decided,
    expanded_nodes,
    propagate_finality,
    update_bounds,
    update_depths,
    update_finality,
)
from solver.game import Game, PositionKey
from solver.graph import EXPANDED, TERMINAL, UNEXPANDED, Graph, NodeId
from solver.leaks import first_leaks, walk
from solver.memory import RESERVE_PER_NODE, RESIDENT_BYTES, format_size, give_back, rss
from solver.retrograde import retrograde, settle_all_flags
from solver.run import (
    RESIDENT_PARTIAL,
    WORKERS_WITHOUT_TIERS,
    ChanceOptions,
    EndedBy,
    Limits,
    PartialOptions,
    ProgressCallback,
    SolveOptions,
    SolveResult,
    TieredOptions,
    Until,
    ended,
    game_failure,
    opening,
)
from solver.search import MappedHooks, NullWindowSearch
from solver.store import MemoryStore, Progress, RunOptions, RunStatus, Store, TierStore
from solver.tier_graph import tier_order, tier_rules
from solver.tiered import TieredSolve
from solver.values import NEG_INF, POS_INF, clamp, depth_to_json, to_public

log = logging.getLogger(__name__)


DEFAULT_FULL_BATCH = 20_000
"""Expansions per batch in full mode."""

FULL_COMMIT_GROWTH = 0.5
"""Full mode commits once its new nodes reach this fraction of the committed ones (or
:data:`DEFAULT_FULL_BATCH`, whichever is more), or :data:`FULL_COMMIT_SECONDS` after its
last commit, unless ``batch_size`` is given (then every batch is committed)."""

FULL_COMMIT_SECONDS = 30.0
"""The longest a full solve works without committing (what a crash can cost)."""


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
    :param tiers: a full solve a tier at a time (:mod:`solver.tiered`): RAM holds a tier
        and what its moves reach, the store the rest. Default: when the game declares
        tiers, the store is a database (:class:`~solver.store.TierStore`) and the variant
        holds no graph solved otherwise. Budgets and *stop* are then checked between
        tiers (a tier is one commit).
    :param workers: processes solving a tiered solve's units (:mod:`solver.cluster`):
        1 (default) is this process alone; more starts a local Dask cluster of that
        many worker processes for the run.
    :param scheduler: the address of a running Dask scheduler to hand a tiered solve's
        units to (its workers reach the database), instead of *workers*.
    :param shard_size: positions per unit of a tiered solve: a shard of a tier whose
        moves all leave it (default :data:`solver.tiered.SOLVE_CHUNK`), a slice of a
        discovered tier written (default :data:`solver.tiered.DISCOVERY_SLICE` in this
        process, :data:`~solver.tiered.SOLVE_CHUNK` on workers).
    :param tolerance: games of chance only: how close value iteration brings the two
        bounds of a position on a cycle through a chance node (default
        :data:`solver.chance.DEFAULT_TOLERANCE`; ``docs/design.md`` §10).
    :param notice: called with one-line notices for the user (the Dask cluster's
        workers and dashboard address).
    :param resident_nodes: a partial depth-first solve into a database: evict after a
        commit once the graph in RAM holds more nodes than this, keeping half
        (:mod:`solver.cache`; the results are the same). Default: from *memory_limit*,
        for an acyclic game (the closing pass of a game that may repeat positions loads
        the whole graph).
    :raises InvalidParameterError: for negative budgets or a bad batch size, or a full
        solve of an infinite game without a budget, or *tiers* where they cannot be, or
        workers for a solve that is not tiered.
    :raises InvalidPositionError: if *root* does not parse.
    :raises SolveError: if the game breaks its contract or the store refuses the variant.
    :raises TypeError: if *game* is not a game object (a game's name, say).
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
    options = SolveOptions(
        full=full,
        limits=Limits(max_expansions, max_seconds, stop, memory_limit),
        batch_size=batch_size,
        progress=progress,
        partial=PartialOptions(until, resident_nodes),
        tiered=TieredOptions(tiers, workers, scheduler, shard_size, notice),
        chance=ChanceOptions(tolerance),
    )
    options.check(game)
    root_key = _root_key(game, root)
    store = store if store is not None else MemoryStore()
    if resident_nodes is not None and not isinstance(store, NodeSource):
        raise InvalidParameterError(RESIDENT_PARTIAL)
    limits = options.limits
    if game.facts.chance:
        return _solve_chance(game, root_key, store, options)
    if _tiered(game, store, options):
        assert isinstance(store, TierStore)
        return _solve_tiered(game, root_key, store, options)
    memory = limits.memory
    budget = resident_nodes
    if budget is None and memory is not None and _evicts(game, store, full):
        budget = memory.resident_nodes(rss())
    lazy_above = budget if budget is not None and _evicts(game, store, full) else None
    run = RunOptions(root_key, full, max_expansions, max_seconds, lazy_above=lazy_above)
    graph = store.open(game, run)
    try:
        solver = _Solver(game, graph, root_key, store, run, limits, batch_size, progress, until)
        if budget is not None:
            assert isinstance(store, NodeSource)
            from_limit = memory if resident_nodes is None else None
            # a budget from the memory limit makes room for the stored keys' filter
            solver.cache = Cache(store, game, budget, RESIDENT_BYTES if from_limit else None)
            if from_limit is not None:
                store.limit_cache(from_limit.store_cache)
        if graph.mapped:  # opened with its root alone (RunOptions.lazy_above)
            solver.start_mapped()
    except BaseException as exc:
        store.close(opening(ended(exc), graph.num_nodes, graph.total_edges))
        raise
    try:
        status = solver.run_full() if full else solver.run_partial()
        final = solver.progress(status)
        solver.phase("closing")
    except BaseException as exc:
        solver.phase("closing")
        store.close(solver.progress(ended(exc)))
        failure = game_failure(game, exc)
        if failure is not None:
            raise failure from exc
        raise
    store.close(final)
    return solver.result(status)


def _solve_chance(
    game: Game, root_key: PositionKey, store: Store, options: SolveOptions
) -> SolveResult:
    """A game of chance: in one process (:mod:`solver.chance`), under the options'
    limits (the rest checked by :meth:`SolveOptions.check`)."""
    tolerance = options.chance.tolerance
    return solve_chance(
        game,
        root_key,
        store,
        options.progress,
        DEFAULT_TOLERANCE if tolerance is None else tolerance,
        full=options.full,
        limits=options.limits,
    )


def _evicts(game: Game, store: Store, full: bool) -> bool:
    """Whether a run under a memory limit evicts (:mod:`solver.cache`) rather than ending
    at it: a depth-first partial solve of an acyclic game into a database (the closing
    pass of a game that may repeat positions needs its whole graph)."""
    return (
        not full
        and isinstance(store, NodeSource)
        and game.facts.acyclic
        and not game.facts.chance
        and game.priority is None
        and game.facts.leak_order != "breadth"
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
    if options.tiered.distributed and not tiers:
        raise InvalidParameterError(
            WORKERS_WITHOUT_TIERS
            + (" (this variant was solved without tiers)" if isinstance(store, TierStore) else "")
        )
    return bool(tiers)


def _solve_tiered(
    game: Game, root_key: PositionKey, store: TierStore, options: SolveOptions
) -> SolveResult:
    """:func:`solve` of a tiered full solve (see :class:`~solver.tiered.TieredSolve`)."""
    limits, progress, cluster = options.limits, options.progress, options.tiered
    run = RunOptions(root_key, True, limits.max_expansions, limits.max_seconds, tiered=True)
    started = time.monotonic()
    deadline = limits.deadline(started)
    solver: TieredSolve | None = None
    runner: DaskRunner | None = None

    def why(done: int, need: int) -> EndedBy | None:
        # With workers, the memory limit is theirs (Dask's), not this process's.
        return limits.why(done, deadline, 0 if runner is not None else need)

    # A child-tier relation no solve can walk is refused before the store records a run.
    try:
        tier_order(game, [tier_rules(game).tier(root_key)], why=why)
    except Exception as exc:
        failure = game_failure(game, exc)
        if failure is not None:
            raise failure from exc
        raise
    store.open(game, run)

    try:
        if cluster.distributed:
            from solver.cluster import DaskRunner

            runner = DaskRunner(
                store.shard_target(),
                workers=None if cluster.scheduler else cluster.workers,
                scheduler=cluster.scheduler,
                memory_limit=limits.memory_limit,
                tell=cluster.notice,
            )
        solver = TieredSolve(
            game,
            root_key,
            store,
            why=why,
            progress_cb=progress,
            memory_limit=limits.memory_limit,
            runner=runner,
            shard_size=cluster.shard_size,
        )
        status = solver.run()
        final = solver.progress(status, "closing")
        if progress is not None:
            progress(final)
    except BaseException as exc:
        if runner is not None:
            runner.close()
        status = ended(exc)
        closing = solver.progress(status, "closing") if solver else opening(status)
        if progress is not None:
            progress(closing)
        store.close(closing)
        failure = game_failure(game, exc)
        if failure is not None:
            raise failure from exc
        raise
    if runner is not None:
        runner.close()
    store.close(final)
    low, high, depth_low, depth_high = solver.root
    final_flag = solver.root_solved
    rep = game.repetition_value
    return SolveResult(
        game=game.name,
        params=dict(game.params),
        root=root_key,
        root_text=game.format(root_key),
        low=to_public(low),
        high=to_public(high),
        low_final=final_flag,
        high_final=final_flag,
        depth_low=depth_to_json(depth_low),
        depth_high=depth_to_json(depth_high),
        expansions=solver.expansions,
        nodes=final.nodes,
        edges=final.edges,
        status=status,
        seconds=time.monotonic() - started,
        repetition_value=(
            clamp(rep, low, high)
            if rep is not None and final_flag and decided(rep, low, high, True, True)
            else None
        ),
        full=True,
        ended_by=None if status == "complete" else cast(EndedBy | None, solver.ended_by),
        memory_limit=limits.memory_limit,
        peak_rss=solver.peak_rss,
        extra={
            "tiers": final.tiers_total,
            "units": final.units_total,
            "workers": final.workers,
            "discover_seconds": round(solver.sweep_seconds["discover"], 3),
            "solve_seconds": round(solver.sweep_seconds["solve"], 3),
            **{f"unit_{k}_seconds": round(v, 3) for k, v in solver.unit_seconds.items()},
        },
    )


class _Solver:
    """One run of the solver over one graph."""

    def __init__(
        self,
        game: Game,
        graph: Graph,
        root_key: PositionKey,
        store: Store,
        run: RunOptions,
        limits: Limits,
        batch_size: int | None,
        progress_cb: ProgressCallback | None,
        until: Until = "bounds",
    ) -> None:
        self.game = game
        self.g = graph
        self.store = store
        self.run = run
        self.batch_size = batch_size
        self.progress_cb = progress_cb
        self.limits = limits
        self.started = time.monotonic()
        self.deadline = limits.deadline(self.started)
        self.expansions = 0
        self.ended_by: EndedBy | None = None
        self.peak_rss = 0
        self._rss_at_check: int | None = None
        """The RSS at the last memory check (what a batch adds is the next reserve)."""
        self.nodes_at_start = graph.total_nodes
        self.edges_at_start = graph.total_edges
        self.canon: Callable[[PositionKey], PositionKey] | None = (
            game.canonical if game.uses_symmetry else None
        )
        facts = game.facts
        self.facts = facts
        value_range = facts.value_range
        self.vmin: int = NEG_INF if value_range is None else value_range[0]
        self.vmax: int = POS_INF if value_range is None else value_range[1]
        self.until = until
        self.searching = game.priority is None and facts.leak_order != "breadth"
        """Depth-first mode: leaks are chosen by :attr:`null_window`."""
        self.acyclic = facts.acyclic
        """The game never repeats a position: the acyclic search instead, and no
        periodic finality refreshes (flags propagated upwards are then exact)."""
        self.root = self._ensure_root(root_key)
        self._tally: tuple[int, int, int] | None = None
        """For :meth:`frontier_size` in partial mode: (nodes scanned, terminal nodes
        among them, nodes expanded before the run's first expansion)."""
        self._latest: Progress | None = None
        """The latest :meth:`progress` snapshot (what :meth:`phase` reports)."""
        self.cache: Cache | None = None
        """Bounded memory (:mod:`solver.cache`): evicts once the graph outgrows it."""
        self._mapped_frontier: tuple[int, int, int] | None = None
        """For :meth:`frontier_size` of a mapped graph: (unexpanded nodes, stored nodes,
        expansions) at its latest commit (or when it was mapped)."""
        self.null_window = NullWindowSearch(self)
        """The searches that choose the leaks in depth-first mode."""

    # -- bookkeeping ----------------------------------------------------------------

    def _ensure_root(self, key: PositionKey) -> NodeId:
        nid = self.g.find(key)  # a full run drops the index anyway: do not build it
        if nid is None:
            nid = self.g.add_node(key, 0, self.game.terminal_value(key))
            self.check_terminals(nid)
        return nid

    def frontier_size(self) -> int:
        """Unexpanded nodes. Counted in full once, then, in partial mode (see
        :meth:`run_partial`), from :attr:`_tally`: a node's state there changes only by
        an expansion, which :attr:`expansions` counts, and terminal nodes are terminal
        from their creation, so only the nodes added since the last call are scanned."""
        g = self.g
        if g.mapped:
            assert self._mapped_frontier is not None and g.gid is not None
            base, nodes, expansions = self._mapped_frontier
            gid = np.frombuffer(g.gid, dtype=np.int64)
            fresh = np.frombuffer(g.state, dtype=np.uint8)[gid >= nodes]
            return (
                base
                + int(np.count_nonzero(fresh == UNEXPANDED))
                - (self.expansions - expansions - int(np.count_nonzero(fresh == EXPANDED)))
            )
        tally = self._tally
        if tally is None:
            return g.state.count(UNEXPANDED)
        counted, terminals, expanded_before = tally
        n = g.num_nodes
        if n > counted:
            terminals += g.state.count(TERMINAL, counted, n)
            self._tally = (n, terminals, expanded_before)
        return n - terminals - expanded_before - self.expansions

    def progress(self, status: RunStatus) -> Progress:
        g, r = self.g, self.root
        used = rss()
        self.peak_rss = max(self.peak_rss, used)
        self._latest = p = Progress(
            status=status,
            expansions=self.expansions,
            nodes=g.total_nodes,
            edges=g.total_edges,
            nodes_added=g.total_nodes - self.nodes_at_start,
            edges_added=g.total_edges - self.edges_at_start,
            frontier=self.frontier_size(),
            root_low=g.low[r],
            root_high=g.high[r],
            root_low_final=bool(g.low_final[r]),
            root_high_final=bool(g.high_final[r]),
            seconds=time.monotonic() - self.started,
            rss=used,
            memory_limit=self.limits.memory_limit,
            resident_nodes=g.num_nodes,
        )
        return p

    def phase(self, name: str, latest: Progress | None = None) -> None:
        """Tell the progress callback that a long step called *name* starts (with the
        figures of *latest*, else of the latest snapshot: nothing is recounted)."""
        if self.progress_cb is None:
            return
        p = latest or self._latest or self.progress("running")
        self.progress_cb(replace(p, phase=name, seconds=time.monotonic() - self.started))

    def check_terminals(self, start: NodeId) -> None:
        """Refuse a terminal value outside the game's range among the nodes from *start*
        on (:func:`~solver.expand.check_new_terminals`: those the last step added)."""
        check_new_terminals(self.g, self.game, start, self.facts.value_range)

    def commit(self, status: RunStatus = "running", *, settled: bool = False) -> None:
        """Commit what changed as one batch. Every batch but a closing pass's leaves the
        graph unsettled (:attr:`Graph.settled`), in the same transaction."""
        p = self.progress(status)
        g = self.g
        g.settled = settled
        rows = g.num_nodes - g.committed_nodes + (g.num_nodes if g.all_dirty else len(g.dirty))
        self.phase(f"committing {rows:,} nodes", p)
        self.store.commit(self.g, p)
        if g.mapped:  # what frontier_size counts from
            self._mapped_frontier = (p.frontier, g.committed_gid, self.expansions)
        if self.progress_cb is not None:
            self.progress_cb(p)

    def out_of_budget(self) -> Literal["budget", "stopped"] | None:
        """``"budget"`` or ``"stopped"`` if the run must end before the next batch (and
        :attr:`ended_by` says why). The memory limit counts the reserve the run's end
        needs (:data:`~solver.memory.RESERVE_PER_NODE`) and what the next batch may add:
        as much as the last one did (a full solve's batches of 20,000 expansions add more
        than the limit's headroom)."""
        g = self.g
        # A mapped graph's end needs no room for the whole graph (acyclic games only:
        # the closing pass of the others loads it).
        reserve = 0 if g.mapped and self.acyclic else RESERVE_PER_NODE * g.total_nodes
        if self.limits.memory_limit is not None:
            used = rss()
            if self._rss_at_check is not None:
                reserve += max(0, used - self._rss_at_check)
            self._rss_at_check = used
        why = self.limits.why(self.expansions, self.deadline, reserve)
        if why is None:
            return None
        self.ended_by = why
        if why == "memory":
            limit = self.limits.memory_limit or 0
            log.info(
                "memory limit reached: %s in use, %s to keep for the run's end and the "
                "next batch, limit %s",
                format_size(rss()),
                format_size(reserve),
                format_size(limit),
            )
        return "stopped" if why == "request" else "budget"

    def result(self, status: RunStatus) -> SolveResult:
        g, r, game = self.g, self.root, self.game
        low, high = g.low[r], g.high[r]
        lf, hf = bool(g.low_final[r]), bool(g.high_final[r])
        rep = game.repetition_value
        rep_value = (
            clamp(rep, low, high) if rep is not None and decided(rep, low, high, lf, hf) else None
        )
        return SolveResult(
            game=game.name,
            params=dict(game.params),
            root=g.keys[r],
            root_text=game.format(g.keys[r]),
            low=to_public(low),
            high=to_public(high),
            low_final=lf,
            high_final=hf,
            depth_low=depth_to_json(g.depth_low[r]),
            depth_high=depth_to_json(g.depth_high[r]),
            expansions=self.expansions,
            nodes=g.total_nodes,
            edges=g.total_edges,
            status=status,
            seconds=time.monotonic() - self.started,
            repetition_value=rep_value,
            full=self.run.full,
            ended_by=None if status == "complete" else self.ended_by,
            memory_limit=self.limits.memory_limit,
            peak_rss=self.peak_rss,
        )

    # -- expansion ------------------------------------------------------------------

    def expand(self, batch: list[NodeId]) -> None:
        """Expand every node of *batch*: create children (terminal ones final at once)."""
        expand_one = self.expand_one
        for nid in batch:
            expand_one(nid)
        self.expansions += len(batch)

    def expand_one(self, nid: NodeId) -> None:
        """Expand *nid* (not counted in :attr:`expansions`: callers count)."""
        if self.g.mapped:
            assert self.cache is not None
            self.cache.expand(nid)
            return
        expand_node(self.g, self.game, nid, self.canon)

    def load_stub(self, nid: NodeId) -> None:
        assert self.cache is not None
        self.cache.load_stub(nid)

    def mapped_hooks(self) -> MappedHooks | None:
        cache = self.cache
        if cache is None or cache.filter is None:
            return None
        return cache.load_stub, cache.lookup, cache.reveal, cache.filter

    def start_mapped(self) -> None:
        """Take a graph the store opened with only its root resident (its last run closed
        cleanly: bounds, flags and depths are exact as stored)."""
        g, cache = self.g, self.cache
        assert cache is not None and g.mapped and g.frontier_hint is not None
        cache.attach(g)
        g.track_depths = True
        self._mapped_frontier = (g.frontier_hint, g.committed_gid, self.expansions)
        self.phase("reading the stored keys")
        cache.remember_stored(g.committed_gid)
        if g.stub[self.root]:
            cache.load_stub(self.root)

    def _evicting(self) -> bool:
        """Whether a resident budget calls for an eviction after this batch."""
        cache = self.cache
        return cache is not None and self.g.num_nodes > cache.limit()

    def batch_cap(self) -> int:
        """The most expansions a depth-first batch takes: :data:`BATCH_CAP`, or once the
        run has evicted a share of its budget when that is more
        (:data:`BATCH_BUDGET_SHARE`). A graph that fits its budget is committed as with
        no budget at all, however much RAM the machine has."""
        if self.cache is None or not self.g.mapped:
            return BATCH_CAP
        return max(BATCH_CAP, self.cache.budget // BATCH_BUDGET_SHARE)

    def before_eviction(self) -> None:
        """Before the commit after which a run first evicts, an acyclic game's graph gets
        its depths exact (one retrograde pass, while the whole graph is in RAM): from
        then on they are kept exact as bounds change (:func:`update_depths`), since the
        closing pass will not see the whole graph."""
        if self.acyclic and not self.g.mapped and self._evicting():
            self.phase("retrograde")
            retrograde(self.g)

    def evict_if_due(self) -> None:
        """After a commit: evict if the graph in RAM outgrew the cache's budget."""
        cache = self.cache
        if cache is None or not self._evicting():
            return
        self.evict(cache.limit() // 2)

    def evict(self, keep: int) -> None:
        """Keep about *keep* nodes resident (:meth:`Cache.evict`; everything committed,
        with exact depths for an acyclic game: see :meth:`before_eviction`)."""
        cache = self.cache
        assert cache is not None
        g = self.g
        if not g.mapped:
            self._mapped_frontier = (self.frontier_size(), g.num_nodes, self.expansions)
        self.phase("evicting")
        self.g, self.root = cache.evict(g, self.root, keep)
        del g
        self.g.track_depths = self.acyclic
        self._tally = None
        give_back()

    def unmap(self) -> None:
        """The whole graph back in RAM for the closing pass of a game that may repeat
        (exact finality and depths around cycles need it); an acyclic game's mapped
        graph has its depths exact already."""
        if self.g.mapped and not self.acyclic:
            assert self.cache is not None
            self.phase("loading the graph")
            self.g, self.root = self.cache.unmap(self.g, self.g.keys[self.root])
            self._tally = None
            self._mapped_frontier = None

    # -- partial mode ----------------------------------------------------------------

    def run_partial(self) -> RunStatus:
        """Expand leaks in batches until both root bounds are final (or the run ends).

        Every choice depends only on the graph as committed after the previous batch (its
        bounds, flags and size), so a run stopped at any batch boundary — by a budget,
        Ctrl-C or kill -9 — and resumed takes exactly the steps an uninterrupted run would.
        """
        g = self.g
        if self.target_reached():
            if not g.settled:
                # A run died after its last batch and before its closing pass committed:
                # finish that pass now (or the depths and flags would stay wrong for good).
                log.info("the root is decided but the last run did not close: closing")
                self.close_pass("complete")
            elif g.dirty or g.all_dirty or g.committed_nodes < g.num_nodes:
                # what the store's loader settled (e.g. expanded states), or a new root
                # that is terminal
                self.commit(settled=True)
            return "complete"
        if g.committed_nodes and not g.mapped:
            # A stored graph: recompute bounds (and depths) from scratch once, so the
            # incremental updates below start from the exact fixpoint whatever wrote it
            # (a mapped one was opened so only after a run that closed cleanly).
            self.phase("retrograde")
            retrograde(g)
        self._tally = (
            g.num_nodes,
            g.state.count(TERMINAL),
            g.state.count(EXPANDED) - self.expansions,
        )
        status: RunStatus = "complete"
        expanded = g.state.count(EXPANDED)
        while not self.target_reached():
            del g  # an eviction below replaces the graph: no old one kept alive
            reason = self.out_of_budget()
            g = self.g
            if reason is not None:
                status = reason
                break
            before = g.num_nodes
            if self.searching:
                limit = self.batch_size or min(
                    self.batch_cap(), max(1, g.total_nodes // BATCH_SHARE)
                )
                # exact; and a restarted search retraces
                limit = self.limits.cap(limit, self.expansions)
                search = self.null_window
                done = search.search_acyclic(limit) if self.acyclic else search.search(limit)
                self.check_terminals(before)
                if done:
                    if not self.acyclic and refresh_due(
                        expanded, expanded + done, SEARCH_REFRESH_SMALL
                    ):
                        self.refresh_finality()
                    expanded += done
                    self.before_eviction()
                    self.commit()
                    self.evict_if_due()
                    g = self.g
                    continue
            batch = self.select_batch()
            if not batch:
                # Only flags that hold around cycles can be stale now: settle them.
                self.refresh_finality()
                if self.target_reached():
                    break
                batch = self.select_batch()
                if not batch:
                    raise SolveError(
                        "internal error: a root bound is not final but no leak was found"
                    )
            batch = batch[: self.limits.cap(len(batch), self.expansions)]  # exact
            self.expand(batch)
            self.check_terminals(before)
            changed = update_bounds(g, batch)
            seeds = list(batch)
            for n in changed:
                seeds.append(n)
                seeds.extend(g.parents(n))
            propagate_finality(g, seeds, vmin=self.vmin, vmax=self.vmax)
            if g.track_depths:
                update_depths(g, seeds)
            if (
                self.game.priority is not None
                or self.facts.leak_order == "breadth"
                or refresh_due(expanded, expanded + len(batch))
            ):
                self.refresh_finality()
            expanded += len(batch)
            self.before_eviction()
            self.commit()
            self.evict_if_due()
            g = self.g
        self.unmap()
        self.close_pass(status)
        return status

    def close_pass(self, status: RunStatus) -> None:
        """The end of a partial run, committed as one batch that settles the graph: depths
        by one retrograde pass (the bounds are already the fixpoint) and, when the run is
        complete and the game may repeat, exact finality over the whole graph (not only
        the root's region; flags propagated upwards are exact already when the game is
        acyclic). A function of the committed graph alone, so a run that finds it missing
        (:attr:`Graph.settled` false: a crash after the last batch) redoes it exactly."""
        g = self.g
        if g.mapped:  # acyclic (see unmap): bounds, flags and depths are exact
            self.commit(settled=True)
            return
        self.phase("retrograde")
        # The key index and the reverse edges (~40 bytes a node) are not needed past this
        # point (the cyclic finality pass rebuilds the reverse edges after the retrograde
        # pass): freed first, they make room for the retrograde pass's own arrays.
        g.drop_derived()
        retrograde(g)
        if status == "complete" and not self.acyclic:
            self.phase("finality")
            everything = expanded_nodes(g)
            update_finality(g, everything, everything, vmin=self.vmin, vmax=self.vmax)
        self.commit(settled=True)

    def target_reached(self) -> bool:
        """Both root bounds are final — or, with ``until="value"``, the root's value under
        the game's repetition rule is decided (a final bound on the right side of it)."""
        g, r = self.g, self.root
        lf, hf = g.low_final[r], g.high_final[r]
        if lf and hf:
            return True
        rep = self.game.repetition_value
        if self.until != "value" or rep is None:
            return False
        return decided(rep, g.low[r], g.high[r], bool(lf), bool(hf))

    def refresh_finality(self) -> None:
        """Exact finality (the greatest fixpoint) on the region the root depends on."""
        if self.cache is not None and self.g.mapped:
            self.cache.load_region(self.root, lambda g, r: walk(g, r)[2])
        lows, highs, _ = walk(self.g, self.root)
        update_finality(self.g, lows, highs, vmin=self.vmin, vmax=self.vmax)

    def select_batch(self) -> list[NodeId]:
        """The leaks to expand next: by the game's priority over all leaks if it has one,
        breadth first over all leaks if the game asks for it (``leak_order =
        "breadth"``: short forced wins, as in chess), else the leftmost ones of a
        depth-first walk in move order."""
        g = self.g
        prio = self.game.priority
        breadth = self.facts.leak_order == "breadth"
        if prio is None and not breadth:
            k = self.batch_size or max(1, g.total_nodes // LEAK_SHARE)
            if self.cache is not None and g.mapped:
                root = self.root
                self.cache.load_region(root, lambda g, r: first_leaks(g, r, k)[0])
            return first_leaks(g, self.root, k)[0]
        leaks = walk(g, self.root)[2]
        if prio is None:
            dist = g.dist
            leaks.sort(key=lambda n: (dist[n], n))
        else:
            keys = g.keys
            leaks.sort(key=lambda n: (prio(keys[n]), n))
        return leaks[: self.batch_size or max(1, g.num_nodes // 64, len(leaks) // 4)]

    # -- full mode -------------------------------------------------------------------

    def seed_tablebase(self) -> None:
        """Add the game's tablebase positions (if it lists any) as nodes at distance 0.

        Deterministic (the game's order, skipping stored keys), so a seeding lost to a
        crash is redone identically; committed as one batch."""
        seeds = self.game.tablebase_positions()
        if seeds is None:
            return
        g, canon, terminal_value = self.g, self.canon, self.game.terminal_value
        before = g.num_nodes
        for key in seeds:
            if canon is not None:
                key = canon(key)
            if key not in g.index:
                g.add_node(key, 0, terminal_value(key))
        self.check_terminals(before)
        if g.num_nodes > before:
            log.info("seeded %d tablebase positions", g.num_nodes - before)
            self.commit()

    def run_full(self) -> RunStatus:
        """Expand every reachable node breadth first, then one retrograde pass.

        Expansion goes in batches of ``batch_size`` (default :data:`DEFAULT_FULL_BATCH`);
        with a ``batch_size`` every batch is committed, else commits come once the new
        nodes reach half of those committed (:data:`FULL_COMMIT_GROWTH`) or every
        :data:`FULL_COMMIT_SECONDS`, so a big solve commits a few dozen times, not
        thousands (each SQLite commit rewrites the pages of the key index it touched,
        which is nearly all of them); after a run that died (``Graph.after_crash``) the
        first batch is committed at once too, so that a solve killed again and again
        still progresses. The nodes found after the last commit are written once, with
        their final values. With 64-bit keys
        the batches go through :func:`expand_bulk` (a :class:`~solver.expand.KeyIndex`
        instead of the dict, no reverse edges until needed)."""
        g = self.g
        self.seed_tablebase()
        index = key_index(g)
        if index is not None:
            g.drop_derived()
        scan = 0
        last_commit = time.monotonic()
        while True:
            limit = self.batch_size or DEFAULT_FULL_BATCH
            limit = max(1, self.limits.cap(limit, self.expansions))
            batch = unexpanded_from(g.state, scan, limit)
            if not batch:
                break
            reason = self.out_of_budget()
            if reason is not None:
                if index is not None:  # for the next run's index (a resume file keeps it)
                    g.key_order = index.order
                self.commit()
                return reason
            scan = batch[-1] + 1
            if index is not None and expand_bulk(g, self.game, batch, index, self.canon):
                self.expansions += len(batch)  # its terminal_values checked the values
            else:
                index = None  # keys beyond 64 bits: the dict from now on
                before = g.num_nodes
                self.expand(batch)
                self.check_terminals(before)
            new = g.num_nodes - g.committed_nodes
            if (
                self.batch_size
                or (g.after_crash and self.expansions == len(batch))  # a first batch
                or new >= max(DEFAULT_FULL_BATCH, g.committed_nodes * FULL_COMMIT_GROWTH)
                or time.monotonic() - last_commit >= FULL_COMMIT_SECONDS
            ):
                self.commit()
                last_commit = time.monotonic()
            elif self.progress_cb is not None:
                self.progress_cb(self.progress("running"))
        log.info("expansion complete: %d nodes, %d edges", g.num_nodes, g.total_edges)
        del index
        if g.edge_loader is not None:
            self.commit()  # the loader replaces the edges with the stored ones
        self.phase("loading edges")
        g.require_edges()
        self.phase("retrograde")
        retrograde(g)
        self.phase("finality")
        settle_all_flags(g)
        self.commit(settled=True)
        return "complete"


# -- the algorithms, as plain functions over a Graph ----------------------------------

BATCH_SHARE = 32
"""A depth-first partial batch expands up to the graph's nodes / this (each batch one
commit: into SQLite a commit's fixed cost and the rows it rewrites made 1/256 a third
slower on connect-four 5 x 4, docs/performance.md)..."""

BATCH_CAP = 65_536
"""... and at most this many (what a batch adds to RAM between two memory checks, and
to an evicting run's resident nodes between two evictions, stays bounded)."""

BATCH_BUDGET_SHARE = 32
"""... unless an evicting run's budget / this is more, once it has evicted: a large
budget commits in larger batches, as each commit rewrites index pages all over a large
database file, the more of them a key the fewer keys a commit inserts
(docs/performance.md, "Eviction"). A batch adds a few nodes an expansion, so the resident
nodes stay within about a tenth over the budget between evictions. Budgets up to 2 M
nodes keep :data:`BATCH_CAP`."""

LEAK_SHARE = 256
"""A batch of leaks chosen by walking the graph (games that expand by priority or
breadth first, and the general search's fallback) takes up to its nodes / this."""

SEARCH_REFRESH_SMALL = 64
"""With the null-window search, exact refreshes run on every batch only while fewer nodes
than this are expanded (the search reads flags only to skip hopeless tests; acyclic games
need no refresh at all), then at the geometric steps below."""
REFRESH_GROWTH = 1.25
"""In depth-first mode, finality is refreshed exactly whenever the number of expanded
nodes grows past a power of this factor (and on every batch while the graph is small)."""


def refresh_due(before: int, after: int, small: int = 2048) -> bool:
    """Whether growing from *before* to *after* expanded nodes calls for an exact refresh.

    A pure function of the graph's size, so interrupted and uninterrupted solves refresh at
    the same batches; the refreshes cost a geometric series, a few times the graph (plus
    one per batch while fewer than *small* nodes are expanded).
    """
    if after < small:
        return True
    step = math.log(REFRESH_GROWTH)
    return int(math.log(after) / step) > int(math.log(max(before, 1)) / step)


__all__ = ["DEFAULT_FULL_BATCH", "solve"]
