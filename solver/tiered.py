"""Tiered full solves (``docs/design.md`` §5): a game's positions split into tiers that
moves only leave for *child tiers* (connect-four: the stones on the board), so the
graph is built and solved a tier at a time with only that tier and what its moves reach
in RAM, the database holding the rest.

Two sweeps over the tiers reachable from the root, each tier one commit:

1. **Discovery, parents first.** A tier's positions are those its parent tiers' moves
   found (in order of discovery) plus those its own moves find; they are stored as
   discovered (keys, distances, terminal values: no node rows yet), at the next places
   in discovery order. The keys found for tiers not discovered yet wait in RAM
   (:class:`_Found`); a resumed run finds them again by expanding the stored tiers that
   lead to them. Recording the last tier gives every tier its node ids, in solve order.
2. **Solving, children first.** A tier's positions are expanded again (the moves are
   cheap next to the database, and no edge waits in RAM for its child's id), their
   children looked up in the tier and in its solved child tiers, and
   :func:`~solver.retrograde.retrograde_arrays` computes the tier's bounds and depths with
   the child tiers' values as fixed seeds; the tier's node rows (every bound final) and
   edges are written, appended after those of the tiers solved before.

Each tier is written in *units* (:mod:`solver.units`): slices of its positions, then
shards of it solved, each a transaction of its own that any process can run (this one,
through :class:`InlineRunner`, or Dask workers, :mod:`solver.cluster`); the tier is
then recorded, and later marked solved, in one commit, in the one order above whoever
ran the units. A killed solve resumes at the first tier not recorded or not solved,
keeping the units already written.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from solver.errors import ContractError, SolveError
from solver.expand import KeyIndex, Moves, terminal_values
from solver.game import Game, PositionKey, TieredRules
from solver.memory import format_size, map_large_blocks, peak_rss, rss
from solver.store import (
    NodeShard,
    Progress,
    RunStatus,
    Shard,
    TierNodes,
    TierRecord,
    TierStore,
    TierValues,
)
from solver.tier_graph import Why, tier_order, tier_rules
from solver.units import (
    NOT_DETERMINISTIC,
    TABLES,
    ShardResult,
    SolvedTier,
    Unit,
    expand_keys,
    gaps,
    plan_shards,
    solve_shard,
    sorted_tier,
    tiers_of,
    values_columns,
    worker_name,
    write_node_shard,
)
from solver.values import DEPTH_INF, NEG_INF, POS_INF

log = logging.getLogger(__name__)

DISCOVERY_BATCH = 1 << 17
"""Positions expanded at a time while discovering a tier, at most: batches start at
:data:`FIRST_DISCOVERY_BATCH` and double while one takes less than a quarter of
:data:`DISCOVERY_REPORT` (the batch size does not change what is found, or its order)."""

FIRST_DISCOVERY_BATCH = 1024

DISCOVERY_REPORT = 2.0
"""Seconds between the progress reports of a tier's discovery (positions found and
expanded so far): a large tier takes minutes with per-position rules."""

SOLVE_CHUNK = 1 << 17
"""Positions of a unit of work (the default ``--shard-size``): a shard of a tier whose
moves all leave it solved, or, for worker processes, a slice of a discovered tier
written."""

DISCOVERY_SLICE = 1 << 23
"""Positions of a slice of a discovered tier that this process writes itself (without
``--shard-size``), each a transaction: a slice's keys land all over the key index, so
each commit rewrites index pages throughout it, and fewer, larger commits rewrite each
page fewer times (``docs/performance.md``, "Tiered full solves"). The rows are made a
chunk at a time inside the transaction, so the RAM a slice takes does not grow with it."""

REPORT_EVERY = 2.0
"""Seconds between the run row's updates while a tier's units finish."""

PRIOR_BYTES: dict[str, float] = {"discover": 200.0, "solve": 600.0}
"""Bytes of RAM a tier's step needs per position of the tier, until this run has
measured it (:meth:`TieredSolve.cost`): what the memory check keeps free for the next
tier."""


class _Found:
    """Positions of one tier in order of discovery (their index is their place), with
    each one's least distance from the root found so far: the keys found for a tier not
    discovered yet, then the tier being discovered."""

    def __init__(self) -> None:
        self.index = KeyIndex(array("q"))
        self.keys = np.zeros(1024, np.int64)
        self.dist = np.zeros(1024, np.int32)
        self.count = 0

    def add(self, keys: npt.NDArray[np.int64], dist: npt.NDArray[np.int32]) -> int:
        """Add *keys* found at distances *dist*; returns how many were new."""
        ids, new, _ = self.index.resolve(keys, self.count)
        end = self.count + int(new.size)
        if end > self.keys.size:
            size = max(end, 2 * self.keys.size)
            self.keys = np.resize(self.keys, size)
            self.dist = np.resize(self.dist, size)
        self.keys[self.count : end] = new
        self.dist[self.count : end] = np.iinfo(np.int32).max
        np.minimum.at(self.dist, ids, dist)
        self.count = end
        return int(new.size)


@dataclass(frozen=True)
class _Seeds:
    """The game's tablebase positions (:meth:`~solver.game.Game.tablebase_positions`)."""

    keys: npt.NDArray[np.int64]
    tiers: list[int]


class TieredSolve:
    """One run of a tiered full solve over a :class:`~solver.store.TierStore`."""

    def __init__(
        self,
        game: Game,
        root_key: PositionKey,
        store: TierStore,
        *,
        why: Why,
        progress_cb: Callable[[Progress], None] | None,
        memory_limit: int | None,
        runner: Runner | None = None,
        shard_size: int | None = None,
    ) -> None:
        map_large_blocks()  # a tier's arrays, once freed, go back to the system
        self.game = game
        self.rules = tier_rules(game)
        self.store = store
        self.root_key = root_key
        self.why = why
        self.ended_by: str | None = None
        self._costs: list[tuple[str, int, float]] = []
        """(step, positions, bytes a position) of the tiers this run measured."""
        self._rss_before = 0
        self._rss_peak = 0
        self._high_water = 0
        self._steps = 0
        """Tiers this run discovered or solved."""
        self.progress_cb = progress_cb
        self.memory_limit = memory_limit
        self.canon = game.canonical if game.uses_symmetry else None
        self.started = time.monotonic()
        self.expansions = 0
        """Positions this run expanded in the tiers it committed: once to discover them,
        once more to solve them (a resumed run finding its pending keys again does not
        count)."""
        self.peak_rss = 0
        self.records = store.tier_records()
        recorded = sum(r.nodes for r in self.records)
        self._unrecorded = dict(store.written_nodes(recorded))
        """Positions written for tiers not recorded yet (by first node id): stored, kept."""
        self.nodes_at_start = recorded + sum(self._unrecorded.values())
        self.edges_at_start = sum(r.edges or 0 for r in self.records)
        self.order: list[int] = []
        """The tiers in discovery order (empty while the seeds are being listed)."""
        self.root = (NEG_INF, POS_INF, DEPTH_INF, DEPTH_INF)
        """The root's low, high, depth_low, depth_high once its tier is solved."""
        self.root_solved = False
        self._solve_started: tuple[float, int] | None = None
        """(time, nodes solved) when this run started solving: the ETA's rate."""
        self.ident = store.shard_target().ident
        TABLES.clear()  # an earlier run's, in this process
        self.runner: Runner = runner if runner is not None else InlineRunner(store, self.ident)
        self.shard_size = shard_size or SOLVE_CHUNK
        self.slice_size = shard_size or (DISCOVERY_SLICE if runner is None else SOLVE_CHUNK)
        """Positions of a unit writing a discovered tier."""
        self._units = 0
        """The solving sweep's units (shards), written before or to run."""
        self._units_done = 0
        self._reported = time.monotonic()
        self._batch = FIRST_DISCOVERY_BATCH
        """Positions the discovery expands at a time (grows up to DISCOVERY_BATCH)."""
        self._discovering: deque[_Discovered] = deque()
        """Tiers whose positions are being written, in discovery order."""
        self._next_id = 0
        self._written_nodes: list[tuple[int, int]] = []
        self.unit_seconds = {"read": 0.0, "solve": 0.0, "write": 0.0}
        """The units' own seconds, summed over the units this run ran, by step."""
        self.sweep_seconds = {"discover": 0.0, "solve": 0.0}
        """This run's wall time in each sweep."""
        self.seeds = self._seeds()
        self.root_tier = self.rules.tier(root_key)
        self.order = tier_order(game, [self.root_tier, *dict.fromkeys(self.seeds.tiers)], why=why)

    # -- progress ---------------------------------------------------------------------

    def progress(self, status: RunStatus, phase: str = "expanding") -> Progress:
        records = self.records
        nodes = sum(r.nodes for r in records) + sum(self._unrecorded.values())
        edges = sum(r.edges or 0 for r in records)
        known = bool(self.order)  # not while the seeds are being listed
        solving = known and len(records) == len(self.order)
        done = sum(r.solved for r in records) if solving else len(records) if known else 0
        used = rss()
        self.peak_rss = max(self.peak_rss, used)
        low, high, _, _ = self.root
        low_final = high_final = self.root_solved
        return Progress(
            status=status,
            expansions=self.expansions,
            nodes=nodes,
            edges=edges,
            nodes_added=nodes - self.nodes_at_start,
            edges_added=edges - self.edges_at_start,
            frontier=sum(r.nodes for r in records if not r.solved) if known else 0,
            root_low=low,
            root_high=high,
            root_low_final=low_final,
            root_high_final=high_final,
            seconds=time.monotonic() - self.started,
            rss=used,
            memory_limit=self.memory_limit,
            resident_nodes=0,
            tiers_done=done,
            tiers_total=len(self.order),
            units_done=self._units_done if solving else done,
            units_total=self._units if solving else len(self.order),
            workers=self.runner.workers if known else 0,
            eta=self._eta(),
            phase=phase,
        )

    def _eta(self) -> float | None:
        """Seconds left, from this run's rate of solving (nodes a second), once every
        tier is discovered and one has been solved."""
        started = self._solve_started
        if started is None:
            return None
        t0, solved0 = started
        solved = sum(r.nodes for r in self.records if r.solved) - solved0
        left = sum(r.nodes for r in self.records if not r.solved)
        elapsed = time.monotonic() - t0
        if solved <= 0 or elapsed <= 0:
            return None
        return left * elapsed / solved

    def tell(self, phase: str) -> None:
        if self.progress_cb is not None:
            self.progress_cb(self.progress("running", phase))

    # -- the run ----------------------------------------------------------------------

    def run(self) -> RunStatus:
        """Discover the tiers not yet stored, then solve those not yet solved; returns
        ``"complete"``, or why the run ended early (checked between tiers)."""
        self._check_stored()
        if len(self.records) < len(self.order):
            pending = self._pending_after_resume()
            ended: RunStatus | None = None
            self._units = self._units_done = len(self.records)
            self._next_id = sum(r.nodes for r in self.records)
            self._written_nodes = sorted(self._unrecorded.items())
            for ordinal in range(len(self.records), len(self.order)):
                tier = self.order[ordinal]
                waiting = pending.get(tier)
                ended = self._go_on("discover", tier, waiting.count if waiting else 0)
                if ended is not None:
                    break
                self._write_tier(ordinal, *self._discover(ordinal, pending))
                self._record_written(wait=isinstance(self.runner, InlineRunner))
            self._record_written(wait=True)  # what is in flight is kept
            if ended is not None:
                return ended
        self.sweep_seconds["discover"] = time.monotonic() - self.started
        if not all(r.numbered for r in self.records):  # discovered before ids were given
            self.records = self.store.number_tiers(self.progress("running"))
        self._solve_started = (time.monotonic(), sum(r.nodes for r in self.records if r.solved))
        try:
            reason = self._solve_tiers()
        finally:
            self.sweep_seconds["solve"] = time.monotonic() - self._solve_started[0]
        if reason != "complete":
            return reason
        root = next(r for r in self.records if r.tier == self.root_tier)
        if not self.root_solved and root.solved:
            self._set_root(self.store.tier_values(root), self.store.tier_nodes(root).keys)
        return "complete"

    def _go_on(self, step: str, tier: int, nodes: int) -> RunStatus | None:
        """``None`` if the run may take its next *step* on *tier* (of about *nodes*
        positions), else how it ends (:attr:`ended_by` says why).

        :raises SolveError: if the memory limit leaves too little for the tier's step
            even to a run that has just started (it would never progress)."""
        need = int(self.cost(step, nodes) * nodes)
        why = self.why(self.expansions, need)
        if why is None:
            self._rss_before = self._rss_peak = rss()
            self._high_water = peak_rss()
            return None
        self.ended_by = why
        if why == "memory" and not self._steps:
            raise SolveError(
                f"{self.game.name}: {'discovering' if step == 'discover' else 'solving'} "
                f"tier {self.rules.tier_name(tier)} ({nodes:,} positions) needs about "
                f"{format_size(need)} more than the {format_size(rss())} in use, which the "
                "memory limit does not leave: give the solve a larger --memory-limit"
            )
        log.info("ending the run before %sing tier %d: %s", step.rstrip("e"), tier, why)
        return "stopped" if why == "request" else "budget"

    def cost(self, step: str, nodes: int) -> float:
        """Bytes a position that *step* on a tier of *nodes* positions will need: the
        most a position of this run's tiers of at least an eighth of that size needed
        (small tiers also carry the caches' growth — the SQLite page cache fills as the
        database grows — over few positions, so they only speak for tiers like them),
        else the largest tier's figure, else :data:`PRIOR_BYTES`."""
        measured = [(n, c) for s, n, c in self._costs if s == step]
        alike = [c for n, c in measured if 8 * n >= nodes]
        if alike:
            return max(alike)
        return max(measured)[1] if measured else PRIOR_BYTES[step]

    def _sample(self) -> None:
        """Note the RSS within a tier's step (its peak is the step's cost)."""
        self._rss_peak = max(self._rss_peak, rss())

    def _measure(self, step: str, nodes: int) -> None:
        """Record what the step just done cost per position of its tier: its peak over
        the RSS before it (the kernel's high-water mark, when the step raised it, sees
        the spikes between samples, such as a batch of rows being written)."""
        self._sample()
        high_water = peak_rss()
        if high_water > self._high_water:
            self._rss_peak = max(self._rss_peak, high_water)
        self.peak_rss = max(self.peak_rss, self._rss_peak)
        self._steps += 1
        if nodes < 1024:  # too small to tell
            return
        self._costs.append((step, nodes, (self._rss_peak - self._rss_before) / nodes))

    def _set_root(self, values: TierValues, keys: npt.NDArray[np.int64]) -> None:
        """The root's values, from its tier's (*keys*: the tier's positions in id order)."""
        at = int(np.flatnonzero(keys == self.root_key)[0])
        self.root = (
            int(values.low[at]),
            int(values.high[at]),
            int(values.depth_low[at]),
            int(values.depth_high[at]),
        )
        self.root_solved = True

    def _seeds(self) -> _Seeds:
        """The game's tablebase positions (canonical), and their tiers."""
        listed = self.game.tablebase_positions()
        if listed is None:
            return _Seeds(np.zeros(0, np.int64), [])
        canon = self.canon
        keys: list[PositionKey] = []
        told = time.monotonic()
        for key in listed:
            keys.append(canon(key) if canon is not None else key)
            if len(keys) % 4096 == 0 and time.monotonic() - told >= DISCOVERY_REPORT:
                told = time.monotonic()
                self.tell(f"listing the game's tablebase positions: {len(keys):,}")
        try:
            array = np.array(keys, dtype=np.int64)
        except OverflowError:
            raise SolveError(
                f"{self.game.name}: a position's key does not fit 64 bits, which a tiered "
                "solve needs: solve it with --no-tiers"
            ) from None
        return _Seeds(array, tiers_of(self.game, array).tolist())

    def _check_stored(self) -> None:
        """The stored tiers must be the game's tier order's first ones, and all the
        variant's nodes theirs."""
        tiers = [r.tier for r in self.records]
        if tiers != self.order[: len(tiers)]:
            raise SolveError(
                f"{self.game.name}: the stored tiers ({_listed(self.rules, tiers)}) are not "
                f"the game's tier order from this root ({_listed(self.rules, self.order)})"
            )
        stored = self.store.stored_nodes()
        # positions of tiers whose discovery an earlier run was writing are the solve's
        covered = max(
            [sum(r.nodes for r in self.records), *(f + n for f, n in self._unrecorded.items())]
        )
        if stored > covered:
            raise SolveError(
                f"{self.game.name}: the variant holds {stored:,} positions, "
                f"{stored - covered:,} of them solved without tiers: continue "
                "it with --no-tiers"
            )

    # -- discovery --------------------------------------------------------------------

    def _pending_after_resume(self) -> dict[int, _Found]:
        """The keys waiting for the tiers not discovered yet: the root's if nothing is
        stored; else found again by expanding the stored tiers that lead to one, in
        discovery order (so in the same order as the run that found them)."""
        undiscovered = set(self.order[len(self.records) :])
        pending: dict[int, _Found] = {}
        # The root, then the game's tablebase positions, at distance 0, in its order.
        seeds = self.seeds
        keys = np.concatenate([np.array([self.root_key], dtype=np.int64), seeds.keys])
        tiers = np.array([self.root_tier, *seeds.tiers], dtype=np.int64)
        for tier in dict.fromkeys(tiers.tolist()):
            if tier in undiscovered:
                mask = tiers == tier
                pending.setdefault(tier, _Found()).add(
                    keys[mask], np.zeros(int(mask.sum()), np.int32)
                )
        for record in self.records:
            if not undiscovered.intersection(self.rules.child_tiers(record.tier)):
                continue
            self.tell(f"resuming: expanding tier {self.rules.tier_name(record.tier)} again")
            nodes = self.store.tier_nodes(record)
            # In the order the discovery expanded them: by distance, then id.
            live = np.flatnonzero(~nodes.terminal)
            live = live[np.argsort(nodes.dist[live], kind="stable")]
            for start in range(0, live.size, DISCOVERY_BATCH):
                at = live[start : start + DISCOVERY_BATCH]
                moves = self._moves(nodes.keys[at])
                child_tiers = tiers_of(self.game, moves.keys)
                dist = np.repeat(nodes.dist[at], moves.counts).astype(np.int32) + 1
                for tier in np.unique(child_tiers).tolist():
                    if tier in undiscovered:
                        mask = child_tiers == tier
                        pending.setdefault(tier, _Found()).add(moves.keys[mask], dist[mask])
        return pending

    def _discover(self, ordinal: int, pending: dict[int, _Found]) -> tuple[TierNodes, bool, int]:
        """Find every position of tier ``order[ordinal]``: the tier's positions, whether
        a move stays within it, and how many positions were expanded.

        Breadth first by distance from the root, level by level (the keys its parent
        tiers found may lie at several distances, and a move within the tier may reach
        one of them sooner), so each position's distance is the least, as in an
        untiered breadth-first solve; within a level, in order of discovery."""
        tier = self.order[ordinal]
        name = self.rules.tier_name(tier)
        self.tell(f"discovering tier {name}")
        told = time.monotonic()
        found = pending.pop(tier, None) or _Found()
        children = set(self.rules.child_tiers(tier))
        inner = False
        expanded = 0
        terminal = np.zeros(found.keys.size, bool)
        value = np.zeros(found.keys.size, np.int64)
        done = np.zeros(found.keys.size, bool)
        while True:
            left = np.flatnonzero(~done[: found.count])
            if not left.size:
                break
            level = int(found.dist[left].min())
            todo = left[found.dist[left] == level]
            start = 0
            while start < todo.size:
                began = time.monotonic()
                at = todo[start : start + self._batch]
                start += at.size
                keys = found.keys[at]
                term, val = terminal_values(self.game, keys)
                terminal[at] = term
                value[at] = val
                done[at] = True
                live = at[~term]
                if not live.size:
                    continue
                moves = self._moves(found.keys[live])
                self._sample()
                expanded += int(live.size)
                child_tiers = tiers_of(self.game, moves.keys)
                dist = np.full(moves.keys.size, level + 1, np.int32)
                same = child_tiers == tier
                inner = inner or bool(same.any())
                if same.any() and found.add(moves.keys[same], dist[same]):
                    size = found.keys.size
                    if size > terminal.size:
                        terminal = np.resize(terminal, size)
                        value = np.resize(value, size)
                        done = np.concatenate([done, np.zeros(size - done.size, bool)])
                for child in np.unique(child_tiers[~same]).tolist():
                    mask = child_tiers == child
                    if child not in children:
                        self._wrong_tier(tier, child, found.keys[live], moves, mask)
                    pending.setdefault(child, _Found()).add(moves.keys[mask], dist[mask])
                now = time.monotonic()
                if now - began < DISCOVERY_REPORT / 4:  # fast rules: larger batches
                    self._batch = min(2 * self._batch, DISCOVERY_BATCH)
                if now - told >= DISCOVERY_REPORT:
                    told = now
                    self.tell(
                        f"discovering tier {name}: {found.count:,} positions, "
                        f"{int(done[: found.count].sum()):,} expanded"
                    )
        count = found.count
        nodes = TierNodes(
            found.keys[:count].copy(),
            found.dist[:count].copy(),
            terminal[:count].copy(),
            value[:count].copy(),
        )
        self._sample()
        return nodes, inner, expanded

    def _write_tier(self, ordinal: int, nodes: TierNodes, inner: bool, expanded: int) -> None:
        """Hand the positions of tier ``order[ordinal]`` to the runner, a shard at a
        time (those written by an earlier run of this discovery are not written again);
        the tier is recorded once they are all written (:meth:`_record_written`)."""
        tier = self.order[ordinal]
        count = int(nodes.keys.size)
        offset = self._next_id
        self._next_id += count
        self.tell(f"writing tier {self.rules.tier_name(tier)}: {count:,} positions")
        done = [(f, n) for f, n in self._written_nodes if offset <= f < offset + count]
        if done:  # an earlier run of this discovery wrote them: they must be these
            record = TierRecord(tier, ordinal, -1, count, None, first_offset=offset)
            for f, n in done:
                again = self.store.tier_nodes(record, f - offset, f - offset + n).keys
                if not np.array_equal(again, nodes.keys[f - offset : f - offset + n]):
                    raise ContractError(
                        f"{self.game.name}: the positions an earlier run wrote for tier "
                        f"{self.rules.tier_name(tier)} (nodes {f:,} on) are not this "
                        "discovery's: the game's moves are not what they were (its rules "
                        f"changed without a new version), or {NOT_DETERMINISTIC}"
                    )
        units = [
            NodeShard(tier, lo, _slice(nodes, lo - offset, hi - offset))
            for lo, hi in gaps(offset, offset + count, done, self.slice_size)
        ]
        self._discovering.append(_Discovered(tier, ordinal, offset, count, inner, expanded))
        self._discovering[-1].left = len(units)
        self._units += len(units) + len(done)
        self._units_done += len(done)
        self.runner.submit(self.game, list(units), [])

    def _record_written(self, *, wait: bool) -> None:
        """Take the units that have finished (with *wait*, all of them) and record, in
        discovery order, the tiers whose positions are all written."""
        while self._discovering:
            head = self._discovering[0]
            if head.left == 0:
                self._discovering.popleft()
                self.expansions += head.expanded  # as committed with the tier
                try:
                    record = self.store.record_tier(
                        head.tier,
                        head.ordinal,
                        head.first_offset,
                        head.count,
                        self.progress("running"),
                        inner_moves=head.inner,
                        last=head.ordinal == len(self.order) - 1,
                    )
                except BaseException:
                    self.expansions -= head.expanded
                    raise
                self.records.append(record)
                if record.numbered:  # the last: every tier has its ids now
                    self.records = self.store.tier_records()
                for first in [f for f in self._unrecorded if f < head.first_offset + head.count]:
                    del self._unrecorded[first]
                if isinstance(self.runner, InlineRunner):
                    self._measure("discover", head.count)
                if self.progress_cb is not None:
                    self.progress_cb(self.progress("running"))
                continue
            if not wait and not self.runner.ready:
                return
            result = self.runner.wait()
            self._units_done += 1
            self.unit_seconds["write"] += result.steps[2]
            if result.edges is not None:  # written by this run
                self._unrecorded[result.first_id] = result.nodes
            for found in self._discovering:
                if found.first_offset <= result.first_id < found.first_offset + found.count:
                    found.left -= 1
                    break

    def _moves(self, keys: npt.NDArray[np.int64]) -> Moves:
        return expand_keys(self.game, keys)

    def _wrong_tier(
        self,
        tier: int,
        child: int,
        parents: npt.NDArray[np.int64],
        moves: Moves,
        mask: npt.NDArray[np.bool_],
    ) -> None:
        j = int(np.argmax(mask))
        parent = int(parents[np.searchsorted(np.cumsum(moves.counts), j, side="right")])
        game = self.game
        name = self.rules.tier_name(tier)
        raise ContractError(
            f"{game.name}: the move {moves.names[int(moves.labels[j])]!r} from "
            f"{game.format(parent)!r} (tier {name}) leads to {game.format(int(moves.keys[j]))!r}"
            f" in tier {self.rules.tier_name(child)}, which is not one of tier {name}'s child "
            "tiers "
            f"({_listed(self.rules, list(self.rules.child_tiers(tier)))})"
        )

    # -- solving ----------------------------------------------------------------------

    def _solve_tiers(self) -> RunStatus:
        """Solve the tiers not solved yet, children first: each tier's shards
        (:mod:`solver.units`) once its child tiers' values are known (their shards all
        solved by this run, or all written), through the runner (this process, or Dask
        workers: several tiers at once where the tiers allow, a tier's shards solved
        while its child tiers' rows are still being written), and each tier marked
        solved, in that order, once its shards are written."""
        todo = [r for r in reversed(self.records) if not r.solved]
        base = self.store.next_commit()
        runs: dict[int, _TierRun] = {}
        for i, record in enumerate(todo):
            written = self.store.written_shards(record)
            shards = plan_shards(record, written, self.shard_size, base + i)
            runs[record.tier] = _TierRun(
                record,
                shards,
                len(written),
                complete=not written,
                name=self.rules.tier_name(record.tier),
            )
        self._units = sum(len(r.shards) + r.done for r in runs.values())
        self._units_done = sum(r.done_before for r in runs.values())
        written_tiers = {r.tier for r in self.records if r.solved}
        ready = set(written_tiers)
        """Tiers whose values the units of their parents can have."""
        started: set[int] = set()
        inline = self.runner.workers == 1 and isinstance(self.runner, InlineRunner)
        ended: RunStatus | None = None
        committed = 0
        while committed < len(todo):
            if ended is None and not (inline and self.runner.in_flight):
                for record in todo:
                    if record.tier in started:
                        continue
                    if not ready.issuperset(self._stored_children(record.tier)):
                        if inline:
                            break
                        continue
                    reason = self._go_on("solve", record.tier, record.nodes)
                    if reason is not None:
                        ended = reason
                        break
                    started.add(record.tier)
                    run = runs[record.tier]
                    self.tell(run.phase)
                    children = [self._record(c) for c in self._stored_children(record.tier)]
                    self.runner.submit(self.game, run.shards, children, self._held(children))
                    if not run.shards:
                        written_tiers.add(record.tier)
                        ready.add(record.tier)
                    if inline:
                        break
            while committed < len(todo) and todo[committed].tier in written_tiers:
                self._finish(runs[todo[committed].tier])
                committed += 1
            if committed == len(todo):
                break
            if not self.runner.in_flight:
                if ended is not None:
                    return ended
                if inline:
                    continue
                raise SolveError(f"{self.game.name}: no tier can be solved next (damaged tiers?)")
            result = self.runner.wait()
            for j, step in enumerate(("read", "solve", "write")):
                self.unit_seconds[step] += result.steps[j]
            run = runs[result.tier]
            if result.keys is not None and result.values is not None:
                if run.add_values(result) == len(run.shards):
                    run.held = run.table(run.record)
                    if run.held is not None:  # for its parents' units, before it is marked
                        TABLES.put(self.ident, run.held)
                        ready.add(result.tier)
            if result.step == "solve":  # written
                run.add_written(result)
                self._units_done += 1
                if run.done == len(run.shards):
                    written_tiers.add(result.tier)
                    ready.add(result.tier)
            now = time.monotonic()
            if now - self._reported >= REPORT_EVERY:
                self._reported = now
                self.store.report(self.progress("running"))
            if self.progress_cb is not None:
                self.progress_cb(self.progress("running", run.phase))
        return ended or "complete"

    def _held(self, children: list[TierRecord]) -> list[SolvedTier]:
        """The tiers of *children* whose values this process holds (it solved them)."""
        held = [TABLES.tables.get((self.ident, c.tier)) for c in children]
        return [
            t for t, c in zip(held, children, strict=True) if t and t.record.first_id == c.first_id
        ]

    def _stored_children(self, tier: int) -> list[int]:
        stored = {r.tier for r in self.records}
        return [c for c in self.rules.child_tiers(tier) if c in stored]

    def _record(self, tier: int) -> TierRecord:
        return next(r for r in self.records if r.tier == tier)

    def _finish(self, run: _TierRun) -> None:
        """Mark a tier whose shards are all written solved (one commit)."""
        record = run.record
        last = all(r.solved for r in self.records if r.ordinal != record.ordinal)
        self.expansions += run.expanded  # as committed with the tier
        try:
            solved = self.store.finish_tier(record, self.progress("running"), last=last)
        except BaseException:
            self.expansions -= run.expanded
            raise
        self.records[record.ordinal] = solved
        table, run.held = run.held, None  # TABLES holds it while its parents need it
        # held on: the tiers that tiers not solved yet read (this one's parents)
        waiting = {c for r in self.records if not r.solved for c in self.rules.child_tiers(r.tier)}
        TABLES.keep(self.ident, waiting)
        if table is not None and record.tier == self.root_tier:
            self._set_root(table.values, _id_ordered_keys(table))
        if isinstance(self.runner, InlineRunner):
            self._measure("solve", record.nodes)
        if self.progress_cb is not None:
            self.progress_cb(self.progress("running"))


@dataclass
class _Discovered:
    """A tier discovered, its positions being written."""

    tier: int
    ordinal: int
    first_offset: int
    """Its first position's place in discovery order."""
    count: int
    inner: bool
    expanded: int
    left: int = 0
    """Its units not finished yet."""


def _slice(nodes: TierNodes, lo: int, hi: int) -> TierNodes:
    return TierNodes(
        nodes.keys[lo:hi], nodes.dist[lo:hi], nodes.terminal[lo:hi], nodes.value[lo:hi]
    )


@dataclass
class _TierRun:
    """A tier being solved: its shards to run and what came back."""

    record: TierRecord
    shards: list[Shard]
    done_before: int
    """Shards written by earlier runs."""
    complete: bool
    """Whether this run solves every shard (and so holds the whole tier's values)."""
    name: str
    """The tier as the game names it (:meth:`~solver.game.GameBase.tier_name`)."""
    done: int = 0
    """Shards written by this run."""
    valued: int = 0
    """Shards whose values came back."""
    expanded: int = 0
    results: list[ShardResult] | None = None
    held: SolvedTier | None = None
    """The tier's values, once this run has solved all its shards."""

    @property
    def phase(self) -> str:
        return f"solving tier {self.name}: {self.record.nodes:,} positions"

    def add_values(self, result: ShardResult) -> int:
        """Keep a shard's values (the same whoever solved or wrote it: the shard's
        solution is deterministic); returns the shards whose values are in."""
        self.valued += 1
        if self.complete:
            if self.results is None:
                self.results = []
            self.results.append(result)
        return self.valued

    def add_written(self, result: ShardResult) -> None:
        self.done += 1
        if result.edges is not None:  # else written by another run of the same unit
            self.expanded += result.expanded

    def table(self, record: TierRecord) -> SolvedTier | None:
        """The tier's values from its shards, when this process solved them all."""
        if not self.complete or self.results is None:
            return None
        parts = sorted(self.results, key=lambda r: r.first_id)
        keys = np.concatenate([p.keys for p in parts if p.keys is not None])
        if keys.size != record.nodes:
            return None
        columns = [
            np.concatenate([values_columns(p.values)[j] for p in parts if p.values is not None])
            for j in range(4)
        ]
        self.results = None
        return sorted_tier(record, keys, TierValues(*columns))


class Runner(Protocol):
    """Where a tiered solve's units run: this process (:class:`InlineRunner`) or Dask
    workers (:class:`solver.cluster.DaskRunner`)."""

    workers: int
    """The processes running units."""

    @property
    def in_flight(self) -> int:
        """Units submitted and not yet returned by :meth:`wait`."""
        ...

    @property
    def ready(self) -> bool:
        """Whether :meth:`wait` would return at once."""
        ...

    def submit(
        self,
        game: Game,
        shards: Sequence[Unit],
        children: list[TierRecord],
        tables: Sequence[SolvedTier] = (),
    ) -> None:
        """Run *shards* (of one tier, whose solved child tiers are *children*, some of
        which this process holds: *tables*)."""
        ...

    def wait(self) -> ShardResult:
        """The next unit to finish (raising what it raised)."""
        ...

    def close(self) -> None:
        """Drop the units not run (they are run again by the next run)."""
        ...


class InlineRunner:
    """Runs a tiered solve's units in the solving process, one at a time."""

    workers = 1

    def __init__(self, store: TierStore, ident: str) -> None:
        self.store = store
        self.ident = ident
        self.queue: deque[tuple[Game, Unit, list[TierRecord]]] = deque()

    @property
    def in_flight(self) -> int:
        return len(self.queue)

    @property
    def ready(self) -> bool:
        return bool(self.queue)  # run when waited for

    def submit(
        self,
        game: Game,
        shards: Sequence[Unit],
        children: list[TierRecord],
        tables: Sequence[SolvedTier] = (),
    ) -> None:
        # the tables held are this process's own (TABLES): nothing to send
        self.queue.extend((game, shard, children) for shard in shards)

    def wait(self) -> ShardResult:
        game, unit, children = self.queue.popleft()
        if isinstance(unit, NodeShard):
            return write_node_shard(game, self.store, unit, worker=worker_name())
        return solve_shard(game, self.store, self.ident, unit, children)

    def close(self) -> None:
        self.queue.clear()


def _id_ordered_keys(table: SolvedTier) -> npt.NDArray[np.int64]:
    keys = np.empty_like(table.keys)
    keys[table.ids - table.record.first_id] = table.keys
    return keys


def _listed(rules: TieredRules, tiers: list[int]) -> str:
    shown = ", ".join(rules.tier_name(t) for t in tiers[:8])
    return shown + (", ..." if len(tiers) > 8 else "") if tiers else "none"


__all__ = [
    "DISCOVERY_BATCH",
    "SOLVE_CHUNK",
    "InlineRunner",
    "Runner",
    "TieredSolve",
    "tier_order",
    "tier_rules",
    "tiers_of",
]
