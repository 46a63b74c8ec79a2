"""Unusable databases, as real ``negagraph`` processes meet them: one line on stderr, exit
status 1, no traceback, and the file (and its directory) left exactly as it was — for
``solve``, ``query``, ``status``, ``serve`` and ``db upgrade``. Read-only places (a
read-only file system, a read-only file, a read-only directory) are real mounts made by
the fixtures (the tests run as root, whom permission bits do not stop); a mount that
cannot be made fails the test."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from db.migrate import current_revision, head_revision
from db.session import make_engine
from tests.built_once import built_once

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))
LIMIT = 120.0
"""Seconds any one command may take (generous: the machine is shared)."""


def negagraph(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NEGAGRAPH_DATABASE_URL"}
    return subprocess.run(
        [NEGAGRAPH, *args], capture_output=True, text=True, timeout=LIMIT, env=env
    )


def run_all(commands: dict[str, list[str]]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run ``negagraph`` with each argument list, all at once (they only read or fail)."""
    env = {k: v for k, v in os.environ.items() if k != "NEGAGRAPH_DATABASE_URL"}
    procs = {
        name: subprocess.Popen(
            [NEGAGRAPH, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name, args in commands.items()
    }
    done = {}
    try:
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=LIMIT)
            done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


COMMANDS: dict[str, list[str]] = {
    "solve": ["solve", "tic-tac-toe", "--max-expansions", "5"],
    "query": ["query", "tic-tac-toe", "x........"],
    "status": ["status"],
    "serve": ["serve", "--port", "0"],  # the port is replaced by a free one
    "db upgrade": ["db", "upgrade"],
}
READERS = ("query", "status", "serve")
WRITERS = ("solve", "db upgrade")


def command(name: str, path: Path) -> list[str]:
    args = list(COMMANDS[name])
    if name == "serve":
        args[-1] = str(free_port())
    return [*args, "--db", f"sqlite:///{path}"]


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a command that failed as it should."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert done.stdout == "", done.stdout  # no banner, no partial output
    return lines[0]


def snapshot(directory: Path) -> dict[str, str]:
    """Every entry of *directory* with a hash of its bytes ("dir" for directories)."""
    found = {}
    for entry in sorted(directory.iterdir()):
        if entry.is_dir():
            found[entry.name] = "dir"
        else:
            found[entry.name] = hashlib.sha256(entry.read_bytes()).hexdigest()
    return found


@pytest.fixture(scope="module")
def solved_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real negagraph database: tic-tac-toe solved in full, checkpointed, no -wal (one
    for the session: the tests copy it, or only read it)."""

    def solve(directory: Path) -> None:
        path = directory / "ttt.db"
        done = negagraph("solve", "tic-tac-toe", "--full", "--db", f"sqlite:///{path}")
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in path.parent.iterdir()) == ["ttt.db"]

    return built_once(tmp_path_factory, "solved-ttt", solve) / "ttt.db"


def _text(path: Path, solved: Path) -> None:
    path.write_text("game,value\ntic-tac-toe,0\n")


def _random(path: Path, solved: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _directory(path: Path, solved: Path) -> None:
    path.mkdir()


def _truncated(path: Path, solved: Path) -> None:
    data = solved.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _foreign(path: Path, solved: Path) -> None:
    conn = sqlite3.connect(path)  # another application's file, in rollback-journal mode
    conn.execute("CREATE TABLE foo (x INTEGER)")
    conn.execute("INSERT INTO foo VALUES (1)")
    conn.commit()
    conn.close()


BAD: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "text": (_text, "is not a SQLite database"),
    "random-bytes": (_random, "is not a SQLite database"),
    "directory": (_directory, "is a directory, not a database file"),
    "truncated": (_truncated, "is truncated"),
    "foreign": (_foreign, "holds tables (foo) but no negagraph schema"),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_database_gets_one_line_and_is_left_unchanged(
    tmp_path: Path, solved_db: Path, kind: str
) -> None:
    make, message = BAD[kind]
    path = tmp_path / "bad.db"
    make(path, solved_db)
    before = snapshot(tmp_path)
    for name, done in run_all({name: command(name, path) for name in COMMANDS}).items():
        line = one_error_line(done)
        assert message in line and str(path) in line, (name, line)
    assert snapshot(tmp_path) == before  # same bytes, no -wal, -shm or -journal left


def test_the_messages_say_what_to_do(tmp_path: Path, solved_db: Path) -> None:
    foreign = tmp_path / "foreign.db"
    _foreign(foreign, solved_db)
    url = f"sqlite:///{foreign}"
    line = one_error_line(negagraph(*command("status", foreign)))
    assert f"database {url} is not a negagraph database" in line
    line = one_error_line(negagraph(*command("db upgrade", foreign)))
    assert f"`negagraph db upgrade --allow-other-tables --db {url}`" in line
    truncated = tmp_path / "truncated.db"
    _truncated(truncated, solved_db)
    line = one_error_line(negagraph(*command("query", truncated)))
    size = truncated.stat().st_size
    assert f"but the file has {size:,}): restore it from a copy" in line
    # sharing another application's database is possible, when asked for explicitly
    done = negagraph("db", "upgrade", "--allow-other-tables", "--db", url)
    assert done.returncode == 0, done.stderr
    engine = make_engine(url)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
    assert sqlite3.connect(foreign).execute("SELECT x FROM foo").fetchall() == [(1,)]


@pytest.mark.parametrize("name", READERS)
def test_readers_neither_create_a_missing_file_nor_write_an_empty_one(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / "absent.db"
    url = f"sqlite:///{path}"
    line = one_error_line(negagraph(*command(name, path)))
    assert f"database {url} does not exist" in line
    assert f"negagraph db upgrade --db {url}" in line  # how to make one
    assert list(tmp_path.iterdir()) == []
    path.touch()
    line = one_error_line(negagraph(*command(name, path)))
    assert "not at schema head (found no schema" in line
    assert snapshot(tmp_path) == {"absent.db": hashlib.sha256(b"").hexdigest()}


@pytest.mark.parametrize("name", WRITERS)
def test_writers_initialise_an_empty_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / "empty.db"
    path.touch()  # SQLite's view: an empty database
    done = negagraph(*command(name, path))
    assert done.returncode == 0, done.stderr
    engine = make_engine(f"sqlite:///{path}", read_only=True)
    try:
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


# -- read-only places, for real ----------------------------------------------------------


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.fail(f"mount {' '.join(args)} failed: {done.stderr.strip()}", pytrace=False)


def _umount(target: Path) -> None:
    done = subprocess.run(["umount", str(target)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"umount {target}: {done.stderr}"


@contextmanager
def read_only_fs(directory: Path, fill: Callable[[Path], None]) -> Iterator[Path]:
    """*directory* as a fresh tmpfs, filled by *fill*, then remounted read-only."""
    directory.mkdir()
    _mount("-t", "tmpfs", "-o", "size=64m", "tmpfs", str(directory))
    try:
        fill(directory)
        _mount("-o", "remount,ro", str(directory))
        with pytest.raises(OSError):
            (directory / "probe").touch()  # read-only even for root
        yield directory
    finally:
        _umount(directory)


@contextmanager
def bind(source: Path, target: Path, *, read_only: bool) -> Iterator[Path]:
    """*source* bind-mounted on *target* (read-only if asked)."""
    _mount("--bind", str(source), str(target))
    try:
        if read_only:
            _mount("-o", "remount,bind,ro", str(target))
        yield target
    finally:
        _umount(target)


def fetch(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read() or b"null")


@contextmanager
def serving(path: Path) -> Iterator[str]:
    """A real ``negagraph serve`` of *path*, up (``/api/health`` answered 200)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [NEGAGRAPH, "serve", "--db", f"sqlite:///{path}", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + LIMIT
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if fetch(f"{base}/api/health")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            assert time.monotonic() < deadline, f"{base}/api/health not up within {LIMIT} s"
            time.sleep(0.1)
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    assert proc.returncode == 0, err


@pytest.fixture(scope="module")
def solved_query(solved_db: Path) -> str:
    """What ``query`` prints on the writable original (asked once: the three read-only
    places compare against it)."""
    expected = negagraph(*command("query", solved_db))
    assert expected.returncode == 0, expected.stderr
    return expected.stdout


def assert_reads(path: Path, solved_query: str) -> None:
    """query, status and serve on *path* answer as on the writable original."""
    done = negagraph(*command("query", path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == solved_query and "value 0" in done.stdout
    done = negagraph(*command("status", path))
    assert done.returncode == 0, done.stderr
    assert "tic-tac-toe (symmetry=false) rules v1: 5,478 nodes" in done.stdout
    with serving(path) as base:
        status, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=x........")
        assert status == 200 and body["value"] == 0 and body["moves"][0]["move"] == "b2"


def test_a_read_only_file_system_is_read_and_served_never_written(
    tmp_path: Path, solved_db: Path, solved_query: str
) -> None:
    def fill(d: Path) -> None:
        shutil.copy(solved_db, d / "ttt.db")

    with read_only_fs(tmp_path / "ro", fill) as ro:
        path = ro / "ttt.db"
        before = snapshot(ro)
        assert_reads(path, solved_query)
        for name in WRITERS:
            line = one_error_line(negagraph(*command(name, path)))
            assert f"cannot use database sqlite:///{path} for writing" in line
            assert "is on a read-only file system" in line and "it can still be read" in line
        line = one_error_line(negagraph(*command("solve", ro / "new.db")))
        assert f"directory {str(ro)!r} is on a read-only file system" in line
        assert "cannot be created" in line
        assert snapshot(ro) == before


def _with_write_ahead_log(directory: Path, solved_db: Path, *, shm: bool) -> None:
    """A copy of the solved database whose last commit (a second variant) is still in
    its -wal file, as a live writer leaves it; with or without the -shm file."""
    work = directory.parent / f"{directory.name}-work"
    work.mkdir()
    shutil.copy(solved_db, work / "ttt.db")
    conn = sqlite3.connect(work / "ttt.db")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute(
        "INSERT INTO variants (game, params, params_json, rules_version, created_at) "
        "VALUES ('number-game', 'root=99', '{\"root\": 99}', 1, CURRENT_TIMESTAMP)"
    )
    conn.commit()
    names = ["ttt.db", "ttt.db-wal"] + (["ttt.db-shm"] if shm else [])
    for name in names:
        shutil.copy(work / name, directory / name)
    conn.close()
    assert (directory / "ttt.db-wal").stat().st_size > 0


def test_a_read_only_file_system_with_a_write_ahead_log(tmp_path: Path, solved_db: Path) -> None:
    with read_only_fs(
        tmp_path / "ro", lambda d: _with_write_ahead_log(d, solved_db, shm=True)
    ) as ro:
        before = snapshot(ro)
        done = negagraph(*command("status", ro / "ttt.db"))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"sqlite:///{ro / 'ttt.db'}: 2 variants")  # the WAL's
        assert snapshot(ro) == before
    with read_only_fs(
        tmp_path / "ro2", lambda d: _with_write_ahead_log(d, solved_db, shm=False)
    ) as ro:
        before = snapshot(ro)
        for name in READERS:
            line = one_error_line(negagraph(*command(name, ro / "ttt.db")))
            assert f"{str(ro / 'ttt.db-wal')!r} holds changes not yet in the database" in line
            assert "copy the database together with 'ttt.db-wal'" in line
        assert snapshot(ro) == before


def test_a_read_only_file_in_a_writable_directory(
    tmp_path: Path, solved_db: Path, solved_query: str
) -> None:
    path = tmp_path / "ttt.db"
    shutil.copy(solved_db, path)
    with bind(path, path, read_only=True):
        before = snapshot(tmp_path)
        assert_reads(path, solved_query)
        for name in WRITERS:
            line = one_error_line(negagraph(*command(name, path)))
            assert f"{str(path)!r} is on a read-only file system" in line
        assert snapshot(tmp_path) == before


def test_a_writable_file_in_a_read_only_directory(
    tmp_path: Path, solved_db: Path, solved_query: str
) -> None:
    source = tmp_path / "source.db"
    shutil.copy(solved_db, source)
    with read_only_fs(tmp_path / "ro", lambda d: (d / "ttt.db").touch()) as ro:
        with bind(source, ro / "ttt.db", read_only=False) as path:
            before = snapshot(ro)
            assert_reads(path, solved_query)
            for name in WRITERS:
                line = one_error_line(negagraph(*command(name, path)))
                assert f"its directory {str(ro)!r} is on a read-only file system" in line
                assert "SQLite writes 'ttt.db-wal'" in line
            assert snapshot(ro) == before
