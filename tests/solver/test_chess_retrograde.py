"""The chess table of KRvK built tier by tier into SQLite (KRvK, then KvK after the rook
is taken) against an independent retrograde analysis written here from the rules of
chess alone: no python-chess, no symmetry, every placement of the three pieces.

The oracle numbers a position ``((wk * 64 + wr) * 64 + bk) * 2 + side`` (squares a1 = 0
... h8 = 63, side 1: black to move), generates the moves of a white king and rook and of
a lone black king with numpy, and finds the mates level by level: black to move is lost
in 0 plies when checkmated; white to move wins in n when a move reaches a position lost
in n - 1; black to move is lost in n when every move reaches a position won in at most
n - 1. Everything else is a draw (stalemate, the rook taken, or no forced mate), which is
what the chess game's values say when endless play is a draw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chess
import numpy as np
import numpy.typing as npt
import pytest
from sqlalchemy import text

from db.migrate import upgrade
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve

Squares = npt.NDArray[np.int64]

SQ = np.arange(64)
FILE, RANK = SQ % 8, SQ // 8
KING_STEPS = [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1) if (df, dr) != (0, 0)]
ROOK_STEPS = [(1, 0), (-1, 0), (0, 1), (0, -1)]
DRAW = -1
"""The oracle's depth for a position that is not decided (a draw)."""


def distance(a: Squares, b: Squares) -> Squares:
    """Chebyshev distance: 1 for adjacent squares."""
    return np.maximum(abs(FILE[a] - FILE[b]), abs(RANK[a] - RANK[b]))  # type: ignore[no-any-return]


def step(sq: Squares, df: int, dr: int) -> tuple[Squares, npt.NDArray[np.bool_]]:
    """The square *df* files and *dr* ranks from *sq*, and whether it is on the board."""
    f, r = FILE[sq] + df, RANK[sq] + dr
    on = (f >= 0) & (f < 8) & (r >= 0) & (r < 8)
    return np.where(on, r * 8 + f, 0), on


def rook_attacks(rook: Squares, target: Squares, blocker: Squares) -> npt.NDArray[np.bool_]:
    """Whether a rook on *rook* attacks *target*, with one other piece on *blocker*."""
    same_file, same_rank = FILE[rook] == FILE[target], RANK[rook] == RANK[target]
    between_file = (FILE[blocker] == FILE[rook]) & (
        (RANK[blocker] - RANK[rook]) * (RANK[blocker] - RANK[target]) < 0
    )
    between_rank = (RANK[blocker] == RANK[rook]) & (
        (FILE[blocker] - FILE[rook]) * (FILE[blocker] - FILE[target]) < 0
    )
    attacks = (same_file & ~between_file) | (same_rank & ~between_rank)
    return attacks & (rook != target)  # type: ignore[no-any-return]


def krvk_retrograde() -> tuple[npt.NDArray[np.bool_], Squares]:
    """Per position index: whether it is legal, and its depth to mate (plies; white to
    move: won in that many, black to move: lost in that many) or :data:`DRAW`."""
    wk, wr, bk = (a.ravel() for a in np.meshgrid(SQ, SQ, SQ, indexing="ij"))
    base = (wk * 64 + wr) * 64 + bk  # the placement's index, without the side
    placed = (wk != wr) & (wk != bk) & (wr != bk) & (distance(wk, bk) > 1)
    check = placed & rook_attacks(wr, bk, wk)  # the black king in check
    legal = np.zeros(64**3 * 2, bool)
    legal[base * 2] = placed & ~check  # white to move: black must not be in check
    legal[base * 2 + 1] = placed

    # White's moves: (parent, child) pairs, children black to move.
    w_parent, w_child = [], []
    for df, dr in KING_STEPS:
        to, on = step(wk, df, dr)
        ok = placed & ~check & on & (to != wr) & (distance(to, bk) > 1)
        w_parent.append(base[ok] * 2)
        w_child.append(((to[ok] * 64 + wr[ok]) * 64 + bk[ok]) * 2 + 1)
    for df, dr in ROOK_STEPS:
        at, free = wr.copy(), placed & ~check
        for _ in range(7):
            at, on = step(at, df, dr)
            free = free & on & (at != wk) & (at != bk)
            w_parent.append(base[free] * 2)
            w_child.append(((wk[free] * 64 + at[free]) * 64 + bk[free]) * 2 + 1)
    wp, wc = np.concatenate(w_parent), np.concatenate(w_child)

    # Black's moves: children white to move; taking the rook ends in a draw.
    b_parent, b_child = [], []
    moves = np.zeros(64**3, np.int64)  # legal black moves per placement
    for df, dr in KING_STEPS:
        to, on = step(bk, df, dr)
        ok = placed & on & (to != wk) & (distance(to, wk) > 1)
        takes = ok & (to == wr)
        ok &= (to == wr) | ~rook_attacks(wr, to, wk)
        moves += ok
        quiet = ok & ~takes
        b_parent.append(base[quiet] * 2 + 1)
        b_child.append(((wk[quiet] * 64 + wr[quiet]) * 64 + to[quiet]) * 2)
    bp, bc = np.concatenate(b_parent), np.concatenate(b_child)
    can_take = np.zeros(64**3 * 2, bool)
    for df, dr in KING_STEPS:
        to, on = step(bk, df, dr)
        takes = placed & on & (to == wr) & (distance(to, wk) > 1)
        can_take[base[takes] * 2 + 1] = True
    left = np.zeros(64**3 * 2, np.int64)  # black moves not yet known to lose
    left[base * 2 + 1] = moves

    depth = np.full(64**3 * 2, DRAW, np.int64)
    mated = placed & check & (moves == 0)
    depth[base[mated] * 2 + 1] = 0
    level = 0
    while True:
        # White wins in level + 1: a move into a position lost in level.
        lost = depth[wc] == level
        won = np.unique(wp[lost & (depth[wp] == DRAW)])
        if not won.size:
            break
        depth[won] = level + 1
        # Black is lost in level + 2 once its last move reaches a won position.
        hit = np.isin(bc, won)
        np.subtract.at(left, bp[hit], 1)
        done = np.unique(bp[hit])
        done = done[(left[done] == 0) & ~can_take[done] & (depth[done] == DRAW)]
        depth[done] = level + 2
        level += 2
    return legal, depth


def squares(notation: str) -> tuple[int, int, int, int]:
    """(white king, white rook, black king, side) of a stored KRvK position."""
    board = chess.Board(notation.replace("_", " "))
    (rook,) = board.pieces(chess.ROOK, chess.WHITE)
    side = 0 if board.turn == chess.WHITE else 1
    return board.king(chess.WHITE) or 0, rook, board.king(chess.BLACK) or 0, side


def squares_kvk(notation: str) -> tuple[int, int, int]:
    """(white king, black king, side) of a stored KvK position."""
    board = chess.Board(notation.replace("_", " "))
    side = 0 if board.turn == chess.WHITE else 1
    return board.king(chess.WHITE) or 0, board.king(chess.BLACK) or 0, side


def symmetry_classes(legal: npt.NDArray[np.bool_]) -> int:
    """The number of classes of legal positions under the board's 8 symmetries."""
    index = np.flatnonzero(legal)
    side = index % 2
    wk, wr, bk = index // 2 // 4096, index // 2 // 64 % 64, index // 2 % 64
    images = []
    for swap in (False, True):
        for flip_f in (False, True):
            for flip_r in (False, True):

                def move(sq: Squares, s: bool = swap, a: bool = flip_f, b: bool = flip_r) -> Any:
                    f, r = sq % 8, sq // 8
                    f, r = (r, f) if s else (f, r)
                    return (7 - r if b else r) * 8 + (7 - f if a else f)

                images.append(((move(wk) * 64 + move(wr)) * 64 + move(bk)) * 2 + side)
    return int(np.unique(np.min(images, axis=0)).size)


@pytest.fixture(scope="module")
def oracle() -> tuple[npt.NDArray[np.bool_], Squares]:
    return krvk_retrograde()


def test_the_oracle_knows_the_published_mates(oracle: Any) -> None:
    legal, depth = oracle
    white = depth[0::2][legal[0::2]]
    black = depth[1::2][legal[1::2]]
    assert white.max() == 31  # mate in 16, white to move
    assert black.max() == 32
    assert (white != DRAW).all()  # white to move always wins
    assert (black == DRAW).sum() > 0  # black takes an unguarded rook, or is stalemated
    assert (black == 0).sum() > 0  # checkmated


def test_the_tiered_krvk_table_equals_the_independent_retrograde(
    oracle: Any, tmp_path: Path
) -> None:
    legal, depth = oracle
    url = f"sqlite:///{tmp_path / 'krvk.db'}"
    upgrade(url)
    engine = make_engine(url)
    game: Any = get_game("chess", material="KRvK")
    try:
        result = solve(game, full=True, store=SqlStore(engine), tiers=True)
        assert result.complete
        assert result.extra["tiers"] == 2  # KRvK, then KvK
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT notation, low, high, depth_low, depth_high FROM nodes")
            ).all()
    finally:
        engine.dispose()
    krvk = [r for r in rows if "R" in r.notation]
    # one stored position per class of legal positions
    assert len(krvk) == symmetry_classes(legal)
    checked = {"won": 0, "lost": 0, "drawn": 0}
    for notation, low, high, depth_low, depth_high in krvk:
        wk, wr, bk, side = squares(notation)
        index = ((wk * 64 + wr) * 64 + bk) * 2 + side
        assert legal[index], notation
        want = int(depth[index])
        if low is not None and low > 0:
            assert (side, depth_low) == (0, want), notation
            checked["won"] += 1
        elif high is not None and high < 0:
            assert (side, depth_high) == (1, want), notation
            checked["lost"] += 1
        else:
            assert want == DRAW, notation
            checked["drawn"] += 1
    assert checked == {"won": 21959, "lost": 25260, "drawn": 2796}
    # the KvK tier: the positions after the rook is taken, white to move, drawn
    kvk = [r for r in rows if "R" not in r.notation]
    assert kvk and all(squares_kvk(r.notation)[2] == 0 for r in kvk)
    assert all(low == high == 0 for _, low, high, *_ in kvk)
