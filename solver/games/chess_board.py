"""Board facts of chess endgames that do not depend on how a key packs a position: the
8 board symmetries as square maps (:data:`SQUARE_MAPS`) and those that bring the white
king to its smallest square (:data:`PAWNLESS_BEST`), and why python-chess finds a
position illegal, in words (:func:`explain_status`).
"""

from __future__ import annotations

import chess


def _square_maps() -> tuple[tuple[int, ...], ...]:
    """The 8 board symmetries as square maps; 0 is the identity, 1 the a-h file mirror."""
    maps: list[tuple[int, ...]] = []
    for transpose, flip_rank, flip_file in (
        (False, False, False),
        (False, False, True),
        (False, True, False),
        (False, True, True),
        (True, False, False),
        (True, False, True),
        (True, True, False),
        (True, True, True),
    ):
        out: list[int] = []
        for sq in range(64):
            f, r = sq & 7, sq >> 3
            if transpose:
                f, r = r, f
            if flip_file:
                f = 7 - f
            if flip_rank:
                r = 7 - r
            out.append(8 * r + f)
        maps.append(tuple(out))
    return tuple(maps)


SQUARE_MAPS: tuple[tuple[int, ...], ...] = _square_maps()
"""``SQUARE_MAPS[s][sq]``: where symmetry *s* sends square *sq* (s = 0 identity,
1 file mirror a<->h, 2 rank mirror, 3 half turn, 4-7 the same after the a1-h8 transpose)."""
MIRROR = 1
"""Index of the a-h file mirror in :data:`SQUARE_MAPS` (the only symmetry with pawns)."""


def _best_symmetries() -> tuple[tuple[int, ...], ...]:
    """For each white-king square, the symmetries that send it to its smallest image."""
    out: list[tuple[int, ...]] = []
    for sq in range(64):
        images = [m[sq] for m in SQUARE_MAPS]
        low = min(images)
        out.append(tuple(s for s, im in enumerate(images) if im == low))
    return tuple(out)


PAWNLESS_BEST = _best_symmetries()
"""For each white-king square, the symmetries that send it to its smallest image."""


STATUS_TEXT: tuple[tuple[int, str], ...] = (
    (chess.STATUS_EMPTY, "the board is empty"),
    (chess.STATUS_NO_WHITE_KING, "white has no king"),
    (chess.STATUS_NO_BLACK_KING, "black has no king"),
    (chess.STATUS_TOO_MANY_KINGS, "there are more than two kings"),
    (chess.STATUS_TOO_MANY_WHITE_PIECES, "white has more than 16 pieces"),
    (chess.STATUS_TOO_MANY_BLACK_PIECES, "black has more than 16 pieces"),
    (chess.STATUS_TOO_MANY_WHITE_PAWNS, "white has more than 8 pawns"),
    (chess.STATUS_TOO_MANY_BLACK_PAWNS, "black has more than 8 pawns"),
    (chess.STATUS_PAWNS_ON_BACKRANK, "a pawn is on the first or last rank"),
    (
        chess.STATUS_BAD_CASTLING_RIGHTS,
        "the castling rights do not match the kings and rooks on their starting squares",
    ),
    (chess.STATUS_INVALID_EP_SQUARE, "the en-passant square does not follow a double pawn push"),
    (chess.STATUS_TOO_MANY_CHECKERS, "the side to move is in check by more than two pieces"),
    (chess.STATUS_IMPOSSIBLE_CHECK, "the check cannot have come from a legal move"),
)


def explain_status(board: chess.Board, status: int) -> str:
    """The problems in *status* as one line, most specific first."""
    problems: list[str] = []
    if status & chess.STATUS_OPPOSITE_CHECK:
        wk, bk = board.king(chess.WHITE), board.king(chess.BLACK)
        if wk is not None and bk is not None and chess.square_distance(wk, bk) <= 1:
            problems.append("the kings are adjacent")
        else:
            side = "black" if board.turn == chess.WHITE else "white"
            mover = "white" if board.turn == chess.WHITE else "black"
            problems.append(f"{side} is in check but {mover} is to move")
    for flag, message in STATUS_TEXT:
        if status & flag:
            problems.append(message)
    return "; ".join(problems) or f"python-chess status {status:#x}"


__all__ = ["MIRROR", "PAWNLESS_BEST", "SQUARE_MAPS", "STATUS_TEXT", "explain_status"]
