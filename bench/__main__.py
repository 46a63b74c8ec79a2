"""Run negagraph's benchmarks: ``python -m bench [--smoke] [--repeat N] [--only GROUP]``.

Each row is a median over several runs, and each comparison is a ratio against a
baseline measured in the same invocation (machines here are noisy). Besides the
comparison tables, the ``targets`` table has one row per performance target with
``target``, ``measured``, ``limit`` and ``met`` (:mod:`bench.targets`, :mod:`bench.lookups`).
Results go to ``bench/results/results.json`` and ``bench/results/results.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any

from bench.baselines import memo_negamax
from bench.compact import compact_5x6_rows, compact_6x4_rows, compact_rows
from bench.lookups import lookup_rows
from bench.measure import Row, parse_size, parse_sizes, timed
from bench.memory import long_memory_rows, memory_rows, stretch_memory_rows
from bench.persist import persist_rows
from bench.pruning import pruning_rows
from bench.targets import (
    TargetConfig,
    partial_target_rows,
    postgres_rows,
    resume_rows,
    sqlite_rows,
)
from bench.tiers import chess_table_rows, tablebase_5x5_rows, tablebase_rows, tier_rows
from bench.workers import worker_rows
from solver.alphabeta import alphabeta
from solver.games import get_game
from solver.negamax import solve


def full_solve_rows(repeat: int, smoke: bool) -> list[Row]:
    """negagraph's in-memory full solve against the memoised negamax baseline."""
    cases: list[tuple[str, dict[str, Any]]] = [("tic-tac-toe", {})]
    cases += (
        [("connect-four", {"width": 4, "height": 3})]
        if smoke
        else [("connect-four", {"width": 4, "height": 4})]
    )
    rows = []
    for name, params in cases:
        game = get_game(name, **params)
        base_t, (base_value, base_positions) = timed(partial(memo_negamax, game), repeat)
        t, r = timed(partial(solve, game, full=True), repeat)
        if r.value != base_value:
            raise SystemExit(f"{name}: negagraph says {r.value}, baseline {base_value}")
        rows.append(
            {
                "benchmark": "full solve in memory",
                "case": f"{name} {params_label(params)}".strip(),
                "positions": r.nodes,
                "edges": r.edges,
                "value": r.value,
                "seconds": round(t, 4),
                "positions_per_s": round(r.nodes / t),
                "baseline": "memoised negamax",
                "baseline_seconds": round(base_t, 4),
                "baseline_positions_per_s": round(base_positions / base_t),
                "ratio": round(t / base_t, 2),
            }
        )
    return rows


def partial_solve_rows(repeat: int, smoke: bool) -> list[Row]:
    """Expansions negagraph needs to prove a root against alpha-beta's positions."""
    cases: list[tuple[str, dict[str, Any]]] = [
        ("number-game", {}),
        ("tic-tac-toe", {}),
        ("grundy", {"n": 17}),
        ("nap", {"n": 12}),
    ]
    if not smoke:
        cases.append(("connect-four", {"width": 4, "height": 4}))
    rows = []
    for name, params in cases:
        game = get_game(name, **params)
        t, r = timed(partial(solve, game), repeat)
        row: Row = {
            "benchmark": "partial solve",
            "case": f"{name} {params_label(params)}".strip(),
            "value": r.value,
            "low": r.low,
            "high": r.high,
            "expansions": r.expansions,
            "seconds": round(t, 4),
        }
        if game.finite:
            ab_t, ab = timed(partial(alphabeta, game, ordering=True), repeat)
            if ab.value != r.value:
                raise SystemExit(f"{name}: negagraph says {r.value}, alpha-beta {ab.value}")
            row.update(
                {
                    "baseline": "alpha-beta + TT + ordering",
                    "baseline_positions": ab.stats.distinct,
                    "baseline_seconds": round(ab_t, 4),
                    "ratio": round(r.expansions / ab.stats.distinct, 2),
                }
            )
        rows.append(row)
    return rows


def params_label(params: dict[str, Any]) -> str:
    if {"width", "height"} <= set(params):
        return f"{params['width']}x{params['height']}"
    return " ".join(f"{k}={v}" for k, v in params.items())


BENCHMARKS: dict[str, Callable[[int, bool], list[Row]]] = {
    "full": full_solve_rows,
    "partial": partial_solve_rows,
    "persist": persist_rows,
    "pruning": pruning_rows,
}
"""Benchmark groups of comparison rows: ``(repeat, smoke) -> rows``."""

TARGETS: dict[str, Callable[[TargetConfig, int], list[Row]]] = {
    "sqlite": sqlite_rows,
    "partial-targets": partial_target_rows,
    "resume": resume_rows,
    "postgres": postgres_rows,
    "lookups": lookup_rows,
    "memory": memory_rows,
    "long-memory": long_memory_rows,
    "stretch-memory": stretch_memory_rows,
    "tiers": tier_rows,
    "tablebase": tablebase_rows,
    "tablebase-5x5": tablebase_5x5_rows,
    "chess-table": chess_table_rows,
    "workers": worker_rows,
    "compact": compact_rows,
    "compact-6x4": compact_6x4_rows,
    "compact-5x6": compact_5x6_rows,
}
"""Groups of target rows (:mod:`bench.targets`): ``(config, repeat) -> rows``."""

ON_REQUEST = frozenset(
    {
        "tablebase",
        "tablebase-5x5",
        "chess-table",
        "workers",
        "long-memory",
        "stretch-memory",
        "compact-6x4",
        "compact-5x6",
    }
)
"""Groups that run only when named with ``--only`` (they take a quarter of an hour or
more)."""


TARGET_COLUMNS = ["target", "case", "measured", "limit", "met", "correct"]
"""The columns of the targets table; each row's other figures go to its ``details``."""


def markdown(rows: list[Row]) -> str:
    """One table per benchmark, with the union of its rows' columns."""
    out = []
    for bench in dict.fromkeys(r["benchmark"] for r in rows):
        group = [r for r in rows if r["benchmark"] == bench]
        if bench == "targets":
            group = [target_cells(r) for r in group]
        cols = list(dict.fromkeys(k for r in group for k in r if k != "benchmark"))
        out.append(f"### {bench}\n")
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "---|" * len(cols))
        for r in group:
            out.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
        out.append("")
    return "\n".join(out)


def target_cells(row: Row) -> Row:
    """A target row as :data:`TARGET_COLUMNS` plus ``details`` (the other figures)."""
    details = ", ".join(
        f"{k}={v}" for k, v in row.items() if k not in TARGET_COLUMNS and k != "benchmark"
    )
    return {**{c: row.get(c, "") for c in TARGET_COLUMNS}, "details": details}


def target_config(args: argparse.Namespace) -> TargetConfig:
    """The target sizes: the defaults (``--smoke``: tiny ones), then the options."""
    cfg = TargetConfig.smoke() if args.smoke else TargetConfig()
    changes = {
        k: v
        for k, v in vars(args).items()
        if k in ("size", "scaling_sizes", "partial_sizes", "lookup_seconds") and v is not None
    }
    return replace(cfg, **changes)


def parser() -> argparse.ArgumentParser:
    groups = sorted([*BENCHMARKS, *TARGETS])
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("--smoke", action="store_true", help="tiny sizes, one run each")
    p.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    p.add_argument(
        "--only", action="append", choices=groups, help="run only this group (repeatable)"
    )
    p.add_argument("--out", type=Path, default=Path("bench/results"))
    p.add_argument(
        "--size",
        type=parse_size,
        metavar="WxH",
        help="targets' main connect-four case (default 5x4; smoke 4x3)",
    )
    p.add_argument(
        "--scaling-sizes",
        type=lambda t: tuple(parse_sizes(t)),
        metavar="WxH,..",
        help="target 2's sizes (default 4x4,4x5,5x4)",
    )
    p.add_argument(
        "--partial-sizes",
        type=lambda t: tuple(parse_sizes(t)),
        metavar="WxH,..",
        help="target 5's sizes (default 5x4,4x5)",
    )
    p.add_argument(
        "--lookup-seconds",
        type=float,
        metavar="S",
        help="target 8's load run (default 10; smoke 1)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    repeat = 1 if args.smoke else max(1, args.repeat)
    cfg = target_config(args)
    meta = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeat": repeat,
        "smoke": args.smoke,
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "targets": {k: v for k, v in asdict(cfg).items() if k != "pg_admin_url"},
    }
    rows: list[Row] = []
    md = ""
    for name in args.only or [g for g in [*BENCHMARKS, *TARGETS] if g not in ON_REQUEST]:
        print(f"running {name} ...", file=sys.stderr)
        if name in TARGETS:
            rows.extend(TARGETS[name](cfg, repeat))
        else:
            rows.extend(BENCHMARKS[name](repeat, args.smoke))
        md = write_results(args.out, meta, rows)  # after each group: a long run keeps them
    print(md)
    return 0


def write_results(out: Path, meta: dict[str, Any], rows: list[Row]) -> str:
    """Write ``results.json`` and ``results.md`` into *out*; return the Markdown."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    md = markdown(rows)
    (out / "results.md").write_text(md)
    return md


if __name__ == "__main__":
    sys.exit(main())
