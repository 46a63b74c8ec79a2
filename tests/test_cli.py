"""The command line, through click's runner and as a real console script."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.cli import cli

NEGAGRAPH = Path(sys.executable).with_name("negagraph")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_games_json_lists_every_game_with_parameters() -> None:
    code, out, _ = run("games", "--json")
    assert code == 0
    games = {g["name"]: g for g in json.loads(out)}
    assert set(games) >= {"number-game", "tic-tac-toe", "connect-four", "grundy", "nap"}
    c4 = {p["name"]: p for p in games["connect-four"]["parameters"]}
    assert c4["width"]["default"] == 7 and c4["height"]["default"] == 6


def test_solve_json_has_the_documented_fields() -> None:
    code, out, _ = run("solve", "--memory", "number-game", "--json")
    assert code == 0
    r = json.loads(out)
    assert {
        "game",
        "params",
        "root",
        "low",
        "high",
        "low_final",
        "high_final",
        "value",
        "expansions",
        "nodes",
        "edges",
        "complete",
        "seconds",
    } <= set(r)
    assert (r["low"], r["high"], r["value"], r["complete"]) == (3, 5, None, True)
    assert r["expansions"] == 26 and r["root"] == "13"


def test_solve_with_params_root_and_infinite_bounds_as_null() -> None:
    code, out, _ = run(
        "solve", "--memory", "number-game", "-p", "root=21", "--max-expansions", "1", "--json"
    )
    assert code == 0
    r = json.loads(out)
    assert r["root"] == "21" and r["status"] == "budget" and r["complete"] is False
    assert r["high"] is None  # infinite
    code, out, _ = run("solve", "--memory", "tic-tac-toe", "--root", "xx./oo./...", "--json")
    assert code == 0 and json.loads(out)["value"] == 1


def test_solve_human_output() -> None:
    code, out, _ = run("solve", "--memory", "tic-tac-toe", "--full")
    assert code == 0
    assert "value 0" in out and "5,478 nodes" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "chess-960"], "unknown game 'chess-960'"),
        (["solve", "nap", "-p", "n=x"], "parameter 'n' must be an integer"),
        (["solve", "nap", "-p", "n"], "must look like NAME=VALUE"),
        (["solve", "nap", "-p", "size=3"], "unknown parameter 'size'"),
        (["solve", "connect-four", "-p", "width=0"], "must be at least 1"),
        (["solve", "tic-tac-toe", "--root", "xxx/ooo/..."], "both players have three in a row"),
        (["solve", "number-game", "--full"], "infinitely many positions"),
    ],
)
def test_errors_are_one_line_with_non_zero_exit(args: list[str], message: str) -> None:
    code, out, err = run(*args, "--memory")
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert message in lines[0]
    assert "Traceback" not in err + out


def test_console_script_runs_as_a_real_process() -> None:
    proc = subprocess.run(
        [str(NEGAGRAPH), "solve", "grundy", "--memory", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["value"] == -1
    proc = subprocess.run(
        [str(NEGAGRAPH), "solve", "grundy", "-p", "n=0", "--memory"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def loading_extensions(pid: int) -> bool:
    """Whether process *pid* has loaded a compiled extension from site-packages (Python's
    own start-up loads none: they come with negagraph's imports)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:  # gone already
        return False
    return any("site-packages/" in line and ".so" in line for line in maps.splitlines())


def interrupt_while_loading() -> tuple[int, str, str] | None:
    """Start ``negagraph solve --help``, send SIGINT once it has begun loading its
    compiled extensions, and give its exit status and output; ``None`` if it had already
    finished (on a loaded machine this test's polling can be late for the whole import).
    (``solve``'s module loads the solver and the database; ``negagraph --help`` alone
    loads no compiled extension, tests/test_startup.py.)"""
    proc = subprocess.Popen(
        [NEGAGRAPH, "solve", "--help"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a shell: SIGINT not ignored, whatever this test process inherited
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not loading_extensions(proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "negagraph did not start importing"
            time.sleep(0.001)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if proc.returncode == 0 and out.startswith("Usage:") and not err:
        return None  # finished before the signal came: try again
    return proc.returncode, out, err


def test_ctrl_c_while_the_command_line_loads_is_one_line_and_status_130() -> None:
    # negagraph imports for a second or more before any command runs (SQLAlchemy, Flask,
    # numpy, the games...): a Ctrl-C then printed a KeyboardInterrupt traceback.
    caught: tuple[int, str, str] | None = None
    for _attempt in range(50):
        caught = interrupt_while_loading()
        if caught is not None:
            break
    assert caught is not None, "every SIGINT came after negagraph solve --help had finished"
    status, out, err = caught
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert (status, out, err) == (130, "", "interrupted\n")


def test_a_budget_in_memory_speaks_of_no_commit() -> None:
    # --memory commits nothing: the ending line once said "after committing the last batch"
    code, out, err = run("solve", "--memory", "number-game", "--max-expansions", "1", "-q")
    assert code == 0 and "expansions" in out
    assert err.splitlines() == ["  budget exhausted; nothing is stored (--memory)"]
