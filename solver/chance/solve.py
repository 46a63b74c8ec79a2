"""A run of the chance solver (:func:`solve_chance`): expand a game of chance's graph in
memory (all of it, or a partial solve's batches), solve it, and commit it to a store as
one batch, with progress reports, budgets and a memory limit."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from solver.chance.bounds import DEFAULT_TOLERANCE, ChanceSolution, solve_graph
from solver.chance.build import PEAK_FACTOR, seeded_builder
from solver.chance.frontier import final_nodes
from solver.chance.graph import FRONTIER, KIND_NAMES, ChanceGraph
from solver.chance.partial import Expansion, Schedule, solve_partial
from solver.chance.plies import ExpectedPlies, expected_plies
from solver.chance.rows import fraction_text, to_graph
from solver.errors import SolveError
from solver.game import Game, PositionKey
from solver.graph import Graph
from solver.memory import format_size, rss
from solver.run import EndedBy, Limits, ProgressCallback, SolveResult
from solver.store import Batch, Progress, RunOptions, RunStatus, Store
from solver.values import NEG_INF, POS_INF

COMMIT_SHARE = 0.85
"""What the commit of a chance solve's rows adds to its RSS, as a share of what its
expansion took (Pig to 60: about 0.75), reserved by the check before it."""


ROUGH_SWEEPS = 16
"""Most sweeps of value iteration per level of components in the solves between a
partial solve's batches. They stop early, so their bounds are looser (still sound): the
positions they find relevant include those the tight bounds would, and once none is
left the graph is solved in full and looked at again. On Pig to 40 the sweeps of
solves to the end took most of a partial solve's time."""

FIRST_BATCH = 1024
"""Expansions between the first two solves of a partial chance solve's graph; each batch
after is as large as everything expanded before it (so the solves cost about twice the
last)."""


def solve_chance(
    game: Game,
    root_key: PositionKey,
    store: Store,
    progress: ProgressCallback | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    full: bool = True,
    limits: Limits | None = None,
) -> SolveResult:
    """Solve a game of chance from *root_key* into *store*
    (:func:`~solver.chance.bounds.solve_graph` on the graph in memory) and commit it as one
    batch at the end of the run.

    A **full** solve expands everything reachable. A **partial** one expands in batches,
    solving the graph after each, only the unexpanded positions that can still change the
    root's bounds (:func:`~solver.chance.frontier.relevant_frontier`), until none is left:
    the root's bounds are then those of the full graph, with less of it expanded where
    some moves are provably worse than others. Flags are final where nothing left
    unexpanded can change the bounds (:func:`~solver.chance.frontier.final_nodes`).

    A stored graph (an earlier run's, partial or stopped by a budget) is continued: its
    expanded positions are expanded again (the same moves, else an error), the rest goes
    on from its unexpanded ones, and the commit appends the new positions and rewrites
    the ones that were not final. A partial run expands them again replaying its
    schedule of batches from the root, and so continues exactly where the stopped run
    stopped, within the batch it cut short (:mod:`solver.chance.partial`): stopped and
    continued, a partial solve ends as the uninterrupted one. A budget of *limits*
    (expansions, seconds) or its request to stop (the CLI's first Ctrl-C) ends the
    expansion early; what was expanded is then solved and committed (the run's status
    ``budget`` or ``stopped``, also when a partial run's root is decided before the
    uninterrupted solve would end), for the next run to continue. An exception (a second
    Ctrl-C) loses the run's expansions.

    Under the memory limit of *limits* (bytes of RSS) the expansion stops as soon as the
    solve's projected peak (:data:`~solver.chance.build.PEAK_FACTOR` times what the graph
    has taken so far) would pass it, and every later step checks the RSS itself: the solve
    then ends with an error, having written nothing, instead of running past the limit.

    :raises SolveError: if the stored graph is not the one the rules give, or if the
        memory limit is reached.
    """
    started = time.monotonic()
    limits = Limits() if limits is None else limits
    graph = store.open(game, RunOptions(root_key, full, limits.max_expansions, limits.max_seconds))
    run = _Run(game, limits, progress, started, graph)
    try:
        run.report(run.stored, run.stored_edges, "expanding")
        expand = _expand_full if full else _expand_partial
        solved = expand(game, root_key, graph, run, tolerance)
        result, plies = _write(store, graph, solved, run)
    except BaseException as exc:
        failed: RunStatus = "stopped" if isinstance(exc, KeyboardInterrupt) else "failed"
        store.close(run.snapshot(failed, run.stored, run.stored_edges, 0, 0))
        raise
    store.close(result)
    if progress is not None:
        progress(result)
    return _result(game, root_key, full, solved, plies, result, run)


class _Run:
    """One run of :func:`solve_chance`: its clock, budget and memory watch, its progress
    reports, and the hooks it gives the expansion (:meth:`stop`, :meth:`expanding`,
    :meth:`check`, :meth:`between`)."""

    def __init__(
        self,
        game: Game,
        limits: Limits,
        progress: ProgressCallback | None,
        started: float,
        stored: Graph,
    ) -> None:
        self.game = game
        self.progress = progress
        self.started = started
        self.memory = limits.memory  # its shares: the headroom a check keeps
        self.budget = Limits(limits.max_expansions, limits.max_seconds, limits.stop)
        self.deadline = self.budget.deadline(started)
        self.expansion = Expansion()  # the builder, and how many of its expansions are replayed
        self.ended_by: EndedBy | None = None
        self.peak = 0
        self.stored = stored.num_nodes
        self.stored_edges = stored.total_edges
        self.before = rss()

    def snapshot(
        self,
        status: RunStatus,
        nodes: int,
        edges: int,
        added: int,
        added_edges: int,
        low: int = NEG_INF,
        high: int = POS_INF,
        low_final: bool = False,
        high_final: bool = False,
        phase: str = "expanding",
        frontier: int = 0,
    ) -> Progress:
        """The run's progress now (its peak RSS noted)."""
        used = rss()
        self.peak = max(self.peak, used)
        return Progress(
            status=status,
            expansions=max(0, self.expansion.done),
            nodes=nodes,
            edges=edges,
            nodes_added=added,
            edges_added=added_edges,
            frontier=frontier,
            root_low=low,
            root_high=high,
            root_low_final=low_final,
            root_high_final=high_final,
            seconds=time.monotonic() - self.started,
            rss=used,
            resident_nodes=nodes,
            phase=phase,
        )

    def report(
        self,
        nodes: int,
        edges: int,
        phase: str,
        low: int = NEG_INF,
        high: int = POS_INF,
        frontier: int = 0,
    ) -> None:
        """Report the running *phase*, if the run reports progress."""
        if self.progress is not None:
            args = (nodes, edges, 0, 0, low, high)
            self.progress(self.snapshot("running", *args, phase=phase, frontier=frontier))

    def check(self, step: str, found: int, factor: float = 1.0, reserve: int = 0) -> None:
        """End the solve if *step*'s projected peak (*factor* times the growth so far,
        plus *reserve*) reaches the memory limit, with *found* positions in the graph."""
        memory = self.memory
        if memory is None:
            return
        used = rss()
        need = self.before + int((used - self.before) * factor) + reserve
        if need + memory.headroom >= memory.limit:
            raise SolveError(
                f"{self.game.name}: a game of chance is solved with its whole graph in memory, "
                f"and {step} at {found:,} positions it would need about {format_size(need)}"
                f" or more (now {format_size(used)}), past the {format_size(memory.limit)} "
                "--memory-limit: give a larger one (nothing was written)"
            )

    def stop(self) -> bool:
        """Whether the run ends now (noting why)."""
        self.ended_by = self.budget.why(self.expansion.done, self.deadline)
        return self.ended_by is not None

    def status(self, complete: bool) -> RunStatus:
        """How the run ends: *complete*, else stopped by a request or a budget."""
        if complete:
            return "complete"
        return "stopped" if self.ended_by == "request" else "budget"

    def expanding(self, done: int, found: int) -> None:
        """Called every so often while expanding, with the expansions and positions."""
        self.check("expanding", found, PEAK_FACTOR)
        if self.progress is None:
            return
        run_of = self.expansion
        phase = f"expanding: {max(0, run_of.done):,} expanded"
        if run_of.replaying:
            phase = f"replaying the stored solve's batches: {found:,} positions"
        edges = 0 if run_of.builder is None else len(run_of.builder.child)
        self.report(found, edges, phase)

    def between(self, solution: ChanceSolution, todo_nodes: npt.NDArray[np.int64]) -> None:
        """Called before each batch of a partial solve."""
        if self.progress is None:
            return
        lo, hi = math.floor(solution.low[0]), math.ceil(solution.high[0])
        phase = (
            f"partial: {max(0, self.expansion.done):,} expanded, root "
            f"[{solution.low[0]:.6g}, {solution.high[0]:.6g}], "
            f"{todo_nodes.size:,} positions to expand next"
        )
        if self.expansion.replaying:
            phase = f"replaying the stored solve's batches: {len(solution.low):,} positions"
        self.report(len(solution.low), solution.graph.edges, phase, lo, hi, todo_nodes.size)


@dataclass
class _Solved:
    """What a run expanded, solved."""

    graph: ChanceGraph
    solution: ChanceSolution
    known: npt.NDArray[np.bool_] | None
    """The positions whose value is known (a partial solve's), else ``None``."""
    finished: bool
    """Whether the run ends where the uninterrupted solve ends (complete where the
    root is final)."""


def _expand_full(
    game: Game, root_key: PositionKey, stored: Graph, run: _Run, tolerance: float
) -> _Solved:
    """Expand everything reachable (from the stored graph on), under the run's budget,
    and solve it."""
    builder = run.expansion.builder = seeded_builder(game, root_key, stored)
    todo = [v for v, k in enumerate(builder.kinds) if k == FRONTIER]
    if not run.stop():
        builder.grow(todo, run.budget.max_expansions, run.stop, run.expanding)
        run.stop()
    graph = builder.graph()
    builder.release()
    run.check("expanding", len(graph), PEAK_FACTOR)
    run.report(len(graph), graph.edges, "solving")
    return _Solved(graph, solve_graph(graph, tolerance=tolerance), None, True)


def _expand_partial(
    game: Game, root_key: PositionKey, stored: Graph, run: _Run, tolerance: float
) -> _Solved:
    """Run a partial solve's schedule (:func:`~solver.chance.partial.solve_partial`)."""
    schedule = Schedule(
        tolerance,
        FIRST_BATCH,
        ROUGH_SWEEPS,
        run.budget,
        run.stop,
        run.expanding,
        run.check,
        run.between,
    )
    partial = solve_partial(game, root_key, stored, schedule, run.expansion)
    if not partial.finished and run.ended_by is None:
        run.stop()  # (a batch cut short by the expansion budget, which grow checks)
    partial.builder.release()
    return _Solved(partial.graph, partial.solution, partial.known, partial.finished)


def _write(
    store: Store, stored: Graph, solved: _Solved, run: _Run
) -> tuple[Progress, ExpectedPlies]:
    """Lay the solved graph out as rows over *stored* and commit them, if anything is
    new; the run's result and the expected plies."""
    graph, solution = solved.graph, solved.solution
    size = len(graph)
    grown = rss() - run.before  # what the expansion took
    plies = expected_plies(solution)
    run.check("solving", size)
    final = final_nodes(solution, solved.known)
    rows = to_graph(solution, stored, plies, final)
    run.check("writing", size, reserve=int(COMMIT_SHARE * grown))  # the commit's rows
    root_final = bool(final[0])
    added, added_edges = size - run.stored, rows.num_edges - run.stored_edges
    result = run.snapshot(
        run.status(root_final and solved.finished),
        size,
        rows.total_edges,
        added,
        added_edges,
        int(rows.low[0]),
        int(rows.high[0]),
        root_final,
        root_final,
        frontier=int(np.count_nonzero(graph.kind == FRONTIER)),
    )
    if added or rows.chance.changed:
        if run.progress is not None:
            phase = f"committing {added:,} nodes, {len(rows.chance.changed):,} updated"
            run.progress(replace(result, status="running", phase=phase))
        rows.settled = True
        store.commit(Batch.of(rows), result)
    return result, plies


def _result(
    game: Game,
    root_key: PositionKey,
    full: bool,
    solved: _Solved,
    plies: ExpectedPlies,
    result: Progress,
    run: _Run,
) -> SolveResult:
    """The run's :class:`~solver.run.SolveResult`."""
    solution = solved.solution
    root_final = result.root_low_final
    return SolveResult(
        game=game.name,
        params=dict(game.params),
        root=root_key,
        root_text=game.format(root_key),
        low=float(solution.low[0]),
        high=float(solution.high[0]),
        low_final=root_final,
        high_final=root_final,
        depth_low=None,
        depth_high=None,
        expansions=result.expansions,
        nodes=result.nodes,
        edges=result.edges,
        status=result.status,
        seconds=time.monotonic() - run.started,
        full=full,
        peak_rss=run.peak,
        ended_by=None if result.status == "complete" else run.ended_by,
        extra={"chance": _root_values(solved, plies, result.frontier)},
    )


def _root_values(solved: _Solved, plies: ExpectedPlies, frontier: int) -> dict[str, object]:
    """The root's chance values, for :attr:`SolveResult.extra` (``"chance"``)."""
    solution, graph = solved.solution, solved.graph
    lo_q, hi_q = solution.bounds(0)
    return {
        "low_exact": fraction_text(lo_q) if isinstance(lo_q, Fraction) else None,
        "high_exact": fraction_text(hi_q) if isinstance(hi_q, Fraction) else None,
        "exact": solution.exact(0),
        "value": float(solution.value(0)),
        "tolerance": solution.tolerance,
        "wide": solution.wide,
        "components": solution.components,
        "levels": solution.levels,
        "sweeps": solution.sweeps,
        "player": int(graph.player[0]),
        "kind": KIND_NAMES[int(graph.kind[0])],
        "best_move": solution.best_move(0),
        "plies": _json_number(plies.value(0)),
        "plies_exact": fraction_text(plies.exact[0]),
        "unexpanded": frontier,
    }


def _json_number(x: Fraction | float | None) -> float | None:
    """An expectation as a JSON number (``None`` stays ``None``)."""
    return None if x is None else float(x)


__all__ = ["solve_chance"]
