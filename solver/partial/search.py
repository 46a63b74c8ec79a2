"""Null-window searches (DESIGN §4, depth-first mode): which leaks a partial solve expands
when the game has no priority and no breadth-first leak order.

A test asks whether a node's value is at least ``t`` (:attr:`Test.GE`) or at most ``-t``
(:attr:`Test.LE`); the graph's exact bounds decide it where they can, and the search
descends into undecided children in move order until it meets a frontier node, expands it
and goes on — alpha-beta's null-window search with the graph as its transposition table.
:class:`NullWindowSearch` holds the three forms the solver runs: the general search
(cycles allowed), the recursive one for acyclic games, and the same in C
(:mod:`solver._native`, when built). A partial run has one (it is not one): the search
reads and grows the run's graph through :class:`SearchHost`.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, MutableSequence, Sequence
from enum import IntEnum
from typing import Any, Protocol

from solver.expand import no_moves, repeats
from solver.fixpoint import (
    children_bounds,
    propagate_finality,
    update_bounds,
    update_depths,
    with_parents,
)
from solver.game import Game, MoveLabel, PositionKey
from solver.graph import EXPANDED, UNEXPANDED, Graph, NodeId
from solver.keytable import native
from solver.ordering import Ordering

AcyclicTest = Callable[..., tuple[int, int, int]]
"""The C loop's entry point (see ``solver/_native.pyi``)."""

MappedHooks = tuple[
    Callable[[NodeId], None], Callable[[list[PositionKey]], None], Callable[[NodeId], None], Any
]
"""What the C loop needs of a mapped graph's cache: ``load_stub``, ``lookup``, ``reveal``
and the stored keys' filter (see :mod:`solver.partial.cache`)."""


acyclic_test: AcyclicTest | None = native("acyclic_test")
"""The C inner loop of the acyclic search, or ``None`` when it is not built or
``NEGAGRAPH_PURE_PYTHON`` is set (then the same search runs in Python)."""


class Test(IntEnum):
    """The two null-window tests."""

    GE = 0
    """Is the node's value at least ``t``?"""
    LE = 1
    """Is it at most ``-t``?"""


class Outcome(IntEnum):
    """What a test handed back to the frame above it."""

    NONE = 0
    """Nothing yet (the frame goes on with its next child)."""
    HOLDS = 1
    FAILS = -1
    DEAD = 2
    """Undecided for now: it meets a cycle, or a child that is one."""


class NativeStatus(IntEnum):
    """The statuses of :func:`solver._native.acyclic_test`."""

    RAN = 0
    """The test ran (decided, or out of budget)."""
    NO_MOVES = 1
    """The node has no moves but is not terminal."""
    REPEATS = 2
    """The node repeats on the search path."""
    WIDE_KEY = 3
    """A child's key does not fit 64 bits (the node is not expanded)."""


_DECISIVE = (Outcome.HOLDS, Outcome.FAILS)
"""A frame's decisive outcome by its :class:`Test` (see :attr:`Frame.decisive`)."""
_EXHAUSTED = (Outcome.FAILS, Outcome.HOLDS)
"""A frame's outcome once exhausted by its :class:`Test` (see :attr:`Frame.exhausted`)."""


class Frame:
    """One level of the general search's explicit stack: a test on *node*."""

    __slots__ = ("node", "kind", "key", "edge", "end", "decisive", "exhausted")

    def __init__(self, node: NodeId, kind: int, edge: int, end: int) -> None:
        self.node = node
        self.kind = kind
        """:class:`Test` (a plain int in the loop)."""
        self.key = node * 2 + kind
        """The test's key among those the search has entered."""
        self.edge = edge
        """The next edge to try."""
        self.end = end
        """One past the node's last edge."""
        self.decisive = _DECISIVE[kind]
        """The outcome of a child's test that decides this one, as its own outcome:
        ``GE`` holds once a child's ``LE`` holds, ``LE`` fails once a child's ``GE``
        fails."""
        self.exhausted = _EXHAUSTED[kind]
        """This test's outcome once every edge is tried without a decisive child:
        :attr:`Outcome.DEAD` once a child's test was undecided (dead)."""


class SearchHost(Protocol):
    """What a search needs of the run it serves: the run's graph and root (an eviction
    replaces them between searches), the game's bounds, and the run's expansions
    (:meth:`expand` counts them in :attr:`expansions`, :meth:`expand_one` leaves the
    counting to the caller)."""

    game: Game
    g: Graph
    root: NodeId
    canon: Callable[[PositionKey], PositionKey] | None
    ordering: Ordering | None
    vmin: int
    vmax: int
    expansions: int

    def expand(self, batch: list[NodeId]) -> None: ...

    def expand_one(self, nid: NodeId) -> None: ...

    def target_reached(self) -> bool: ...

    def load_stub(self, nid: NodeId) -> None:
        """Make a mapped graph's stub *nid* expanded again (its stored edges resident)."""
        ...

    def mapped_hooks(self) -> MappedHooks | None:
        """A mapped graph's hooks for the C loop, or ``None`` if it cannot run it."""
        ...


class NullWindowSearch:
    """The searches of the depth-first partial mode over *host*'s graph."""

    def __init__(self, host: SearchHost) -> None:
        self.host = host
        self.seeds: list[NodeId] = []
        """Nodes whose flags may follow locally from a search's expansions (pending)."""

    def grow(self, batch: list[NodeId]) -> list[NodeId]:
        """Expand *batch* and update bounds; return the nodes whose bounds changed. The
        flags that follow locally are set when :meth:`search` flushes :attr:`seeds`."""
        g = self.host.g
        self.host.expand(batch)
        changed = update_bounds(g, batch)
        self.seeds.extend(batch)
        self.seeds.extend(with_parents(g, changed))
        return changed

    def flush(self) -> None:
        """Set the flags that follow locally from the pending :attr:`seeds`."""
        seeds = self.seeds
        if seeds:
            host = self.host
            propagate_finality(host.g, seeds, vmin=host.vmin, vmax=host.vmax)
            seeds.clear()

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
        host = self.host
        g, root = host.g, host.root
        done = 0
        while done < limit:
            self.flush()
            if host.target_reached():
                break
            if g.state[root] == UNEXPANDED:
                self.grow([root])
                done += 1
                continue
            used = self._test_root(g, root, limit - done)
            if not used:
                # Decided (or dead) without an expansion: only the flags, which lag around
                # cycles, can tell more; leave that to the caller.
                break
            done += used
        self.flush()  # done: a resumed run starts without them too
        return done

    def _test_root(self, g: Graph, root: NodeId, limit: int) -> int:
        """One null-window test on *root* (:func:`root_test`), searched depth first with
        an explicit stack until it is decided or *limit* expansions are done; returns
        the expansions."""
        low, high, state = g.low, g.high, g.state
        lf, hf = g.low_final, g.high_final
        first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
        GE, LE = Test.GE, Test.LE
        NONE, HOLDS, FAILS, DEAD = Outcome.NONE, Outcome.HOLDS, Outcome.FAILS, Outcome.DEAD
        host = self.host
        stop_at = host.expansions + limit
        kind, t = root_test(g, root)
        u = -t
        f = first_edge[root]
        stack = [Frame(root, kind, f, f + child_count[root])]
        # the tests entered (node * 2 + kind): their outcome, DEAD while open (a cycle
        # back to a test on the stack is a dead end)
        seen = {root * 2 + kind: DEAD}
        ret = NONE  # the outcome handed to the top frame
        started = host.expansions
        while stack:
            fr = stack[-1]
            if ret == DEAD:
                fr.exhausted = DEAD
            elif ret == fr.decisive:
                # a child decides its parent: OR succeeds / AND fails
                stack.pop()
                seen[fr.key] = ret
                continue
            e = fr.edge
            if e >= fr.end:
                stack.pop()
                seen[fr.key] = ret = fr.exhausted
                continue
            fr.edge = e + 1
            c = edge_child[e]
            # The child's test, by its bounds where they decide it (a final bound that
            # does not decide it rules it out).
            if fr.kind == GE:
                ck = LE
                hc = high[c]
                if hc <= u:
                    ret = HOLDS
                    continue
                if low[c] > u or hf[c]:
                    ret = FAILS
                    continue
            else:
                ck = GE
                lc = low[c]
                if lc >= t:
                    ret = HOLDS
                    continue
                if high[c] < t or lf[c]:
                    ret = FAILS
                    continue
            key = c * 2 + ck
            if key in seen:
                # decided earlier, a dead end, or on the stack (a cycle: dead too)
                ret = seen[key]
                continue
            seen[key] = DEAD
            if state[c] == UNEXPANDED:
                ret = self._enter_unexpanded(stack, seen, c, ck, t)
                if host.expansions >= stop_at:
                    break
                continue
            f = first_edge[c]
            stack.append(Frame(c, ck, f, f + child_count[c]))
            ret = NONE
        return host.expansions - started

    def _enter_unexpanded(
        self, stack: list[Frame], seen: dict[int, Outcome], c: NodeId, kind: int, t: int
    ) -> Outcome:
        """Enter the test *kind* on *c*, a child that reads unexpanded: a mapped graph's
        stub gets its stored edges back, anything else is expanded (its bounds, changed,
        may decide a test on the stack: the frames above it go). Returns the outcome
        handed to the top frame."""
        host = self.host
        g = host.g
        if g.mapped and g.stub[c]:
            host.load_stub(c)  # a mapped graph's node whose edges are stored
            f = g.first_edge[c]
            stack.append(Frame(c, kind, f, f + g.child_count[c]))
            return Outcome.NONE
        changed = self.grow([c])
        f = g.first_edge[c]
        stack.append(Frame(c, kind, f, f + g.child_count[c]))
        cut, res = _decided_frame(stack, changed, g.low, g.high, t)
        if cut < 0:
            return Outcome.NONE
        # the new bounds decide a test on the stack: drop the frames above
        for fr in stack[cut + 1 :]:
            del seen[fr.key]
        seen[stack[cut].key] = res
        del stack[cut:]
        return res

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
        the same tests, expansion for expansion, on a mapped graph too (calling back the
        cache for stubs, stored keys and hidden parents); this method falls back to the
        Python one in :meth:`_search_acyclic_py` otherwise, or from the first key beyond
        64 bits on.

        :raises SolveError: if a position repeats (the game is not acyclic after all).
        """
        host = self.host
        done = 0
        keys = host.g.keys
        if (
            acyclic_test is not None
            and isinstance(keys, array)
            and keys.typecode == "q"
            and (not host.g.mapped or host.mapped_hooks() is not None)
        ):
            done, wide = self._search_native(limit)
            if not wide:
                host.expansions += done
                return done
        done += self._search_acyclic_py(limit - done)
        host.expansions += done
        return done

    def _search_native(self, limit: int) -> tuple[int, bool]:
        """:meth:`_search_passes` with each root test run by :mod:`solver._native`;
        returns the expansions and whether a key beyond 64 bits stopped it (before the
        expansion that meets it: the Python search goes on from there)."""
        host = self.host
        g, game, root = host.g, host.game, host.root
        g.index  # noqa: B018  (built if dropped: the C loop reads and extends them)
        g.rev_head  # noqa: B018
        terminal, canon = game.terminal_value, host.canon
        children = _ordered_children(game, host.ordering)

        test = acyclic_test
        assert test is not None  # the caller chose the C path
        hooks = host.mapped_hooks() if g.mapped else None
        done = 0
        while done < limit:
            t = self._next_root_test()
            if t is None:
                break
            code, used, node = test(
                g, root, t, limit - done, children, terminal, canon, host.vmin, host.vmax,
                *(hooks or ()),
            )  # fmt: skip
            status = NativeStatus(code)
            done += used
            if status == NativeStatus.NO_MOVES:
                raise no_moves(game, g.keys[node])
            if status == NativeStatus.REPEATS:
                raise repeats(game, g.keys[node])
            if status == NativeStatus.WIDE_KEY:
                return done, True
            if not used:
                break  # decided without an expansion: flags lag; the caller refreshes
        return done, False

    def _search_acyclic_py(self, limit: int) -> int:
        """:meth:`search_acyclic` in Python; returns the expansions (not counted in
        :attr:`SearchHost.expansions`: the caller counts)."""
        host = self.host
        g = host.g
        game = host.game
        low, high, state = g.low, g.high, g.state
        lf, hf = g.low_final, g.high_final
        first_edge, child_count, edge_child = g.first_edge, g.child_count, g.edge_child
        expand_one = host.expand_one
        stub = g.stub if g.mapped else None
        load_stub = host.load_stub
        expanded: list[NodeId] = []
        changed: list[NodeId] = []
        path: set[NodeId] = set()
        budget = [limit]

        def test(n: NodeId, t: int) -> int:
            """1 if ``value(n) >= t`` is proved, -1 if refuted, 0 if the expansion budget
            ran out first; *n* is undecided by its own bounds."""
            if stub and stub[n]:
                load_stub(n)
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
                raise repeats(game, g.keys[n])
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
        root = self.host.root
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
        host = self.host
        if host.target_reached():
            return None
        g, root = host.g, host.root
        kind, t = root_test(g, root)
        if kind == Test.LE:
            t = 1 - t  # "value <= -t" is "not value >= 1 - t"
        if g.state[root] != UNEXPANDED and not g.low[root] < t <= g.high[root]:
            return None
        return t

    def _settle_search(self, expanded: list[NodeId], changed: list[NodeId]) -> None:
        """After a pass of :meth:`search_acyclic`: restore the bounds fixpoint from the
        *changed* nodes, then propagate flags from everything that moved; empties both."""
        host = self.host
        g = host.g
        low, high, state = g.low, g.high, g.state
        edge_parent, rev_head, rev_next = g.edge_parent, g.rev_head, g.rev_next
        committed, dirty = g.committed_nodes, g.dirty
        reveal, hidden = g.reveal, g.hidden
        seeds: list[NodeId] = list(expanded)
        work = changed
        queued: set[NodeId] = set()
        while work:
            nxt: list[NodeId] = []
            for n in work:
                if n < committed:
                    dirty.add(n)
                seeds.append(n)
                if reveal is not None and hidden[n]:
                    reveal(n)  # a mapped graph's parents that are not resident
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
        propagate_finality(g, seeds, vmin=host.vmin, vmax=host.vmax)
        if g.track_depths:
            update_depths(g, seeds)
        expanded.clear()
        changed.clear()


def root_test(g: Graph, root: NodeId, guess: int = 0) -> tuple[Test, int]:
    """The null-window test the search decides next at *root*, as ``(kind, t)``.

    While neither root bound is final: is the value at least ``t``, with ``t`` the
    closest value to *guess* that the bounds leave open (``low < t <= high``), MTD(f)
    style: a success raises ``low`` to ``t`` or more, a failure lowers ``high`` below
    ``t``. Once ``low`` is final only ``high`` can move: is the value at most
    ``high - 1``; once ``high`` is final: is it at least ``low + 1``.
    """
    lo, hi = g.low[root], g.high[root]
    if g.low_final[root]:
        return Test.LE, 1 - hi
    if g.high_final[root]:
        return Test.GE, lo + 1
    return Test.GE, min(max(guess, lo + 1), hi)


def _decided_frame(
    stack: list[Frame],
    changed: list[NodeId],
    low: MutableSequence[int],
    high: MutableSequence[int],
    t: int,
) -> tuple[int, Outcome]:
    """The shallowest frame whose test the *changed* bounds decide, as ``(index,
    outcome)``; ``(-1, Outcome.NONE)`` if none is decided. (Flags do not change during a
    search: they are flushed between tests.)"""
    if not changed:
        return -1, Outcome.NONE
    cs = set(changed)
    u = -t
    for i, fr in enumerate(stack):
        n = fr.node
        if n in cs:
            if fr.kind == Test.GE:
                lo = low[n]
                if lo >= t:
                    return i, Outcome.HOLDS
                if high[n] < t:
                    return i, Outcome.FAILS
            else:
                hi = high[n]
                if hi <= u:
                    return i, Outcome.HOLDS
                if low[n] > u:
                    return i, Outcome.FAILS
    return -1, Outcome.NONE


def _ordered_children(
    game: Game, ordering: Ordering | None
) -> Callable[[PositionKey], Sequence[tuple[MoveLabel, PositionKey]]]:
    """The moves of a position as the C loop makes its edges, in that order: the game's,
    or *ordering*'s (:mod:`solver.ordering`)."""
    if ordering is None:
        return game.children

    def ordered(key: PositionKey) -> Sequence[tuple[MoveLabel, PositionKey]]:
        return ordering(list(game.children(key)))

    return ordered
