"""The OpenAPI 3.1 document of the HTTP API, and the HTML page rendered from it.

The document is built from the game registry (game names and their parameters), so it
cannot drift from what the endpoints accept; the tests run a property-based fuzzer
(schemathesis) against it.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from solver.games import GAMES

JSON = "application/json"

BOUND = {"type": ["integer", "null"], "description": "null: infinite"}
DEPTH = {"type": ["integer", "null"], "minimum": 0, "description": "plies; null: infinite"}
STATES = ["unexpanded", "expanded", "terminal", "unknown"]

POSITION_FIELDS: dict[str, Any] = {
    "low": {**BOUND, "description": "lower bound for the player to move (null: -infinity)"},
    "high": {**BOUND, "description": "upper bound for the player to move (null: +infinity)"},
    "low_final": {"type": "boolean", "description": "no further expansion can change low"},
    "high_final": {"type": "boolean", "description": "no further expansion can change high"},
    "value": {
        "type": ["integer", "null"],
        "description": "the exact value when low = high, else null",
    },
    "repetition_value": {
        "type": ["integer", "null"],
        "description": "the value when endless play scores the game's repetition value "
        "(clamp(r, low, high)); null if the game has no such rule or a bound is not final",
    },
    "depth_low": {
        **DEPTH,
        "description": "plies within which the low bound is forced (null: infinite)",
    },
    "depth_high": {
        **DEPTH,
        "description": "plies the opponent can hold the mover to high (null: infinite)",
    },
    "state": {
        "type": "string",
        "enum": STATES,
        "description": "unknown: not in the database (a move from an unexpanded position)",
    },
}


def _obj(
    properties: dict[str, Any], *, required: list[str] | None = None, description: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }
    if description:
        out["description"] = description
    return out


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _schemas() -> dict[str, Any]:
    scalar = {"type": ["integer", "string", "boolean"]}
    return {
        "ErrorDetail": _obj(
            {
                "code": {"type": "integer", "description": "the HTTP status"},
                "message": {"type": "string", "description": "what went wrong"},
            }
        ),
        "Error": _obj(
            {"error": _ref("ErrorDetail")},
            description="Every error answer has this shape.",
        ),
        "Params": {
            "type": "object",
            "additionalProperties": scalar,
            "description": "Every parameter of the game variant, defaults included.",
        },
        "Bounds": _obj(
            {
                "low": POSITION_FIELDS["low"],
                "high": POSITION_FIELDS["high"],
                "low_final": POSITION_FIELDS["low_final"],
                "high_final": POSITION_FIELDS["high_final"],
            }
        ),
        "PositionFields": _obj(
            {
                "position": {"type": "string", "description": "in the game's notation"},
                **POSITION_FIELDS,
            },
            description="A position with its bounds, flags, value, depths and state.",
        ),
        "Move": _obj(
            {
                "move": {"type": "string", "description": "the move in the game's notation"},
                "position": {"type": "string", "description": "the resulting position"},
                **POSITION_FIELDS,
                "move_low": {
                    **BOUND,
                    "description": "the move's lower bound for the mover: -high of the child",
                },
                "move_high": {
                    **BOUND,
                    "description": "the move's upper bound for the mover: -low of the child",
                },
            },
            description="A move with the resulting position's own fields (from the point "
            "of view of the player to move there) and the move's bounds for the mover.",
        ),
        "Position": _obj(
            {
                "game": {"type": "string"},
                "params": _ref("Params"),
                "position": {"type": "string", "description": "the position, normalised"},
                **POSITION_FIELDS,
                "moves": {
                    "type": "array",
                    "items": _ref("Move"),
                    "description": "best first for the player to move",
                },
            }
        ),
        "PositionError": _obj(
            {
                "position": {"type": "string", "description": "the position as sent"},
                "error": _ref("ErrorDetail"),
            },
            description="A batch entry that has no answer: malformed (400) or not in the "
            "database (404).",
        ),
        "BatchRequest": {
            "type": "object",
            "properties": {
                "params": {
                    "type": "object",
                    "additionalProperties": scalar,
                    "description": "the game's parameters (defaults when absent)",
                },
                "positions": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": 1000,
                    "description": "positions in the game's notation",
                },
            },
            "required": ["positions"],
            "additionalProperties": False,
        },
        "BatchResponse": _obj(
            {
                "game": {"type": "string"},
                "params": _ref("Params"),
                "results": {
                    "type": "array",
                    "items": {"anyOf": [_ref("Position"), _ref("PositionError")]},
                    "description": "one per requested position, in request order",
                },
            }
        ),
        "LineStep": _obj(
            {
                "ply": {"type": "integer", "minimum": 1},
                "move": {"type": "string"},
                "bound": {
                    "type": "string",
                    "enum": ["low", "high", "value"],
                    "description": "the bound this step's mover realises (value: a "
                    "move that keeps a value only endless play gives)",
                },
                "position": {"type": "string", "description": "the position reached"},
                **POSITION_FIELDS,
            }
        ),
        "Line": _obj(
            {
                "game": {"type": "string"},
                "params": _ref("Params"),
                "bound": {"type": "string", "enum": ["value", "low", "high"]},
                "max_plies": {"type": "integer", "minimum": 0},
                "start": _ref("PositionFields"),
                "steps": {"type": "array", "items": _ref("LineStep")},
                "plies": {"type": "integer", "minimum": 0},
                "end": {
                    "type": "string",
                    "enum": ["terminal", "unexpanded", "max_plies", "repetition"],
                    "description": "terminal: the game ended; unexpanded: the line reached "
                    "the frontier of the solved graph; max_plies: the limit; repetition: "
                    "every move realising the bound revisits a position of the line",
                },
            }
        ),
        "GameParameter": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "type": {"type": "string", "enum": ["int", "str", "bool"]},
                "default": scalar,
                "help": {"type": "string"},
                "min": {"type": "integer"},
                "max": {"type": "integer"},
                "choices": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["name", "type", "default", "help"],
        },
        "Variant": _obj(
            {
                "id": {"type": "integer"},
                "params": _ref("Params"),
                "params_text": {"type": "string"},
                "rules_version": {"type": "integer"},
                "game_source": {
                    "type": ["string", "null"],
                    "description": "where the game came from when the variant was created",
                },
                "compatible": {
                    "type": "boolean",
                    "description": "stored under this server's rules version",
                },
                "nodes": {"type": "integer", "minimum": 0},
                "root": {"type": ["string", "null"]},
                "root_bounds": {"anyOf": [_ref("Bounds"), {"type": "null"}]},
                "last_run": {
                    "anyOf": [
                        _obj({"id": {"type": "integer"}, "status": {"type": "string"}}),
                        {"type": "null"},
                    ]
                },
            }
        ),
        "Game": _obj(
            {
                "name": {"type": "string"},
                "installed": {"type": "boolean", "const": True},
                "source": {
                    "type": "string",
                    "description": "builtin, plugin <distribution> <version> or reference <ref>",
                },
                "version": {"type": "integer", "description": "rules version"},
                "description": {"type": "string"},
                "notation": {"type": "string", "description": "how positions are written"},
                "parameters": {"type": "array", "items": _ref("GameParameter")},
                "initial": {
                    "type": "string",
                    "description": "the initial position with default parameters",
                },
                "variants": {
                    "type": "array",
                    "items": _ref("Variant"),
                    "description": "the variants this database holds",
                },
            }
        ),
        "MissingGame": _obj(
            {
                "name": {"type": "string"},
                "installed": {"type": "boolean", "const": False},
                "variants": {
                    "type": "array",
                    "items": _obj(
                        {
                            "id": {"type": "integer"},
                            "params_text": {"type": "string"},
                            "nodes": {"type": "integer", "minimum": 0},
                            "rules_version": {"type": "integer"},
                        }
                    ),
                },
            },
            description="A game this database holds that this server does not have "
            "(its lookups are a 503)",
        ),
        "Games": _obj(
            {
                "games": {"type": "array", "items": {"anyOf": [_ref("Game"), _ref("MissingGame")]}},
                "plugin_errors": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "one line per plugin that could not be loaded",
                },
            }
        ),
        "SolveRun": _obj(
            {
                "id": {"type": "integer"},
                "variant_id": {"type": "integer"},
                "game": {"type": ["string", "null"]},
                "params": {"anyOf": [_ref("Params"), {"type": "null"}]},
                "rules_version": {"type": ["integer", "null"]},
                "status": {
                    "type": "string",
                    "enum": ["running", "complete", "budget", "stopped", "failed", "dead"],
                },
                "started_at": {"type": "string", "format": "date-time"},
                "heartbeat_at": {
                    "type": "string",
                    "format": "date-time",
                    "description": "time of the run's latest commit",
                },
                "finished_at": {"type": ["string", "null"], "format": "date-time"},
                "root": {"type": "string"},
                "full": {"type": "boolean", "description": "tablebase mode"},
                "max_expansions": {"type": ["integer", "null"]},
                "max_seconds": {"type": ["number", "null"]},
                "expansions": {"type": "integer"},
                "nodes_added": {"type": "integer"},
                "edges_added": {"type": "integer"},
                "nodes": {"type": "integer"},
                "edges": {"type": "integer"},
                "frontier": {"type": "integer"},
                "root_bounds": _ref("Bounds"),
                "seconds": {"type": "number"},
                "pid": {"type": "integer"},
                "hostname": {"type": "string"},
            }
        ),
        "SolveList": _obj(
            {
                "solves": {"type": "array", "items": _ref("SolveRun")},
                "total": {"type": "integer", "minimum": 0},
            }
        ),
        "Health": _obj(
            {
                "status": {"type": "string", "enum": ["ok", "unavailable"]},
                "version": {"type": ["string", "null"]},
                "database": {
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "description": "password hidden"},
                        "backend": {"type": ["string", "null"]},
                        "reachable": {"type": "boolean"},
                        "read_only": {"type": "boolean"},
                        "schema": _obj(
                            {
                                "revision": {"type": ["string", "null"]},
                                "head": {"type": "string"},
                                "at_head": {"type": "boolean"},
                            }
                        ),
                        "problem": {"type": "string"},
                    },
                    "required": ["url", "backend", "reachable", "read_only", "schema"],
                },
                "error": _ref("ErrorDetail"),
            },
            required=["status", "version", "database"],
        ),
        "Index": _obj(
            {
                "name": {"type": "string", "const": "negagraph"},
                "version": {"type": ["string", "null"]},
                "docs": {"type": "string", "description": "the documentation page"},
                "openapi": {"type": "string", "description": "the OpenAPI document"},
                "endpoints": {
                    "type": "array",
                    "items": _obj(
                        {
                            "method": {"type": "string"},
                            "path": {"type": "string"},
                            "summary": {"type": "string"},
                        }
                    ),
                },
            },
            description="What this server answers: every endpoint of the OpenAPI document.",
        ),
    }


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


def openapi_document(*, max_batch: int = 1000, max_line_plies: int = 1000) -> dict[str, Any]:
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
    schemas = _schemas()
    schemas["BatchRequest"]["properties"]["positions"]["maxItems"] = max_batch
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


def _schema_text(schema: dict[str, Any]) -> str:
    """A short human-readable type of *schema* (HTML)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f'<a href="#schema-{escape(name)}">{escape(name)}</a>'
    if "anyOf" in schema:
        return " | ".join(_schema_text(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    text = " | ".join(kind) if isinstance(kind, list) else str(kind)
    if text == "array" and "items" in schema:
        text = f"array of {_schema_text(schema['items'])}"
    extras = []
    if "enum" in schema:
        extras.append(
            "one of " + ", ".join(f"<code>{escape(str(v))}</code>" for v in schema["enum"])
        )
    if "minimum" in schema or "maximum" in schema:
        extras.append(f"{schema.get('minimum', '')}..{schema.get('maximum', '')}")
    if "default" in schema:
        extras.append(f"default <code>{escape(json.dumps(schema['default']))}</code>")
    if "maxItems" in schema:
        extras.append(f"at most {schema['maxItems']}")
    return escape(text) if not extras else f"{escape(text)} ({'; '.join(extras)})"


def _properties_table(schema: dict[str, Any]) -> str:
    props = schema.get("properties", {})
    if not props:
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return f"<p>An object whose values are {_schema_text(extra)}.</p>"
        return ""
    required = set(schema.get("required", []))
    rows = "".join(
        f"<tr><td><code>{escape(name)}</code>{'' if name in required else ' (optional)'}"
        f"</td><td>{_schema_text(sub)}</td><td>{escape(sub.get('description', ''))}</td></tr>"
        for name, sub in props.items()
    )
    return f"<table><tr><th>field</th><th>type</th><th>meaning</th></tr>{rows}</table>"


def render_docs(doc: dict[str, Any]) -> str:
    """The OpenAPI document *doc* as a self-contained HTML page (no scripts, no CDN)."""
    info = doc["info"]
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(info['title'])} API</title>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{escape(info['title'])} HTTP API</h1>",
        f"<p>{_inline(info['description'])}</p>",
        "<p>Machine-readable: <a href='/api/openapi.json'><code>/api/openapi.json</code></a>"
        " (OpenAPI 3.1).</p><nav><h2>Endpoints</h2><ul>",
    ]
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            parts.append(
                f"<li><a href='#{escape(op['operationId'])}'><code>{method.upper()} "
                f"{escape(path)}</code></a> — {escape(op['summary'])}</li>"
            )
    parts.append("</ul></nav>")
    for path, item in doc["paths"].items():
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method == "parameters":
                continue
            parts.append(
                f"<h3 id='{escape(op['operationId'])}'><span class='method {method}'>"
                f"{method.upper()}</span>{escape(path)}</h3><p>{escape(op['summary'])}.</p>"
            )
            if "description" in op:
                parts.append(f"<p>{_inline(op['description'])}</p>")
            params = [*shared, *op.get("parameters", [])]
            if params:
                parts.append(
                    "<table><tr><th>parameter</th><th>in</th><th>type</th><th>meaning</th></tr>"
                )
                for p in params:
                    req = " (required)" if p.get("required") else ""
                    parts.append(
                        f"<tr><td><code>{escape(p['name'])}</code>{req}</td>"
                        f"<td>{escape(p['in'])}</td><td>{_schema_text(p['schema'])}</td>"
                        f"<td>{escape(p.get('description', ''))}</td></tr>"
                    )
                parts.append("</table>")
            body = op.get("requestBody")
            if body:
                schema = next(iter(body["content"].values()))["schema"]
                parts.append(
                    f"<p>Request body ({escape(', '.join(body['content']))}): "
                    f"{_schema_text(schema)}</p>"
                )
            parts.append("<table><tr><th>status</th><th>meaning</th><th>body</th></tr>")
            for status, resp in op["responses"].items():
                content = resp.get("content", {})
                schema_html = (
                    _schema_text(next(iter(content.values()))["schema"]) if content else "—"
                )
                parts.append(
                    f"<tr><td>{escape(status)}</td><td>{_inline(resp['description'])}"
                    f"</td><td>{schema_html}</td></tr>"
                )
            parts.append("</table>")
    parts.append("<h2>Schemas</h2>")
    for name, schema in doc["components"]["schemas"].items():
        parts.append(f"<h3 id='schema-{escape(name)}'>{escape(name)}</h3>")
        if "description" in schema:
            parts.append(f"<p>{escape(schema['description'])}</p>")
        parts.append(_properties_table(schema))
    parts.append("</body></html>")
    return "\n".join(parts)


def _inline(text: str) -> str:
    """*text* escaped, with `backquoted` spans as code."""
    pieces = escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


__all__ = ["openapi_document", "render_docs"]
