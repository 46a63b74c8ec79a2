"""The explorer: a small browser app at ``/`` and ``/explore/...`` over the JSON API.

The page (``api/static/explorer/index.html``) and its plain script talk to ``/api`` only;
this blueprint serves them, the vendored cytoscape.js, and one drawing endpoint:
``/explore/board/<game>?p=...&<params>`` answers ``{"svg": ...}``: the position as an SVG
board when the game can draw one (a game's optional ``draw_svg(key) -> str`` method, else
chess through python-chess's ``chess.svg.board``), ``null`` otherwise (the page then draws
a grid from the notation, or shows the text).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, jsonify, send_from_directory

from api.params import POSITION_ARG, game_from_query, position_from_query

STATIC = Path(__file__).with_name("static")

bp = Blueprint("explorer", __name__, static_folder=str(STATIC), static_url_path="/static")


@bp.get("/")
@bp.get("/explore/")
@bp.get("/explore/<game>")
def page(game: str | None = None) -> Response:
    """The explorer page; it reads the game, variant and position from the address."""
    del game  # read by the page's script
    response = send_from_directory(STATIC / "explorer", "index.html")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/explore/board/<game>")
def board(game: str) -> Response:
    """The position ``?p=`` of *game* (parameters in the query) as ``{"svg": text|null}``."""
    configured = game_from_query(game, reserved=(POSITION_ARG,))
    key, _text = position_from_query(configured)
    draw = getattr(configured, "draw_svg", None)
    svg: str | None = None
    if callable(draw):
        svg = str(draw(key))
    elif configured.name == "chess":
        import chess
        import chess.svg

        # the notation is a FEN with '_' for spaces (see the chess game's docs)
        fen = configured.format(key).replace("_", " ")
        svg = chess.svg.board(chess.Board(fen), size=320)
    return jsonify({"svg": svg})
