"""Tiered full solve targets (issue 18), from the persisted full solves of the ``sqlite``
group (``negagraph solve --full`` is tiered for connect-four; each solve a process of its
own, its peak RSS measured by the system):

- ``18a``: seconds of the full solve into SQLite over the memoised negamax that stores
  nothing (:func:`bench.baselines.memo_negamax`), same invocation (limit 2);
- ``18b``: peak RSS per stored node (limit 100 bytes);
- ``18c``: SQLite file bytes per stored node, edges included (limit 100);
- ``18d`` (group ``tablebase``, about 17 minutes): the connect-four 6 x 4 tablebase
  under ``--memory-limit 4GiB``: Tromp's 94,910,577 positions, value -1, peak RSS under
  4 GiB, wall time within 45 minutes (``measured``: minutes);
- ``18e`` (group ``tablebase-5x5``, about 11 minutes): the 5 x 5 tablebase likewise, a
  draw, its 69,763,700 positions counted independently (:mod:`bench.c4count`);
- ``18f`` (group ``chess-table``): the chess table of KQvKR, tier by tier, under the same
  memory limit: minutes (within an hour: our limit, the issue sets none), its win/draw/loss
  counts and longest mates, ``correct`` when the longest win is the published mate in 35.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path

from bench.c4count import count_positions
from bench.measure import Row, target_row
from bench.memory import measured_solve
from bench.targets import (
    TargetConfig,
    fresh_sqlite,
    memo_baseline,
    remove_sqlite,
    sqlite_solve,
    workdir,
)
from solver.games.chess_endgame import material_of
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
    """Target 18d: the 6 x 4 tablebase in one run (about 17 minutes: run once)."""
    return [_tablebase(6, 4, TROMP_6X4, -1, "18d", "<= 45")]


def tablebase_5x5_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 18e: the 5 x 5 tablebase (a draw), its count checked by
    :func:`bench.c4count.count_positions` in the same invocation."""
    return [_tablebase(5, 5, count_positions(5, 5), 0, "18e", "<= 45")]


def _tablebase(width: int, height: int, count: int, value: int, row: str, limit: str) -> Row:
    """The full solve of connect-four *width* x *height* into SQLite under a 4 GiB memory
    limit: minutes, ``correct`` when it stores *count* positions, its value is *value* and
    its peak stays under the limit."""
    memory = "4GiB"
    size = f"{width}x{height}"
    path = workdir() / f"tablebase-{size}.db"
    with fresh_sqlite(path) as url:
        r, peak = measured_solve(
            "connect-four", "-p", f"width={width}", "-p", f"height={height}", "--full",
            "--db", url, "--memory-limit", memory,
        )  # fmt: skip
        disk = sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*"))
    remove_sqlite(path)
    within = peak <= parse_size(memory)
    correct = r["complete"] and r["nodes"] == count and r["value"] == value
    return target_row(
        f"{row} {size} tablebase into SQLite, minutes",
        r["seconds"] / 60,
        limit,
        correct=correct and within,
        case=f"connect-four {size} --full --memory-limit {memory}",
        nodes=r["nodes"],
        count=count,
        value=r["value"],
        edges=r["edges"],
        maxrss_mib=round(peak / 2**20, 1),
        peak_within_limit=within,
        db_bytes_per_node=round(disk / max(r["nodes"], 1), 1),
    )


def chess_table_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 18f: the chess table of KQvKR (smoke: KRvK) built tier by tier (its child
    tiers KQvK, KvKR and KvK after it) into SQLite under a 4 GiB memory limit, within an
    hour (our own limit: the issue sets none); ``correct`` when the table is complete, its
    longest win with white to move is the published one (KQvKR: Thompson's mate in 35, 69
    plies) and the peak stays under the limit. The win/draw/loss counts of the
    material's positions are figures, not checked."""
    memory, material = "4GiB", cfg.table_material
    path = workdir() / f"chess-{material}.db"
    with fresh_sqlite(path) as url:
        r, peak = measured_solve(
            "chess", "-p", f"material={material}", "--full", "--db", url,
            "--memory-limit", memory,
        )  # fmt: skip
        disk = sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*"))
        counts, longest = table_statistics(path, material)
    remove_sqlite(path)
    within = peak <= parse_size(memory)
    return [
        target_row(
            f"18f {material} chess table into SQLite, minutes",
            r["seconds"] / 60,
            "<= 60",
            correct=r["complete"] and longest.get("white won") == cfg.table_longest and within,
            case=f"chess {material} --full --memory-limit {memory}",
            nodes=r["nodes"],
            edges=r["edges"],
            tiers=r["tiered"]["tiers"],
            **{k.replace(" ", "_"): v for k, v in counts.items()},
            longest_white_win_plies=longest.get("white won"),
            longest_black_loss_plies=longest.get("black lost"),
            maxrss_mib=round(peak / 2**20, 1),
            peak_within_limit=within,
            db_bytes_per_node=round(disk / max(r["nodes"], 1), 1),
        )
    ]


def table_statistics(path: Path, material: str) -> tuple[dict[str, int], dict[str, int]]:
    """Per side to move and result (``white won``, ``black drawn``, ...), the number of
    stored positions of *material* (one per symmetry class) and the longest depth in plies
    (to mate for a win, to being mated for a loss), read from the SQLite file *path*. The
    value is the one where endless play is a draw, as in chess."""
    counts: Counter[str] = Counter()
    longest: dict[str, int] = {}
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT notation, low, high, depth_low, depth_high FROM nodes")
        for notation, low, high, depth_low, depth_high in rows:
            if material_of(notation) != material:
                continue
            side = "black" if notation.split("_")[1] == "b" else "white"
            if low is not None and low > 0:
                result, depth = "won", depth_low
            elif high is not None and high < 0:
                result, depth = "lost", depth_high
            else:
                result, depth = "drawn", 0
            counts[f"{side} {result}"] += 1
            name = f"{side} {result}"
            longest[name] = max(longest.get(name, 0), depth)
    return dict(sorted(counts.items())), longest


__all__ = [
    "TROMP_6X4",
    "chess_table_rows",
    "table_statistics",
    "tablebase_5x5_rows",
    "tablebase_rows",
    "tier_rows",
]
