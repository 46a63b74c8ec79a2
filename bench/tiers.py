"""Tiered full solve targets (issue 18), from the persisted full solves of the ``sqlite``
group (``negagraph solve --full`` is tiered for connect-four; each solve a process of its
own, its peak RSS measured by the system):

- ``18a``: seconds of the full solve into SQLite over the memoised negamax that stores
  nothing (:func:`bench.baselines.memo_negamax`), same invocation (limit 2);
- ``18b``: peak RSS per stored node (limit 100 bytes);
- ``18c``: SQLite file bytes per stored node, edges included (limit 100);
- ``18d`` (group ``tablebase``, about half an hour): the connect-four 6 x 4 tablebase
  under ``--memory-limit 4GiB``: Tromp's 94,910,577 positions, value -1, peak RSS under
  4 GiB, wall time within 45 minutes (``measured``: minutes).
"""

from __future__ import annotations

from bench.measure import Row, target_row
from bench.memory import measured_solve
from bench.targets import TargetConfig, fresh_sqlite, memo_baseline, sqlite_solve, workdir
from solver.memory import parse_size

TROMP_6X4 = 94_910_577
"""Positions of connect-four 6 x 4 reachable from the empty board (John Tromp's table)."""


def tier_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Targets 18a-18c (the ``sqlite`` group's solves, measured once for both)."""
    main = sqlite_solve(cfg, repeat)
    seconds, maxrss, nodes, size = main.seconds, main.maxrss, main.nodes, main.size
    ok, figures = main.correct, main.figures
    return [
        target_row(
            "18a tiered full solve into SQLite / memo baseline",
            seconds / memo_baseline(cfg.size, repeat)[0],
            "<= 2",
            correct=ok,
            **figures,
        ),
        target_row(
            "18b peak RSS per stored node",
            maxrss / nodes,
            "<= 100",
            correct=ok,
            maxrss_mib=round(maxrss / 2**20, 1),
            **figures,
        ),
        target_row(
            "18c SQLite bytes per stored node", size / nodes, "<= 100", correct=ok, **figures
        ),
    ]


def tablebase_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 18d: the 6 x 4 tablebase in one run (it takes half an hour: run once)."""
    limit = "4GiB"
    with fresh_sqlite(workdir() / "tablebase-6x4.db") as url:
        r, peak = measured_solve(
            "connect-four", "-p", "width=6", "-p", "height=4", "--full", "--db", url,
            "--memory-limit", limit,
        )  # fmt: skip
        disk = sum(p.stat().st_size for p in workdir().glob("tablebase-6x4.db*"))
    correct = r["complete"] and r["nodes"] == TROMP_6X4 and r["value"] == -1
    within = peak <= parse_size(limit)
    return [
        target_row(
            "18d 6x4 tablebase into SQLite, minutes",
            r["seconds"] / 60,
            "<= 45",
            correct=correct and within,
            case="connect-four 6x4 --full --memory-limit 4GiB",
            nodes=r["nodes"],
            tromp=TROMP_6X4,
            value=r["value"],
            edges=r["edges"],
            maxrss_mib=round(peak / 2**20, 1),
            peak_within_limit=within,
            db_bytes_per_node=round(disk / max(r["nodes"], 1), 1),
        )
    ]


__all__ = ["TROMP_6X4", "tablebase_rows", "tier_rows"]
