"""`negagraph status` on tiered solves, on SQLite and PostgreSQL: what each process did,
labelled and counted by sweep, and a variant whose positions are discovered but not
solved yet."""

from __future__ import annotations

import json
import os
import re
import socket

from click.testing import CliRunner

from api.cli import cli
from tests.api.helpers import make_app


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
