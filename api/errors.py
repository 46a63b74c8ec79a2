"""The one place where errors become HTTP answers.

Every error answer, negagraph's own and Werkzeug's alike, is JSON of one shape::

    {"error": {"code": 404, "message": "position 'x..' ... is not in the database ..."}}

Domain errors map to statuses by type (:data:`STATUS`): malformed input is a 400, an
unknown game or a position the database does not hold a 404, a database holding the game
under another rules version a 409, and a database that cannot be used (unreachable, not at
the schema head) a 503. Anything else is a bug: it is logged and answered with a bare 500
that reveals nothing.
"""

from __future__ import annotations

import logging

from flask import Flask, Response, current_app, jsonify
from sqlalchemy import exc as sa_exc
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response as WerkzeugResponse

from api.schemas import Error, ErrorDetail, to_data
from db.errors import DatabaseError, PositionNotFoundError, RulesVersionError
from db.session import unusable_database_message
from solver.errors import (
    InvalidParameterError,
    InvalidPositionError,
    NegagraphError,
    UnknownGameError,
)

log = logging.getLogger(__name__)


class InvalidRequestError(NegagraphError, ValueError):
    """The request itself is malformed: a missing or bad query parameter, or a JSON body
    of the wrong shape."""


class BatchTooLargeError(NegagraphError, ValueError):
    """A batch lookup asks for more positions than the server answers at once."""


class RunNotFoundError(NegagraphError, LookupError):
    """No solve run has the requested id."""


class GameNotInstalledError(NegagraphError, LookupError):
    """The database holds a game that is not installed on this server (a plugin
    missing, or a reference the server was not started with)."""


STATUS: tuple[tuple[type[Exception], int], ...] = (
    (InvalidPositionError, 400),
    (InvalidParameterError, 400),
    (InvalidRequestError, 400),
    (GameNotInstalledError, 503),
    (UnknownGameError, 404),
    (PositionNotFoundError, 404),
    (RunNotFoundError, 404),
    (RulesVersionError, 409),
    (BatchTooLargeError, 413),
    (DatabaseError, 503),  # SchemaError included
)
"""HTTP status of each domain error type (the first matching entry wins)."""


def status_of(exc: BaseException) -> int:
    """The HTTP status for the domain error *exc* (500 for types not in :data:`STATUS`)."""
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_detail(code: int, message: str) -> ErrorDetail:
    """What an error answer (or a batch entry) says: its status and message."""
    return ErrorDetail(code=code, message=message)


def error_body(code: int, message: str) -> Error:
    """The body of an error answer."""
    return Error(error=error_detail(code, message))


def error_response(code: int, message: str) -> Response:
    """A JSON error answer."""
    response = jsonify(to_data(error_body(code, message)))
    response.status_code = code
    return response


def handle_domain_error(exc: NegagraphError) -> Response:
    code = status_of(exc)
    if code == 500:
        return handle_unexpected(exc)
    if code == 503:
        log.warning("database unavailable: %s", exc)
    return error_response(code, str(exc))


def handle_http_error(exc: HTTPException) -> WerkzeugResponse | HTTPException:
    """Werkzeug's errors (unknown URL, wrong method, body too large, bad or non-JSON
    body...) as JSON, keeping their headers (``Allow`` on a 405)."""
    if exc.code is None or exc.code < 400:
        return exc  # redirects, e.g. merging duplicate slashes
    response = exc.get_response()
    body = current_app.json.dumps(
        to_data(error_body(exc.code, exc.description or exc.name)), separators=(",", ":")
    )
    response.set_data(body + "\n")
    response.mimetype = "application/json"
    return response


def handle_database_driver_error(exc: sa_exc.SQLAlchemyError) -> Response:
    """A driver error the repository did not translate: the database failed under us
    (connection lost, server restarting...). Answered without details. One that means the
    database cannot be used (:func:`db.session.unusable_database_message`: unreachable,
    timed out...) is logged as one line saying so, since an outage repeats it for every
    request; any other (a failed statement) is logged in full."""
    message = unusable_database_message(current_app.config["DATABASE_URL"], exc)
    if message is not None:
        log.error("database unavailable: %s", message)
    else:
        log.error("database error while answering a request", exc_info=exc)
    return error_response(503, "the database failed to answer; try again later")


def handle_unexpected(exc: Exception) -> Response:
    """The last resort: a bug. Logged with its traceback; the answer says nothing more."""
    log.error("unexpected error while answering a request", exc_info=exc)
    return error_response(500, "internal server error")


def init_app(app: Flask) -> None:
    """Register the handlers on *app*."""
    app.register_error_handler(NegagraphError, handle_domain_error)
    app.register_error_handler(HTTPException, handle_http_error)
    app.register_error_handler(sa_exc.SQLAlchemyError, handle_database_driver_error)
    app.register_error_handler(Exception, handle_unexpected)


__all__ = [
    "STATUS",
    "BatchTooLargeError",
    "GameNotInstalledError",
    "InvalidRequestError",
    "RunNotFoundError",
    "error_body",
    "error_detail",
    "error_response",
    "init_app",
    "status_of",
]
