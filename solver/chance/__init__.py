"""Games of chance: expectiminimax on graphs, with sound bounds, cycles included.

A game that declares ``chance`` (contract 3) has two kinds of non-terminal positions: at a
**decision** node a player chooses a move; at a **chance** node an outcome is drawn with
the probabilities :meth:`~solver.game.GameBase.probabilities` gives (positive fractions
summing to 1). Players no longer alternate strictly (in Pig a roll keeps the turn), so
every position says whose it is (:meth:`~solver.game.GameBase.player_to_move`: a chance
node's player is the one whose turn goes on when the outcome is drawn: the player who
rolls), and an edge changes the point of view exactly when its two ends have different
players. Values stay from the point of view of the position's player (negamax).

The solver keeps the whole graph in memory, in modules by concept, each depending only
on those listed before it:

* :mod:`solver.chance.graph`: the graph's columns (:class:`~solver.chance.graph.ChanceGraph`)
  and the kinds of position;
* :mod:`solver.chance.components`: strongly connected components and sweep layers;
* :mod:`solver.chance.build`: expanding a game into a graph, checking the chance contract;
* :mod:`solver.chance.exact`: the bounds that are exact fractions, and outward rounding;
* :mod:`solver.chance.bounds`: every position's bounds (:func:`~solver.chance.bounds.solve_graph`);
* :mod:`solver.chance.frontier`: what a partial graph leaves to expand, and what is final;
* :mod:`solver.chance.plies`: the optimal strategy and its expected number of plies;
* :mod:`solver.chance.rows`: the solved graph as a store writes it;
* :mod:`solver.chance.partial`: a partial solve's schedule of batches, and its replay;
* :mod:`solver.chance.solve`: a run (:func:`solve_chance`) into a store.
"""

from __future__ import annotations

from solver.chance.bounds import DEFAULT_TOLERANCE
from solver.chance.solve import solve_chance

__all__ = ["DEFAULT_TOLERANCE", "solve_chance"]
