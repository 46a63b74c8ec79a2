"""Material strings of chess endgames (``KRvK``: white's pieces, ``v``, black's): how
:class:`~solver.games.chess_endgame.ChessGame` reads them (:func:`parse_material`), the
tier number of a material balance and back (:func:`tier_of_material`,
:func:`material_of_tier`), and which balances captures and promotions reach
(:func:`reachable`).
"""

from __future__ import annotations

import re

import chess

from solver.errors import InvalidParameterError

PIECE_ORDER = "KQRBNP"
"""Piece letters in the order of material strings (``KBNvK``, not ``KNBvK``)."""
TYPE_OF_LETTER = {
    "K": chess.KING,
    "Q": chess.QUEEN,
    "R": chess.ROOK,
    "B": chess.BISHOP,
    "N": chess.KNIGHT,
    "P": chess.PAWN,
}
PROMOTIONS = "QRBN"

TIER_LETTERS = "PNBRQ"
"""The non-king pieces, in the order of their counts in a tier number."""
TIER_BITS = 4
"""Bits per piece count in a tier number (at most 10 of a kind: 2 + 8 promotions)."""


def tier_shift(white: bool, letter: str) -> int:
    return TIER_BITS * ((0 if white else 5) + TIER_LETTERS.index(letter))


def tier_of_material(material: str) -> int:
    """A material string's tier number: the count of each non-king piece, white's then
    black's, :data:`TIER_BITS` bits each.

    >>> material_of_tier(tier_of_material("KRPvKQ"))
    'KRPvKQ'
    """
    white, _, black = material.partition("v")
    tier = 0
    for side, is_white in ((white, True), (black, False)):
        for letter in side:
            if letter != "K":
                tier += 1 << tier_shift(is_white, letter)
    return tier


def material_of_tier(tier: int) -> str:
    """The material string of a tier number (:func:`tier_of_material`)."""
    sides = []
    for is_white in (True, False):
        counts = {
            letter: (tier >> tier_shift(is_white, letter)) & ((1 << TIER_BITS) - 1)
            for letter in TIER_LETTERS
        }
        sides.append("K" + "".join(letter * counts[letter] for letter in PIECE_ORDER[1:]))
    return "v".join(sides)


MATERIAL_RE = re.compile(r"([A-UW-Za-uw-z]*)[vV]([A-UW-Za-uw-z]*)")


def parse_material(text: str) -> tuple[str, str]:
    """Both sides' pieces of a material string, normalised (``("KBN", "K")``).

    :raises InvalidParameterError: for anything but one K per side plus Q R B N P.
    """
    m = MATERIAL_RE.fullmatch(text.strip())
    if m is None:
        raise InvalidParameterError(
            f"parameter 'material' must look like KRvK (white's pieces, 'v', black's "
            f"pieces, each side with one K), not {text!r}"
        )
    sides: list[str] = []
    for side, raw in zip(("white", "black"), m.groups(), strict=True):
        letters = raw.upper()
        bad = sorted({c for c in letters if c not in PIECE_ORDER})
        if bad:
            raise InvalidParameterError(
                f"parameter 'material' {text!r}: unknown piece letter "
                f"{', '.join(map(repr, bad))} (use K, Q, R, B, N, P)"
            )
        if letters.count("K") != 1:
            raise InvalidParameterError(
                f"parameter 'material' {text!r}: {side} needs exactly one king (K), "
                f"not {letters.count('K')}"
            )
        if letters.count("P") > 8:
            raise InvalidParameterError(
                f"parameter 'material' {text!r}: {side} has more than 8 pawns"
            )
        if len(letters) > 16:
            raise InvalidParameterError(
                f"parameter 'material' {text!r}: {side} has more than 16 pieces"
            )
        sides.append("".join(sorted(letters, key=PIECE_ORDER.index)))
    return sides[0], sides[1]


def reachable(start: str, target: str) -> bool:
    """Whether one side's pieces *target* can come from *start* by captures (losing
    pieces) and promotions (pawns becoming Q, R, B or N)."""
    pawns, target_pawns = start.count("P"), target.count("P")
    if target_pawns > pawns:
        return False
    promoted = sum(max(0, target.count(p) - start.count(p)) for p in PROMOTIONS)
    return promoted <= pawns - target_pawns


__all__ = [
    "PIECE_ORDER",
    "PROMOTIONS",
    "TIER_BITS",
    "TIER_LETTERS",
    "TYPE_OF_LETTER",
    "material_of_tier",
    "parse_material",
    "reachable",
    "tier_of_material",
    "tier_shift",
]
