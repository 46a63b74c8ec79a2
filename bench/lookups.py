"""Target 8: lookups over HTTP (``--only lookups``).

``negagraph serve`` (gunicorn, two workers) answers from the SQLite database of the main
case's full solve (made by :func:`bench.targets.sqlite_runs` if this invocation has not
made it yet) on a free loopback port. A load generator (:mod:`bench.loadgen`) then GETs
single positions, sampled from the database's stored positions, over
:data:`CONNECTIONS` connections; and a batch POST of :data:`BATCH` positions is timed
:data:`BATCH_RUNS` times after one warm-up.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.loadgen import run_load
from bench.measure import ROOT, Row, clocked, size_label, target_row
from bench.targets import Size, TargetConfig, baseline_figures, connect_four, sqlite_db, sqlite_runs

HOST = "127.0.0.1"
CONNECTIONS = 8
WORKERS = 2
SAMPLE = 4000
"""Stored positions the single lookups cycle through."""
BATCH = 1000
BATCH_RUNS = 7
STARTUP_SECONDS = 30.0


def sample_positions(db: Path, n: int) -> list[str]:
    """Up to *n* positions stored in the SQLite database *db*, in the game's notation."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT notation FROM nodes ORDER BY random() LIMIT ?", (n,))
        return [notation for (notation,) in rows]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def serving(db: Path, port: int) -> Iterator[None]:
    """``negagraph serve`` on *db* at ``HOST:port`` (this checkout's code), until exit;
    its log goes to ``serve.log`` beside *db*."""
    command = [
        sys.executable,
        "-c",
        "from api.cli import main; main()",
        "serve",
        "--db",
        f"sqlite:///{db}",
        "--host",
        HOST,
        "--port",
        str(port),
        "--workers",
        str(WORKERS),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = (db.parent / "serve.log").open("w")
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    try:
        wait_until_up(port, server)
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def wait_until_up(port: int, server: subprocess.Popen[bytes]) -> None:
    """Poll ``/api/health`` until it answers 200."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"negagraph serve exited with status {server.returncode}")
        try:
            if request(port, "GET", "/api/health")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"negagraph serve did not answer within {STARTUP_SECONDS} s")


def fetch(port: int, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    """(status, body) of one request on a new connection (a JSON *body* if given)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, None if body is None else json.dumps(body), headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def request(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """(status, JSON answer) of one request on a new connection."""
    status, data = fetch(port, method, path, body)
    return status, json.loads(data or b"null")


def position_path(size: Size, position: str) -> str:
    return (
        f"/api/games/connect-four/positions?width={size[0]}&height={size[1]}"
        f"&p={quote(position, safe='')}"
    )


def batch_seconds(port: int, size: Size, positions: list[str]) -> list[float]:
    """Wall times of :data:`BATCH_RUNS` batch lookups of *positions* (after a warm-up),
    from sending the request to reading the whole answer; raises if any position fails."""
    body = {"params": {"width": size[0], "height": size[1]}, "positions": positions}
    path = "/api/games/connect-four/positions"

    def one() -> float:
        seconds, (status, data) = clocked(lambda: fetch(port, "POST", path, body))
        answer = json.loads(data)
        failed = [r for r in answer["results"] if "error" in r] if status == 200 else answer
        if failed:
            raise RuntimeError(f"batch lookup failed ({status}): {str(failed)[:300]}")
        return seconds

    one()  # warm-up
    return [one() for _ in range(BATCH_RUNS)]


def lookup_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 8: single lookups per second and their p99 latency; one batch's time."""
    size = cfg.size
    sqlite_runs(size, 1, repeat)  # the database to serve
    db = sqlite_db(size)
    positions = sample_positions(db, SAMPLE)
    _, value = baseline_figures(size, repeat)
    game = connect_four(size)
    port = free_port()
    with serving(db, port):
        status, root = request(port, "GET", position_path(size, game.format(game.initial())))
        load = run_load(
            HOST,
            port,
            [position_path(size, p) for p in positions],
            seconds=cfg.lookup_seconds,
            connections=CONNECTIONS,
        )
        batch = batch_seconds(port, size, positions[:BATCH])
    ok = status == 200 and root["value"] == value and load.errors == 0
    figures = {
        "case": f"connect-four {size_label(size)}",
        "tool": load.tool,
        "connections": CONNECTIONS,
        "workers": WORKERS,
        "requests": load.requests,
        "errors": load.errors,
        "load_s": round(load.seconds, 1),
        "value": root.get("value"),
        "baseline_value": value,
    }
    batch_ms = statistics.median(batch) * 1e3
    return [
        target_row("8a lookups per second", load.per_second, ">= 1000", correct=ok, **figures),
        target_row("8b lookup p99 latency, ms", load.p99_ms, "< 25", correct=ok, **figures),
        target_row(
            f"8c batch of {len(positions[:BATCH])} lookups, ms",
            batch_ms,
            "< 250",
            correct=ok,
            batch_runs=len(batch),
            **figures,
        ),
    ]


__all__ = ["lookup_rows", "sample_positions", "serving"]
