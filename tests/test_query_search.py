"""``negagraph query --search``: an estimate labelled as such where the database has not
decided the position (no database file at all: none is made), the stored answer where
it has, and one-line errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.cli import cli
from solver.games import get_game
from tests.built_once import built_once

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))
EMPTY_7X6 = "/".join(["......."] * 6)


@pytest.fixture(scope="module")
def solved_ttt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tic-tac-toe solved in full (the same artefact as tests/test_bad_databases.py's,
    built once a session by whichever module asks first)."""

    def solve(directory: Path) -> None:
        path = directory / "ttt.db"
        done = subprocess.run(
            [NEGAGRAPH, "solve", "tic-tac-toe", "--full", "--db", f"sqlite:///{path}"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in path.parent.iterdir()) == ["ttt.db"]

    return built_once(tmp_path_factory, "solved-ttt", solve) / "ttt.db"


def test_an_unsolved_game_is_estimated_without_making_a_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NEGAGRAPH_DATABASE_URL", raising=False)
    runner = CliRunner()
    done = runner.invoke(cli, ["query", "connect-four", EMPTY_7X6, "--search", "2s"])
    assert done.exit_code == 0, done.output
    position, line = done.stdout.splitlines()
    assert position == EMPTY_7X6
    assert line.startswith("  estimate (heuristic, not proven): best move ")
    move = line.split("best move ")[1].split(",")[0]
    game = get_game("connect-four")
    assert move in dict(game.children(game.initial()))
    assert " for X at depth " in line and line.endswith("proven bounds: not stored")
    data = json.loads(
        runner.invoke(cli, ["query", "connect-four", EMPTY_7X6, "--search", "3", "--json"]).stdout
    )
    assert (data["kind"], data["searched"], data["depth"], data["stored"]) == (
        "estimate",
        True,
        3,
        False,
    )
    assert list(tmp_path.iterdir()) == []  # no database file was made


def test_a_decided_position_prints_the_stored_answer(solved_ttt: Path) -> None:
    url = f"sqlite:///{solved_ttt}"
    before = hashlib.sha256(solved_ttt.read_bytes()).hexdigest()
    runner = CliRunner()
    done = runner.invoke(
        cli, ["query", "tic-tac-toe", "x../.o./...", "--search", "2s", "--db", url]
    )
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == "proven in the database: value 0 for X; no search needed"
    plain = runner.invoke(cli, ["query", "tic-tac-toe", "x../.o./...", "--db", url]).stdout
    assert lines[1:] == plain.splitlines()
    data = json.loads(
        runner.invoke(
            cli, ["query", "tic-tac-toe", "x../.o./...", "--search", "4", "--db", url, "--json"]
        ).stdout
    )
    assert (data["kind"], data["searched"], data["proven_value"], data["score"]) == (
        "proven",
        False,
        0,
        None,
    )
    assert hashlib.sha256(solved_ttt.read_bytes()).hexdigest() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["connect-four", EMPTY_7X6, "--search", "2x"], "--search takes a depth in plies"),
        (["connect-four", EMPTY_7X6, "--search", "0"], "at least 1 ply, not 0"),
        (["connect-four", EMPTY_7X6, "--search", "0s"], "positive number of seconds, not 0.0"),
        (["nap", "{}", "--search", "2"], "nap has no evaluation"),
        (["number-game", "13", "--search", "2"], "gives endless play no value"),
        (["tic-tac-toe", "xxx/oo./...", "--search", "2"], "is over (worth -1"),
    ],
)
def test_bad_searches_are_one_line_errors(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NEGAGRAPH_DATABASE_URL", raising=False)
    done = CliRunner().invoke(cli, ["query", *args])
    assert done.exit_code == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert list(tmp_path.iterdir()) == []
