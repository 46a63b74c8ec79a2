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
import os
import sys
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, MutableSequence
from dataclasses import dataclass, field, replace
from typing import Any

from solver.bulk import (
    expand_bulk,
    key_index,
    retrograde,
    settle_all_flags,
    unexpanded_from,
)
from solver.errors import (
    InvalidParameterError,
    InvalidPositionError,
    NegagraphError,
    SolveError,
)
from solver.game import Game, PositionKey
from solver.graph import EXPANDED, TERMINAL, UNEXPANDED, Graph, NodeId
from solver.store import MemoryStore, Progress, RunOptions, Store
from solver.values import DEPTH_INF, NEG_INF, POS_INF, Bounds, clamp, to_public

log = logging.getLogger(__name__)

try:
    from solver import _native
except ImportError:  # not built (no C compiler at install): the pure-Python path
    _native = None  # type: ignore[assignment]
if os.environ.get("NEGAGRAPH_PURE_PYTHON"):
    _native = None  # type: ignore[assignment]

ProgressCallback = Callable[[Progress], None]

DEFAULT_FULL_BATCH = 20_000
"""Expansions per batch in full mode."""

FULL_COMMIT_GROWTH = 0.5
"""Full mode commits once its new nodes reach this fraction of the committed ones (or
:data:`DEFAULT_FULL_BATCH`, whichever is more), or :data:`FULL_COMMIT_SECONDS` after its
last commit, unless ``batch_size`` is given (then every batch is committed)."""

FULL_COMMIT_SECONDS = 30.0
"""The longest a full solve works without committing (what a crash can cost)."""


@dataclass(frozen=True)
class SolveResult:
    """What a call of :func:`solve` achieved. Infinite bounds are ``±math.inf``."""

    game: str
    params: dict[str, Any]
    root: PositionKey
    """The root's key (canonical when the game uses symmetry)."""
    root_text: str
    """The root in the game's notation."""
    low: float | int
    high: float | int
    low_final: bool
    high_final: bool
    depth_low: int | None
    """Plies within which the low bound is realised (``None`` if infinite)."""
    depth_high: int | None
    expansions: int
    """Expansions done by this call (not counting earlier runs on the same store)."""
    nodes: int
    """Nodes in the stored graph after this call."""
    edges: int
    status: str
    """``complete``, ``budget`` or ``stopped``."""
    seconds: float
    repetition_value: int | None = None
    """The root's value when endless play is worth the game's repetition value."""
    full: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Both root bounds are final (and, in full mode, everything is expanded)."""
        return self.status == "complete"

    @property
    def value(self) -> int | None:
        """The exact value when ``low == high``, else ``None``."""
        return self.bounds.value

    @property
    def bounds(self) -> Bounds:
        return Bounds(self.low, self.high, self.low_final, self.high_final)


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
    until: str = "bounds",
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
    :raises InvalidParameterError: for negative budgets or a bad batch size, or a full
        solve of an infinite game without a budget.
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
    if max_expansions is not None and max_expansions < 0:
        raise InvalidParameterError(f"max_expansions must be >= 0, not {max_expansions}")
    if max_seconds is not None and (max_seconds < 0 or math.isnan(max_seconds)):
        raise InvalidParameterError(f"max_seconds must be >= 0, not {max_seconds}")
    if until not in ("bounds", "value"):
        raise InvalidParameterError(f"until must be 'bounds' or 'value', not {until!r}")
    if batch_size is not None and batch_size < 1:
        raise InvalidParameterError(f"batch_size must be >= 1, not {batch_size}")
    if full and not game.facts.finite and max_expansions is None and max_seconds is None:
        raise InvalidParameterError(
            f"{game.name} has infinitely many positions: a full solve needs a budget "
            "(max_expansions or max_seconds)"
        )
    if root is None:
        root_key = game.initial()
    elif isinstance(root, str):
        root_key = game.parse(root)
    elif isinstance(root, int) and not isinstance(root, bool) and root >= 0:
        root_key = root
    else:
        raise InvalidPositionError(f"root must be a position key or notation, not {root!r}")
    if game.uses_symmetry:
        root_key = game.canonical(root_key)
    store = store if store is not None else MemoryStore()
    run = RunOptions(root_key, full, max_expansions, max_seconds)
    graph = store.open(game, run)
    try:
        solver = _Solver(game, graph, root_key, store, run, batch_size, progress, stop, until)
    except BaseException as exc:
        store.close(_opening(graph, "stopped" if isinstance(exc, KeyboardInterrupt) else "failed"))
        raise
    try:
        status = solver.run_full() if full else solver.run_partial()
        final = solver.progress(status)
        solver.phase("closing")
    except BaseException as exc:
        solver.phase("closing")
        # Ctrl-C (KeyboardInterrupt) is a stop on request that lost the batch in flight.
        store.close(solver.progress("stopped" if isinstance(exc, KeyboardInterrupt) else "failed"))
        failure = _game_failure(game, exc)
        if failure is not None:
            raise failure from exc
        raise
    store.close(final)
    return solver.result(status)


def _game_failure(game: Game, exc: BaseException) -> SolveError | None:
    """A one-line :class:`SolveError` for *exc* if the game's own code raised it (a bug
    in a plugin, say: its traceback passes through the module of the game's class), else
    ``None`` (negagraph's own errors, Ctrl-C, failures elsewhere keep their type)."""
    if not isinstance(exc, Exception) or isinstance(exc, NegagraphError):
        return None
    source = sys.modules.get(type(game).__module__)
    path = getattr(source, "__file__", None)
    tb = exc.__traceback__
    while tb is not None:
        if path is not None and tb.tb_frame.f_code.co_filename == path:
            return SolveError(
                f"{game.name}: the game's own code failed "
                f"({type(game).__qualname__} in {path}): "
                f"{type(exc).__name__}: {exc}"
            )
        tb = tb.tb_next
    return None


def _opening(graph: Graph, status: str) -> Progress:
    """The progress of a run that ended before its first step (nothing done)."""
    return Progress(
        status,
        0,
        graph.num_nodes,
        graph.total_edges,
        0,
        0,
        0,
        NEG_INF,
        POS_INF,
        False,
        False,
        0.0,
        phase="closing",
    )


def decided(rep: int, low: int, high: int, low_final: bool, high_final: bool) -> bool:
    """Whether ``clamp(rep, low, high)`` — the value when endless play is worth *rep* — can
    no longer change: both bounds final, or a final bound on the far side of *rep*."""
    return (low_final and high_final) or (low_final and low >= rep) or (high_final and high <= rep)


class _Solver:
    """One run of the solver over one graph."""

    def __init__(
        self,
        game: Game,
        graph: Graph,
        root_key: PositionKey,
        store: Store,
        run: RunOptions,
        batch_size: int | None,
        progress_cb: ProgressCallback | None,
        stop: Callable[[], bool] | None,
        until: str = "bounds",
    ) -> None:
        self.game = game
        self.g = graph
        self.store = store
        self.run = run
        self.batch_size = batch_size
        self.progress_cb = progress_cb
        self.stop = stop
        self.started = time.monotonic()
        self.deadline = None if run.max_seconds is None else self.started + run.max_seconds
        self.expansions = 0
        self.nodes_at_start = graph.num_nodes
        self.edges_at_start = graph.total_edges
        self.canon = game.canonical if game.uses_symmetry else None
        facts = game.facts
        self.facts = facts
        value_range = facts.value_range
        self.vmin: int = NEG_INF if value_range is None else value_range[0]
        self.vmax: int = POS_INF if value_range is None else value_range[1]
        self.until = until
        self.seeds: list[NodeId] = []
        """Nodes whose flags may follow locally from a search's expansions (pending)."""
        self.searching = game.priority is None and facts.leak_order != "breadth"
        """Depth-first mode: leaks are chosen by :meth:`search`."""
        self.acyclic = facts.acyclic
        """The game never repeats a position: :meth:`search_acyclic` instead, and no
        periodic finality refreshes (flags propagated upwards are then exact)."""
        self.root = self._ensure_root(root_key)
        self._tally: tuple[int, int, int] | None = None
        """For :meth:`frontier_size` in partial mode: (nodes scanned, terminal nodes
        among them, nodes expanded before the run's first expansion)."""
        self._latest: Progress | None = None
        """The latest :meth:`progress` snapshot (what :meth:`phase` reports)."""

    # -- bookkeeping ----------------------------------------------------------------

    def _ensure_root(self, key: PositionKey) -> NodeId:
        nid = self.g.find(key)  # a full run drops the index anyway: do not build it
        if nid is None:
            nid = self.g.add_node(key, 0, self.game.terminal_value(key))
        return nid

    def frontier_size(self) -> int:
        """Unexpanded nodes. Counted in full once, then, in partial mode (see
        :meth:`run_partial`), from :attr:`_tally`: a node's state there changes only by
        an expansion, which :attr:`expansions` counts, and terminal nodes are terminal
        from their creation, so only the nodes added since the last call are scanned."""
        g = self.g
        tally = self._tally
        if tally is None:
            return g.state.count(UNEXPANDED)
        counted, terminals, expanded_before = tally
        n = g.num_nodes
        if n > counted:
            terminals += g.state.count(TERMINAL, counted, n)
            self._tally = (n, terminals, expanded_before)
        return n - terminals - expanded_before - self.expansions

    def progress(self, status: str) -> Progress:
        g, r = self.g, self.root
        self._latest = p = Progress(
            status=status,
            expansions=self.expansions,
            nodes=g.num_nodes,
            edges=g.total_edges,
            nodes_added=g.num_nodes - self.nodes_at_start,
            edges_added=g.total_edges - self.edges_at_start,
            frontier=self.frontier_size(),
            root_low=g.low[r],
            root_high=g.high[r],
            root_low_final=bool(g.low_final[r]),
            root_high_final=bool(g.high_final[r]),
            seconds=time.monotonic() - self.started,
        )
        return p

    def phase(self, name: str, latest: Progress | None = None) -> None:
        """Tell the progress callback that a long step called *name* starts (with the
        figures of *latest*, else of the latest snapshot: nothing is recounted)."""
        if self.progress_cb is None:
            return
        p = latest or self._latest or self.progress("running")
        self.progress_cb(replace(p, phase=name, seconds=time.monotonic() - self.started))

    def commit(self, status: str = "running", *, settled: bool = False) -> None:
        """Commit what changed as one batch. Every batch but a closing pass's leaves the
        graph unsettled (:attr:`Graph.settled`), in the same transaction."""
        p = self.progress(status)
        g = self.g
        g.settled = settled
        rows = g.num_nodes - g.committed_nodes + (g.num_nodes if g.all_dirty else len(g.dirty))
        self.phase(f"committing {rows:,} nodes", p)
        self.store.commit(self.g, p)
        if self.progress_cb is not None:
            self.progress_cb(p)

    def out_of_budget(self) -> str | None:
        """``"budget"`` or ``"stopped"`` if the run must end before the next batch."""
        if self.stop is not None and self.stop():
            return "stopped"
        if self.run.max_expansions is not None and self.expansions >= self.run.max_expansions:
            return "budget"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "budget"
        return None

    def result(self, status: str) -> SolveResult:
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
            depth_low=None if g.depth_low[r] >= DEPTH_INF else g.depth_low[r],
            depth_high=None if g.depth_high[r] >= DEPTH_INF else g.depth_high[r],
            expansions=self.expansions,
            nodes=g.num_nodes,
            edges=g.total_edges,
            status=status,
            seconds=time.monotonic() - self.started,
            repetition_value=rep_value,
            full=self.run.full,
        )

    # -- expansion ------------------------------------------------------------------

    def expand(self, batch: list[NodeId]) -> None:
        """Expand every node of *batch*: create children (terminal ones final at once)."""
        expand_one = self.expand_one
        for nid in batch:
            expand_one(nid)
        self.expansions += len(batch)

    def expand_one(self, nid: NodeId) -> None:
        """Expand *nid* (not counted in :attr:`expansions`: callers count).

        :raises SolveError: if the game gives a non-terminal position no moves.
        """
        game = self.game
        key = self.g.keys[nid]
        moves = game.children(key)
        if not isinstance(moves, (list, tuple)):
            moves = list(moves)
        if not moves:
            raise _no_moves(game, key)
        canon = self.canon
        if canon is not None:
            moves = [(m, canon(ck)) for m, ck in moves]
        self.g.expand_with(nid, moves, game.terminal_value)

    # -- partial mode ----------------------------------------------------------------

    def run_partial(self) -> str:
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
        if g.committed_nodes:
            # A stored graph: recompute bounds (and depths) from scratch once, so the
            # incremental updates below start from the exact fixpoint whatever wrote it.
            self.phase("retrograde")
            retrograde(g)
        state = g.state
        self._tally = (g.num_nodes, state.count(TERMINAL), state.count(EXPANDED) - self.expansions)
        status = "complete"
        expanded = g.state.count(EXPANDED)
        while not self.target_reached():
            reason = self.out_of_budget()
            if reason is not None:
                status = reason
                break
            if self.searching:
                limit = self.batch_size or max(1, g.num_nodes // 256)
                if self.run.max_expansions is not None:  # exact; and a restarted search
                    limit = min(limit, self.run.max_expansions - self.expansions)  # retraces
                done = self.search_acyclic(limit) if self.acyclic else self.search(limit)
                if done:
                    if not self.acyclic and refresh_due(
                        expanded, expanded + done, SEARCH_REFRESH_SMALL
                    ):
                        self.refresh_finality()
                    expanded += done
                    self.commit()
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
            if self.run.max_expansions is not None:  # exact (see solve())
                batch = batch[: self.run.max_expansions - self.expansions]
            self.expand(batch)
            changed = update_bounds(g, batch)
            seeds = list(batch)
            for n in changed:
                seeds.append(n)
                seeds.extend(g.parents(n))
            propagate_finality(g, seeds, vmin=self.vmin, vmax=self.vmax)
            if (
                self.game.priority is not None
                or self.facts.leak_order == "breadth"
                or refresh_due(expanded, expanded + len(batch))
            ):
                self.refresh_finality()
            expanded += len(batch)
            self.commit()
        self.close_pass(status)
        return status

    def close_pass(self, status: str) -> None:
        """The end of a partial run, committed as one batch that settles the graph: depths
        by one retrograde pass (the bounds are already the fixpoint) and, when the run is
        complete and the game may repeat, exact finality over the whole graph (not only
        the root's region; flags propagated upwards are exact already when the game is
        acyclic). A function of the committed graph alone, so a run that finds it missing
        (:attr:`Graph.settled` false: a crash after the last batch) redoes it exactly."""
        g = self.g
        self.phase("retrograde")
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
            k = self.batch_size or max(1, g.num_nodes // 256)
            return first_leaks(g, self.root, k)[0]
        leaks = walk(g, self.root)[2]
        if prio is None:
            dist = g.dist
            leaks.sort(key=lambda n: (dist[n], n))
        else:
            keys = g.keys
            leaks.sort(key=lambda n: (prio(keys[n]), n))
        return leaks[: self.batch_size or max(1, g.num_nodes // 64, len(leaks) // 4)]

    def search(self, limit: int) -> int:
        """Expand up to *limit* leaks chosen by null-window tests on the root; return how
        many were expanded (0 when the tests find no leak: cycles, or stale flags).

        A test asks whether the root's value is at least ``t`` (``GE``) or at most ``-t``
        (``LE``): see :func:`root_test`. It is decided by bounds alone — ``GE(n)`` holds
        once ``low(n) >= t`` and fails once ``high(n) < t`` (or ``low(n)`` is final below
        ``t``) — and ``GE(n)`` holds iff some child satisfies ``LE`` with ``-t``, ``LE(n)``
        iff every child satisfies ``GE``. A depth-first search in move order (alpha-beta's
        null-window search, with the graph's exact bounds as its transposition table)
        descends into the first undecided child until it meets a frontier node, expands
        it, updates bounds and flags, and goes on from there: a child that succeeds at an
        OR node or fails at an AND node decides its parent, so siblings are skipped exactly
        where alpha-beta cuts off. When the root's test is decided the next one starts.

        The search starts afresh from the root on every call, so its choices depend only
        on the graph as the call finds it (committed, or freshly loaded on a resume).
        """
        g = self.g
        low, high, state = g.low, g.high, g.state
        lf, hf = g.low_final, g.high_final
        first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
        root = self.root
        done = 0
        seeds = self.seeds
        while done < limit:
            if seeds:
                propagate_finality(g, seeds, vmin=self.vmin, vmax=self.vmax)
                seeds.clear()
            if self.target_reached():
                break
            if state[root] == UNEXPANDED:
                self.grow([root])
                done += 1
                continue
            kind, t = root_test(g, root)
            u = -t
            start = done
            f = first_edge[root]
            # frames: [node, kind, next edge, end edge, saw an undecided (dead) child]
            stack: list[list[int]] = [[root, kind, f, f + child_count[root], 0]]
            seen = {root * 2 + kind: 2}  # tests entered: their result, 2 if open
            ret = 0  # result handed to the top frame: 1 holds, -1 fails, 2 dead end
            while stack:
                fr = stack[-1]
                if ret:
                    if ret == 2:
                        fr[4] = 1
                    elif (ret == 1) == (fr[1] == _GE):
                        # a child decides its parent: OR succeeds / AND fails
                        stack.pop()
                        seen[fr[0] * 2 + fr[1]] = ret
                        continue
                    ret = 0
                e = fr[2]
                if e >= fr[3]:
                    stack.pop()
                    ret = 2 if fr[4] else (-1 if fr[1] == _GE else 1)
                    seen[fr[0] * 2 + fr[1]] = ret
                    continue
                fr[2] = e + 1
                c = edge_child[e]
                if fr[1] == _GE:
                    ck = _LE
                    hc = high[c]
                    if hc <= u:
                        ret = 1
                        continue
                    if low[c] > u or (hf[c] and hc > u):
                        ret = -1
                        continue
                else:
                    ck = _GE
                    lc = low[c]
                    if lc >= t:
                        ret = 1
                        continue
                    if high[c] < t or (lf[c] and lc < t):
                        ret = -1
                        continue
                key = c * 2 + ck
                if key in seen:
                    # decided earlier, a dead end, or on the stack (a cycle: dead too)
                    ret = seen[key]
                    continue
                seen[key] = 2
                if state[c] == UNEXPANDED:
                    changed = self.grow([c])
                    done += 1
                    f = first_edge[c]
                    stack.append([c, ck, f, f + child_count[c], 0])
                    cut, res = _decided_frame(stack, changed, low, high, t)
                    if cut >= 0:
                        # the new bounds decide a test on the stack: drop the frames above
                        for fr2 in stack[cut + 1 :]:
                            del seen[fr2[0] * 2 + fr2[1]]
                        fr2 = stack[cut]
                        seen[fr2[0] * 2 + fr2[1]] = res
                        del stack[cut:]
                        ret = res
                    if done >= limit:
                        break
                    continue
                f = first_edge[c]
                stack.append([c, ck, f, f + child_count[c], 0])
            else:
                if done > start:
                    continue
                # Decided (or dead) without an expansion: only the flags, which lag around
                # cycles, can tell more; leave that to the caller.
            break
        if seeds:
            propagate_finality(g, seeds, vmin=self.vmin, vmax=self.vmax)
        return done

    def search_acyclic(self, limit: int) -> int:
        """:meth:`search` for games that declare themselves acyclic: the same null-window
        tests on the root, decided by the same bounds and flags, but searched recursively
        the way alpha-beta searches them, which costs a fraction of the general search.

        Expanding a node sets its bounds from its children; a node whose test is decided
        by its children gets its bounds recomputed from them on the way back. Bounds
        therefore change only along the search path while a test runs (other parents of
        a changed node keep looser, still valid, bounds), and the exact fixpoint is
        restored from the changed nodes when the test ends, before flags are propagated
        and before the caller commits. Like :meth:`search`, every call starts afresh
        from the root, so its choices depend only on the graph as the call finds it.

        The C inner loop (:mod:`solver._native`, when built and the keys fit 64 bits) runs
        the same tests, expansion for expansion; this method falls back to the Python one
        in :meth:`_search_acyclic_py` otherwise, or from the first key beyond 64 bits on.

        :raises SolveError: if a position repeats (the game is not acyclic after all).
        """
        done = 0
        keys = self.g.keys
        if _native is not None and isinstance(keys, array) and keys.typecode == "q":
            done, wide = self._search_native(limit)
            if not wide:
                self.expansions += done
                return done
        done += self._search_acyclic_py(limit - done)
        self.expansions += done
        return done

    def _search_native(self, limit: int) -> tuple[int, bool]:
        """:meth:`_search_passes` with each root test run by :mod:`solver._native`;
        returns the expansions and whether a key beyond 64 bits stopped it (before the
        expansion that meets it: the Python search goes on from there)."""
        g, game, root = self.g, self.game, self.root
        g.index  # noqa: B018  (built if dropped: the C loop reads and extends them)
        g.rev_head  # noqa: B018
        children, terminal, canon = game.children, game.terminal_value, self.canon
        assert _native is not None  # the caller chose the C path
        test = _native.acyclic_test
        done = 0
        while done < limit:
            t = self._next_root_test()
            if t is None:
                break
            status, used, node = test(
                g, root, t, limit - done, children, terminal, canon, self.vmin, self.vmax
            )
            done += used
            if status == _NATIVE_NO_MOVES:
                raise _no_moves(game, g.keys[node])
            if status == _NATIVE_REPEATS:
                raise _repeats(game, g.keys[node])
            if status == _NATIVE_WIDE_KEY:
                return done, True
            if not used:
                break  # decided without an expansion: flags lag; the caller refreshes
        return done, False

    def _search_acyclic_py(self, limit: int) -> int:
        """:meth:`search_acyclic` in Python; returns the expansions (not counted in
        :attr:`expansions`: the caller counts)."""
        g = self.g
        game = self.game
        low, high, state = g.low, g.high, g.state
        lf, hf = g.low_final, g.high_final
        first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
        expand_one = self.expand_one
        expanded: list[NodeId] = []
        changed: list[NodeId] = []
        path: set[NodeId] = set()
        budget = [limit]

        def test(n: NodeId, t: int) -> int:
            """1 if ``value(n) >= t`` is proved, -1 if refuted, 0 if the expansion budget
            ran out first; *n* is undecided by its own bounds."""
            if state[n] == UNEXPANDED:
                if not budget[0]:
                    return 0
                budget[0] -= 1
                expand_one(n)
                expanded.append(n)
                low[n], high[n] = lo, hi = children_bounds(g, n)
                changed.append(n)
                if lo >= t:
                    return 1
                if hi < t:
                    return -1
            elif n in path:
                raise _repeats(game, g.keys[n])
            path.add(n)
            u = -t
            s = 1 - t
            result = -1
            f = first_edge[n]
            end = f + child_count[n]
            for e in range(f, end):
                c = edge_child[e]
                hc = high[c]
                lc = low[c]
                if hc <= u or (lf[c] and lc <= u):
                    result = 1  # the child is at most u: n is at least t
                    break
                if lc > u or (hf[c] and hc > u):
                    continue  # the child is above u: it cannot show n is at least t
                r = test(c, s)
                if r <= 0:
                    result = 1 if r else 0  # the child is below s: n is at least t
                    break
            path.discard(n)
            lo, hi = children_bounds(g, n)
            if lo != low[n] or hi != high[n]:
                low[n] = lo
                high[n] = hi
                changed.append(n)
            return result

        done = 0
        depth_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(depth_limit, g.num_nodes + limit + 1000))
        try:
            done = self._search_passes(test, budget, limit, expanded, changed)
        finally:
            sys.setrecursionlimit(depth_limit)
        return done

    def _search_passes(
        self,
        test: Callable[[NodeId, int], int],
        budget: list[int],
        limit: int,
        expanded: list[NodeId],
        changed: list[NodeId],
    ) -> int:
        """Root tests of :meth:`search_acyclic` until *limit* expansions are done, the
        target is reached, or a test is decided without an expansion."""
        root = self.root
        done = 0
        while done < limit:
            t = self._next_root_test()
            if t is None:
                break
            before = budget[0]
            test(root, t)
            done += before - budget[0]
            self._settle_search(expanded, changed)
            if budget[0] == before:
                break  # decided without an expansion: flags lag; the caller refreshes
        return done

    def _next_root_test(self) -> int | None:
        """The *t* of the next root test of :meth:`search_acyclic` ("is the root's value
        at least *t*?"), or ``None`` when the target is reached or the root's bounds
        decide the test already (flags lag: the caller refreshes them)."""
        if self.target_reached():
            return None
        g, root = self.g, self.root
        kind, t = root_test(g, root)
        if kind == _LE:
            t = 1 - t  # "value <= -t" is "not value >= 1 - t"
        if g.state[root] != UNEXPANDED and not g.low[root] < t <= g.high[root]:
            return None
        return t

    def _settle_search(self, expanded: list[NodeId], changed: list[NodeId]) -> None:
        """After a pass of :meth:`search_acyclic`: restore the bounds fixpoint from the
        *changed* nodes, then propagate flags from everything that moved; empties both."""
        g = self.g
        low, high, state = g.low, g.high, g.state
        edge_parent, rev_head, rev_next = g.edge_parent, g.rev_head, g.rev_next
        committed, dirty = g.committed_nodes, g.dirty
        seeds: list[NodeId] = list(expanded)
        work = changed
        queued: set[NodeId] = set()
        while work:
            nxt: list[NodeId] = []
            for n in work:
                if n < committed:
                    dirty.add(n)
                seeds.append(n)
                e = rev_head[n]
                while e >= 0:
                    p = edge_parent[e]
                    e = rev_next[e]
                    if p in queued or state[p] != EXPANDED:
                        continue
                    queued.add(p)
                    seeds.append(p)
                    lo, hi = children_bounds(g, p)
                    if lo != low[p] or hi != high[p]:
                        low[p] = lo
                        high[p] = hi
                        nxt.append(p)
            queued.clear()
            work = nxt
        propagate_finality(g, seeds, vmin=self.vmin, vmax=self.vmax)
        expanded.clear()
        changed.clear()

    def grow(self, batch: list[NodeId]) -> list[NodeId]:
        """Expand *batch* and update bounds; return the nodes whose bounds changed. The
        flags that follow locally are set when :meth:`search` flushes :attr:`seeds`."""
        g = self.g
        self.expand(batch)
        changed = update_bounds(g, batch)
        seeds = self.seeds
        seeds.extend(batch)
        for n in changed:
            seeds.append(n)
            seeds.extend(g.parents(n))
        return changed

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
        if g.num_nodes > before:
            log.info("seeded %d tablebase positions", g.num_nodes - before)
            self.commit()

    def run_full(self) -> str:
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
        the batches go through :func:`expand_bulk` (sorted key arrays instead of the
        dict, no reverse edges until needed)."""
        g = self.g
        self.seed_tablebase()
        index = key_index(g)
        if index is not None:
            g.drop_derived()
        scan = 0
        last_commit = time.monotonic()
        while True:
            limit = self.batch_size or DEFAULT_FULL_BATCH
            if self.run.max_expansions is not None:
                limit = max(1, min(limit, self.run.max_expansions - self.expansions))
            batch = unexpanded_from(g.state, scan, limit)
            if not batch:
                break
            reason = self.out_of_budget()
            if reason is not None:
                if index is not None:  # for the next run's index (a resume file keeps it)
                    g.key_order = index.ids
                self.commit()
                return reason
            scan = batch[-1] + 1
            if index is not None and expand_bulk(g, self.game, batch, index, self.canon):
                self.expansions += len(batch)
            else:
                index = None  # keys beyond 64 bits: the dict from now on
                self.expand(batch)
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

SEARCH_REFRESH_SMALL = 64
"""With the null-window search, exact refreshes run on every batch only while fewer nodes
than this are expanded (the search reads flags only to skip hopeless tests; acyclic games
need no refresh at all), then at the geometric steps below."""
REFRESH_GROWTH = 1.25
"""In depth-first mode, finality is refreshed exactly whenever the number of expanded
nodes grows past a power of this factor (and on every batch while the graph is small)."""


_NATIVE_NO_MOVES, _NATIVE_REPEATS, _NATIVE_WIDE_KEY = 1, 2, 3
"""Statuses of :func:`solver._native.acyclic_test` besides 0 (the test ran)."""


def _no_moves(game: Game, key: PositionKey) -> SolveError:
    return SolveError(
        f"{game.name}: position {game.format(key)!r} has no moves "
        "but is not terminal (the game breaks its contract)"
    )


def _repeats(game: Game, key: PositionKey) -> SolveError:
    return SolveError(
        f"{game.name}: position {game.format(key)!r} repeats, but the game declares itself acyclic"
    )


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


def expanded_nodes(g: Graph) -> set[NodeId]:
    state = g.state
    return {n for n in range(g.num_nodes) if state[n] == EXPANDED}


def children_bounds(g: Graph, n: NodeId) -> tuple[int, int]:
    """``(max -high(c), max -low(c))`` over the children ``c`` of expanded *n*: the bounds
    the rules give it from its children's."""
    low, high, edge_child = g.low, g.high, g.edge_child
    lo = hi = NEG_INF
    f = g.first_edge[n]
    for e in range(f, f + g.child_count[n]):
        c = edge_child[e]
        v = -high[c]
        if v > lo:
            lo = v
        v = -low[c]
        if v > hi:
            hi = v
    return lo, hi


def update_bounds(g: Graph, seeds: list[NodeId]) -> list[NodeId]:
    """Re-establish the bounds fixpoint after *seeds* were expanded; return the nodes
    whose bounds changed.

    Starting from the previous fixpoint is correct because every change only tightens
    bounds (lows rise, highs fall): a worklist re-evaluates each changed node's parents.
    """
    low, high, state = g.low, g.high, g.state
    edge_parent, rev_head, rev_next = g.edge_parent, g.rev_head, g.rev_next
    committed, dirty = g.committed_nodes, g.dirty
    queue = deque(seeds)
    queued = set(seeds)
    changed: list[NodeId] = []
    while queue:
        n = queue.popleft()
        queued.discard(n)
        lo, hi = children_bounds(g, n)
        if lo != low[n] or hi != high[n]:
            low[n] = lo
            high[n] = hi
            changed.append(n)
            if n < committed:
                dirty.add(n)
            e = rev_head[n]
            while e >= 0:
                p = edge_parent[e]
                if p not in queued and state[p] == EXPANDED:
                    queued.add(p)
                    queue.append(p)
                e = rev_next[e]
    return changed


def propagate_finality(
    g: Graph, seeds: Iterable[NodeId], *, vmin: int = NEG_INF, vmax: int = POS_INF
) -> int:
    """Set flags that the rules make final given the children's current flags, starting at
    *seeds* and moving up to parents whenever a flag turns final; return the work done.

    This is the cheap, local half of finality: it finds everything that follows from
    already-final children (all of it in an acyclic graph) but not flags that hold only
    by the greatest fixpoint around a cycle — :func:`update_finality` finds those. Every
    flag it sets is final in the greatest fixpoint too, so it is always sound.

    *vmin* and *vmax* bound every value of the game (its ``value_range``): a low bound at
    *vmax* cannot rise and a high bound at *vmin* cannot fall, so both are final.
    """
    low, high, state = g.low, g.high, g.state
    lf, hf = g.low_final, g.high_final
    first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
    edge_parent, rev_head, rev_next = g.edge_parent, g.rev_head, g.rev_next
    committed, dirty = g.committed_nodes, g.dirty
    queue = deque(n for n in dict.fromkeys(seeds) if state[n] == EXPANDED)
    queued = set(queue)
    work = 0
    while queue:
        n = queue.popleft()
        queued.discard(n)
        l_ok, h_ok = lf[n], hf[n]
        if l_ok and h_ok:
            continue
        lo, hi = low[n], high[n]
        f = first_edge[n]
        end = f + child_count[n]
        work += end - f + 1
        if lo == hi:
            l_ok = h_ok = 1
        else:
            if not l_ok:
                if lo >= vmax:
                    l_ok = 1
                else:
                    for e in range(f, end):
                        c = edge_child[e]
                        if not hf[c] and -low[c] > lo:
                            break
                    else:
                        l_ok = 1
            if not h_ok:
                if hi <= vmin:
                    h_ok = 1
                else:
                    for e in range(f, end):
                        c = edge_child[e]
                        if lf[c] and -low[c] == hi:
                            h_ok = 1
                            break
        if l_ok != lf[n] or h_ok != hf[n]:
            lf[n] = l_ok
            hf[n] = h_ok
            if n < committed:
                dirty.add(n)
            e = rev_head[n]
            while e >= 0:
                p = edge_parent[e]
                if p not in queued and state[p] == EXPANDED:
                    queued.add(p)
                    queue.append(p)
                e = rev_next[e]
    return work


def update_finality(
    g: Graph,
    low_candidates: Iterable[NodeId],
    high_candidates: Iterable[NodeId],
    *,
    vmin: int = NEG_INF,
    vmax: int = POS_INF,
) -> None:
    """Recompute finality flags as a greatest fixpoint over the candidate (node, bound)
    pairs; every other flag is taken as it is.

    All candidate flags start final, then a flag is dropped wherever its rule fails and the
    drop is propagated to the parents whose rules read it, until nothing changes. The
    result is exact for the candidates when every non-final flag they depend on is itself a
    candidate (true of the region :func:`walk` returns, and of all expanded nodes); flags
    once final stay final, so final flags never need to be candidates.

    Rules: ``low(n)`` is final if every child ``c`` with ``-low(c) > low(n)`` has a final
    ``high(c)``; ``high(n)`` is final if some child with a final ``low(c)`` has
    ``-low(c) = high(n)``; both are final when ``low(n) = high(n)``. With a known value
    range, a low bound at *vmax* and a high bound at *vmin* are final too.
    """
    low, high, state = g.low, g.high, g.state
    lf, hf = g.low_final, g.high_final
    first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
    edge_parent, rev_head, rev_next = g.edge_parent, g.rev_head, g.rev_next
    lows = {n for n in low_candidates if state[n] == EXPANDED and not lf[n]}
    highs = {n for n in high_candidates if state[n] == EXPANDED and not hf[n]}
    for n in lows:
        lf[n] = 1
    for n in highs:
        hf[n] = 1
    order = sorted(lows | highs)
    queue = deque(order)
    queued = set(order)
    while queue:
        n = queue.popleft()
        queued.discard(n)
        lo, hi = low[n], high[n]
        if lo == hi:
            continue
        f = first_edge[n]
        end = f + child_count[n]
        if lf[n] and n in lows and lo < vmax:
            for e in range(f, end):
                c = edge_child[e]
                if not hf[c] and -low[c] > lo:
                    lf[n] = 0
                    # parents' high-finality reads this low flag
                    e2 = rev_head[n]
                    while e2 >= 0:
                        p = edge_parent[e2]
                        if hf[p] and p in highs and p not in queued:
                            queued.add(p)
                            queue.append(p)
                        e2 = rev_next[e2]
                    break
        if hf[n] and n in highs and hi > vmin:
            for e in range(f, end):
                c = edge_child[e]
                if lf[c] and -low[c] == hi:
                    break
            else:
                hf[n] = 0
                # parents' low-finality reads this high flag
                e2 = rev_head[n]
                while e2 >= 0:
                    p = edge_parent[e2]
                    if lf[p] and p in lows and p not in queued:
                        queued.add(p)
                        queue.append(p)
                    e2 = rev_next[e2]
    committed, dirty = g.committed_nodes, g.dirty
    for n in lows:
        if lf[n] and n < committed:
            dirty.add(n)
    for n in highs:
        if hf[n] and n < committed:
            dirty.add(n)


def walk(g: Graph, root: NodeId) -> tuple[set[NodeId], set[NodeId], list[NodeId]]:
    """The (node, bound) pairs a non-final root bound depends on, and the leaks.

    Where ``low(n)`` is not final, follow children ``c`` with ``-low(c) > low(n)`` whose
    ``high(c)`` is not final; where ``high(n)`` is not final, follow children with
    ``-low(c) = high(n)`` whose ``low(c)`` is not final. Returns the nodes reached on their
    low side, those reached on their high side, and the unexpanded nodes reached (the
    leaks, in the order found).
    """
    low, state = g.low, g.state
    high = g.high
    lf, hf = g.low_final, g.high_final
    first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
    seen_low: set[NodeId] = set()
    seen_high: set[NodeId] = set()
    leaks: list[NodeId] = []
    leak_set: set[NodeId] = set()
    stack: list[tuple[NodeId, bool]] = []
    if not lf[root]:
        seen_low.add(root)
        stack.append((root, True))
    if not hf[root]:
        seen_high.add(root)
        stack.append((root, False))
    while stack:
        n, is_low = stack.pop()
        if state[n] == UNEXPANDED:
            if n not in leak_set:
                leak_set.add(n)
                leaks.append(n)
            continue
        f = first_edge[n]
        if is_low:
            lo = low[n]
            for e in range(f, f + child_count[n]):
                c = edge_child[e]
                if not hf[c] and -low[c] > lo and c not in seen_high:
                    seen_high.add(c)
                    stack.append((c, False))
        else:
            hi = high[n]
            for e in range(f, f + child_count[n]):
                c = edge_child[e]
                if not lf[c] and -low[c] == hi and c not in seen_low:
                    seen_low.add(c)
                    stack.append((c, True))
    return seen_low, seen_high, leaks


def first_leaks(g: Graph, root: NodeId, limit: int) -> tuple[list[NodeId], int]:
    """The first *limit* leaks of a depth-first walk in move order, and the pairs visited.

    The same walk as :func:`walk`, but depth first with each node's children in the
    game's move order, stopping as soon as *limit* leaks are found: the leaks it returns
    are the leftmost of the search tree, as a depth-first alpha-beta search would meet
    them, and the walk costs little more than the paths that lead to them.

    One addition: where ``low(n)`` is not final and a child ``c`` could still raise it
    (``-low(c) > low(n)``), the walk also follows ``c``'s own low side when that is not
    final. Raising ``low(c)`` to ``-low(n)`` makes ``c`` irrelevant to ``low(n)`` (rule 1
    no longer asks for ``high(c)``): this is alpha-beta's refutation, and it is usually far
    cheaper than finalising ``high(c)``.
    """
    low, high, state = g.low, g.high, g.state
    lf, hf = g.low_final, g.high_final
    first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
    seen_low: set[NodeId] = set()
    seen_high: set[NodeId] = set()
    leaks: list[NodeId] = []
    leak_set: set[NodeId] = set()
    stack: list[tuple[NodeId, bool]] = []
    if not hf[root]:
        seen_high.add(root)
        stack.append((root, False))
    if not lf[root]:
        seen_low.add(root)
        stack.append((root, True))
    visited = 0
    while stack:
        n, is_low = stack.pop()
        visited += 1
        if state[n] == UNEXPANDED:
            if n not in leak_set:
                leak_set.add(n)
                leaks.append(n)
                if len(leaks) >= limit:
                    break
            continue
        f = first_edge[n]
        if is_low:
            lo = low[n]
            for e in range(f + child_count[n] - 1, f - 1, -1):
                c = edge_child[e]
                if not hf[c] and -low[c] > lo:
                    if c not in seen_high:
                        seen_high.add(c)
                        stack.append((c, False))
                    if not lf[c] and c not in seen_low:
                        seen_low.add(c)
                        stack.append((c, True))
        else:
            hi = high[n]
            for e in range(f + child_count[n] - 1, f - 1, -1):
                c = edge_child[e]
                if not lf[c] and -low[c] == hi and c not in seen_low:
                    seen_low.add(c)
                    stack.append((c, True))
    return leaks, visited


def find_leaks(g: Graph, root: NodeId) -> list[NodeId]:
    """The frontier nodes that can still change a non-final bound of *root*."""
    return walk(g, root)[2]


_GE = 0  # null-window test: is the node's value at least t?
_LE = 1  # null-window test: is it at most -t?


def root_test(g: Graph, root: NodeId, guess: int = 0) -> tuple[int, int]:
    """The null-window test the search decides next at *root*, as ``(kind, t)``.

    While neither root bound is final: is the value at least ``t``, with ``t`` the
    closest value to *guess* that the bounds leave open (``low < t <= high``), MTD(f)
    style: a success raises ``low`` to ``t`` or more, a failure lowers ``high`` below
    ``t``. Once ``low`` is final only ``high`` can move: is the value at most
    ``high - 1``; once ``high`` is final: is it at least ``low + 1``.
    """
    lo, hi = g.low[root], g.high[root]
    if g.low_final[root]:
        return _LE, 1 - hi
    if g.high_final[root]:
        return _GE, lo + 1
    return _GE, min(max(guess, lo + 1), hi)


def _decided_frame(
    stack: list[list[int]],
    changed: list[NodeId],
    low: MutableSequence[int],
    high: MutableSequence[int],
    t: int,
) -> tuple[int, int]:
    """The shallowest frame whose test the *changed* bounds decide, as ``(index, result)``
    with result 1 (holds) or -1 (fails); ``(-1, 0)`` if none is decided. (Flags do not
    change during a search: they are flushed between tests.)"""
    if not changed:
        return -1, 0
    cs = set(changed)
    u = -t
    for i, fr in enumerate(stack):
        n = fr[0]
        if n in cs:
            if fr[1] == _GE:
                lo = low[n]
                if lo >= t:
                    return i, 1
                if high[n] < t:
                    return i, -1
            else:
                hi = high[n]
                if hi <= u:
                    return i, 1
                if low[n] > u:
                    return i, -1
    return -1, 0


__all__ = [
    "SolveResult",
    "find_leaks",
    "first_leaks",
    "propagate_finality",
    "retrograde",
    "solve",
    "update_bounds",
    "update_finality",
    "walk",
]
