"""Service endpoints: health, and the server's version (the index of endpoints and the
OpenAPI document are :mod:`api.routes`')."""

from __future__ import annotations

from importlib import metadata

from flask import Response

from api.database import get_database
from api.errors import error_detail
from api.responses import json_answer
from api.schemas import DatabaseHealth, Health


def version() -> str | None:
    """The installed negagraph version (``None`` when run from an uninstalled tree)."""
    try:
        return metadata.version("negagraph")
    except metadata.PackageNotFoundError:
        return None


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


__all__ = ["health", "version"]
