"""The explorer: a small browser app at ``/`` and ``/explore/...`` over the JSON API.

The page (``api/static/explorer/index.html``) and its plain script talk to ``/api`` only;
this blueprint serves them, the vendored cytoscape.js, and one drawing endpoint:
``/explore/board/<game>?p=...&<params>`` answers ``{"svg": ...}``: the position as an SVG
board when the game draws one (its optional ``draw_svg(key)`` method, see
:meth:`solver.game.GameBase.draw_svg`; chess draws through python-chess), ``null``
otherwise (the page then draws a grid from the notation, or shows the text).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, jsonify, send_from_directory

from api.params import POSITION_ARG, game_from_query, position_from_query
from solver.errors import SolveError
from solver.game import Drawable

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
    # optional: games that do not derive from GameBase may lack it
    svg = configured.draw_svg(key) if isinstance(configured, Drawable) else None
    if svg is not None and not isinstance(svg, str):
        raise SolveError(f"{configured.name}: draw_svg gave a {type(svg).__name__}, not text")
    return jsonify({"svg": svg})
