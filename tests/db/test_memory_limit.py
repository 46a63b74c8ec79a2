"""`negagraph solve --memory-limit` as a real process: its peak memory, measured by the
system (the parent's ``RUSAGE_CHILDREN``), stays under the limit; the run ends with
everything committed, says so in one line, shows its memory in `status`; and the solve
then goes on to the graph an uninterrupted one builds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.memory import PEAK
from bench.soak import graph_rows, stored_rows
from solver.memory import parse_size
from tests.db.test_solve_cli import reference

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))


def run_measured(*args: str) -> tuple[int, str, list[str], int]:
    """``negagraph ARGS``: exit status, stdout, stderr's lines, and its peak RSS in bytes
    (:data:`bench.memory.PEAK`, the last line of stderr)."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK, NEGAGRAPH, *args], capture_output=True, text=True, timeout=600
    )
    lines = done.stderr.splitlines()
    return done.returncode, done.stdout, lines[:-1], int(lines[-1])


@pytest.mark.slow
def test_a_partial_solve_evicts_under_its_memory_limit_and_writes_the_same(
    tmp_path: Path,
) -> None:
    # A depth-first partial solve of an acyclic game into a database evicts under its
    # limit (solver.partial.cache): below what it needs unlimited, it goes on to the end, to the
    # very graph an unlimited solve builds. (SQLite, whose page cache is in the process's
    # memory; tests/db/test_eviction.py evicts into PostgreSQL.)
    db_url = f"sqlite:///{tmp_path / 'evict.db'}"
    params = {"width": 4, "height": 6}  # 719,061 nodes, about 270 MiB unlimited
    solve_args = ["solve", "connect-four", "-p", "width=4", "-p", "height=6", "--db", db_url]
    limit = parse_size("200MiB")

    code, out, err, peak = run_measured(*solve_args, "--memory-limit", "200MiB", "--json", "-q")
    assert code == 0, err
    assert peak <= limit, f"peak RSS {peak} over the limit {limit}"
    r = json.loads(out)
    assert (r["status"], r["ended_by"], r["value"], r["nodes"]) == ("complete", None, 0, 719_061)
    g = reference("connect-four", params, full=False, batch=None)
    assert stored_rows(db_url) == graph_rows(g)

    done = subprocess.run(
        [NEGAGRAPH, "status", "--db", db_url, "--json"], capture_output=True, text=True
    )
    (variant,) = json.loads(done.stdout)["variants"]
    (run,) = variant["runs"]
    assert (run["status"], run["memory_limit"]) == ("complete", limit)
    # under the limit (not compared with the peak: its last commit is its highest point,
    # where psutil's RSS and the kernel's high-water mark differ by a few pages)
    assert 0 < run["rss_bytes"] <= limit
    assert 0 < run["resident_nodes"] < variant["nodes"] == 719_061  # it evicted


def test_a_solve_that_cannot_evict_ends_at_its_limit(tmp_path: Path) -> None:
    # In memory nothing can leave RAM: the run ends at the limit, and says so.
    limit = parse_size("128MiB")
    code, out, err, peak = run_measured(
        "solve", "connect-four", "-p", "width=4", "-p", "height=6", "--memory",
        "--memory-limit", "128MiB",
    )  # fmt: skip
    assert code == 0, err
    assert peak <= limit, f"peak RSS {peak} over the limit {limit}"
    (message,) = [line for line in err if "memory limit" in line]
    assert message.startswith("  memory limit reached (") and "limit 128 MiB)" in message
    # nothing is committed in memory: the line does not say so
    assert message.endswith(
        "; nothing is stored (--memory), the whole graph is in RAM: give it a larger --memory-limit"
    ), message
    assert "commit" not in message


def test_bad_limits_are_one_line_errors(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'n.db'}"
    for value, message in [
        ("10", "memory limit must be at least 128 MiB, not 10 B"),
        ("lots", "memory size must be a number with a unit such as 4GiB"),
    ]:
        done = subprocess.run(
            [NEGAGRAPH, "solve", "number-game", "--db", db, "--memory-limit", value],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 1
        (line,) = done.stderr.splitlines()
        assert line.startswith("error: ") and message in line
    assert not (tmp_path / "n.db").exists()


def test_a_full_solve_stays_under_its_memory_limit(db_url: str) -> None:
    """A full solve's batches (20,000 expansions) add more than the limit's headroom: the
    check keeps what the last batch added in reserve too."""
    limit = parse_size("128MiB")
    code, out, err, peak = run_measured(
        "solve", "connect-four", "-p", "width=5", "-p", "height=4", "--full",
        "--db", db_url, "--memory-limit", "128MiB", "--json", "-q",
    )  # fmt: skip
    assert code == 0, err
    r = json.loads(out)
    assert (r["status"], r["ended_by"], r["full"]) == ("budget", "memory", True)
    assert 0 < r["nodes"] < 3_945_711
    assert peak <= limit, f"peak RSS {peak} over the limit {limit}"


@pytest.mark.slow
def test_a_chance_solve_ends_at_its_memory_limit_having_written_nothing(
    tmp_path: Path,
) -> None:
    # A game of chance is solved with its whole graph in memory: under a limit its graph
    # would outgrow, the solve ends early with one error line and writes nothing; under a
    # limit it fits, it completes with its peak below the limit.
    db_url = f"sqlite:///{tmp_path / 'pig.db'}"
    pig = ["solve", "pig", "-p", "target=40", "--full", "--db", db_url]  # 134,004 positions
    code, out, err, peak = run_measured(*pig, "--memory-limit", "140MiB", "-q")
    assert code == 1 and len(err) == 2, err  # the schema's creation, then the error
    assert err[-1].startswith("error: pig: a game of chance is solved with its whole graph ")
    assert err[-1].endswith(
        "past the 140 MiB --memory-limit: give a larger one (nothing was written)"
    )
    assert peak <= parse_size("140MiB")
    code, out, err, _ = run_measured("status", "--db", db_url, "--json")
    (variant,) = json.loads(out)["variants"]
    assert variant["nodes"] == 0 and variant["runs"][-1]["status"] == "failed"
    code, out, err, peak = run_measured(*pig, "--memory-limit", "400MiB", "--json", "-q")
    assert code == 0, err
    assert json.loads(out)["complete"] and peak <= parse_size("400MiB")
