"""The store interface the solver writes through, and the in-memory store.

A store keeps one graph per game variant. :func:`solver.negamax.solve` calls
:meth:`Store.open` once, :meth:`Store.commit` after every batch (one transaction each: the
graph's pending new nodes, new edges and changed nodes, plus the run's progress) and
:meth:`Store.close` at the end, whatever the outcome. ``db.store.SqlStore`` implements it
with SQLAlchemy; :class:`MemoryStore` keeps graphs in memory so that a budgeted solve can
be continued by calling :func:`~solver.negamax.solve` again with the same store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from solver.game import Game, PositionKey, params_text
from solver.graph import Graph


@dataclass(frozen=True)
class RunOptions:
    """What a solve run was asked to do (recorded by persistent stores)."""

    root: PositionKey
    """The root position's key."""
    full: bool
    """Tablebase mode: expand everything reachable."""
    max_expansions: int | None
    """Expansion budget of this run, if any."""
    max_seconds: float | None
    """Time budget of this run, if any."""


RunStatus = Literal["running", "complete", "budget", "stopped", "failed"]
"""How a run stands or ended: ``budget`` when a budget ran out, ``stopped`` on Ctrl-C or
a stop request, ``failed`` on an error."""
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)


@dataclass(frozen=True)
class Progress:
    """A snapshot of a run, passed to :meth:`Store.commit` and to progress callbacks."""

    status: RunStatus
    expansions: int
    """Expansions done by this run."""
    nodes: int
    edges: int
    nodes_added: int
    """Nodes created by this run."""
    edges_added: int
    frontier: int
    """Unexpanded, non-terminal nodes in the graph."""
    root_low: int
    root_high: int
    root_low_final: bool
    root_high_final: bool
    seconds: float
    """Wall time of this run so far."""
    rss: int = 0
    """The process's resident set size (bytes) when the snapshot was taken."""
    memory_limit: int | None = None
    """The run's memory limit (bytes), if it has one."""
    resident_nodes: int = 0
    """Nodes of the graph held in RAM (all of them: the whole graph is resident)."""
    phase: str = "expanding"
    """The step the run is in: ``expanding`` (the figures are this batch's), or a long
    step that reports nothing until it ends: ``committing N nodes``, ``retrograde``,
    ``finality``, ``loading edges``, ``closing`` (the figures are then the latest
    batch's). Stores ignore it."""


class Store(Protocol):
    """Where the solver's graph lives between and during runs."""

    def open(self, game: Game, run: RunOptions) -> Graph:
        """The stored graph of *game*'s variant (empty if new), ready to be extended.

        A persistent store also takes the variant's writer lock and records the run.

        :raises SolveError: if the variant is locked by another writer, or the store holds
            the game under another rules version.
        """
        ...

    def commit(self, graph: Graph, progress: Progress) -> None:
        """Durably write ``graph.pending()`` and *progress* in one transaction, then call
        ``graph.mark_committed()``."""
        ...

    def close(self, progress: Progress) -> None:
        """Record the run's final status and release the writer lock."""
        ...


class MemoryStore:
    """Keeps each variant's graph in memory; solving again continues where it stopped."""

    def __init__(self) -> None:
        self.graphs: dict[tuple[str, int, str], Graph] = {}
        self.runs: list[Progress] = []

    def open(self, game: Game, run: RunOptions) -> Graph:
        ident = (game.name, game.version, params_text(game.params))
        graph = self.graphs.get(ident)
        if graph is None:
            graph = self.graphs[ident] = Graph()
        return graph

    def commit(self, graph: Graph, progress: Progress) -> None:
        graph.mark_committed()

    def close(self, progress: Progress) -> None:
        self.runs.append(progress)

    def __repr__(self) -> str:
        return f"<MemoryStore variants={len(self.graphs)}>"
