"""Chess over HTTP: the line endpoint's mating lines, replayed with python-chess, end in
checkmate within the reported depth — against the line's own defence and against every
other defence tried from each of its positions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import pytest
from flask.testing import FlaskClient

from api import create_app
from db.migrate import ensure_schema
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve

WON = ["8/8/8/3k4/8/8/8/K1Q5 w - -", "k7/8/1K6/8/8/8/8/6Q1 w - -", "8/8/2k5/8/8/4Q3/8/4K3 w - -"]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    url = f"sqlite:///{tmp_path_factory.mktemp('chess') / 'kqvk.db'}"
    engine = make_engine(url)
    try:
        ensure_schema(engine)
        solve(get_game("chess", material="KQvK"), full=True, store=SqlStore(engine))
    finally:
        engine.dispose()
    app = create_app({"TESTING": True, "DATABASE_URL": url})
    with app.test_client() as c:
        yield c


def line(client: FlaskClient, fen: str, bound: str) -> dict[str, Any]:
    r = client.get("/api/games/chess/line", query_string={"p": fen, "bound": bound})
    assert r.status_code == 200, r.get_json()
    data: dict[str, Any] = r.get_json()
    return data


def fen_of(notation: str) -> str:
    return notation.replace("_", " ")


def mates_within(client: FlaskClient, board: chess.Board, plies: int) -> None:
    """White (to move) follows the line endpoint's low line from *board*; after each of
    its moves every black reply is tried for one ply, then the line is asked again."""
    assert plies >= 0
    if board.is_checkmate():
        assert board.turn == chess.BLACK, "white got mated"
        return
    assert plies > 0, f"no mate within the reported depth at {board.fen()}"
    data = line(client, board.fen(), "low")
    assert data["start"]["low"] == 1 and data["start"]["depth_low"] <= plies
    move = chess.Move.from_uci(data["steps"][0]["move"])
    assert move in board.legal_moves
    board.push(move)
    if board.is_checkmate():
        board.pop()
        return
    for reply in list(board.legal_moves)[:3]:  # a few defences at every white move
        board.push(reply)
        mates_within(client, board, data["start"]["depth_low"] - 2)
        board.pop()
    board.pop()


@pytest.mark.parametrize("fen", WON)
def test_low_line_replayed_with_python_chess_ends_in_mate(client: FlaskClient, fen: str) -> None:
    data = line(client, fen, "low")
    depth = data["start"]["depth_low"]
    assert data["start"]["repetition_value"] == 1 and data["end"] == "terminal"
    board = chess.Board(fen)
    for step in data["steps"]:
        board.push(chess.Move.from_uci(step["move"]))
    assert board.is_checkmate() and board.turn == chess.BLACK
    assert len(data["steps"]) <= depth


@pytest.mark.parametrize("fen", WON[1:])
def test_the_low_strategy_mates_against_every_defence_tried(client: FlaskClient, fen: str) -> None:
    board = chess.Board(fen)
    mates_within(client, board, line(client, fen, "low")["start"]["depth_low"])


def test_wrong_material_is_a_404_naming_the_table(client: FlaskClient) -> None:
    r = client.get("/api/games/chess/positions", query_string={"p": "8/8/8/3k4/8/8/8/K6R w - -"})
    assert r.status_code == 404
    assert "negagraph solve chess -p material=KRvK" in r.get_json()["error"]["message"]


def test_illegal_fen_is_a_400(client: FlaskClient, tmp_path: Path) -> None:
    r = client.get("/api/games/chess/positions", query_string={"p": "R3k3/8/8/8/8/8/8/4K3 w - -"})
    assert r.status_code == 400
    assert "check" in r.get_json()["error"]["message"]


LOST = ["8/8/8/3k4/8/8/8/K1Q5 b - -", "8/8/2k5/8/8/4Q3/8/4K3 b - -"]


@pytest.mark.parametrize("fen", LOST)
def test_the_default_line_from_a_lost_position_resists_longest_and_ends_in_mate(
    client: FlaskClient, fen: str
) -> None:
    """The value line: the loser resists longest (the line is exactly his depth_high
    plies long), the winner mates fastest; replayed with python-chess it ends in mate.
    (The loser's ``low`` bound is -inf — he could hope only for endless play to be worth
    it — so the ``low`` line is no mating line.)"""
    data = client.get("/api/games/chess/line", query_string={"p": fen}).get_json()
    start = data["start"]
    assert (data["bound"], start["low"], start["high"]) == ("value", None, -1)
    assert start["repetition_value"] == -1
    assert data["end"] == "terminal"
    assert len(data["steps"]) == start["depth_high"]
    assert [s["bound"] for s in data["steps"]][:2] == ["high", "low"]
    board = chess.Board(fen)
    for step in data["steps"]:
        board.push(chess.Move.from_uci(step["move"]))
    assert board.is_checkmate() and board.turn == chess.BLACK


@pytest.mark.parametrize("fen", WON)
def test_the_default_line_from_a_won_position_is_the_low_line(
    client: FlaskClient, fen: str
) -> None:
    default = client.get("/api/games/chess/line", query_string={"p": fen}).get_json()
    low = line(client, fen, "low")
    assert [s["move"] for s in default["steps"]] == [s["move"] for s in low["steps"]]
    assert len(default["steps"]) == default["start"]["depth_low"]
