"""Chess endgames: keys, notation, symmetry, errors, and solved tables checked against
python-chess (mates replayed move by move, every defence tried) and against the
published longest mates (KQvK: mate in 10 = 19 plies, KRvK: mate in 16 = 31 plies).
"""

from __future__ import annotations

import doctest
import itertools
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import chess
import numpy as np
import pytest

from solver.errors import InvalidParameterError, InvalidPositionError, NegagraphError
from solver.games import chess_endgame, get_game
from solver.games.chess_endgame import ChessGame, IllegalMoveError, material_of
from solver.games.chess_material import material_of_tier
from solver.graph import EXPANDED, STATE_NAMES, TERMINAL
from solver.negamax import solve
from solver.store import MemoryStore
from solver.strategy import Child, choose, principal_line
from solver.values import DEPTH_INF, NEG_INF, POS_INF, clamp

Transform = Callable[[int], int]


def chess_game(material: str = "KRvK", symmetry: bool = True) -> ChessGame:
    game = get_game("chess", material=material, symmetry=symmetry)
    assert isinstance(game, ChessGame)
    return game


def spaced(text: str) -> str:
    return text.replace("_", " ")


def key_after(game: ChessGame, board: chess.Board) -> int:
    """The key of *board* as python-chess sees it, through the FEN."""
    return game.parse(board.fen())


# -- the eight board symmetries, from python-chess's own bitboard transforms -------------


def _symmetries() -> list[Transform]:
    base: list[Transform] = [chess.flip_vertical, chess.flip_horizontal, chess.flip_diagonal]
    found: dict[tuple[int, int], Transform] = {}
    probe = (chess.BB_A1 | chess.BB_B1 | chess.BB_B3, chess.BB_C2)

    def ident(bb: int) -> int:
        return bb

    found[probe] = ident
    for n in range(1, 4):
        for combo in itertools.product(base, repeat=n):

            def f(bb: int, combo: tuple[Transform, ...] = combo) -> int:
                for g in combo:
                    bb = g(bb)
                return bb

            found.setdefault((f(probe[0]), f(probe[1])), f)
    assert len(found) == 8
    return list(found.values())


SYMMETRIES = _symmetries()
MIRROR_FILES: Transform = chess.flip_horizontal


def images(board: chess.Board) -> list[chess.Board]:
    """*board* under the symmetries the rules keep (all 8 without pawns or castling
    rights, the file mirror with pawns, none with castling rights)."""
    if board.castling_rights:
        return [board]
    transforms = [SYMMETRIES[0], MIRROR_FILES] if board.pawns else SYMMETRIES
    return [board.transform(f) for f in transforms]


def square_map(f: Transform) -> list[int]:
    return [chess.msb(f(chess.BB_SQUARES[sq])) for sq in range(64)]


# -- keys, notation, parameters -------------------------------------------------------------


def test_module_doctests() -> None:
    result = doctest.testmod(chess_endgame)
    assert result.attempted >= 5 and result.failed == 0


FENS = [
    "8/8/8/4k3/8/8/8/R3K3 w - -",
    "8/8/8/4k3/8/8/8/R3K3 b - -",
    "r3k3/8/8/8/8/8/8/4K2R w Kq -",
    "4k3/8/8/8/1p6/8/P7/4K3 w - -",
    "4k3/8/8/8/Pp6/8/8/4K3 b - a3",  # en passant is legal
    "7k/1P6/8/8/8/8/8/K7 w - -",
    "8/8/8/8/8/8/2k5/K7 w - -",
]


@pytest.mark.parametrize("fen", FENS)
def test_notation_round_trip(fen: str) -> None:
    game = chess_game("KQRBNPvKQRBNP", symmetry=False)
    key = game.parse(fen)
    text = game.format(key)
    assert " " not in text
    assert spaced(text) == chess.Board(fen).epd()
    assert game.parse(text) == key
    # move counters are read and ignored; spaces and underscores both work
    assert game.parse(fen + " 37 80") == key
    assert game.parse("  " + text.replace("_", "  ") + " 0 1 ") == key
    assert game.player_to_move(key) == (0 if " w " in fen else 1)
    assert game.board(key).epd() == chess.Board(fen).epd()


def test_key_layout() -> None:
    game = chess_game("KRvK", symmetry=False)
    key = game.parse("8/8/8/4k3/8/8/8/R3K3 w - -")
    assert key.bit_length() <= 9 + 3 * 10
    groups = [(key >> (9 + 10 * i)) & 1023 for i in range(3)]
    assert groups == sorted(groups)
    # black king (code 6) on e5, white rook (code 10) on a1, white king (code 12) on e1
    assert groups == [(6 << 6) | chess.E5, (10 << 6) | chess.A1, (12 << 6) | chess.E1]
    assert key & 511 == 0
    assert game.parse("8/8/8/4k3/8/8/8/R3K3 b - -") == key | 1
    # castling rights and en passant live in the low bits
    castle = chess_game("KRvKR", symmetry=False).parse("r3k3/8/8/8/8/8/8/4K2R w Kq -")
    assert (castle >> 1) & 0b1111 == 0b0110  # h1 and a8 rooks
    ep = chess_game("KPvKP", symmetry=False).parse("4k3/8/8/8/Pp6/8/8/4K3 b - a3")
    assert (ep >> 5) & 0b1111 == 1  # file a, plus one
    # an en-passant square without a legal capture is dropped, as python-chess does
    no_ep = chess_game("KPvK", symmetry=False).parse("4k3/8/8/8/P7/8/8/4K3 b - a3")
    assert (no_ep >> 5) & 0b1111 == 0


def test_material_of() -> None:
    assert material_of("8/8/8/4k3/8/8/8/R3K3 w - - 0 1") == "KRvK"
    assert material_of("8/8/8/4k3/8/8/8/R3K3_w_-_-") == "KRvK"
    assert material_of(chess.Board("4k3/8/8/8/8/8/8/1N2KB2 w - -")) == "KBNvK"
    assert material_of(chess.BaseBoard("4k3/pp6/8/8/8/8/8/4K3")) == "KvKPP"
    with pytest.raises(InvalidPositionError, match="malformed FEN"):
        material_of("8/8/8 w - -")


def test_material_parameter() -> None:
    assert chess_game().params == {"material": "KRvK", "symmetry": True}
    assert chess_game("KNBvK").params["material"] == "KBNvK"
    assert chess_game("krvk").material == "KRvK"
    assert chess_game(" KQvKR ").material == "KQvKR"
    assert repr(chess_game("KNBvK")) == "get_game('chess', material='KBNvK', symmetry=True)"


@pytest.mark.parametrize(
    ("material", "message"),
    [
        ("KR", "must look like KRvK"),
        ("", "must look like KRvK"),
        ("KRvKvK", "must look like KRvK"),
        ("RvK", "white needs exactly one king (K), not 0"),
        ("KvKK", "black needs exactly one king (K), not 2"),
        ("KXvK", "unknown piece letter 'X'"),
        ("K1vK", "must look like KRvK"),
        ("KPPPPPPPPPvK", "white has more than 8 pawns"),
        ("KQQQQQQQQQQQQQQQQvK", "white has more than 16 pieces"),
    ],
)
def test_bad_material(material: str, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=re.escape(message)) as info:
        get_game("chess", material=material)
    assert isinstance(info.value, ValueError) and isinstance(info.value, NegagraphError)


@pytest.mark.parametrize(
    ("fen", "message"),
    [
        ("", "empty position"),
        ("8/8/8/4k3/8/8/8/R3K3", "expected piece placement, side to move"),
        ("8/8/8/4k3/8/8/8/R3K3 w - - 0 1 2", "got 7 fields"),
        ("8/8/8/4k3/8/8/8/R3K3 w - - x 1", "the half-move clock must be a number"),
        ("8/8/8/4k3/8/8/8/R3K3 w - - 0 y", "the move number must be a number"),
        ("8/8/8/4k3/8/8/8/R3K4 w - -", "malformed FEN .*expected 8 columns"),
        ("8/8/8/4k3/8/8/8/R3K3 x - -", "malformed FEN .*expected 'w' or 'b'"),
        ("8/8/8/4k3/8/8/8/R3K3 w - e9", "malformed FEN .*en passant"),
        ("R3k3/8/8/8/8/8/8/4K3 w - -", "illegal position .*black is in check but white is to move"),
        ("8/8/8/8/8/8/3k4/R3K3 w - -", "illegal position .*the kings are adjacent"),
        ("8/8/8/8/8/8/8/R3K3 w - -", "illegal position .*black has no king"),
        ("8/8/8/4k3/8/8/8/R3KK2 w - -", "illegal position .*more than two kings"),
        ("P7/8/8/4k3/8/8/8/4K3 w - -", "illegal position .*pawn is on the first or last rank"),
        ("8/8/8/4k3/8/8/8/R3K3 w K -", "illegal position .*castling rights"),
        ("8/8/8/4k3/8/8/8/R3K3 w - e3", "illegal position .*en-passant square"),
        (
            "8/8/8/4k3/8/8/8/1Q2K3 w - -",
            "^FEN has material KQvK, this variant is KRvK: use -p material=KQvK$",
        ),
        (
            "8/8/8/4k3/8/8/8/RR2K3 w - -",
            "^FEN has material KRRvK, this variant is KRvK: use -p material=KRRvK$",
        ),
    ],
)
def test_bad_fens(fen: str, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message) as info:
        chess_game("KRvK").parse(fen)
    assert "\n" not in str(info.value) and isinstance(info.value, ValueError)


def test_reachable_material() -> None:
    game = chess_game("KPvK")
    for fen in [
        "8/8/8/4k3/8/8/8/1Q2K3 w - -",  # promotion
        "8/8/8/4k3/8/8/8/R3K3 w - -",
        "8/8/8/4k3/8/8/8/N3K3 w - -",
        "8/8/8/4k3/8/8/8/4K3 w - -",  # capture
    ]:
        game.parse(fen)
    with pytest.raises(
        InvalidPositionError,
        match="FEN has material KQQvK, this variant is KPvK: use -p material=KQQvK",
    ):
        game.parse("8/8/8/4k3/8/8/8/1Q1QK3 w - -")
    with pytest.raises(InvalidPositionError, match="use -p material=KPvKP"):
        game.parse("8/p7/8/4k3/8/8/P7/4K3 w - -")
    assert chess_game("KPPvK").reaches("KQQvK")
    assert not chess_game("KPPvK").reaches("KQQPvK")
    assert chess_game("KRvKP").reaches("KvKQ")


@pytest.mark.parametrize(
    "material", ["KRvK", "KQvK", "KPvK", "KBNvK", "KRvKR", "KQvKR", "KPvKP", "KvK", "KNNvK"]
)
def test_initial(material: str) -> None:
    game = chess_game(material)
    key = game.initial()
    board = chess.Board(spaced(game.format(key)))
    assert board.is_valid() and board.turn == chess.WHITE
    assert material_of(board) == game.material
    assert game.parse(game.format(key)) == key


def test_initial_krvk() -> None:
    game = chess_game("KRvK")
    assert game.format(game.initial()) == "8/8/8/4k3/8/8/8/R3K3_w_-_-"


def test_san() -> None:
    game = chess_game("KQvK")
    key = game.parse("k7/8/1K6/8/8/8/8/6Q1 w - -")
    assert game.san(key, "g1g8") == "Qg8#"
    assert game.san(key, "b6c7") == "Kc7"
    with pytest.raises(IllegalMoveError, match="not a legal move"):
        game.san(key, "g1a7")
    with pytest.raises(IllegalMoveError, match="not a UCI move"):
        game.san(key, "Qg8")


# -- moves ----------------------------------------------------------------------------------


def random_board(material: str, rng: random.Random) -> chess.Board:
    """A random legal position of *material* (pawns on ranks 2-7, either side to move)."""
    white, black = material.split("v")
    while True:
        squares = rng.sample(range(64), len(white) + len(black))
        board = chess.Board(None)
        for letter, color in [(c, chess.WHITE) for c in white] + [(c, chess.BLACK) for c in black]:
            sq = squares.pop()
            if letter == "P" and not 8 <= sq < 56:
                break
            board.set_piece_at(sq, chess.Piece.from_symbol(letter if color else letter.lower()))
        else:
            board.turn = rng.random() < 0.5
            if board.is_valid():
                return board


def random_positions(game: ChessGame, count: int, seed: int) -> Iterator[int]:
    """Positions met on short random walks from random positions of the game's material
    (so captures, promotions, double pushes and en passant come up)."""
    rng = random.Random(seed)
    for _ in range(count):
        key = key_after(game, random_board(game.material, rng))
        for _ in range(rng.randrange(6)):
            kids = game.children(key)
            if not kids:
                break
            key = rng.choice(kids)[1]
        yield key


@pytest.mark.parametrize("material", ["KQvKR", "KRBvKN", "KPPvKR", "KRPvKQ"])
def test_batched_tiers_equal_the_per_position_ones(material: str) -> None:
    """The materials of positions and of their children (captures, promotions)."""
    game = chess_game(material)
    keys = [
        game.canonical(child)
        for key in random_positions(game, 200, seed=7)
        for _, child in [("", key), *game.children(key)]
    ]
    tiers = game.tiers_batch(np.array(keys, dtype=np.int64))
    assert tiers is not None and tiers.dtype == np.int64
    assert tiers.tolist() == [game.tier(k) for k in keys]
    assert len({material_of_tier(t) for t in tiers.tolist()}) > 3  # captures, promotions
    assert game.tiers_batch(np.zeros(0, dtype=np.int64)).tolist() == []  # type: ignore[union-attr]


@pytest.mark.parametrize("material", ["KPvKP", "KQvKR", "KRBvKN", "KPPvKR"])
def test_children_agree_with_python_chess(material: str) -> None:
    game = chess_game(material, symmetry=False)
    seen = 0
    for key in random_positions(game, 300, seed=len(material)):
        board = chess.Board(spaced(game.format(key)))
        expected = []
        if not board.is_insufficient_material():
            for move in board.legal_moves:
                board.push(move)
                expected.append((move.uci(), key_after(game, board)))
                board.pop()
        assert game.children(key) == expected, game.format(key)
        value = game.terminal_value(key)
        if board.is_checkmate():
            assert value == -1
        elif board.is_stalemate() or board.is_insufficient_material():
            assert value == 0
        else:
            assert value is None
        seen += len(expected)
    assert seen > 1000


SPECIAL_FENS = [
    "r3k3/1P6/8/8/8/8/8/4K3 w - -",  # promotions, with and without capture
    "4k3/8/8/8/8/8/1p6/R3K3 b Q -",  # black promotes, capturing the a1 rook
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq -",  # castling both ways
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq -",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6",  # en passant
    "4k3/8/8/8/3Pp3/8/8/4K3 b - d3",
    "8/8/8/8/k2Pp2R/8/8/4K3 b - d3",  # en passant would expose the king: illegal
    "4k3/8/8/8/8/8/3p4/4K3 w - -",  # evasions
    "4k3/2P5/8/8/8/8/8/4K3 w - -",
]


@pytest.mark.parametrize("fen", SPECIAL_FENS)
def test_special_moves_agree_with_python_chess(fen: str) -> None:
    game = chess_game("KQRRBBNNPPPPPPPPvKQRRBBNNPPPPPPPP", symmetry=False)
    board = chess.Board(fen)
    key = game.parse(fen)
    assert spaced(game.format(key)) == board.epd()
    expected = []
    for move in board.legal_moves:
        board.push(move)
        expected.append((move.uci(), key_after(game, board)))
        board.pop()
    assert game.children(key) == expected
    assert len(expected) > 0


def test_castling_and_en_passant() -> None:
    game = chess_game("KRvKR")
    key = game.parse("r3k3/8/8/8/8/8/8/4K2R w Kq -")
    assert game.canonical(key) == key  # castling rights: no symmetry
    kids = dict(game.children(key))
    assert game.format(kids["e1g1"]) == "r3k3/8/8/8/8/8/8/5RK1_b_q_-"
    assert game.format(kids["h1h8"]) == "r3k2R/8/8/8/8/8/8/4K3_b_q_-"
    assert game.format(kids["e1e2"]) == "r3k3/8/8/8/8/8/4K3/7R_b_q_-"

    pawns = chess_game("KPvKP")
    key = pawns.parse("4k3/8/8/8/1p6/8/P7/4K3 w - -")
    child = dict(pawns.children(key))["a2a4"]
    assert pawns.format(child) == "4k3/8/8/8/Pp6/8/8/4K3_b_-_a3"
    assert "b4a3" in dict(pawns.children(child))
    # no black pawn next to the pushed one: no en-passant square
    key = pawns.parse("4k3/8/8/8/2p5/8/P7/4K3 w - -")
    assert pawns.format(dict(pawns.children(key))["a2a4"]) == "4k3/8/8/8/P1p5/8/8/4K3_b_-_-"


def test_terminal_positions() -> None:
    game = chess_game("KRvK")
    mate = game.parse("R3k3/8/4K3/8/8/8/8/8 b - -")
    assert game.terminal_value(mate) == -1 and game.children(mate) == []
    assert chess.Board("k7/1R6/1K6/8/8/8/8/8 b - -").is_stalemate()
    stalemate = game.parse("k7/1R6/1K6/8/8/8/8/8 b - -")
    assert game.terminal_value(stalemate) == 0 and game.children(stalemate) == []
    bare = game.parse("k7/8/2K5/8/8/8/8/8 w - -")
    assert game.terminal_value(bare) == 0 and game.children(bare) == []
    assert chess_game("KBvK").terminal_value(chess_game("KBvK").initial()) == 0
    assert game.terminal_value(game.initial()) is None


# -- symmetry and tablebase seeds ---------------------------------------------------------


@pytest.mark.parametrize("material", ["KQvK", "KPvKP", "KRvKB", "KBNvK"])
def test_canonical_is_the_smallest_image(material: str) -> None:
    game = chess_game(material)
    plain = chess_game(material, symmetry=False)
    for key in random_positions(plain, 150, seed=7):
        board = chess.Board(spaced(plain.format(key)))
        smallest = min(key_after(plain, image) for image in images(board))
        rep = game.canonical(key)
        assert rep == smallest, plain.format(key)
        assert game.canonical(rep) == rep
        assert game.terminal_value(rep) == game.terminal_value(key)


def test_canonical_special_cases() -> None:
    game = chess_game("KPvKP")
    # en passant: the mirror moves the en-passant file with the pawns
    key = game.parse("4k3/8/8/8/6pP/8/8/4K3 b - h3")
    rep = game.canonical(key)
    assert game.format(rep) == "3k4/8/8/8/Pp6/8/8/3K4_b_-_a3"
    # castling rights: no symmetry at all
    rook = chess_game("KRvK")
    key = rook.parse("4k3/8/8/8/8/8/8/4K2R w K -")
    assert rook.canonical(key) == key
    # without symmetry nothing changes
    plain = chess_game("KRvK", symmetry=False)
    key = plain.parse("4k3/8/8/8/8/8/8/4K2R w - -")
    assert plain.canonical(key) == key and not plain.uses_symmetry


def test_tablebase_kvk_has_462_king_pairs() -> None:
    plain = list(chess_game("KvK", symmetry=False).tablebase_positions())
    assert len(plain) == 2 * 3612  # 64*63 placements minus 420 with adjacent kings
    game = chess_game("KvK")
    reps = list(game.tablebase_positions())
    assert len(reps) == 2 * 462
    assert set(reps) == {game.canonical(k) for k in plain}


def test_tablebase_positions() -> None:
    game = chess_game("KRvK")
    keys = list(game.tablebase_positions())
    assert keys == list(game.tablebase_positions())  # deterministic
    assert len(keys) == len(set(keys)) == 50015
    for key in keys[::97]:
        board = chess.Board(spaced(game.format(key)))
        assert board.is_valid() and material_of(board) == "KRvK"
        assert not board.castling_rights and board.ep_square is None
        assert game.canonical(key) == key
        assert chess.square_file(board.king(chess.WHITE) or 0) <= 3
    assert sum(game.player_to_move(k) for k in keys) == 28056  # black to move
    pawns = chess_game("KPvK")
    for key in itertools.islice(pawns.tablebase_positions(), 0, 20000, 199):
        board = chess.Board(spaced(pawns.format(key)))
        assert board.is_valid() and material_of(board) == "KPvK"
        assert chess.square_file(board.king(chess.WHITE) or 0) <= 3


# -- solved tables --------------------------------------------------------------------------


class Table:
    """A fully solved in-memory table, with the strategy helpers the tests need."""

    def __init__(self, material: str) -> None:
        self.game = chess_game(material)
        store = MemoryStore()
        self.result = solve(self.game, full=True, store=store)
        (self.graph,) = store.graphs.values()

    def node(self, board: chess.Board) -> int:
        nid = self.graph.get(self.game.canonical(key_after(self.game, board)))
        assert nid is not None
        return nid

    def children(self, nid: int) -> list[Child[int]]:
        g = self.graph
        out = []
        for order, e in enumerate(g.children(nid)):
            c = g.edge_child[e]
            out.append(
                Child(
                    order,
                    g.edge_move[e],
                    c,
                    g.low[c],
                    g.high[c],
                    g.depth_low[c],
                    g.depth_high[c],
                    g.state[c] == TERMINAL,
                    g.state[c] == EXPANDED,
                )
            )
        return out

    def bounds(self, nid: int) -> tuple[int, int]:
        return self.graph.low[nid], self.graph.high[nid]

    def state(self, nid: int) -> str:
        return STATE_NAMES[self.graph.state[nid]]

    def to_real(self, board: chess.Board, nid: int, label: str) -> chess.Move:
        """The move on *board* that is *label* on the stored (canonical) node *nid*."""
        target = self.graph.keys[nid]
        for f in SYMMETRIES:
            try:
                image = key_after(self.game, board.transform(f))
            except InvalidPositionError:  # pawns on a back rank
                continue
            if image == target:
                inverse = {image: sq for sq, image in enumerate(square_map(f))}
                move = chess.Move.from_uci(label)
                return chess.Move(
                    inverse[move.from_square], inverse[move.to_square], move.promotion
                )
        raise AssertionError(f"{board.fen()} is not a symmetric image of node {nid}")

    def low_move(self, board: chess.Board) -> chess.Move:
        """The low strategy's move (DESIGN §4) on *board*."""
        nid = self.node(board)
        pick = choose(self.children(nid), "low", self.graph.low[nid])
        assert pick is not None
        move = self.to_real(board, nid, pick.move)
        assert move in board.legal_moves
        return move


@pytest.fixture(scope="module")
def kqvk() -> Table:
    return Table("KQvK")


@pytest.fixture(scope="module")
def krvk() -> Table:
    return Table("KRvK")


def summary(table: Table) -> dict[tuple[int, str], tuple[int, int]]:
    """Per (side to move, result): positions of the starting material, longest depth."""
    g, game = table.graph, table.game
    out: dict[tuple[int, str], tuple[int, int]] = {}
    for n in range(g.num_nodes):
        key = g.keys[n]
        if material_of(game.format(key)) != game.material:
            continue
        value = clamp(0, g.low[n], g.high[n])
        result = "won" if value > 0 else "lost" if value < 0 else "drawn"
        depth = g.depth_low[n] if value > 0 else g.depth_high[n] if value < 0 else 0
        side = game.player_to_move(key)
        count, longest = out.get((side, result), (0, 0))
        out[(side, result)] = (count + 1, max(longest, depth))
    return out


def longest(table: Table, side: int) -> list[str]:
    """The positions with the longest mate (side 0: won, white to move) or the longest
    resistance (side 1: lost, black to move)."""
    g, game = table.graph, table.game
    if side == 0:
        depth = {n: g.depth_low[n] for n in range(g.num_nodes) if g.low[n] > 0}
    else:
        depth = {n: g.depth_high[n] for n in range(g.num_nodes) if g.high[n] < 0}
    top = max(depth.values())
    return sorted(game.format(g.keys[n]) for n, d in depth.items() if d == top)


def test_published_longest_mates(kqvk: Table, krvk: Table) -> None:
    assert kqvk.result.complete and krvk.result.complete
    q = summary(kqvk)
    assert q[(0, "won")][1] == 19  # mate in 10, white to move
    assert q[(1, "lost")][1] == 20  # black to move resists 20 plies
    assert q == {(0, "won"): (18081, 19), (1, "lost"): (25160, 20), (1, "drawn"): (2896, 0)}
    r = summary(krvk)
    assert r[(0, "won")] == (21959, 31)  # every white-to-move KRvK position, mate in 16
    assert r[(1, "lost")] == (25260, 32)
    assert r[(1, "drawn")][0] == 2796  # black takes the rook, or is stalemated
    assert set(r) == {(0, "won"), (1, "lost"), (1, "drawn")}
    # Karrer's statistics: KQvK has one mate in 10 with white to move (Ka1 Qb2 kf5) and
    # eight losses in 10 with black to move; KRvK 121 and 390 positions
    assert longest(kqvk, 0) == ["8/8/8/5k2/8/8/1Q6/K7_w_-_-"]
    assert len(longest(kqvk, 1)) == 8
    assert len(longest(krvk, 0)) == 121
    assert len(longest(krvk, 1)) == 390


def test_mate_in_one(kqvk: Table) -> None:
    g, game = kqvk.graph, kqvk.game
    board = chess.Board("k7/8/1K6/8/8/8/8/6Q1 w - - 0 1")
    nid = kqvk.node(board)
    # the mover forces 1 within 1 ply; high is +inf because white could also refuse to
    # end the game (DESIGN §1): the value under the repetition rule (a draw) is 1
    assert g.low[nid] == 1 and g.high[nid] == POS_INF
    assert clamp(0, g.low[nid], g.high[nid]) == 1 and game.repetition_value == 0
    assert g.depth_low[nid] == 1 and g.depth_high[nid] == DEPTH_INF
    assert g.low_final[nid] and g.high_final[nid]
    move = kqvk.low_move(board)
    assert board.san(move) == "Qg8#"
    pick = choose(kqvk.children(nid), "low", g.low[nid])
    assert pick is not None and game.san(g.keys[nid], pick.move).endswith("#")
    # the mated position and a stalemate are terminal
    board.push(move)
    mated = kqvk.node(board)
    assert g.state[mated] == TERMINAL and g.low[mated] == g.high[mated] == -1
    stalemate = chess.Board("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1")
    assert stalemate.is_stalemate()
    s = kqvk.node(stalemate)
    assert g.state[s] == TERMINAL and g.low[s] == g.high[s] == 0


def test_table_is_consistent_with_its_moves(kqvk: Table) -> None:
    """A retrograde check: every node's bounds and depths follow from its children."""
    g, game = kqvk.graph, kqvk.game
    low, high, dlow, dhigh = g.low, g.high, g.depth_low, g.depth_high
    rng = random.Random(3)
    for n in range(g.num_nodes):
        assert g.low_final[n] and g.high_final[n]
        if g.state[n] == TERMINAL:
            v = game.terminal_value(g.keys[n])
            assert v is not None and low[n] == high[n] == v and dlow[n] == dhigh[n] == 0
            continue
        assert g.state[n] == EXPANDED
        kids = g.child_ids(n)
        assert low[n] == max(-high[c] for c in kids)
        assert high[n] == max(-low[c] for c in kids)
        if low[n] > NEG_INF:
            assert dlow[n] == 1 + min(dhigh[c] for c in kids if -high[c] == low[n])
        else:
            assert dlow[n] == DEPTH_INF
        if high[n] < POS_INF:
            assert dhigh[n] == 1 + max(dlow[c] for c in kids)
        else:
            assert dhigh[n] == DEPTH_INF
        if rng.random() < 0.02:  # the stored edges are the game's moves
            moves = [(m, game.canonical(c)) for m, c in game.children(g.keys[n])]
            assert moves == [(g.edge_move[e], g.keys[g.edge_child[e]]) for e in g.children(n)]


def won_positions(table: Table, count: int, seed: int) -> list[int]:
    """The won positions with the longest mates, plus a random sample."""
    g = table.graph
    won = [n for n in range(g.num_nodes) if g.state[n] == EXPANDED and g.low[n] > 0]
    won.sort(key=lambda n: (-g.depth_low[n], n))
    rng = random.Random(seed)
    return won[:5] + rng.sample(won, count)


def replay(table: Table, start: int, moves: list[str]) -> chess.Board:
    """Play a line of stored move labels on one python-chess board from node *start*."""
    g = table.graph
    board = chess.Board(spaced(table.game.format(g.keys[start])))
    for label in moves:
        move = table.to_real(board, table.node(board), label)
        assert move in board.legal_moves
        board.push(move)
    return board


def test_principal_lines_mate(kqvk: Table, krvk: Table) -> None:
    for table in (kqvk, krvk):
        g = table.graph
        for start in won_positions(table, 40, seed=1):
            line = principal_line(
                start, "low", bounds=table.bounds, state=table.state, children=table.children
            )
            assert line.end == "terminal"
            assert len(line.steps) == g.depth_low[start]
            board = replay(table, start, [step.move for step in line.steps])
            assert board.is_checkmate()
            assert board.turn != chess.Board(spaced(table.game.format(g.keys[start]))).turn


def play_out(
    table: Table, board: chess.Board, defend: Callable[[chess.Board], chess.Move], limit: int
) -> int:
    """The low strategy against *defend*; the plies until mate (at most *limit*)."""
    winner = board.turn
    for ply in range(limit + 1):
        if board.is_checkmate():
            assert board.turn != winner
            return ply
        assert not board.is_game_over(), board.fen()
        assert ply < limit, f"no mate within {limit} plies"
        board.push(table.low_move(board) if board.turn == winner else defend(board))
    raise AssertionError("unreachable")


def test_low_strategy_mates_against_every_defence(kqvk: Table, krvk: Table) -> None:
    rng = random.Random(5)

    def random_defence(board: chess.Board) -> chess.Move:
        return rng.choice(list(board.legal_moves))

    for table in (kqvk, krvk):
        g = table.graph
        for start in won_positions(table, 20, seed=2):
            fen = spaced(table.game.format(g.keys[start]))
            for _ in range(8):
                assert (
                    play_out(table, chess.Board(fen), random_defence, g.depth_low[start])
                    <= g.depth_low[start]
                )

    # short mates: every defence, exhaustively
    def all_defences(table: Table, board: chess.Board, limit: int) -> int:
        """The longest mate the low strategy needs against any defence."""
        if board.is_checkmate():
            return 0
        assert limit > 0, board.fen()
        board.push(table.low_move(board))
        try:
            if board.is_checkmate():
                return 1
            worst = 0
            for reply in list(board.legal_moves):
                board.push(reply)
                worst = max(worst, 2 + all_defences(table, board, limit - 2))
                board.pop()
            return worst
        finally:
            board.pop()

    for table in (kqvk, krvk):
        g = table.graph
        short = [
            n
            for n in range(g.num_nodes)
            if g.state[n] == EXPANDED and g.low[n] > 0 and g.depth_low[n] <= 7
        ]
        for start in random.Random(4).sample(short, 40):
            board = chess.Board(spaced(table.game.format(g.keys[start])))
            assert all_defences(table, board, g.depth_low[start]) == g.depth_low[start]


def test_longest_krvk_mate_needs_31_plies(krvk: Table) -> None:
    g = krvk.graph
    start = won_positions(krvk, 0, seed=0)[0]
    assert g.depth_low[start] == 31
    rng = random.Random(11)
    lengths = {
        play_out(
            krvk,
            chess.Board(spaced(krvk.game.format(g.keys[start]))),
            lambda b: rng.choice(list(b.legal_moves)),
            31,
        )
        for _ in range(5)
    }
    assert max(lengths) <= 31


# -- partial solves -------------------------------------------------------------------------


def test_partial_solve_expands_a_small_part_of_the_table(kqvk: Table) -> None:
    """A partial solve from a won position proves low = 1 (final at once: 1 is the top of
    the value range) and high = +inf (white can avoid ending the game forever) expanding
    a small part of the table (832 of 45,982 positions when measured)."""
    game = chess_game("KQvK")
    r = solve(game, "k7/8/1K6/8/8/8/8/6Q1 w - -", batch_size=2000)
    assert r.complete and r.low == 1 and r.high is None and r.depth_low == 1
    assert r.repetition_value == 1
    full = kqvk.result.expansions
    assert r.expansions <= 0.05 * full


def test_until_value_proves_the_win_with_one_expansion() -> None:
    """With the game's value range (-1..1) a low bound of 1 is final at once, and
    ``until="value"`` stops as soon as the value under the draw rule is decided."""
    game = chess_game("KQvK")
    r = solve(game, "k7/8/1K6/8/8/8/8/6Q1 w - -", until="value")
    assert r.complete and r.low == 1 and r.low_final and r.repetition_value == 1
    assert r.expansions == 1 and r.depth_low == 1


def test_budgeted_solve_finds_the_mate_early() -> None:
    """What a small budget does give: the mate in one as the root's low bound (final, as
    1 is the top of the value range), with the mating move as the low strategy's choice."""
    game = chess_game("KQvK")
    store = MemoryStore()
    r = solve(game, "k7/8/1K6/8/8/8/8/6Q1 w - -", max_expansions=1, store=store)
    assert r.status == "budget" and r.low == 1 and r.depth_low == 1 and r.low_final
    (g,) = store.graphs.values()
    kids: list[Child[Any]] = []
    for order, e in enumerate(g.children(0)):
        c = g.edge_child[e]
        kids.append(
            Child(
                order,
                g.edge_move[e],
                c,
                g.low[c],
                g.high[c],
                g.depth_low[c],
                g.depth_high[c],
                g.state[c] == TERMINAL,
                g.state[c] == EXPANDED,
            )
        )
    pick = choose(kids, "low", int(r.low))
    # the root is stored as its canonical image (rotated): Qg8# becomes Qa7#
    assert r.root_text == "8/7Q/8/8/8/8/2K5/k7_w_-_-"
    assert pick is not None and game.san(r.root, pick.move) == "Qa7#"
