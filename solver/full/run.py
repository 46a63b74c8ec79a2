"""The full runner (a tablebase): expand every position reachable from the root breadth
first, then compute bounds and depths with one retrograde pass using counters
(:mod:`solver.full.retrograde`) and settle every flag.
"""

from __future__ import annotations

import logging
import time

from solver.expand import KeyIndex, expand_bulk, key_index, unexpanded_from
from solver.full.retrograde import retrograde, settle_all_flags
from solver.game import Game, PositionKey
from solver.graph import NodeId
from solver.graph_run import GraphRun, run_graph
from solver.run import SolveOptions, SolveResult
from solver.store import RunOptions, RunStatus, Store

log = logging.getLogger(__name__)


DEFAULT_FULL_BATCH = 20_000
"""Expansions per batch in full mode."""

FULL_COMMIT_GROWTH = 0.5
"""Full mode commits once its new nodes reach this fraction of the committed ones (or
:data:`DEFAULT_FULL_BATCH`, whichever is more), or :data:`FULL_COMMIT_SECONDS` after its
last commit, unless ``batch_size`` is given (then every batch is committed)."""

FULL_COMMIT_SECONDS = 30.0
"""The longest a full solve works without committing (what a crash can cost)."""


def run_full(game: Game, root_key: PositionKey, store: Store, options: SolveOptions) -> SolveResult:
    """A full solve of *game* from *root_key* into *store*, the whole graph in RAM (see
    :func:`solver.negamax.solve`)."""
    limits = options.limits
    run = RunOptions(root_key, options.full, limits.max_expansions, limits.max_seconds)
    return run_graph(
        game, root_key, store, options, run, lambda state: None, lambda s: FullRun(s).run()
    )


class FullRun:
    """The loop of a full run over *state*."""

    def __init__(self, state: GraphRun) -> None:
        self.state = state

    def run(self) -> RunStatus:
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
        state = self.state
        g = state.g
        self.seed_tablebase()
        reason = self._expand_all()
        if reason is not None:
            return reason
        log.info("expansion complete: %d nodes, %d edges", g.num_nodes, g.total_edges)
        if g.edge_loader is not None:
            state.commit()  # the loader replaces the edges with the stored ones
        state.phase("loading edges")
        g.require_edges()
        state.phase("retrograde")
        retrograde(g)
        state.phase("finality")
        settle_all_flags(g)
        state.commit(settled=True)
        return "complete"

    def _expand_all(self) -> RunStatus | None:
        """Expand batch after batch until nothing is left unexpanded (``None``; the key
        index, freed on return, makes room for the retrograde pass) or the run must end
        (how: its last batch committed)."""
        state = self.state
        g = state.g
        index = key_index(g)
        if index is not None:
            g.drop_derived()
        scan = 0
        last_commit = time.monotonic()
        while True:
            limit = state.batch_size or DEFAULT_FULL_BATCH
            limit = max(1, state.limits.cap(limit, state.expansions))
            batch = unexpanded_from(g.state, scan, limit)
            if not batch:
                return None
            reason = state.out_of_budget()
            if reason is not None:
                if index is not None:  # for the next run's index (a resume file keeps it)
                    g.key_order = index.order
                state.commit()
                return reason
            scan = batch[-1] + 1
            index = self._expand(batch, index)
            if self._commit_due(len(batch), last_commit):
                state.commit()
                last_commit = time.monotonic()
            elif state.progress_cb is not None:
                state.progress_cb(state.progress("running"))

    def _expand(self, batch: list[NodeId], index: KeyIndex | None) -> KeyIndex | None:
        """Expand *batch*, through *index* while the keys fit 64 bits; returns the index
        to go on with (``None`` from the first key beyond 64 bits: the dict)."""
        state = self.state
        g = state.g
        if index is not None and expand_bulk(g, state.game, batch, index, state.canon):
            state.expansions += len(batch)  # its terminal_values checked the values
            return index
        before = g.num_nodes
        state.expand(batch)
        state.check_terminals(before)
        return None

    def _commit_due(self, batch: int, last_commit: float) -> bool:
        """Whether the batch of *batch* expansions just done is committed (see
        :meth:`run`), the last commit made at *last_commit*."""
        state = self.state
        g = state.g
        new = g.num_nodes - g.committed_nodes
        return bool(
            state.batch_size
            or (g.after_crash and state.expansions == batch)  # a first batch
            or new >= max(DEFAULT_FULL_BATCH, g.committed_nodes * FULL_COMMIT_GROWTH)
            or time.monotonic() - last_commit >= FULL_COMMIT_SECONDS
        )

    def seed_tablebase(self) -> None:
        """Add the game's tablebase positions (if it lists any) as nodes at distance 0.

        Deterministic (the game's order, skipping stored keys), so a seeding lost to a
        crash is redone identically; committed as one batch."""
        state = self.state
        seeds = state.game.tablebase_positions()
        if seeds is None:
            return
        g, canon, terminal_value = state.g, state.canon, state.game.terminal_value
        before = g.num_nodes
        for key in seeds:
            if canon is not None:
                key = canon(key)
            if key not in g.index:
                g.add_node(key, 0, terminal_value(key))
        state.check_terminals(before)
        if g.num_nodes > before:
            log.info("seeded %d tablebase positions", g.num_nodes - before)
            state.commit()
