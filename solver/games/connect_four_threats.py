"""Connect-four's evaluation: threats counted on the bitboards of
:mod:`solver.games.connect_four` (Pascal Pons's ``compute_winning_position``).

A *winning cell* of a player is an empty cell that would complete four in a row of his
stones: an open three-in-a-row (or a split one, ``xx.x``). It is *playable* when the
next stone dropped into its column lands on it. The evaluation, from the side to move:

- a terminal position: its value (-1 if the last move made four, 0 for a full board);
- 1 if the mover has a playable winning cell (he wins with the next stone);
- -1 if the opponent has two playable winning cells, or one with another winning cell
  of his right above it (the mover can block one threat only, or blocks under the next);
- else the difference of the two players' winning cells, the opponent's playable one
  (the mover must block it) counting twice more, scaled into the values -1, 0 and 1:
  a lead of :data:`LEAD` or more is 1, a deficit of as much is -1, anything between 0.

:func:`evaluate_stones` does it on one position (Python ints), :func:`evaluate_arrays`
on many (numpy ``uint64``), with the same steps and the same answers.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

LEAD = 2
"""How many more winning cells (an opponent's playable one counting 3) than the
opponent make a non-terminal, undecided position a 1 (as many fewer: a -1)."""

Bits = TypeVar("Bits", int, npt.NDArray[np.uint64])


def winning_cells(stones: Bits, h1: int) -> Bits:
    """The cells (empty or not, possibly off the board: mask the result) that would
    complete four in a row of *stones*, on a board of columns of *h1* bits (its height
    plus the spare bit)."""
    s: Any = stones  # numpy's stubs make uint64 << int signed; it stays uint64
    won = (s << 1) & (s << 2) & (s << 3)  # vertical: three below
    for d in (h1, h1 - 1, h1 + 1):  # horizontal and the two diagonals
        pair = (s << d) & (s << (2 * d))
        won |= pair & (s << (3 * d))
        won |= pair & (s >> d)
        pair = (s >> d) & (s >> (2 * d))
        won |= pair & (s << d)
        won |= pair & (s >> (3 * d))
    return cast(Bits, won)


def evaluate_stones(current: int, mask: int, *, board: int, bottom: int, h1: int, won: bool) -> int:
    """The evaluation (see the module docstring) of the position whose mover has the
    stones *current*, with every stone *mask*, on a *board* (every cell) whose columns
    start at *bottom*; *won* says the last move made four."""
    if won:
        return -1
    if mask == board:
        return 0
    empty = board ^ mask
    playable = (mask + bottom) & board
    mine = winning_cells(current, h1) & empty
    if mine & playable:
        return 1
    theirs = winning_cells(current ^ mask, h1) & empty
    forced = theirs & playable
    if forced & (forced - 1) or (forced << 1) & theirs:
        return -1
    lead = mine.bit_count() - theirs.bit_count() - 2 * forced.bit_count()
    return 1 if lead >= LEAD else -1 if lead <= -LEAD else 0


def evaluate_arrays(
    current: npt.NDArray[np.uint64],
    mask: npt.NDArray[np.uint64],
    *,
    board: int,
    bottom: int,
    h1: int,
    won: npt.NDArray[np.bool_],
) -> npt.NDArray[np.int64]:
    """:func:`evaluate_stones` of many positions at once (boards of at most 64 bits)."""
    full = np.uint64(board)
    empty = full ^ mask
    playable = (mask + np.uint64(bottom)) & full
    mine = winning_cells(current, h1) & empty
    theirs = winning_cells(current ^ mask, h1) & empty
    forced = theirs & playable
    count = np.bitwise_count
    lead = count(mine).astype(np.int64) - count(theirs) - 2 * count(forced).astype(np.int64)
    out = np.where(lead >= LEAD, 1, np.where(lead <= -LEAD, -1, 0)).astype(np.int64)
    lost = (count(forced) >= 2) | (((forced << np.uint64(1)) & theirs) != 0)
    out[lost] = -1
    out[(mine & playable) != 0] = 1
    out[mask == full] = 0
    out[won] = -1
    return out


__all__ = ["LEAD", "evaluate_arrays", "evaluate_stones", "winning_cells"]
