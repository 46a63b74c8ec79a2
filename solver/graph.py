"""The in-memory negamax graph: compact per-node arrays indexed by integer node ids.

Node ids are assigned in discovery order, so a graph's ids are a deterministic function of
the sequence of expansions. A node's children are stored contiguously (``first_edge`` and
``child_count`` index the edge arrays). Every column is a typed :mod:`array` (8 bytes a
bound, 4 bytes a depth or a node id in an edge, 1 byte a flag or a move label's index), so
a stored node costs about a hundred bytes, not the kilobyte of per-node objects.

Two derived structures are built on demand and then kept up to date: ``index`` (position
key -> node id: a :class:`~solver._native.KeyTable` of 64-bit keys, 16-32 bytes a node,
when the C module is built and the keys fit, else a dict, about 100) and the reverse
edges (``rev_head``/``rev_next``: every edge threaded onto a per-child linked list, so
that parents can be walked). The full solver's bulk expansion does without either and
drops them (:meth:`Graph.drop_derived`); whoever needs them next gets them rebuilt in one
pass.

The graph also tracks what changed since the last commit (new nodes and edges are those
with ids at or past ``committed_nodes``/``committed_edges``; ``dirty`` holds older nodes
whose bounds, flags, depths or state changed, or :meth:`Graph.mark_all_dirty` says all of
them did), which is what a store writes per batch.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import IntEnum
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from solver.game import MoveLabel, PositionKey
from solver.keytable import KeyMap, new_index
from solver.labels import Labels
from solver.values import DEPTH_INF, NEG_INF, POS_INF

NodeId = int


class NodeState(IntEnum):
    """A node's state, as the ``state`` column stores it (``nodes.state`` in SQL, and the
    ``#define``s of ``solver/_native.c``, which a test holds to these)."""

    UNEXPANDED = 0
    """A frontier node: its moves are not known yet."""
    EXPANDED = 1
    """Its moves and children are in the graph."""
    TERMINAL = 2
    """The game is over: its value is exact."""


UNEXPANDED, EXPANDED, TERMINAL = NodeState.UNEXPANDED, NodeState.EXPANDED, NodeState.TERMINAL

NodeStateName = Literal["unexpanded", "expanded", "terminal"]
"""A state as the API and the CLI spell it."""
STATE_NAMES: tuple[NodeStateName, ...] = get_args(NodeStateName)
"""The names by code: ``STATE_NAMES[state]``."""


NODE_VALUES: tuple[tuple[str, str], ...] = (
    ("state", "B"),
    ("low", "q"),
    ("high", "q"),
    ("low_final", "B"),
    ("high_final", "B"),
    ("depth_low", "i"),
    ("depth_high", "i"),
    ("dist", "i"),
)
"""The per-node value columns besides the key and the edge layout, with their ``array``
type codes: what a store writes and loads for every node (:meth:`Graph.append_nodes`)."""

Column = Iterable[int] | bytes
"""Values of one column: any iterable of ints, or their machine bytes (the column's type
code, native order), which is the fast way from numpy."""


class Graph:
    """Nodes, edges, bounds, finality flags and depths of one game variant."""

    def __init__(self) -> None:
        # Keys live in a 64-bit array while they fit, else in a list (see add_node).
        self.keys: array[int] | list[PositionKey] = array("q")
        self.state = bytearray()
        self.low = array("q")
        self.high = array("q")
        self.low_final = bytearray()
        self.high_final = bytearray()
        self.depth_low = array("i")
        self.depth_high = array("i")
        self.dist = array("i")
        self.first_edge = array("i")
        self.child_count = array("i")

        self.edge_parent = array("i")
        self.edge_child = array("i")
        self.edge_move = Labels()

        self._index: KeyMap | None = new_index()
        self._rev_head: array[int] | None = array("i")
        self._rev_next: array[int] | None = array("i")

        self.committed_nodes = 0
        self.committed_edges = 0
        self.dirty: set[NodeId] = set()
        self.all_dirty = False
        self.settled = True
        """The depths and finality flags (as committed) are those of a run's closing pass
        over this very graph: no batch was committed since a run last closed. A solve
        that finds its root decided while this is false finishes the closing pass that a
        crash interrupted (see :meth:`solver.partial.run.PartialRun.close_pass`).
        Stores keep it with the graph; a new graph is trivially settled."""
        self.after_crash = False
        """The last run on this graph died (killed, crashed, failed) instead of ending
        cleanly: a full solve then commits its first batch at once, so that a solve
        killed again and again still makes progress (a store sets it on opening)."""

        self.deferred_edges = 0
        """Stored edges not loaded (yet): a store may leave them out of a full solve's
        graph, whose expansion never reads them, and load them through
        :attr:`edge_loader` when :meth:`require_edges` asks."""
        self.edge_loader: Callable[[Graph], None] | None = None

        self.chance: Any = None
        """A game of chance's own columns (:class:`solver.chance.rows.ChanceColumns`), which
        a store writes with the graph's first commit; ``None`` for other games."""

        self.gid: array[int] | None = None
        """Bounded-memory runs (:mod:`solver.partial.cache`): each resident node's stored id,
        once the graph holds only part of what is stored (``None``: node ids are the
        stored ids, as in every graph that never evicted)."""
        self.stub = bytearray()
        """Mapped graphs: 1 for a resident node that is expanded in the database but
        whose edges are not resident (its state reads unexpanded until they are)."""
        self.hidden = bytearray()
        """Mapped graphs: 1 for a resident node that may have parents whose edges are not
        resident (a change of its bounds or flags must reach them: they are loaded)."""
        self.outside_nodes = 0
        """Mapped graphs: stored nodes that are not resident."""
        self.outside_edges = 0
        """Mapped graphs: stored edges that are not resident."""
        self.committed_gid = 0
        """Mapped graphs: stored ids below this are committed; new nodes get the next."""
        self.reveal: Callable[[NodeId], None] | None = None
        """Mapped graphs: called with a node whose :attr:`hidden` flag is set before its
        changed bounds or flags are propagated to its parents (it loads them)."""
        self.frontier_hint: int | None = None
        """Mapped graphs opened with only their root (``SolveRun.frontier`` of the run
        before): the unexpanded nodes stored, which the graph cannot count itself."""
        self.track_depths = False
        """Depths are kept exact as bounds change (a mapped graph of an acyclic game:
        its closing pass cannot recompute them over the whole graph)."""
        self.fresh_parents: list[NodeId] = []
        """Mapped graphs: nodes expanded since the last commit (whose edges are new)."""

        self.key_order: np.ndarray | None = None
        """Node ids in key order (int32), when whoever built the graph knew it (a full
        run's key index, a resume file): :func:`solver.expand.key_index` starts from it
        instead of sorting, after checking it sorts the keys."""

    # -- size -------------------------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        return len(self.state)

    @property
    def num_edges(self) -> int:
        return len(self.edge_child)

    @property
    def total_edges(self) -> int:
        """Edges in the graph, loaded or not (resident or not)."""
        return len(self.edge_child) + self.deferred_edges + self.outside_edges

    @property
    def total_nodes(self) -> int:
        """Nodes in the graph, resident or not (:attr:`gid`)."""
        return len(self.state) + self.outside_nodes

    @property
    def mapped(self) -> bool:
        """Whether the graph holds part of the stored graph (see :attr:`gid`)."""
        return self.gid is not None

    def __len__(self) -> int:
        return len(self.state)

    def __repr__(self) -> str:
        return f"<Graph nodes={self.num_nodes} edges={self.num_edges}>"

    # -- derived structures -----------------------------------------------------------

    @property
    def index(self) -> KeyMap:
        """Position key -> node id (built on first use, then kept up to date)."""
        if self._index is None:
            self._index = new_index(self.keys)
        return self._index

    def _widen_index(self) -> None:
        """The keys went to a list (some do not fit 64 bits): so does the index."""
        if self._index is not None and not isinstance(self._index, dict):
            self._index = dict(self._index.items())

    @property
    def rev_head(self) -> array[int]:
        """Per node, its last incoming edge (``-1``: none); see :attr:`rev_next`."""
        if self._rev_head is None:
            self._build_reverse()
        assert self._rev_head is not None
        return self._rev_head

    @property
    def rev_next(self) -> array[int]:
        """Per edge, the previous edge into the same child (``-1``: none)."""
        if self._rev_next is None:
            self._build_reverse()
        assert self._rev_next is not None
        return self._rev_next

    def _build_reverse(self) -> None:
        n, m = self.num_nodes, self.num_edges
        child = np.frombuffer(self.edge_child, dtype=np.int32) if m else np.zeros(0, np.int32)
        order = np.argsort(child, kind="stable")
        grouped = child[order]
        rev_next = np.full(m, -1, dtype=np.int32)
        if m:
            same = grouped[1:] == grouped[:-1]
            rev_next[order[1:][same]] = order[:-1][same]
        rev_head = np.full(n, -1, dtype=np.int32)
        if m:
            last = np.append(grouped[1:] != grouped[:-1], True)
            rev_head[grouped[last]] = order[last]
        self._rev_head = array("i", rev_head.tobytes())
        self._rev_next = array("i", rev_next.tobytes())

    def drop_derived(self) -> None:
        """Forget ``index`` and the reverse edges (rebuilt on next use); bulk appends
        through the raw arrays must call this first."""
        self._index = None
        self._rev_head = None
        self._rev_next = None

    def require_edges(self) -> None:
        """Load the edges a store deferred (every pending change must be committed:
        the loader replaces the edge columns with what is stored)."""
        loader = self.edge_loader
        if loader is None:
            return
        if self.committed_edges != self.num_edges:
            raise RuntimeError("require_edges() with uncommitted edges")
        self.edge_loader = None
        loader(self)

    # -- building ---------------------------------------------------------------------

    # -- loading: what stores call (they never touch the arrays themselves) -------------

    def append_keys(self, keys: Sequence[PositionKey] | npt.NDArray[np.int64]) -> None:
        """Append the keys of new nodes (with :meth:`append_nodes`, same order): 64-bit
        while they fit, a list from the first that does not on."""
        if isinstance(keys, np.ndarray):
            if isinstance(self.keys, array):
                self.keys.frombytes(keys.astype(np.int64).tobytes())
            else:
                self.keys.extend(keys.tolist())
            return
        if (
            isinstance(self.keys, array)
            and keys
            and (max(keys) >= 1 << 63 or min(keys) < -(1 << 63))
        ):
            self.keys = list(self.keys)
            self._widen_index()
        self.keys.extend(keys)

    def widen_keys(self) -> None:
        """Hold the keys in a list from now on (some do not fit 64 bits)."""
        if isinstance(self.keys, array):
            self.keys = list(self.keys)
        self._widen_index()

    def append_nodes(self, count: int, columns: Mapping[str, Column]) -> None:
        """Append *count* stored nodes, unexpanded as far as edges go (no children yet),
        given every column of :data:`NODE_VALUES` (their keys come through
        :meth:`append_keys`). The key index and reverse edges are left to be rebuilt."""
        if set(columns) != {name for name, _ in NODE_VALUES}:
            raise ValueError(f"node columns must be {[n for n, _ in NODE_VALUES]}")
        self.drop_derived()
        for name, _ in NODE_VALUES:
            values = columns[name]
            target: array[int] | bytearray = getattr(self, name)
            if isinstance(values, bytes) and isinstance(target, array):
                target.frombytes(values)
            else:
                target.extend(values)
        self.first_edge.frombytes(np.full(count, -1, dtype=np.int32).tobytes())
        self.child_count.frombytes(bytes(4 * count))

    def mark_expanded(self, nodes: npt.NDArray[np.int64]) -> None:
        """Mark *nodes*, whose edges were just appended, expanded (not changed: a full
        solve's stored edges say so, and its last commit rewrites every row)."""
        np.frombuffer(self.state, dtype=np.uint8)[nodes] = EXPANDED

    def expand_by_edges(self, *, touch: bool) -> None:
        """Mark the nodes that have children but a state saying unexpanded as expanded (a
        full solve stores an expansion through its edges; its last commit rewrites every
        row). With *touch* they are marked changed, so the next commit writes them."""
        if not self.num_nodes:
            return
        state = np.frombuffer(self.state, dtype=np.uint8)
        lagging = np.flatnonzero(
            (np.frombuffer(self.child_count, dtype=np.int32) > 0) & (state == UNEXPANDED)
        )
        state[lagging] = EXPANDED
        del state
        if touch and lagging.size:
            if lagging.size * 2 > self.num_nodes:
                self.mark_all_dirty()
            else:
                self.dirty.update(lagging.tolist())

    def clear_edges(self) -> None:
        """Forget every edge (each node childless again), to load them anew."""
        n = self.num_nodes
        self.edge_parent = array("i")
        self.edge_child = array("i")
        self.edge_move = Labels()
        self.first_edge = array("i", np.full(n, -1, dtype=np.int32).tobytes())
        self.child_count = array("i", bytes(4 * n))
        self.drop_derived()

    def append_edges(
        self,
        parents: npt.NDArray[np.int32] | Sequence[NodeId],
        children: npt.NDArray[np.int32] | Sequence[NodeId],
        moves: Iterable[MoveLabel],
    ) -> None:
        """Append stored edges sorted by parent then move order, continuing the last
        parent's children if it is the same; each parent's ``first_edge`` and
        ``child_count`` follow."""
        p = np.asarray(parents, dtype=np.int32)
        if p.size:
            e = self.num_edges
            firsts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
            sizes = np.diff(np.r_[firsts, p.size]).astype(np.int32)
            heads = p[firsts]
            first = np.frombuffer(self.first_edge, dtype=np.int32)
            count = np.frombuffer(self.child_count, dtype=np.int32)
            fresh = count[heads] == 0
            first[heads[fresh]] = (firsts[fresh] + e).astype(np.int32)
            count[heads] += sizes
            del first, count
        self.edge_parent.frombytes(p.tobytes())
        self.edge_child.frombytes(np.asarray(children, dtype=np.int32).tobytes())
        if isinstance(moves, Labels) and not self.edge_move:
            self.edge_move = moves  # encoded already: taken as it is
        else:
            self.edge_move.extend(moves)

    def set_edge_counts(self, counts: npt.NDArray[np.int32]) -> None:
        """Each node's number of stored edges, with the edges themselves deferred (see
        :meth:`require_edges`)."""
        self.child_count = array("i", counts.astype(np.int32).tobytes())
        self.deferred_edges = int(counts.sum(dtype=np.int64))

    def _append_key(self, key: PositionKey) -> NodeId:
        """Append *key* for the next node (the keys go to a list from the first beyond 64
        bits) and index it; return the node's id."""
        nid = len(self.state)
        try:
            self.keys.append(key)
        except (OverflowError, TypeError):
            self.keys = list(self.keys)
            self.keys.append(key)
            self._widen_index()
        self.index[key] = nid
        return nid

    def add_node(self, key: PositionKey, dist: int, terminal_value: int | None) -> NodeId:
        """Append a node for *key* (which must be new); terminal nodes get exact bounds."""
        nid = self._append_key(key)
        if self.gid is not None:
            self._new_mapped(1)
        self.dist.append(dist)
        self.first_edge.append(-1)
        self.child_count.append(0)
        if self._rev_head is not None:
            self._rev_head.append(-1)
        if terminal_value is None:
            self.state.append(UNEXPANDED)
            self.low.append(NEG_INF)
            self.high.append(POS_INF)
            self.low_final.append(0)
            self.high_final.append(0)
            self.depth_low.append(DEPTH_INF)
            self.depth_high.append(DEPTH_INF)
        else:
            self.state.append(TERMINAL)
            self.low.append(terminal_value)
            self.high.append(terminal_value)
            self.low_final.append(1)
            self.high_final.append(1)
            self.depth_low.append(0)
            self.depth_high.append(0)
        return nid

    def set_children(self, parent: NodeId, children: list[tuple[MoveLabel, NodeId]]) -> None:
        """Record *parent*'s children (in move order) and mark it expanded."""
        self._link_children(parent, [c for _, c in children], [m for m, _ in children])

    def _link_children(self, parent: NodeId, kids: list[NodeId], labels: list[MoveLabel]) -> None:
        """Append *parent*'s edges to *kids* (in move order, labelled *labels*), thread
        them onto the reverse edges when those are kept, and mark *parent* expanded (and
        changed)."""
        edge_child = self.edge_child
        e = first = len(edge_child)
        edge_child.extend(kids)
        rev_head, rev_next = self._rev_head, self._rev_next
        if rev_head is not None and rev_next is not None:
            for c in kids:
                rev_next.append(rev_head[c])
                rev_head[c] = e
                e += 1
        n = len(kids)
        self.edge_parent.extend([parent] * n)
        self.edge_move.extend(labels)
        self.first_edge[parent] = first
        self.child_count[parent] = n
        self.state[parent] = EXPANDED
        if parent < self.committed_nodes:
            self.dirty.add(parent)
        if self.gid is not None:
            self.fresh_parents.append(parent)

    def expand_with(
        self,
        parent: NodeId,
        moves: Sequence[tuple[MoveLabel, PositionKey]],
        terminal_value: Callable[[PositionKey], int | None],
    ) -> None:
        """Expand *parent* with *moves* (labels and child keys, canonical, in move order):
        new children become nodes one step further from the root than *parent*
        (terminal ones with exact final bounds, as :meth:`add_node` makes them), then the
        edges are recorded as :meth:`set_children` records them. The two in one pass, a
        column at a time: this is the partial solver's innermost step."""
        get = self.index.get
        nid = len(self.state)
        kids: list[NodeId] = []
        fresh: dict[PositionKey, NodeId] = {}
        for _, ck in moves:
            c = get(ck)
            if c is None:
                c = fresh.get(ck)
                if c is None:
                    c = fresh[ck] = nid + len(fresh)
            kids.append(c)
        if fresh:
            self._add_fresh(parent, fresh, terminal_value)
        self._link_children(parent, kids, [m for m, _ in moves])

    def _add_fresh(
        self,
        parent: NodeId,
        fresh: dict[PositionKey, NodeId],
        terminal_value: Callable[[PositionKey], int | None],
    ) -> None:
        """Append the nodes of :meth:`expand_with`'s new children *fresh* (key -> the id
        it gets, the next ones in order), one step further from the root than *parent*."""
        # Everything that can fail (the game's terminal_value, a key beyond 64 bits)
        # before anything changes: a failed expansion leaves the graph as it was.
        new = list(fresh)
        values = list(map(terminal_value, new))
        terminal = values.count(None) != len(values)
        if terminal:
            array("q", [v for v in values if v is not None])  # 64-bit integers?
        self._extend_keys(new)
        self.index.update(fresh)
        m = len(new)
        if self.gid is not None:
            self._new_mapped(m)
        self.dist.extend([self.dist[parent] + 1] * m)
        self.first_edge.extend([-1] * m)
        self.child_count.extend([0] * m)
        if self._rev_head is not None:
            self._rev_head.extend([-1] * m)
        if terminal:
            self._extend_values(values)
        else:
            self._extend_open(m)

    def _extend_keys(self, new: list[PositionKey]) -> None:
        """Append the keys *new* (the keys go to a list from the first beyond 64 bits)."""
        keys = self.keys
        if isinstance(keys, array):
            try:
                keys.frombytes(array("q", new).tobytes())
            except (OverflowError, TypeError):
                keys = self.keys = list(keys)  # beyond 64 bits: a list from now on
                keys.extend(new)
                self._widen_index()
        else:
            keys.extend(new)

    def _extend_open(self, m: int) -> None:
        """The value columns of *m* new unexpanded nodes: bounds and depths unknown."""
        self.state.extend(bytes(m))  # UNEXPANDED
        self.low.extend([NEG_INF] * m)
        self.high.extend([POS_INF] * m)
        self.low_final.extend(bytes(m))
        self.high_final.extend(bytes(m))
        self.depth_low.extend([DEPTH_INF] * m)
        self.depth_high.extend([DEPTH_INF] * m)

    def _extend_values(self, values: list[int | None]) -> None:
        """The value columns of new nodes with terminal *values* (``None``: unexpanded)."""
        final = bytes(0 if v is None else 1 for v in values)
        self.state.extend(bytes(UNEXPANDED if v is None else TERMINAL for v in values))
        self.low.extend([NEG_INF if v is None else v for v in values])
        self.high.extend([POS_INF if v is None else v for v in values])
        self.low_final.extend(final)
        self.high_final.extend(final)
        depths = [DEPTH_INF if v is None else 0 for v in values]
        self.depth_low.extend(depths)
        self.depth_high.extend(depths)

    def _new_mapped(self, count: int) -> None:
        """Stored ids for *count* new nodes of a mapped graph (the next ones)."""
        assert self.gid is not None
        start = len(self.gid) + self.outside_nodes
        self.gid.extend(range(start, start + count))
        self.stub.extend(bytes(count))
        self.hidden.extend(bytes(count))

    def add_stored(
        self, gid: int, key: PositionKey, values: Sequence[int], state: int, dist: int
    ) -> NodeId:
        """Make the stored node *gid* resident in a mapped graph: its *key*, *values* (low,
        high, low_final, high_final, depth_low, depth_high, as :data:`NODE_VALUES` has
        them) and *state*; an expanded one comes as a stub (:attr:`stub`). Its parents
        may not be resident (:attr:`hidden`); it counts as changed, so that the next
        commit writes whatever happens to it."""
        assert self.gid is not None
        nid = self._append_key(key)
        self.gid.append(gid)
        stub = state == EXPANDED
        self.stub.append(stub)
        self.hidden.append(1)
        self.state.append(UNEXPANDED if stub else state)
        lo, hi, lf, hf, dl, dh = values
        self.low.append(lo)
        self.high.append(hi)
        self.low_final.append(lf)
        self.high_final.append(hf)
        self.depth_low.append(dl)
        self.depth_high.append(dh)
        self.dist.append(dist)
        self.first_edge.append(-1)
        self.child_count.append(0)
        if self._rev_head is not None:
            self._rev_head.append(-1)
        self.outside_nodes -= 1
        self.dirty.add(nid)
        return nid

    def attach_edges(
        self, parent: NodeId, children: Sequence[NodeId], moves: Sequence[MoveLabel]
    ) -> None:
        """Make a stub's stored edges resident (*children* resident already, in move
        order): it reads expanded again, unchanged."""
        first = len(self.edge_child)
        self.first_edge[parent] = first
        self.child_count[parent] = len(children)
        self.edge_parent.extend([parent] * len(children))
        self.edge_child.extend(children)
        self.edge_move.extend(moves)
        rev_head, rev_next = self._rev_head, self._rev_next
        if rev_head is not None and rev_next is not None:
            e = first
            for child in children:
                rev_next.append(rev_head[child])
                rev_head[child] = e
                e += 1
        self.state[parent] = EXPANDED
        self.stub[parent] = 0
        self.outside_edges -= len(children)

    def add_edge_raw(self, parent: NodeId, child: NodeId, move: MoveLabel) -> None:
        """Append one edge (edges of a parent must come in move order, parents in turn)."""
        e = len(self.edge_child)
        if self.child_count[parent] == 0:
            self.first_edge[parent] = e
        self.child_count[parent] += 1
        self.edge_parent.append(parent)
        self.edge_child.append(child)
        self.edge_move.append(move)
        rev_head, rev_next = self._rev_head, self._rev_next
        if rev_head is not None and rev_next is not None:
            rev_next.append(rev_head[child])
            rev_head[child] = e

    # -- reading ----------------------------------------------------------------------

    def children(self, nid: NodeId) -> range:
        """The edge ids of *nid*'s children, in move order."""
        first = self.first_edge[nid]
        if first < 0:
            return range(0)
        return range(first, first + self.child_count[nid])

    def child_ids(self, nid: NodeId) -> list[NodeId]:
        ec = self.edge_child
        return [ec[e] for e in self.children(nid)]

    def parent_edges(self, nid: NodeId) -> Iterator[int]:
        """The edge ids that lead into *nid* (any order)."""
        rev_next = self.rev_next
        e = self.rev_head[nid]
        while e >= 0:
            yield e
            e = rev_next[e]

    def parents(self, nid: NodeId) -> list[NodeId]:
        ep = self.edge_parent
        return [ep[e] for e in self.parent_edges(nid)]

    def get(self, key: PositionKey) -> NodeId | None:
        return self.index.get(key)

    def find(self, key: PositionKey) -> NodeId | None:
        """The node of *key*, like :meth:`get`, but without building ``index`` when it is
        not built (one scan of the keys instead of a dict of them all)."""
        if self._index is not None:
            return self._index.get(key)
        keys = self.keys
        if not isinstance(keys, array):
            try:
                return keys.index(key)
            except ValueError:
                return None
        try:
            key = operator.index(key)
        except TypeError:
            return None
        if not -(1 << 63) <= key < 1 << 63:
            return None
        hits = np.flatnonzero(np.frombuffer(keys, dtype=np.int64) == key)
        return int(hits[0]) if hits.size else None

    # -- change tracking --------------------------------------------------------------

    def touch(self, nid: NodeId) -> None:
        """Note that *nid*'s bounds, flags, depths or state changed."""
        if nid < self.committed_nodes and not self.all_dirty:
            self.dirty.add(nid)

    def mark_all_dirty(self) -> None:
        """Note that every committed node may have changed (cheaper than touching each)."""
        self.all_dirty = True
        self.dirty.clear()

    def pending(self) -> tuple[range, range, Sequence[NodeId]]:
        """What a store must write: new node ids, new edge ids, changed old node ids
        (ascending)."""
        dirty: Sequence[NodeId] = (
            range(self.committed_nodes) if self.all_dirty else sorted(self.dirty)
        )
        return (
            range(self.committed_nodes, self.num_nodes),
            range(self.committed_edges, self.num_edges),
            dirty,
        )

    def all_committed(self) -> bool:
        """Whether a store holds all of the graph: no node, edge or change of a node
        made since the last :meth:`mark_committed` (a run that ends otherwise lost work
        in mid-batch)."""
        return (
            self.committed_nodes == self.num_nodes
            and self.committed_edges == self.num_edges
            and not self.dirty
            and not self.all_dirty
        )

    def resumable(self) -> bool:
        """Whether the next run can start from a copy of this graph (a resume file):
        all of it committed, and all of it in RAM (a mapped graph holds only part)."""
        return not self.mapped and self.all_committed()

    def mark_committed(self) -> None:
        if self.gid is not None:
            self.committed_gid = self.total_nodes
            self.fresh_parents.clear()
        self.committed_nodes = self.num_nodes
        self.committed_edges = self.num_edges
        self.dirty.clear()
        self.all_dirty = False
