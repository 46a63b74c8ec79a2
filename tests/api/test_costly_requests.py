"""Requests that used to cost the server dearly: a variant whose game takes seconds to
build (its symmetry set-up) that the database does not hold, and a database server that
went away (a 503, not a 500)."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient

from solver.games import get_game
from tests.api.helpers import (
    PG_USER,
    assert_error,
    closed_port,
    make_app,
    solved_postgres_behind_proxy,
)

COSTLY = {"graph": "complete-30", "mode": "edges", "colors": "6"}
"""A graph-share variant whose symmetry set-up took 10-16 s to build (the issue's)."""

FAST = 0.5
"""Seconds such a request may take now (it took over 10 s)."""


def empty_position() -> str:
    game = get_game("graph-share", graph="complete-30", mode="edges", colors=6, symmetry=False)
    return game.format(game.initial())


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def test_an_unstored_costly_variant_is_a_404_in_milliseconds(client: FlaskClient) -> None:
    p = empty_position()
    for path in ("positions", "line"):
        url = f"/api/games/graph-share/{path}?{urlencode({**COSTLY, 'p': p})}"
        seconds, r = timed(lambda url=url: client.get(url))
        assert r.mimetype == "application/json"
        assert_error(
            r.status_code,
            r.get_json(),
            404,
            "has not been solved",
            "graph-share (colors=6,graph=complete-30,mode=edges,symmetry=true)",
            "negagraph solve graph-share -p colors=6 -p graph=complete-30",
        )
        assert seconds < FAST, f"GET {path} of an unstored costly variant took {seconds:.2f} s"


def test_a_malformed_position_of_an_unstored_costly_variant_is_a_fast_400(
    client: FlaskClient,
) -> None:
    url = f"/api/games/graph-share/positions?{urlencode({**COSTLY, 'p': '0-1=z'})}"
    seconds, r = timed(lambda: client.get(url))
    assert_error(r.status_code, r.get_json(), 400, "invalid graph-share position")
    assert seconds < FAST, f"took {seconds:.2f} s"


def test_a_batch_of_an_unstored_costly_variant_answers_each_position_fast(
    client: FlaskClient,
) -> None:
    body = {
        "params": {"graph": "complete-30", "mode": "edges", "colors": 6},
        "positions": [empty_position(), "0-1=z"],
    }
    seconds, r = timed(lambda: client.post("/api/games/graph-share/positions", json=body))
    assert r.status_code == 200 and seconds < FAST, (r.status_code, seconds)
    first, second = r.get_json()["results"]
    assert first["error"]["code"] == 404 and "has not been solved" in first["error"]["message"]
    assert first["position"] == empty_position()
    assert second["error"]["code"] == 400


def test_spellings_of_a_stored_variant_find_it(client: FlaskClient) -> None:
    # The stored tic-tac-toe variant (symmetry=true), named in other spellings.
    for spelling in ("true", "1", "yes", " on"):
        r = client.get(
            "/api/games/tic-tac-toe/positions",
            query_string={"p": ".........", "symmetry": spelling},
        )
        assert r.status_code == 200, r.get_json()
        assert r.get_json()["params"] == {"symmetry": True}


# -- a database server that goes away ----------------------------------------------------


@pytest.mark.postgres
def test_a_postgres_server_gone_away_is_503_not_500() -> None:
    with solved_postgres_behind_proxy() as (url, proxy), make_app(url) as app:
        client = app.test_client()
        ok = client.get("/api/games/tic-tac-toe/positions?p=.........")
        assert ok.status_code == 200, ok.get_json()
        proxy.close()
        for path in (
            "/api/games/tic-tac-toe/positions?p=.........",
            "/api/games/tic-tac-toe/positions?p=x........",
            "/api/games/tic-tac-toe/line?p=.........",
            "/api/games",
            "/api/solves",
        ):
            r = client.get(path)
            assert r.mimetype == "application/json", path
            assert_error(r.status_code, r.get_json(), 503)
        health = client.get("/api/health")
        assert health.status_code == 503
        assert health.get_json()["database"]["reachable"] is False


@pytest.mark.postgres
def test_a_postgres_server_never_reached_is_503() -> None:
    url = f"postgresql+psycopg://{PG_USER}@127.0.0.1:{closed_port()}/negagraph"
    with make_app(url) as app:
        r = app.test_client().get("/api/games/tic-tac-toe/positions?p=.........")
        assert_error(r.status_code, r.get_json(), 503)
