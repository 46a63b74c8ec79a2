"""The compact layout's targets (issue 45; ``docs/design.md`` §5, "The compact layout"):
connect-four solved ``--full --layout compact``, each solve a ``negagraph`` process of its
own (peak RSS measured by the system), its database's bytes a position on disk.

- ``45a`` (group ``compact``, about two minutes): connect-four *size* (default 5 x 4)
  compact into SQLite over the memoised negamax that stores nothing
  (:func:`bench.baselines.memo_negamax`), same invocation (limit 1.5); and the same
  solve's bytes a position, against the graph layout's, same invocation (limit 20);
- ``45b`` (group ``compact-6x4``, minutes): the 6 x 4 tablebase compact into SQLite:
  Tromp's 94,910,577 positions, value -1; minutes (limit 5) and bytes a position
  (limit 20);
- ``45c`` (group ``compact-5x6``, hours: resumable, run it again to go on): the 5 x 6
  tablebase, 1,044,334,437 positions (Tromp), a draw; hours (limit 3), bytes a
  position (limit 20), peak RSS (limit 8 GiB). The database is kept in
  ``bench/results/compact-5x6.db`` so that a stopped run resumes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.measure import Row, target_row
from bench.memory import measured_solve
from bench.targets import TargetConfig, fresh_sqlite, memo_baseline, remove_sqlite, workdir
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


__all__ = ["TROMP_5X6", "compact_5x6_rows", "compact_6x4_rows", "compact_rows"]
