"""The HTTP API's route table: every endpoint's path, method, view, parameters and
answers, in one list (:data:`ROUTES`). It registers the Flask routes (:func:`init_app`)
and is what the OpenAPI document (:mod:`api.openapi`), its web page and the index of
endpoints are generated from, so the three cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, current_app, request

from api.docs_page import render_docs
from api.meta import health, version
from api.openapi import (
    GAME_PARAMETERS,
    LOOKUP_ERRORS,
    NOT_MODIFIED,
    UNAVAILABLE,
    WRONG_RULES,
    Answer,
    Limits,
    Route,
    error,
    ok,
    openapi_document,
)
from api.positions import (
    MAX_ESTIMATE_DEPTH,
    get_estimate,
    get_line,
    get_position,
    get_strategy,
    list_games,
    post_positions,
)
from api.replay import MAX_REPLAY_NODES, get_replay
from api.responses import REVALIDATE, json_answer
from api.schemas import Endpoint, Index
from api.solves import MAX_RUN_ID, get_solve, list_solves

CACHED = ("If-None-Match",)
"""The parameter of every GET that answers with an ETag."""


def document() -> dict[str, Any]:
    """The OpenAPI document for this app's limits."""
    config = current_app.config
    limits = Limits(
        max_batch=int(config["MAX_BATCH"]),
        max_line_plies=int(config["MAX_LINE_PLIES"]),
        max_strategy_nodes=int(config["MAX_STRATEGY_NODES"]),
        max_estimate_seconds=float(config["MAX_ESTIMATE_SECONDS"]),
        max_estimate_depth=MAX_ESTIMATE_DEPTH,
    )
    return openapi_document(ROUTES, limits, max_run_id=MAX_RUN_ID)


def index() -> Response:
    """What this server answers: each endpoint of the OpenAPI document with its summary
    (the URL ``negagraph serve`` prints)."""
    paths = document()["paths"]
    endpoints = [
        Endpoint(method=method.upper(), path=path, summary=operation["summary"])
        for path, item in paths.items()
        for method, operation in item.items()
        if method != "parameters"
    ]
    return json_answer(
        Index(
            name="negagraph",
            version=version(),
            docs="/api/docs",
            openapi="/api/openapi.json",
            endpoints=endpoints,
        )
    )


def openapi() -> Response:
    """The OpenAPI 3.1 document of this API."""
    return json_answer(document())


def docs() -> Response:
    """The API documentation as a self-contained HTML page."""
    response = current_app.response_class(render_docs(document()), mimetype="text/html")
    response.headers["Cache-Control"] = REVALIDATE
    response.add_etag()
    response.make_conditional(request)
    return response


LOOKUP = ("p", GAME_PARAMETERS, *CACHED)
"""The parameters of a position lookup (a route's own come between ``p`` and the game's)."""

ROUTES: tuple[Route, ...] = (
    Route(
        "",
        "get",
        index,
        "index",
        "The endpoints of this API",
        (ok("Index", "Every endpoint with its summary"), NOT_MODIFIED),
        CACHED,
    ),
    Route(
        "/health",
        "get",
        health,
        "health",
        "Database reachability and schema state",
        (
            Answer("200", "Ready to answer", "Health"),
            Answer(
                "503",
                "Not ready: the database is unreachable, missing, or not at the schema head",
                "Health",
            ),
        ),
    ),
    Route(
        "/games",
        "get",
        list_games,
        "listGames",
        "The games, their parameters and notation, and the variants this database holds",
        (ok("Games", "Every registered game"), NOT_MODIFIED, UNAVAILABLE),
        CACHED,
    ),
    Route(
        "/games/<game>/positions",
        "get",
        get_position,
        "getPosition",
        "One position: bounds, value, depths and moves best first",
        (ok("Position", "The position"), NOT_MODIFIED, *LOOKUP_ERRORS),
        LOOKUP,
    ),
    Route(
        "/games/<game>/positions",
        "post",
        post_positions,
        "getPositions",
        "Up to {max_batch} lookups in one request",
        (
            ok("BatchResponse", "One result per position", cached=False),
            error("400", "Malformed JSON, body or game parameter"),
            error("404", "Unknown game"),
            WRONG_RULES,
            error("413", "More than {max_batch} positions, or too large a body"),
            error("415", "The body is not declared as application/json"),
            UNAVAILABLE,
        ),
        description="Results come in request order; a position that is malformed or not "
        "in the database gets its own error entry.",
        body="BatchRequest",
    ),
    Route(
        "/games/<game>/line",
        "get",
        get_line,
        "getLine",
        "The principal line realising a position's value, or its low or high bound",
        (ok("Line", "The line and why it ended"), NOT_MODIFIED, *LOOKUP_ERRORS),
        ("p", "bound", "max_plies", GAME_PARAMETERS, *CACHED),
        description="`bound=value` (default): each player plays for his position's value "
        "under the game's rule for endless play, the winner winning fastest, the loser "
        "resisting longest. `low`/`high`: the player to move realises that bound; the "
        "opponent plays for the other bound. Along a finite bound depths strictly fall, "
        "so the line ends; no position is ever repeated.",
    ),
    Route(
        "/games/<game>/strategy",
        "get",
        get_strategy,
        "getStrategy",
        "A game of chance's optimal strategy from a position, as a tree",
        (ok("Strategy", "The strategy tree"), NOT_MODIFIED, *LOOKUP_ERRORS),
        ("p", "max_nodes", GAME_PARAMETERS, *CACHED),
        description="Breadth first from the position: at each decision node the best move "
        "(the position answer's first), at each chance node every outcome with its "
        "probability; each node with its values and the expected plies to the end when "
        "both players follow the strategy (null: infinite). A position already in the "
        "tree is referred to by its node (`ref`), not repeated; nodes whose children would "
        "pass `max_nodes` are `cut`. A game without chance nodes is a 400 (its play is a "
        "line).",
    ),
    Route(
        "/games/<game>/estimate",
        "get",
        get_estimate,
        "getEstimate",
        "A heuristic estimate of a position beyond the database, beside its proven bounds",
        (
            ok("Estimate", "The estimate, or the proven value"),
            NOT_MODIFIED,
            error(
                "400",
                "Malformed position, parameter or query; not exactly one of depth and "
                "seconds; a game without an evaluation; a terminal position not stored",
            ),
            error("404", "Unknown game"),
            WRONG_RULES,
            UNAVAILABLE,
        ),
        ("p", "depth", "seconds", GAME_PARAMETERS, *CACHED),
        description="Iterative deepening of PVS in aspiration windows, the game's "
        "evaluation scoring the positions at the depth limit and the values the database "
        "has proven ending the search as exact leaves. `score` is heuristic (`kind` "
        "`estimate`) unless `exact`; it is never written to the database. Where the "
        "database holds the exact value, that is the answer (`kind` `proven`, `searched` "
        "false). Every search stops after {max_estimate_seconds} s, keeping its last "
        "completed iteration (a depth search then reports the depth it reached). `moves` "
        "lists the position's legal moves and the positions they lead to, stored or not, "
        "so that a client can play on past the database.",
    ),
    Route(
        "/games/<game>/replay",
        "get",
        get_replay,
        "getReplay",
        "A stored solve as one of its commits left it",
        (ok("Replay", "The timeline and the graph"), NOT_MODIFIED, *LOOKUP_ERRORS),
        ("commit", GAME_PARAMETERS, *CACHED),
        description="Every commit of the variant (its positions, moves and the run root's "
        "bounds), the tiers of a tiered full solve (which commit discovered and which solved "
        "each), and the graph as commit `commit` left it: positions, moves, which commit "
        "expanded each position, and bounds and finality recomputed from that graph alone "
        "(in a tiered solve, the positions of the tiers the commit had discovered). "
        f"At most {MAX_REPLAY_NODES} positions are drawn: the default commit is the "
        "last that fits; a larger one, or any of a variant in the compact layout, is "
        "answered without its graph (`drawn` false, `not_drawn` saying why). A variant "
        "stored before schema revision 0006 has no commits (404).",
    ),
    Route(
        "/solves",
        "get",
        list_solves,
        "listSolves",
        "Solve runs with their progress, newest first",
        (ok("SolveList", "The runs"), NOT_MODIFIED, error("400", "Malformed limit"), UNAVAILABLE),
        ("limit", *CACHED),
    ),
    Route(
        f"/solves/<int(max={MAX_RUN_ID}):run_id>",
        "get",
        get_solve,
        "getSolve",
        "One solve run with its progress",
        (ok("SolveRun", "The run"), NOT_MODIFIED, error("404", "No run has that id"), UNAVAILABLE),
        CACHED,
    ),
    Route(
        "/openapi.json",
        "get",
        openapi,
        "openapi",
        "This document",
        (Answer("200", "The OpenAPI document", {"type": "object"}, cached=True), NOT_MODIFIED),
        CACHED,
    ),
    Route(
        "/docs",
        "get",
        docs,
        "docs",
        "This document as a web page",
        (
            Answer("200", "HTML", {"type": "string"}, media="text/html", cached=True),
            NOT_MODIFIED,
        ),
        CACHED,
    ),
)
"""Every endpoint of the API, in the order the document lists them."""


def init_app(app: Flask) -> None:
    """Register every route of :data:`ROUTES` under ``/api`` (a blueprint ``api``, each
    route's endpoint its operation id)."""
    bp = Blueprint("api", __name__)
    for route in ROUTES:
        bp.add_url_rule(
            route.rule,
            endpoint=route.operation_id,
            view_func=route.view,
            methods=[route.method.upper()],
        )
    app.register_blueprint(bp, url_prefix="/api")


__all__ = ["ROUTES", "document", "init_app"]
