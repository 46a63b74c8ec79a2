"""What `negagraph` loads to start: each command imports the libraries it uses and no
others (the suite starts the console script hundreds of times, and a user waits for each
start). tests/test_migrations.py holds the same for Alembic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from api.cli import COMMANDS, cli, short_help
from solver.games import BUILTIN_GAMES, BUILTIN_REFERENCES

ROOT = Path(__file__).resolve().parent.parent

HEAVY = ("alembic", "chess", "dask", "distributed", "flask", "numpy", "pydantic", "sqlalchemy")
"""The libraries that each cost a noticeable part of a start."""

LOADED = """
import json, sys
from api.entry import main
sys.argv = ["negagraph", *json.loads(sys.argv[1])]
try:
    main()
finally:
    print("\\nLOADED " + json.dumps(sorted({m.partition(".")[0] for m in sys.modules})))
"""


def loaded_by(*args: str, cwd: Path) -> set[str]:
    """The top-level modules a real `negagraph ARGS` process has imported when it ends."""
    out = subprocess.run(
        [sys.executable, "-c", LOADED, json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    last = out.stdout.rstrip().splitlines()[-1]
    assert last.startswith("LOADED "), out.stdout + out.stderr
    return set(json.loads(last.removeprefix("LOADED ")))


def test_help_loads_no_heavy_library(tmp_path: Path) -> None:
    assert loaded_by("--help", cwd=tmp_path) & set(HEAVY) == set()


def test_status_loads_neither_the_server_nor_chess_nor_dask(tmp_path: Path) -> None:
    loaded = loaded_by("status", "--db", f"sqlite:///{tmp_path / 'x.db'}", cwd=tmp_path)
    assert "sqlalchemy" in loaded  # it did open the database
    assert loaded & {"alembic", "chess", "dask", "distributed", "flask", "pydantic"} == set()


def test_a_solve_loads_only_the_game_it_solves(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    loaded = loaded_by("solve", "tic-tac-toe", "--db", url, "-q", cwd=tmp_path)
    assert {"sqlalchemy", "alembic"} <= loaded  # it solved into a new database
    assert loaded & {"chess", "dask", "distributed", "flask", "pydantic"} == set()
    assert (tmp_path / "x.db").is_file()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_lists_each_command_as_its_own_help_says(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None and command.name == name
    for limit in range(20, 120):
        assert short_help(name, limit) == command.get_short_help_str(limit), (
            f"api.cli.COMMANDS[{name!r}]: the first sentence of {name}'s help"
        )


def test_the_command_table_is_the_only_source_of_commands() -> None:
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    assert cli.get_command(ctx, "nonesuch") is None


@pytest.mark.parametrize("name", sorted(BUILTIN_REFERENCES))
def test_each_builtin_reference_names_its_game(name: str) -> None:
    assert BUILTIN_GAMES[name].name == name
    assert name in BUILTIN_GAMES


def test_the_registry_imports_a_builtin_game_only_when_asked(tmp_path: Path) -> None:
    code = (
        "import sys; from solver.games import GAMES, find_game; "
        "assert 'chess-endgame' not in GAMES and 'chess' in GAMES; "
        "find_game('tic-tac-toe'); "
        "print(sorted(m for m in sys.modules if m.startswith('solver.games.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "['solver.games.tic_tac_toe']"
