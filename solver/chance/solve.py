"""A run of the chance solver (:func:`solve_chance`): expand a game of chance's graph in
memory (all of it, or a partial solve's batches), solve it, and commit it to a store as
one batch, with progress reports, budgets and a memory limit."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from solver.chance.bounds import DEFAULT_TOLERANCE, ChanceSolution, solve_graph
from solver.chance.build import PEAK_FACTOR, seeded_builder
from solver.chance.frontier import final_nodes
from solver.chance.graph import FRONTIER, KIND_NAMES
from solver.chance.partial import Expansion, Schedule, solve_partial
from solver.chance.plies import expected_plies
from solver.chance.rows import fraction_text, to_graph
from solver.errors import SolveError
from solver.game import Game, PositionKey
from solver.memory import format_size, headroom, rss
from solver.negamax import EndedBy, Limits, ProgressCallback, SolveResult
from solver.store import Progress, RunOptions, RunStatus, Store
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
    memory_limit = limits.memory_limit
    budget = Limits(limits.max_expansions, limits.max_seconds, limits.stop)
    deadline = budget.deadline(started)
    run = RunOptions(root_key, full, limits.max_expansions, limits.max_seconds)
    graph = store.open(game, run)
    peak = 0
    run_of = Expansion()  # the builder, and how many of its expansions are replayed

    def snapshot(
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
        nonlocal peak
        used = rss()
        peak = max(peak, used)
        return Progress(
            status=status,
            expansions=max(0, run_of.done),
            nodes=nodes,
            edges=edges,
            nodes_added=added,
            edges_added=added_edges,
            frontier=frontier,
            root_low=low,
            root_high=high,
            root_low_final=low_final,
            root_high_final=high_final,
            seconds=time.monotonic() - started,
            rss=used,
            resident_nodes=nodes,
            phase=phase,
        )

    stored = graph.num_nodes
    stored_edges = graph.total_edges
    before = rss()

    def check(step: str, found: int, factor: float = 1.0, reserve: int = 0) -> None:
        """End the solve if *step*'s projected peak (*factor* times the growth so far,
        plus *reserve*) reaches the memory limit, with *found* positions in the graph."""
        if memory_limit is None:
            return
        used = rss()
        need = before + int((used - before) * factor) + reserve
        if need + headroom(memory_limit) >= memory_limit:
            raise SolveError(
                f"{game.name}: a game of chance is solved with its whole graph in memory, "
                f"and {step} at {found:,} positions it would need about {format_size(need)}"
                f" or more (now {format_size(used)}), past the {format_size(memory_limit)} "
                "--memory-limit: give a larger one (nothing was written)"
            )

    def expanding(done: int, found: int) -> None:
        check("expanding", found, PEAK_FACTOR)
        if progress is not None:
            phase = f"expanding: {max(0, run_of.done):,} expanded"
            if run_of.replaying:
                phase = f"replaying the stored solve's batches: {found:,} positions"
            edges = 0 if run_of.builder is None else len(run_of.builder.child)
            progress(snapshot("running", found, edges, 0, 0, phase=phase))

    ended_by: EndedBy | None = None

    def stop() -> bool:
        nonlocal ended_by
        ended_by = budget.why(run_of.done, deadline)
        return ended_by is not None

    def between(solution: ChanceSolution, todo_nodes: npt.NDArray[np.int64]) -> None:
        if progress is None:
            return
        lo, hi = math.floor(solution.low[0]), math.ceil(solution.high[0])
        phase = (
            f"partial: {max(0, run_of.done):,} expanded, root "
            f"[{solution.low[0]:.6g}, {solution.high[0]:.6g}], "
            f"{todo_nodes.size:,} positions to expand next"
        )
        if run_of.replaying:
            phase = f"replaying the stored solve's batches: {len(solution.low):,} positions"
        args = (len(solution.low), solution.graph.edges, 0, 0, lo, hi)
        progress(snapshot("running", *args, phase=phase, frontier=todo_nodes.size))

    try:
        if progress is not None:
            progress(snapshot("running", stored, stored_edges, 0, 0, phase="expanding"))
        known: npt.NDArray[np.bool_] | None = None  # positions whose value is known
        if full:
            builder = run_of.builder = seeded_builder(game, root_key, graph)
            todo = [v for v, k in enumerate(builder.kinds) if k == FRONTIER]
            if not stop():
                builder.grow(todo, budget.max_expansions, stop, expanding)
                stop()
            chance_graph = builder.graph()
            builder.release()
            check("expanding", len(chance_graph), PEAK_FACTOR)
            if progress is not None:
                progress(
                    snapshot(
                        "running", len(chance_graph), chance_graph.edges, 0, 0, phase="solving"
                    )
                )
            solution = solve_graph(chance_graph, tolerance=tolerance)
            finished = True  # (complete where the root is final)
        else:
            schedule = Schedule(
                tolerance, FIRST_BATCH, ROUGH_SWEEPS, budget, stop, expanding, check, between
            )
            partial = solve_partial(game, root_key, graph, schedule, run_of)
            chance_graph, solution = partial.graph, partial.solution
            known, finished = partial.known, partial.finished
            if not finished and ended_by is None:
                stop()  # (a batch cut short by the expansion budget, which grow checks)
            partial.builder.release()
            del partial
        size = len(chance_graph)
        grown = rss() - before  # what the expansion took
        plies = expected_plies(solution)
        check("solving", size)
        final = final_nodes(solution, known)
        solved = to_graph(solution, graph, plies, final)
        check("writing", size, reserve=int(COMMIT_SHARE * grown))  # the commit's rows
        low = int(solved.low[0])
        high = int(solved.high[0])
        root_final = bool(final[0])
        status: RunStatus = (
            "complete"
            if root_final and finished
            else "stopped"
            if ended_by == "request"
            else "budget"
        )
        frontier = int(np.count_nonzero(chance_graph.kind == FRONTIER))
        added, added_edges = size - stored, solved.num_edges - stored_edges
        result = snapshot(
            status,
            size,
            solved.total_edges,
            added,
            added_edges,
            low,
            high,
            root_final,
            root_final,
            frontier=frontier,
        )
        if added or solved.chance.changed:
            if progress is not None:
                phase = f"committing {added:,} nodes, {len(solved.chance.changed):,} updated"
                progress(replace(result, status="running", phase=phase))
            solved.settled = True
            store.commit(solved, result)
    except BaseException as exc:
        failed: RunStatus = "stopped" if isinstance(exc, KeyboardInterrupt) else "failed"
        store.close(snapshot(failed, stored, stored_edges, 0, 0))
        raise
    store.close(result)
    if progress is not None:
        progress(result)
    lo_q, hi_q = solution.bounds(0)
    value = solution.value(0)
    exact = solution.exact(0)
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
        status=status,
        seconds=time.monotonic() - started,
        full=full,
        peak_rss=peak,
        ended_by=None if status == "complete" else ended_by,
        extra={
            "chance": {
                "low_exact": fraction_text(lo_q) if isinstance(lo_q, Fraction) else None,
                "high_exact": fraction_text(hi_q) if isinstance(hi_q, Fraction) else None,
                "exact": exact,
                "value": float(value),
                "tolerance": tolerance,
                "wide": solution.wide,
                "components": solution.components,
                "levels": solution.levels,
                "sweeps": solution.sweeps,
                "player": int(chance_graph.player[0]),
                "kind": KIND_NAMES[int(chance_graph.kind[0])],
                "best_move": solution.best_move(0),
                "plies": _json_number(plies.value(0)),
                "plies_exact": fraction_text(plies.exact[0]),
                "unexpanded": frontier,
            }
        },
    )


def _json_number(x: Fraction | float | None) -> float | None:
    """An expectation as a JSON number (``None`` stays ``None``)."""
    return None if x is None else float(x)


__all__ = ["solve_chance"]
