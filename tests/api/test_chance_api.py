"""Games of chance through the HTTP API (real Flask clients over SQLite and PostgreSQL):
a position's answer carries the chance fields (kind, player, outwards-rounded bounds,
exact fractions), each move its probability, its change of player and its bounds for the
mover, best first at decision nodes; the answers validate against the schema models;
lines, which a game of chance does not have yet, are a 400 with one message."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

import pytest
from flask.testing import FlaskClient

from api import schemas
from tests.api.helpers import assert_error, make_app, solve_into


@pytest.fixture
def chance_client(empty_url: str) -> Iterator[FlaskClient]:
    solve_into(empty_url, "coin-nim", {"n": 10}, True)
    solve_into(empty_url, "pig", {"target": 12, "faces": 4}, True)
    with make_app(empty_url) as app:
        yield app.test_client()


def test_a_chance_node_lists_its_outcomes_with_probabilities(chance_client: FlaskClient) -> None:
    r = chance_client.get("/api/games/coin-nim/positions", query_string={"p": "10:first", "n": 10})
    assert r.status_code == 200
    body = r.get_json()
    schemas.Position.model_validate(body)
    c = body["chance"]
    assert (c["kind"], c["player"], c["value"]) == ("chance", 0, "3/16")
    assert c["low_exact"] == c["high_exact"] == "3/16" and c["low"] <= 3 / 16 <= c["high"]
    assert [m["move"] for m in body["moves"]] == ["heads", "tails"]  # the game's order
    for m in body["moves"]:
        assert m["chance"]["probability"] == "1/2" and m["chance"]["keeps_turn"] is True
    assert sum(Fraction(m["chance"]["move_low_exact"]) / 2 for m in body["moves"]) == Fraction(
        3, 16
    )


def test_a_decision_node_ranks_its_moves_for_the_mover(chance_client: FlaskClient) -> None:
    r = chance_client.get(
        "/api/games/coin-nim/positions", query_string={"p": "4:first:heads", "n": 10}
    )
    body = r.get_json()
    schemas.Position.model_validate(body)
    moves = [
        (m["move"], m["chance"]["move_low_exact"], m["chance"]["keeps_turn"]) for m in body["moves"]
    ]
    assert moves == [("1", "0", False), ("2", "-1", False)]
    assert body["chance"]["kind"] == "decision" and body["chance"]["value"] == "0"


def test_pig_answers_roll_or_hold_with_sound_bounds(chance_client: FlaskClient) -> None:
    r = chance_client.get(
        "/api/games/pig/positions", query_string={"p": "0-0:first:8", "target": 12, "faces": 4}
    )
    body = r.get_json()
    schemas.Position.model_validate(body)
    (best, other) = body["moves"]
    # Ranked by the mover's lower bound; the bounds of each move are intervals around
    # the true values, and the winner's interval lies above the other's.
    assert best["chance"]["move_low"] >= other["chance"]["move_low"]
    assert {best["move"], other["move"]} == {"roll", "hold"}
    roll = next(m for m in body["moves"] if m["move"] == "roll")
    hold = next(m for m in body["moves"] if m["move"] == "hold")
    assert roll["chance"]["keeps_turn"] is True and hold["chance"]["keeps_turn"] is False
    assert roll["chance"]["probability"] is None  # a decision, not an outcome
    c = body["chance"]
    assert c["low"] <= c["high"] and c["high"] - c["low"] <= 1e-9
    assert c["low"] == pytest.approx(best["chance"]["move_low"], abs=1e-9)


def test_a_batch_of_chance_positions(chance_client: FlaskClient) -> None:
    r = chance_client.post(
        "/api/games/coin-nim/positions",
        json={"params": {"n": 10}, "positions": ["10:first", "0:second", "x"]},
    )
    assert r.status_code == 200
    results = schemas.BatchResponse.model_validate(r.get_json()).results
    assert results[1].chance is not None and results[1].chance.kind == "terminal"  # type: ignore[union-attr]
    assert results[2].error.code == 400  # type: ignore[union-attr]


def test_a_line_of_a_game_of_chance_is_refused(chance_client: FlaskClient) -> None:
    r = chance_client.get("/api/games/coin-nim/line", query_string={"p": "10:first", "n": 10})
    assert_error(400, r.get_json(), 400, "coin-nim has chance nodes", "strategy")
    assert r.status_code == 400
