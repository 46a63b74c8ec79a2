"""JSON answers with the caching headers of DESIGN §"api": answers that can never change
are cacheable for a day and immutable, all others must be revalidated; GET answers carry
an ``ETag`` and honour ``If-None-Match`` with a 304."""

from __future__ import annotations

import hashlib
from typing import Any

from flask import Response, current_app, request
from pydantic import BaseModel

from api.schemas import to_data

IMMUTABLE = "public, max-age=86400, immutable"
"""``Cache-Control`` of answers that cannot change (every bound involved is final)."""

REVALIDATE = "no-cache"
"""``Cache-Control`` of every other answer: caches may keep it but must revalidate."""


def json_answer(
    data: BaseModel | dict[str, Any], *, immutable: bool = False, status: int = 200
) -> Response:
    """*data* (an answer model, serialised by :func:`api.schemas.to_data`, or the OpenAPI
    document) as a JSON answer with caching headers; a GET or HEAD answer gets a strong
    ``ETag`` (a digest of its body) and becomes a 304 when ``If-None-Match`` matches."""
    if isinstance(data, BaseModel):
        data = to_data(data)
    body = current_app.json.dumps(data, separators=(",", ":")) + "\n"
    response = current_app.response_class(body, status=status, mimetype="application/json")
    response.headers["Cache-Control"] = IMMUTABLE if immutable else REVALIDATE
    if status == 200 and request.method in ("GET", "HEAD"):
        response.set_etag(hashlib.blake2b(body.encode(), digest_size=16).hexdigest())
        response.make_conditional(request)
    return response


def set_default_cache_control(response: Response) -> Response:
    """``after_request`` hook: answers that set no ``Cache-Control`` (errors) get
    :data:`REVALIDATE`."""
    if "Cache-Control" not in response.headers:
        response.headers["Cache-Control"] = REVALIDATE
    return response


__all__ = ["IMMUTABLE", "REVALIDATE", "json_answer", "set_default_cache_control"]
