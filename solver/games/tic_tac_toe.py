"""Tic-tac-toe on the 3x3 board, X moving first; play stops at the first line.

Keys are base-3 numbers: cell ``i`` (0 = top-left, row-major) is the digit of weight
``3**i`` — 0 empty, 1 X, 2 O. The side to move is X when both have as many stones, else O.

Every table (children, terminal values, canonical keys) is computed once for all
``3**9`` keys, with numpy, and shared by every instance, so :meth:`TicTacToe.children` is
a lookup.
"""

from __future__ import annotations

import logging
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

logger = logging.getLogger(__name__)

SIZE = 9
"""Number of cells."""
KEYS = 3**SIZE
"""Number of keys (every assignment of the cells, reachable or not)."""

LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),
    (0, 4, 8),
    (2, 4, 6),
)
"""The eight lines of three cells."""

CELL_LABELS: tuple[str, ...] = tuple(f"{'abc'[i % 3]}{i // 3 + 1}" for i in range(SIZE))
"""Move labels: column letter a-c (left to right), row number 1-3 (row 1 is the top)."""

_POW3 = tuple(3**i for i in range(SIZE))
_CHARS = ".xo"


def _cell_symmetries() -> tuple[tuple[int, ...], ...]:
    """The 8 symmetries of the board, each as ``target[i]``: where cell ``i`` goes."""
    maps: list[tuple[int, ...]] = []
    for rotations in range(4):
        for mirror in (False, True):
            target: list[int] = []
            for i in range(SIZE):
                r, c = divmod(i, 3)
                if mirror:
                    c = 2 - c
                for _ in range(rotations):
                    r, c = c, 2 - r
                target.append(3 * r + c)
            maps.append(tuple(target))
    return tuple(maps)


class _Tables:
    """All per-key tables, built once on first use (with numpy: a few milliseconds, where
    a loop over the keys in Python took a quarter of a second of every process that
    plays tic-tac-toe)."""

    def __init__(self) -> None:
        keys = np.arange(KEYS, dtype=np.int64)
        pow3 = np.array(_POW3, dtype=np.int64)
        cells = (keys[:, None] // pow3) % 3  # cells[k, i]: the digit of cell i in key k
        x_count = (cells == 1).sum(axis=1)
        o_count = (cells == 2).sum(axis=1)
        lines = cells[:, np.array(LINES)]  # [k, line, cell of the line]
        x_line = (lines == 1).all(axis=2).any(axis=1)
        o_line = (lines == 2).all(axis=2).any(axis=1)
        self.x_count = bytearray(x_count.astype(np.uint8).tobytes())
        self.o_count = bytearray(o_count.astype(np.uint8).tobytes())
        self.x_line = bytearray(x_line.astype(np.uint8).tobytes())
        self.o_line = bytearray(o_line.astype(np.uint8).tobytes())
        won = x_line | o_line
        full = x_count + o_count == SIZE
        self.terminal: list[int | None] = [None] * KEYS
        for k in np.flatnonzero(won).tolist():
            self.terminal[k] = -1
        for k in np.flatnonzero(full & ~won).tolist():
            self.terminal[k] = 0
        self.children = self._children(cells, np.where(x_count == o_count, 1, 2), won | full)
        # Canonical keys: the smallest key among the board's eight symmetric images.
        images = cells @ pow3[np.array(_cell_symmetries())].T  # [k, symmetry]
        self.canonical: list[int] = images.min(axis=1).tolist()
        logger.debug("tic-tac-toe tables built")

    @staticmethod
    def _children(
        cells: npt.NDArray[np.int64], stone: npt.NDArray[np.int64], over: npt.NDArray[np.bool_]
    ) -> list[tuple[tuple[MoveLabel, PositionKey], ...]]:
        """Each key's moves in cell order, as (label, child key); none where play is over."""
        child = np.arange(KEYS, dtype=np.int64)[:, None] + stone[:, None] * np.array(_POW3)
        empty = (cells == 0).tolist()
        child_keys = child.tolist()
        children: list[tuple[tuple[MoveLabel, PositionKey], ...]] = [()] * KEYS
        for k in np.flatnonzero(~over).tolist():
            free, to = empty[k], child_keys[k]
            children[k] = tuple((CELL_LABELS[i], to[i]) for i in range(SIZE) if free[i])
        return children


_tables: _Tables | None = None


def _get_tables() -> _Tables:
    global _tables
    if _tables is None:
        _tables = _Tables()
    return _tables


class TicTacToe(GameBase):
    """Tic-tac-toe (see the module docstring)."""

    name: ClassVar[str] = "tic-tac-toe"
    version: ClassVar[int] = 1
    acyclic: ClassVar[bool] = True  # every move adds a mark
    tiers: ClassVar[bool] = True  # the marks on the board: every move goes one tier on
    description: ClassVar[str] = (
        "Tic-tac-toe on a 3x3 board: X moves first, three in a row wins, a full board "
        "without a line is a draw."
    )
    notation: ClassVar[str] = (
        "Nine cells row by row from the top-left, each 'x', 'o' or '.' (empty), with "
        "optional '/' between rows, e.g. 'x.o/.x./..o' (upper case is accepted). "
        "Moves are cell names 'a1'..'c3': column letter a-c from left to right, "
        "row number 1-3 with row 1 at the top."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("symmetry", bool, False, "identify positions under the 8 board symmetries"),
    )
    players: ClassVar[tuple[str, str]] = ("X", "O")

    def _configure(self) -> None:
        tables = _get_tables()
        self._children = tables.children
        self._terminal = tables.terminal
        self._canonical = tables.canonical
        self.uses_symmetry = bool(self.params["symmetry"])

    def player_to_move(self, key: PositionKey) -> int:
        """0 (X) when both have as many marks, else 1 (O)."""
        tables = _get_tables()
        return 0 if tables.x_count[key] == tables.o_count[key] else 1

    def tier(self, key: PositionKey) -> int:
        """The marks on the board."""
        marks = 0
        while key:
            key, cell = divmod(key, 3)
            marks += cell != 0
        return marks

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier + 1,) if tier < SIZE else ()

    def initial(self) -> PositionKey:
        return 0

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        return list(self._children[key])

    def terminal_value(self, key: PositionKey) -> int | None:
        return self._terminal[key]

    def canonical(self, key: PositionKey) -> PositionKey:
        if self.uses_symmetry:
            return self._canonical[key]
        return key

    def evaluate(self, key: PositionKey) -> int:
        """Threats, one move ahead: the value at a terminal position; 1 if the mover can
        complete a line, or make two threats with the move he may play (the block of the
        opponent's one threat, if there is one); -1 if the opponent has two threats;
        else 0."""
        value = self._terminal[key]
        if value is not None:
            return value
        cells = [(key // p) % 3 for p in _POW3]
        mover = 1 if cells.count(1) == cells.count(2) else 2
        if _threats(cells, mover):
            return 1
        theirs = _threats(cells, 3 - mover)
        if len(theirs) >= 2:
            return -1
        for cell in theirs or [i for i in range(SIZE) if not cells[i]]:
            after = [*cells[:cell], mover, *cells[cell + 1 :]]
            if len(_threats(after, mover)) >= 2:
                return 1
        return 0

    def parse(self, text: str) -> PositionKey:
        key = _read_cells(text)
        tables = _get_tables()
        nx, no = tables.x_count[key], tables.o_count[key]
        if not (nx == no or nx == no + 1):
            raise InvalidPositionError(
                f"impossible position {text!r}: {nx} X and {no} O "
                "(X moves first, so X has as many stones as O or one more)"
            )
        xl, ol = tables.x_line[key], tables.o_line[key]
        if xl and ol:
            raise InvalidPositionError(
                f"impossible position {text!r}: both players have three in a row"
            )
        if xl and nx != no + 1:
            raise InvalidPositionError(
                f"impossible position {text!r}: X has three in a row but O moved after it"
            )
        if ol and nx != no:
            raise InvalidPositionError(
                f"impossible position {text!r}: O has three in a row but X moved after it"
            )
        return key

    def format(self, key: PositionKey) -> str:
        cells = [_CHARS[(key // _POW3[i]) % 3] for i in range(SIZE)]
        return "/".join("".join(cells[r * 3 : r * 3 + 3]) for r in range(3))


def _threats(cells: list[int], mark: int) -> list[int]:
    """The empty *cells* that would complete a line of *mark*'s (1: X, 2: O), ascending."""
    return sorted(
        {
            i
            for line in LINES
            for i in line
            if not cells[i] and all(cells[j] == mark for j in line if j != i)
        }
    )


def _read_cells(text: str) -> PositionKey:
    """The key of the nine cells *text* gives (``x.o/.x./..o`` or without the ``/``),
    reachable or not."""
    s = text.strip().lower()
    if not s:
        raise InvalidPositionError("empty position: expected 9 cells like 'x.o/.x./..o'")
    if "/" in s:
        rows = s.split("/")
        if len(rows) != 3 or any(len(row) != 3 for row in rows):
            raise InvalidPositionError(f"expected 3 rows of 3 cells separated by '/', not {text!r}")
        s = "".join(rows)
    if len(s) != SIZE:
        raise InvalidPositionError(f"expected 9 cells, got {len(s)} in {text!r}")
    key = 0
    for i, ch in enumerate(s):
        v = _CHARS.find(ch)
        if v < 0:
            raise InvalidPositionError(f"invalid cell {ch!r} in {text!r}: use 'x', 'o' or '.'")
        key += v * _POW3[i]
    return key


__all__ = ["CELL_LABELS", "LINES", "TicTacToe"]
