"""The in-memory negamax graph: compact per-node arrays indexed by integer node ids.

Node ids are assigned in discovery order, so a graph's ids are a deterministic function of
the sequence of expansions. A node's children are stored contiguously (``first_edge`` and
``child_count`` index the edge arrays) and every edge is threaded onto a per-child linked
list (``rev_head``/``rev_next``) so that parents can be walked without per-node lists.

The graph also tracks what changed since the last commit (new nodes and edges are those
with ids at or past ``committed_nodes``/``committed_edges``; ``dirty`` holds older nodes
whose bounds, flags, depths or state changed), which is what a store writes per batch.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from solver.game import MoveLabel, PositionKey
from solver.values import DEPTH_INF, NEG_INF, POS_INF

NodeId = int

UNEXPANDED = 0
EXPANDED = 1
TERMINAL = 2
STATE_NAMES = ("unexpanded", "expanded", "terminal")


class Graph:
    """Nodes, edges, bounds, finality flags and depths of one game variant."""

    def __init__(self) -> None:
        self.keys: list[PositionKey] = []
        self.index: dict[PositionKey, NodeId] = {}
        self.state = bytearray()
        self.low: list[int] = []
        self.high: list[int] = []
        self.low_final = bytearray()
        self.high_final = bytearray()
        self.depth_low: list[int] = []
        self.depth_high: list[int] = []
        self.dist: list[int] = []
        self.first_edge = array("q")
        self.child_count = array("l")
        self.rev_head = array("q")

        self.edge_parent = array("q")
        self.edge_child = array("q")
        self.edge_move: list[MoveLabel] = []
        self.rev_next = array("q")

        self.committed_nodes = 0
        self.committed_edges = 0
        self.dirty: set[NodeId] = set()

    # -- size -------------------------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        return len(self.keys)

    @property
    def num_edges(self) -> int:
        return len(self.edge_child)

    def __len__(self) -> int:
        return len(self.keys)

    def __repr__(self) -> str:
        return f"<Graph nodes={self.num_nodes} edges={self.num_edges}>"

    # -- building ---------------------------------------------------------------------

    def add_node(self, key: PositionKey, dist: int, terminal_value: int | None) -> NodeId:
        """Append a node for *key* (which must be new); terminal nodes get exact bounds."""
        nid = len(self.keys)
        self.keys.append(key)
        self.index[key] = nid
        self.dist.append(dist)
        self.first_edge.append(-1)
        self.child_count.append(0)
        self.rev_head.append(-1)
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
        first = len(self.edge_child)
        self.first_edge[parent] = first
        self.child_count[parent] = len(children)
        edge_parent = self.edge_parent
        edge_child = self.edge_child
        edge_move = self.edge_move
        rev_next = self.rev_next
        rev_head = self.rev_head
        e = first
        for move, child in children:
            edge_parent.append(parent)
            edge_child.append(child)
            edge_move.append(move)
            rev_next.append(rev_head[child])
            rev_head[child] = e
            e += 1
        self.state[parent] = EXPANDED
        if parent < self.committed_nodes:
            self.dirty.add(parent)

    def add_edge_raw(self, parent: NodeId, child: NodeId, move: MoveLabel) -> None:
        """Append one edge (used when loading a stored graph; edges of a parent in order)."""
        e = len(self.edge_child)
        if self.child_count[parent] == 0:
            self.first_edge[parent] = e
        self.child_count[parent] += 1
        self.edge_parent.append(parent)
        self.edge_child.append(child)
        self.edge_move.append(move)
        self.rev_next.append(self.rev_head[child])
        self.rev_head[child] = e

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

    # -- change tracking --------------------------------------------------------------

    def touch(self, nid: NodeId) -> None:
        """Note that *nid*'s bounds, flags, depths or state changed."""
        if nid < self.committed_nodes:
            self.dirty.add(nid)

    def pending(self) -> tuple[range, range, list[NodeId]]:
        """What a store must write: new node ids, new edge ids, changed old node ids."""
        return (
            range(self.committed_nodes, self.num_nodes),
            range(self.committed_edges, self.num_edges),
            sorted(self.dirty),
        )

    def mark_committed(self) -> None:
        self.committed_nodes = self.num_nodes
        self.committed_edges = self.num_edges
        self.dirty.clear()
