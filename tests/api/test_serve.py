"""``negagraph serve``: refuses unusable databases, and serves for real (gunicorn)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from api.cli import cli

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


def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
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
        [NEGAGRAPH, "serve", "--db", url, "--port", str(port), "--workers", "2",
         "--threads", "2"],  # threaded workers here, the default sync ones below
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_until_up(proc, f"{base}/api/health")
        status, headers, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=x........")
        assert status == 200 and body["position"] == "x../.../..."
        assert body["moves"][0]["move"] == "b2"
        assert headers["Cache-Control"] == "public, max-age=86400, immutable"
        status, _, _ = fetch(f"{base}/api/games/tic-tac-toe/positions?p=x........",
                             **{"If-None-Match": headers["ETag"]})
        assert status == 304
        status, _, body = fetch(f"{base}/api/games/tic-tac-toe/positions?p=xx")
        assert status == 400 and body["error"]["code"] == 400
        request = urllib.request.Request(
            f"{base}/api/games/tic-tac-toe/positions", method="POST",
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
    assert "Shutting down" in err


def test_serve_stops_on_ctrl_c(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'served.db'}"
    assert CliRunner().invoke(cli, ["db", "upgrade", "--db", url]).exit_code == 0
    port = free_port()
    proc = subprocess.Popen(
        [NEGAGRAPH, "serve", "--db", url, "--port", str(port), "--workers", "1",
         "--threads", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
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
    assert "Using worker: sync" in err and "Shutting down" in err
