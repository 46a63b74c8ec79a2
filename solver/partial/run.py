"""The partial runner: expand *leaks* — frontier nodes that can still change a non-final
root bound — and update bounds (incremental fixpoint) and finality (incremental greatest
fixpoint) until both root bounds are final (or, with ``until="value"``, the root's value
is decided).

Games with a priority or breadth-first leak order get batches of leaks best first; the
others a null-window search (alpha-beta's, over the graph's exact bounds:
:class:`~solver.partial.search.NullWindowSearch`) that expands the frontier nodes it meets one at
a time, committing every few of them. A depth-first partial solve into a database may
evict (:mod:`solver.partial.cache`): its resident budget comes from ``resident_nodes`` or the
memory limit (:class:`~solver.memory.MemoryBudget`).
"""

from __future__ import annotations

import logging
import math

from solver.errors import SolveError
from solver.fixpoint import (
    expanded_nodes,
    propagate_finality,
    update_bounds,
    update_depths,
    update_finality,
    with_parents,
)
from solver.full.retrograde import retrograde
from solver.game import Game, PositionKey
from solver.graph import EXPANDED, NodeId
from solver.graph_run import GraphRun, run_graph
from solver.memory import RESIDENT_BYTES, rss
from solver.partial.cache import Cache
from solver.partial.leaks import first_leaks, walk
from solver.partial.search import NullWindowSearch
from solver.run import SolveOptions, SolveResult
from solver.store import NodeSource, RunOptions, RunStatus, Store

log = logging.getLogger(__name__)


def run_partial(
    game: Game, root_key: PositionKey, store: Store, options: SolveOptions
) -> SolveResult:
    """A partial solve of *game* from *root_key* into *store* (see
    :func:`solver.negamax.solve`)."""
    limits = options.limits
    memory = limits.memory
    resident = options.partial.resident_nodes
    evicts = _evicts(game, store)
    budget = resident
    if budget is None and memory is not None and evicts:
        budget = memory.resident_nodes(rss())
    lazy_above = budget if budget is not None and evicts else None
    run = RunOptions(
        root_key, options.full, limits.max_expansions, limits.max_seconds, lazy_above=lazy_above
    )

    def start(state: GraphRun) -> None:
        if budget is not None:
            assert isinstance(store, NodeSource)
            from_limit = memory if resident is None else None
            # a budget from the memory limit makes room for the stored keys' filter
            state.cache = Cache(
                store, game, budget, RESIDENT_BYTES if from_limit else None, state.ordering
            )
            if from_limit is not None:
                store.limit_cache(from_limit.store_cache)
        if state.g.mapped:  # opened with its root alone (RunOptions.lazy_above)
            state.start_mapped()

    return run_graph(game, root_key, store, options, run, start, lambda s: PartialRun(s).run())


def _evicts(game: Game, store: Store) -> bool:
    """Whether a partial run under a memory limit evicts (:mod:`solver.partial.cache`) rather
    than ending at it: a depth-first partial solve of an acyclic game into a database (the
    closing pass of a game that may repeat positions needs its whole graph)."""
    return (
        isinstance(store, NodeSource)
        and game.facts.acyclic
        and not game.facts.chance
        and game.priority is None
        and game.facts.leak_order != "breadth"
    )


class PartialRun:
    """The loop of a partial run over *state*."""

    def __init__(self, state: GraphRun) -> None:
        self.state = state
        game = state.game
        self.searching = game.priority is None and game.facts.leak_order != "breadth"
        """Depth-first mode: leaks are chosen by :attr:`search`."""
        self.search = NullWindowSearch(state)
        """The searches that choose the leaks in depth-first mode."""

    def run(self) -> RunStatus:
        """Expand leaks in batches until the target is reached (or the run ends).

        Every choice depends only on the graph as committed after the previous batch (its
        bounds, flags and size), so a run stopped at any batch boundary — by a budget,
        Ctrl-C or kill -9 — and resumed takes exactly the steps an uninterrupted run would.
        """
        state = self.state
        if state.target_reached():
            self._close_decided()
            return "complete"
        if state.g.committed_nodes and not state.g.mapped:
            # A stored graph: recompute bounds (and depths) from scratch once, so the
            # incremental updates below start from the exact fixpoint whatever wrote it
            # (a mapped one was opened so only after a run that closed cleanly).
            state.phase("retrograde")
            retrograde(state.g)
        state.start_tally()
        status: RunStatus = "complete"
        expanded = state.g.state.count(EXPANDED)
        while not state.target_reached():
            reason = state.out_of_budget()
            if reason is not None:
                status = reason
                break
            before = state.g.num_nodes
            done = self._search_batch(expanded, before) if self.searching else 0
            if not done:
                done = self._leak_batch(expanded, before)
                if not done:
                    break  # the refreshed flags reach the target
            expanded += done
            state.before_eviction()
            state.commit()
            state.evict_if_due()  # (no graph is held here: an eviction frees the old one)
        state.unmap()
        self.close_pass(status)
        return status

    def _close_decided(self) -> None:
        """The target is reached as the run starts: close what the last run left open."""
        state = self.state
        g = state.g
        if not g.settled:
            # A run died after its last batch and before its closing pass committed:
            # finish that pass now (or the depths and flags would stay wrong for good).
            log.info("the root is decided but the last run did not close: closing")
            self.close_pass("complete")
        elif g.dirty or g.all_dirty or g.committed_nodes < g.num_nodes:
            # what the store's loader settled (e.g. expanded states), or a new root
            # that is terminal
            state.commit(settled=True)

    def _search_batch(self, expanded: int, before: int) -> int:
        """A batch of the null-window search, after *expanded* expansions, over a graph of
        *before* nodes; returns its expansions (0 when it found no leak)."""
        state = self.state
        limit = state.batch_size or min(
            self.batch_cap(), max(1, state.g.total_nodes // BATCH_SHARE)
        )
        # exact; and a restarted search retraces
        limit = state.limits.cap(limit, state.expansions)
        search = self.search
        done = search.search_acyclic(limit) if state.acyclic else search.search(limit)
        state.check_terminals(before)
        if (
            done
            and not state.acyclic
            and refresh_due(expanded, expanded + done, SEARCH_REFRESH_SMALL)
        ):
            self.refresh_finality()
        return done

    def _leak_batch(self, expanded: int, before: int) -> int:
        """A batch of leaks by :meth:`select_batch`, after *expanded* expansions, over a
        graph of *before* nodes; returns its expansions (0: none needed, the refreshed
        flags reach the target)."""
        state = self.state
        batch = self.select_batch()
        if not batch:
            # Only flags that hold around cycles can be stale now: settle them.
            self.refresh_finality()
            if state.target_reached():
                return 0
            batch = self.select_batch()
            if not batch:
                raise SolveError("internal error: a root bound is not final but no leak was found")
        batch = batch[: state.limits.cap(len(batch), state.expansions)]  # exact
        g = state.g
        state.expand(batch)
        state.check_terminals(before)
        changed = update_bounds(g, batch)
        seeds = [*batch, *with_parents(g, changed)]
        propagate_finality(g, seeds, vmin=state.vmin, vmax=state.vmax)
        if g.track_depths:
            update_depths(g, seeds)
        if not self.searching or refresh_due(expanded, expanded + len(batch)):
            self.refresh_finality()
        return len(batch)

    def batch_cap(self) -> int:
        """The most expansions a depth-first batch takes: :data:`BATCH_CAP`, or once the
        run has evicted a share of its budget when that is more
        (:data:`BATCH_BUDGET_SHARE`). A graph that fits its budget is committed as with
        no budget at all, however much RAM the machine has."""
        cache = self.state.cache
        if cache is None or not self.state.g.mapped:
            return BATCH_CAP
        return max(BATCH_CAP, cache.budget // BATCH_BUDGET_SHARE)

    def close_pass(self, status: RunStatus) -> None:
        """The end of a partial run, committed as one batch that settles the graph: depths
        by one retrograde pass (the bounds are already the fixpoint) and, when the run is
        complete and the game may repeat, exact finality over the whole graph (not only
        the root's region; flags propagated upwards are exact already when the game is
        acyclic). A function of the committed graph alone, so a run that finds it missing
        (:attr:`Graph.settled` false: a crash after the last batch) redoes it exactly."""
        state = self.state
        g = state.g
        if g.mapped:  # acyclic (see unmap): bounds, flags and depths are exact
            state.commit(settled=True)
            return
        state.phase("retrograde")
        # The key index and the reverse edges (~40 bytes a node) are not needed past this
        # point (the cyclic finality pass rebuilds the reverse edges after the retrograde
        # pass): freed first, they make room for the retrograde pass's own arrays.
        g.drop_derived()
        retrograde(g)
        if status == "complete" and not state.acyclic:
            state.phase("finality")
            everything = expanded_nodes(g)
            update_finality(g, everything, everything, vmin=state.vmin, vmax=state.vmax)
        state.commit(settled=True)

    def refresh_finality(self) -> None:
        """Exact finality (the greatest fixpoint) on the region the root depends on."""
        state = self.state
        if state.cache is not None and state.g.mapped:
            state.cache.load_region(state.root, lambda g, r: walk(g, r)[2])
        lows, highs, _ = walk(state.g, state.root)
        update_finality(state.g, lows, highs, vmin=state.vmin, vmax=state.vmax)

    def select_batch(self) -> list[NodeId]:
        """The leaks to expand next: by the game's priority over all leaks if it has one,
        breadth first over all leaks if the game asks for it (``leak_order =
        "breadth"``: short forced wins, as in chess), else the leftmost ones of a
        depth-first walk in move order."""
        state = self.state
        g = state.g
        prio = state.game.priority
        if self.searching:
            k = state.batch_size or max(1, g.total_nodes // LEAK_SHARE)
            if state.cache is not None and g.mapped:
                root = state.root
                state.cache.load_region(root, lambda g, r: first_leaks(g, r, k)[0])
            return first_leaks(g, state.root, k)[0]
        leaks = walk(g, state.root)[2]
        if prio is None:
            dist = g.dist
            leaks.sort(key=lambda n: (dist[n], n))
        else:
            keys = g.keys
            leaks.sort(key=lambda n: (prio(keys[n]), n))
        return leaks[: state.batch_size or max(1, g.num_nodes // 64, len(leaks) // 4)]


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
