"""The OpenAPI 3.1 document of the HTTP API, and the HTML page rendered from it.

The document is built from the game registry (game names and their parameters) and its
schemas from the models of :mod:`api.schemas`, so it cannot drift from what the endpoints
accept and answer; the tests run a property-based fuzzer (schemathesis) against it.
"""

from __future__ import annotations

import json
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from api.replay import MAX_REPLAY_NODES
from api.schemas import component_schemas
from solver.games import GAMES

JSON = "application/json"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": _ref("Error")}}}


CACHE_HEADERS = {
    "Cache-Control": {
        "description": "`public, max-age=86400, immutable` when the answer can never "
        "change (every bound in it final), else `no-cache`",
        "schema": {"type": "string"},
    },
    "ETag": {"description": "strong validator of the body", "schema": {"type": "string"}},
}


def _ok(schema: str, description: str, *, cached: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": description,
        "content": {JSON: {"schema": _ref(schema)}},
    }
    if cached:
        out["headers"] = CACHE_HEADERS
    return out


NOT_MODIFIED = {"description": "Not modified: the `If-None-Match` ETag matches"}
UNAVAILABLE = _error(
    "The database is unreachable, missing, or not at the schema head (the message says "
    "how to upgrade it)"
)


def _game_parameters() -> list[dict[str, Any]]:
    """One optional query parameter per game-parameter name of any registered game."""
    merged: dict[str, dict[str, Any]] = {}
    for cls in GAMES.values():
        for p in cls.parameters:
            users = merged.setdefault(p.name, {"games": [], "params": []})
            users["games"].append(cls.name)
            users["params"].append(p)
    out = []
    for name, users in sorted(merged.items()):
        params = users["params"]
        kinds = {p.type for p in params}
        schema: dict[str, Any]
        if kinds == {bool}:
            schema = {"type": "boolean"}
        elif kinds == {int}:
            schema = {"type": "integer"}
            mins = [p.min for p in params]
            maxs = [p.max for p in params]
            if None not in mins:
                schema["minimum"] = min(m for m in mins if m is not None)
            if None not in maxs:
                schema["maximum"] = max(m for m in maxs if m is not None)
        else:
            schema = {"type": "string"}
            choices = [p.choices for p in params]
            if kinds == {str} and all(c is not None for c in choices):
                schema["enum"] = sorted({c for cs in choices if cs is not None for c in cs})
        helps = "; ".join(
            f"{g}: {p.help} (default {json.dumps(p.default)})"
            for g, p in zip(users["games"], params, strict=True)
        )
        out.append(
            {
                "name": name,
                "in": "query",
                "required": False,
                "schema": schema,
                "description": f"Game parameter of {', '.join(users['games'])} ({helps}). "
                "A parameter the game does not have is a 400.",
            }
        )
    return out


def openapi_document(
    *, max_batch: int = 1000, max_line_plies: int = 1000, max_strategy_nodes: int = 1000
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the API."""
    game = {
        "name": "game",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "enum": sorted(GAMES)},
        "example": "tic-tac-toe",
        "description": "The game's registry name (any other name is a 404).",
    }
    position = {
        "name": "p",
        "in": "query",
        "required": True,
        "schema": {"type": "string"},
        "example": ".........",
        "description": "The position in the game's notation (see GET /api/games).",
    }
    if_none_match = {
        "name": "If-None-Match",
        "in": "header",
        "required": False,
        "schema": {"type": "string"},
        "description": "An ETag of an earlier answer: a 304 if it still matches.",
    }
    game_params = _game_parameters()
    schemas = component_schemas(max_batch=max_batch)
    lookup_errors = {
        "400": _error("Malformed position, parameter or query"),
        "404": _error("Unknown game, or the position is not in the database"),
        "409": _error("The database holds this variant under another rules version"),
        "503": UNAVAILABLE,
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "negagraph",
            "version": "1",
            "description": (
                "Read-only lookups in a negagraph database of solved positions of "
                "two-player games, cyclic ones included. Values are from the point of "
                "view of the player to move; `low`/`high` bound what the mover can force "
                "if endless play counted as -infinity/+infinity for him; `null` bounds "
                "and depths are infinite. Every error answer is "
                '`{"error": {"code": <status>, "message": <text>}}`.'
            ),
        },
        "servers": [{"url": "/"}],
        "paths": {
            "/api": {
                "get": {
                    "operationId": "index",
                    "summary": "The endpoints of this API",
                    "parameters": [if_none_match],
                    "responses": {
                        "200": _ok("Index", "Every endpoint with its summary"),
                        "304": NOT_MODIFIED,
                    },
                }
            },
            "/api/health": {
                "get": {
                    "operationId": "health",
                    "summary": "Database reachability and schema state",
                    "responses": {
                        "200": {
                            "description": "Ready to answer",
                            "content": {JSON: {"schema": _ref("Health")}},
                        },
                        "503": {
                            "description": "Not ready: the database is unreachable, "
                            "missing, or not at the schema head",
                            "content": {JSON: {"schema": _ref("Health")}},
                        },
                    },
                }
            },
            "/api/games": {
                "get": {
                    "operationId": "listGames",
                    "summary": "The games, their parameters and notation, and the variants "
                    "this database holds",
                    "parameters": [if_none_match],
                    "responses": {
                        "200": _ok("Games", "Every registered game"),
                        "304": NOT_MODIFIED,
                        "503": UNAVAILABLE,
                    },
                }
            },
            "/api/games/{game}/positions": {
                "parameters": [game],
                "get": {
                    "operationId": "getPosition",
                    "summary": "One position: bounds, value, depths and moves best first",
                    "parameters": [position, *game_params, if_none_match],
                    "responses": {
                        "200": _ok("Position", "The position"),
                        "304": NOT_MODIFIED,
                        **lookup_errors,
                    },
                },
                "post": {
                    "operationId": "getPositions",
                    "summary": f"Up to {max_batch} lookups in one request",
                    "description": "Results come in request order; a position that is "
                    "malformed or not in the database gets its own error entry.",
                    "requestBody": {
                        "required": True,
                        "content": {JSON: {"schema": _ref("BatchRequest")}},
                    },
                    "responses": {
                        "200": _ok("BatchResponse", "One result per position", cached=False),
                        "400": _error("Malformed JSON, body or game parameter"),
                        "404": _error("Unknown game"),
                        "409": lookup_errors["409"],
                        "413": _error(f"More than {max_batch} positions, or too large a body"),
                        "415": _error("The body is not declared as application/json"),
                        "503": UNAVAILABLE,
                    },
                },
            },
            "/api/games/{game}/line": {
                "parameters": [game],
                "get": {
                    "operationId": "getLine",
                    "summary": "The principal line realising a position's value, or its "
                    "low or high bound",
                    "description": "`bound=value` (default): each player plays for his "
                    "position's value under the game's rule for endless play, the winner "
                    "winning fastest, the loser resisting longest. `low`/`high`: the "
                    "player to move realises that bound; the opponent plays for the other "
                    "bound. Along a finite bound depths strictly fall, so the line ends; no "
                    "position is ever repeated.",
                    "parameters": [
                        position,
                        {
                            "name": "bound",
                            "in": "query",
                            "required": False,
                            "schema": {
                                "type": "string",
                                "enum": ["value", "low", "high"],
                                "default": "value",
                            },
                        },
                        {
                            "name": "max_plies",
                            "in": "query",
                            "required": False,
                            "schema": {
                                "type": "integer",
                                "minimum": 0,
                                "maximum": max_line_plies,
                                "default": max_line_plies,
                            },
                        },
                        *game_params,
                        if_none_match,
                    ],
                    "responses": {
                        "200": _ok("Line", "The line and why it ended"),
                        "304": NOT_MODIFIED,
                        **lookup_errors,
                    },
                },
            },
            "/api/games/{game}/strategy": {
                "parameters": [game],
                "get": {
                    "operationId": "getStrategy",
                    "summary": "A game of chance's optimal strategy from a position, as a tree",
                    "description": "Breadth first from the position: at each decision node "
                    "the best move (the position answer's first), at each chance node every "
                    "outcome with its probability; each node with its values and the "
                    "expected plies to the end when both players follow the strategy (null: "
                    "infinite). A position already in the tree is referred to by its node "
                    "(`ref`), not repeated; nodes whose children would pass `max_nodes` are "
                    "`cut`. A game without chance nodes is a 400 (its play is a line).",
                    "parameters": [
                        position,
                        {
                            "name": "max_nodes",
                            "in": "query",
                            "required": False,
                            "schema": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": max_strategy_nodes,
                                "default": min(200, max_strategy_nodes),
                            },
                            "description": "the most positions the tree shows",
                        },
                        *game_params,
                        if_none_match,
                    ],
                    "responses": {
                        "200": _ok("Strategy", "The strategy tree"),
                        "304": NOT_MODIFIED,
                        **lookup_errors,
                    },
                },
            },
            "/api/games/{game}/replay": {
                "parameters": [game],
                "get": {
                    "operationId": "getReplay",
                    "summary": "A stored solve as one of its commits left it",
                    "description": "Every commit of the variant (its positions and the run "
                    "root's bounds), and the graph as commit `commit` left it: positions, "
                    "moves, which commit expanded each position, and bounds and finality "
                    f"recomputed from that graph alone. At most {MAX_REPLAY_NODES} positions "
                    "are drawn: the default commit is the last that fits, a larger one is "
                    "a 400. A variant stored before schema revision 0006 has no commits "
                    "(404).",
                    "parameters": [
                        {
                            "name": "commit",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "integer", "minimum": 1},
                            "description": "the commit to show (default: the last that fits)",
                        },
                        *game_params,
                        if_none_match,
                    ],
                    "responses": {
                        "200": _ok("Replay", "The timeline and the graph"),
                        "304": NOT_MODIFIED,
                        **lookup_errors,
                    },
                },
            },
            "/api/solves": {
                "get": {
                    "operationId": "listSolves",
                    "summary": "Solve runs with their progress, newest first",
                    "parameters": [
                        {
                            "name": "limit",
                            "in": "query",
                            "required": False,
                            "schema": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": 1000,
                                "default": 100,
                            },
                        },
                        if_none_match,
                    ],
                    "responses": {
                        "200": _ok("SolveList", "The runs"),
                        "304": NOT_MODIFIED,
                        "400": _error("Malformed limit"),
                        "503": UNAVAILABLE,
                    },
                }
            },
            "/api/solves/{run_id}": {
                "get": {
                    "operationId": "getSolve",
                    "summary": "One solve run with its progress",
                    "parameters": [
                        {
                            "name": "run_id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1},
                        },
                        if_none_match,
                    ],
                    "responses": {
                        "200": _ok("SolveRun", "The run"),
                        "304": NOT_MODIFIED,
                        "404": _error("No run has that id"),
                        "503": UNAVAILABLE,
                    },
                }
            },
            "/api/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document",
                    "parameters": [if_none_match],
                    "responses": {
                        "200": {
                            "description": "The OpenAPI document",
                            "content": {JSON: {"schema": {"type": "object"}}},
                            "headers": CACHE_HEADERS,
                        },
                        "304": NOT_MODIFIED,
                    },
                }
            },
            "/api/docs": {
                "get": {
                    "operationId": "docs",
                    "summary": "This document as a web page",
                    "parameters": [if_none_match],
                    "responses": {
                        "200": {
                            "description": "HTML",
                            "content": {"text/html": {"schema": {"type": "string"}}},
                            "headers": CACHE_HEADERS,
                        },
                        "304": NOT_MODIFIED,
                    },
                }
            },
        },
        "components": {"schemas": schemas},
    }


# -- the HTML page ----------------------------------------------------------------------

CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#222}
h1{margin-bottom:.2rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2.5rem}
h3{margin:1.8rem 0 .3rem;font-family:ui-monospace,monospace;font-size:1.05rem}
.method{display:inline-block;min-width:3.5rem;padding:0 .4rem;border-radius:3px;color:#fff;
text-align:center;margin-right:.5rem}.get{background:#2a7ab0}.post{background:#3a944a}
table{border-collapse:collapse;margin:.4rem 0 1rem;width:100%}
td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}code{font-family:ui-monospace,monospace;font-size:.92em;
background:#f4f4f4;padding:0 .2rem;border-radius:2px}
.schema{font-family:ui-monospace,monospace;font-size:.9em;margin:.2rem 0 0 1.2rem}
nav ul{columns:2}
"""


def _schema_text(schema: dict[str, Any]) -> Markup:
    """A short human-readable type of *schema*, as markup (links to the schemas)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return Markup('<a href="#schema-{0}">{0}</a>').format(name)
    if "anyOf" in schema:
        return Markup(" | ").join(_schema_text(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    text = Markup(escape(" | ".join(kind) if isinstance(kind, list) else str(kind)))
    if kind == "array" and "items" in schema:
        text = Markup("array of {}").format(_schema_text(schema["items"]))
    extras: list[Markup] = []
    code = Markup("<code>{}</code>")
    if "enum" in schema:
        extras.append(Markup("one of ") + Markup(", ").join(code.format(v) for v in schema["enum"]))
    if "const" in schema:
        extras.append(Markup("always ") + code.format(json.dumps(schema["const"])))
    if "minimum" in schema or "maximum" in schema:
        extras.append(Markup("{}..{}").format(schema.get("minimum", ""), schema.get("maximum", "")))
    if "default" in schema:
        extras.append(Markup("default ") + code.format(json.dumps(schema["default"])))
    if "maxItems" in schema:
        extras.append(Markup("at most {}").format(schema["maxItems"]))
    return text if not extras else Markup("{} ({})").format(text, Markup("; ").join(extras))


def _inline(text: str) -> Markup:
    """*text* escaped, with `backquoted` spans as code."""
    pieces = str(escape(text)).split("`")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces)))


_TEMPLATES = Environment(
    loader=PackageLoader("api", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_TEMPLATES.filters["inline"] = _inline
_TEMPLATES.filters["schema_text"] = _schema_text


def render_docs(doc: dict[str, Any]) -> str:
    """The OpenAPI document *doc* as a self-contained HTML page (no scripts, no CDN),
    from the Jinja template ``api/templates/docs.html`` (autoescaped)."""
    operations = []
    for path, item in doc["paths"].items():
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method == "parameters":
                continue
            body = op.get("requestBody")
            operations.append(
                {
                    "id": op["operationId"],
                    "method": method,
                    "path": path,
                    "summary": op["summary"],
                    "description": op.get("description"),
                    "parameters": [*shared, *op.get("parameters", [])],
                    "body": body,
                    "body_schema": next(iter(body["content"].values()))["schema"] if body else None,
                    "responses": op["responses"],
                }
            )
    page = _TEMPLATES.get_template("docs.html")
    return page.render(
        info=doc["info"],
        css=Markup(CSS),
        operations=operations,
        schemas=doc["components"]["schemas"],
    )


__all__ = ["openapi_document", "render_docs"]
