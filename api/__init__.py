"""negagraph's HTTP API and command line.

:func:`create_app` builds the Flask app: configuration (defaults, then ``NEGAGRAPH_*``
environment variables, then the *config* mapping), the per-request database session, the
routes under ``/api`` (:mod:`api.routes`), the explorer page (``/``, :mod:`api.explorer`)
and the error handlers. Nothing touches the database until a request needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The negagraph API app.

    Configuration keys: ``DATABASE_URL`` (default: ``$NEGAGRAPH_DATABASE_URL``, else
    ``sqlite:///negagraph.db``), ``MAX_BATCH`` (positions per batch lookup, 1000),
    ``MAX_LINE_PLIES`` (longest principal line, 1000), ``MAX_STRATEGY_NODES`` (largest
    strategy tree of a game of chance, 1000), ``MAX_ESTIMATE_SECONDS`` (longest
    estimate search, 5) and Flask's own
    (``MAX_CONTENT_LENGTH``: 1 MiB). Environment variables ``NEGAGRAPH_<KEY>`` override
    the defaults; *config* overrides both.
    """
    # Imported here: the console script (api.entry) imports this package first and
    # must stay light (Flask takes a good part of a second to import).
    from flask import Flask
    from flask.json.provider import DefaultJSONProvider

    from api import database, errors, explorer, routes
    from api.responses import set_default_cache_control
    from db.session import database_url

    app = Flask(__name__)
    app.config.from_mapping(
        DATABASE_URL=database_url(),
        MAX_BATCH=1000,
        MAX_LINE_PLIES=1000,
        MAX_STRATEGY_NODES=1000,
        MAX_ESTIMATE_SECONDS=5,
        MAX_CONTENT_LENGTH=1 << 20,
        # OPTIONS is a 405 like any other method the API does not answer (no CORS).
        PROVIDE_AUTOMATIC_OPTIONS=False,
    )
    app.config.from_prefixed_env("NEGAGRAPH")
    if config is not None:
        app.config.update(config)
    if isinstance(app.json, DefaultJSONProvider):
        app.json.sort_keys = False  # keep the documented field order

    database.init_app(app)
    errors.init_app(app)
    app.after_request(set_default_cache_control)
    routes.init_app(app)  # the API's routes, from its route table
    app.register_blueprint(explorer.bp)
    return app


__all__ = ["create_app"]
