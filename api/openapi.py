"""The OpenAPI 3.1 document of the HTTP API, generated from its route table
(:data:`api.routes.ROUTES`: each route's path, method, view, parameters and answers).

The paths come from the routes the app serves, the game names and parameters from the
game registry, and the schemas from the models of :mod:`api.schemas`, so the document
cannot drift from what the endpoints accept and answer; the tests run a property-based
fuzzer (schemathesis) against it. :mod:`api.docs_page` renders it as a web page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from api.schemas import component_schemas
from solver.game import Param
from solver.games import GAMES

if TYPE_CHECKING:
    from flask.typing import ResponseReturnValue

JSON = "application/json"

INFO = {
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
}

CACHE_HEADERS = {
    "Cache-Control": {
        "description": "`public, max-age=86400, immutable` when the answer can never "
        "change (every bound in it final), else `no-cache`",
        "schema": {"type": "string"},
    },
    "ETag": {"description": "strong validator of the body", "schema": {"type": "string"}},
}


@dataclass(frozen=True)
class Limits:
    """The app's limits the document states (``MAX_BATCH``...)."""

    max_batch: int = 1000
    max_line_plies: int = 1000
    max_strategy_nodes: int = 1000
    max_estimate_seconds: float = 5
    max_estimate_depth: int = 200


@dataclass(frozen=True)
class Answer:
    """A documented answer of a route: its status, description and body (a schema name of
    :mod:`api.schemas`, an inline schema, or ``None`` for none). *cached* answers carry
    the caching headers. The description may name the :class:`Limits`, as
    ``{max_batch}``."""

    status: str
    description: str
    schema: str | dict[str, Any] | None = "Error"
    media: str = JSON
    cached: bool = False

    def document(self, limits: Limits) -> dict[str, Any]:
        """The OpenAPI response object."""
        out: dict[str, Any] = {"description": _fill(self.description, limits)}
        if self.schema is not None:
            schema = _ref(self.schema) if isinstance(self.schema, str) else self.schema
            out["content"] = {self.media: {"schema": schema}}
        if self.cached:
            out["headers"] = CACHE_HEADERS
        return out


def ok(schema: str, description: str, *, cached: bool = True) -> Answer:
    """A 200 answer with a body of model *schema*."""
    return Answer("200", description, schema, cached=cached)


def error(status: str, description: str) -> Answer:
    """An error answer (its body an :class:`~api.schemas.Error`)."""
    return Answer(status, description)


NOT_MODIFIED = Answer("304", "Not modified: the `If-None-Match` ETag matches", None)
UNAVAILABLE = error(
    "503",
    "The database is unreachable, missing, or not at the schema head (the message says "
    "how to upgrade it)",
)
WRONG_RULES = error("409", "The database holds this variant under another rules version")
LOOKUP_ERRORS = (
    error("400", "Malformed position, parameter or query"),
    error("404", "Unknown game, or the position is not in the database"),
    WRONG_RULES,
    UNAVAILABLE,
)
"""The errors of a position lookup."""

GAME_PARAMETERS = "*game parameters*"
"""A route's parameter that stands for every game parameter of every registered game."""


@dataclass(frozen=True)
class Route:
    """An endpoint of the API: its Flask rule (under ``/api``), method and view, and what
    the OpenAPI document says of it: the operation's id, summary and description, its
    query and header parameters (names of :func:`parameters`; the path's come from the
    rule), its request body (a schema name) and its answers. The summary and the
    description may name the :class:`Limits`, as ``{max_batch}``."""

    rule: str
    method: Literal["get", "post"]
    view: Callable[..., ResponseReturnValue]
    operation_id: str
    summary: str
    answers: tuple[Answer, ...]
    parameters: tuple[str, ...] = ()
    description: str | None = None
    body: str | None = None

    @property
    def path(self) -> str:
        """The documented path: ``/api`` and the rule, ``{name}`` for ``<type:name>``."""
        return "/api" + re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", self.rule)

    @property
    def path_parameters(self) -> list[str]:
        """The names of the rule's variables."""
        return re.findall(r"<(?:[^:>]+:)?([^>]+)>", self.rule)

    def operation(self, limits: Limits, catalogue: dict[str, Any]) -> dict[str, Any]:
        """The OpenAPI operation object."""
        out: dict[str, Any] = {
            "operationId": self.operation_id,
            "summary": _fill(self.summary, limits),
        }
        if self.description is not None:
            out["description"] = _fill(self.description, limits)
        if self.parameters:
            out["parameters"] = [p for name in self.parameters for p in _named(catalogue, name)]
        if self.body is not None:
            out["requestBody"] = {"required": True, "content": {JSON: {"schema": _ref(self.body)}}}
        out["responses"] = {a.status: a.document(limits) for a in self.answers}
        return out


def _fill(text: str, limits: Limits) -> str:
    return text.format(
        max_batch=limits.max_batch,
        max_line_plies=limits.max_line_plies,
        max_strategy_nodes=limits.max_strategy_nodes,
        max_estimate_seconds=f"{limits.max_estimate_seconds:g}",
        max_estimate_depth=limits.max_estimate_depth,
    )


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _named(catalogue: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The parameter objects *name* stands for (every game parameter, or one)."""
    found: list[dict[str, Any]] | dict[str, Any] = catalogue[name]
    return found if isinstance(found, list) else [found]


def parameters(limits: Limits, *, max_run_id: int) -> dict[str, Any]:
    """The parameters the routes name, by name (:data:`GAME_PARAMETERS`: a list)."""
    return {
        "game": {
            "name": "game",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "enum": sorted(GAMES)},
            "example": "tic-tac-toe",
            "description": "The game's registry name (any other name is a 404).",
        },
        "run_id": _path_integer("run_id", max_run_id),
        "p": {
            "name": "p",
            "in": "query",
            "required": True,
            "schema": {"type": "string"},
            "example": ".........",
            "description": "The position in the game's notation (see GET /api/games).",
        },
        "bound": _query(
            "bound", {"type": "string", "enum": ["value", "low", "high"], "default": "value"}
        ),
        "max_plies": _query("max_plies", _integer(0, limits.max_line_plies)),
        "max_nodes": _query(
            "max_nodes",
            _integer(1, limits.max_strategy_nodes, min(200, limits.max_strategy_nodes)),
            "the most positions the tree shows",
        ),
        "depth": _query(
            "depth",
            {"type": "integer", "minimum": 1, "maximum": limits.max_estimate_depth},
            "the search's depth in plies (give depth or seconds)",
        ),
        "seconds": _query(
            "seconds",
            {"type": "number", "exclusiveMinimum": 0, "maximum": limits.max_estimate_seconds},
            "the search's time in seconds (give depth or seconds)",
        ),
        "commit": _query(
            "commit",
            {"type": "integer", "minimum": 1},
            "the commit to show (default: the last that fits)",
        ),
        "limit": _query("limit", _integer(1, 1000, 100)),
        "If-None-Match": {
            "name": "If-None-Match",
            "in": "header",
            "required": False,
            "schema": {"type": "string"},
            "description": "An ETag of an earlier answer: a 304 if it still matches.",
        },
        GAME_PARAMETERS: game_parameters(),
    }


def _integer(minimum: int, maximum: int, default: int | None = None) -> dict[str, Any]:
    """An integer's schema (its default: *maximum* unless given)."""
    return {
        "type": "integer",
        "minimum": minimum,
        "maximum": maximum,
        "default": maximum if default is None else default,
    }


def _query(name: str, schema: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    out = {"name": name, "in": "query", "required": False, "schema": schema}
    if description is not None:
        out["description"] = description
    return out


def _path_integer(name: str, maximum: int) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 0, "maximum": maximum},
    }


def game_parameters() -> list[dict[str, Any]]:
    """One optional query parameter per game-parameter name of any registered game."""
    merged: dict[str, list[tuple[str, Param]]] = {}
    for cls in GAMES.values():
        for p in cls.parameters:
            merged.setdefault(p.name, []).append((cls.name, p))
    out = []
    for name, users in sorted(merged.items()):
        helps = "; ".join(f"{g}: {p.help} (default {json.dumps(p.default)})" for g, p in users)
        out.append(
            {
                "name": name,
                "in": "query",
                "required": False,
                "schema": _parameter_schema([p for _, p in users]),
                "description": f"Game parameter of {', '.join(g for g, _ in users)} "
                f"({helps}). A parameter the game does not have is a 400.",
            }
        )
    return out


def _parameter_schema(params: Sequence[Param]) -> dict[str, Any]:
    """The schema of a query parameter that games give as *params*: a boolean, an
    integer (in the range every game allows) or a string (one of the choices, if every
    game has them)."""
    kinds = {p.type for p in params}
    if kinds == {bool}:
        return {"type": "boolean"}
    if kinds == {int}:
        return _integer_parameter(params)
    schema: dict[str, Any] = {"type": "string"}
    choices = [p.choices for p in params]
    if kinds == {str} and all(c is not None for c in choices):
        schema["enum"] = sorted({c for cs in choices if cs is not None for c in cs})
    return schema


def _integer_parameter(params: Sequence[Param]) -> dict[str, Any]:
    """An integer game parameter's schema: its range, where every game bounds it."""
    schema: dict[str, Any] = {"type": "integer"}
    mins = [p.min for p in params]
    maxs = [p.max for p in params]
    if None not in mins:
        schema["minimum"] = min(m for m in mins if m is not None)
    if None not in maxs:
        schema["maximum"] = max(m for m in maxs if m is not None)
    return schema


def openapi_document(routes: Sequence[Route], limits: Limits, *, max_run_id: int) -> dict[str, Any]:
    """The OpenAPI 3.1 document of *routes* under *limits*."""
    catalogue = parameters(limits, max_run_id=max_run_id)
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        item = paths.setdefault(route.path, {})
        if route.path_parameters and "parameters" not in item:
            item["parameters"] = [catalogue[name] for name in route.path_parameters]
        item[route.method] = route.operation(limits, catalogue)
    return {
        "openapi": "3.1.0",
        "info": INFO,
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {"schemas": component_schemas(max_batch=limits.max_batch)},
    }


__all__ = [
    "GAME_PARAMETERS",
    "LOOKUP_ERRORS",
    "NOT_MODIFIED",
    "UNAVAILABLE",
    "WRONG_RULES",
    "Answer",
    "Limits",
    "Route",
    "error",
    "game_parameters",
    "ok",
    "openapi_document",
]
