"""What the command line prints for the small things a user trips on: usage errors in one
line, infinite bounds in the CLI's notation, parameters as objects in JSON, and the root
as typed beside its stored symmetric image."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.cli import cli

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "--bogus"], "No such option '--bogus' (see `negagraph solve --help`)"),
        (["solve"], "Missing argument 'GAME' (see `negagraph solve --help`)"),
        (["solve", "tic-tac-toe", "--max-expansions", "-3"], "'--max-expansions': -3"),
        (["query", "tic-tac-toe"], "Missing argument 'POSITION'"),
        (["frobnicate"], "No such command 'frobnicate'"),
    ],
)
def test_usage_errors_are_one_line_and_exit_1(args: list[str], message: str) -> None:
    done = subprocess.run([NEGAGRAPH, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_negagraph_alone_prints_its_help() -> None:
    done = subprocess.run([NEGAGRAPH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("Usage: negagraph")


def test_status_shows_infinite_bounds_as_the_query_does_and_params_as_objects(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    runner = CliRunner()
    done = runner.invoke(cli, ["solve", "number-game", "--max-expansions", "1", "--db", url])
    assert done.exit_code == 0, done.output
    text = runner.invoke(cli, ["status", "--db", url])
    assert text.exit_code == 0
    line = next(x for x in text.stdout.splitlines() if "number-game" in x)
    assert "None" not in text.stdout and "[-inf, +inf]" in line and "(root=13)" in line
    data = json.loads(runner.invoke(cli, ["status", "--db", url, "--json"]).stdout)
    (variant,) = data["variants"]
    assert variant["params"] == {"root": 13} and variant["params_text"] == "root=13"
    assert variant["root_bounds"]["low"] is None and variant["root_bounds"]["high"] is None


def test_a_root_given_is_shown_as_typed_beside_its_stored_image() -> None:
    runner = CliRunner()
    args = [
        "solve",
        "tic-tac-toe",
        "-p",
        "symmetry=true",
        "--root",
        "..x/.../...",
        "--memory",
        "-q",
    ]
    result = json.loads(runner.invoke(cli, [*args, "--json"]).stdout)
    assert (result["root"], result["stored_root"]) == ("..x/.../...", "x../.../...")
    first = runner.invoke(cli, args).stdout.splitlines()[0]
    assert first.endswith("from ..x/.../... (stored as its symmetric image x../.../...)")
    plain = json.loads(
        runner.invoke(cli, ["solve", "tic-tac-toe", "--memory", "-q", "--json"]).stdout
    )
    assert plain["root"] == plain["stored_root"] == ".../.../..."


def test_chess_answers_name_white_and_black(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kqvk.db'}"
    runner = CliRunner()
    fen = "k7/8/1K6/8/8/8/8/6Q1 w - -"
    done = runner.invoke(
        cli, ["solve", "chess", "-p", "material=KQvK", "--root", fen, "--db", url, "-q"]
    )
    assert done.exit_code == 0, done.output
    out = runner.invoke(cli, ["query", "chess", fen, "--db", url]).stdout
    assert "White to move; from White's side: [1, +inf]" in out and "MAX" not in out
    view = json.loads(runner.invoke(cli, ["query", "chess", fen, "--db", url, "--json"]).stdout)
    reply = view["moves"][-1]["position"]  # a stored position with Black to move
    out = runner.invoke(cli, ["query", "chess", reply, "--db", url]).stdout
    assert "Black to move; from White's side: " in out


BUGGY_GAME = '''
from solver.game import GameBase


class Buggy(GameBase):
    """Counts down from 5; its rules crash at 2 (a plugin's bug)."""

    name = "buggy"
    description = "a game with a bug"
    notation = "<number>"

    def initial(self):
        return 5

    def children(self, key):
        if key == 2:
            raise ZeroDivisionError("the plugin divided by zero")
        return [("-1", key - 1)]

    def terminal_value(self, key):
        return -1 if key == 0 else None

    def parse(self, text):
        return int(text)

    def format(self, key):
        return str(key)
'''


def test_a_game_whose_code_fails_is_one_line_naming_the_game(tmp_path: Path) -> None:
    from solver import solve
    from solver.errors import SolveError
    from solver.games import get_game

    source = tmp_path / "buggy.py"
    source.write_text(BUGGY_GAME)
    ref = f"{source}:Buggy"
    url = f"sqlite:///{tmp_path / 'b.db'}"
    done = subprocess.run(
        [NEGAGRAPH, "solve", ref, "--db", url, "-q"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = [
        x
        for x in done.stderr.strip().splitlines()
        if not x.startswith("created the negagraph schema")
    ]
    assert line.startswith("error: buggy: the game's own code failed")
    assert f"(Buggy in {source}): ZeroDivisionError: the plugin divided by zero" in line
    with pytest.raises(SolveError, match="own code failed") as caught:
        solve(get_game(ref))
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


def test_the_memory_limit_s_minimum_is_in_the_help_and_the_readme() -> None:
    """`--memory-limit` refuses less than :data:`solver.memory.MINIMUM`: its help says so,
    and so does the README where it documents the option."""
    from solver.memory import MINIMUM, format_size

    minimum = format_size(MINIMUM)
    assert minimum == "128 MiB"
    done = subprocess.run(
        [NEGAGRAPH, "solve", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0
    help_text = " ".join(done.stdout.split())
    option = help_text.split("--memory-limit SIZE", 1)[1].split(" --resident-nodes", 1)[0]
    assert f"at least {minimum}" in option, option
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    documented = readme.split("`--memory-limit SIZE`", 1)[1][:400]
    assert f"at least {minimum}" in documented, documented
    refused = subprocess.run(
        [NEGAGRAPH, "solve", "tic-tac-toe", "--memory", "--memory-limit", "127MiB"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1 and f"at least {minimum}" in refused.stderr


def test_a_tiered_solve_counts_positions_discovered_and_solved(tmp_path: Path) -> None:
    # Stopped by its budget while discovering tiers, a tiered solve has solved nothing
    # and stored no moves: its line says so, as `status` does, rather than "N nodes,
    # 0 edges"; resumed to the end, every position discovered is solved.
    url = f"sqlite:///{tmp_path / 't.db'}"
    args = ["solve", "connect-four", "-p", "width=4", "-p", "height=4", "--full", "--db", url]
    runner = CliRunner()
    done = runner.invoke(cli, [*args, "--max-expansions", "1000", "-q"])
    assert done.exit_code == 0, done.output
    (line,) = [x for x in done.stdout.splitlines() if " expansions, " in x]
    assert " positions discovered, 0 solved in " in line, line
    assert " edges " not in line and " nodes" not in line
    discovered = line.split(" expansions, ")[1].split(" positions discovered")[0]
    status = runner.invoke(cli, ["status", "--db", url])
    assert f"{discovered} positions discovered, 0 solved" in status.stdout, status.stdout
    done = runner.invoke(cli, [*args, "-q"])
    assert done.exit_code == 0, done.output
    assert "  value 0 (exact)" in done.stdout  # Tromp: 4 x 4 is a draw
    assert " expansions, 161,029 positions discovered, 161,029 solved in " in done.stdout


def test_status_shows_a_chance_root_by_its_expected_value(tmp_path: Path) -> None:
    """A game of chance's node rows hold integer bounds that say nothing of its value:
    status shows the root's expected value (rounded outwards), as query does."""
    url = f"sqlite:///{tmp_path / 'pig.db'}"
    runner = CliRunner()
    for args in (["pig", "-p", "target=10"], ["tic-tac-toe", "--full"]):
        done = runner.invoke(cli, ["solve", *args, "-q", "--db", url])
        assert done.exit_code == 0, done.output
    asked = runner.invoke(
        cli, ["query", "pig", "0-0:first:0", "-p", "target=10", "--json", "--db", url]
    )
    chance = json.loads(asked.stdout)["chance"]
    data = json.loads(runner.invoke(cli, ["status", "--db", url, "--json"]).stdout)
    odds = {v["game"]: v["root_chance"] for v in data["variants"]}
    assert odds == {"pig": {"low": chance["low"], "high": chance["high"]}, "tic-tac-toe": None}
    assert 0 < chance["low"] <= chance["high"] < 1
    text = runner.invoke(cli, ["status", "--db", url]).stdout
    line = next(x for x in text.splitlines() if x.startswith("  pig"))
    assert (
        f"root 0-0:first:0 [{chance['low']:.10g}, {chance['high']:.10g}] (expected value)" in line
    )
