"""GET /api/games/{game}/replay: the number game from 13 stepped through commit by
commit. The oracle for every step is the solver itself: the bounds it recorded for the
root at each commit (``commits`` rows) must be what the replayed graph proves, and the
flags it recorded final must be final in the replay (the replay computes flags exactly,
the solver may lag)."""

from __future__ import annotations

from pathlib import Path

from flask.testing import FlaskClient
from sqlalchemy import delete, update

from api.schemas import Replay
from db.migrate import upgrade
from db.models import Commit, Variant
from db.session import make_engine
from tests.api.helpers import assert_error, make_app, solve_into

URL = "/api/games/{game}/replay"


def test_the_number_game_closes_at_3_and_5_at_its_last_commits(client: FlaskClient) -> None:
    last = Replay.model_validate(client.get(URL.format(game="number-game")).get_json())
    assert last.commit == len(last.commits) and last.root is not None
    root = last.nodes[last.root]
    assert root.position == "13"
    assert (root.low, root.high, root.low_final, root.high_final) == (3, 5, True, True)
    assert {n.position for n in last.nodes if n.state == "unexpanded"} >= {"59", "61"}
    assert len(last.nodes) == last.commits[-1].nodes == 30


def test_every_step_proves_what_the_solver_recorded(client: FlaskClient) -> None:
    first = Replay.model_validate(
        client.get(URL.format(game="number-game"), query_string={"commit": 1}).get_json()
    )
    expansions = 0
    for c in first.commits:
        step = Replay.model_validate(
            client.get(URL.format(game="number-game"), query_string={"commit": c.seq}).get_json()
        )
        assert step.commit == c.seq and len(step.nodes) == c.nodes
        assert step.root is not None
        root = step.nodes[step.root]
        assert (root.low, root.high) == (c.root_low, c.root_high)
        assert root.low_final >= c.root_low_final and root.high_final >= c.root_high_final
        fresh = [n for n in step.nodes if n.expanded_in == c.seq]
        expansions += len(fresh)
        assert all(n.state == "expanded" for n in fresh)
        assert all(n.expanded_in is None or n.expanded_in <= c.seq for n in step.nodes)
        # the moves are exactly those of the positions expanded by then
        parents = {e.parent for e in step.edges}
        assert parents == {n.id for n in step.nodes if n.state == "expanded"}
    assert expansions == 26  # one per commit, then the closing pass


def test_bad_requests(client: FlaskClient) -> None:
    for query, status, fragment in (
        ({"commit": 0}, 400, "'commit' must be between 1 and"),
        ({"commit": "last"}, 400, "'commit' must be an integer"),
        ({"commit": 10**6}, 400, "'commit' must be between 1 and"),
    ):
        r = client.get(URL.format(game="number-game"), query_string=query)
        assert_error(r.status_code, r.get_json(), status, fragment)
    # a tiered tablebase commits a tier at a time: the fifth (4 marks) is too large to draw
    r = client.get(URL.format(game="tic-tac-toe"), query_string={"commit": 5})
    assert_error(r.status_code, r.get_json(), 400, "holds 1,090 positions", "at most 500")
    r = client.get(URL.format(game="connect-four"), query_string={"width": 5, "height": 5})
    assert_error(r.status_code, r.get_json(), 404, "not in the database")
    r = client.get(URL.format(game="no-such-game"))
    assert r.status_code == 404


def test_a_variant_of_other_rules_is_a_409(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'other.db'}"
    upgrade(url)
    solve_into(url, "number-game", {}, False)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(update(Variant).values(rules_version=99))
    engine.dispose()
    with make_app(url) as app:
        r = app.test_client().get(URL.format(game="number-game"))
    assert_error(r.status_code, r.get_json(), 409, "rules version")


def test_a_variant_stored_before_0006_has_nothing_to_replay(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url)
    solve_into(url, "number-game", {}, False)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(delete(Commit))
    engine.dispose()
    with make_app(url) as app:
        r = app.test_client().get(URL.format(game="number-game"))
    assert_error(r.status_code, r.get_json(), 404, "no recorded commits", "0006")
