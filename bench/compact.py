"""The compact layout's targets (issue 45; ``docs/design.md`` §5, "The compact layout"):
connect-four solved ``--full --layout compact``, each solve a ``negagraph`` process of its
own (peak RSS measured by the system), its database's bytes a position on disk.

- ``45a`` (group ``compact``, about two minutes): connect-four *size* (default 5 x 4)
  compact into SQLite over the memoised negamax that stores nothing
  (:func:`bench.baselines.memo_negamax`), same invocation (limit 1.5); and the same
  solve's bytes a position, against the graph layout's, same invocation (limit 20);
- ``45b`` (group ``compact-6x4``, minutes): the 6 x 4 tablebase compact into SQLite:
  Tromp's 94,910,577 positions, value -1; minutes (limit 5) and bytes a position
  (limit 20); then random stored positions looked up through ``negagraph serve``
  (:func:`served_lookups`: p99 of one at a time, limit 10 ms; a batch of 1,000, limit
  200 ms: 45c's limits, on a table a tenth the size);
- ``45c`` (group ``compact-5x6``, hours: resumable, run it again to go on): the 5 x 6
  tablebase, 1,044,334,437 positions (Tromp), a draw; hours (limit 3), bytes a
  position (limit 20), peak RSS (limit 8 GiB), served lookups as 45b's. The database is kept in
  ``bench/results/compact-5x6.db`` so that a stopped run resumes.
"""

from __future__ import annotations

import http.client
import json
import random
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

from bench.lookups import (
    BATCH,
    HOST,
    SAMPLE,
    batch_seconds,
    free_port,
    position_path,
    serving,
)
from bench.measure import Row, target_row
from bench.memory import measured_solve
from bench.targets import (
    Size,
    TargetConfig,
    connect_four,
    fresh_sqlite,
    memo_baseline,
    remove_sqlite,
    workdir,
)
from bench.tiers import TROMP_6X4
from solver.memory import parse_size

TROMP_5X6 = 1_044_334_437
"""connect-four 5 x 6's positions (Tromp's count, symmetry off)."""


def disk_bytes(path: Path) -> int:
    """The SQLite file and its log, as they lie on disk."""
    return sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*"))


def compact_solve(
    width: int, height: int, path: Path, *options: str, layout: str = "compact"
) -> tuple[dict[str, Any], int, int]:
    """``negagraph solve connect-four --full`` of *width* x *height* into SQLite file
    *path*: its ``--json`` result, peak RSS and bytes on disk."""
    url = f"sqlite:///{path}"
    r, peak = measured_solve(
        "connect-four", "-p", f"width={width}", "-p", f"height={height}", "--full",
        "--layout", layout, "--db", url, *options,
    )  # fmt: skip
    return r, peak, disk_bytes(path)


def compact_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 45a: throughput and bytes of *cfg*'s size, compact against graph."""
    width, height = cfg.size
    size = f"{width}x{height}"
    rows: list[Row] = []
    sizes = {}
    for layout in ("compact", "graph"):
        path = workdir() / f"{layout}-{size}.db"
        with fresh_sqlite(path):
            r, peak, disk = compact_solve(width, height, path, layout=layout)
        remove_sqlite(path)
        sizes[layout] = (r, peak, disk)
    r, peak, disk = sizes["compact"]
    base, value, _ = memo_baseline(cfg.size, repeat)
    correct = r["complete"] and r["value"] == value
    graph_bytes = sizes["graph"][2] / max(sizes["graph"][0]["nodes"], 1)
    rows.append(
        target_row(
            "45a compact full solve into SQLite / memo baseline",
            r["seconds"] / base,
            "<= 1.5",
            correct=correct,
            case=f"connect-four {size} --full --layout compact",
            seconds=r["seconds"],
            baseline_seconds=round(base, 3),
            graph_seconds=sizes["graph"][0]["seconds"],
            nodes=r["nodes"],
            maxrss_mib=round(peak / 2**20, 1),
        )
    )
    rows.append(
        target_row(
            "45a compact SQLite bytes a position",
            disk / max(r["nodes"], 1),
            "<= 20",
            correct=correct,
            case=f"connect-four {size} --full --layout compact",
            graph_bytes_a_position=round(graph_bytes, 1),
            nodes=r["nodes"],
        )
    )
    return rows


def stored_sample(db: Path, n: int, seed: int = 0) -> list[int]:
    """*n* keys stored in the compact tables of SQLite file *db* (its one variant): a tier
    drawn by its positions, then the first key at or after a random value of its range
    (one index probe each, whatever the table's size)."""
    rng = random.Random(seed)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        ((vid,),) = conn.execute("SELECT id FROM variants").fetchall()
        tiers = conn.execute(
            "SELECT ordinal, nodes FROM tiers WHERE variant_id = ? AND nodes > 0", (vid,)
        ).fetchall()
        ranges = {}
        for ordinal, _ in tiers:
            name = f"compact_{vid}_{ordinal}"
            (lo,) = conn.execute(f"SELECT key FROM {name} ORDER BY key LIMIT 1").fetchone()
            (hi,) = conn.execute(f"SELECT key FROM {name} ORDER BY key DESC LIMIT 1").fetchone()
            ranges[ordinal] = (name, lo, hi)
        keys = []
        for ordinal, _ in rng.choices(tiers, weights=[count for _, count in tiers], k=n):
            name, lo, hi = ranges[ordinal]
            (key,) = conn.execute(
                f"SELECT key FROM {name} WHERE key >= ? ORDER BY key LIMIT 1",
                (rng.randint(lo, hi),),
            ).fetchone()
            keys.append(key)
    return keys


def served_lookups(db: Path, size: Size, n: int = SAMPLE) -> dict[str, Any]:
    """Lookups of *n* random stored positions of compact connect-four *size* in SQLite
    file *db* through ``negagraph serve``: one at a time over one kept-alive connection
    (each request's time, p50 and p99 in ms), then batches of :data:`BATCH` positions
    (the median of :data:`BATCH_RUNS`, in ms)."""
    game = connect_four(size)
    positions = [game.format(k) for k in stored_sample(db, n)]
    port = free_port()
    times = []
    with serving(db, port):
        conn = http.client.HTTPConnection(HOST, port, timeout=30)
        for position in [*positions[:50], *positions]:  # the first 50: a warm-up
            started = time.perf_counter()
            conn.request("GET", position_path(size, position))
            response = conn.getresponse()
            answer = json.loads(response.read())
            times.append(time.perf_counter() - started)
            if response.status != 200 or answer.get("low") is None and answer.get("value") is None:
                raise RuntimeError(f"lookup of {position!r} failed: {response.status} {answer}")
        conn.close()
        batch = batch_seconds(port, size, positions[:BATCH])
    single = sorted(times[50:])
    return {
        "lookups": len(single),
        "p50_ms": round(single[len(single) // 2] * 1e3, 2),
        "p99_ms": round(single[int(len(single) * 0.99)] * 1e3, 2),
        "batch_ms": round(statistics.median(batch) * 1e3, 1),
        "batch_positions": min(BATCH, len(positions)),
    }


def _tablebase(
    width: int, height: int, count: int, value: int, path: Path, row: str, limits: tuple[str, str]
) -> list[Row]:
    """A tablebase compact into SQLite *path*: its minutes and bytes a position."""
    r, peak, disk = compact_solve(width, height, path, "--memory-limit", "8GiB")
    size = f"{width}x{height}"
    correct = r["complete"] and r["nodes"] == count and r["value"] == value
    figures = {
        "case": f"connect-four {size} --full --layout compact --memory-limit 8GiB",
        "nodes": r["nodes"],
        "count": count,
        "value": r["value"],
        "maxrss_mib": round(peak / 2**20, 1),
        "peak_within_8GiB": peak <= parse_size("8GiB"),
        "status": r["status"],
    }
    return [
        target_row(
            f"{row} {size} compact tablebase into SQLite, minutes",
            r["seconds"] / 60,
            limits[0],
            correct=correct,
            **figures,
        ),
        target_row(
            f"{row} {size} compact SQLite bytes a position",
            disk / max(r["nodes"], 1),
            limits[1],
            correct=correct,
            **figures,
        ),
        *(_served_rows(path, (width, height), row) if correct else []),
    ]


def _served_rows(path: Path, size: Size, row: str) -> list[Row]:
    """The served lookups of a finished compact tablebase (:func:`served_lookups`)."""
    served = served_lookups(path, size)
    case = f"connect-four {size[0]}x{size[1]} compact, negagraph serve (2 workers)"
    return [
        target_row(
            f"{row} one lookup at a time, p99 ms", served["p99_ms"], "<= 10", case=case, **served
        ),
        target_row(
            f"{row} batch of {served['batch_positions']} lookups, ms",
            served["batch_ms"],
            "<= 200",
            case=case,
            **served,
        ),
    ]


def compact_6x4_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 45b (one run)."""
    path = workdir() / "compact-6x4.db"
    with fresh_sqlite(path):
        rows = _tablebase(6, 4, TROMP_6X4, -1, path, "45b", ("<= 5", "<= 20"))
    remove_sqlite(path)
    return rows


def compact_5x6_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 45c: resumed from ``bench/results/compact-5x6.db`` if a run left one."""
    path = Path("bench/results/compact-5x6.db")
    path.parent.mkdir(parents=True, exist_ok=True)
    return _tablebase(5, 6, TROMP_5X6, 0, path, "45c", ("<= 180", "<= 20"))


__all__ = [
    "TROMP_5X6",
    "compact_5x6_rows",
    "compact_6x4_rows",
    "compact_rows",
    "served_lookups",
    "stored_sample",
]
