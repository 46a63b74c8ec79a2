"""One run of the solver over one graph held in RAM: what the partial and full runners
(:mod:`solver.partial.run`, :mod:`solver.full.run`) share.

:class:`GraphRun` holds the run's graph and root, its budgets and its bookkeeping
(progress, commits, the memory check, the result), expands nodes (through the cache of a
graph only partly resident, :mod:`solver.partial.cache`) and evicts. :func:`run_graph` opens the
store, runs a runner's loop over a :class:`GraphRun` and closes the run whatever happens.
The null-window searches (:mod:`solver.partial.search`) read and grow the run's graph as their
:class:`~solver.partial.search.SearchHost`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Literal

import numpy as np

from solver.expand import check_new_terminals, expand_node
from solver.fixpoint import decided
from solver.full.retrograde import retrograde
from solver.game import Game, PositionKey
from solver.graph import EXPANDED, TERMINAL, UNEXPANDED, Graph, NodeId
from solver.memory import RESERVE_PER_NODE, format_size, give_back, rss
from solver.ordering import move_ordering
from solver.partial.cache import Cache
from solver.partial.search import MappedHooks
from solver.run import EndedBy, SolveOptions, SolveResult, ended, game_failure, opening
from solver.store import Batch, Progress, RunOptions, RunStatus, Store
from solver.values import NEG_INF, POS_INF, clamp, encode, encode_depth

log = logging.getLogger(__name__)


class GraphRun:
    """One run of the solver over one graph (:attr:`g`, rooted at :attr:`root`; an
    eviction replaces both)."""

    def __init__(
        self,
        game: Game,
        graph: Graph,
        root_key: PositionKey,
        store: Store,
        run: RunOptions,
        options: SolveOptions,
    ) -> None:
        limits = options.limits
        self.game = game
        self.g = graph
        self.store = store
        self.full = run.full
        self.batch_size = options.batch_size
        self.progress_cb = options.progress
        self.limits = limits
        self.until = options.partial.until
        self.ordering = move_ordering(game, options.partial.order)
        """How a partial run orders a node's moves when it expands it (``None``: the
        game's order; a full run expands everything, in any order)."""
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
        """Bounded memory (:mod:`solver.partial.cache`): evicts once the graph outgrows it."""
        self._mapped_frontier: tuple[int, int, int] | None = None
        """For :meth:`frontier_size` of a mapped graph: (unexpanded nodes, stored nodes,
        expansions) at its latest commit (or when it was mapped)."""

    # -- bookkeeping ----------------------------------------------------------------

    def _ensure_root(self, key: PositionKey) -> NodeId:
        nid = self.g.find(key)  # a full run drops the index anyway: do not build it
        if nid is None:
            nid = self.g.add_node(key, 0, self.game.terminal_value(key))
            self.check_terminals(nid)
        return nid

    def frontier_size(self) -> int:
        """Unexpanded nodes. Counted in full once, then, in partial mode (see
        :meth:`start_tally`), from :attr:`_tally`: a node's state there changes only by
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
        self.store.commit(Batch.of(self.g), p)
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
            low=encode(low),
            high=encode(high),
            low_final=lf,
            high_final=hf,
            depth_low=encode_depth(g.depth_low[r]),
            depth_high=encode_depth(g.depth_high[r]),
            expansions=self.expansions,
            nodes=g.total_nodes,
            edges=g.total_edges,
            status=status,
            seconds=time.monotonic() - self.started,
            repetition_value=rep_value,
            full=self.full,
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
        expand_node(self.g, self.game, nid, self.canon, self.ordering)

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

    def start_tally(self) -> None:
        """Count the frontier from here on as :meth:`frontier_size` says (partial mode:
        the graph is only extended by this run's expansions)."""
        g = self.g
        self._tally = (
            g.num_nodes,
            g.state.count(TERMINAL),
            g.state.count(EXPANDED) - self.expansions,
        )

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


def run_graph(
    game: Game,
    root_key: PositionKey,
    store: Store,
    options: SolveOptions,
    run: RunOptions,
    start: Callable[[GraphRun], None],
    loop: Callable[[GraphRun], RunStatus],
) -> SolveResult:
    """Open *game*'s graph in *store* for *run*, *start* a :class:`GraphRun` on it (a
    cache, say), run *loop* over it, and close the run with its last progress whatever
    happens: a failure of the game's own code becomes a one-line
    :class:`~solver.errors.SolveError` (:func:`~solver.run.game_failure`)."""
    graph = store.open(game, run)
    try:
        state = GraphRun(game, graph, root_key, store, run, options)
        start(state)
    except BaseException as exc:
        store.close(opening(ended(exc), graph.num_nodes, graph.total_edges))
        raise
    try:
        status = loop(state)
        final = state.progress(status)
        state.phase("closing")
    except BaseException as exc:
        state.phase("closing")
        store.close(state.progress(ended(exc)))
        failure = game_failure(game, exc)
        if failure is not None:
            raise failure from exc
        raise
    store.close(final)
    return state.result(status)
