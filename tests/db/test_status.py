"""`negagraph status` on tiered solves, on SQLite and PostgreSQL: what each process did,
labelled and counted by sweep, and a variant whose positions are discovered but not
solved yet."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
from typing import Any

import pytest
from click.testing import CliRunner

from api.cli import cli
from tests.api.helpers import make_app
from tests.db.test_solve_cli import WAIT, read_terminal, solve_on_a_terminal


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_worker_s_positions_are_counted_by_sweep(db_url: str) -> None:
    # tic-tac-toe --full is tiered (10 tiers, 5,478 positions), solved in this process:
    # each tier is one unit discovering its positions and one solving them
    code, _, err = run("solve", "tic-tac-toe", "--full", "--db", db_url, "-q")
    assert code == 0, err
    code, out, err = run("status", "--db", db_url)
    assert code == 0, err
    me = f"{socket.gethostname()}:{os.getpid()}"
    (line,) = [x for x in out.splitlines() if me in x]
    assert re.fullmatch(
        rf"      worker {re.escape(me)}: 20 units, 5,478 positions discovered and 5,478 "
        r"solved, \d+\.\ds",
        line,
    ), out
    code, out, err = run("status", "--db", db_url, "--json")
    assert code == 0, err
    (variant,) = json.loads(out)["variants"]
    (worker,) = variant["runs"][0]["worker_units"]
    assert (worker["units"], worker["discovered"], worker["solved"]) == (20, 5478, 5478)
    assert worker["positions"] == 2 * 5478  # both sweeps' units, as before
    with make_app(db_url) as app:
        (api_run,) = app.test_client().get("/api/solves").get_json()["solves"]
    (api_worker,) = api_run["worker_units"]
    assert {k: v for k, v in api_worker.items() if k != "seconds"} == {
        k: v for k, v in worker.items() if k != "seconds"
    }


def variant_lines(db_url: str) -> tuple[str, str, dict[str, Any]]:
    """The variant's line and its latest run's line in `status`, and its JSON entry."""
    code, out, err = run("status", "--db", db_url)
    assert code == 0, err
    lines = out.splitlines()
    (i,) = [i for i, x in enumerate(lines) if x.startswith("  tic-tac-toe ")]
    code, data, err = run("status", "--db", db_url, "--json")
    assert code == 0, err
    (variant,) = json.loads(data)["variants"]
    return lines[i], lines[i + 1], variant


def test_positions_discovered_but_not_solved_are_counted_as_such(db_url: str) -> None:
    # A tiered solve stopped during its discovery holds no node rows yet: its positions
    # wait in discovered_positions. The variant and its run say the same thing of them.
    args = ["solve", "tic-tac-toe", "--full", "--db", db_url, "-q", "--max-expansions"]
    code, _, err = run(*args, "1000")  # tiers are budgeted whole: 1+9+72+252+756 positions
    assert code == 0, err
    variant_line, run_line, variant = variant_lines(db_url)
    assert variant_line.startswith(
        "  tic-tac-toe (symmetry=false) rules v1: 1,090 positions discovered, 0 solved  root"
    ), variant_line
    assert "1,090 expansions  +1,090 positions discovered  " in run_line, run_line
    assert (variant["nodes"], variant["discovered_unsolved"]) == (0, 1090)
    assert variant["runs"][0]["nodes"] == 1090
    # the next run discovers the rest and solves some of the tiers
    code, _, err = run(*args, "6000")
    assert code == 0, err
    variant_line, run_line, variant = variant_lines(db_url)
    solved = variant["nodes"]
    assert 0 < solved < 5478 and variant["discovered_unsolved"] == 5478 - solved
    assert f": 5,478 positions discovered, {solved:,} solved  root" in variant_line
    assert "  +4,388 positions discovered  " in run_line, run_line
    # once solved, every position is a node
    code, _, err = run("solve", "tic-tac-toe", "--full", "--db", db_url, "-q")
    assert code == 0, err
    variant_line, run_line, variant = variant_lines(db_url)
    assert ": 5,478 nodes  root" in variant_line and variant["discovered_unsolved"] == 0
    assert "  +0 positions discovered  " in run_line, run_line


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_a_tiered_solve_stopped_while_discovering(db_url: str) -> None:
    # Ctrl-C once the terminal shows the discovery under way: the run stops after the
    # tier in progress, before any tier is solved, and status says the same of the
    # variant and of its run: positions discovered, none solved yet.
    args = ["connect-four", "-p", "width=5", "-p", "height=4", "--full", "--db", db_url]
    proc, primary = solve_on_a_terminal(args)
    try:
        shown = read_terminal(primary, lambda seen: "discovering tier " in seen)
        proc.send_signal(signal.SIGINT)
        shown += read_terminal(primary, lambda seen: False)  # to the end
    finally:
        os.close(primary)
        proc.communicate(timeout=WAIT)
    assert proc.returncode == 130, shown[-500:]
    code, out, err = run("status", "--db", db_url, "--json")
    assert code == 0, err
    (variant,) = json.loads(out)["variants"]
    (stopped,) = variant["runs"]
    discovered = variant["discovered_unsolved"]
    assert stopped["status"] == "stopped" and stopped["tiers_done"] < stopped["tiers_total"]
    assert variant["nodes"] == 0 and discovered == stopped["nodes"] == stopped["nodes_added"] > 0
    code, out, err = run("status", "--db", db_url)
    assert code == 0, err
    assert f": {discovered:,} positions discovered, 0 solved  root" in out, out
    assert f"  +{discovered:,} positions discovered  " in out, out
