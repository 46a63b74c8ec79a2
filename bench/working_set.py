"""How much of a partial solve's graph could leave RAM: ``python -m bench.working_set
WIDTH HEIGHT EVERY`` solves connect-four WIDTHxHEIGHT partially in memory and, every EVERY
expansions, prints one line of counts over the graph at that commit:

- ``sealed``: expanded positions with both bounds final (their values never change
  again, and no search or leak walk enters them);
- ``live``: positions reachable from the root through expanded positions that are not
  sealed (the part the search can still read), and among them ``live_open``, the
  expanded ones not sealed;
- ``orphans``: expanded, not sealed, and not live (every path from the root to them
  crosses a sealed position, so their values can no longer reach the root).

A measurement for the design of eviction (docs/design.md §9), not a target.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from solver.games import get_game
from solver.graph import EXPANDED, UNEXPANDED, Graph
from solver.negamax import solve
from solver.store import Batch, MemoryStore, Progress


def working_set(g: Graph, root: int = 0) -> dict[str, int]:
    """The counts of the module docstring for *g*."""
    state = np.frombuffer(g.state, dtype=np.uint8)
    sealed = np.frombuffer(g.low_final, dtype=np.uint8).astype(bool) & np.frombuffer(
        g.high_final, dtype=np.uint8
    ).astype(bool)
    first = np.frombuffer(g.first_edge, dtype=np.int32)
    count = np.frombuffer(g.child_count, dtype=np.int32)
    child = np.frombuffer(g.edge_child, dtype=np.int32)
    expanded = state == EXPANDED
    open_ = expanded & ~sealed
    live = np.zeros(state.size, dtype=bool)
    live[root] = True
    frontier = np.array([root])
    while frontier.size:
        frontier = frontier[open_[frontier]]
        sizes = count[frontier]
        starts = np.repeat(first[frontier] - np.cumsum(sizes) + sizes, sizes)
        kids = np.unique(child[starts + np.arange(sizes.sum())])
        frontier = kids[~live[kids]]
        live[frontier] = True
    return {
        "nodes": int(state.size),
        "expanded": int(expanded.sum()),
        "sealed": int((expanded & sealed).sum()),
        "live": int(live.sum()),
        "live_open": int((live & open_).sum()),
        "orphans": int((open_ & ~live).sum()),
        "unexpanded": int((state == UNEXPANDED).sum()),
    }


class _Sampling(MemoryStore):
    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every
        self.next = every

    def commit(self, batch: Batch, progress: Progress) -> None:
        graph = batch.graph
        super().commit(batch, progress)
        if progress.expansions >= self.next:
            self.next += self.every
            counts = working_set(graph)
            share = {k: round(v / counts["nodes"], 3) for k, v in counts.items() if k != "nodes"}
            print(progress.expansions, counts, share, flush=True)


def main(argv: list[str]) -> int:
    width, height, every = (int(a) for a in argv[:3])
    game: Any = get_game("connect-four", width=width, height=height)
    r = solve(game, store=_Sampling(every))
    print(f"value {r.value}: {r.expansions} expansions, {r.nodes} nodes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
