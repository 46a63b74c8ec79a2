"""Health, the game list, solve runs, the database's state, and the app factory."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, g
from flask.testing import FlaskClient
from sqlalchemy import text

from api import create_app
from api.database import get_database, get_session
from db.migrate import downgrade, head_revision
from db.session import make_engine
from db.store import SqlStore
from solver.games import GAMES, get_game
from solver.negamax import solve
from solver.store import Progress
from tests.api.helpers import assert_error, make_app

# -- health -----------------------------------------------------------------------------------


def test_health_ok(client: FlaskClient, backend: str) -> None:
    r = client.get("/api/health")
    assert r.status_code == 200
    body = r.get_json()
    assert body["status"] == "ok" and "error" not in body
    db = body["database"]
    assert db["reachable"] and db["read_only"]
    assert db["backend"] == ("sqlite" if backend == "sqlite" else "postgresql")
    assert db["schema"] == {"revision": head_revision(), "head": head_revision(), "at_head": True}
    assert r.headers["Cache-Control"] == "no-store"


def test_database_not_at_head_is_503_everywhere(unmigrated_url: str) -> None:
    with make_app(unmigrated_url) as app:
        client = app.test_client()
        r = client.get("/api/health")
        assert r.status_code == 503
        body = r.get_json()
        assert body["status"] == "unavailable"
        assert body["database"]["reachable"] is True
        assert body["database"]["schema"]["at_head"] is False
        assert body["database"]["schema"]["revision"] is None
        assert_error(
            503, {"error": body["error"]}, 503, "not at schema head", "negagraph db upgrade"
        )
        for url in (
            "/api/games",
            "/api/games/tic-tac-toe/positions?p=.........",
            "/api/games/tic-tac-toe/line?p=.........",
            "/api/solves",
            "/api/solves/1",
        ):
            r = client.get(url)
            assert_error(r.status_code, r.get_json(), 503, "not at schema head")
        r = client.post("/api/games/tic-tac-toe/positions", json={"positions": ["........."]})
        assert_error(r.status_code, r.get_json(), 503, "not at schema head")
        # Still answered without the database: the documentation.
        assert client.get("/api/openapi.json").status_code == 200
        assert client.get("/api/docs").status_code == 200


def test_a_database_behind_the_head_is_503(empty_url: str) -> None:
    downgrade(empty_url, "base")
    with make_app(empty_url) as app:
        r = app.test_client().get("/api/games")
        assert_error(r.status_code, r.get_json(), 503, "not at schema head")


def test_upgrading_the_database_heals_a_running_app(unmigrated_url: str) -> None:
    from db.migrate import upgrade

    with make_app(unmigrated_url) as app:
        client = app.test_client()
        assert client.get("/api/games").status_code == 503
        upgrade(unmigrated_url)
        assert client.get("/api/games").status_code == 200
        assert client.get("/api/health").status_code == 200


def test_missing_sqlite_file_is_503_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    with make_app(f"sqlite:///{path}") as app:
        client = app.test_client()
        r = client.get("/api/health")
        assert r.status_code == 503
        assert "does not exist" in r.get_json()["error"]["message"]
        assert r.get_json()["database"]["reachable"] is False
        r = client.get("/api/games/tic-tac-toe/positions?p=.........")
        assert_error(r.status_code, r.get_json(), 503, "does not exist")
    assert not path.exists()


@pytest.mark.postgres
def test_unreachable_postgres_is_503() -> None:
    with make_app("postgresql://postgres@127.0.0.1:1/none") as app:
        r = app.test_client().get("/api/health")
        assert r.status_code == 503 and r.get_json()["database"]["reachable"] is False
        r = app.test_client().get("/api/solves")
        assert_error(r.status_code, r.get_json(), 503, "cannot use database")


def test_bad_database_url_is_503() -> None:
    with make_app("mysql://nobody@localhost/x") as app:
        r = app.test_client().get("/api/health")
        assert r.status_code == 503 and "unsupported database" in r.get_json()["error"]["message"]
        r = app.test_client().get("/api/games")
        assert_error(r.status_code, r.get_json(), 503, "unsupported database")


# -- games ------------------------------------------------------------------------------------


def test_games_lists_every_game_and_the_stored_variants(client: FlaskClient) -> None:
    r = client.get("/api/games")
    assert r.status_code == 200
    games = {entry["name"]: entry for entry in r.get_json()["games"]}
    assert list(games) == list(GAMES)
    for name, entry in games.items():
        described = GAMES[name].describe()
        assert {k: entry[k] for k in described} == described
        game = GAMES[name]()
        assert entry["initial"] == game.format(game.initial())
        assert entry["players"] == list(GAMES[name].players)
        assert entry["chance"] is GAMES[name].chance
        vr = GAMES[name].value_range
        assert entry["value_range"] == (None if vr is None else list(vr))
    assert games["chess"]["players"] == ["White", "Black"]
    assert games["pig"]["chance"] is True and games["tic-tac-toe"]["chance"] is False
    assert games["pig"]["value_range"] == [-1, 1]
    c4 = {p["name"]: p for p in games["connect-four"]["parameters"]}
    assert c4["width"]["default"] == 7 and c4["width"]["type"] == "int"
    ttt = {v["params_text"]: v for v in games["tic-tac-toe"]["variants"]}
    assert set(ttt) == {"symmetry=false", "symmetry=true"}
    plain = ttt["symmetry=false"]
    assert plain["nodes"] == 5478 and plain["compatible"] is True
    assert plain["params"] == {"symmetry": False}
    assert plain["root"] == ".../.../..."
    assert plain["root_bounds"] == {"low": 0, "high": 0, "low_final": True, "high_final": True}
    assert plain["last_run"]["status"] == "complete"
    number = games["number-game"]["variants"][0]
    assert number["root_bounds"] == {"low": 3, "high": 5, "low_final": True, "high_final": True}
    assert games["grundy"]["variants"] == []


# -- solve runs -------------------------------------------------------------------------------

RUN_FIELDS = {
    "id",
    "variant_id",
    "game",
    "params",
    "rules_version",
    "status",
    "started_at",
    "heartbeat_at",
    "finished_at",
    "root",
    "full",
    "max_expansions",
    "max_seconds",
    "expansions",
    "nodes_added",
    "edges_added",
    "nodes",
    "edges",
    "frontier",
    "root_bounds",
    "seconds",
    "rss_bytes",
    "memory_limit",
    "resident_nodes",
    "tiers_done",
    "tiers_total",
    "units_done",
    "units_total",
    "workers",
    "eta_seconds",
    "worker_units",
    "pid",
    "hostname",
}


def test_solves_list_and_detail(client: FlaskClient) -> None:
    r = client.get("/api/solves")
    assert r.status_code == 200
    body = r.get_json()
    runs = body["solves"]
    assert body["total"] == len(runs) == 4
    assert [run["id"] for run in runs] == sorted((run["id"] for run in runs), reverse=True)
    for run in runs:
        assert set(run) == RUN_FIELDS
        assert run["status"] == "complete" and run["finished_at"] is not None
        assert run["pid"] == os.getpid()
        # solved in this process, without a memory limit: the whole graph resident, or,
        # in a tiered full solve, a tier at a time (none held as the graph)
        assert run["rss_bytes"] > 0 and run["memory_limit"] is None
        tiered = run["tiers_total"] is not None
        assert run["resident_nodes"] == (None if tiered else run["nodes"])
        assert not tiered or run["tiers_done"] == run["tiers_total"] > 1
        assert run["eta_seconds"] is None  # ended: nothing left
    ttt = next(
        run for run in runs if run["game"] == "tic-tac-toe" and run["params"] == {"symmetry": False}
    )
    assert ttt["full"] is True and ttt["nodes"] == 5478 and ttt["frontier"] == 0
    assert (ttt["tiers_done"], ttt["tiers_total"]) == (10, 10)  # 0..9 marks
    # each tier a unit to write, then one to solve, all by this process
    assert (ttt["units_done"], ttt["units_total"], ttt["workers"]) == (10, 10, 1)
    [worker] = ttt["worker_units"]
    assert worker["worker"].endswith(f":{os.getpid()}")
    assert (worker["units"], worker["positions"]) == (20, 2 * 5478)
    assert ttt["root"] == ".../.../..." and ttt["root_bounds"]["low"] == 0
    one = client.get(f"/api/solves/{ttt['id']}")
    assert one.status_code == 200 and one.get_json() == ttt
    assert client.get("/api/solves?limit=1").get_json()["solves"] == runs[:1]


@pytest.mark.parametrize(
    "url",
    [
        "/api/solves/999999",
        "/api/solves/0",
        f"/api/solves/{2**31}",
        "/api/solves/-1",
        "/api/solves/x",
    ],
)
def test_unknown_solve_is_404(client: FlaskClient, url: str) -> None:
    r = client.get(url)
    assert_error(r.status_code, r.get_json(), 404)


def test_bad_limit_is_400(client: FlaskClient) -> None:
    r = client.get("/api/solves?limit=0")
    assert_error(r.status_code, r.get_json(), 400, "'limit' must be between 1 and 1000")


def test_progress_is_readable_while_a_solve_runs(empty_url: str) -> None:
    """A solve commits batch after batch; between them the API sees the run as running,
    with its progress so far."""
    seen: list[dict[str, Any]] = []
    with make_app(empty_url) as app:
        client = app.test_client()

        def progress(p: Progress) -> None:
            # Read from another thread, as another process would (own connection).
            def read() -> None:
                r = client.get("/api/solves")
                assert r.status_code == 200
                seen.extend(r.get_json()["solves"][:1])

            t = threading.Thread(target=read)
            t.start()
            t.join()

        engine = make_engine(empty_url)
        try:
            solve(
                get_game("connect-four", width=4, height=3),
                full=True,
                batch_size=2000,
                store=SqlStore(engine),
                progress=progress,
            )
        finally:
            engine.dispose()
        final = client.get("/api/solves").get_json()["solves"][0]
    assert len(seen) >= 3
    assert seen[0]["status"] == "running" and seen[0]["finished_at"] is None
    expansions = [run["expansions"] for run in seen]
    assert expansions == sorted(expansions) and expansions[0] < expansions[-1]
    assert final["status"] == "complete" and final["nodes"] == 12031


# -- the app factory and the database wiring --------------------------------------------------


def test_create_app_touches_no_database(tmp_path: Path) -> None:
    path = tmp_path / "later.db"
    app = create_app({"DATABASE_URL": f"sqlite:///{path}"})
    database = get_database(app)
    assert database._engine is None
    assert app.test_client().get("/api/openapi.json").status_code == 200
    assert database._engine is None and not path.exists()


def test_configuration_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEGAGRAPH_DATABASE_URL", "sqlite:///from-env.db")
    monkeypatch.setenv("NEGAGRAPH_MAX_BATCH", "50")
    app = create_app()
    assert app.config["DATABASE_URL"] == "sqlite:///from-env.db"
    assert app.config["MAX_BATCH"] == 50 and app.config["MAX_LINE_PLIES"] == 1000
    assert app.config["MAX_CONTENT_LENGTH"] == 1 << 20
    app = create_app({"MAX_BATCH": 7, "DATABASE_URL": "sqlite:///x.db"})
    assert app.config["MAX_BATCH"] == 7 and app.config["DATABASE_URL"] == "sqlite:///x.db"
    monkeypatch.delenv("NEGAGRAPH_DATABASE_URL")
    monkeypatch.delenv("NEGAGRAPH_MAX_BATCH")
    assert create_app().config["DATABASE_URL"] == "sqlite:///negagraph.db"


def test_api_connections_cannot_write(app: Flask) -> None:
    with app.app_context():
        session = get_session()
        with pytest.raises(Exception, match="(?i)read.only|readonly|query_only"):
            session.execute(text("DELETE FROM variants"))
    with app.app_context():
        session = get_session()
        assert session.execute(text("SELECT count(*) FROM variants")).scalar() == 4


def test_the_request_session_is_closed_at_teardown(app: Flask) -> None:
    with app.app_context():
        session = get_session()
        assert get_session() is session  # one per request
        session.execute(text("SELECT 1"))
        assert session.in_transaction()
    assert not session.in_transaction()
    with app.test_request_context():
        assert "db_session" not in g
