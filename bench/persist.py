"""The cost of persistence: the same full solve in memory and into SQLite, the database's
bytes per node, and the same solve split by budgets into ten resumed runs."""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.measure import Row
from db.migrate import ensure_schema
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve


def persisted_solve(url: str, game: Any, runs: int, total: int | None) -> tuple[float, Any]:
    """Seconds for a full solve of *game* into the (empty) database at *url* in *runs*
    runs budgeted to *total* / *runs* expansions each, and the last run's result."""
    engine = make_engine(url)
    try:
        ensure_schema(engine)
        budget = None if runs == 1 or total is None else math.ceil(total / runs)
        t0 = time.perf_counter()
        r = solve(game, full=True, store=SqlStore(engine), max_expansions=budget)
        for _ in range(runs * 2 + 4):
            if r.complete:
                break
            r = solve(game, full=True, store=SqlStore(engine), max_expansions=budget)
        seconds = time.perf_counter() - t0
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        engine.dispose()
    return seconds, r


def sqlite_bytes(path: Path) -> int:
    """Bytes of the SQLite database *path* with its -wal and -shm files."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def _sqlite_solve(path: Path, game: Any, runs: int, total: int | None) -> tuple[float, int]:
    """Seconds for a full solve into a fresh SQLite file in *runs* budgeted runs, and the
    file's size."""
    seconds, _ = persisted_solve(f"sqlite:///{path}", game, runs, total)
    return seconds, sqlite_bytes(path)


def persist_rows(repeat: int, smoke: bool) -> list[Row]:
    sizes = [(4, 3)] if smoke else [(4, 4), (5, 4)]
    rows = []
    for w, h in sizes:
        game = get_game("connect-four", width=w, height=h)
        mem_times, db_times, split_times = [], [], []
        nodes = expansions = size = 0
        reps = repeat if w * h <= 16 else 1
        for _ in range(reps):
            t0 = time.perf_counter()
            r = solve(game, full=True)
            mem_times.append(time.perf_counter() - t0)
            nodes, expansions = r.nodes, r.expansions
            with tempfile.TemporaryDirectory() as tmp:
                t, size = _sqlite_solve(Path(tmp) / "one.db", game, 1, None)
                db_times.append(t)
            with tempfile.TemporaryDirectory() as tmp:
                t, _ = _sqlite_solve(Path(tmp) / "ten.db", game, 10, expansions)
                split_times.append(t)
        mem, db, split = (sorted(x)[len(x) // 2] for x in (mem_times, db_times, split_times))
        rows.append(
            {
                "benchmark": "persistence",
                "case": f"connect-four {w}x{h} full",
                "positions": nodes,
                "memory_s": round(mem, 3),
                "sqlite_s": round(db, 3),
                "sqlite_over_memory": round(db / mem, 2),
                "bytes_per_node": round(size / nodes, 1),
                "ten_runs_s": round(split, 3),
                "ten_runs_over_one": round(split / db, 2),
                "runs": reps,
            }
        )
    return rows
