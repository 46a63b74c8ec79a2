"""A smoke run of the benchmark command on tiny sizes (the real runs are not tests)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.__main__ import main


def test_bench_smoke_writes_json_and_markdown(tmp_path: Path) -> None:
    assert main(["--smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "results.json").read_text())
    rows = data["rows"]
    assert {r["benchmark"] for r in rows} >= {"full solve in memory", "partial solve",
                                              "persistence"}
    (persist,) = [r for r in rows if r["benchmark"] == "persistence"]
    assert persist["positions"] > 0 and persist["bytes_per_node"] > 0
    full = [r for r in rows if r["benchmark"] == "full solve in memory"]
    assert all(r["value"] == 0 and r["ratio"] > 0 for r in full)  # both draws
    assert "| case |" in (tmp_path / "results.md").read_text()
