"""Tiered full solves (``docs/design.md`` §5): a game's positions split into tiers that
moves only leave for *child tiers* (connect-four: the stones on the board), so the
graph is built and solved a tier at a time with only that tier and what its moves reach
in RAM, the database holding the rest.

Two sweeps over the tiers reachable from the root, each tier one commit:

1. **Discovery, parents first.** A tier's positions are those its parent tiers' moves
   found (in order of discovery) plus those its own moves find; they are stored as
   discovered (keys, distances, terminal values: no node rows yet), at the next places
   in discovery order. The keys found for tiers not discovered yet wait in RAM
   (:class:`~solver.tiers.discovery.Found`); a resumed run finds them again by expanding
   the stored tiers that lead to them. Recording the last tier gives every tier its node
   ids, in solve order.
2. **Solving, children first.** A tier's positions are expanded again (the moves are
   cheap next to the database, and no edge waits in RAM for its child's id), their
   children looked up in the tier and in its solved child tiers, and
   :func:`~solver.full.retrograde.retrograde_arrays` computes the tier's bounds and depths with
   the child tiers' values as fixed seeds; the tier's node rows (every bound final) and
   edges are written, appended after those of the tiers solved before.

Each tier is written in *units* (:mod:`solver.tiers.units`): slices of its positions, then
shards of it solved, each a transaction of its own that any process can run (this one,
through :class:`~solver.tiers.runner.InlineRunner`, or Dask workers,
:mod:`solver.tiers.cluster`); the tier is then recorded, and later marked solved, in one
commit, in the one order above whoever ran the units. A killed solve resumes at the
first tier not recorded or not solved, keeping the units already written.

This module walks the tiers (:class:`TieredSolve`); finding a tier's positions is
:mod:`solver.tiers.discovery`'s, the bookkeeping of the tiers whose units are in flight
:mod:`solver.tiers.shards`', and where units run :mod:`solver.tiers.runner`'s.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from solver.errors import ContractError, SolveError
from solver.game import Game, PositionKey
from solver.memory import format_size, map_large_blocks, peak_rss, rss
from solver.store import (
    NodeShard,
    Progress,
    RunStatus,
    TierNodes,
    TierRecord,
    TierStore,
    TierValues,
)
from solver.tiers.discovery import Found, Seeds, TierDiscovery, list_seeds, listed_tiers
from solver.tiers.disk import DiskGuard, DiskShort
from solver.tiers.graph import Why, tier_order, tier_rules
from solver.tiers.runner import InlineRunner, Runner
from solver.tiers.shards import (
    DiscoveredTier,
    SolveSweep,
    TierRun,
    id_ordered_keys,
    slice_nodes,
)
from solver.tiers.units import (
    NOT_DETERMINISTIC,
    TABLES,
    ShardResult,
    SolvedTier,
    gaps,
    plan_shards,
    tiers_of,
)
from solver.values import DEPTH_INF, NEG_INF, POS_INF

log = logging.getLogger(__name__)

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

PRIOR_BYTES: dict[str, float] = {"discover": 128.0, "solve": 192.0}
"""Bytes of RAM a tier's step needs per position of the tier, until this run has
measured it (:meth:`TieredSolve.cost`): what the memory check keeps free for the next
tier. Connect-four 5 x 6's discovery of tier 21 (97,556,959 positions) took 89 bytes a
position over the RSS before it, its 6 x 4 solve's largest tiers about 85 in all; a
prior of 200 and 600 made a resumed 5 x 6 run, which had measured nothing yet, refuse
tier 22 (116,176,690 positions) under a limit of 20 GiB that it fits in."""


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
        self.started = time.monotonic()
        self.expansions = 0
        """Positions this run expanded in the tiers it committed: once to discover them,
        once more to solve them (a resumed run finding its pending keys again does not
        count)."""
        self.peak_rss = 0
        self.records = store.tier_records()
        self.keyed = store.keyed_tiers()
        """Tiers are stored in key order (:meth:`~solver.store.TierStore.keyed_tiers`)."""
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
        self.discovery = TierDiscovery(game, self.rules, tell=self.tell, sample=self._sample)
        self.disk = DiskGuard(store, keyed=self.keyed)
        self.disk_short: DiskShort | None = None
        """The step the disk had no room for, when that ended the run."""
        self._discovering: deque[DiscoveredTier] = deque()
        """Tiers whose positions are being written, in discovery order."""
        self._next_id = 0
        self._written_nodes: list[tuple[int, int]] = []
        self.unit_seconds = {"read": 0.0, "solve": 0.0, "write": 0.0}
        """The units' own seconds, summed over the units this run ran, by step."""
        self.sweep_seconds = {"discover": 0.0, "solve": 0.0}
        """This run's wall time in each sweep."""
        self.seeds = list_seeds(game, self.tell)
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
            try:
                ended = self._discover_tiers()
            finally:  # a run ending in discovery reports its time too
                self.sweep_seconds["discover"] = time.monotonic() - self.started
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

    def _discover_tiers(self) -> RunStatus | None:
        """The discovery sweep: discover and write the tiers not recorded yet, parents
        first; ``None`` once every tier is recorded, else how the run ends."""
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
            self._write_tier(ordinal, *self.discovery.discover(tier, pending))
            self._record_written(wait=isinstance(self.runner, InlineRunner))
        self._record_written(wait=True)  # what is in flight is kept
        return ended

    def _pending_after_resume(self) -> dict[int, Found]:
        """The keys waiting for the tiers not discovered yet: the root's if nothing is
        stored; else found again by expanding the stored tiers that lead to one, in
        discovery order (so in the same order as the run that found them)."""
        # The root, then the game's tablebase positions, at distance 0, in its order.
        roots = Seeds(
            np.concatenate([np.array([self.root_key], dtype=np.int64), self.seeds.keys]),
            [self.root_tier, *self.seeds.tiers],
        )
        undiscovered = set(self.order[len(self.records) :])
        return self.discovery.pending_after_resume(self.store, self.records, undiscovered, roots)

    def _go_on(self, step: str, tier: int, nodes: int) -> RunStatus | None:
        """``None`` if the run may take its next *step* on *tier* (of about *nodes*
        positions), else how it ends (:attr:`ended_by` says why).

        :raises SolveError: if the memory limit leaves too little for the tier's step
            even to a run that has just started (it would never progress)."""
        need = int(self.cost(step, nodes) * nodes)
        why = self.why(self.expansions, need)
        if why is None:
            short = self.disk.short(step, self.rules.tier_name(tier), nodes)
            if short is not None:
                return self._disk_short(short)
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

    def _disk_short(self, short: DiskShort) -> RunStatus:
        """End the run before a step the disk has no room for (everything before it is
        committed).

        :raises SolveError: if the run has done nothing yet (it would never progress)."""
        if not self._steps:
            raise SolveError(
                f"{self.game.name}: {short.message()}: make room there, or move the "
                "database, and run the same command again"
            )
        self.ended_by = "disk"
        self.disk_short = short
        log.info("ending the run: %s", short.message())
        return "budget"

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

    def _check_stored(self) -> None:
        """The stored tiers must be the game's tier order's first ones, and all the
        variant's nodes theirs."""
        tiers = [r.tier for r in self.records]
        if tiers != self.order[: len(tiers)]:
            raise SolveError(
                f"{self.game.name}: the stored tiers ({listed_tiers(self.rules, tiers)}) are not "
                f"the game's tier order from this root ({listed_tiers(self.rules, self.order)})"
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

    def _write_tier(self, ordinal: int, nodes: TierNodes, inner: bool, expanded: int) -> None:
        """Hand the positions of tier ``order[ordinal]`` to the runner, a shard at a
        time (those written by an earlier run of this discovery are not written again);
        the tier is recorded once they are all written (:meth:`_record_written`)."""
        tier = self.order[ordinal]
        if self.keyed:  # the store keeps tiers in key order (whatever found them first)
            order = np.argsort(nodes.keys, kind="stable")
            nodes = TierNodes(*(column[order] for column in _columns(nodes)))
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
            NodeShard(tier, lo, slice_nodes(nodes, lo - offset, hi - offset))
            for lo, hi in gaps(offset, offset + count, done, self.slice_size)
        ]
        self._discovering.append(DiscoveredTier(tier, ordinal, offset, count, inner, expanded))
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

    # -- solving ----------------------------------------------------------------------

    def _solve_tiers(self) -> RunStatus:
        """Solve the tiers not solved yet, children first: each tier's shards
        (:mod:`solver.tiers.units`) once its child tiers' values are known (their shards all
        solved by this run, or all written), through the runner (this process, or Dask
        workers: several tiers at once where the tiers allow, a tier's shards solved
        while its child tiers' rows are still being written), and each tier marked
        solved, in that order, once its shards are written."""
        sweep = self._plan_sweep()
        inline = self.runner.workers == 1 and isinstance(self.runner, InlineRunner)
        while not sweep.done:
            if sweep.ended is None and not (inline and self.runner.in_flight):
                self._start_tiers(sweep, inline=inline)
            while not sweep.done and sweep.todo[sweep.committed].tier in sweep.written:
                self._finish(sweep.runs[sweep.todo[sweep.committed].tier])
                sweep.committed += 1
            if sweep.done:
                break
            if not self.runner.in_flight:
                if sweep.ended is not None:
                    return sweep.ended
                if inline:
                    continue
                raise SolveError(f"{self.game.name}: no tier can be solved next (damaged tiers?)")
            self._take_result(sweep, self.runner.wait())
        return sweep.ended or "complete"

    def _plan_sweep(self) -> SolveSweep:
        """The tiers not solved yet, children first, each with its shards planned (those
        an earlier run wrote are not run again); the units counted."""
        todo = [r for r in reversed(self.records) if not r.solved]
        base = self.store.next_commit()
        runs: dict[int, TierRun] = {}
        for i, record in enumerate(todo):
            written = self.store.written_shards(record)
            shards = plan_shards(record, written, self.shard_size, base + i)
            runs[record.tier] = TierRun(
                record,
                shards,
                len(written),
                complete=not written,
                name=self.rules.tier_name(record.tier),
            )
        self._units = sum(len(r.shards) + r.done for r in runs.values())
        self._units_done = sum(r.done_before for r in runs.values())
        solved = {r.tier for r in self.records if r.solved}
        return SolveSweep(todo, runs, written=solved, ready=set(solved))

    def _start_tiers(self, sweep: SolveSweep, *, inline: bool) -> None:
        """Submit the shards of the tiers not started whose child tiers are ready (one
        at most when *inline*: the tiers in order), unless the run must end
        (:attr:`SolveSweep.ended` says why)."""
        for record in sweep.todo:
            if record.tier in sweep.started:
                continue
            if not sweep.ready.issuperset(self._stored_children(record.tier)):
                if inline:
                    break
                continue
            reason = self._go_on("solve", record.tier, record.nodes)
            if reason is not None:
                sweep.ended = reason
                break
            self._start_tier(sweep, record)
            if inline:
                break

    def _start_tier(self, sweep: SolveSweep, record: TierRecord) -> None:
        """Submit the shards of the tier of *record* to the runner."""
        sweep.started.add(record.tier)
        run = sweep.runs[record.tier]
        self.tell(run.phase)
        children = [self._record(c) for c in self._stored_children(record.tier)]
        self.runner.submit(self.game, run.shards, children, self._held(children))
        if not run.shards:
            sweep.written.add(record.tier)
            sweep.ready.add(record.tier)

    def _take_result(self, sweep: SolveSweep, result: ShardResult) -> None:
        """Take the unit *result* that finished: its shard's values (a tier whose shards
        are all solved here is held for its parents' units), and whether it was
        written; then report."""
        for j, step in enumerate(("read", "solve", "write")):
            self.unit_seconds[step] += result.steps[j]
        run = sweep.runs[result.tier]
        if result.keys is not None and result.values is not None:
            if run.add_values(result) == len(run.shards):
                run.held = run.table(run.record)
                if run.held is not None:  # for its parents' units, before it is marked
                    TABLES.put(self.ident, run.held)
                    sweep.ready.add(result.tier)
        if result.step == "solve":  # written
            run.add_written(result)
            self._units_done += 1
            if run.done == len(run.shards):
                sweep.written.add(result.tier)
                sweep.ready.add(result.tier)
        now = time.monotonic()
        if now - self._reported >= REPORT_EVERY:
            self._reported = now
            self.store.report(self.progress("running"))
        if self.progress_cb is not None:
            self.progress_cb(self.progress("running", run.phase))

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

    def _finish(self, run: TierRun) -> None:
        """Mark a tier whose shards are all written solved (one commit)."""
        record = run.record
        last = all(r.solved for r in self.records if r.ordinal != record.ordinal)
        if run.held is not None and record.tier == self.root_tier:
            # known before the commit that marks the root's tier solved, which records it
            self._set_root(run.held.values, id_ordered_keys(run.held))
        self.expansions += run.expanded  # as committed with the tier
        try:
            solved = self.store.finish_tier(record, self.progress("running"), last=last)
        except BaseException:
            self.expansions -= run.expanded
            raise
        self.records[record.ordinal] = solved
        run.held = None  # TABLES holds it while its parents need it
        # held on: the tiers that tiers not solved yet read (this one's parents)
        waiting = {c for r in self.records if not r.solved for c in self.rules.child_tiers(r.tier)}
        TABLES.keep(self.ident, waiting)
        if isinstance(self.runner, InlineRunner):
            self._measure("solve", record.nodes)
        if self.progress_cb is not None:
            self.progress_cb(self.progress("running"))


def _columns(nodes: TierNodes) -> tuple[npt.NDArray[Any], ...]:
    return (nodes.keys, nodes.dist, nodes.terminal, nodes.value)


__all__ = [
    "SOLVE_CHUNK",
    "TieredSolve",
    "tier_order",
    "tier_rules",
    "tiers_of",
]
