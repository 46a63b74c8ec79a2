"""Games from outside negagraph: the example plugin installed by pip (its real
``negagraph.games`` entry point) driven through the real CLI and a served API; broken
plugins reported in one line while the built-in games keep working; ``module:Class`` and
``file.py:Class`` references."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from solver.errors import UnknownGameError
from solver.games import BUILTIN_GAMES, Registry
from tests.api.test_serve import fetch, free_port, wait_until_up
from tests.built_once import built_once

ROOT = Path(__file__).resolve().parents[1]
NEGAGRAPH = Path(sys.executable).with_name("negagraph")
BAD = "tests/games/bad_games.py"
"""The bad games, by file reference (relative to the worktree root, the subprocesses' cwd)."""


def pip_install(package: Path, target: Path) -> Path:
    """``pip install --target`` of *package*: a real install (wheel built, dist-info with
    its entry points written) that only processes given *target* on their path see."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(package),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return target


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_once(
        tmp_path_factory, "plugin", lambda d: pip_install(ROOT / "examples" / "subtraction", d)
    )


BROKEN_ENTRY_POINTS = {
    "missing-module": "no_such_module_anywhere:Game",
    "unfinished": "tests.games.bad_games:Unfinished",
    "not-a-game": "tests.games.bad_games:NotAGame",
    "tic-tac-toe": "tests.games.bad_games:TicTacToeAgain",
    "bad-facts": "tests.games.bad_games:BadFacts",
    "misnamed": "tests.games.bad_games:Heap",
    "heap": "tests.games.bad_games:Heap",
}
"""Entry points of the broken plugin package: name -> object (``heap`` is the good one)."""


@pytest.fixture(scope="module")
def broken_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_once(tmp_path_factory, "broken", lambda d: _install_broken(tmp_path_factory, d))


def _install_broken(tmp_path_factory: pytest.TempPathFactory, target: Path) -> None:
    package = tmp_path_factory.mktemp("broken-src")
    lines = "\n".join(f'"{k}" = "{v}"' for k, v in BROKEN_ENTRY_POINTS.items())
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "broken-games"\nversion = "2.5"\n\n'
        f'[project.entry-points."negagraph.games"]\n{lines}\n\n'
        "[tool.setuptools]\npy-modules = []\n"
    )
    pip_install(package, target)


def run(*args: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real ``negagraph`` in the worktree root, with *path* (an install target) on
    its ``PYTHONPATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (path, ROOT) if p is not None)
    env.pop("NEGAGRAPH_GAMES", None)
    return subprocess.run(
        [str(NEGAGRAPH), *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600
    )


@contextmanager
def served(url: str, *args: str, path: Path | None = None) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (path, ROOT) if p is not None)
    env.pop("NEGAGRAPH_GAMES", None)
    proc = subprocess.Popen(
        [str(NEGAGRAPH), "serve", "--db", url, "--port", str(port), "--workers", "1", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        wait_until_up(proc, f"{base}/api/health", timeout=120)
        yield base
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def test_installed_plugin_through_the_cli(plugin_path: Path, tmp_path: Path) -> None:
    listed = run("games", "--json", path=plugin_path)
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    games = {g["name"]: g for g in json.loads(listed.stdout)}
    assert games["subtraction"]["source"] == "plugin negagraph-subtraction 0.1.0"
    assert set(BUILTIN_GAMES) < set(games)
    assert games["tic-tac-toe"]["source"] == "builtin"

    url = f"sqlite:///{tmp_path / 'sub.db'}"
    solved = run("solve", "subtraction", "-p", "heap=22", "--db", url, "--json", path=plugin_path)
    assert solved.returncode == 0, solved.stderr
    assert json.loads(solved.stdout)["value"] == 1  # 22 is not a multiple of 4
    query = run(
        "query", "subtraction", "20", "-p", "heap=22", "--db", url, "--json", path=plugin_path
    )
    assert query.returncode == 0, query.stderr
    view = json.loads(query.stdout)
    assert view["value"] == -1 and view["game"] == "subtraction"
    status = run("status", "--db", url, "--json", path=plugin_path)
    [variant] = json.loads(status.stdout)["variants"]
    assert variant["game_source"] == "plugin negagraph-subtraction 0.1.0"
    assert variant["installed"] is True
    checked = run("check", "subtraction", "-p", "take=5", path=plugin_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "every reachable one" in checked.stdout and "ok: no violation" in checked.stdout

    # Without the plugin: the database still opens and says which game is missing.
    status = run("status", "--db", url)
    assert status.returncode == 0 and "subtraction" in status.stdout
    assert "[game not installed]" in status.stdout
    query = run("query", "subtraction", "20", "--db", url)
    assert query.returncode == 1
    assert query.stderr == (
        "error: the database holds game 'subtraction' but it is not "
        "installed here (install its plugin package, or name its class "
        "as module:Class)\n"
    )
    query = run("query", "nim", "20", "--db", url)
    assert query.returncode == 1 and query.stderr.startswith("error: unknown game 'nim'")


def test_installed_plugin_served_and_missing_plugin_is_503(
    plugin_path: Path, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'sub.db'}"
    assert run("solve", "subtraction", "--db", url, path=plugin_path).returncode == 0
    with served(url, path=plugin_path) as base:
        status, _, body = fetch(f"{base}/api/games")
        assert status == 200
        entry = {g["name"]: g for g in body["games"]}["subtraction"]
        assert entry["source"] == "plugin negagraph-subtraction 0.1.0"
        assert entry["variants"][0]["game_source"] == "plugin negagraph-subtraction 0.1.0"
        assert body["plugin_errors"] == []
        status, _, body = fetch(f"{base}/api/games/subtraction/positions?p=21")
        assert status == 200 and body["value"] == 1
    with served(url) as base:  # the plugin is not installed in this server
        status, _, body = fetch(f"{base}/api/games/subtraction/positions?p=21")
        assert status == 503, body
        assert "'subtraction'" in body["error"]["message"]
        assert "not installed" in body["error"]["message"]
        status, _, body = fetch(f"{base}/api/games")
        assert status == 200
        missing = {g["name"]: g for g in body["games"]}["subtraction"]
        assert missing["installed"] is False and missing["variants"][0]["nodes"] == 22
        status, _, body = fetch(f"{base}/api/games/no-such-game/positions?p=1")
        assert status == 404


def test_broken_plugins_are_one_line_each_and_builtins_work(
    broken_path: Path, tmp_path: Path
) -> None:
    listed = run("games", "--json", path=broken_path)
    assert listed.returncode == 0, listed.stderr
    warnings = listed.stderr.splitlines()
    assert all(w.startswith("warning: plugin '") for w in warnings), warnings
    named = {w.split("'")[1]: w for w in warnings}
    assert set(named) == set(BROKEN_ENTRY_POINTS) - {"heap"}
    assert "ModuleNotFoundError" in named["missing-module"]
    assert "does not implement children, format, parse, terminal_value" in named["unfinished"]
    assert "not a subclass of solver.game.GameBase" in named["not-a-game"]
    assert "already taken by builtin" in named["tic-tac-toe"]
    assert "low <= high" in named["bad-facts"]
    assert "must be the game's name 'heap'" in named["misnamed"]
    assert all("broken-games 2.5" in w for w in warnings)
    games = {g["name"]: g for g in json.loads(listed.stdout)}
    assert set(games) == set(BUILTIN_GAMES) | {"heap"}
    assert games["tic-tac-toe"]["source"] == "builtin"

    url = f"sqlite:///{tmp_path / 'b.db'}"
    solved = run("solve", "tic-tac-toe", "--db", url, "--json", path=broken_path)
    assert solved.returncode == 0 and json.loads(solved.stdout)["value"] == 0
    failed = run("solve", "missing-module", "--db", url, path=broken_path)
    assert failed.returncode == 1
    [line] = failed.stderr.splitlines()
    assert line.startswith("error: game 'missing-module' is not available: plugin")
    assert "ModuleNotFoundError" in line
    with served(url, path=broken_path) as base:
        status, _, body = fetch(f"{base}/api/games")
        assert status == 200 and len(body["plugin_errors"]) == len(warnings)
        status, _, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=.........")
        assert status == 200 and body["value"] == 0
        status, _, body = fetch(f"{base}/api/games/missing-module/positions?p=1")
        assert status == 404 and "ModuleNotFoundError" in body["error"]["message"]


def test_references_through_the_cli(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    solved = run("solve", f"{BAD}:Heap", "--db", url, "--json")
    assert solved.returncode == 0, solved.stderr
    assert json.loads(solved.stdout)["value"] == 1
    query = run("query", "tests.games.bad_games:Heap", "8", "--db", url, "--json")
    assert query.returncode == 0 and json.loads(query.stdout)["value"] == -1
    for args, installed in (((), False), (("--game", f"{BAD}:Heap"), True)):
        status = run("status", "--db", url, "--json", *args)
        [variant] = json.loads(status.stdout)["variants"]
        assert variant["installed"] is installed
        assert variant["game_source"] == f"reference {BAD}:Heap"
    with served(url, "--game", f"{BAD}:Heap") as base:
        code, _, body = fetch(f"{base}/api/games/heap/positions?p=21")
        assert code == 200 and body["value"] == 1
        source = {g["name"]: g for g in body_games(base)}["heap"]["source"]
        assert source == f"reference {BAD}:Heap"
        code, _, body = fetch(f"{base}/api/games/tests.games.bad_games:Heap/positions?p=1")
        assert code == 404  # references are never taken over HTTP
    for ref, message in [
        (f"{BAD}:Nothing", f"game reference '{BAD}:Nothing': {BAD} has no Nothing"),
        ("no/such/file.py:X", "game reference 'no/such/file.py:X': no file no/such/file.py"),
        (f"{BAD}:Unfinished", "does not implement children, format, parse, terminal_value"),
        (f"{BAD}:TicTacToeAgain", "the name 'tic-tac-toe' is already taken by builtin"),
    ]:
        done = run("solve", ref, "--memory")
        assert done.returncode == 1
        [line] = done.stderr.splitlines()
        assert line.startswith("error: ") and message in line, line


def body_games(base: str) -> list[dict[str, object]]:
    status, _, body = fetch(f"{base}/api/games")
    assert status == 200
    games: list[dict[str, object]] = body["games"]
    return games


@pytest.mark.parametrize(
    ("cls", "check", "witness"),
    [("WrongSymmetry", "symmetry", "1"), ("FakeAcyclic", "acyclic", "2")],
)
def test_check_catches_lies_with_a_witness(cls: str, check: str, witness: str) -> None:
    done = run("check", f"{BAD}:{cls}", "--json")
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {json.loads(done.stdout)['game']} breaks the Game")
    report = json.loads(done.stdout)
    assert not report["ok"]
    assert witness in {v["witness"] for v in report["violations"] if v["check"] == check}


def test_check_counts_every_violation_it_found() -> None:
    """WrongSymmetry breaks canonical() at 12 of its 22 positions (5 listed) and its
    symmetry at 1 of the 2 pairs solved: 13 violations, not the 6 listed."""
    done = run("check", f"{BAD}:WrongSymmetry", "--symmetry-pairs", "2")
    assert done.returncode == 1
    assert done.stdout.count("  violation ") == 6
    assert "  note: 7 more canonical violations not shown" in done.stdout.splitlines()
    assert done.stderr == (
        "error: wrong-symmetry breaks the Game contract: 13 violations (6 listed above: "
        "of each per-position check, the first 5)\n"
    )
    done = run("check", f"{BAD}:WrongSymmetry", "--symmetry-pairs", "2", "--json")
    report = json.loads(done.stdout)
    assert (report["violations_found"], len(report["violations"])) == (13, 6)
    assert done.stderr == "error: wrong-symmetry breaks the Game contract: 13 violations\n"
    done = run("check", f"{BAD}:FakeAcyclic")  # every violation listed
    assert done.stderr.endswith("breaks the Game contract: 1 violation (listed above)\n")


def test_registry_in_python() -> None:
    """A private registry (the process-wide one is left alone): a reference registers
    the game under its own name; an unknown name after a failed plugin says why."""
    registry = Registry()
    cls = registry.find(f"{ROOT / BAD}:Heap")
    assert registry.find("heap") is cls and cls().children(2) == [("1", 1), ("2", 0)]
    assert registry.source("heap").kind == "reference"
    with pytest.raises(UnknownGameError, match="unknown game 'nope'"):
        registry.find("nope")


def test_the_tutorial_shows_the_tested_example() -> None:
    """docs/games.md's code is the example plugin these tests install and drive."""
    blocks = re.findall(
        r"```(\w*)\n(.*?)```", (ROOT / "docs" / "games.md").read_text(), flags=re.DOTALL
    )
    example = ROOT / "examples" / "subtraction"
    assert ("python", (example / "subtraction_game.py").read_text()) in blocks
    assert ("toml", (example / "pyproject.toml").read_text()) in blocks
    assert len((example / "subtraction_game.py").read_text().splitlines()) <= 40
