"""A game of chance's graph in memory: the kinds of position and the columns of
:class:`ChanceGraph`, which every other module of the chance solver reads.

Positions are node ids in discovery order (breadth first from the root); edges are
grouped by parent, in the game's move order. A chance node's edges carry their outcome's
probability, both as an exact fraction and as the nearest float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from solver.errors import ContractError
from solver.game import Game, MoveLabel, PositionKey

TERMINAL, DECISION, CHANCE, FRONTIER = 0, 1, 2, 3
"""The kinds of position (:attr:`ChanceGraph.kind`); ``FRONTIER``: not expanded yet (a
partial solve's), its bounds the ends of the game's value range."""

KIND_NAMES = ("terminal", "decision", "chance", "unexpanded")


@dataclass
class ChanceGraph:
    """A chance game's graph as far as it is expanded, in columns indexed by node id
    (discovery order: breadth first from the root, in the batches of a partial solve);
    positions not expanded yet have the kind :data:`FRONTIER` and no moves.

    Edges are grouped by parent (``start[n]:start[n + 1]``), in the game's move order.
    """

    game: Game
    keys: list[PositionKey]
    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    dist: npt.NDArray[np.int32]
    """Plies from the root (breadth first: the fewest)."""
    terminal: dict[int, int]
    """Terminal node id -> its value for its player."""
    start: npt.NDArray[np.int64]
    child: npt.NDArray[np.int64]
    sign: npt.NDArray[np.int8]
    """+1 if the edge's child has its parent's player, -1 if the point of view changes."""
    probability: list[Fraction | None]
    """The outcome's probability on a chance node's edges, ``None`` on a decision node's."""
    weight: npt.NDArray[np.float64]
    """The same as the nearest float64 (0 on a decision node's edges)."""
    labels: list[MoveLabel]
    index: dict[PositionKey, int] = field(repr=False)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def edges(self) -> int:
        return len(self.child)

    def moves(self, node: int) -> range:
        """The edge indices of *node*."""
        return range(int(self.start[node]), int(self.start[node + 1]))


def value_range_of(game: Game) -> tuple[int, int]:
    """The game's declared value range, which a chance game must declare.

    :raises ContractError: if it declares none.
    """
    vr = game.facts.value_range
    if vr is None:
        raise ContractError(
            f"{game.name}: a game with chance nodes must declare its value_range "
            "(endless play and unexplored positions start at its ends)"
        )
    return vr


def edge_parents(graph: ChanceGraph) -> npt.NDArray[np.int64]:
    """Each edge's parent node id."""
    return np.repeat(np.arange(len(graph), dtype=np.int64), np.diff(graph.start))


__all__ = [
    "CHANCE",
    "DECISION",
    "FRONTIER",
    "KIND_NAMES",
    "TERMINAL",
    "ChanceGraph",
    "edge_parents",
    "value_range_of",
]
