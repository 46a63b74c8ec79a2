"""The tiling game of the e-Valuate paper (seed 003, section 6).

Players alternately place a domino on two adjacent free squares of a ``rows`` x ``cols``
board until the partial tiling is maximal (no domino fits). The value is the number of
dominoes on the board; MAX, who moves first, maximises it and MIN minimises it. The paper
shows that on the 8x8 board every maximal partial tiling has at least 22 dominoes, so the
value there lies between 22 and 32.

Key: the bitmask of covered squares, bit ``r * cols + c`` for row ``r`` (0 = top) and
column ``c`` (0 = left). Which dominoes cover them does not matter: the moves left and the
final count depend only on the covered squares. After ``k`` dominoes the covered squares
number ``2k``, so MAX is to move exactly when ``popcount(key) / 2`` is even. A terminal
position with ``k`` dominoes is worth ``k`` to MAX, so ``+k`` if MAX is to move there and
``-k`` if MIN is (values are from the mover's view).

Symmetry (``symmetry=true``): the board's rotations and reflections (8 for a square board,
4 otherwise); a transformed key is the sum of one table lookup per row.
"""

from __future__ import annotations

import logging
from typing import ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, Param, PositionKey

logger = logging.getLogger(__name__)

MAX_SIDE = 8
"""Largest number of rows or columns."""

_COVERED = "x#"
_FREE = "."


def square_name(r: int, c: int) -> str:
    """``a1`` is the top-left square: column letter from the left, row number from the top."""
    return f"{'abcdefgh'[c]}{r + 1}"


def board_symmetries(rows: int, cols: int) -> list[tuple[int, ...]]:
    """The board's symmetries as ``target[i]``, the square that square ``i`` goes to."""
    maps: list[tuple[int, ...]] = []
    for transpose in (False, True):
        if transpose and rows != cols:
            continue
        for flip_r in (False, True):
            for flip_c in (False, True):
                target = []
                for i in range(rows * cols):
                    r, c = divmod(i, cols)
                    if flip_r:
                        r = rows - 1 - r
                    if flip_c:
                        c = cols - 1 - c
                    if transpose:
                        r, c = c, r
                    target.append(r * cols + c)
                maps.append(tuple(target))
    return maps


class DominoTiling(GameBase):
    """The domino tiling game (see the module docstring)."""

    name: ClassVar[str] = "domino-tiling"
    version: ClassVar[int] = 1
    acyclic: ClassVar[bool] = True  # every move places a domino
    description: ClassVar[str] = (
        "The e-Valuate paper's tiling game: players alternately place a domino on two "
        "adjacent free squares until no domino fits; the number of dominoes is the result, "
        "which MAX (first) maximises and MIN minimises."
    )
    notation: ClassVar[str] = (
        "Rows from top to bottom separated by '/', one character per square: 'x' covered "
        "(or '#') and '.' free, e.g. 'xx../..../...x/...x' on a 4x4 board. Only the covered "
        "squares matter, and they must be exactly coverable by dominoes. Moves name the "
        "two squares of the domino, e.g. 'a1-b1' or 'a1-a2': column letter a-h from the left, "
        "row number 1-8 from the top. Values are from the mover's view; MAX is to move "
        "when the number of dominoes on the board is even."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("rows", int, 4, "number of rows", min=1, max=MAX_SIDE),
        Param("cols", int, 4, "number of columns", min=1, max=MAX_SIDE),
        Param("symmetry", bool, True, "identify positions under the board's symmetries"),
    )

    def _configure(self) -> None:
        rows = int(self.params["rows"])
        cols = int(self.params["cols"])
        self.rows = rows
        self.cols = cols
        self.uses_symmetry = bool(self.params["symmetry"])
        self._full = (1 << (rows * cols)) - 1
        most = rows * cols // 2
        self.value_range = (-most, most)
        dominoes: list[tuple[MoveLabel, int]] = []
        for r in range(rows):
            for c in range(cols):
                i = r * cols + c
                if c + 1 < cols:
                    dominoes.append(
                        (f"{square_name(r, c)}-{square_name(r, c + 1)}", (1 << i) | (1 << (i + 1)))
                    )
                if r + 1 < rows:
                    dominoes.append(
                        (
                            f"{square_name(r, c)}-{square_name(r + 1, c)}",
                            (1 << i) | (1 << (i + cols)),
                        )
                    )
        self.dominoes: tuple[tuple[MoveLabel, int], ...] = tuple(dominoes)
        self._row_mask = (1 << cols) - 1
        self._row_tables: tuple[tuple[tuple[int, ...], ...], ...] = ()
        self.symmetry_group_size = 1
        if self.uses_symmetry:
            symmetries = board_symmetries(rows, cols)
            self.symmetry_group_size = len(symmetries)
            tables = []
            for target in symmetries[1:]:  # the first is the identity
                per_row = []
                for r in range(rows):
                    table = []
                    for v in range(1 << cols):
                        total = 0
                        for c in range(cols):
                            if v >> c & 1:
                                total |= 1 << target[r * cols + c]
                        table.append(total)
                    per_row.append(tuple(table))
                tables.append(tuple(per_row))
            self._row_tables = tuple(tables)

    # -- the Game protocol ------------------------------------------------------------

    def initial(self) -> PositionKey:
        return 0

    def player_to_move(self, key: PositionKey) -> int:
        return (key.bit_count() >> 1) & 1

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        return [(label, key | m) for label, m in self.dominoes if not key & m]

    def terminal_value(self, key: PositionKey) -> int | None:
        for _, m in self.dominoes:
            if not key & m:
                return None
        count = key.bit_count() >> 1
        return -count if count & 1 else count

    def canonical(self, key: PositionKey) -> PositionKey:
        if not self.uses_symmetry:
            return key
        cols, row_mask = self.cols, self._row_mask
        rows = [(key >> (r * cols)) & row_mask for r in range(self.rows)]
        best = key
        for per_row in self._row_tables:
            image = 0
            for table, v in zip(per_row, rows, strict=True):
                image |= table[v]
            if image < best:
                best = image
        return best

    # -- notation ---------------------------------------------------------------------

    def format(self, key: PositionKey) -> str:
        cols = self.cols
        return "/".join(
            "".join("x" if key >> (r * cols + c) & 1 else _FREE for c in range(cols))
            for r in range(self.rows)
        )

    def parse(self, text: str) -> PositionKey:
        s = text.strip()
        example = "/".join(["." * self.cols] * self.rows)
        if not s:
            raise InvalidPositionError(f"empty position: the empty board is {example!r}")
        rows = s.split("/")
        if len(rows) != self.rows or any(len(row) != self.cols for row in rows):
            raise InvalidPositionError(
                f"expected {self.rows} rows of {self.cols} squares separated by '/' "
                f"(like {example!r}), not {text!r}"
            )
        key = 0
        for r, row in enumerate(rows):
            for c, ch in enumerate(row):
                if ch in _COVERED or ch == "X":
                    key |= 1 << (r * self.cols + c)
                elif ch != _FREE:
                    raise InvalidPositionError(
                        f"invalid square {ch!r} at {square_name(r, c)} in {text!r}: use "
                        "'x' (covered) or '.' (free)"
                    )
        if not self.tileable(key):
            raise InvalidPositionError(
                f"impossible position {text!r}: the covered squares cannot be covered "
                "exactly by dominoes"
            )
        return key

    def tileable(self, key: PositionKey) -> bool:
        """Whether the squares of *key* can be covered exactly by dominoes (a perfect
        matching between its dark and light squares, by augmenting paths)."""
        cols = self.cols
        squares = [i for i in range(self.rows * cols) if key >> i & 1]
        dark = [i for i in squares if (i // cols + i % cols) % 2 == 0]
        if 2 * len(dark) != len(squares):
            return False
        match: dict[int, int] = {}  # light square -> dark square

        def neighbours(i: int) -> list[int]:
            r, c = divmod(i, cols)
            out = []
            if c > 0:
                out.append(i - 1)
            if c + 1 < cols:
                out.append(i + 1)
            if r > 0:
                out.append(i - cols)
            if r + 1 < self.rows:
                out.append(i + cols)
            return [j for j in out if key >> j & 1]

        def augment(i: int, visited: set[int]) -> bool:
            for j in neighbours(i):
                if j in visited:
                    continue
                visited.add(j)
                if j not in match or augment(match[j], visited):
                    match[j] = i
                    return True
            return False

        return all(augment(i, set()) for i in dark)


__all__ = ["MAX_SIDE", "DominoTiling", "board_symmetries", "square_name"]
