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
from db.models import Commit, Tier, Variant
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve
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


# -- tiered solves: ids in solve order, replayed tier by tier --------------------------------


def reachable_by_marks(game: str = "tic-tac-toe") -> dict[int, set[str]]:
    """Oracle: every position reachable from the empty board, by its number of marks
    (tic-tac-toe's tiers), found by walking the rules."""
    g = get_game(game)
    seen = {g.initial()}
    layer = [g.initial()]
    while layer:
        layer = [
            c
            for k in layer
            if g.terminal_value(k) is None
            for _, c in g.children(k)
            if c not in seen
        ]
        layer = list(dict.fromkeys(layer))
        seen.update(layer)
    by: dict[int, set[str]] = {}
    for k in seen:
        text = g.format(k)
        by.setdefault(sum(ch != "." for ch in text if ch != "/"), set()).add(text)
    return by


def test_a_tiered_solve_is_replayed_tier_by_tier(client: FlaskClient) -> None:
    """Commit k of tic-tac-toe's tiered solve discovered the positions of k - 1 marks:
    its graph is the positions of fewer than k marks (not the first node ids, which are
    in solve order), none expanded, no moves; commits past 500 positions are summaries."""
    oracle = reachable_by_marks()
    first = Replay.model_validate(
        client.get(URL.format(game="tic-tac-toe"), query_string={"commit": 1}).get_json()
    )
    assert [t.tier for t in first.tiers] == list(range(10))
    assert [t.nodes for t in first.tiers] == [len(oracle[m]) for m in range(10)]
    for c in first.commits:
        step = Replay.model_validate(
            client.get(URL.format(game="tic-tac-toe"), query_string={"commit": c.seq}).get_json()
        )
        discovered = [t for t in step.tiers if t.discovered_in <= c.seq]
        assert c.nodes == sum(t.nodes for t in discovered)
        if c.nodes > 500:
            assert not step.drawn and step.nodes == [] and step.edges == []
            assert step.not_drawn is not None
            assert f"commit {c.seq} holds {c.nodes:,} positions" in step.not_drawn
            assert "at most 500 (the last that fits is 4)" in step.not_drawn
            continue
        assert step.drawn and step.not_drawn is None
        marks = {t.tier for t in discovered}
        assert {n.position for n in step.nodes} == set().union(*(oracle[m] for m in marks))
        assert step.root is not None
        root = next(n for n in step.nodes if n.id == step.root)
        assert root.position == ".../.../..." and root.state == "unexpanded"
        assert step.edges == []  # discovery stores no moves
        for t in discovered:
            ids = set(range(t.first_id or 0, (t.first_id or 0) + t.nodes))
            assert {n.id for n in step.nodes if n.id in ids} == ids
    # the root's tier is solved last: its bounds are open before, exact from then on
    root_tier = first.tiers[0]
    assert root_tier.solved_in == len(first.commits)
    bounds = [(c.root_low, c.root_high, c.root_low_final, c.root_high_final) for c in first.commits]
    assert bounds[:-1] == [(None, None, False, False)] * (len(bounds) - 1)
    assert bounds[-1] == (0, 0, True, True)


def test_a_small_tiered_solve_draws_its_solved_tiers(tmp_path: Path) -> None:
    """connect-four 3 x 2 fits whole: each solve commit adds its tier's moves, and the
    recomputed bounds of a solved tier's positions are the stored ones."""
    url = f"sqlite:///{tmp_path / 'small.db'}"
    upgrade(url)
    solve_into(url, "connect-four", {"width": 3, "height": 2}, True)
    with make_app(url) as app:
        client = app.test_client()
        query = {"width": 3, "height": 2}
        last = Replay.model_validate(
            client.get(URL.format(game="connect-four"), query_string=query).get_json()
        )
        assert last.drawn and last.commit == len(last.commits)
        solved_at = {t.solved_in: t for t in last.tiers}
        for c in last.commits:
            step = Replay.model_validate(
                client.get(
                    URL.format(game="connect-four"), query_string={**query, "commit": c.seq}
                ).get_json()
            )
            solved = [t for t in step.tiers if t.solved_in is not None and t.solved_in <= c.seq]
            expanded = {n.id for n in step.nodes if n.state == "expanded"}
            assert {e.parent for e in step.edges} == expanded
            assert len(step.edges) == sum(t.edges or 0 for t in solved) == c.edges
            fresh = solved_at.get(c.seq)
            if fresh is not None:  # this commit solved a tier: its positions are final
                ids = range(fresh.first_id or 0, (fresh.first_id or 0) + fresh.nodes)
                for n in (n for n in step.nodes if n.id in ids):
                    assert n.low_final and n.high_final
                    stored = client.get(
                        "/api/games/connect-four/positions", query_string={**query, "p": n.position}
                    ).get_json()
                    assert (n.low, n.high) == (stored["low"], stored["high"])
        root = next(n for n in last.nodes if n.id == last.root)
        assert (root.position, root.low, root.high) == (".../...", 0, 0)


def test_a_compact_variant_has_its_timeline_and_tiers_but_no_graph(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'compact.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        game = get_game("connect-four", width=3, height=3)
        solve(game, full=True, store=SqlStore(engine), layout="compact")
    finally:
        engine.dispose()
    with make_app(url) as app:
        r = app.test_client().get(
            URL.format(game="connect-four"), query_string={"width": 3, "height": 3}
        )
    step = Replay.model_validate(r.get_json())
    assert step.layout == "compact" and not step.drawn
    assert step.nodes == [] and step.edges == [] and step.root is None
    assert step.not_drawn is not None and "compact layout" in step.not_drawn
    assert "no per-position replay" in step.not_drawn
    assert step.commit == len(step.commits) == 20
    assert sum(t.nodes for t in step.tiers) == step.commits[-1].nodes == 869
    assert (step.commits[-1].root_low, step.commits[-1].root_high) == (0, 0)


def test_a_tiered_solve_in_progress_says_why_a_commit_is_not_drawn(tmp_path: Path) -> None:
    """Tiers not numbered yet (still discovering), or discovered but not solved (no node
    rows yet): the commit's graph is not drawn, and the answer says why."""
    url = f"sqlite:///{tmp_path / 'progress.db'}"
    upgrade(url)
    solve_into(url, "connect-four", {"width": 3, "height": 2}, True)
    query = {"width": 3, "height": 2, "commit": 3}
    engine = make_engine(url)
    with engine.begin() as conn:  # as if tier 2 were not solved yet
        conn.execute(update(Tier).where(Tier.tier == 2).values(solved_in=None, edges=None))
    engine.dispose()
    with make_app(url) as app:
        step = Replay.model_validate(
            app.test_client().get(URL.format(game="connect-four"), query_string=query).get_json()
        )
    assert not step.drawn and step.nodes == []
    assert step.not_drawn == (
        "the positions of tier 2 are not written yet (they are, whole, when the solve "
        "solves their tier)"
    )
    engine = make_engine(url)
    with engine.begin() as conn:  # as if the last tiers were not all discovered yet
        conn.execute(update(Tier).values(first_id=None))
    engine.dispose()
    with make_app(url) as app:
        step = Replay.model_validate(
            app.test_client().get(URL.format(game="connect-four"), query_string=query).get_json()
        )
    assert step.not_drawn == (
        "commit 3's tiers have no node ids yet (the solve is still discovering)"
    )
