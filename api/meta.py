"""Service endpoints: the index of endpoints, health, the OpenAPI document and its HTML
rendering."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from flask import Blueprint, Response, current_app, request

from api.database import get_database
from api.errors import error_detail
from api.openapi import openapi_document, render_docs
from api.responses import REVALIDATE, json_answer
from api.schemas import DatabaseHealth, Endpoint, Health, Index

bp = Blueprint("meta", __name__)


def version() -> str | None:
    """The installed negagraph version (``None`` when run from an uninstalled tree)."""
    try:
        return metadata.version("negagraph")
    except metadata.PackageNotFoundError:
        return None


@bp.get("")
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


@bp.get("/health")
def health() -> Response:
    """Whether the database is reachable and at the schema head: 200 if so, else 503 with
    the problem (the same message the other endpoints answer with)."""
    ok, info = get_database().health()
    database = DatabaseHealth.model_validate(info)
    body = Health(status="ok" if ok else "unavailable", version=version(), database=database)
    if not ok:
        body.error = error_detail(503, str(database.problem))
    response = json_answer(body, status=200 if ok else 503)
    response.headers["Cache-Control"] = "no-store"
    return response


def document() -> dict[str, Any]:
    """The OpenAPI document for this app's limits."""
    config = current_app.config
    return openapi_document(
        max_batch=int(config["MAX_BATCH"]),
        max_line_plies=int(config["MAX_LINE_PLIES"]),
        max_strategy_nodes=int(config["MAX_STRATEGY_NODES"]),
    )


@bp.get("/openapi.json")
def openapi() -> Response:
    """The OpenAPI 3.1 document of this API."""
    return json_answer(document())


@bp.get("/docs")
def docs() -> Response:
    """The API documentation as a self-contained HTML page."""
    response = current_app.response_class(render_docs(document()), mimetype="text/html")
    response.headers["Cache-Control"] = REVALIDATE
    response.add_etag()
    response.make_conditional(request)
    return response


__all__ = ["bp"]
