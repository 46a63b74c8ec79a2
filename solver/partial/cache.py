"""Bounded memory for partial solves: the database holds the graph, RAM a part of it.

Once a depth-first partial run's graph outgrows its resident budget, the run *evicts*
after a commit (everything is stored then): it keeps the nodes nearest the root, breadth
first in move order, and drops the rest from RAM. The graph becomes *mapped*
(:attr:`Graph.gid <solver.graph.Graph.gid>`): resident nodes carry their stored ids, new
nodes get the next ids, and three kinds of absence are handled where the solver meets
them, each by reading the database (:class:`NodeSource`):

- a **stub** is a resident node that is expanded in the database but whose edges are
  not resident; the searches load its edges and children before they descend into it
  (:meth:`Cache.load_stub`), which is not an expansion;
- a **transposition into evicted territory**: an expansion's child key that is not
  resident is looked up among the stored keys before new nodes are made
  (:meth:`Cache.expand`, :meth:`Cache.lookup`), so a position never gets two nodes. A
  Bloom filter of the stored keys (:class:`solver._native.KeyFilter`, 1.5 bytes a key)
  spares the query for nearly every key that is new;
- **hidden parents**: a resident node may have stored parents whose edges are not
  resident (:attr:`Graph.hidden`); when its bounds, flags or depths change, the
  propagation that would walk its reverse edges first makes those parents resident with
  their edges (:meth:`Cache.reveal`, through :attr:`Graph.reveal`), so they are updated
  exactly as they would be in RAM.

Nothing the solver decides depends on what is resident: every bound and flag it reads
is what an unbounded run would hold at that point, and node ids follow discovery order
either way. So a run with any resident budget writes the same database as one without,
node for node — which is what the tests check.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from solver.expand import moves_from
from solver.game import Game, MoveLabel, PositionKey
from solver.graph import (
    EXPANDED,
    NODE_VALUES,
    UNEXPANDED,
    Graph,
    NodeId,
)
from solver.keytable import native
from solver.labels import Labels
from solver.ordering import Ordering
from solver.store import NodeSource, StoredNode

if TYPE_CHECKING:
    from solver._native import KeyFilter

log = logging.getLogger(__name__)

_KEY_FILTER: Any = native("KeyFilter")


def _new_filter() -> KeyFilter | None:
    """A :class:`solver._native.KeyFilter`, or ``None`` without the C module (every key
    not resident is then looked up)."""
    return None if _KEY_FILTER is None else _KEY_FILTER()


class Cache:
    """The resident part of one run's graph: the run evicts after a commit once more than
    *budget* nodes are resident, down to half of it (between evictions it grows by what
    a batch adds and loads). With *node_bytes*, the budget is of memory at that many
    bytes a node, and the stored keys' filter takes its share (:meth:`limit`)."""

    def __init__(
        self,
        source: NodeSource,
        game: Game,
        budget: int,
        node_bytes: int | None = None,
        ordering: Ordering | None = None,
    ) -> None:
        if budget < 1:
            raise ValueError("a resident budget is at least one node")
        self.source = source
        self.game = game
        self.ordering = ordering
        """How a node's moves are ordered when it is expanded (:mod:`solver.ordering`)."""
        self.budget = budget
        self.node_bytes = node_bytes
        self.canon: Callable[[PositionKey], PositionKey] | None = (
            game.canonical if game.uses_symmetry else None
        )
        self.g: Graph | None = None
        self.evictions = 0
        self.loaded = 0
        """Nodes made resident again from the database (statistics)."""
        self.filter = _new_filter()
        """Every stored key with an id below :attr:`_filtered` (and maybe others): a key
        not in it and not resident is new."""
        self._filtered = 0

    def limit(self) -> int:
        """The resident nodes above which the run evicts: :attr:`budget`, less the
        filter's RAM when the budget is of memory (at least a fifth of it)."""
        if self.node_bytes is None:
            return self.budget
        return max(self.budget // 5, self.budget - self.filter_bytes // self.node_bytes)

    @property
    def filter_bytes(self) -> int:
        """RAM of :attr:`filter`."""
        return 0 if self.filter is None else int(self.filter.nbytes)

    def _remember(self, g: Graph) -> None:
        """Add to the filter the keys of *g*'s nodes stored since it last saw them."""
        f = self.filter
        if f is None or g.gid is None:
            return
        fresh = np.frombuffer(g.gid, dtype=np.int64) >= self._filtered
        keys = g.keys
        if isinstance(keys, array) and keys.typecode == "q":
            f.add_many(np.frombuffer(keys, dtype=np.int64)[fresh])
        else:  # keys beyond 64 bits are always looked up: only the others go in
            for k, new in zip(keys, fresh.tolist(), strict=True):
                if new and isinstance(k, int) and -(2**63) <= k < 2**63:
                    f.add(k)
        self._filtered = g.total_nodes

    def remember_stored(self, count: int) -> None:
        """Add the keys of stored nodes ``0 .. count - 1`` to the filter (a graph opened
        with its root alone)."""
        f = self.filter
        if f is None:
            return
        for keys in self.source.stored_keys(count):
            f.add_many(np.array(keys, dtype=np.int64))
        self._filtered = count

    # -- the resident map -----------------------------------------------------------

    def _resident(self, stored: Sequence[StoredNode]) -> list[NodeId]:
        """Slots of the *stored* nodes, making resident those that are not."""
        g = self.g
        assert g is not None
        slots: list[NodeId] = []
        for gid, key, values, state, dist in stored:
            s = g.get(key)  # a resident node is found by its key (stored with it)
            if s is None:
                s = g.add_stored(gid, key, values, state, dist)
                self.loaded += 1
            slots.append(s)
        return slots

    # -- what the solver calls --------------------------------------------------------

    def lookup(self, keys: Sequence[PositionKey]) -> None:
        """Make resident the stored nodes of those of *keys* (not resident) that are
        stored."""
        self._resident(self.source.find_nodes(keys))

    def load_stub(self, nid: NodeId) -> None:
        """Load stub *nid*'s stored edges and make its children resident."""
        g = self.g
        assert g is not None and g.gid is not None and g.stub[nid]
        edges = self.source.children(g.gid[nid])
        children = self._resident([c for _, c in edges])
        g.attach_edges(nid, children, [m for m, _ in edges])

    def reveal(self, nid: NodeId) -> None:
        """Make every stored parent of *nid* resident with its edges (the hook of
        :attr:`Graph.reveal`: *nid*'s change is about to reach its parents)."""
        g = self.g
        assert g is not None and g.gid is not None
        g.hidden[nid] = 0
        gid = g.gid[nid]
        if gid >= g.committed_gid:
            return  # new: every parent made it in RAM
        for p in self._resident(self.source.parent_nodes(gid)):
            if g.stub[p]:
                self.load_stub(p)

    def expand(self, nid: NodeId) -> None:
        """Expand *nid* by the game's rules, as :func:`solver.expand.expand_node` does,
        after making resident the stored nodes of any of its children's keys."""
        g = self.g
        assert g is not None
        moves = moves_from(self.game, g.keys[nid], self.canon, self.ordering)
        index = g.index
        f = self.filter
        absent = list(
            dict.fromkeys(ck for _, ck in moves if ck not in index and (f is None or ck in f))
        )
        if absent:
            self.lookup(absent)
        g.expand_with(nid, moves, self.game.terminal_value)

    def load_region(self, root: NodeId, walk: Callable[[Graph, NodeId], list[NodeId]]) -> None:
        """Load every stub among the leaks *walk* finds from *root*, until it finds none:
        what walks the graph as a whole (exact finality around cycles, leak batches)
        then sees what an unbounded run sees."""
        g = self.g
        assert g is not None
        while True:
            stubs = [n for n in walk(g, root) if g.stub[n]]
            if not stubs:
                return
            for n in stubs:
                if g.stub[n]:
                    self.load_stub(n)

    # -- eviction ---------------------------------------------------------------------

    def attach(self, g: Graph) -> None:
        """Take *g* (everything committed) as the run's graph, mapped from now on."""
        if g.gid is None:
            n = g.num_nodes
            g.gid = array("q", range(n))
            g.stub = bytearray(n)
            g.hidden = bytearray(n)
            g.committed_gid = n
            g.outside_nodes = 0
            g.outside_edges = g.deferred_edges
            g.deferred_edges = 0
        g.reveal = self.reveal
        self.g = g

    def evict(self, g: Graph, root: NodeId, keep: int) -> tuple[Graph, NodeId]:
        """Keep about *keep* of *g*'s nodes (everything committed): the first ones
        breadth first from *root* in move order, with the root's children whatever
        *keep*; return the new graph and root. A kept node keeps its edges when all its
        children are kept, else becomes a stub. (Which nodes stay changes nothing the
        run decides, only what it reads back.)
        """
        if g.committed_nodes != g.num_nodes or g.committed_edges != g.num_edges or g.dirty:
            raise RuntimeError("evict() with uncommitted changes")
        self.attach(g)
        self._remember(g)
        assert g.gid is not None
        keep_n = max(1, keep)
        order, slot = self._kept_nodes(g, root, keep_n)
        new = _kept_graph(g, order, slot)
        self.source.swap(g, new)
        self.attach(new)
        self.evictions += 1
        log.info(
            "evicted: %d of %d nodes resident, %d of %d edges",
            new.num_nodes,
            new.total_nodes,
            new.num_edges,
            new.total_edges,
        )
        return new, 0

    def _kept_nodes(
        self, g: Graph, root: NodeId, keep_n: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The nodes :meth:`evict` keeps, in their new order, and each node's place in it
        (``-1``: evicted): the first *keep_n* breadth first from *root*, then the nodes of
        a batch still being written and their children."""
        assert g.gid is not None
        state = np.frombuffer(g.state, dtype=np.uint8)
        first = np.frombuffer(g.first_edge, dtype=np.int32)
        count = np.frombuffer(g.child_count, dtype=np.int32)
        edge_child = np.frombuffer(g.edge_child, dtype=np.int32)
        # breadth first, a level at a time: each level's children in move order, first
        # occurrences only, cut where the count reaches keep_n (the root's children whole)
        slot = np.full(g.num_nodes, -1, dtype=np.int64)
        slot[root] = 0
        levels = [np.array([root], dtype=np.int64)]
        size = 1
        level = levels[0]
        while level.size and (size < keep_n or size == 1):
            found = edge_child[_edges_of(level[state[level] == EXPANDED], first, count)]
            _, at = np.unique(found, return_index=True)
            kids = found[np.sort(at)].astype(np.int64)
            kids = kids[slot[kids] < 0]
            if size > 1:
                kids = kids[: keep_n - size]
            slot[kids] = np.arange(size, size + kids.size)
            size += kids.size
            levels.append(kids)
            level = kids
        # the nodes of a batch still being written, and their children (so they keep
        # their edges, which the batch holds too), whatever keep says
        flying = self.source.in_flight(keep_n)
        if flying is not None and flying.size:
            pinned = np.flatnonzero(np.isin(np.frombuffer(g.gid, dtype=np.int64), flying))
            below = edge_child[_edges_of(pinned[state[pinned] == EXPANDED], first, count)]
            extra = np.unique(np.concatenate([pinned, below.astype(np.int64)]))
            extra = extra[slot[extra] < 0]
            slot[extra] = np.arange(size, size + extra.size)
            levels.append(extra)
        return np.concatenate(levels), slot

    def unmap(self, g: Graph, root_key: PositionKey) -> tuple[Graph, NodeId]:
        """The whole committed graph in place of mapped *g* (for the run's closing pass),
        and its root."""
        whole = self.source.load_all(g)
        self.g = None
        root = whole.find(root_key)
        assert root is not None
        return whole, root


def _kept_graph(g: Graph, order: npt.NDArray[np.int64], slot: npt.NDArray[np.int64]) -> Graph:
    """The mapped graph of *g*'s nodes *order* (node ``order[i]`` becoming node ``i``;
    *slot* the reverse, ``-1`` for the others), all committed: a kept node keeps its
    edges when all its children are kept, else becomes a stub."""
    assert g.gid is not None
    state = np.frombuffer(g.state, dtype=np.uint8)
    first = np.frombuffer(g.first_edge, dtype=np.int32)
    count = np.frombuffer(g.child_count, dtype=np.int32)
    edge_child = np.frombuffer(g.edge_child, dtype=np.int32)
    edge_parent = np.frombuffer(g.edge_parent, dtype=np.int32)
    kept = slot >= 0
    # the kept nodes that keep their edges: expanded, every child kept
    expanded = order[state[order] == EXPANDED]
    edges = _edges_of(expanded, first, count)
    sizes = count[expanded]
    starts = np.cumsum(sizes) - sizes
    whole = (
        np.add.reduceat(kept[edge_child[edges]].astype(np.int64), starts) == sizes
        if expanded.size
        else np.zeros(0, dtype=bool)
    )
    with_edges = expanded[whole]
    keeps = np.zeros(g.num_nodes, dtype=bool)
    keeps[with_edges] = True
    # hidden: a kept node some of whose resident parents lose their edges
    hidden = np.frombuffer(g.hidden, dtype=np.uint8)[order].astype(bool)
    lost = kept[edge_child] & ~keeps[edge_parent]
    hidden[slot[edge_child[lost]]] = True
    stubs = np.frombuffer(g.stub, dtype=np.uint8)[order].astype(bool) | (
        (state[order] == EXPANDED) & ~keeps[order]
    )
    new = Graph()
    _copy_nodes(g, new, order, stubs)
    kept_edges = _edges_of(with_edges, first, count)
    # append_edges wants parents ascending: with_edges follows order, slots ascend
    new.append_edges(
        slot[edge_parent[kept_edges]].astype(np.int32),
        slot[edge_child[kept_edges]].astype(np.int32),
        _moves_of(g, kept_edges),
    )
    new.gid = array("q", np.frombuffer(g.gid, dtype=np.int64)[order].tobytes())
    new.stub = bytearray(stubs.astype(np.uint8).tobytes())
    new.hidden = bytearray(hidden.astype(np.uint8).tobytes())
    new.outside_nodes = g.total_nodes - len(order)
    new.outside_edges = g.total_edges - kept_edges.size
    new.settled = g.settled
    new.after_crash = g.after_crash
    new.mark_committed()
    return new


def _copy_nodes(
    g: Graph, new: Graph, order: npt.NDArray[np.int64], stubs: npt.NDArray[np.bool_]
) -> None:
    """Append to *new* the nodes *order* of *g*: keys and every column, *stubs* reading
    unexpanded."""
    keys = g.keys
    if isinstance(keys, array) and keys.typecode == "q":
        new.append_keys(np.frombuffer(keys, dtype=np.int64)[order])
    else:
        new.append_keys([keys[n] for n in order.tolist()])
    columns: dict[str, bytes | list[int]] = {}
    for name, code in NODE_VALUES:
        column = getattr(g, name)
        dtype = np.dtype(code) if code != "B" else np.uint8
        columns[name] = np.frombuffer(column, dtype=dtype)[order].tobytes()
    new_state = np.frombuffer(g.state, dtype=np.uint8)[order].copy()
    new_state[stubs] = UNEXPANDED
    columns["state"] = new_state.tobytes()
    new.append_nodes(len(order), columns)


def _moves_of(g: Graph, edges: npt.NDArray[np.int64]) -> Labels | list[MoveLabel]:
    """The move labels of *g*'s *edges*."""
    if isinstance(g.edge_move, Labels):
        data = g.edge_move.data
        codes = np.frombuffer(data, dtype=np.dtype(data.typecode))[edges]
        return Labels.from_codes(g.edge_move.names, codes)
    return [g.edge_move[e] for e in edges.tolist()]


def _edges_of(
    nodes: npt.NDArray[np.int64], first: npt.NDArray[np.int32], count: npt.NDArray[np.int32]
) -> npt.NDArray[np.int64]:
    """The indices of the edges of *nodes* (expanded), node by node in move order."""
    sizes = count[nodes].astype(np.int64)
    total = int(sizes.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    return np.repeat(first[nodes].astype(np.int64) - starts, sizes) + np.arange(total)


__all__ = ["Cache"]
