"""Games of chance in the database (migration 0010): a full solve through the real
``negagraph solve`` writes every position's bounds exactly as the in-memory chance solver
finds them (``chance_nodes``: floats rounded outwards, exact fractions where known) and
every move's probability and change of player (``chance_edges``), on SQLite and
PostgreSQL; solving again writes nothing; what chance games cannot do yet is refused with
one line."""

from __future__ import annotations

import json
import math
import shutil
import signal
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from db.session import make_engine
from solver.chance.bounds import solve_graph
from solver.chance.build import expand_all
from solver.chance.plies import expected_plies
from solver.chance.rows import fraction_text
from solver.games import get_game
from tests.built_once import built_once
from tests.db.test_solve_cli import WAIT, last_run_id, run, start_solve

CASES = [
    ("coin-nim", {"n": 10}),  # acyclic: exact fractions
    ("dice-race", {"goal": 6, "faces": 4}),  # chance inside cycles: floats
]


def rows(url: str, sql: str) -> list[Any]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(text(sql)))
    finally:
        engine.dispose()


def param_args(params: dict[str, int]) -> list[str]:
    return [arg for k, v in params.items() for arg in ("-p", f"{k}={v}")]


@pytest.mark.parametrize(("name", "params"), CASES)
def test_a_stored_solve_holds_the_chance_solvers_values(
    db_url: str, name: str, params: dict[str, int]
) -> None:
    code, out, err = run("solve", name, *param_args(params), "--full", "--db", db_url, "--json")
    assert code == 0, err
    answer = json.loads(out)
    game = get_game(name, **params)
    graph = expand_all(game)
    solution = solve_graph(graph)
    assert answer["complete"] and answer["nodes"] == len(graph)
    assert answer["edges"] == graph.edges
    assert answer["chance"]["exact"] == solution.exact(0)
    assert answer["low"] == solution.low[0] and answer["high"] == solution.high[0]

    stored = rows(
        db_url,
        "SELECT c.id, c.low, c.high, c.low_exact, c.high_exact, c.player, c.chance, "
        "n.low, n.high, n.state, n.notation FROM chance_nodes c "
        "JOIN nodes n ON n.variant_id = c.variant_id AND n.id = c.id ORDER BY c.id",
    )
    assert [r[0] for r in stored] == list(range(len(graph)))
    for (
        node,
        low,
        high,
        low_exact,
        high_exact,
        player,
        chance,
        ilow,
        ihigh,
        state,
        notation,
    ) in stored:
        assert (low, high) == (solution.low[node], solution.high[node])
        assert low_exact == fraction_text(solution.exact_low[node])
        assert high_exact == fraction_text(solution.exact_high[node])
        assert player == graph.player[node]
        assert bool(chance) == (graph.kind[node] == 2)
        # The integer bounds every reader knows are the same, rounded outwards.
        assert (ilow, ihigh) == (math.floor(low), math.ceil(high))
        assert notation == game.format(graph.keys[node])
        assert state == (2 if node in graph.terminal else 1)
    edges = rows(
        db_url,
        "SELECT e.parent, e.move_order, e.child, c.probability, c.keeps_turn FROM edges e "
        "JOIN chance_edges c ON c.variant_id = e.variant_id AND c.parent = e.parent "
        "AND c.move_order = e.move_order ORDER BY e.parent, e.move_order",
    )
    assert len(edges) == graph.edges
    for i, (parent, order, child, probability, keeps) in enumerate(edges):
        assert i == graph.start[parent] + order and child == graph.child[i]
        assert probability == fraction_text(graph.probability[i])
        assert bool(keeps) == (graph.sign[i] > 0)
    # The analysts' view: the root's value.
    (view,) = rows(
        db_url,
        "SELECT kind, low, high, value, first_player_low FROM chance_values WHERE node_id = 0",
    )
    assert view[0] == answer["chance"]["kind"]
    assert view[1:3] == (solution.low[0], solution.high[0])
    if solution.exact(0):
        assert Fraction(view[3]) == solution.value(0)

    # Solving again recomputes and writes nothing.
    code, out, err = run("solve", name, *param_args(params), "--full", "--db", db_url, "--json")
    assert code == 0, err
    again = json.loads(out)
    assert again["expansions"] == 0 and again["nodes"] == answer["nodes"]
    assert rows(db_url, "SELECT count(*) FROM chance_nodes")[0][0] == len(graph)
    assert [r[0] for r in rows(db_url, "SELECT status FROM solve_runs ORDER BY id")] == [
        "complete",
        "complete",
    ]


def test_what_games_of_chance_cannot_do_is_one_error_line(db_url: str) -> None:
    code, out, err = run(
        "solve", "pig", "-p", "target=10", "--full", "--workers", "2", "--db", db_url
    )
    assert code == 1 and err.startswith("error: ") and "\n" not in err.strip()
    code, out, err = run("solve", "pig", "-p", "target=10", "--batch-size", "5", "--db", db_url)
    assert code == 1
    assert err.strip() == (
        "error: pig has chance nodes: its solve commits one batch at the end of the run, "
        "so it takes no batch size"
    )
    # The refused runs wrote no position.
    assert rows(db_url, "SELECT count(*) FROM nodes")[0][0] == 0


def by_key(url: str) -> dict[bytes, tuple[Any, ...]]:
    """Every stored position's row (nodes and chance_nodes) and moves, by key."""
    found = rows(
        url,
        "SELECT n.key, n.id, n.state, n.low, n.high, n.low_final, n.high_final, c.low, "
        "c.high, c.low_exact, c.high_exact, c.player, c.chance, c.plies, c.plies_exact "
        "FROM nodes AS n JOIN chance_nodes AS c ON c.variant_id = n.variant_id AND c.id = n.id",
    )
    keys = {r[1]: bytes(r[0]) for r in found}
    moves: dict[int, list[tuple[Any, ...]]] = {}
    for parent, order, child, move, probability, keeps in rows(
        url,
        "SELECT e.parent, e.move_order, e.child, e.move, c.probability, c.keeps_turn "
        "FROM edges AS e JOIN chance_edges AS c ON c.variant_id = e.variant_id AND "
        "c.parent = e.parent AND c.move_order = e.move_order ORDER BY e.parent, e.move_order",
    ):
        moves.setdefault(parent, []).append((order, keys[child], move, probability, keeps))
    # (state, bounds, flags), (exact bounds, player, kind, plies), floats, moves
    return {
        bytes(r[0]): (tuple(r[2:7]), tuple(r[9:]), (r[7], r[8]), tuple(moves.get(r[1], ())))
        for r in found
    }


def test_budgeted_partial_runs_then_a_full_one_store_the_full_solve(
    db_url: str, tmp_path: Path
) -> None:
    """Partial runs of Pig to 10 stopped by an expansion budget, continued to their end,
    then a full run: the database ends as a full solve's, position for position (by key:
    the ids are in the order the runs found them) and move for move."""
    args = ("solve", "pig", "-p", "target=10", "--db", db_url, "--json")
    answers = []
    for _ in range(20):
        code, out, err = run(*args, "--max-expansions", "400")
        assert code == 0, err
        answers.append(json.loads(out))
        if answers[-1]["complete"]:
            break
        assert answers[-1]["status"] == "budget" and answers[-1]["expansions"] == 400
        assert answers[-1]["chance"]["unexpanded"] > 0
    assert len(answers) > 2 and answers[-1]["complete"]
    stored = rows(db_url, "SELECT count(*) FROM nodes WHERE state = 0")[0][0]
    assert stored == answers[-1]["chance"]["unexpanded"] > 0  # left out for good
    assert rows(db_url, "SELECT count(*) FROM chance_values WHERE kind = 'unexpanded'") == [
        (stored,)
    ]
    full_url = f"sqlite:///{tmp_path / 'full.db'}"
    code, out, err = run("solve", "pig", "-p", "target=10", "--full", "--db", full_url, "--json")
    assert code == 0, err
    whole = json.loads(out)
    assert answers[-1]["chance"]["value"] == pytest.approx(whole["chance"]["value"], abs=1e-9)
    code, out, err = run(*args, "--full")
    assert code == 0, err
    continued = json.loads(out)
    assert continued["complete"] and continued["nodes"] == whole["nodes"]
    assert continued["expansions"] == whole["nodes"] - sum(a["expansions"] for a in answers)
    mine, theirs = by_key(db_url), by_key(full_url)
    assert mine.keys() == theirs.keys()
    for key, (ints, exact, floats, moves) in mine.items():
        t_ints, t_exact, t_floats, t_moves = theirs[key]
        assert ints == t_ints and moves == t_moves
        # Exact values are equal; on cycles the floats differ within the tolerance (the
        # sweeps ran over graphs numbered otherwise).
        assert exact[:4] == t_exact[:4]  # exact bounds, player, kind
        assert exact[4] == t_exact[4] or math.isclose(exact[4], t_exact[4], rel_tol=1e-8)
        assert exact[5] == t_exact[5]
        assert floats == pytest.approx(t_floats, abs=2e-9)
    code, out, err = run(*args, "--full")
    assert code == 0 and json.loads(out)["expansions"] == 0
    assert rows(db_url, "SELECT count(*) FROM commits")[0][0] == len(answers) + 1


def test_query_shows_exact_values_and_probabilities(db_url: str) -> None:
    code, _, err = run("solve", "coin-nim", "-p", "n=10", "--full", "--db", db_url)
    assert code == 0, err
    code, out, err = run("query", "coin-nim", "10:first", "-p", "n=10", "--db", db_url)
    assert code == 0, err
    assert "chance node, first's; value for first: 3/16" in out
    assert "heads    1/2  3/16" in out
    code, out, err = run("query", "coin-nim", "4:first:heads", "-p", "n=10", "--db", db_url)
    assert code == 0, err
    moves = [line.split()[:2] for line in out.splitlines() if "-> " in line]
    assert moves == [["1", "0"], ["2", "-1"]]  # take 1: worth 0; take 2: a loss
    # The expected plies under optimal play, by hand from 3 stones (heads: take 1, then
    # the opponent's one ply; tails: take 3): (2 + 1) / 2.
    code, out, err = run("query", "coin-nim", "3:first", "-p", "n=10", "--db", db_url)
    assert code == 0, err
    assert "expected plies to the end under optimal play: 3/2" in out


def test_the_tolerance_sets_how_close_the_bounds_come(db_url: str) -> None:
    code, out, err = run(
        "solve",
        "dice-race",
        "-p",
        "goal=6",
        "--full",
        "--tolerance",
        "1e-3",
        "--db",
        db_url,
        "--json",
    )
    assert code == 0, err
    loose = json.loads(out)
    assert loose["chance"]["tolerance"] == 1e-3
    assert 0 < loose["high"] - loose["low"] <= 1e-3
    tight = solve_graph(expand_all(get_game("dice-race", goal=6)), tolerance=1e-12)
    # Both are sound: each bracket holds the tighter one.
    assert loose["low"] <= tight.low[0] <= tight.high[0] <= loose["high"]
    code, _, err = run("solve", "tic-tac-toe", "--full", "--tolerance", "1e-3", "--db", db_url)
    assert code == 1
    assert err.strip() == "error: tolerance is for games of chance; tic-tac-toe's values are exact"
    code, _, err = run("solve", "pig", "--full", "--tolerance", "0", "--db", db_url)
    assert code == 1 and err.startswith("error: Invalid value for '--tolerance'")


@pytest.mark.parametrize(
    ("name", "params"), [*CASES, ("coin-nim", {"n": 3}), ("pig", {"target": 8, "faces": 3})]
)
def test_each_position_stores_the_expected_plies_of_the_optimal_strategy(
    db_url: str, name: str, params: dict[str, int]
) -> None:
    code, out, err = run("solve", name, *param_args(params), "--full", "--db", db_url, "--json")
    assert code == 0, err
    answer = json.loads(out)
    graph = expand_all(get_game(name, **params))
    plies = expected_plies(solve_graph(graph))
    stored = rows(db_url, "SELECT id, plies, plies_exact FROM chance_nodes ORDER BY id")
    assert len(stored) == len(graph)
    for node, value, exact in stored:
        assert exact == fraction_text(plies.exact[node])
        if math.isinf(plies.plies[node]):
            assert value is None
        else:
            assert value == plies.plies[node]
    (view,) = rows(db_url, "SELECT plies, plies_exact FROM chance_values WHERE node_id = 0")
    assert view == tuple(stored[0][1:])
    assert answer["chance"]["plies"] == stored[0][1]
    assert answer["chance"]["plies_exact"] == stored[0][2]
    if name == "coin-nim" and params["n"] == 3:
        # By hand: heads finds both moves lost and takes 1 (then the opponent's one ply
        # ends it), tails takes all 3: (2 + 1) / 2.
        assert stored[0][2] == "3/2" and stored[0][1] == 1.5
    if name != "coin-nim":  # cycles through chance nodes: floats only, finite
        assert stored[0][2] is None and stored[0][1] > 0


KILLED_ARGS = ("pig", "-p", "target=30", "--json")
KILLED_BUDGET = ("--max-expansions", "8000")


@pytest.fixture(scope="session")
def uninterrupted_pair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a SQLite database where a budgeted run then a complete one of
    :data:`KILLED_ARGS` ran uninterrupted: built once for the whole session (across
    xdist's workers, under a file lock), read-only; each test copies it."""

    def build(folder: Path) -> None:
        url = f"sqlite:///{folder / 'reference.db'}"
        for extra in (KILLED_BUDGET, ()):
            code, _, err = run("solve", *KILLED_ARGS, *extra, "--db", url)
            assert code == 0, err

    return built_once(tmp_path_factory, "chance-uninterrupted-pair", build)


@pytest.mark.slow
def test_a_killed_chance_run_loses_only_its_own_expansions(
    db_url: str, tmp_path: Path, uninterrupted_pair: Path
) -> None:
    """kill -9 in the middle of a partial run continuing a budgeted one: the database
    keeps what the first run committed, untouched, and the same command again ends
    exactly where an uninterrupted pair of runs does (same ids, same rows; that pair's
    database is built once per session, :func:`uninterrupted_pair`)."""
    args = KILLED_ARGS
    budget = KILLED_BUDGET
    code, out, err = run("solve", *args, *budget, "--db", db_url)
    assert code == 0 and json.loads(out)["status"] == "budget", err
    committed = by_key(db_url)
    after = last_run_id(db_url)
    proc = start_solve(*args, "-q", "--db", db_url)
    deadline = time.monotonic() + WAIT
    while last_run_id(db_url) == after:  # the run has opened the variant: kill it
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=WAIT)
    assert rows(db_url, f"SELECT status FROM solve_runs WHERE id > {after}") == [("running",)]
    assert by_key(db_url) == committed
    code, out, err = run("solve", *args, "--db", db_url)
    assert code == 0 and json.loads(out)["complete"], err

    shutil.copytree(uninterrupted_pair, tmp_path / "pair")
    reference = f"sqlite:///{tmp_path / 'pair' / 'reference.db'}"
    ids = "SELECT id, key FROM nodes ORDER BY id"
    assert [(i, bytes(k)) for i, k in rows(db_url, ids)] == [
        (i, bytes(k)) for i, k in rows(reference, ids)
    ]
    assert by_key(db_url) == by_key(reference)


def test_a_second_root_for_a_stored_chance_variant_is_one_error_line(db_url: str) -> None:
    code, _, err = run("solve", "pig", "-p", "target=10", "--db", db_url)
    assert code == 0, err
    before = rows(db_url, "SELECT count(*) FROM nodes")
    code, _, err = run("solve", "pig", "-p", "target=10", "--root", "3-0:first:0", "--db", db_url)
    assert code == 1
    assert err.strip() == (
        "error: pig: this variant is stored from the position '0-0:first:0'; a game of "
        "chance is solved from one root per variant, not also from '3-0:first:0' (use "
        "another database)"
    )
    assert rows(db_url, "SELECT count(*) FROM nodes") == before
