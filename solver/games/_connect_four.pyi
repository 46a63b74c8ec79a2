"""Types of connect four's batched rules in C (``solver/games/_connect_four.c``)."""

from typing import Any

def children(
    width: int, height: int, order: Any, keys: Any, counts: Any, children: Any, labels: Any, /
) -> int:
    """The moves of each position of *keys* in the columns' *order*: their number into
    *counts*, the children's keys and columns into *children* and *labels* (room for
    ``len(keys) * width``); the number of moves."""

def terminal(width: int, height: int, keys: Any, values: Any, /) -> None:
    """-1 (lost for the mover), 0 (a full board) or 1 (not over) for each key."""

def stones(width: int, height: int, keys: Any, out: Any, /) -> None:
    """The number of stones of each position of *keys*."""
