"""POST /api/games/<game>/positions: batch lookups, their limits and body errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event

from api.database import get_database
from solver.games import get_game
from tests.api.helpers import (
    assert_batch_is_the_singles,
    assert_error,
    make_app,
    reachable_texts,
)

URL = "/api/games/{}/positions"


def batch(client: FlaskClient, game: str, body: Any) -> tuple[int, Any]:
    r = client.post(URL.format(game), json=body)
    assert r.mimetype == "application/json"
    return r.status_code, r.get_json()


def test_mixed_good_and_bad_positions_keep_their_order(client: FlaskClient) -> None:
    positions = [".........", "xx", "x........", "xxx/xxx/xxx", "x........", "xxx/oo./..."]
    status, body = batch(client, "tic-tac-toe", {"positions": positions})
    assert status == 200
    assert body["game"] == "tic-tac-toe" and body["params"] == {"symmetry": False}
    results = body["results"]
    assert len(results) == len(positions)
    for text, result in zip(positions, results, strict=True):
        single = client.get(URL.format("tic-tac-toe"), query_string={"p": text})
        if single.status_code == 200:
            assert result == single.get_json()  # exactly the single lookup's answer
        else:
            assert result == {"position": text, **single.get_json()}
    assert [r.get("error", {}).get("code") for r in results] == [None, 400, None, 400, None, None]


@pytest.mark.parametrize(
    ("game", "query", "body"),
    [
        ("connect-four", {"width": "4", "height": "3"}, {"width": 4, "height": 3}),
        # symmetry: a move's resulting position is stored as its mirror image
        ("tic-tac-toe", {"symmetry": "true"}, {"symmetry": True}),
    ],
)
def test_a_batch_answer_is_the_single_answers_byte_for_byte(
    client: FlaskClient, game: str, query: dict[str, str], body: dict[str, Any]
) -> None:
    texts = reachable_texts(game, body, 80)
    assert_batch_is_the_singles(client, game, query, body, texts)


def test_not_stored_positions_get_404_entries(client: FlaskClient) -> None:
    status, body = batch(client, "number-game", {"positions": ["13", "63", "oops", "59"]})
    assert status == 200
    first, missing, bad, frontier = body["results"]
    assert first["low"] == 3 and first["high"] == 5
    assert missing["position"] == "63" and missing["error"]["code"] == 404
    assert "not in the database" in missing["error"]["message"]
    assert bad["error"]["code"] == 400
    assert frontier["state"] == "unexpanded"
    # A variant that was never solved: every entry is a 404 saying so.
    status, body = batch(client, "number-game", {"params": {"root": 20}, "positions": ["20"]})
    assert status == 200
    assert "has not been solved" in body["results"][0]["error"]["message"]


def test_parameters_in_the_body(client: FlaskClient) -> None:
    status, body = batch(
        client,
        "connect-four",
        {"params": {"width": 4, "height": "3"}, "positions": ["..../..../....", "1"]},
    )
    assert status == 200
    assert body["params"] == {"width": 4, "height": 3, "symmetry": False}
    assert [r["position"] for r in body["results"]] == ["..../..../....", "..../..../x..."]
    assert body["results"][0]["value"] == 0


def test_empty_batch(client: FlaskClient) -> None:
    assert batch(client, "tic-tac-toe", {"positions": []}) == (
        200,
        {
            "game": "tic-tac-toe",
            "params": {"symmetry": False},
            "initial": ".../.../...",
            "results": [],
        },
    )


def all_positions(game: str, limit: int, **params: Any) -> list[str]:
    """Up to *limit* positions of *game* reachable from the start (breadth first)."""
    g = get_game(game, **params)
    seen = {g.initial()}
    frontier = [g.initial()]
    while frontier and len(seen) < limit:
        nxt = []
        for key in frontier:
            for _, child in g.children(key):
                if child not in seen and len(seen) < limit:
                    seen.add(child)
                    nxt.append(child)
        frontier = nxt
    return [g.format(k) for k in seen]


@contextmanager
def count_statements(app: Flask) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(*args: Any) -> None:
        statements.append(args[2])

    engine = get_database(app).engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_a_full_batch_takes_a_few_bulk_queries(app: Flask, client: FlaskClient) -> None:
    positions = all_positions("connect-four", 1000, width=4, height=3)
    assert len(positions) == 1000
    client.get("/api/health")  # connect and check the schema first
    with count_statements(app) as statements:
        status, body = batch(
            client, "connect-four", {"params": {"width": 4, "height": 3}, "positions": positions}
        )
    assert status == 200
    assert all("error" not in r for r in body["results"])
    assert [r["position"] for r in body["results"]] == positions
    # The variant once; the positions in two chunks; their ~3,000 children in a few more.
    assert len(statements) <= 12, statements
    one = client.get(
        URL.format("connect-four"), query_string={"p": positions[-1], "width": 4, "height": 3}
    )
    assert body["results"][-1] == one.get_json()


def test_more_than_1000_positions_is_413(client: FlaskClient) -> None:
    status, body = batch(client, "tic-tac-toe", {"positions": ["........."] * 1001})
    assert_error(status, body, 413, "at most 1000 positions", "1001")


def test_a_body_over_the_size_limit_is_413(client: FlaskClient) -> None:
    body = json.dumps({"positions": ["." * 2000] * 600})
    r = client.post(URL.format("tic-tac-toe"), data=body, content_type="application/json")
    assert_error(r.status_code, r.get_json(), 413)


def test_the_batch_limit_is_configurable(solved_url: str) -> None:
    with make_app(solved_url, MAX_BATCH=2) as app:
        client = app.test_client()
        assert batch(client, "tic-tac-toe", {"positions": ["........."] * 2})[0] == 200
        assert batch(client, "tic-tac-toe", {"positions": ["........."] * 3})[0] == 413
        doc = client.get("/api/openapi.json").get_json()
        assert (
            doc["components"]["schemas"]["BatchRequest"]["properties"]["positions"]["maxItems"] == 2
        )


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_post_without_json_content_type_is_415(
    client: FlaskClient, content_type: str | None
) -> None:
    r = client.post(URL.format("tic-tac-toe"), data='{"positions": []}', content_type=content_type)
    assert_error(r.status_code, r.get_json(), 415, "application/json")


@pytest.mark.parametrize(
    "data",
    [
        '{"positions": [',
        "",
        "{'positions': []}",
        "nul",
        b'{"positions": ["\xff"]}',
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_malformed_json_is_400(client: FlaskClient, data: str | bytes) -> None:
    r = client.post(URL.format("tic-tac-toe"), data=data, content_type="application/json")
    assert_error(r.status_code, r.get_json(), 400, "malformed JSON body")


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ([], "must be a JSON object"),
        ("x", "must be a JSON object"),
        ({}, '"positions" must be an array'),
        ({"positions": "........."}, '"positions" must be an array'),
        ({"positions": [1]}, "positions[0] must be a string"),
        ({"positions": [".........", None]}, "positions[1] must be a string"),
        ({"positions": [], "extra": 1}, "unknown member 'extra'"),
        ({"positions": [], "params": []}, '"params" must be an object'),
        ({"positions": [], "params": {"symmetry": [True]}}, "must be a string, an integer"),
        ({"positions": [], "params": {"symmetry": 2.5}}, "must be a string, an integer"),
        ({"positions": [], "params": {"size": 3}}, "unknown parameter 'size'"),
        ({"positions": [], "params": {"symmetry": "perhaps"}}, "true or false"),
    ],
)
def test_malformed_body_is_400(client: FlaskClient, body: Any, fragment: str) -> None:
    assert_error(*batch(client, "tic-tac-toe", body), 400, fragment)


def test_query_parameters_on_post_are_400(client: FlaskClient) -> None:
    r = client.post(URL.format("tic-tac-toe") + "?symmetry=true", json={"positions": []})
    assert_error(r.status_code, r.get_json(), 400, "JSON body")


def test_unknown_game_is_404_before_the_body_is_read(client: FlaskClient) -> None:
    r = client.post(URL.format("go"), data="not json", content_type="text/plain")
    assert_error(r.status_code, r.get_json(), 404, "unknown game 'go'")
