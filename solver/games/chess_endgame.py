"""Chess endgames (python-chess rules): every position of a material balance and every
position reachable from it by captures and promotions.

**Notation.** A position is a FEN without move counters: piece placement, side to move,
castling rights and en-passant square. :meth:`ChessGame.format` writes the four fields
joined by underscores, ``8/8/8/4k3/8/8/8/R3K3_w_-_-`` (lichess's URL form: one token, no
spaces, safe in URLs and shell arguments); :meth:`ChessGame.parse` reads that form and
ordinary FENs with spaces, with or without the two move counters (which are ignored:
repetitions and the fifty-move rule are not part of a position). The en-passant field is
written only when an en-passant capture is legal, as python-chess's ``fen()`` does.

**Keys.** A key packs the position into one int::

    bit 0       1 if black is to move
    bits 1-4    castling rights: white a1 rook, white h1 rook, black a8 rook, black h8 rook
    bits 5-8    en-passant file + 1 (0: none); the rank follows from the side to move
    bits 9-     one 10-bit group per piece, ascending: (code << 6) | square

where ``square`` is python-chess's square index (a1 = 0, h8 = 63) and ``code`` is the
piece type (pawn 1 ... king 6), plus 6 for white pieces. Every group is non-zero, so the
pieces are read back until the key runs out; the white king (code 12) is always the most
significant group. A KRvK key has 39 bits, a five-piece key 59.

**Symmetry.** With ``symmetry=true`` a key's class is its images under the board
symmetries that keep the rules: all 8 (rotations and reflections) when there are no pawns
and no castling rights, only the a-h file mirror with pawns, none with castling rights.
:meth:`ChessGame.canonical` returns the smallest key of the class. Since the white king is
the key's most significant group, only the images that bring it to its smallest square
(the a1-d1-d4 triangle without pawns, files a-d with pawns) can win: one symmetry, or two
when the white king is on a diagonal.

Moves are labelled in UCI (``a1a8``, ``e7e8q``, castling ``e1c1``); :meth:`ChessGame.san`
gives the SAN (``Ra8#``) for display.

>>> game = ChessGame(material="KQvK", symmetry=False)
>>> key = game.parse("k7/8/1K6/8/8/8/8/6Q1 w - - 0 1")
>>> game.format(key)
'k7/8/1K6/8/8/8/8/6Q1_w_-_-'
>>> game.san(key, "g1g8")
'Qg8#'
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator, Sequence
from typing import ClassVar

import chess
import numpy as np
import numpy.typing as npt

from solver.errors import InvalidPositionError, NegagraphError
from solver.game import GameBase, LeakOrder, MoveLabel, Param, ParamValue, PositionKey
from solver.games.chess_board import MIRROR, PAWNLESS_BEST, SQUARE_MAPS, explain_status
from solver.games.chess_eval import evaluate_board
from solver.games.chess_material import (
    PIECE_ORDER,
    PROMOTIONS,
    TIER_LETTERS,
    TYPE_OF_LETTER,
    material_of_tier,
    parse_material,
    reachable,
    tier_shift,
)

logger = logging.getLogger(__name__)

# -- the key layout ---------------------------------------------------------------------

HEADER_BITS = 9
"""Low bits of a key that hold side to move, castling rights and en-passant file."""
GROUP_BITS = 10
"""Bits per piece: a 4-bit code and a 6-bit square."""
_GROUP_MASK = (1 << GROUP_BITS) - 1
_HEADER_MASK = (1 << HEADER_BITS) - 1
_BLACK_TO_MOVE = 1
_CASTLING_SHIFT = 1
_CASTLING_MASK = 0b1111 << _CASTLING_SHIFT
_EP_SHIFT = 5
_EP_MASK = 0b1111 << _EP_SHIFT
_CASTLING_SQUARES = (chess.A1, chess.H1, chess.A8, chess.H8)

_WHITE_OFFSET = 6
_WHITE_KING = chess.KING + _WHITE_OFFSET
_PAWN_CODES = frozenset({chess.PAWN, chess.PAWN + _WHITE_OFFSET})
_MATING_CODES = frozenset(
    {t + off for t in (chess.PAWN, chess.ROOK, chess.QUEEN) for off in (0, _WHITE_OFFSET)}
)
"""Pieces whose presence alone rules out insufficient material."""
_MATING_MASK = sum(1 << c for c in _MATING_CODES)
_SYMBOLS: tuple[str, ...] = ("",) + tuple("pnbrqk") + tuple("PNBRQK")
"""FEN letters by piece code."""
_DIGITS = "012345678"
_CANON_CACHE = 1 << 21
"""Canonical forms remembered per game instance (the cache is dropped when full)."""

_TIER_OF_CODE = np.array(
    [
        0
        if code in (0, chess.KING, _WHITE_KING) or code > _WHITE_KING
        else 1
        << tier_shift(
            code > _WHITE_OFFSET,
            chess.piece_symbol(code - _WHITE_OFFSET if code > _WHITE_OFFSET else code).upper(),
        )
        for code in range(16)
    ],
    dtype=np.int64,
)
"""What a piece code adds to a tier number (0 for kings and for no piece)."""


_UCI: tuple[str, ...] = tuple(
    chess.SQUARE_NAMES[f] + chess.SQUARE_NAMES[t] for f in range(64) for t in range(64)
)
"""UCI labels of non-promoting moves, by ``from * 64 + to``."""


def _code(piece_type: int, white: bool) -> int:
    return piece_type + (_WHITE_OFFSET if white else 0)


def _groups(key: PositionKey) -> list[int]:
    """The piece groups of *key*, ascending."""
    rest = key >> HEADER_BITS
    out: list[int] = []
    while rest:
        out.append(rest & _GROUP_MASK)
        rest >>= GROUP_BITS
    return out


def _pack(groups: Sequence[int]) -> int:
    """The piece part of a key from *groups* sorted ascending (not shifted)."""
    body = 0
    for g in reversed(groups):
        body = (body << GROUP_BITS) | g
    return body


# -- symmetries (the square maps: solver.games.chess_board) -----------------------------

_GROUP_MAPS: tuple[tuple[int, ...], ...] = tuple(
    tuple((g & ~63) | m[g & 63] for g in range(1 << GROUP_BITS)) for m in SQUARE_MAPS
)
"""The square maps as maps of piece groups (code and square)."""

# -- material ---------------------------------------------------------------------------


def material_of(fen_or_board: str | chess.BaseBoard) -> str:
    """The canonical material string of a FEN (any form :class:`ChessGame` reads) or a
    board: white's pieces, ``v``, black's, each as K Q R B N P in that order.

    >>> material_of("8/8/8/4k3/8/8/8/R3K3 w - - 0 1")
    'KRvK'
    >>> material_of(chess.Board())
    'KQRRBBNNPPPPPPPPvKQRRBBNNPPPPPPPP'

    :raises InvalidPositionError: if the piece placement is malformed.
    """
    if isinstance(fen_or_board, chess.BaseBoard):
        board = fen_or_board
    else:
        fields = fen_or_board.replace("_", " ").split()
        if not fields:
            raise InvalidPositionError("empty FEN")
        try:
            board = chess.BaseBoard(fields[0])
        except ValueError as exc:
            raise InvalidPositionError(f"malformed FEN: {exc}") from None
    sides = []
    for color in (chess.WHITE, chess.BLACK):
        sides.append(
            "".join(
                letter * chess.popcount(board.pieces_mask(TYPE_OF_LETTER[letter], color))
                for letter in PIECE_ORDER
            )
        )
    return "v".join(sides)


class IllegalMoveError(NegagraphError, ValueError):
    """A move label that is not a legal move in the position it was given for."""


class ChessGame(GameBase):
    """Chess endgames of one material balance (see the module docstring)."""

    name: ClassVar[str] = "chess"
    version: ClassVar[int] = 1
    description: ClassVar[str] = (
        "Chess endgames (python-chess rules): every position of the material balance and "
        "those it reaches by captures and promotions. Checkmate loses (-1), stalemate and "
        "insufficient material draw (0), so does endless play."
    )
    notation: ClassVar[str] = (
        "A FEN without move counters, fields joined by '_' (e.g. "
        "'8/8/8/4k3/8/8/8/R3K3_w_-_-'); ordinary FENs with spaces, with or without move "
        "counters, are read too (counters are ignored). Moves are labelled in UCI, "
        "e.g. 'a1a8', 'e7e8q'."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "material",
            str,
            "KRvK",
            "the endgame: white's pieces 'v' black's, each with one K (KRvK, KQvK, "
            "KPvK, KBNvK, KRvKR ...)",
        ),
        Param(
            "symmetry",
            bool,
            True,
            "identify positions under board symmetries (8 without pawns, the a-h "
            "mirror with pawns, none with castling rights)",
        ),
    )

    repetition_value: int | None = 0
    value_range: tuple[int, int] | None = (-1, 1)
    leak_order: ClassVar[LeakOrder] = "breadth"
    players: ClassVar[tuple[str, str]] = ("White", "Black")
    tiers: ClassVar[bool] = True  # the material: captures and promotions leave a tier

    @classmethod
    def _normalize_params(cls, values: dict[str, ParamValue]) -> None:
        values["material"] = "v".join(parse_material(str(values["material"])))

    def _configure(self) -> None:
        white, black = parse_material(str(self.params["material"]))
        self.material = f"{white}v{black}"
        self.params["material"] = self.material
        self._sides = (white, black)
        self.uses_symmetry = bool(self.params["symmetry"])
        self._board = chess.Board(None)
        self._loaded: PositionKey = -1
        self._canon: dict[PositionKey, PositionKey] = {}
        self._reachable: dict[str, bool] = {}
        self._tier_games: dict[int, ChessGame] = {}

    # -- keys and boards --------------------------------------------------------------

    def _load(self, key: PositionKey) -> chess.Board:
        """The shared scratch board set to *key* (valid until the next call)."""
        board = self._board
        if key == self._loaded:
            return board
        bbs = [0] * 13
        rest = key >> HEADER_BITS
        while rest:
            g = rest & _GROUP_MASK
            bbs[g >> 6] |= 1 << (g & 63)
            rest >>= GROUP_BITS
        board.pawns = bbs[1] | bbs[7]
        board.knights = bbs[2] | bbs[8]
        board.bishops = bbs[3] | bbs[9]
        board.rooks = bbs[4] | bbs[10]
        board.queens = bbs[5] | bbs[11]
        board.kings = bbs[6] | bbs[12]
        black = bbs[1] | bbs[2] | bbs[3] | bbs[4] | bbs[5] | bbs[6]
        white = bbs[7] | bbs[8] | bbs[9] | bbs[10] | bbs[11] | bbs[12]
        board.occupied_co[chess.WHITE] = white
        board.occupied_co[chess.BLACK] = black
        board.occupied = white | black
        board.promoted = 0
        black_to_move = key & _BLACK_TO_MOVE
        board.turn = not black_to_move
        castling = 0
        if key & _CASTLING_MASK:
            for i, sq in enumerate(_CASTLING_SQUARES):
                if key >> (_CASTLING_SHIFT + i) & 1:
                    castling |= 1 << sq
        board.castling_rights = castling
        ep = (key & _EP_MASK) >> _EP_SHIFT
        board.ep_square = None if not ep else (ep - 1) + (16 if black_to_move else 40)
        self._loaded = key
        return board

    @staticmethod
    def _key_of(board: chess.Board) -> PositionKey:
        """The key of a (valid) python-chess board."""
        groups = sorted(
            (_code(p.piece_type, p.color) << 6) | sq for sq, p in board.piece_map().items()
        )
        header = 0 if board.turn == chess.WHITE else _BLACK_TO_MOVE
        for i, sq in enumerate(_CASTLING_SQUARES):
            if board.castling_rights & (1 << sq):
                header |= 1 << (_CASTLING_SHIFT + i)
        if board.ep_square is not None and board.has_legal_en_passant():
            header |= (chess.square_file(board.ep_square) + 1) << _EP_SHIFT
        return (_pack(groups) << HEADER_BITS) | header

    def board(self, key: PositionKey) -> chess.Board:
        """A new python-chess board of *key* (move counters ``0 1``)."""
        return self._load(key).copy(stack=False)

    def draw_svg(self, key: PositionKey) -> str:
        """The position as python-chess draws a board (``chess.svg``), for the explorer."""
        import chess.svg

        return chess.svg.board(self.board(key), size=320)

    # -- the Game protocol ------------------------------------------------------------

    @classmethod
    def params_for(cls, text: str) -> dict[str, ParamValue]:
        """The material of the FEN *text* (so lookups find the right table)."""
        try:
            return {"material": material_of(text)}
        except InvalidPositionError:
            return {}

    def initial(self) -> PositionKey:
        """A typical position of the material, white to move: white king e1, black king
        e5 (else e8, else the first square that is legal), white's other pieces from a1,
        h1, b1, g1, ... (pawns from a2 to h2), black's from a8, h8, ... (pawns from a7),
        further pieces on the next free squares."""
        white, black = self._sides
        placement: dict[int, chess.Piece] = {chess.E1: chess.Piece(chess.KING, chess.WHITE)}
        back_files = [0, 7, 1, 6, 2, 5, 3, 4]
        for color, pieces in ((chess.WHITE, white), (chess.BLACK, black)):
            ranks = range(8) if color == chess.WHITE else range(7, -1, -1)
            officers = [chess.square(f, r) for r in ranks for f in back_files]
            pawns = [chess.square(f, r) for r in ranks if 0 < r < 7 for f in range(8)]
            for letter in pieces[1:]:
                where = pawns if letter == "P" else officers
                square = next(sq for sq in where if sq not in placement)
                placement[square] = chess.Piece(TYPE_OF_LETTER[letter], color)
        board = chess.Board(None)
        for king_square in [chess.E5, chess.E8, *range(64)]:
            if king_square in placement:
                continue
            board.set_piece_map({**placement, king_square: chess.Piece(chess.KING, chess.BLACK)})
            if board.is_valid():
                return self._key_of(board)
        return next(iter(self.tablebase_positions()))

    def _dead(self, key: PositionKey, board: chess.Board) -> bool:
        """Insufficient material (python-chess's rule), skipped when a pawn, rook or queen
        is on the board."""
        codes = 0
        rest = key >> HEADER_BITS
        while rest:
            codes |= 1 << ((rest & _GROUP_MASK) >> 6)
            rest >>= GROUP_BITS
        return not codes & _MATING_MASK and board.is_insufficient_material()

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        board = self._load(key)
        if self._dead(key, board):
            return []
        moves = list(board.generate_legal_moves())
        out: list[tuple[MoveLabel, PositionKey]] = []
        if key & (_CASTLING_MASK | _EP_MASK):
            # Castling rights or en passant: python-chess plays every move.
            for move in moves:
                out.append((move.uci(), self._play(board, move)))
            return out
        groups = _groups(key)
        child_header = (key & _BLACK_TO_MOVE) ^ _BLACK_TO_MOVE
        offset = 0 if key & _BLACK_TO_MOVE else _WHITE_OFFSET
        at = {g & 63: g for g in groups}
        uci = _UCI
        pawn_codes = _PAWN_CODES
        for move in moves:
            fr, to = move.from_square, move.to_square
            moved = at[fr]
            code = moved >> 6
            if code in pawn_codes and (to - fr == 16 or fr - to == 16):
                # A double push may allow en passant: python-chess plays it.
                out.append((uci[fr * 64 + to], self._play(board, move)))
                continue
            rest = [g for g in groups if g != moved and g & 63 != to]
            promotion = move.promotion
            if promotion:
                rest.append(((promotion + offset) << 6) | to)
                label = move.uci()
            else:
                rest.append((code << 6) | to)
                label = uci[fr * 64 + to]
            rest.sort()
            body = 0
            for g in reversed(rest):
                body = (body << GROUP_BITS) | g
            out.append((label, (body << HEADER_BITS) | child_header))
        return out

    def _play(self, board: chess.Board, move: chess.Move) -> PositionKey:
        """The key after *move* on the scratch *board* (which is left unchanged)."""
        board.push(move)
        try:
            return self._key_of(board)
        finally:
            board.pop()

    def terminal_value(self, key: PositionKey) -> int | None:
        board = self._load(key)
        if self._dead(key, board):
            return 0
        for _ in board.generate_legal_moves():
            return None
        return -1 if board.is_check() else 0

    def evaluate(self, key: PositionKey) -> int:
        """Material and mobility (:mod:`solver.games.chess_eval`); the value if terminal."""
        value = self.terminal_value(key)
        return value if value is not None else evaluate_board(self._load(key))

    def canonical(self, key: PositionKey) -> PositionKey:
        if not self.uses_symmetry or key & _CASTLING_MASK:
            return key
        cached = self._canon.get(key)
        if cached is not None:
            return cached
        groups = _groups(key)
        header = key & _HEADER_MASK
        wk = groups[-1] & 63
        best = key
        if any(g >> 6 in _PAWN_CODES for g in groups):
            if wk & 7 >= 4:
                table = _GROUP_MAPS[MIRROR]
                ep = (header & _EP_MASK) >> _EP_SHIFT
                if ep:
                    header = (header & ~_EP_MASK) | ((8 - ep + 1) << _EP_SHIFT)
                best = (_pack(sorted(table[g] for g in groups)) << HEADER_BITS) | header
        else:
            first = True
            for s in PAWNLESS_BEST[wk]:
                if s == 0:
                    image = key
                else:
                    table = _GROUP_MAPS[s]
                    image = (_pack(sorted(table[g] for g in groups)) << HEADER_BITS) | header
                if first or image < best:
                    best = image
                    first = False
        if len(self._canon) >= _CANON_CACHE:
            self._canon.clear()
        self._canon[key] = best
        return best

    def player_to_move(self, key: PositionKey) -> int:
        """0 if white is to move at *key*, 1 if black is."""
        return key & _BLACK_TO_MOVE

    # -- notation ---------------------------------------------------------------------

    def format(self, key: PositionKey) -> str:
        ranks: list[list[int]] = [[], [], [], [], [], [], [], []]
        rest = key >> HEADER_BITS
        while rest:
            g = rest & _GROUP_MASK
            ranks[(g & 63) >> 3].append(g)
            rest >>= GROUP_BITS
        rows: list[str] = []
        for rank in range(7, -1, -1):
            pieces = ranks[rank]
            if not pieces:
                rows.append("8")
                continue
            pieces.sort(key=lambda g: g & 7)
            row = ""
            file = 0
            for g in pieces:
                f = g & 7
                if f > file:
                    row += _DIGITS[f - file]
                row += _SYMBOLS[g >> 6]
                file = f + 1
            if file < 8:
                row += _DIGITS[8 - file]
            rows.append(row)
        side = "b" if key & _BLACK_TO_MOVE else "w"
        castling = (
            "".join(
                ch
                for ch, i in (("K", 1), ("Q", 0), ("k", 3), ("q", 2))
                if key >> (_CASTLING_SHIFT + i) & 1
            )
            or "-"
        )
        ep = (key & _EP_MASK) >> _EP_SHIFT
        ep_text = "-" if not ep else "abcdefgh"[ep - 1] + ("3" if key & _BLACK_TO_MOVE else "6")
        return "_".join(("/".join(rows), side, castling, ep_text))

    def parse(self, text: str) -> PositionKey:
        """Read a FEN (spaces or underscores between fields; counters optional, ignored).

        :raises InvalidPositionError: for a malformed FEN, an illegal position, or
            material that is neither this variant's nor reachable from it.
        """
        fields = text.replace("_", " ").split()
        if not fields:
            raise InvalidPositionError(
                "empty position: give a FEN such as '8/8/8/4k3/8/8/8/R3K3 w - -'"
            )
        if len(fields) < 2 or len(fields) > 6:
            raise InvalidPositionError(
                f"malformed FEN {text!r}: expected piece placement, side to move, castling "
                f"rights and en-passant square (optionally two move counters), got "
                f"{len(fields)} field{'s' if len(fields) != 1 else ''}"
            )
        for name, counter in zip(("half-move clock", "move number"), fields[4:], strict=False):
            if not (counter.isascii() and counter.isdigit()):
                raise InvalidPositionError(
                    f"malformed FEN {text!r}: the {name} must be a number, not {counter!r}"
                )
        board = chess.Board(None)
        try:
            board.set_fen(" ".join(fields[:4]))
        except ValueError as exc:
            raise InvalidPositionError(f"malformed FEN {text!r}: {exc}") from None
        status = board.status()
        if status != chess.STATUS_VALID:
            raise InvalidPositionError(
                f"illegal position {text!r}: {explain_status(board, status)}"
            )
        material = material_of(board)
        if not self.reaches(material):
            raise InvalidPositionError(
                f"FEN has material {material}, this variant is {self.material}: "
                f"use -p material={material}"
            )
        return self._key_of(board)

    # -- tiers --------------------------------------------------------------------------

    def tier(self, key: PositionKey) -> int:
        """The material (:func:`tier_of_material`) of *key*."""
        tier = 0
        for group in _groups(key):
            code = group >> 6  # a group is (code << 6) | square
            white = code > _WHITE_OFFSET
            piece = code - _WHITE_OFFSET if white else code
            if piece != chess.KING:
                tier += 1 << tier_shift(white, chess.piece_symbol(piece).upper())
        return tier

    def tiers_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """:meth:`tier` of every key, from the piece codes of its 10-bit groups at once
        (a key of five pieces or fewer fits 64 bits)."""
        rest = np.asarray(keys, dtype=np.int64) >> HEADER_BITS
        tier = np.zeros(rest.shape, dtype=np.int64)
        while rest.any():
            tier += _TIER_OF_CODE[(rest >> 6) & 15]  # a group is (code << 6) | square
            rest = rest >> GROUP_BITS
        return tier

    def child_tiers(self, tier: int) -> list[int]:
        """The materials one move can lead to: a capture (one piece of either side
        less), a promotion (a pawn becomes a queen, rook, bishop or knight), or both."""
        out: set[int] = set()
        for white in (True, False):
            mine = [x for x in TIER_LETTERS if (tier >> tier_shift(white, x)) & 15]
            theirs = [x for x in TIER_LETTERS if (tier >> tier_shift(not white, x)) & 15]
            for letter in theirs:  # this side captures
                out.add(tier - (1 << tier_shift(not white, letter)))
            if "P" in mine:
                for promoted in PROMOTIONS:
                    raised = tier - (1 << tier_shift(white, "P"))
                    raised += 1 << tier_shift(white, promoted)
                    out.add(raised)
                    for letter in theirs:
                        if letter != "P":  # a promotion captures on the last rank
                            out.add(raised - (1 << tier_shift(not white, letter)))
        return sorted(out)

    def tier_name(self, tier: int) -> str:
        """The tier's material, ``KQvK``."""
        return material_of_tier(tier)

    def tier_positions(self, tier: int) -> Iterator[PositionKey]:
        """Every legal placement of the tier's material (:meth:`tablebase_positions` of
        that material's variant): the positions without castling rights or en passant."""
        game = self._tier_games.get(tier)
        if game is None:
            game = ChessGame(material=material_of_tier(tier), symmetry=self.uses_symmetry)
            self._tier_games[tier] = game
        return iter(game.tablebase_positions())

    def reaches(self, material: str) -> bool:
        """Whether positions of *material* (canonical, e.g. ``"KvK"``) belong to this
        variant: its own material or one that captures and promotions lead to."""
        known = self._reachable.get(material)
        if known is None:
            white, _, black = material.partition("v")
            known = reachable(self._sides[0], white) and reachable(self._sides[1], black)
            self._reachable[material] = known
        return known

    def san(self, key: PositionKey, move_label: MoveLabel) -> str:
        """The SAN of the move *move_label* (UCI) at *key*, e.g. ``"Ra8#"``.

        :raises IllegalMoveError: if the label is not a legal move there.
        """
        board = self._load(key)
        try:
            move = chess.Move.from_uci(move_label)
        except ValueError:
            raise IllegalMoveError(f"{move_label!r} is not a UCI move") from None
        if not board.is_legal(move):
            raise IllegalMoveError(f"{move_label} is not a legal move in {self.format(key)}")
        return board.san(move)

    # -- tablebases -------------------------------------------------------------------

    def tablebase_positions(self) -> Iterator[PositionKey]:
        """Every legal position of the variant's material, white to move then black to
        move for each placement, without castling rights or en passant; with symmetry, only
        the canonical ones (the white king in the a1-d1-d4 triangle without pawns, on files
        a-d with pawns). Placements are enumerated piece by piece in key order."""
        white, black = self._sides
        codes = sorted(
            [_code(TYPE_OF_LETTER[c], True) for c in white]
            + [_code(TYPE_OF_LETTER[c], False) for c in black]
        )
        has_pawns = any(c in _PAWN_CODES for c in codes)
        others = codes[:-1]  # the white king is the largest code
        runs = [(code, len(list(grp))) for code, grp in itertools.groupby(others)]
        options: list[list[tuple[int, ...]]] = []
        for code, count in runs:
            allowed = [sq for sq in range(64) if code not in _PAWN_CODES or 8 <= sq < 56]
            options.append(list(itertools.combinations(allowed, count)))
        for wk in self._white_king_squares(has_pawns):
            for combo in itertools.product(*options):
                groups = _placed(wk, runs, combo)
                if groups is not None:
                    yield from self._legal_keys(_pack(groups) << HEADER_BITS)

    def _white_king_squares(self, has_pawns: bool) -> list[int]:
        """The white king's squares :meth:`tablebase_positions` enumerates: all, or with
        symmetry the a1-d1-d4 triangle (files a-d with pawns)."""
        if not self.uses_symmetry:
            return list(range(64))
        if has_pawns:
            return [sq for sq in range(64) if sq & 7 < 4]
        return sorted({min(m[sq] for m in SQUARE_MAPS) for sq in range(64)})

    def _legal_keys(self, body: int) -> Iterator[PositionKey]:
        """The keys of the placement *body* (white to move, then black) that are legal
        (and canonical, with symmetry)."""
        board = self._board
        for header in (0, _BLACK_TO_MOVE):
            key = body | header
            self._load(key)
            # Kings, pawn ranks, castling and en passant are right by
            # construction: only checks can make the position illegal.
            if board.was_into_check():
                continue
            checkers = board.checkers_mask()
            if checkers & (checkers - 1) and board.status() != chess.STATUS_VALID:
                continue
            if self.uses_symmetry and self.canonical(key) != key:
                continue
            yield key


def _placed(
    wk: int, runs: Sequence[tuple[int, int]], combo: Sequence[tuple[int, ...]]
) -> list[int] | None:
    """The piece groups, sorted, of the white king on *wk* and the pieces of *runs* (each
    code with its count) on the squares *combo*; ``None`` if two pieces share a square
    or the kings are adjacent."""
    used = {wk}
    groups = [(_WHITE_KING << 6) | wk]
    for (code, _), squares in zip(runs, combo, strict=True):
        for sq in squares:
            if sq in used:
                return None
            used.add(sq)
            groups.append((code << 6) | sq)
    if chess.square_distance(wk, _black_king(groups)) <= 1:
        return None
    groups.sort()
    return groups


def _black_king(groups: Sequence[int]) -> int:
    """The black king's square among piece *groups*."""
    for g in groups:
        if g >> 6 == chess.KING:
            return g & 63
    raise ValueError("no black king")


__all__ = ["ChessGame", "IllegalMoveError", "material_of"]
