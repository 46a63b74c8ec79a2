"""``negagraph serve``: refuses unusable databases, and serves for real (gunicorn)."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from click.testing import CliRunner

from api.cli import cli
from api.serve import BODY_TIMEOUT
from bench import hostile
from bench.hostile import run_hostile
from tests.api.helpers import solved_postgres_behind_proxy

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))


def test_serve_refuses_a_database_not_at_head(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    result = CliRunner().invoke(cli, ["serve", "--db", f"sqlite:///{path}"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "not at schema head" in lines[0] and "negagraph db upgrade" in lines[0]


def test_serve_refuses_a_missing_database(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    result = CliRunner().invoke(cli, ["serve", "--db", f"sqlite:///{path}"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and "does not exist" in result.stderr
    assert not path.exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def fetch(url: str, timeout: float = 60, /, **headers: str) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            body = exc.read()
            return exc.code, dict(exc.headers), json.loads(body) if body else None


def wait_until_up(proc: subprocess.Popen[str], url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            if fetch(url)[0] == 200:
                return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not come up within {timeout} s")


def test_serve_answers_over_http_and_stops_on_sigterm(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'served.db'}"
    solved = CliRunner().invoke(cli, ["solve", "tic-tac-toe", "--full", "--db", url])
    assert solved.exit_code == 0, solved.output
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            NEGAGRAPH,
            "serve",
            "--db",
            url,
            "--port",
            str(port),
            "--workers",
            "2",
            "--connections",
            "50",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_up(proc, f"{base}/api/health")
        status, headers, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=x........")
        assert status == 200 and body["position"] == "x../.../..."
        assert body["moves"][0]["move"] == "b2"
        assert headers["Cache-Control"] == "public, max-age=86400, immutable"
        status, _, _ = fetch(
            f"{base}/api/games/tic-tac-toe/positions?p=x........",
            **{"If-None-Match": headers["ETag"]},
        )
        assert status == 304
        status, _, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=xx")
        assert status == 400 and body["error"]["code"] == 400
        request = urllib.request.Request(
            f"{base}/api/games/tic-tac-toe/positions",
            method="POST",
            data=json.dumps({"positions": [".........", "xxx/oo./..."]}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            results = json.loads(response.read())["results"]
        assert [r["value"] for r in results] == [0, -1]
        status, _, body = fetch(f"{base}/api/solves")
        assert status == 200 and body["solves"][0]["status"] == "complete"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    assert proc.returncode == 0, err
    assert f"serving sqlite:///{tmp_path / 'served.db'} at {base}/api" in err
    assert f"explorer: {base}/)" in err  # the browser app's address, as the README says
    assert "Shutting down" in err


def test_serve_stops_on_ctrl_c(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'served.db'}"
    assert CliRunner().invoke(cli, ["db", "upgrade", "--db", url]).exit_code == 0
    port = free_port()
    proc = subprocess.Popen(
        [NEGAGRAPH, "serve", "--db", url, "--port", str(port), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_up(proc, f"http://127.0.0.1:{port}/api/health")
        status, _, body = fetch(f"http://127.0.0.1:{port}/api/games")
        assert status == 200 and all(g["variants"] == [] for g in body["games"])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    assert proc.returncode == 0, err
    assert "Using worker: api.serve.Worker" in err and "Shutting down" in err


def test_serve_stops_quietly_on_ctrl_c_in_a_terminal(ttt_url: str) -> None:
    # Ctrl-C in a terminal signals the whole foreground process group: the master and
    # every worker get SIGINT (and the workers then SIGQUIT from the master). Each worker
    # printed a gevent traceback; a worker still booting (the signal is sent as soon as
    # one answers) lost the signals and served on until the master killed it 10 s later.
    port = free_port()
    proc = subprocess.Popen(
        [NEGAGRAPH, "serve", "--db", ttt_url, "--port", str(port), "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's job
    )
    try:
        wait_until_up(proc, f"http://127.0.0.1:{port}/api/health")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "SystemExit" not in err, err
    assert "SIGKILL" not in err and "graceful timeout" not in err, err
    assert "Shutting down" in err


# -- hostile clients against a real server --------------------------------------------------


@contextmanager
def served(
    url: str, *args: str, log_path: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``negagraph serve`` on *url* at a free loopback port (its base URL), stopped after.

    Its output goes to a file (*log_path*, else a temporary one), not a pipe: gunicorn
    logs a line per refused request, and a pipe nobody reads fills up and blocks the
    workers (requests then go unanswered)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    opened = tempfile.TemporaryFile("w+") if log_path is None else log_path.open("w")
    with opened as log:
        proc = subprocess.Popen(
            [NEGAGRAPH, "serve", "--db", url, "--port", str(port), *args],
            stdout=log,
            stderr=log,
            text=True,
        )
        try:
            wait_until_up(proc, f"{base}/api/health", timeout=120)
            yield base, proc
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def ttt_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'ttt.db'}"
    solved = CliRunner().invoke(cli, ["solve", "tic-tac-toe", "--full", "--db", url])
    assert solved.exit_code == 0, solved.output
    return url


def test_slow_clients_do_not_stall_lookups(ttt_url: str) -> None:
    # Twice as many slow clients as worker processes (2): with sync workers each one held
    # a worker, and every lookup waited for as long as they went on (19-29 s measured).
    with served(ttt_url, "--workers", "2") as (base, _):
        host, port = "127.0.0.1", int(base.rsplit(":", 1)[1])
        tally = hostile.Tally()
        until = time.monotonic() + 12  # longer than the server's 5 s header deadline
        slow = [
            threading.Thread(target=hostile.slow_client, args=(host, port, until, tally))
            for _ in range(4)
        ]
        for t in slow:
            t.start()
        try:
            # Wait until every slow client has an open connection sending headers.
            deadline = time.monotonic() + 60
            while tally.requests["slow_headers"] < len(slow):
                assert time.monotonic() < deadline, "slow clients did not connect"
                time.sleep(0.05)
            latencies = []
            while time.monotonic() < until - 1:
                began = time.perf_counter()
                status, _, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=x........")
                latencies.append(time.perf_counter() - began)
                assert status == 200 and body["position"] == "x../.../..."
                time.sleep(0.05)  # a user's pace, not a load test: the CPU is the tests'
        finally:
            for t in slow:
                t.join(timeout=60)
    # Slow clients were cut after the header deadline and came back: still going on.
    assert tally.requests["slow_headers"] > len(slow)
    print(
        f"\nlookups during slow clients: n={len(latencies)} "
        f"p50={statistics.median(latencies) * 1e3:.1f} ms max={max(latencies) * 1e3:.1f} ms"
    )
    assert len(latencies) >= 10
    assert max(latencies) < 2, f"a lookup took {max(latencies):.2f} s beside slow clients"


def test_slow_bodies_are_cut_at_the_body_deadline_and_lookups_go_on(ttt_url: str) -> None:
    # Clients that send a batch lookup's headers, then its body a byte at a time, hold
    # every connection of the worker: without a body deadline they held them for as long
    # as they went on, and no other request was answered (reported: 2,100 of them on the
    # default 2 workers of 1,000 connections).
    connections = 10
    with served(ttt_url, "--workers", "1", "--connections", str(connections)) as (base, _):
        host, port = "127.0.0.1", int(base.rsplit(":", 1)[1])
        until = time.monotonic() + 90  # the slow clients give up (unanswered) then
        sent = threading.Semaphore(0)
        results: list[hostile.SlowBody] = []

        def slow() -> None:
            results.append(hostile.slow_body(host, port, until, sent=sent.release))

        threads = [threading.Thread(target=slow) for _ in range(connections)]
        for t in threads:
            t.start()
        try:
            for _ in threads:
                assert sent.acquire(timeout=60), "slow clients did not connect"
            # Queued behind the slow clients: answered once the deadline frees a connection.
            status, _, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=x........", 45)
            assert status == 200 and body["position"] == "x../.../..."
        finally:
            for t in threads:
                t.join(timeout=120)
    assert len(results) == connections
    for result in results:
        assert result.status == 408, result
        assert hostile.is_json_error(408, result.body, result.headers), result
        # Cut at the deadline (measured from before the headers went), not before.
        assert BODY_TIMEOUT - 1 <= result.seconds < 45, result


def test_malformed_http_gets_json_errors_from_the_server(ttt_url: str) -> None:
    with served(ttt_url, "--workers", "1") as (base, _):
        host, port = "127.0.0.1", int(base.rsplit(":", 1)[1])
        cases = [
            (414, hostile.get(host, port, "/api/games?" + "x" * 9000)),
            (431, hostile.get(host, port, "/api", headers={"X-Big": "b" * 9000})),
            (431, hostile.get(host, port, "/api", headers={f"X-H{i}": "1" for i in range(120)})),
            (400, hostile.raw_exchange(host, port, b"GARBAGE\r\n\r\n")),
            (400, hostile.raw_exchange(host, port, b"GET /api HTTP/9.9\r\nHost: x\r\n\r\n")),
            (
                400,
                hostile.raw_exchange(
                    host, port, b"GET /api HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n"
                ),
            ),
            (405, hostile.get(host, port, "/api/games/tic-tac-toe/positions", method="OPTIONS")),
            (
                400,
                hostile.get(
                    host,
                    port,
                    "/api/games/tic-tac-toe/positions",
                    method="POST",
                    body=b'{"positions": [',
                    headers={"Content-Type": "application/json"},
                ),
            ),
        ]
        for expected, (status, headers, body) in cases:
            assert status == expected, (expected, status, body[:300])
            assert status is not None
            assert hostile.is_json_error(status, body, headers), (status, headers, body[:300])
        options_headers = cases[6][1][1]
        assert set(options_headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "POST"}
        status, _, index = fetch(f"{base}/api")
        assert (
            status == 200
            and {"method": "GET", "path": "/api/games/{game}/positions", "summary": ANY}
            in index["endpoints"]
        )


def test_serve_on_a_busy_port_is_one_line(ttt_url: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [NEGAGRAPH, "serve", "--db", ttt_url, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert "in use" in lines[0]


def test_hostile_load_gets_no_5xx_and_only_json_errors(ttt_url: str) -> None:
    with served(ttt_url, "--workers", "2") as (base, _):
        report = run_hostile(base, 2.0)
    print(f"\nhostile: {report}")
    assert report["server_errors"] == 0, report["examples"]
    assert report["non_json_errors"] == 0, report["examples"]
    assert report["unanswered"] == 0, report["examples"]
    assert report["normal"]["count"] > 0 and report["normal"]["not_200"] == 0
    for kind in (
        "costly_variant",
        "long_uri",
        "bad_request_line",
        "options",
        "bad_json",
        "slow_body",
    ):
        assert report["requests"][kind] > 0, report["requests"]


@pytest.mark.slow
@pytest.mark.postgres
def test_served_postgres_gone_away_is_503(tmp_path: Path) -> None:
    log_path = tmp_path / "serve.log"
    with (
        solved_postgres_behind_proxy() as (url, proxy),
        served(url, "--workers", "1", log_path=log_path) as (base, _),
    ):
        lookup = f"{base}/api/games/tic-tac-toe/positions?p=x........"
        assert fetch(lookup)[0] == 200
        proxy.close()
        for _ in range(5):
            status, headers, body = fetch(lookup)
            assert status == 503, body
            assert headers["Content-Type"] == "application/json"
            assert set(body) == {"error"} and body["error"]["code"] == 503
        # Each failure is one line in the server's log (logged before it answered),
        # saying what failed, not a traceback.
        log = log_path.read_text()
    assert "Traceback" not in log, log
    failures = [line for line in log.splitlines() if "database unavailable: " in line]
    assert len(failures) == 5, log
    assert all("Connection refused" in line for line in failures), failures
