"""A tiered full solve into SQLite on a disk that is full, or nearly: a file system of a
few MiB (``tmpfs``), mounted for the solve alone in a user and mount namespace of its own
(``unshare``: no root needed where the kernel lets users make namespaces).

The other tests' full disk, a page limit on every connection (``PRAGMA
max_page_count``, tests/db/test_write_behind.py), bounds the database's pages only; a
checkpoint of the write-ahead log ignores it, and the log and the file do not share
its room. Here the log and the file share one disk, as on a real one: the solve's
checkpoints need room for the file to grow beside the log (:mod:`db.backends.sqlite.wal`).

connect-four 4 x 4: a database of 15.3 MiB. Its tiered solve wrote a log of 22 MiB
(nothing was checkpointed before the end), and its closing checkpoint then needed the
15.3 MiB on top of it: on a disk of 28 MiB the solve succeeded, logged ``ERROR
db.store: could not give the writer's connection back`` with four tracebacks, and left
its log of 22 MiB beside a file of 6 MiB; a solve that failed for want of room logged
the same before its one error line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))

MOUNTED = """
mount -t tmpfs -o "size=${SIZE}" tmpfs "$DISK" || exit 97
"$@"
code=$?
cp "$DISK"/* "$OUT"/
exit $code
"""
"""Run the command given on a fresh ``tmpfs`` of ``$SIZE`` (``28m``, ``2400k``) at
``$DISK``, then copy what it left there to ``$OUT`` (the mount goes with the namespace)."""


def _solve_on_disk(
    where: Path, size: int | str, *options: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``negagraph solve`` of connect-four 4 x 4, tiered (and *options*), into a SQLite
    file on a disk of *size* (an int: MiB); the command's outcome and the directory
    holding a copy of what it left on the disk (the database, and its log if it left
    one)."""
    disk, out = where / "disk", where / "out"
    disk.mkdir()
    out.mkdir()
    url = f"sqlite:///{disk / 'negagraph.db'}"
    solve = [NEGAGRAPH, "solve", "connect-four", "-p", "width=4", "-p", "height=4", "--full"]
    size = f"{size}m" if isinstance(size, int) else size
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", MOUNTED, "sh",
         *solve, *options, "-q", "--db", url],
        env={**os.environ, **(env or {}), "SIZE": size, "DISK": str(disk), "OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode != 97, f"no tmpfs in a namespace of our own: {done.stderr}"
    return done, out


def _errors(stderr: str) -> list[str]:
    """*stderr* but the line saying that the schema was made."""
    return [line for line in stderr.splitlines() if not line.startswith("created the ")]


def test_a_solve_on_a_nearly_full_disk_leaves_one_file_and_says_nothing(tmp_path: Path) -> None:
    """Room for the database and half as much again: the solve ends as on any disk, says
    nothing but its result, and leaves the database alone, its log copied in."""
    done, out = _solve_on_disk(tmp_path, 28)
    assert done.returncode == 0, done.stderr
    assert _errors(done.stderr) == []
    assert "value 0 (exact)" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == ["negagraph.db"]
    with sqlite3.connect(out / "negagraph.db") as conn:
        assert conn.execute("SELECT count(*) FROM nodes").fetchone() == (161_029,)
        assert conn.execute("SELECT status, nodes FROM solve_runs").fetchall() == [
            ("complete", 161_029)
        ]


def test_a_solve_that_fills_the_disk_fails_with_one_line(tmp_path: Path) -> None:
    """A disk too small, filled all the same (the check before each tier turned off, as
    on a file system that misreports its room): one error line, nothing before it, and
    the run recorded as failed with the positions committed, as the commits say: node
    rows and positions discovered, not solved yet, which `negagraph status` shows
    apart."""
    done, out = _solve_on_disk(tmp_path, 8, env={"NEGAGRAPH_DISK_CHECK": "0"})
    assert done.returncode == 1
    assert _errors(done.stderr) == [
        f"error: database sqlite:///{tmp_path / 'disk' / 'negagraph.db'}: database or disk is full"
    ], done.stderr
    with sqlite3.connect(out / "negagraph.db") as conn:
        (rows,) = conn.execute("SELECT count(*) FROM nodes").fetchone()
        (run,) = conn.execute("SELECT status, nodes FROM solve_runs").fetchall()
        (last,) = conn.execute("SELECT nodes FROM commits ORDER BY seq DESC LIMIT 1").fetchone()
    assert 0 < rows < last and run == ("failed", last)
    shown = subprocess.run(
        [NEGAGRAPH, "status", "--json", "--db", f"sqlite:///{out / 'negagraph.db'}"],
        capture_output=True,
        text=True,
    )
    (variant,) = json.loads(shown.stdout)["variants"]
    assert (variant["nodes"], variant["discovered_unsolved"]) == (rows, last - rows)


def test_a_solve_stops_before_the_disk_fills_and_goes_on_where_there_is_room(
    tmp_path: Path, compact_4x4: Path
) -> None:
    """A disk too small for the compact 4 x 4 table (2.8 MB): the run stops between
    tiers, exit 0, with one line naming the tier it did not start and the room that
    needs; the database is whole. Copied to a disk with room, the same command finishes
    it to the very tables of an uninterrupted solve."""
    done, out = _solve_on_disk(tmp_path, "2400k", "--layout", "compact")
    assert done.returncode == 0, done.stderr
    (note,) = _errors(done.stderr)
    assert re.fullmatch(
        r"  stopped before the disk filled, after committing the last tier: discovering "
        r"tier \d+ \([\d,]+ positions\) needs about [\d.]+ [KM]iB of disk, and [\d.]+ "
        r"[KM]iB is free beside the database \(.*/disk\); make room there, or move the "
        r"database, and run the same command again to go on",
        note,
    ), note
    moved = tmp_path / "moved.db"
    shutil.copy(out / "negagraph.db", moved)
    with sqlite3.connect(moved) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (run,) = conn.execute("SELECT status FROM solve_runs").fetchall()
        assert run == ("budget",)
    again = _solve_compact(moved)
    assert "value 0 (exact)" in again.stdout
    assert _compact_rows(moved) == _compact_rows(compact_4x4)


def _compact_rows(path: Path) -> list[tuple[int, ...]]:
    with sqlite3.connect(path) as conn:
        (vid,) = conn.execute("SELECT id FROM variants").fetchone()
        return conn.execute(f"SELECT * FROM compact_{vid} ORDER BY key").fetchall()


@pytest.fixture
def compact_4x4(tmp_path: Path) -> Path:
    """connect-four 4 x 4 solved compact in one run, on a disk with room."""
    path = tmp_path / "reference.db"
    _solve_compact(path)
    return path


def _solve_compact(path: Path) -> subprocess.CompletedProcess[str]:
    """``negagraph solve`` of connect-four 4 x 4 compact into SQLite file *path*, on the
    machine's own disk; it must succeed."""
    done = subprocess.run(
        [NEGAGRAPH, "solve", "connect-four", "-p", "width=4", "-p", "height=4", "--full",
         "--layout", "compact", "-q", "--db", f"sqlite:///{path}"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done
