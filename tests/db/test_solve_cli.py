"""`negagraph solve/query/status/db` against real databases, in-process and as real
processes: resume after budgets, kill -9 and Ctrl-C; one writer per variant."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from api.cli import cli
from bench.soak import graph_rows, keyed, stored_rows
from db.session import make_engine
from solver.games import get_game
from solver.graph import Graph
from solver.negamax import solve
from solver.store import MemoryStore, Progress
from tests.api.helpers import make_app

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


# What the database must hold for a graph (as the uninterrupted solve built it), and what
# it holds: bench.soak's snapshots, shared so that the soak and the tests compare alike.
expected_rows = graph_rows


def stored_counts(url: str) -> tuple[int, int]:
    """The stored positions (node rows, and the positions a tiered solve has discovered
    and not solved yet) and edges."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            nodes, edges = conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM nodes) "
                    "+ (SELECT coalesce(sum(count), 0) FROM discovered_positions), "
                    "(SELECT count(*) FROM edges)"
                )
            ).one()
    finally:
        engine.dispose()
    return int(nodes), int(edges)


def reference(name: str, params: dict[str, Any], *, full: bool, batch: int | None) -> Graph:
    store = MemoryStore()
    solve(get_game(name, **params), full=full, store=store, batch_size=batch)
    (g,) = store.graphs.values()
    return g


def test_budgeted_runs_resume_to_the_uninterrupted_graph(db_url: str) -> None:
    args = [
        "solve",
        "connect-four",
        "-p",
        "width=4",
        "-p",
        "height=3",
        "--db",
        db_url,
        "--max-expansions",
        "150",
        "--json",
    ]
    statuses = []
    for _ in range(100):
        code, out, err = run(*args)
        assert code == 0, err
        statuses.append(json.loads(out)["status"])
        if statuses[-1] == "complete":
            break
    assert len(statuses) >= 5 and statuses[:-1] == ["budget"] * (len(statuses) - 1)
    g = reference("connect-four", {"width": 4, "height": 3}, full=False, batch=None)
    assert stored_rows(db_url) == expected_rows(g)
    # a finished solve does nothing more when run again
    code, out, _ = run(*args)
    assert code == 0 and json.loads(out)["expansions"] == 0


def test_query_and_status(db_url: str) -> None:
    code, _, err = run("solve", "tic-tac-toe", "--full", "--db", db_url)
    assert code == 0, err
    code, out, err = run("query", "tic-tac-toe", "x.o/.../...", "--db", db_url, "--json")
    assert code == 0, err
    view = json.loads(out)
    assert (view["value"], view["state"], view["position"]) == (1, "expanded", "x.o/.../...")
    assert view["repetition_value"] is None  # tic-tac-toe has no repetition rule
    best = view["moves"][0]
    assert best["move_low"] == 1 and best["move_high"] == 1
    assert [m["move_low"] for m in view["moves"]] == sorted(
        (m["move_low"] for m in view["moves"]), reverse=True
    )
    assert len(view["moves"]) == 7
    code, out, _ = run("query", "tic-tac-toe", "x.o/.../...", "--db", db_url)
    assert code == 0 and "value 1" in out and "moves, best first" in out
    code, out, _ = run("status", "--db", db_url, "--json")
    assert code == 0
    (variant,) = json.loads(out)["variants"]
    assert variant["game"] == "tic-tac-toe" and variant["nodes"] == 5478
    assert variant["root_bounds"]["low"] == 0 and variant["runs"][0]["status"] == "complete"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["query", "tic-tac-toe", "xx./oo./x.o"], "not in the database"),
        (["query", "connect-four", "4"], "has not been solved in this database"),
        (["query", "tic-tac-toe", "nonsense"], "tic-tac-toe"),
    ],
)
def test_query_errors(db_url: str, args: list[str], message: str) -> None:
    code, _, err = run("solve", "tic-tac-toe", "--db", db_url, "--max-expansions", "5")
    assert code == 0, err
    code, out, err = run(*args, "--db", db_url)
    assert code == 1
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_solve_creates_the_schema_in_an_empty_database_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    for args in (["query", "tic-tac-toe", "........."], ["status"]):
        code, _, err = run(*args, "--db", url)
        assert code == 1
        # readers never create the file: they say there is none, and how to make one
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
        assert "does not exist" in err and f"negagraph db upgrade --db {url}" in err
        assert not (tmp_path / "new.db").exists()
    (tmp_path / "new.db").touch()  # an empty file: no schema, left as it is by readers
    for args in (["query", "tic-tac-toe", "........."], ["status"]):
        code, _, err = run(*args, "--db", url)
        assert code == 1
        assert "not at schema head" in err and f"negagraph db upgrade --db {url}" in err
        assert (tmp_path / "new.db").stat().st_size == 0
    code, _, err = run("solve", "tic-tac-toe", "--db", url)
    assert code == 0 and "created the negagraph schema" in err
    code, _, err = run("solve", "tic-tac-toe", "--db", url)
    assert code == 0 and "created" not in err


def test_a_database_at_another_schema_revision_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'other.db'}"
    assert run("db", "upgrade", "--db", url)[0] == 0
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = 'f00dfeed'"))
    finally:
        engine.dispose()
    for args in (
        ["solve", "tic-tac-toe"],
        ["query", "tic-tac-toe", "........."],
        ["status"],
        ["db", "upgrade"],
    ):
        code, _, err = run(*args, "--db", url)
        assert code == 1 and err.startswith("error: ")
        assert "f00dfeed" in err and len(err.strip().splitlines()) == 1


def start_solve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [NEGAGRAPH, "solve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def committed_rows(url: str) -> int:
    """Stored nodes plus edges, the positions a tiered solve has discovered (which
    become nodes as their tier is solved) and the commits: every committed batch of
    expansions adds one commit (a tier solved from shards an earlier run wrote may add
    no row besides)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    text(
                        "SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM edges) "
                        "+ (SELECT coalesce(sum(count), 0) FROM discovered_positions) "
                        "+ (SELECT count(*) FROM commits)"
                    )
                ).scalar_one()
            )
    finally:
        engine.dispose()


def last_run_id(url: str) -> int:
    """The newest ``solve_runs`` id (0 if none): runs started later have larger ids."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(text("SELECT coalesce(max(id), 0) FROM solve_runs")).scalar_one()
            )
    finally:
        engine.dispose()


WAIT = 120.0
"""Seconds a test waits for an event of a real process (a commit, a line, an exit)."""


def wait_for_commit(
    url: str,
    proc: subprocess.Popen[str],
    after_run: int,
    expansions: int = 1,
    timeout: float = WAIT,
) -> bool:
    """Wait until the solve run that *proc* started (the first run with an id above
    *after_run*) has committed at least *expansions* expansions: the event kill and
    Ctrl-C tests act on, whatever the machine's speed. False if *proc* ended first."""
    engine = make_engine(url)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                done = conn.execute(
                    text("SELECT expansions FROM solve_runs WHERE id > :after ORDER BY id LIMIT 1"),
                    {"after": after_run},
                ).scalar()
            if done is not None and done >= expansions:
                return True
            if proc.poll() is not None:
                return False
            time.sleep(0.02)
    finally:
        engine.dispose()
    proc.kill()
    _, err = proc.communicate()
    raise AssertionError(
        f"solve pid {proc.pid} committed no {expansions} expansions within {timeout:.0f} s; "
        f"stderr: {err[-2000:]!r}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("full", [True, False], ids=["full", "partial"])
def test_kill_9_at_random_moments_loses_nothing_committed(db_url: str, full: bool) -> None:
    rng = random.Random(20261122)
    # Kills come after each run has committed a random number of batches (1 to 3, seen
    # in its run row), never at a time from its start: the same test on any machine.
    # 4x4 full is ~190 batches of 700 expansions, 5x4 partial ~220.
    width = 4 if full else 5
    batch = 700
    args = [
        "connect-four",
        "-p",
        f"width={width}",
        "-p",
        "height=4",
        "--db",
        db_url,
        "--batch-size",
        str(batch),
        "--json",
    ]
    if full:
        args.append("--full")
    kills = 0
    before = 0
    while kills < 6:
        after = last_run_id(db_url)
        proc = start_solve(*args)
        if not wait_for_commit(db_url, proc, after, rng.randint(1, 3) * batch):
            out, err = proc.communicate(timeout=WAIT)
            assert proc.returncode == 0, err
            break  # finished before the kill
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=WAIT)
        kills += 1
        now = committed_rows(db_url)
        assert now > before  # what was committed stays, and each run committed more
        before = now
    assert kills == 6 and before > 0
    proc = start_solve(*args)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert json.loads(out)["complete"] is True
    g = reference("connect-four", {"width": width, "height": 4}, full=full, batch=batch)
    if full:  # tiered: its ids in solve order, the reference's breadth first
        assert keyed(stored_rows(db_url)) == keyed(expected_rows(g))
    else:
        assert stored_rows(db_url) == expected_rows(g)
    if db_url.startswith("sqlite"):
        engine = make_engine(db_url)
        try:
            with engine.connect() as conn:
                assert conn.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"
        finally:
            engine.dispose()


def wait_for_running_run(url: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    engine = make_engine(url)
    try:
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                n = conn.execute(
                    text("SELECT count(*) FROM solve_runs WHERE status = 'running'")
                ).scalar_one()
            if n:
                return
            time.sleep(0.05)
    finally:
        engine.dispose()
    raise AssertionError(f"no solve run was recorded as running within {timeout:.0f} s")


@pytest.mark.slow
def test_a_running_tiered_solve_shows_the_time_it_still_needs(db_url: str) -> None:
    # Once every tier is discovered and one is solved, each commit records the time left
    # at the rate of solving so far: `status` (text and JSON) and /api/solves show it
    # while the run goes on, and nothing once it has ended.
    args = ["connect-four", "-p", "width=5", "-p", "height=4", "--full", "--db", db_url]
    proc = start_solve(*args, "--max-seconds", "600")
    engine = make_engine(db_url)
    eta = None
    try:
        deadline = time.monotonic() + 5 * WAIT
        while eta is None and time.monotonic() < deadline and proc.poll() is None:
            with engine.connect() as conn:
                eta = conn.execute(
                    text("SELECT eta_seconds FROM solve_runs WHERE status = 'running'")
                ).scalar()
            time.sleep(0.05)
        assert eta is not None and eta > 0, "no time left was recorded while solving tiers"
        code, out, err = run("status", "--db", db_url, "--json")
        assert code == 0, err
        (variant,) = json.loads(out)["variants"]
        (running,) = [r for r in variant["runs"] if r["status"] == "running"]
        assert running["eta_seconds"] > 0
        code, out, err = run("status", "--db", db_url)
        assert code == 0, err
        assert re.search(r"tiers \d+/\d+ (units \d+/\d+ )?~[\dhms]+ left", out), out
        with make_app(db_url) as app:
            (api_run,) = app.test_client().get("/api/solves").get_json()["solves"]
        assert api_run["status"] == "running" and api_run["eta_seconds"] > 0
    finally:
        proc.send_signal(signal.SIGINT)  # stopped: the run ends, recorded "stopped"
        proc.communicate(timeout=WAIT)
        engine.dispose()
    code, out, err = run("status", "--db", db_url, "--json")
    (variant,) = json.loads(out)["variants"]
    assert [r["eta_seconds"] for r in variant["runs"]] == [None]


def test_one_writer_per_variant_and_a_dead_writer_does_not_block(db_url: str) -> None:
    args = ["connect-four", "-p", "width=5", "-p", "height=4", "--full", "--db", db_url]
    first = start_solve(*args, "--max-seconds", "600")
    try:
        wait_for_running_run(db_url)
        code, _, err = run("solve", *args, "--max-expansions", "10")
        assert code == 1
        assert err.startswith("error: ") and "connect-four" in err
        assert str(first.pid) in err  # says who holds it
        # another variant is not blocked
        code, _, err = run("solve", "tic-tac-toe", "--db", db_url, "--max-expansions", "10")
        assert code == 0, err
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=WAIT)
    code, out, err = run("solve", *args, "--max-expansions", "10", "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == "budget"


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_stops_after_the_batch_and_says_how_to_continue(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    assert run("db", "upgrade", "--db", url)[0] == 0
    args = [
        "connect-four",
        "-p",
        "width=4",
        "-p",
        "height=4",
        "--full",
        "--no-tiers",  # batches and the resume file are the untiered run's
        "--db",
        url,
        "--batch-size",
        "2000",
    ]
    proc = start_solve(*args)
    assert wait_for_commit(url, proc, 0), proc.communicate()  # ~67 batches: one is done
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 130, err  # stopped, not finished: SIGINT's status
    assert "stopped on request" in err and "run the same command again" in err
    assert "Traceback" not in err
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT status FROM solve_runs")).scalar_one() == "stopped"
    finally:
        engine.dispose()
    kept = tmp_path / "c.db.resume-1"  # the graph as committed, for the next full run
    assert kept.exists()
    code, out, err = run("solve", *args[:-2], "--json")
    assert code == 0 and json.loads(out)["complete"]
    assert not kept.exists()


def solve_on_a_terminal(args: list[str]) -> tuple[subprocess.Popen[bytes], int]:
    """``negagraph solve`` with stderr on a pseudo-terminal (its progress line redrawn in
    place) and stdout a pipe: the process and the terminal's reading end."""
    import pty

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [NEGAGRAPH, "solve", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=secondary,
    )
    os.close(secondary)
    return proc, primary


def read_terminal(primary: int, until: Any, timeout: float = WAIT) -> str:
    """What the terminal shows until *until* (a test on all of it so far) is true, or the
    process's side closes (then all of it); an error after *timeout* seconds."""
    import select

    seen = b""
    deadline = time.monotonic() + timeout
    while not until(seen.decode(errors="replace")):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"not seen within {timeout:.0f} s: {seen[-300:]!r}")
        ready, _, _ = select.select([primary], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the process's side closed: it ended
            break
        if not chunk:
            break
        seen += chunk
    return seen.decode(errors="replace")


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
@pytest.mark.parametrize("stored", [True, False], ids=["db", "memory"])
def test_the_first_ctrl_c_exits_130_after_the_result(tmp_path: Path, stored: bool) -> None:
    # connect-four 5 x 4 in one pass: some 20 s of expanding, stopped at once. The first
    # Ctrl-C lets the run end as a stop: the result, a line saying it stopped (and how to
    # go on when it is stored), and SIGINT's exit status, 130, not a finished run's 0.
    url = f"sqlite:///{tmp_path / 'c.db'}"
    where = ["--db", url] if stored else ["--memory"]
    args = ["connect-four", "-p", "width=5", "-p", "height=4", "--full", "--no-tiers", *where]
    proc, primary = solve_on_a_terminal(args)
    try:
        shown = read_terminal(primary, lambda seen: re.search(r"  expanding(  |\s*$)", seen))
        proc.send_signal(signal.SIGINT)
        shown += read_terminal(primary, lambda seen: False)  # to the end
    finally:
        os.close(primary)
        out, _ = proc.communicate(timeout=WAIT)
    assert proc.returncode == 130, shown[-500:]
    assert "Traceback" not in shown
    assert "low -inf (not final), high +inf (not final)" in out.decode()  # the result
    (line,) = [x for x in shown.splitlines() if "stopped on request" in x]
    if stored:
        assert line.strip() == (
            "stopped on request after committing the last batch; run the same command "
            "again to continue"
        )
        assert run_status(url)["runs"][0]["status"] == "stopped"
    else:
        assert line.strip() == "stopped on request; nothing is stored (--memory)"
        assert not (tmp_path / "c.db").exists()


def test_chess_lookups_pick_the_table_from_the_fen(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'chess.db'}"
    code, _, err = run("solve", "chess", "-p", "material=KQvK", "--full", "--db", url)
    assert code == 0, err
    # no -p material: the FEN's material (KQvK) names the table
    code, out, err = run("query", "chess", "k7/8/1K6/8/8/8/8/6Q1 w - -", "--db", url, "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["params"]["material"] == "KQvK" and view["low"] == 1
    assert view["repetition_value"] == 1 and view["depth_low"] == 1
    assert view["moves"][0]["move"] == "g1g8"  # Qg8# first
    # a FEN of another material: not found, saying which table to solve
    code, _, err = run("query", "chess", "8/8/8/3k4/8/8/8/K6R w - -", "--db", url)
    assert code == 1
    assert "not found" in err and "negagraph solve chess -p material=KRvK" in err


def test_e_valuate_lookups_report_max_side_values(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ev.db'}"
    assert run("solve", "e-valuate", "--full", "--db", url)[0] == 0
    # MIN to move after MAX proposed 7: the mover's value is -18, MAX's is 18
    code, out, err = run("query", "e-valuate", "x=?,y=?,z=?;proposed=7", "--db", url, "--json")
    assert code == 0, err
    view = json.loads(out)
    assert (view["to_move"], view["value"], view["max_value"]) == ("MIN", -18, 18)
    code, out, _ = run("query", "e-valuate", "x=?,y=?,z=?", "--db", url)
    assert code == 0 and "MAX to move; from MAX's side: 18" in out


# -- progress output, and run records that tell the truth --------------------------------


def read_lines_until(stream: Any, found: Any, timeout: float = WAIT) -> list[str]:
    """Lines of *stream* (read in a thread) until one satisfies *found*; all of them.
    The thread stops reading there, so what follows is left for ``communicate()``."""
    lines: list[str] = []
    hit = threading.Event()

    def reader() -> None:
        for line in stream:
            lines.append(line)
            if found(line):
                break
        hit.set()

    threading.Thread(target=reader, daemon=True).start()
    assert hit.wait(timeout), f"no matching line within {timeout:.0f} s: {lines[-5:]}"
    return lines


def test_progress_is_logged_every_few_seconds_when_stderr_is_a_pipe(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    # 6x4 full with a budget of 300 M expansions: about ten minutes of work on this
    # machine (the budget gives the line an ETA); it is stopped at the first progress
    # line, so only a machine 100x faster would finish before the first log period.
    proc = start_solve(
        "connect-four",
        "-p",
        "width=6",
        "-p",
        "height=4",
        "--full",
        "--db",
        url,
        "--max-expansions",
        "300000000",
        "--json",
    )
    try:
        lines = read_lines_until(proc.stderr, lambda line: line.startswith("progress: "))
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    logged = [line for line in lines + err.splitlines(True) if line.startswith("progress: ")]
    assert logged, lines
    first = logged[0]
    # the figures, the phase, and the ETA of an expansion budget
    assert "expansions (" in first and "/s)" in first and " nodes " in first
    assert " frontier " in first and "root [" in first
    assert any(
        phase in first for phase in ("loading", "expanding", "committing", "tier ")
    )  # a tiered solve's steps name their tier
    assert all("\r" not in line for line in logged)  # lines, not a redrawn line
    assert json.loads(out)["status"] == "stopped"  # the JSON on stdout is untouched


def test_progress_line_on_a_terminal_names_the_long_steps(tmp_path: Path) -> None:
    import pty

    url = f"sqlite:///{tmp_path / 't.db'}"
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [
            NEGAGRAPH,
            "solve",
            "connect-four",
            "-p",
            "width=4",
            "-p",
            "height=4",
            "--full",
            "--db",
            url,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=secondary,
    )
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + WAIT
    try:
        while proc.poll() is None or seen[-1:] != b"":
            if time.monotonic() > deadline:
                raise AssertionError(f"solve did not end within {WAIT:.0f} s: {seen[-300:]!r}")
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the pty's other side closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(primary)
        out, _ = proc.communicate(timeout=WAIT)
    assert proc.returncode == 0, seen[-500:]
    text_seen = seen.decode()
    redraws = [part for part in text_seen.split("\r") if "expansions" in part]
    assert redraws, text_seen[-500:]  # the line is redrawn in place (the first report
    # is always drawn; later ones at most twice a second, and every second by the ticker)
    assert all(" frontier " in part and "root [" in part for part in redraws)
    assert all(any(phase in part for phase in PHASES) for part in redraws), redraws
    assert text_seen.endswith(" " * 100 + "\r")  # the line is cleared at the end
    assert "value 0" in out.decode()


PHASES = (
    "discovering tier ",
    "writing tier ",
    "solving tier ",
    "resuming: expanding tier ",
    "listing the game's tablebase positions: ",
    "loading the stored graph",
    "starting",
    "expanding",
    "committing",
    "retrograde",
    "finality",
    "loading edges",
    "closing",
)


@pytest.mark.parametrize("mode", ["full", "tiered", "partial"])
def test_the_solver_names_its_long_steps(tmp_path: Path, mode: str) -> None:
    """What the progress line shows during a long step: the solver reports each phase
    before it starts, in order, with the figures of the latest batch."""
    from db.store import SqlStore

    full = mode != "partial"
    url = f"sqlite:///{tmp_path / 'phases.db'}"
    assert run("db", "upgrade", "--db", url)[0] == 0
    game = get_game("connect-four", width=4, height=3)
    runs: list[list[tuple[str, int]]] = []
    engine = make_engine(url)
    try:
        for budget in (2500 if full else 100, None):  # a budget, then resumed to the end
            seen: list[tuple[str, int]] = []

            def record(p: Progress, seen: list[tuple[str, int]] = seen) -> None:
                seen.append((p.phase, p.expansions))

            solve(
                game,
                full=full,
                store=SqlStore(engine),
                batch_size=500 if full else 50,
                max_expansions=budget,
                progress=record,
                tiers=mode == "tiered",
            )
            runs.append(seen)
    finally:
        engine.dispose()
    for seen in runs:
        phases = [phase for phase, _ in seen]
        assert all(
            p in PHASES
            or (p.startswith("committing ") and p.endswith(" nodes"))
            or p.startswith(tuple(x for x in PHASES if x.endswith("tier ")))
            for p in phases
        ), phases
        assert phases[-1] == "closing"
        expansions = [e for _, e in seen]
        assert expansions == sorted(expansions)  # the figures of the latest batch
    first, second = ([p for p, _ in seen] for seen in runs)
    if mode == "tiered":  # the budget is checked between tiers, while discovering here
        assert first[:3] == ["discovering tier 0", "writing tier 0: 1 positions", "expanding"]
        assert not any(p.startswith("solving tier ") for p in first)
        assert second[0] == "resuming: expanding tier 7 again"  # its keys for tier 8
        solving = [p for p in second if p.startswith("solving tier ")]
        assert solving[0].startswith("solving tier 12: ") and solving[-1] == (
            "solving tier 0: 1 positions"
        )
        # a tier is solved and written in units (one here), then marked solved
        assert second[-3:] == ["solving tier 0: 1 positions", "expanding", "closing"]
        return
    assert first[0].startswith("committing ")
    if full:
        assert "retrograde" not in first  # stopped by its budget before the end
        assert second[-6:-3] == ["loading edges", "retrograde", "finality"]
        assert second[-3].startswith("committing ") and second[-2:] == ["expanding", "closing"]
    else:
        assert first[-4] == "retrograde" and first[-3].startswith("committing ")
        assert second[0] == "retrograde"  # the stored graph's bounds recomputed first
        assert second.count("retrograde") == 2


def run_status(url: str) -> Any:
    proc = subprocess.run(
        [NEGAGRAPH, "status", "--db", url, "--json"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (variant,) = json.loads(proc.stdout)["variants"]
    return variant


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_twice_is_recorded_as_stopped_with_the_committed_figures(db_url: str) -> None:
    args = [
        "connect-four",
        "-p",
        "width=4",
        "-p",
        "height=4",
        "--full",
        "--db",
        db_url,
        "--batch-size",
        "2000",
        "--json",
    ]
    proc = start_solve(*args)
    assert wait_for_commit(db_url, proc, 0), proc.communicate()
    proc.send_signal(signal.SIGINT)
    lines = read_lines_until(proc.stderr, lambda line: "stopping after" in line)
    proc.send_signal(signal.SIGINT)  # the second: abort the batch in flight
    out, err = proc.communicate(timeout=WAIT)
    err = "".join(lines) + err
    # a stop, not a failure: either the second Ctrl-C came in time or the run had closed;
    # either way SIGINT's exit status
    assert proc.returncode == 130, err
    if out == "":
        assert "interrupted: every committed batch is kept" in err
    else:
        assert json.loads(out)["status"] == "stopped", err
        assert "stopped on request after committing the last batch" in err
    assert "Traceback" not in err and "Aborted!" not in err
    (run_row,) = run_status(db_url)["runs"]
    assert run_row["status"] == "stopped" and run_row["finished_at"] is not None
    # the record says what is stored, not what was in memory
    nodes, edges = stored_counts(db_url)
    assert (run_row["nodes"], run_row["nodes_added"]) == (nodes, nodes)
    assert run_row["edges_added"] == edges


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_twice_at_start_up_is_recorded_as_stopped(db_url: str) -> None:
    args = ["connect-four", "-p", "width=4", "-p", "height=4", "--full", "--db", db_url, "--json"]
    proc = start_solve(*args)
    wait_for_running_run(db_url)  # the run is recorded: it is opening or solving
    proc.send_signal(signal.SIGINT)
    read_lines_until(proc.stderr, lambda line: "stopping after" in line)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Aborted!" not in err
    assert run_status(db_url)["runs"][0]["status"] == "stopped"


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_a_killed_writer_is_shown_dead_at_once(db_url: str) -> None:
    # 5 x 4 (thousands of batches of 2,000 expansions, each a commit) and frozen at once
    # after its first commit: the run cannot have finished when it is killed, however
    # fast it writes (4 x 4 once finished its 134 batches while the status was read)
    args = [
        "connect-four",
        "-p",
        "width=5",
        "-p",
        "height=4",
        "--full",
        "--no-tiers",
        "--db",
        db_url,
        "--batch-size",
        "2000",
    ]
    proc = start_solve(*args)
    assert wait_for_commit(db_url, proc, 0), proc.communicate()
    proc.send_signal(signal.SIGSTOP)  # alive, so still its run's writer
    assert run_status(db_url)["runs"][0]["status"] == "running"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=WAIT)
    # dead as soon as the writer is: no new solve needed (PostgreSQL frees the lock when
    # it notices the closed connection: wait for that event)
    deadline = time.monotonic() + WAIT
    while (status := run_status(db_url)["runs"][0]["status"]) == "running":
        assert time.monotonic() < deadline, "the killed run still shows as running"
        time.sleep(0.1)
    assert status == "dead"
    code, out, _ = run("status", "--db", db_url)
    assert code == 0 and " dead " in out
    from tests.api.helpers import make_app

    with make_app(db_url) as app:
        client = app.test_client()
        body = client.get("/api/solves").get_json()
        assert body["solves"][0]["status"] == "dead"
        run_id = body["solves"][0]["id"]
        assert client.get(f"/api/solves/{run_id}").get_json()["status"] == "dead"
    # the next writer takes the lease over and closes the dead run's row
    code, out, err = run("solve", *args, "--max-expansions", "10", "--json")
    assert code == 0, err
    statuses = [r["status"] for r in run_status(db_url)["runs"]]
    assert statuses == ["budget", "failed"]


def test_ctrl_c_once_the_run_closes_is_ignored_so_the_result_is_printed() -> None:
    from api.commands.solving import Interrupts

    interrupts = Interrupts()
    interrupts.handler(signal.SIGINT, None)
    assert interrupts()  # the first asks the solver to stop after its batch
    interrupts.closing = True  # the solver reported its "closing" phase
    interrupts.handler(signal.SIGINT, None)  # ignored: the result follows
    interrupts.closing = False
    with pytest.raises(KeyboardInterrupt):  # before closing, the second one aborts
        interrupts.handler(signal.SIGINT, None)


def test_the_eta_comes_from_what_is_known() -> None:
    from api.console.progress import ProgressDisplay
    from solver.store import Progress

    def at(expansions: int, frontier: int, seconds: float) -> Progress:
        return Progress("running", expansions, 0, 0, 0, 0, frontier, 0, 0, False, False, seconds)

    display = ProgressDisplay("off", max_expansions=1000)
    assert display.eta(at(250, 0, 10.0), 25.0, 0.0) == "~30s left (expansion budget)"
    display = ProgressDisplay("off", max_seconds=100.0)
    assert display.eta(at(250, 0, 40.0), 25.0, 0.0) == "~1m00s left (time budget)"
    display = ProgressDisplay("off", full=True)
    assert display.eta(at(0, 0, 1.0), 0.0, 0.0) is None  # nothing known yet
    display.samples.extend([(0.0, 9000), (30.0, 6000)])  # shrinking by 100 a second
    assert display.eta(at(0, 6000, 30.0), 0.0, 30.0) == "~1m00s left (frontier draining)"
    display.samples.append((40.0, 7000))  # over the last minute: 2000 in 40 s
    assert display.eta(at(0, 7000, 40.0), 0.0, 40.0) == "~2m20s left (frontier draining)"
    growing = ProgressDisplay("off", full=True)
    growing.samples.extend([(0.0, 100), (10.0, 200)])
    assert growing.eta(at(0, 200, 10.0), 10.0, 10.0) is None
    partial = ProgressDisplay("off")  # a partial solve's frontier says nothing of the end
    partial.samples.extend([(0.0, 9000), (30.0, 6000)])
    assert partial.eta(at(0, 6000, 30.0), 10.0, 30.0) is None


def test_the_progress_line_shows_bytes_a_position_and_free_disk(tmp_path: Path) -> None:
    import shutil

    from api.console.progress import ProgressDisplay
    from solver.store import Progress

    database = tmp_path / "solve.db"
    database.write_bytes(b"x" * 1700)
    Path(f"{database}-wal").write_bytes(b"x" * 300)
    display = ProgressDisplay("off", full=True)
    at = Progress("running", 10, 100, 0, 0, 0, 0, 0, 0, False, False, 1.0)
    assert display.disk_text(at) == ""  # not a SQLite file
    display.database = database
    shown = display.disk_text(at)
    assert shown.startswith("  disk 20.0 B a position, ") and shown.endswith(" free")
    free = shutil.disk_usage(tmp_path).free
    assert abs(free - _size(shown.split(", ")[1].removesuffix(" free"))) <= free * 0.01 + 2**20
    display(at)
    assert "disk 20.0 B a position" in display.text(0.0)


def _size(text: str) -> float:
    from solver.memory import parse_size

    return parse_size(text.replace(" ", ""))


@pytest.mark.parametrize("tiers", [False, True], ids=["untiered", "tiered"])
def test_a_failed_run_records_what_is_committed_not_what_was_in_memory(
    db_url: str, tiers: bool
) -> None:
    """A failure between a batch and its commit (here: the progress callback refusing
    the third commit, as a full disk would refuse the commit itself): the run row keeps
    the figures of its last commit, which are what the database holds. (A tiered solve
    commits a tier at a time, announced as ``writing tier ...``.)"""
    from db.store import SqlStore

    class Refused(RuntimeError):
        pass

    commits = 0
    committed: list[Any] = []  # the reports after each commit
    refused: list[Any] = []

    def progress(p: Any) -> None:
        nonlocal commits
        if p.phase == "expanding":
            committed.append(p)
        if p.phase.startswith("committing " if not tiers else "writing tier "):
            commits += 1
            if commits == 3:
                refused.append(p)
                raise Refused("no room left")

    engine = make_engine(db_url)
    try:
        with pytest.raises(Refused):
            solve(
                get_game("connect-four", width=4, height=3),
                full=True,
                batch_size=1000,
                store=SqlStore(engine),
                progress=progress,
                tiers=tiers,
            )
    finally:
        engine.dispose()
    (run_row,) = run_status(db_url)["runs"]
    nodes, edges = stored_counts(db_url)
    last = committed[-1]
    if tiers:  # the figures are the committed ones; the step names what it writes
        assert refused[0].phase == "writing tier 2: 16 positions"
        assert (refused[0].nodes, refused[0].tiers_done) == (last.nodes, 2)
    else:
        assert refused[0].nodes > last.nodes  # the refused batch had found more
    assert run_row["status"] == "failed" and run_row["expansions"] == last.expansions
    assert (
        (run_row["nodes"], run_row["nodes_added"], run_row["edges_added"])
        == (nodes, nodes, edges)
        == (last.nodes, last.nodes, last.edges)
    )
