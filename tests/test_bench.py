"""A smoke run of the benchmark command on tiny sizes (the real runs are not tests)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.baselines import bare_null_window
from bench.compact import served_lookups, stored_sample
from bench.loadgen import percentile, python_load
from bench.measure import parse_sizes, target_row
from solver.alphabeta import alphabeta
from solver.games import get_game

TARGETS = [
    *("1 ", "2 ", "3 ", "4 ", "5a ", "5b ", "6 ", "7 ", "8a ", "8b ", "8c "),
    *("17a ", "17b ", "18a ", "18b ", "18c "),
]
"""How the target rows' names start, one per target (5 and 8 have several limits)."""


def test_bench_smoke_writes_json_and_markdown(tmp_path: Path) -> None:
    assert main(["--smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "results.json").read_text())
    rows = data["rows"]
    assert {r["benchmark"] for r in rows} >= {
        "full solve in memory",
        "partial solve",
        "persistence",
        "targets",
    }
    (persist,) = [r for r in rows if r["benchmark"] == "persistence"]
    assert persist["positions"] > 0 and persist["bytes_per_node"] > 0
    full = [r for r in rows if r["benchmark"] == "full solve in memory"]
    assert all(r["value"] == 0 and r["ratio"] > 0 for r in full)  # both draws
    targets = [r for r in rows if r["benchmark"] == "targets"]
    assert [t for t in TARGETS if not any(r["target"].startswith(t) for r in targets)] == []
    for r in targets:
        assert {"target", "measured", "limit", "met", "correct"} <= set(r)
        assert isinstance(r["met"], bool) and r["correct"] is True, r
        assert r["measured"] > 0, r
    text = (tmp_path / "results.md").read_text()
    assert "| case |" in text and "| target | case | measured | limit | met |" in text


def test_the_chess_table_row_in_smoke_size(tmp_path: Path) -> None:
    """Row 18f on KRvK: the table tier by tier, its counts and Karrer's longest mates."""
    assert main(["--smoke", "--only", "chess-table", "--out", str(tmp_path)]) == 0
    (row,) = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert row["target"].startswith("18f KRvK ") and row["correct"] and row["tiers"] == 2
    assert (row["white_won"], row["black_lost"], row["black_drawn"]) == (21959, 25260, 2796)
    assert (row["longest_white_win_plies"], row["longest_black_loss_plies"]) == (31, 32)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("tic-tac-toe", {}),
        ("connect-four", {"width": 4, "height": 4}),
        ("nap", {"n": 12}),
        ("grundy", {"n": 12}),
        ("domino-tiling", {"rows": 3, "cols": 4}),
    ],
)
def test_bare_null_window_search_agrees_with_alpha_beta(name: str, params: dict[str, int]) -> None:
    # The floor that target 5b's details quote must solve the same games to the same values.
    game = get_game(name, **params)
    value, expansions = bare_null_window(game)
    ab = alphabeta(game, ordering=True)
    assert value == ab.value and expansions > 0


def test_target_row_needs_the_limit_and_the_right_value() -> None:
    assert target_row("t", 7.9, "<= 8", correct=True)["met"] is True
    assert target_row("t", 8.1, "<= 8", correct=True)["met"] is False
    assert target_row("t", 1.0, "< 1", correct=True)["met"] is False
    assert target_row("t", 1200, ">= 1000", correct=False)["met"] is False
    assert parse_sizes("5x4,4x5") == [(5, 4), (4, 5)]
    with pytest.raises(ValueError):
        parse_sizes("5by4")


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 99) == 99.0 and percentile(values, 100) == 100.0
    assert percentile([3.0], 99) == 3.0


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        status = 200 if self.path != "/missing" else 404
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_python_load_generator_counts_requests_and_errors(http_port: int) -> None:
    """The fallback when wrk is not installed (the smoke run prefers wrk)."""
    # Connection 0 starts with /missing, connection 1 with /a: whatever the machine's
    # speed, each makes at least its first request, so there are errors and successes.
    load = python_load("127.0.0.1", http_port, ["/missing", "/a"], seconds=0.3, connections=2)
    assert load.tool == "python" and load.requests >= 2
    assert 0 < load.errors < load.requests and load.p99_ms > 0 and load.per_second > 0


def test_served_lookups_of_a_compact_table(tmp_path: Path) -> None:
    """45b's and 45c's lookups through ``negagraph serve``: stored keys sampled from the
    compact tables (each one a key of the table it was drawn from), every one answered,
    the timings in order."""
    db = tmp_path / "c.db"
    negagraph = str(Path(sys.executable).with_name("negagraph"))
    subprocess.run(
        [negagraph, "solve", "connect-four", "-p", "width=4", "-p", "height=3", "--full",
         "--layout", "compact", "-q", "--db", f"sqlite:///{db}"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    keys = stored_sample(db, 200, seed=3)
    with sqlite3.connect(db) as conn:
        stored = {k for (k,) in conn.execute("SELECT key FROM compact_1")}
    assert len(keys) == 200 and set(keys) <= stored and len(set(keys)) > 50
    served = served_lookups(db, (4, 3), 60)
    assert served["lookups"] == 60 and served["batch_positions"] == 60
    assert 0 < served["p50_ms"] <= served["p99_ms"] and served["batch_ms"] > 0
