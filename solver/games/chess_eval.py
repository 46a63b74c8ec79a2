"""The chess endgames' evaluation (:meth:`~solver.games.chess_endgame.ChessGame.evaluate`):
material and mobility, from the side to move, scaled into the values -1, 0 and 1.

The score counts :data:`PAWN_POINTS` a pawn of material ahead (pawn 1, knight and bishop
3, rook 5, queen 9) plus one a move: the mover's legal moves less the opponent's
pseudo-legal ones were it his turn. A score of :data:`WIN_SCORE` or more (about a minor
piece ahead) is 1, as far behind is -1, anything between 0 (a draw: even material, as in
KRvKR).
"""

from __future__ import annotations

import chess

PIECE_VALUES: dict[chess.PieceType, int] = {
    chess.PAWN: 1,
    chess.KNIGHT: 3,
    chess.BISHOP: 3,
    chess.ROOK: 5,
    chess.QUEEN: 9,
}
"""Material in pawns, the usual scale."""

PAWN_POINTS = 10
"""Score points a pawn of material is worth (a move of mobility is worth one)."""

WIN_SCORE = 30
"""The score at which a non-terminal position is estimated won (-: lost)."""


def material(board: chess.Board) -> int:
    """The side to move's material less the opponent's, in pawns."""
    us = board.turn
    return sum(
        value * (len(board.pieces(piece, us)) - len(board.pieces(piece, not us)))
        for piece, value in PIECE_VALUES.items()
    )


def mobility(board: chess.Board) -> int:
    """The side to move's legal moves less the opponent's pseudo-legal moves on the same
    board with the turn passed (no en-passant square)."""
    other = board.copy(stack=False)
    other.turn = not board.turn
    other.ep_square = None
    return board.legal_moves.count() - other.pseudo_legal_moves.count()


def evaluate_board(board: chess.Board) -> int:
    """The evaluation of a non-terminal *board* (see the module docstring)."""
    score = PAWN_POINTS * material(board) + mobility(board)
    return 1 if score >= WIN_SCORE else -1 if score <= -WIN_SCORE else 0


__all__ = ["PAWN_POINTS", "PIECE_VALUES", "WIN_SCORE", "evaluate_board", "material", "mobility"]
