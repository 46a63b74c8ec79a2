"""The explorer: a small browser app at ``/`` and ``/explore/...`` over the JSON API.

The page (``api/static/explorer/index.html``) and its plain ES modules talk to ``/api`` only;
this blueprint serves them, the vendored cytoscape.js, and one drawing endpoint:
``/explore/board/<game>?p=...&<params>`` answers ``{"svg": ...}``: the position as an SVG
board when the game draws one (its optional ``draw_svg(key)`` method, see
:meth:`solver.game.GameBase.draw_svg`; chess draws through python-chess), ``null``
otherwise (the page then draws a grid from the notation, or shows the text).

An explorer address that names no page (``/explore/nosuchgame``, a game this server does
not have, or any deeper path) is an HTML 404 page saying so, with a link to the explorer,
never the page of another game.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from flask import Blueprint, Response, jsonify, render_template, send_from_directory

from api.params import POSITION_ARG, game_from_query, position_from_query
from solver.errors import SolveError, UnknownGameError
from solver.game import PositionKey
from solver.games import GAMES

STATIC = Path(__file__).with_name("static")

bp = Blueprint(
    "explorer",
    __name__,
    static_folder=str(STATIC),
    static_url_path="/static",
    template_folder=str(Path(__file__).with_name("templates")),
)


@bp.get("/")
@bp.get("/explore/")
@bp.get("/explore/<game>")
def page(game: str | None = None) -> Response:
    """The explorer page; it reads the game, variant and position from the address (the
    variant and position are checked by the page's script, against the stored variants).
    A game this server does not have is the HTML 404 page."""
    if game is not None:
        if ":" in game:  # a reference: the API takes none (``api.params.find_game``)
            return not_found(f"unknown game {game!r}: the explorer takes game names")
        try:
            GAMES.find(game)
        except UnknownGameError as e:
            return not_found(str(e))
    response = send_from_directory(STATIC / "explorer", "index.html")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/explore/<path:rest>")
def no_page(rest: str) -> Response:
    """Any other address under ``/explore/``: the HTML 404 page."""
    return not_found(f"the explorer has no page /explore/{rest}")


def not_found(message: str) -> Response:
    """The explorer's HTML 404 page, saying *message*."""
    response = Response(render_template("explorer-404.html", message=message), status=404)
    response.headers["Cache-Control"] = "no-cache"
    return response


@runtime_checkable
class DrawsBoards(Protocol):
    """A game that can draw a position (every :class:`~solver.game.GameBase` can; it may
    answer ``None``): :meth:`~solver.game.GameBase.draw_svg`."""

    def draw_svg(self, key: PositionKey) -> str | None: ...


@bp.get("/explore/board/<game>")
def board(game: str) -> Response:
    """The position ``?p=`` of *game* (parameters in the query) as ``{"svg": text|null}``."""
    configured = game_from_query(game, reserved=(POSITION_ARG,))
    key, _text = position_from_query(configured)
    # optional: games that do not derive from GameBase may lack it
    svg = configured.draw_svg(key) if isinstance(configured, DrawsBoards) else None
    if svg is not None and not isinstance(svg, str):
        raise SolveError(f"{configured.name}: draw_svg gave a {type(svg).__name__}, not text")
    return jsonify({"svg": svg})
