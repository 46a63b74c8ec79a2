"""`negagraph solve` of games that break the contract where a solve cannot go on, as real
processes: one ``error:`` line naming the cause, exit status 1, the database as it was;
and a first Ctrl-C ends a long refusal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from db.session import make_engine
from db.store.writer import CRASH_ENV
from tests.db.test_solve_cli import NEGAGRAPH, WAIT, read_lines_until, start_solve

ROOT = Path(__file__).resolve().parents[2]
BAD = str(ROOT / "tests" / "games" / "bad_games.py")
"""The bad games, by file reference (``BAD + ":EndlessTiers"``)."""

MEASURED = """\
import resource, subprocess, sys

def cap():  # a runaway solve fails at 4 GiB of address space, the machine's RAM spared
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

done = subprocess.run(
    sys.argv[3:], capture_output=True, text=True, preexec_fn=cap, timeout=float(sys.argv[2])
)
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024))
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
sys.exit(done.returncode)
"""
"""``MEASURED PEAK SECONDS COMMAND...`` runs COMMAND (ended after SECONDS) and writes its
peak RSS in bytes (the largest of its process and theirs) to the file PEAK."""


def solve_measured(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """``negagraph solve ARGS`` as a real process: what it did, and its peak RSS."""
    peak = tmp_path / "peak"
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, str(peak), str(WAIT), NEGAGRAPH, "solve", *args],
        capture_output=True,
        text=True,
        timeout=2 * WAIT,
        check=False,
    )
    assert peak.exists(), done.stderr  # not if the solve ran out of time
    return done, int(peak.read_text())


def stored_rows(url: str) -> tuple[int, int, int]:
    """The variants, solve runs and nodes *url* holds."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM variants), (SELECT count(*) FROM solve_runs), "
                    "(SELECT count(*) FROM nodes)"
                )
            ).one()
    finally:
        engine.dispose()
    return int(found[0]), int(found[1]), int(found[2])


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one ``error:`` line a refused command wrote (exit status 1, nothing else)."""
    assert done.returncode == 1, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_an_endless_child_tier_relation_is_refused_in_its_memory_limit(
    db_url: str, tmp_path: Path
) -> None:
    done, peak = solve_measured(
        tmp_path, f"{BAD}:EndlessTiers", "--full", "--db", db_url, "--memory-limit", "300MiB"
    )
    line = one_error_line(done)
    assert line == (
        "error: endless-tiers: the child-tier relation reaches more than 100,000 tiers from "
        "the root's tier: tiers must be finite (child_tiers must come to tiers without "
        "children; negagraph check finds this)"
    )
    assert peak < 300 << 20
    assert stored_rows(db_url) == (0, 0, 0)


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_a_first_ctrl_c_ends_the_walk_of_the_child_tiers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'slow.db'}"
    # its walk up to the limit would take minutes (two milliseconds a tier)
    proc = start_solve(f"{BAD}:SlowEndlessTiers", "--full", "--db", url)
    try:
        assert proc.stderr is not None
        lines = read_lines_until(proc.stderr, lambda line: "created the negagraph schema" in line)
        proc.send_signal(signal.SIGINT)  # once: the solve is walking the child tiers
        out, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()  # if it did not end
    err = "".join(lines) + err
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Aborted!" not in err
    # no batch was committed: the line does not speak of one
    assert err.endswith(
        "interrupted: the solve had not begun: nothing of it was written; run the same "
        "command again to solve\n"
    ), err
    assert stored_rows(url) == (0, 0, 0)


@pytest.mark.parametrize(
    ("cls", "args", "value"),
    [("OutOfRange", [], -2), ("OutOfRangeTiers", ["--full"], 2)],  # partial; tiered
)
def test_a_terminal_value_outside_the_range_is_refused_in_one_line(
    db_url: str, cls: str, args: list[str], value: int
) -> None:
    done = subprocess.run(
        [NEGAGRAPH, "solve", f"{BAD}:{cls}", *args, "--db", db_url],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    name = "out-of-range-tiers" if args else "out-of-range"
    assert one_error_line(done) == (
        f"error: {name}: position '0' has the terminal value {value}, outside the declared "
        "value_range (-1, 1) (the game breaks its contract; negagraph check finds this)"
    )
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            stored = conn.execute(
                text("SELECT count(*) FROM nodes WHERE low NOT BETWEEN -1 AND 1")
            ).scalar_one()
    finally:
        engine.dispose()
    assert stored == 0


def solve_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``negagraph solve ARGS`` as a real process (with *env* added to the environment)."""
    return subprocess.run(
        [NEGAGRAPH, "solve", *args],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    ("cls", "name", "found"),
    [
        (
            "FickleTiers",
            "fickle-tiers",
            "a move leads to position '22' of tier 5, which the tier's discovery did not find",
        ),
        (
            "FicklePass",
            "fickle-pass",
            "a move of tier 21 stays within it, which the tier's discovery did not see",
        ),
        (
            "FickleUp",
            "fickle-up",
            "a move of tier 21 leads to tier 22, which the tier's discovery did not see",
        ),
    ],
)
def test_moves_that_change_from_call_to_call_are_named_as_the_cause(
    db_url: str, cls: str, name: str, found: str
) -> None:
    """A tiered solve expands each position twice (to discover it, then to solve it): a
    move the second time finds that the first did not is the game's doing, which
    ``negagraph check`` tests, not the database's or ``tier()``'s."""
    line = one_error_line(solve_cli(f"{BAD}:{cls}", "--full", "--db", db_url))
    assert line == (
        f"error: {name}: {found}: the game's moves are not deterministic (children() "
        "answers differently from call to call, or canonical() or tier() does); negagraph "
        "check tests this"
    )


def test_rules_changed_between_runs_are_named_as_the_cause(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'changed.db'}"
    args = (f"{BAD}:ChangedTiers", "--full", "--db", url, "--shard-size", "2")
    # killed once it wrote the second slice of block 4's positions: 17 and 16, before it
    # recorded the block; with the rules changed, the block's discovery finds 16 before 17
    killed = solve_cli(*args, env={CRASH_ENV: "shard:3"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    done = solve_cli(*args, env={"NEGAGRAPH_TEST_RULES_CHANGED": "1"})
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    *before, line = done.stderr.strip().splitlines()  # after a warning: the lease taken over
    assert [w.split(":")[0] for w in before] == ["WARNING db.lock"], done.stderr
    assert line == (
        "error: changed-tiers: the positions an earlier run wrote for tier 4 (nodes 4 on) "
        "are not this discovery's: the game's moves are not what they were (its rules "
        "changed without a new version), or the game's moves are not deterministic "
        "(children() answers differently from call to call, or canonical() or tier() "
        "does); negagraph check tests this"
    )
