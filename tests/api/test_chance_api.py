"""Games of chance through the HTTP API (real Flask clients over SQLite and PostgreSQL):
a position's answer carries the chance fields (kind, player, outwards-rounded bounds,
exact fractions), each move its probability, its change of player and its bounds for the
mover, best first at decision nodes; the answers validate against the schema models;
its optimal strategy is a tree (``/strategy``: the position answers' best moves and
outcomes, expected plies, refs for repeats, a node limit), and a line is a 400 pointing
there."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from flask.testing import FlaskClient

from api import schemas
from tests.api.helpers import (
    assert_batch_is_the_singles,
    assert_error,
    make_app,
    reachable_texts,
    solve_into,
)


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


def test_a_chance_batch_answer_is_the_single_answers_byte_for_byte(
    chance_client: FlaskClient,
) -> None:
    texts = reachable_texts("pig", {"target": 12, "faces": 4}, 60)
    query = {"target": "12", "faces": "4"}
    assert_batch_is_the_singles(chance_client, "pig", query, {"target": 12, "faces": 4}, texts)


def test_a_line_of_a_game_of_chance_points_to_its_strategy(chance_client: FlaskClient) -> None:
    r = chance_client.get("/api/games/coin-nim/line", query_string={"p": "10:first", "n": 10})
    assert_error(400, r.get_json(), 400, "coin-nim has chance nodes", "/strategy")
    assert r.status_code == 400


def strategy(client: FlaskClient, game: str, **query: object) -> dict[str, Any]:
    r = client.get(f"/api/games/{game}/strategy", query_string=query)
    assert r.status_code == 200, r.get_json()
    body: dict[str, Any] = r.get_json()
    schemas.Strategy.model_validate(body)
    return body


def check_tree(
    client: FlaskClient, game: str, params: dict[str, int], body: dict[str, Any]
) -> None:
    """The tree's shape: ids in order, every node but the start reached by exactly one
    move that is not a ref (from an earlier node), refs only to earlier-shown nodes,
    outcomes' probabilities summing to 1, each decision's move the position answer's
    best move, and each node's values the position answer's."""
    nodes = body["nodes"]
    assert [n["id"] for n in nodes] == list(range(len(nodes)))
    assert len(nodes) <= body["max_nodes"]
    assert body["cut"] == any(n["cut"] for n in nodes)
    assert nodes[0]["position"] == body["position"]
    introduced = {0}
    for n in nodes:
        for m in n["children"]:
            assert 0 <= m["node"] < len(nodes)
            if m["ref"]:
                assert m["node"] in introduced or m["node"] <= n["id"]
            else:
                assert m["node"] not in introduced and m["node"] > n["id"]
                introduced.add(m["node"])
                assert nodes[m["node"]]["position"] not in {
                    nodes[i]["position"] for i in range(m["node"])
                }
    assert introduced == set(range(len(nodes)))
    positions = client.post(
        f"/api/games/{game}/positions",
        json={"params": params, "positions": [n["position"] for n in nodes]},
    ).get_json()["results"]
    for n, answer in zip(nodes, positions, strict=True):
        own = answer["chance"]
        assert {k: n[k] for k in own} == own  # the same values, expected plies included
        if n["cut"]:
            assert n["children"] == [] and n["kind"] != "terminal"
        elif n["kind"] == "terminal":
            assert n["children"] == []
        elif n["kind"] == "decision":
            (move,) = n["children"]
            assert move["probability"] is None
            assert move["move"] == answer["moves"][0]["move"]  # the best move
            assert nodes[move["node"]]["position"] == answer["moves"][0]["position"]
        else:
            assert [m["move"] for m in n["children"]] == [m["move"] for m in answer["moves"]]
            assert sum(Fraction(m["probability"]) for m in n["children"]) == 1
            for m, outcome in zip(n["children"], answer["moves"], strict=True):
                assert m["probability"] == outcome["chance"]["probability"]


def test_the_strategy_of_coin_nim_is_the_whole_tree(chance_client: FlaskClient) -> None:
    body = strategy(chance_client, "coin-nim", p="10:first", n=10, max_nodes=1000)
    assert (body["game"], body["params"], body["max_nodes"]) == ("coin-nim", {"n": 10}, 1000)
    assert body["cut"] is False
    check_tree(chance_client, "coin-nim", {"n": 10}, body)
    root = body["nodes"][0]
    assert (root["kind"], root["value"]) == ("chance", "3/16")
    assert [(m["move"], m["probability"]) for m in root["children"]] == [
        ("heads", "1/2"),
        ("tails", "1/2"),
    ]
    # Coin nim is acyclic: every expectation is exact, and the tree's equations hold.
    nodes = body["nodes"]
    for n in nodes:
        plies = Fraction(n["plies_exact"])
        assert n["plies"] == float(plies)
        kids = [
            (m["probability"], Fraction(nodes[m["node"]]["plies_exact"])) for m in n["children"]
        ]
        if n["kind"] == "decision":
            assert plies == 1 + kids[0][1]
        elif n["kind"] == "chance":
            assert plies == sum(Fraction(p) * e for p, e in kids)
        else:
            assert plies == 0
    # Transpositions (the same pile reached by different takes) are refs, not repeats.
    assert any(m["ref"] for n in nodes for m in n["children"])
    assert len({n["position"] for n in nodes}) == len(nodes)


def test_by_hand_from_three_stones(chance_client: FlaskClient) -> None:
    body = strategy(chance_client, "coin-nim", p="3:first", n=10)
    nodes = {n["position"]: n for n in body["nodes"]}
    assert nodes["3:first"]["plies_exact"] == "3/2"  # heads: 1 + 1, tails: 1
    (heads,) = nodes["3:first:heads"]["children"]
    (tails,) = nodes["3:first:tails"]["children"]
    assert (heads["move"], tails["move"]) == ("1", "3")


def test_pig_strategy_with_cycles_and_a_node_limit(chance_client: FlaskClient) -> None:
    params = {"target": 12, "faces": 4}
    body = strategy(chance_client, "pig", p="0-0:first:0", max_nodes=20, **params)
    assert body["cut"] is True and len(body["nodes"]) <= 20
    check_tree(chance_client, "pig", params, body)
    cut = [n for n in body["nodes"] if n["cut"]]
    assert cut and all(n["children"] == [] for n in cut)
    # A roll of 1 passes the turn at the same scores: a cycle, so a ref back.
    whole = strategy(chance_client, "pig", p="0-0:first:0", max_nodes=1000, **params)
    assert len(whole["nodes"]) > len(body["nodes"])
    check_tree(chance_client, "pig", params, whole)
    assert any(m["ref"] and m["node"] <= n["id"] for n in whole["nodes"] for m in n["children"])
    root = whole["nodes"][0]
    assert root["plies_exact"] is None and root["plies"] > 1  # on a cycle: a float
    # The smallest tree: the start alone, cut.
    one = strategy(chance_client, "pig", p="0-0:first:0", max_nodes=1, **params)
    assert [(n["id"], n["cut"], n["children"]) for n in one["nodes"]] == [(0, True, [])]
    # The default limit.
    assert strategy(chance_client, "pig", p="0-0:first:0", **params)["max_nodes"] == 200


def test_a_terminal_position_is_a_tree_of_one(chance_client: FlaskClient) -> None:
    body = strategy(chance_client, "coin-nim", p="0:second", n=10)
    assert body["cut"] is False
    assert [(n["kind"], n["children"], n["plies"]) for n in body["nodes"]] == [
        ("terminal", [], 0.0)
    ]


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ({"p": "10:first", "n": 10, "max_nodes": 0}, 400, "between 1 and 1000"),
        ({"p": "10:first", "n": 10, "max_nodes": 1001}, 400, "between 1 and 1000"),
        ({"p": "10:first", "n": 10, "max_nodes": "many"}, 400, "must be an integer"),
        ({"p": "x", "n": 10}, 400, "expected a pile"),
        ({"n": 10}, 400, "missing query parameter 'p'"),
        ({"p": "10:first", "n": 10, "bound": "low"}, 400, "bound"),
        ({"p": "9:first", "n": 9}, 404, "has not been solved"),
    ],
)
def test_bad_strategy_requests(
    chance_client: FlaskClient, query: dict[str, object], status: int, words: str
) -> None:
    r = chance_client.get("/api/games/coin-nim/strategy", query_string=query)
    assert r.status_code == status
    assert_error(status, r.get_json(), status, words)


def test_a_game_without_chance_has_no_strategy(empty_url: str) -> None:
    solve_into(empty_url, "tic-tac-toe", {}, True)
    with make_app(empty_url) as app:
        r = app.test_client().get(
            "/api/games/tic-tac-toe/strategy", query_string={"p": "........."}
        )
    assert r.status_code == 400
    assert_error(400, r.get_json(), 400, "tic-tac-toe has no chance nodes", "/line")
