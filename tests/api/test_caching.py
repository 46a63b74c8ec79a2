"""Caching headers: immutable answers only where nothing can change; ETags and 304s."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from sqlalchemy import text, update

from api.database import get_database
from db.models import SolveRun, Variant
from db.session import make_engine
from tests.api.helpers import make_app, solve_into

IMMUTABLE = "public, max-age=86400, immutable"


@pytest.mark.parametrize(
    "url",
    [
        "/api/games/tic-tac-toe/positions?p=.........",
        "/api/games/tic-tac-toe/positions?p=xxx/oo./...",  # terminal
        "/api/games/connect-four/positions?p=1&width=4&height=3",
        "/api/games/tic-tac-toe/line?p=x........",
    ],
)
def test_final_answers_are_immutable(client: FlaskClient, url: str) -> None:
    r = client.get(url)
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == IMMUTABLE
    assert r.headers["ETag"].startswith('"') and r.headers["ETag"].endswith('"')


@pytest.mark.parametrize(
    "url",
    [
        "/api/games/number-game/positions?p=59",  # unexpanded
        "/api/games/number-game/positions?p=33",  # final itself, but not all its moves
        "/api/games/number-game/line?p=57",
        # final values, but a partial solve: a later run may expand nodes that reach the
        # same values in fewer plies, so the depths (and the line) may still change
        "/api/games/number-game/line?p=13",
        "/api/games",
        "/api/solves",
        "/api/openapi.json",
    ],
)
def test_other_answers_must_be_revalidated(client: FlaskClient, url: str) -> None:
    r = client.get(url)
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == "no-cache"
    assert "ETag" in r.headers


def test_number_game_33_is_final_but_a_move_is_not(client: FlaskClient) -> None:
    body = client.get("/api/games/number-game/positions?p=33").get_json()
    assert body["low_final"] and body["high_final"]
    assert not all(m["low_final"] and m["high_final"] for m in body["moves"])


@pytest.mark.parametrize(
    "url",
    [
        "/api/games/tic-tac-toe/positions?p=.........",
        "/api/games/number-game/positions?p=59",
        "/api/games/tic-tac-toe/line?p=.........",
        "/api/games",
        "/api/solves",
        "/api/solves/1",
        "/api/openapi.json",
        "/api/docs",
    ],
)
def test_if_none_match_gives_304(client: FlaskClient, url: str) -> None:
    first = client.get(url)
    assert first.status_code == 200
    etag = first.headers["ETag"]
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    assert again.headers["ETag"] == etag
    assert again.headers["Cache-Control"] == first.headers["Cache-Control"]
    assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    assert client.get(url, headers={"If-None-Match": "*"}).status_code == 304


def test_the_same_answer_has_the_same_etag(client: FlaskClient) -> None:
    a = client.get("/api/games/tic-tac-toe/positions?p=.........")
    b = client.get("/api/games/tic-tac-toe/positions?p=.../.../...")
    c = client.get("/api/games/tic-tac-toe/positions?p=x........")
    assert a.headers["ETag"] == b.headers["ETag"] != c.headers["ETag"]


def test_post_and_errors_are_not_cached(client: FlaskClient) -> None:
    r = client.post("/api/games/tic-tac-toe/positions", json={"positions": ["........."]})
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == "no-cache" and "ETag" not in r.headers
    for url in (
        "/api/games/tic-tac-toe/positions?p=x",
        "/api/nowhere",
        "/api/games/number-game/positions?p=63",
    ):
        r = client.get(url)
        assert r.status_code >= 400
        assert r.headers["Cache-Control"] == "no-cache" and "ETag" not in r.headers


def test_final_answers_wait_for_the_closing_pass(empty_url: str) -> None:
    # Between a run's last batch and its closing pass (variants.settled false: a crash
    # there) the depths are not computed yet: final answers must be revalidated until a
    # run settles the variant.
    solve_into(empty_url, "tic-tac-toe", {}, True)
    url = "/api/games/tic-tac-toe/positions?p=........."
    engine = make_engine(empty_url)
    try:
        for settled, expected in ((False, "no-cache"), (True, IMMUTABLE)):
            with engine.begin() as conn:
                conn.execute(update(Variant).values(settled=settled))
            with make_app(empty_url) as app:
                r = app.test_client().get(url)
                assert r.status_code == 200 and r.get_json()["low_final"]
                assert r.headers["Cache-Control"] == expected
    finally:
        engine.dispose()


def test_a_closed_variant_stays_closed_for_its_own_nodes_only(empty_url: str) -> None:
    # Once read closed, a variant's nodes stay immutable for good (later runs from other
    # roots add nodes, never children of stored ones), without a query per lookup; a node
    # added since is checked again, and "not closed" is kept only briefly.
    solve_into(empty_url, "tic-tac-toe", {}, True)
    engine = make_engine(empty_url)
    try:
        with make_app(empty_url) as app:
            database = get_database(app)
            with engine.connect() as conn:
                vid, nodes = conn.execute(
                    text("SELECT id, (SELECT count(*) FROM nodes) FROM variants")
                ).one()
            assert database.closed(vid, nodes - 1)
            with engine.begin() as conn:  # a new run has begun: it left positions open
                conn.execute(update(SolveRun).values(frontier=7, nodes=nodes + 9))
            assert database.closed(vid, nodes - 1)  # the stored graph's nodes: still closed
            assert not database.closed(vid, nodes)  # a new node: read again, not closed
            with engine.begin() as conn:
                conn.execute(update(SolveRun).values(frontier=0))
            assert not database.closed(vid, nodes + 1)  # "not closed" holds a moment...
            database._closure[vid] = (False, nodes + 9, 0.0)  # ...then is read again
            assert database.closed(vid, nodes + 1)
    finally:
        engine.dispose()
