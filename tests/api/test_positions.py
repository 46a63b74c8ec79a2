"""GET /api/games/<game>/positions: the answer's shape and meaning, and every error."""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from api.cli import cli
from api.database import get_database
from api.params import GAME_CACHE_SIZE, configured_game
from db.session import make_engine
from db.store import SqlStore
from solver.errors import InvalidParameterError
from solver.game import GameBase
from solver.games import find_game, get_game
from solver.negamax import solve
from solver.strategy import Child, move_sort_key
from solver.values import DEPTH_INF, NEG_INF, POS_INF
from tests.api.helpers import assert_error, make_app

FIELDS = {
    "low",
    "high",
    "low_final",
    "high_final",
    "value",
    "repetition_value",
    "depth_low",
    "depth_high",
    "state",
}
MOVE_FIELDS = FIELDS | {"move", "position", "move_low", "move_high"}


def lookup(client: FlaskClient, game: str, p: str, **params: Any) -> tuple[int, Any]:
    r = client.get(f"/api/games/{game}/positions", query_string={"p": p, **params})
    assert r.mimetype == "application/json"
    return r.status_code, r.get_json()


def test_tic_tac_toe_start_is_a_draw_with_every_move_listed(client: FlaskClient) -> None:
    status, body = lookup(client, "tic-tac-toe", ".........")
    assert status == 200
    # tic-tac-toe says who is to move: the bounds from the first player's side too
    first = {"to_move", "max_low", "max_high", "max_value"}
    assert set(body) == {"game", "params", "position", "moves"} | FIELDS | first
    assert (body["to_move"], body["max_low"], body["max_high"], body["max_value"]) == (
        "MAX",
        0,
        0,
        0,
    )
    assert body["game"] == "tic-tac-toe" and body["params"] == {"symmetry": False}
    assert body["position"] == ".../.../..."
    assert (body["low"], body["high"], body["value"]) == (0, 0, 0)
    assert body["low_final"] and body["high_final"]
    assert (body["depth_low"], body["depth_high"], body["state"]) == (9, 9, "expanded")
    assert body["repetition_value"] is None  # tic-tac-toe has no repetition rule
    assert len(body["moves"]) == 9
    for m in body["moves"]:
        assert set(m) == MOVE_FIELDS | first
        assert m["to_move"] == "MIN"
        assert m["move_low"] == -m["high"] and m["move_high"] == -m["low"]
    # The centre and the corners draw; the edges too (tic-tac-toe is a draw anyway).
    assert all(m["move_low"] == 0 for m in body["moves"])


def test_moves_are_best_first_and_describe_the_child(client: FlaskClient) -> None:
    status, body = lookup(client, "tic-tac-toe", "x........")  # O to move after a corner
    assert status == 200
    moves = body["moves"]
    assert moves[0]["move"] == "b2" and moves[0]["move_low"] == 0  # only the centre holds
    assert all(m["move_low"] == -1 for m in moves[1:])
    children = [
        Child(
            i,
            m["move"],
            m["position"],
            -m["move_high"],
            -m["move_low"],
            DEPTH_INF if m["depth_low"] is None else m["depth_low"],
            DEPTH_INF if m["depth_high"] is None else m["depth_high"],
            False,
            True,
        )
        for i, m in enumerate(moves)
    ]
    assert [move_sort_key(c) for c in children] == sorted(move_sort_key(c) for c in children)
    for m in moves:  # each child's own answer agrees with the move entry
        status, child = lookup(client, "tic-tac-toe", m["position"])
        assert status == 200
        assert {k: child[k] for k in FIELDS} == {k: m[k] for k in FIELDS}


def test_terminal_position_has_value_and_no_moves(client: FlaskClient) -> None:
    status, body = lookup(client, "tic-tac-toe", "xxx/oo./...")
    assert status == 200
    assert body["state"] == "terminal" and body["moves"] == []
    assert body["value"] == -1 and body["depth_low"] == 0 and body["depth_high"] == 0


def test_parameters_are_query_parameters(client: FlaskClient) -> None:
    status, body = lookup(client, "connect-four", "..../..../....", width=4, height=3)
    assert status == 200
    assert body["params"] == {"width": 4, "height": 3, "symmetry": False}
    assert body["position"] == "..../..../...." and body["value"] == 0
    assert sorted(m["move"] for m in body["moves"]) == ["1", "2", "3", "4"]
    assert body["moves"][0]["move_low"] == 0  # the best move keeps the draw
    # The move-sequence notation is accepted and answered in the grid notation.
    status, moved = lookup(client, "connect-four", "23", width="4", height="3")
    assert status == 200 and moved["position"] == "..../..../.xo."


def test_number_game_partial_bounds(client: FlaskClient) -> None:
    status, body = lookup(client, "number-game", "13")
    assert status == 200
    assert body["params"] == {"root": 13}
    assert (body["low"], body["high"], body["low_final"], body["high_final"]) == (3, 5, True, True)
    assert body["value"] is None
    status, frontier = lookup(client, "number-game", "59")  # stored but never expanded
    assert status == 200
    assert frontier["state"] == "unexpanded"
    assert frontier["low"] is None and frontier["high"] is None
    assert frontier["depth_low"] is None and not frontier["low_final"]
    states = {m["move"]: m["state"] for m in frontier["moves"]}
    assert states == {"61": "unexpanded", "63": "unknown"}  # 63 was never reached


def test_symmetric_variant_labels_moves_from_the_asked_position(client: FlaskClient) -> None:
    plain = lookup(client, "tic-tac-toe", "..x/.../...")[1]
    status, sym = lookup(client, "tic-tac-toe", "..x/.../...", symmetry="true")
    assert status == 200
    assert sym["position"] == "..x/.../..." and sym["params"] == {"symmetry": True}
    assert {m["move"]: m["position"] for m in sym["moves"]} == {
        m["move"]: m["position"] for m in plain["moves"]
    }
    assert [(m["move"], m["move_low"]) for m in sym["moves"]] == [
        (m["move"], m["move_low"]) for m in plain["moves"]
    ]


def test_same_shape_as_the_cli_query_json(client: FlaskClient, solved_url: str) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "query",
            "connect-four",
            "..../..../.x..",
            "-p",
            "width=4",
            "-p",
            "height=3",
            "--db",
            solved_url,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    status, body = lookup(client, "connect-four", "..../..../.x..", width=4, height=3)
    assert status == 200 and body == json.loads(result.stdout)


# -- errors ---------------------------------------------------------------------------------


def test_unknown_game_is_404(client: FlaskClient) -> None:
    assert_error(*lookup(client, "go", "x"), 404, "unknown game 'go'", "tic-tac-toe")


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"width": "wide"}, "must be an integer"),
        ({"width": 99}, "at most"),
        ({"symmetry": "maybe"}, "true or false"),
        ({"depth": 3}, "unknown parameter 'depth'"),
    ],
)
def test_bad_parameter_is_400(client: FlaskClient, params: dict[str, Any], fragment: str) -> None:
    assert_error(*lookup(client, "connect-four", "1", **params), 400, fragment)


def test_repeated_parameter_is_400(client: FlaskClient) -> None:
    r = client.get("/api/games/connect-four/positions?p=1&width=4&width=5")
    assert_error(r.status_code, r.get_json(), 400, "'width' is given more than once")


@pytest.mark.parametrize(
    ("game", "p", "fragment"),
    [
        ("tic-tac-toe", "xx", "expected 9 cells"),
        ("tic-tac-toe", "xxx/xxx/xxx", "impossible position"),
        ("tic-tac-toe", "", "empty position"),
        ("number-game", "-3", "positive integer"),
        ("number-game", "9" * 40, "larger than"),
        ("connect-four", "\x00", "invalid connect-four position"),
    ],
)
def test_malformed_position_is_400(client: FlaskClient, game: str, p: str, fragment: str) -> None:
    assert_error(*lookup(client, game, p), 400, "invalid", fragment)


def test_missing_position_argument_is_400(client: FlaskClient) -> None:
    r = client.get("/api/games/tic-tac-toe/positions")
    assert_error(r.status_code, r.get_json(), 400, "missing query parameter 'p'")


def test_position_not_stored_is_404_never_a_value(client: FlaskClient) -> None:
    # 63 was never reached by the partial solve from 13.
    assert_error(
        *lookup(client, "number-game", "63"), 404, "'63'", "not in the database", "never reached"
    )
    # A variant that was never solved at all.
    assert_error(
        *lookup(client, "connect-four", "1", width=5, height=4),
        404,
        "has not been solved in this database",
    )


def test_rules_version_mismatch_is_409(empty_url: str) -> None:
    engine = make_engine(empty_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO variants (game, params, params_json, rules_version, "
                    "created_at) VALUES ('tic-tac-toe', 'symmetry=false', "
                    "'{\"symmetry\": false}', 99, CURRENT_TIMESTAMP)"
                )
            )
    finally:
        engine.dispose()
    with make_app(empty_url) as app:
        client = app.test_client()
        assert_error(*lookup(client, "tic-tac-toe", "........."), 409, "rules version 99")
        r = client.post("/api/games/tic-tac-toe/positions", json={"positions": ["........."]})
        assert_error(r.status_code, r.get_json(), 409, "rules version 99")
        r = client.get("/api/games/tic-tac-toe/line", query_string={"p": "........."})
        assert_error(r.status_code, r.get_json(), 409, "rules version 99")
        games = client.get("/api/games").get_json()["games"]
        ttt = next(g for g in games if g["name"] == "tic-tac-toe")
        assert ttt["variants"][0]["rules_version"] == 99
        assert ttt["variants"][0]["compatible"] is False


def test_infinite_bounds_are_null_never_sentinels(client: FlaskClient) -> None:
    status, body = lookup(client, "number-game", "57")  # expanded, next to the frontier
    assert status == 200
    numbers = [body["low"], body["high"]] + [
        v for m in body["moves"] for v in (m["low"], m["high"], m["move_low"], m["move_high"])
    ]
    assert None in numbers
    assert all(v is None or abs(v) < 1000 for v in numbers)
    assert NEG_INF not in numbers and POS_INF not in numbers


# -- what a worker keeps between requests -----------------------------------------------------


def test_lookups_see_what_a_solve_stores_after_them(empty_url: str) -> None:
    """The API serves databases that a solve may still be extending: a worker that has
    answered lookups (keeping the game and the variant) still answers each one from the
    database as it is now — a variant solved later, positions stored later, bounds
    tightened later — exactly as a fresh app does."""
    game = get_game("connect-four", width=4, height=3)
    params = {"width": 4, "height": 3}
    root = game.format(game.initial())
    engine = make_engine(empty_url)
    try:
        with make_app(empty_url) as app:
            client = app.test_client()
            assert_error(
                *lookup(client, "connect-four", root, **params),
                404,
                "has not been solved in this database",
            )

            # untiered: a tiered solve stores no position before it solves its tier
            solve(game, full=True, max_expansions=50, store=SqlStore(engine), tiers=False)
            status, partial = lookup(client, "connect-four", root, **params)
            assert status == 200 and not (partial["low_final"] and partial["high_final"])
            with engine.connect() as conn:
                stored_before = conn.execute(text("SELECT max(id) FROM nodes")).scalar()
            assert isinstance(stored_before, int)

            solve(game, full=True, store=SqlStore(engine))
            with engine.connect() as conn:
                later = conn.execute(
                    text(
                        "SELECT notation FROM nodes WHERE id > :id AND state = 1 "
                        "ORDER BY id LIMIT 1"
                    ),
                    {"id": stored_before},
                ).scalar()
            assert isinstance(later, str)
            answers = [lookup(client, "connect-four", p, **params) for p in (root, later)]
        with make_app(empty_url) as fresh:
            fresh_client = fresh.test_client()
            expected = [lookup(fresh_client, "connect-four", p, **params) for p in (root, later)]
    finally:
        engine.dispose()
    assert answers == expected
    assert answers[0][1]["value"] == 0 and answers[0][1]["low_final"]
    assert answers[1][0] == 200


def test_games_are_made_once_per_thread_and_parameters() -> None:
    cls = find_game("connect-four")
    first = configured_game(cls, {"width": "4", "height": "3"})
    assert configured_game(cls, {"height": "3", "width": "4"}) is first
    assert configured_game(cls, {"width": "4", "height": "4"}) is not first
    # The same parameters with other types are other keys (True == 1, yet not a width).
    assert configured_game(cls, {"width": 4, "height": 3}) is not first
    with pytest.raises(InvalidParameterError):
        configured_game(cls, {"width": True})
    with pytest.raises(InvalidParameterError):  # errors are never kept
        configured_game(cls, {"width": True})
    # Games keep scratch state (chess: a board), so threads never share one.
    other: list[GameBase] = []
    thread = threading.Thread(
        target=lambda: other.append(configured_game(cls, {"width": "4", "height": "3"}))
    )
    thread.start()
    thread.join()
    assert other[0] is not first and other[0] == first
    # Only the most recently used games are kept.
    others = list(itertools.product(range(4, 10), range(4, 10)))
    assert len(others) >= GAME_CACHE_SIZE
    for width, height in others:
        configured_game(cls, {"width": width, "height": height})
    assert configured_game(cls, {"width": "4", "height": "3"}) is not first


def test_a_driver_failure_in_a_lookup_is_503_and_frees_the_connection(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = get_database(app)
    dbapi = database.engine.dialect.loaded_dbapi

    def failing(*args: Any, **kwargs: Any) -> None:
        raise dbapi.OperationalError("secret failure")

    monkeypatch.setattr("api.database.fetch_positions", failing)
    client = app.test_client()
    r = client.get("/api/games/tic-tac-toe/positions", query_string={"p": "........."})
    assert_error(r.status_code, r.get_json(), 503, "database failed to answer")
    assert b"secret" not in r.data
    assert database.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    monkeypatch.undo()
    assert lookup(client, "tic-tac-toe", ".........")[0] == 200


def test_lookups_during_a_solve_only_see_bounds_tighten(empty_url: str) -> None:
    """Lookups answered while a solve commits batch after batch into the database: each
    answer is whole (a 404 before the solve reaches the position, then 200s), and the
    root's bounds never widen from one answer to the next."""
    game = get_game("connect-four", width=4, height=3)
    params = {"width": 4, "height": 3}
    root = game.format(game.initial())
    done = threading.Event()
    answers: list[tuple[int, Any]] = []
    with make_app(empty_url) as app:
        client = app.test_client()

        def read() -> None:
            while not done.is_set():
                answers.append(lookup(client, "connect-four", root, **params))

        reader = threading.Thread(target=read)
        reader.start()
        engine = make_engine(empty_url)
        try:
            solve(game, full=True, batch_size=1000, store=SqlStore(engine))
        finally:
            done.set()
            reader.join()
            engine.dispose()
        answers.append(lookup(client, "connect-four", root, **params))
    assert all(status in (200, 404) for status, _ in answers), answers[:3]
    found = [body for status, body in answers if status == 200]
    assert found and answers[-1][0] == 200
    assert [status for status, _ in answers] == sorted(
        (status for status, _ in answers), reverse=True
    )  # the 404s come first
    inf = float("inf")
    lows = [-inf if b["low"] is None else b["low"] for b in found]
    highs = [inf if b["high"] is None else b["high"] for b in found]
    assert lows == sorted(lows) and highs == sorted(highs, reverse=True)
    assert found[-1]["value"] == 0 and found[-1]["low_final"] and found[-1]["high_final"]
    assert all(len(b["moves"]) == 4 for b in found)
