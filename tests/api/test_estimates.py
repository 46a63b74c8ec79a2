"""Estimates beyond the store: ``GET /api/games/<game>/estimate`` on the shared solved
databases (SQLite and PostgreSQL), and :func:`api.estimates.estimate_view` over a
partially solved SQLite file, whose proven values the search uses and never adds to."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlalchemy import func, select

from api.estimates import StoredValues, estimate_view, proven_value
from db.migrate import upgrade
from db.models import Node
from db.repository import find_variant, stored_positions
from db.session import make_engine, make_session_factory, session_scope
from db.store import SqlStore
from solver.estimate import estimate
from solver.games import get_game
from solver.negamax import solve
from tests.api.helpers import assert_error, make_app

EMPTY_7X6 = "/".join(["......."] * 6)


def get(client: FlaskClient, game: str, **query: Any) -> tuple[int, Any]:
    r = client.get(f"/api/games/{game}/estimate", query_string=query)
    return r.status_code, r.get_json()


def test_an_unsolved_game_is_estimated_and_labelled(client: FlaskClient) -> None:
    status, body = get(client, "connect-four", p=EMPTY_7X6, seconds=2)
    assert status == 200, body
    game = get_game("connect-four")
    assert body["best_move"] in dict(game.children(game.initial()))
    assert (body["kind"], body["searched"], body["exact"]) == ("estimate", True, False)
    assert body["proven_value"] is None and isinstance(body["score"], int)
    assert body["depth"] >= 1 and body["positions"] > 0 and body["rate"] > 0
    assert (body["stored"], body["low"], body["high"]) == (False, None, None)
    assert body["seconds"] < 2 + 30  # it returns; the margin only catches a hang


def test_a_decided_position_is_answered_from_the_database(client: FlaskClient) -> None:
    status, body = get(client, "tic-tac-toe", p="x../.o./...", depth=4)
    assert status == 200, body
    assert (body["kind"], body["searched"], body["proven_value"]) == ("proven", False, 0)
    assert (body["score"], body["depth"], body["positions"]) == (None, None, 0)
    assert (body["low"], body["high"], body["low_final"], body["high_final"]) == (0, 0, True, True)
    lookup = client.get("/api/games/tic-tac-toe/positions", query_string={"p": "x../.o./..."})
    assert body["best_move"] == lookup.get_json()["moves"][0]["move"]
    # a terminal position the database holds: its value, no move
    status, body = get(client, "tic-tac-toe", p="xxx/oo./...", seconds=1)
    assert status == 200, body
    assert (body["proven_value"], body["best_move"], body["searched"]) == (-1, None, False)


def test_a_depth_search_stops_at_the_server_limit(solved_url: str) -> None:
    with make_app(solved_url, MAX_ESTIMATE_SECONDS=0.2) as app:
        start = time.monotonic()
        status, body = get(app.test_client(), "connect-four", p=EMPTY_7X6, depth=200)
        assert time.monotonic() - start < 60  # it returns; the margin only catches a hang
    assert status == 200, body
    assert 1 <= body["depth"] < 200 and not body["exact"]


@pytest.mark.parametrize(
    ("game", "query", "status", "fragment"),
    [
        ("connect-four", {"p": EMPTY_7X6}, 400, "not neither"),
        ("connect-four", {"p": EMPTY_7X6, "depth": 2, "seconds": 1}, 400, "not both"),
        ("connect-four", {"p": EMPTY_7X6, "seconds": 6}, 400, "at most 5, not 6"),
        ("connect-four", {"p": EMPTY_7X6, "seconds": 0}, 400, "more than 0"),
        ("connect-four", {"p": EMPTY_7X6, "seconds": "soon"}, 400, "must be a number"),
        ("connect-four", {"p": EMPTY_7X6, "depth": 0}, 400, "between 1 and 200, not 0"),
        ("connect-four", {"depth": 2}, 400, "missing query parameter 'p'"),
        ("connect-four", {"p": "9", "depth": 2}, 400, "9"),
        ("nap", {"p": "{}", "depth": 2}, 400, "nap has no evaluation"),
        ("number-game", {"p": "13", "depth": 2}, 400, "gives endless play no value"),
        ("no-such-game", {"p": "1", "depth": 2}, 404, "no-such-game"),
    ],
)
def test_bad_requests(
    client: FlaskClient, game: str, query: dict[str, Any], status: int, fragment: str
) -> None:
    code, body = get(client, game, **query)
    assert_error(code, body, status, fragment)


# -- over a partial solve -------------------------------------------------------------------


@pytest.fixture(params=[False, True], ids=["plain", "symmetry"])
def partial(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, bool]:
    """A SQLite file holding tic-tac-toe (with symmetry or not) solved 60 expansions deep
    (the root undecided), and whether symmetry is on."""
    url = f"sqlite:///{tmp_path / 'partial.db'}"
    symmetry: bool = request.param
    upgrade(url)
    engine = make_engine(url)
    try:
        solve(get_game("tic-tac-toe", symmetry=symmetry), max_expansions=60, store=SqlStore(engine))
    finally:
        engine.dispose()
    return url, symmetry


def rows_and_digest(url: str) -> tuple[int, str]:
    engine = make_engine(url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            count = session.execute(select(func.count()).select_from(Node)).scalar_one()
    finally:
        engine.dispose()
    path = Path(url.removeprefix("sqlite:///"))
    return count, hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_search_uses_the_proven_values_and_writes_nothing(partial: tuple[str, bool]) -> None:
    url, symmetry = partial
    game = get_game("tic-tac-toe", symmetry=symmetry)
    before = rows_and_digest(url)
    engine = make_engine(url, read_only=True)
    try:
        with session_scope(make_session_factory(engine)) as session:
            variant = find_variant(session, game)
            assert variant is not None
            canonical = {game.canonical(k) for k in _all_keys(game)}  # as stored
            records = stored_positions(session, variant.id, canonical, game=game)
            proven = {k: v for k, r in records.items() if (v := proven_value(r)) is not None}
            assert proven and game.initial() not in proven
            for depth in (1, 2, 4):
                view = estimate_view(session, game, game.initial(), depth, None)
                by_dict = estimate(game, game.initial(), depth=depth, known=proven.get)
                assert (view.kind, view.stored, view.proven_value) == ("estimate", True, None)
                assert (view.score, view.best_move, view.depth, view.exact) == (
                    by_dict.score,
                    by_dict.best_move,
                    by_dict.depth,
                    by_dict.exact,
                )
            known = StoredValues(session, game, variant.id)
            assert all(known(k) == v for k, v in proven.items())
            assert all(known(k) is None for k in records.keys() - proven.keys())
    finally:
        engine.dispose()
    assert rows_and_digest(url) == before


def _all_keys(game: Any) -> set[int]:
    """Every position of *game* reachable from the start."""
    seen = {game.initial()}
    todo = [game.initial()]
    while todo:
        for _, c in game.children(todo.pop()):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return seen


def test_the_answer_lists_the_moves_and_the_positions_they_lead_to(client: FlaskClient) -> None:
    """Enough to play on from a position the database does not hold (both kinds)."""
    game = get_game("connect-four")
    status, body = get(client, "connect-four", p=EMPTY_7X6, seconds=1)
    assert status == 200, body
    expected = [{"move": m, "position": game.format(c)} for m, c in game.children(game.initial())]
    assert body["moves"] == expected and body["best_move"] in [m["move"] for m in expected]
    status, body = get(client, "tic-tac-toe", p="x../.o./...", depth=1)
    assert (status, body["kind"]) == (200, "proven"), body
    ttt = get_game("tic-tac-toe")
    key = ttt.parse("x../.o./...")
    assert body["moves"] == [{"move": m, "position": ttt.format(c)} for m, c in ttt.children(key)]
    status, body = get(client, "tic-tac-toe", p="xxx/oo./...", depth=1)  # terminal, stored
    assert (status, body["moves"]) == (200, []), body


def test_the_game_list_says_which_games_can_be_estimated(client: FlaskClient) -> None:
    games = {g["name"]: g for g in client.get("/api/games").get_json()["games"]}
    assert games["connect-four"]["estimates"] and games["tic-tac-toe"]["estimates"]
    assert not games["pig"]["estimates"] and not games["nap"]["estimates"]
    assert not games["number-game"]["estimates"]  # endless play has no value


def test_a_batch_names_the_initial_position_of_a_variant_not_stored(client: FlaskClient) -> None:
    r = client.post(
        "/api/games/connect-four/positions",
        json={"params": {"width": 5, "height": 3}, "positions": []},
    )
    assert r.status_code == 200 and r.get_json()["initial"] == "...../...../.....", r.get_json()
