"""Connect four on a ``width`` x ``height`` board, with bitboards.

Bit layout (Pascal Pons / John Tromp): column ``c`` (0 = leftmost) owns bits
``c*(height+1)`` to ``c*(height+1)+height-1``, bottom cell first, plus one spare bit on
top that no stone ever occupies, so shifted four-in-a-row tests never wrap around.

Key: ``current + mask + bottom`` where ``current`` holds the stones of the player to move,
``mask`` every stone and ``bottom`` the bottom bit of every column. Within each column
this is the current player's stones below a single marker bit just above the column's
top stone, so the key is unique and reversible; the side to move follows from the number
of stones (X, the first player, moves when both have as many stones).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from solver.errors import InvalidPositionError
from solver.game import BatchMoves, GameBase, MoveLabel, Param, PositionKey
from solver.games.connect_four_threats import evaluate_arrays, evaluate_stones, winning_cells

logger = logging.getLogger(__name__)

_MAX_SIZE = 10
_CHARS = ".xo"


def _c_rules() -> Any:
    """The batched rules in C (``solver/games/_connect_four.c``), unless they are not
    built or ``NEGAGRAPH_PURE_PYTHON`` is set: then numpy's forms, with the same
    results (``tests/solver/test_connect_four.py``)."""
    if os.environ.get("NEGAGRAPH_PURE_PYTHON"):
        return None
    try:
        from solver.games import _connect_four
    except ImportError:  # no C compiler at install
        return None
    return _connect_four


_SWAP = str.maketrans("xo", "ox")


class ConnectFour(GameBase):
    """Connect four (see the module docstring)."""

    name: ClassVar[str] = "connect-four"
    version: ClassVar[int] = 2  # 2: moves centre first (1: left to right)
    acyclic: ClassVar[bool] = True  # every move adds a stone
    tiers: ClassVar[bool] = True  # the stones on the board: every move goes one tier on
    description: ClassVar[str] = (
        "Connect four: drop stones into columns; four in a row horizontally, vertically "
        "or diagonally wins, a full board without one is a draw. X moves first."
    )
    notation: ClassVar[str] = (
        "Rows from top to bottom separated by '/', each with one character per column: "
        "'x' (first player), 'o' (second player) or '.' (empty), e.g. "
        "'..../..../.x../.xo.' on a 4x4 board; the empty board is all dots. Alternatively, "
        "when width <= 9, the moves from the empty board as 1-based column digits, "
        "e.g. '4453'. Moves are labelled by column number, 1 = leftmost, and come "
        "centre first (on 7 columns: 4, 3, 5, 2, 6, 1, 7)."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("width", int, 7, "number of columns", min=1, max=_MAX_SIZE),
        Param("height", int, 6, "number of rows", min=1, max=_MAX_SIZE),
        Param("symmetry", bool, False, "identify left-right mirror images"),
    )
    players: ClassVar[tuple[str, str]] = ("X", "O")

    def _configure(self) -> None:
        w = int(self.params["width"])
        h = int(self.params["height"])
        self.width = w
        self.height = h
        self.uses_symmetry = bool(self.params["symmetry"])
        h1 = h + 1
        self._h1 = h1
        self._col_bits = (1 << h1) - 1
        self._column = tuple(self._col_bits << (c * h1) for c in range(w))
        self._bottom = sum(1 << (c * h1) for c in range(w))
        self._board = sum(((1 << h) - 1) << (c * h1) for c in range(w))
        self._tops = sum(1 << (c * h1 + h) for c in range(w))
        # Smearing by 1, 2, 4 and 8 fills every bit below each column's marker (height
        # <= 10 < 15); keep_s drops the bits a shift by s brings down from the next column.
        k1, k2, k4, k8 = (
            sum(((1 << max(h1 - shift, 0)) - 1) << (c * h1) for c in range(w))
            for shift in (1, 2, 4, 8)
        )
        self._keep = (k1, k2, k4, k8)
        self._labels: tuple[str, ...] = tuple(str(c + 1) for c in range(w))
        self._rows: dict[str, tuple[int, int]] = {}
        """The stones of each valid row text read so far, on the bottom row
        (:meth:`_read_grid`; at most 3 ** width of them)."""
        # Centre first, the left one of two equally central columns first (on 7 columns:
        # 4, 3, 5, 2, 6, 1, 7), as Pons's and Tromp's solvers order them: central stones
        # take part in more lines of four, and the search tries moves in the game's order.
        # On 6 x 4 a partial solve needs 821,905 expansions instead of the 4,835,877 of
        # left to right (docs/performance.md).
        self._order = tuple(sorted(range(w), key=lambda c: (abs(2 * c - (w - 1)), c)))
        self._moves = tuple((self._labels[c], self._column[c]) for c in self._order)
        self._order_array = np.array(self._order, dtype=np.int64)
        self._dirs = (h1, h1 - 1, h1 + 1)
        self._field = (1 << h1) - 1
        self._columns_x, self._columns_o = self._column_tables()
        self._notation: tuple[list[list[int]], list[list[int]], int, int] | None = None
        self._arrays: dict[type, tuple[np.ndarray, np.ndarray]] = {}

    # -- bitboard helpers -------------------------------------------------------------

    def _mask(self, key: PositionKey) -> int:
        """Every stone of the position *key* (see :meth:`_configure` for the smearing)."""
        k1, k2, k4, k8 = self._keep
        s = key | ((key >> 1) & k1)
        s |= (s >> 2) & k2
        s |= (s >> 4) & k4
        s |= (s >> 8) & k8
        return (s >> 1) & self._board

    def _has_four(self, stones: int) -> bool:
        """Whether *stones* contain four in a row in any direction."""
        m = stones & (stones >> 1)
        if m & (m >> 2):
            return True
        for d in self._dirs:
            m = stones & (stones >> d)
            if m & (m >> (d + d)):
                return True
        return False

    # -- the Game protocol ------------------------------------------------------------

    def tier(self, key: PositionKey) -> int:
        """The stones on the board."""
        return self._mask(key).bit_count()

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier + 1,) if tier < self.width * self.height else ()

    def player_to_move(self, key: PositionKey) -> int:
        """0 (X) when the stones on the board are even in number, else 1 (O)."""
        return self.tier(key) % 2

    def initial(self) -> PositionKey:
        return self._bottom

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        k1, k2, k4, k8 = self._keep
        s = key | ((key >> 1) & k1)
        s |= (s >> 2) & k2
        s |= (s >> 4) & k4
        s |= (s >> 8) & k8
        mask = (s >> 1) & self._board
        markers = mask + self._bottom
        opponent = key ^ markers ^ mask  # the player who just moved
        if mask == self._board or self._has_four(opponent):
            return []
        base = opponent + markers
        tops = self._tops
        result: list[tuple[MoveLabel, PositionKey]] = []
        for label, column in self._moves:
            bit = markers & column
            if not bit & tops:
                result.append((label, base + bit))
        return result

    def terminal_value(self, key: PositionKey) -> int | None:
        k1, k2, k4, k8 = self._keep
        s = key | ((key >> 1) & k1)
        s |= (s >> 2) & k2
        s |= (s >> 4) & k4
        s |= (s >> 8) & k8
        mask = (s >> 1) & self._board
        # The player who just moved: every stone that is not the player to move's.
        last = key ^ (mask + self._bottom) ^ mask
        m = last & (last >> 1)
        if m & (m >> 2):
            return -1
        for d in self._dirs:
            m = last & (last >> d)
            if m & (m >> (d + d)):
                return -1
        if mask == self._board:
            return 0
        return None

    def evaluate(self, key: PositionKey) -> int:
        """Threats: the winning cells of each side, scaled into -1, 0 and 1 (see
        :mod:`solver.games.connect_four_threats`)."""
        mask = self._mask(key)
        current = key ^ (mask + self._bottom)
        return evaluate_stones(
            current,
            mask,
            board=self._board,
            bottom=self._bottom,
            h1=self._h1,
            won=self._has_four(current ^ mask),
        )

    def order_score(self, key: PositionKey) -> int:
        """The move ordering score of the position *key* a move leads to
        (:mod:`solver.ordering`, lower first): a move after which the opponent can win at
        once comes last; otherwise the more winning cells (empty cells that would
        complete a four) the move gives its player, the sooner it is tried, as in Pascal
        Pons's solver. Connect-four 6 x 4's partial solve: 821,905 -> 444,662
        expansions (docs/pruning.md)."""
        mask = self._mask(key)
        current = key ^ (mask + self._bottom)  # the stones of the player to move there
        board = self._board
        if winning_cells(current, self._h1) & (mask + self._bottom) & board:
            return board.bit_length() + 1  # the opponent wins at once: last
        return -(winning_cells(current ^ mask, self._h1) & ~mask & board).bit_count()

    # -- batched rules: the same bitboard steps over arrays of keys ---------------------

    def evaluate_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """:meth:`evaluate` of every key, or ``None`` for boards beyond 63 bits."""
        if not self._batchable():
            return None
        k = np.asarray(keys, dtype=np.int64).astype(np.uint64)
        mask = self._mask_of(k)
        current = k ^ (mask + np.uint64(self._bottom))
        won = self._fours(current ^ mask)
        return evaluate_arrays(
            current, mask, board=self._board, bottom=self._bottom, h1=self._h1, won=won
        )

    def _batchable(self) -> bool:
        """Keys fit 63 bits (boards of at most 63 bits with the spare row)."""
        return self.width * self._h1 <= 63

    def _mask_of(self, keys: np.ndarray) -> np.ndarray:
        """:meth:`_mask` of uint64 *keys*."""
        k1, k2, k4, k8 = (np.uint64(k) for k in self._keep)
        s = keys | ((keys >> np.uint64(1)) & k1)
        s |= (s >> np.uint64(2)) & k2
        s |= (s >> np.uint64(4)) & k4
        s |= (s >> np.uint64(8)) & k8
        board: np.ndarray = (s >> np.uint64(1)) & np.uint64(self._board)
        return board

    def _fours(self, stones: np.ndarray) -> np.ndarray:
        """:meth:`_has_four` of uint64 *stones*."""
        m = stones & (stones >> np.uint64(1))
        won: np.ndarray = (m & (m >> np.uint64(2))) != 0
        for d in self._dirs:
            m = stones & (stones >> np.uint64(d))
            won |= (m & (m >> np.uint64(2 * d))) != 0
        return won

    def children_batch(self, keys: np.ndarray) -> BatchMoves | None:
        if not self._batchable():
            return None
        rules = _c_rules()
        if rules is not None:
            k = np.require(keys, np.int64, ["C", "A"])
            counts = np.empty(k.size, np.int64)
            found = np.empty(k.size * self.width, np.int64)
            columns = np.empty(k.size * self.width, np.int64)
            m = rules.children(
                self.width, self.height, self._order_array, k, counts, found, columns
            )
            return BatchMoves(
                counts=counts, keys=found[:m], labels=columns[:m], label_names=self._labels
            )
        k = np.asarray(keys, dtype=np.int64).astype(np.uint64)
        mask = self._mask_of(k)
        markers = mask + np.uint64(self._bottom)
        opponent = k ^ markers ^ mask
        over = (mask == np.uint64(self._board)) | self._fours(opponent)
        base = opponent + markers
        columns = np.array([self._column[c] for c in self._order], dtype=np.uint64)
        bits = markers[:, None] & columns[None, :]
        playable = ((bits & np.uint64(self._tops)) == 0) & ~over[:, None]
        children = (base[:, None] + bits)[playable]
        order = np.array(self._order, dtype=np.int64)
        labels = np.broadcast_to(order, playable.shape)[playable]
        return BatchMoves(
            counts=playable.sum(axis=1).astype(np.int64),
            keys=children.astype(np.int64),
            labels=labels,
            label_names=self._labels,
        )

    def terminal_values_batch(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        if not self._batchable():
            return None
        rules = _c_rules()
        if rules is not None:
            k = np.require(keys, np.int64, ["C", "A"])
            found = np.empty(k.size, np.int64)  # -1 lost, 0 drawn, 1 not over
            rules.terminal(self.width, self.height, k, found)
            return found != 1, np.minimum(found, 0)
        k = np.asarray(keys, dtype=np.int64).astype(np.uint64)
        mask = self._mask_of(k)
        last = k ^ (mask + np.uint64(self._bottom)) ^ mask
        won = self._fours(last)
        terminal = won | (mask == np.uint64(self._board))
        return terminal, np.where(won, -1, 0).astype(np.int64)

    def tiers_batch(self, keys: np.ndarray) -> np.ndarray | None:
        if not self._batchable():
            return None
        rules = _c_rules()
        if rules is not None:
            k = np.require(keys, np.int64, ["C", "A"])
            stones = np.empty(k.size, np.int64)
            rules.stones(self.width, self.height, k, stones)
            return stones
        mask = self._mask_of(np.asarray(keys, dtype=np.int64).astype(np.uint64))
        out: np.ndarray = np.bitwise_count(mask).astype(np.int64)
        return out

    def canonical_batch(self, keys: np.ndarray) -> np.ndarray | None:
        k = np.asarray(keys, dtype=np.int64)
        if not self.uses_symmetry:
            return k
        if not self._batchable():
            return None
        u = k.astype(np.uint64)
        h1, bits, last = self._h1, np.uint64(self._col_bits), self.width - 1
        mirrored = np.zeros_like(u)
        for c in range(self.width):
            mirrored |= ((u >> np.uint64(c * h1)) & bits) << np.uint64((last - c) * h1)
        out: np.ndarray = np.minimum(u, mirrored).astype(np.int64)
        return out

    def canonical(self, key: PositionKey) -> PositionKey:
        if not self.uses_symmetry:
            return key
        mirrored = self._mirror(key)
        return mirrored if mirrored < key else key

    def _mirror(self, key: PositionKey) -> PositionKey:
        h1, bits, last = self._h1, self._col_bits, self.width - 1
        out = 0
        for c in range(self.width):
            out |= ((key >> (c * h1)) & bits) << ((last - c) * h1)
        return out

    # -- notation ---------------------------------------------------------------------

    def _stones(self, key: PositionKey) -> tuple[int, int]:
        """The X (first player) and O stones of *key*."""
        mask = self._mask(key)
        current = key ^ (mask + self._bottom)
        other = current ^ mask
        if mask.bit_count() % 2 == 0:
            return current, other
        return other, current

    def _key(self, x: int, o: int) -> PositionKey:
        mask = x | o
        current = x if x.bit_count() == o.bit_count() else o
        return current + mask + self._bottom

    def format(self, key: PositionKey) -> str:
        # Each column's h+1 bits of the key (the mover's stones + the column's mask + its
        # bottom bit) determine the column once we know who is to move. The notation is
        # built as one big integer whose bytes are its characters: each column's
        # characters, already at their places, come from a table and are added up.
        tables = self._notation or self._notation_tables()
        table = tables[0] if self._mask(key).bit_count() % 2 == 0 else tables[1]
        field, h1 = self._field, self._h1
        n = tables[2]
        shift = 0
        for column in table:
            n += column[(key >> shift) & field]
            shift += h1
        return n.to_bytes(tables[3], "big").decode("ascii")

    def format_many(self, keys: Sequence[PositionKey]) -> list[str]:
        w, h1 = self.width, self._h1
        if w * h1 > 63 or len(keys) < 64:
            return [self.format(k) for k in keys]
        codes = self._notation_codes(np.asarray(keys, dtype=np.int64), np.uint32)
        return codes.view(f"<U{codes.shape[1]}").ravel().tolist()

    def format_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.bytes_] | None:
        if self.width * self._h1 > 63:
            return None
        codes = self._notation_codes(np.asarray(keys, dtype=np.int64), np.uint8)  # ASCII
        return codes.view(f"S{codes.shape[1]}").ravel()

    def _notation_codes(self, ks: npt.NDArray[np.int64], dtype: type) -> npt.NDArray[Any]:
        """The notation of every key of *ks*, a row of character codes each: the same
        column tables as :meth:`format`, as arrays, over all keys at once."""
        w, h, h1 = self.width, self.height, self._h1
        chars, heights = self._notation_arrays(dtype)
        fields = [(ks >> (c * h1)) & self._field for c in range(w)]
        pieces = heights[fields[0]]  # a new array (fancy indexing): summed in place
        for f in fields[1:]:
            pieces += heights[f]
        # o's rows of the table follow x's: an odd number of stones puts o to move
        offset = (pieces & 1).astype(np.int64) << h1
        length = h * (w + 1) - 1
        out: npt.NDArray[Any] = np.full((ks.size, length), ord("/"), dtype=dtype)
        for c, f in enumerate(fields):
            f += offset
            out[:, c : length : w + 1] = chars[f]
        return out

    def _notation_arrays(self, dtype: type) -> tuple[np.ndarray, np.ndarray]:
        """Per column field, its characters top to bottom (code points, as *dtype*) with x
        to move, then the same with o to move; and per column field its number of stones."""
        arrays = self._arrays.get(dtype)
        if arrays is None:
            chars: np.ndarray = np.array(
                [[ord(ch) for ch in col] for col in (*self._columns_x, *self._columns_o)],
                dtype=dtype,
            )
            fields = len(self._columns_x)
            stones = np.array([max(v.bit_length() - 1, 0) for v in range(fields)], np.uint8)
            arrays = self._arrays[dtype] = (chars, stones)
        return arrays

    def _notation_tables(self) -> tuple[list[list[int]], list[list[int]], int, int]:
        """Per column, its characters for every column field as an integer (x to move,
        o to move), the row separators likewise, and the notation's length (built on
        first use: large boards have large tables)."""
        w, h = self.width, self.height
        length = h * (w + 1) - 1

        def place(ch: str, row: int, col: int) -> int:
            return ord(ch) << (8 * (length - 1 - (row * (w + 1) + col)))

        def tables(strings: tuple[str, ...]) -> list[list[int]]:
            return [
                [sum(place(ch, r, c) for r, ch in enumerate(text)) for text in strings]
                for c in range(w)
            ]

        separators = sum(place("/", r, w) for r in range(h - 1))
        self._notation = (tables(self._columns_x), tables(self._columns_o), separators, length)
        return self._notation

    def _column_tables(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Column strings (top to bottom) for every column field, with x or o to move."""
        h = self.height
        by_x, by_o = [], []
        for v in range(1 << (h + 1)):
            k = max(v.bit_length() - 1, 0)  # stones in the column (0 also for v == 0)
            cur = v - (1 << k) if v else 0
            mover_x = "".join(
                "." if r >= k else ("x" if cur >> r & 1 else "o") for r in range(h - 1, -1, -1)
            )
            by_x.append(mover_x)
            by_o.append(mover_x.translate(_SWAP))
        return tuple(by_x), tuple(by_o)

    def parse(self, text: str) -> PositionKey:
        s = text.strip()
        if not s:
            raise InvalidPositionError(
                "empty position: give rows like "
                + repr("/".join(["." * self.width] * 2))
                + " (the empty board is all dots) or a move sequence like '4453'"
            )
        if s.isascii() and s.isdigit():
            return self._parse_moves(s)
        return self._parse_grid(s, text)

    def _parse_moves(self, s: str) -> PositionKey:
        if self.width > 9:
            raise InvalidPositionError(
                f"move sequences need width <= 9 (width is {self.width}); use rows instead"
            )
        key = self.initial()
        for i, ch in enumerate(s, start=1):
            column = int(ch)
            if not 1 <= column <= self.width:
                raise InvalidPositionError(f"move {i}: column {ch} is out of range 1..{self.width}")
            moves = dict(self.children(key))
            if not moves:
                raise InvalidPositionError(f"move {i} ({ch}): the game is already over")
            if ch not in moves:
                raise InvalidPositionError(f"move {i}: column {ch} is full")
            key = moves[ch]
        return key

    def _parse_grid(self, s: str, text: str) -> PositionKey:
        x, o = self._read_grid(s, text)
        mask = x | o
        for c, column in enumerate(self._column):
            col = (mask & column) >> (c * self._h1)
            if col & (col + 1):
                raise InvalidPositionError(
                    f"impossible position {text!r}: floating stone in column {c + 1}"
                )
        nx, no = x.bit_count(), o.bit_count()
        if not (nx == no or nx == no + 1):
            raise InvalidPositionError(
                f"impossible position {text!r}: {nx} x and {no} o "
                "(x moves first, so x has as many stones as o or one more)"
            )
        self._check_fours(x, o, text)
        return self._key(x, o)

    def _read_grid(self, s: str, text: str) -> tuple[int, int]:
        """The x and o stones (bitboards) of the grid *s* (rows top first, ``/``
        between); *text* is the position as given, for messages."""
        rows = s.lower().split("/")
        if len(rows) != self.height:
            raise InvalidPositionError(
                f"expected {self.height} rows separated by '/', got {len(rows)} in {text!r}"
            )
        x = o = 0
        known = self._rows
        for i, row in enumerate(rows):
            stones = known.get(row)
            if stones is None:
                stones = known[row] = self._read_row(i, row, text)
            r = self.height - 1 - i
            x |= stones[0] << r
            o |= stones[1] << r
        return x, o

    def _read_row(self, i: int, row: str, text: str) -> tuple[int, int]:
        """The x and o stones of row *row*, the *i*-th from the top of *text*, as if it
        were the bottom row (a batch of positions reads most rows many times)."""
        if len(row) != self.width:
            raise InvalidPositionError(
                f"row {i + 1} from the top has {len(row)} cells, expected {self.width}"
            )
        x = o = 0
        for c, ch in enumerate(row):
            v = _CHARS.find(ch)
            if v < 0:
                raise InvalidPositionError(f"invalid cell {ch!r} in {text!r}: use 'x', 'o' or '.'")
            if v == 1:
                x |= 1 << (c * self._h1)
            elif v == 2:
                o |= 1 << (c * self._h1)
        return x, o

    def _check_fours(self, x: int, o: int, text: str) -> None:
        """A four in a row is one player's, made by the last move, after which nobody
        moved."""
        x_four, o_four = self._has_four(x), self._has_four(o)
        if x_four and o_four:
            raise InvalidPositionError(
                f"impossible position {text!r}: both players have four in a row"
            )
        if not (x_four or o_four):
            return
        nx, no = x.bit_count(), o.bit_count()
        winner, who = (x, "x") if x_four else (o, "o")
        if (x_four and nx != no + 1) or (o_four and nx != no):
            raise InvalidPositionError(
                f"impossible position {text!r}: {who} has four in a row "
                "but the other player moved after it"
            )
        if not self._last_move_wins(winner, x | o):
            raise InvalidPositionError(
                f"impossible position {text!r}: {who}'s fours in a row cannot all "
                "come from the last move (play stops at the first four)"
            )

    def _last_move_wins(self, winner: int, mask: int) -> bool:
        """Whether removing one of *winner*'s column-top stones leaves it without four."""
        markers = mask + self._bottom
        for column in self._column:
            top = (markers & column) >> 1
            if top & winner and not self._has_four(winner & ~top):
                return True
        return False


__all__ = ["ConnectFour"]
