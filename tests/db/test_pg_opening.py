"""Opening PostgreSQL databases with real processes: two first solves racing to create
the schema of an empty database, and a server that accepts connections but never
answers (a listener this test starts on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from db.migrate import current_revision, head_revision
from db.session import make_engine
from tests.db.helpers import pg_database

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))
LIMIT = 120.0
"""Seconds any one command may take (generous: the machine is shared)."""


def start(*args: str, **env: str) -> subprocess.Popen[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEGAGRAPH_")}
    return subprocess.Popen(
        [NEGAGRAPH, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**environ, **env},
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"{proc.args!r} still running after {LIMIT} s: {err}") from None
    return proc.returncode, out, err


@pytest.mark.slow
@pytest.mark.postgres
def test_two_first_solves_on_an_empty_database_never_crash() -> None:
    """Both start at once on a database without a schema: one creates it, the other
    waits for it; then one solves and the other is refused as the variant's second
    writer (or solves after it). Never a traceback."""
    for attempt in range(4):
        with pg_database() as url:
            args = ("solve", "tic-tac-toe", "--max-expansions", "200", "--json", "--db", url)
            procs = [start(*args), start(*args)]
            results = [finish(p) for p in procs]
            engine = make_engine(url)
            try:
                assert current_revision(engine) == head_revision()
            finally:
                engine.dispose()
        for code, out, err in results:
            assert "Traceback" not in err, (attempt, err)
            if code == 0:
                assert json.loads(out)["expansions"] > 0, (attempt, out)
            else:
                # the refused one may be the one that created the schema (it says so)
                lines = [
                    x
                    for x in err.strip().splitlines()
                    if not x.startswith("created the negagraph schema in ")
                ]
                assert code == 1 and len(lines) == 1, (attempt, err)
                assert lines[0].startswith("error: tic-tac-toe (symmetry=false) is "), lines
                assert "being solved by run" in lines[0] or "another writer" in lines[0]
        assert any(code == 0 for code, _, _ in results), (attempt, results)
        created = [err for _, _, err in results if "created the negagraph schema" in err]
        assert len(created) == 1, (attempt, results)  # and the waiting one does not claim it


@contextmanager
def silent_server() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that accepts every connection and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=10)
        for conn in accepted:
            conn.close()
        listener.close()
    assert accepted, "no command ever connected to the silent server"


COMMANDS = {
    "solve": ["solve", "tic-tac-toe"],
    "query": ["query", "tic-tac-toe", "x........"],
    "status": ["status"],
    "serve": ["serve", "--port", "0"],  # a free port, below
    "db upgrade": ["db", "upgrade"],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.slow
def test_a_server_that_never_answers_is_one_line_not_a_hang() -> None:
    with silent_server() as port:
        url = f"postgresql://postgres@127.0.0.1:{port}/nothing"
        began = time.monotonic()
        procs = {
            name: start(
                *[str(free_port()) if a == "0" else a for a in args],
                "--db",
                url,
                NEGAGRAPH_PG_CONNECT_TIMEOUT="3",
            )
            for name, args in COMMANDS.items()
        }
        procs["status (default timeout)"] = start("status", "--db", url)
        results = {name: finish(proc) for name, proc in procs.items()}
        elapsed = time.monotonic() - began
    assert elapsed < LIMIT
    for name, (code, out, err) in results.items():
        lines = err.strip().splitlines()
        assert code == 1 and len(lines) == 1 and out == "", (name, code, out, err)
        limit = "10" if "default" in name else "3"
        assert lines[0] == (
            f"error: cannot use database postgresql+psycopg://postgres@127.0.0.1:{port}/"
            f"nothing: the server 127.0.0.1:{port} did not answer within {limit} s "
            "($NEGAGRAPH_PG_CONNECT_TIMEOUT sets the limit)"
        ), (name, lines)


def test_a_server_that_refuses_is_one_line() -> None:
    port = free_port()  # nothing listens there
    done = subprocess.run(
        [NEGAGRAPH, "status", "--db", f"postgresql://postgres@127.0.0.1:{port}/nothing"],
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"error: cannot use database postgresql+psycopg://postgres@127.0.0.1:{port}/nothing: "
    )
    assert "Connection refused Is the server running" in lines[0]
