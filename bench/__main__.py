"""Run negagraph's benchmarks: ``python -m bench [--smoke] [--repeat N] [--only NAME]``.

Each row is a median over several runs, and each comparison is a ratio against a
baseline measured in the same invocation (machines here are noisy). Results go to
``bench/results/results.json`` and ``bench/results/results.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.baselines import memo_negamax
from bench.persist import persist_rows
from bench.pruning import pruning_rows
from solver.alphabeta import alphabeta
from solver.games import get_game
from solver.negamax import solve

Row = dict[str, Any]


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of *fn* over *repeat* runs, and its last result."""
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def full_solve_rows(repeat: int, smoke: bool) -> list[Row]:
    """negagraph's in-memory full solve against the memoised negamax baseline."""
    cases: list[tuple[str, dict[str, Any]]] = [("tic-tac-toe", {})]
    cases += [("connect-four", {"width": 4, "height": 3})] if smoke else [
        ("connect-four", {"width": 4, "height": 4})
    ]
    rows = []
    for name, params in cases:
        game = get_game(name, **params)
        base_t, (base_value, base_positions) = timed(partial(memo_negamax, game), repeat)
        t, r = timed(partial(solve, game, full=True), repeat)
        if r.value != base_value:
            raise SystemExit(f"{name}: negagraph says {r.value}, baseline {base_value}")
        rows.append({
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
        })
    return rows


def partial_solve_rows(repeat: int, smoke: bool) -> list[Row]:
    """Expansions negagraph needs to prove a root against alpha-beta's positions."""
    cases: list[tuple[str, dict[str, Any]]] = [
        ("number-game", {}), ("tic-tac-toe", {}), ("grundy", {"n": 17}), ("nap", {"n": 12}),
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
            row.update({
                "baseline": "alpha-beta + TT + ordering",
                "baseline_positions": ab.stats.distinct,
                "baseline_seconds": round(ab_t, 4),
                "ratio": round(r.expansions / ab.stats.distinct, 2),
            })
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


def markdown(rows: list[Row]) -> str:
    out = []
    for bench in dict.fromkeys(r["benchmark"] for r in rows):
        group = [r for r in rows if r["benchmark"] == bench]
        cols = list(dict.fromkeys(k for r in group for k in r if k != "benchmark"))
        out.append(f"### {bench}\n")
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "---|" * len(cols))
        for r in group:
            out.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run each")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--only", action="append", choices=sorted(BENCHMARKS))
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args(argv)
    repeat = 1 if args.smoke else max(1, args.repeat)
    rows: list[Row] = []
    for name in args.only or list(BENCHMARKS):
        print(f"running {name} ...", file=sys.stderr)
        rows.extend(BENCHMARKS[name](repeat, args.smoke))
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"python": platform.python_version(), "machine": platform.machine(),
            "repeat": repeat, "smoke": args.smoke, "when": time.strftime("%Y-%m-%d %H:%M")}
    (args.out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    md = markdown(rows)
    (args.out / "results.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
