"""Every error is JSON ``{"error": {"code", "message"}}``, Werkzeug's included; the
last-resort handler answers a bare 500 and logs the bug."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import exc as sa_exc

from api import create_app
from api.errors import STATUS, status_of
from db.errors import DatabaseError, PositionNotFoundError, RulesVersionError, SchemaError
from solver.errors import InvalidParameterError, InvalidPositionError, UnknownGameError
from tests.api.helpers import assert_error


@pytest.mark.parametrize(
    "url",
    ["/api/nothing", "/nothing", "/api/games/tic-tac-toe", "/api/games/tic-tac-toe/positions/x"],
)
def test_unknown_url_is_json_404(client: FlaskClient, url: str) -> None:
    r = client.get(url)
    assert r.mimetype == "application/json"
    assert_error(r.status_code, r.get_json(), 404, "not found")


@pytest.mark.parametrize(
    ("method", "url", "allowed"),
    [
        ("put", "/api/games/tic-tac-toe/positions", {"GET", "POST", "HEAD"}),
        ("delete", "/api/games", {"GET", "HEAD"}),
        ("post", "/api/games/tic-tac-toe/line", {"GET", "HEAD"}),
        ("post", "/api/health", {"GET", "HEAD"}),
        ("patch", "/api/solves/1", {"GET", "HEAD"}),
        ("options", "/api/games/tic-tac-toe/positions", {"GET", "POST", "HEAD"}),
        ("options", "/api", {"GET", "HEAD"}),
    ],
)
def test_wrong_method_is_json_405_with_allow(
    client: FlaskClient, method: str, url: str, allowed: set[str]
) -> None:
    r = getattr(client, method)(url)
    assert_error(r.status_code, r.get_json(), 405, "method is not allowed")
    assert set(r.headers["Allow"].replace(" ", "").split(",")) == allowed


def test_head_answers_like_get_without_a_body(client: FlaskClient) -> None:
    get = client.get("/api/games/tic-tac-toe/positions?p=.........")
    head = client.head("/api/games/tic-tac-toe/positions?p=.........")
    assert head.status_code == 200 and head.data == b""
    assert head.headers["ETag"] == get.headers["ETag"]


def test_domain_errors_map_to_statuses() -> None:
    assert status_of(InvalidPositionError("x")) == 400
    assert status_of(InvalidParameterError("x")) == 400
    assert status_of(UnknownGameError("x")) == 404
    assert status_of(PositionNotFoundError("x")) == 404
    assert status_of(RulesVersionError("x")) == 409
    assert status_of(SchemaError("x")) == 503
    assert status_of(DatabaseError("x")) == 503
    assert status_of(ValueError("x")) == 500
    assert all(400 <= code < 600 for _, code in STATUS)


@pytest.fixture
def broken_app(solved_url: str) -> Iterator[Flask]:
    """An app with routes that fail the way bugs and dying databases do."""
    app = create_app({"DATABASE_URL": solved_url})

    @app.get("/api/test/bug")
    def bug() -> str:
        raise ZeroDivisionError("secret detail")

    @app.get("/api/test/driver")
    def driver() -> str:
        raise sa_exc.OperationalError("SELECT secret", {}, Exception("server closed"))

    yield app


def test_a_bug_is_a_bare_json_500_and_is_logged(
    broken_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="api.errors"):
        r = broken_app.test_client().get("/api/test/bug")
    assert_error(r.status_code, r.get_json(), 500, "internal server error")
    assert b"secret" not in r.data and b"Traceback" not in r.data
    assert any(rec.exc_info and rec.exc_info[0] is ZeroDivisionError for rec in caplog.records)


def test_an_untranslated_driver_error_is_503(
    broken_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="api.errors"):
        r = broken_app.test_client().get("/api/test/driver")
    assert_error(r.status_code, r.get_json(), 503, "database failed to answer")
    assert b"secret" not in r.data
    assert caplog.records


def test_a_driver_error_meaning_the_database_is_unusable_is_one_log_line(
    broken_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    # A database outage repeats it for every request: no traceback each time.
    with caplog.at_level(logging.ERROR, logger="api.errors"):
        r = broken_app.test_client().get("/api/test/driver")
    assert r.status_code == 503
    [record] = [rec for rec in caplog.records if rec.name == "api.errors"]
    assert record.exc_info is None
    message = record.getMessage()
    assert message.startswith("database unavailable: ") and "server closed" in message
    assert "\n" not in message


def test_no_error_path_reaches_the_last_resort(
    client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A sample of hostile inputs: all answered with 4xx, none logged as a bug."""
    urls = [
        "/api/games/tic-tac-toe/positions?p=%00%ff",
        "/api/games/tic-tac-toe/positions?p=" + "x" * 100_000,
        "/api/games/number-game/positions?p=99999999999999999999999999",
        "/api/games/number-game/positions?p=13&root=0",
        "/api/games/number-game/positions?p=13&root=-1",
        "/api/games/connect-four/positions?p=1111&width=1&height=1",
        "/api/games/connect-four/positions?p=%F0%9F%98%80&width=4",
        "/api/games/tic-tac-toe/line?p=.........&max_plies=%EF%BC%91",  # a full-width 1
        "/api/games/tic-tac-toe/line?p=.........&max_plies=1e3",
        "/api/games/%00/positions?p=1",
        "/api/solves?limit=99999999999999999999999",
    ]
    with caplog.at_level(logging.ERROR):
        for url in urls:
            r = client.get(url)
            assert 400 <= r.status_code < 500, (url, r.get_json())
            assert set(r.get_json()) == {"error"}
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


def test_error_messages_do_not_echo_huge_inputs(client: FlaskClient) -> None:
    r = client.get("/api/games/tic-tac-toe/positions", query_string={"p": "x" * 50_000})
    assert_error(r.status_code, r.get_json(), 400, "invalid tic-tac-toe position")
    assert len(r.get_json()["error"]["message"]) < 600
