"""The partial solve of a game of chance (``solve GAME`` without ``--full``): batches of
expansions between solves of the graph, and how a later run continues them exactly.

**The schedule.** A partial solve solves the graph expanded so far, then expands a batch
breadth first from the relevant unexpanded positions
(:func:`~solver.chance.frontier.relevant_frontier`), solves again, and so on until none is left.
The first batch is *first_batch* expansions, each later one as large as everything
expanded before it. The solves between batches are rough (a few sweeps a level: sound
but looser bounds); when a rough solve leaves nothing to expand, a tight one looks again.

**Where it ends depends on the schedule.** A batch runs breadth first past the relevant
positions (new positions go to the back of its queue and are expanded in their turn),
and which positions it reaches decides which non-root positions end decided: the root's
bounds do not depend on it, but a position off the optimal lines ends final (its value
known) only if the batches happened to expand what it needs.

**Continuing a stopped run.** A run stopped by a budget or a request stops within a
batch: its queue is lost, and a next run that solved the stored graph and started a new
schedule from it would expand other positions than the uninterrupted solve does (Pig to
10 stopped after 1,000 expansions and continued so: 16 positions fewer, 8 left undecided
that the uninterrupted solve decides). So a run that finds a stored graph first
**replays** the schedule from the root (:class:`_Replaying`): the same solves and
batches, each expansion made again and checked against the stored graph (the same
position under the same id, the same moves), until every stored expansion has been made
again; it is then exactly where the stopped run stopped, within the batch it was cutting
short, and goes on. The budget counts only the expansions after the replay, and a budget
or a request to stop is honoured from there on. Every run thus retraces the
uninterrupted solve: stopped and continued any number of times, a partial solve ends
with the uninterrupted one's positions, ids, bounds and flags. A stored graph that is not
the schedule's (a full solve's, one an earlier version or another tolerance made) is
noticed where the replay departs from it, and the run goes on from the stored graph as
it is (:func:`~solver.chance.build.seeded_builder`).

A run ends **complete** only where the uninterrupted solve ends: after a batch that was
not cut short, with nothing relevant left under a tight solve after a rough one. A run
stopped earlier ends ``budget`` or ``stopped`` even when its root's bounds are final
already (the next run finishes the batch the uninterrupted solve would have).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from solver.chance.bounds import DEFAULT_MAX_SWEEPS, ChanceSolution, solve_graph
from solver.chance.build import PEAK_FACTOR, Builder, seeded_builder
from solver.chance.frontier import relevant_frontier, settled
from solver.chance.graph import TERMINAL, ChanceGraph
from solver.game import Game, PositionKey
from solver.graph import Graph, NodeState
from solver.run import Limits


class Diverged(Exception):
    """The replayed schedule left the stored graph: it is not this schedule's."""


class _Replaying(Builder):
    """A builder from the root that checks every step against the stored graph *stored*:
    while stored expansions are left to make again, each position it finds must be the
    stored one of that id and each expansion a stored expanded position's, with the stored
    moves; afterwards expansions are new.

    :raises Diverged: where the schedule departs from the stored graph.
    """

    def __init__(self, game: Game, root: PositionKey, stored: Graph) -> None:
        super().__init__(game, root)
        stored.require_edges()
        self.stored = stored
        self.stored_keys = list(stored.keys)
        if self.stored_keys[0] != root:
            raise Diverged
        state = np.frombuffer(stored.state, dtype=np.uint8)
        self.to_replay = int(np.count_nonzero(state != int(NodeState.UNEXPANDED)))
        """The stored positions expanded (or found terminal): what the replay makes again."""
        self.replayed = 0

    @property
    def replaying(self) -> bool:
        """Whether stored expansions are left to make again."""
        return self.replayed < self.to_replay

    def add(self, key: PositionKey, dist: int) -> int:
        c = len(self.keys)
        if c < len(self.stored_keys):
            if self.stored_keys[c] != key:
                raise Diverged  # the schedule finds positions in another order
        elif self.replaying:
            raise Diverged  # a stored expanded position has a move out of the stored graph
        return super().add(key, dist)

    def expand(self, node: int) -> list[int]:
        stored = self.stored
        state = stored.state[node] if node < stored.num_nodes else NodeState.UNEXPANDED
        if (state != NodeState.UNEXPANDED) != self.replaying:
            raise Diverged  # a new expansion before the stored ones are all made again
        before = len(self.child)
        new = super().expand(node)
        if state != NodeState.UNEXPANDED:
            same = (self.kinds[node] == TERMINAL) == (state == NodeState.TERMINAL)
            if not same or self.child[before:].tolist() != stored.child_ids(node):
                raise Diverged
            self.replayed += 1
        return new


@dataclass
class Expansion:
    """A run's builder, once made, and how many of its expansions are stored ones made
    again (the run's own are the rest)."""

    builder: Builder | None = None
    base: int = 0

    @property
    def replaying(self) -> bool:
        return isinstance(self.builder, _Replaying) and self.builder.replaying

    @property
    def done(self) -> int:
        """The run's own expansions so far (negative while replaying: minus those left)."""
        return 0 if self.builder is None else self.builder.expanded - self.base


@dataclass
class Partial:
    """Where a partial solve's schedule ended: the graph and its last (tight) solution,
    and whether the schedule is *finished* (where the uninterrupted solve ends)."""

    builder: Builder
    graph: ChanceGraph
    solution: ChanceSolution
    known: npt.NDArray[np.bool_]
    finished: bool


@dataclass
class Schedule:
    """The settings of a partial solve's schedule and the run's hooks into it."""

    tolerance: float
    first_batch: int
    rough_sweeps: int
    budget: Limits
    stop: Callable[[], bool]
    """Whether the run ends now (a budget spent or a request); asked between batches and
    within them, never while replaying."""
    expanding: Callable[[int, int], None]
    """Called with the expansions and positions so far, every so often while expanding."""
    check: Callable[[str, int, float], None]
    """Ends the solve if the memory limit is near (its step, positions, factor)."""
    between: Callable[[ChanceSolution, npt.NDArray[np.int64]], None]
    """Called with a solution and the positions to expand next, before each batch."""


def solve_partial(
    game: Game, root_key: PositionKey, stored: Graph, schedule: Schedule, run: Expansion
) -> Partial:
    """Run the partial solve's schedule from the root, replaying the stored graph *stored*
    first if it has any position, else (a stored graph that is not the schedule's)
    from the stored graph as it is; *run* holds the builder in use.

    :raises SolveError: if the stored graph is not the one the rules give, or its root is
        another position (:func:`~solver.chance.build.seeded_builder`).
    """
    if stored.num_nodes:
        done = _replayed(game, root_key, stored, schedule, run)
        if done is not None:
            return done
    run.builder, run.base = None, 0  # (the replay's builder goes)
    builder = seeded_builder(game, root_key, stored)
    run.builder = builder
    return _run(builder, schedule, run)


def _replayed(
    game: Game, root_key: PositionKey, stored: Graph, schedule: Schedule, run: Expansion
) -> Partial | None:
    """The schedule replayed over *stored* and continued, or ``None`` where the replay
    departs from the stored graph (which is then not the schedule's)."""
    try:
        builder = _Replaying(game, root_key, stored)
        run.builder, run.base = builder, builder.to_replay
        return _run(builder, schedule, run)
    except Diverged:
        return None


def _run(builder: Builder, schedule: Schedule, run: Expansion) -> Partial:
    """The schedule from *builder*'s graph: solve, expand a batch, and again, until nothing
    relevant is left or the run is to stop (see the module docstring).

    :raises Diverged: if a replay departs from the stored graph, or ends before it."""
    s = schedule
    batch = s.first_batch
    rough = True  # the solves between batches stop early (ROUGH_SWEEPS)
    looked_again = False  # this tight solve follows a rough one that left nothing
    cut = False  # the last batch was cut short with positions left in its queue
    graph = builder.graph()

    def stopping() -> bool:
        return not run.replaying and s.stop()

    while True:
        solution = solve_graph(graph, s.tolerance, s.rough_sweeps if rough else DEFAULT_MAX_SWEEPS)
        s.check("solving", len(graph), PEAK_FACTOR)
        known = settled(solution)
        todo = relevant_frontier(solution, known)
        if todo.size == 0 or stopping():
            if rough:  # solve it fully, then look again
                rough, looked_again = False, todo.size == 0
                continue
            if run.replaying:
                raise Diverged  # the schedule ends before the stored graph does
            finished = todo.size == 0 and looked_again and not cut
            return Partial(builder, graph, solution, known, finished)
        rough = True
        s.between(solution, todo)
        before = builder.expanded
        limit = s.budget.cap(batch, run.done)
        exhausted = builder.grow(todo.tolist(), limit, stopping, s.expanding)
        cut = not exhausted and builder.expanded - before < batch
        graph = builder.graph()
        batch = max(batch, builder.expanded)


__all__ = ["Diverged", "Expansion", "Partial", "Schedule", "solve_partial"]
