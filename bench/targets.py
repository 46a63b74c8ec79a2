"""The issue's performance targets, one row each (``benchmark: targets``).

Every persisted solve runs in a fresh child process (:mod:`bench.child`) that reports its
own time and peak memory; the baselines run here, in the same invocation. Measurements
are cached per invocation, so the groups share them: ``--only sqlite --only resume`` solves
each size into SQLite once per repeat, not twice. A case whose first run takes longer
than :data:`ONCE_OVER` seconds runs once (its ``runs`` column says so).

Groups: ``sqlite`` (targets 1-4), ``partial-targets`` (5), ``resume`` (6), ``postgres``
(7); ``lookups`` (8) is in :mod:`bench.lookups`.
"""

from __future__ import annotations

import secrets
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, make_url

from bench.baselines import bare_null_window, memo_negamax
from bench.child import solve_in_child
from bench.measure import Row, clocked, repeated, size_label, target_row
from bench.persist import sqlite_bytes
from solver.alphabeta import alphabeta
from solver.games import get_game
from solver.negamax import solve

Size = tuple[int, int]
T = TypeVar("T")

ONCE_OVER = 20.0
"""Seconds after which a case's first run is its only run."""
PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
"""The local PostgreSQL server; each solve gets a fresh database on it, dropped after."""


@dataclass(frozen=True)
class TargetConfig:
    """The connect-four sizes the targets are measured on."""

    size: Size = (5, 4)
    """The main case (targets 1, 3, 4, 6, 7, 8)."""
    scaling_sizes: tuple[Size, ...] = ((4, 4), (4, 5), (5, 4))
    """Target 2: seconds per node from the fewest nodes to the most."""
    partial_sizes: tuple[Size, ...] = ((5, 4), (4, 5))
    """Target 5: partial solves of the root against alpha-beta."""
    lookup_seconds: float = 10.0
    """Target 8: how long the load generator runs."""
    memory_size: Size = (6, 4)
    """Targets 17a/17b: the partial solve whose memory is measured."""
    memory_limit: str = "512MiB"
    """Target 17b: the tight ``--memory-limit``."""
    long_size: Size = (7, 4)
    """Target 17c: the partial solve proved under a limit in runs of at most an hour..."""
    long_limit: str = "4GiB"
    """... under this ``--memory-limit``..."""
    long_run_seconds: int = 3600
    """... each run's ``--max-seconds``..."""
    long_total_seconds: int = 3 * 3600
    """... and the total wall time (the target; the benchmark stops past it)."""
    stretch_size: Size = (6, 5)
    """Issue 17's stretch: proved like 17c..."""
    stretch_limit: str = "8GiB"
    """... under this ``--memory-limit``."""
    table_material: str = "KQvKR"
    """Target 18f: the chess table built tier by tier..."""
    table_longest: int = 69
    """... whose longest win with white to move is this many plies (KQvKR: Thompson's
    mate in 35)."""
    pg_admin_url: str = PG_ADMIN_URL

    @classmethod
    def smoke(cls) -> TargetConfig:
        """Tiny sizes and a one-second load run: the whole table in seconds."""
        return cls(
            size=(4, 3),
            scaling_sizes=((3, 3), (3, 4), (4, 3)),
            partial_sizes=((4, 3),),
            lookup_seconds=1.0,
            memory_size=(5, 4),
            memory_limit="150MiB",
            long_size=(5, 4),
            long_limit="150MiB",
            long_run_seconds=2,
            long_total_seconds=600,
            stretch_size=(4, 4),
            stretch_limit="150MiB",
            table_material="KRvK",
            table_longest=31,  # mate in 16
        )


def connect_four(size: Size) -> Any:
    return get_game("connect-four", width=size[0], height=size[1])


_KEEP: list[tempfile.TemporaryDirectory[str]] = []


@cache
def workdir() -> Path:
    """A temporary directory for this invocation's databases, removed at exit."""
    tmp = tempfile.TemporaryDirectory(prefix="negagraph-bench-")
    _KEEP.append(tmp)
    return Path(tmp.name)


def remove_sqlite(path: Path) -> None:
    for p in path.parent.glob(path.name + "*"):
        p.unlink()


def sqlite_db(size: Size) -> Path:
    """Where the one-run SQLite solve of *size* is kept (for the lookups)."""
    return workdir() / f"connect-four-{size_label(size)}.db"


def sampled(fn: Callable[[], T], repeat: int) -> tuple[float, int, T]:
    """(median seconds, runs, last result) of up to *repeat* calls of *fn*."""
    runs = repeated(partial(clocked, fn), repeat, once_over=ONCE_OVER)
    return statistics.median(s for s, _ in runs), len(runs), runs[-1][1]


@cache
def memo_baseline(size: Size, repeat: int) -> tuple[float, int, int]:
    """(median seconds, value, runs) of the memoised negamax baseline on *size*."""
    t, runs, (value, _) = sampled(partial(memo_negamax, connect_four(size)), repeat)
    return t, value, runs


def solve_runs(
    fresh: Callable[[], AbstractContextManager[str]],
    size: Size,
    repeat: int,
    runs: int = 1,
    total: int | None = None,
) -> list[dict[str, Any]]:
    """Reports of up to *repeat* child solves of *size*, each into a database *fresh*
    makes; a SQLite report also gets the file's ``bytes``."""

    def one() -> tuple[float, dict[str, Any]]:
        with fresh() as url:
            report = solve_in_child(url, size, runs, total)
            if url.startswith("sqlite:///"):
                report["bytes"] = sqlite_bytes(Path(url.removeprefix("sqlite:///")))
        return report["seconds"], report

    return [report for _, report in repeated(one, repeat, once_over=ONCE_OVER)]


@contextmanager
def fresh_sqlite(path: Path) -> Iterator[str]:
    """The URL of an empty SQLite file *path* (left in place afterwards)."""
    remove_sqlite(path)
    yield f"sqlite:///{path}"


@cache
def sqlite_runs(size: Size, runs: int, repeat: int) -> list[dict[str, Any]]:
    """Reports of full solves of *size* into fresh SQLite files in *runs* budgeted runs
    (the budget: the one-run solve's expansions / *runs*), each with its ``bytes``."""
    total = None if runs == 1 else sqlite_runs(size, 1, repeat)[-1]["expansions"]
    path = sqlite_db(size) if runs == 1 else workdir() / f"split-{size_label(size)}.db"
    reports = solve_runs(partial(fresh_sqlite, path), size, repeat, runs, total)
    if runs != 1:
        remove_sqlite(path)
    return reports


@contextmanager
def fresh_pg_database(admin_url: str) -> Iterator[str]:
    """The URL of a new, uniquely named database on *admin_url*'s server, dropped after."""
    name = f"negagraph_bench_{secrets.token_hex(6)}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


@cache
def pg_runs(size: Size, repeat: int, admin_url: str) -> list[dict[str, Any]]:
    """Reports of full solves of *size* into fresh PostgreSQL databases."""
    return solve_runs(partial(fresh_pg_database, admin_url), size, repeat)


def median_of(reports: list[dict[str, Any]], field: str) -> float:
    return float(statistics.median(r[field] for r in reports))


def solve_figures(prefix: str, reports: list[dict[str, Any]]) -> Row:
    """The figures of some solve reports: median seconds, runs, nodes, root value."""
    return {
        f"{prefix}_s": round(median_of(reports, "seconds"), 3),
        f"{prefix}_runs": len(reports),
        "nodes": reports[-1]["nodes"],
        "value": reports[-1]["value"],
    }


def baseline_figures(size: Size, repeat: int) -> tuple[Row, int]:
    """The memo baseline's figures for a row, and its value."""
    t, value, runs = memo_baseline(size, repeat)
    return {"baseline_s": round(t, 3), "baseline_runs": runs, "baseline_value": value}, value


@dataclass(frozen=True)
class SqliteSolve:
    """The main case's full solve into SQLite (median figures) against its baseline."""

    seconds: float
    maxrss: float
    nodes: int
    size: int
    """Bytes of the SQLite file."""
    correct: bool
    figures: Row


def sqlite_solve(cfg: TargetConfig, repeat: int) -> SqliteSolve:
    """:class:`SqliteSolve` of *cfg*'s main case (measured once per invocation)."""
    reports = sqlite_runs(cfg.size, 1, repeat)
    base, value = baseline_figures(cfg.size, repeat)
    return SqliteSolve(
        seconds=median_of(reports, "seconds"),
        maxrss=median_of(reports, "maxrss_bytes"),
        nodes=reports[-1]["nodes"],
        size=reports[-1]["bytes"],
        correct=reports[-1]["value"] == value,
        figures={
            "case": f"connect-four {size_label(cfg.size)}",
            **solve_figures("sqlite", reports),
            **base,
        },
    )


def sqlite_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Targets 1-4: persisted solve time, scaling, peak memory and disk per node."""
    main = sqlite_solve(cfg, repeat)
    seconds, maxrss, nodes, size = main.seconds, main.maxrss, main.nodes, main.size
    ok, figures = main.correct, main.figures
    return [
        target_row(
            "1 persisted solve / memo baseline",
            seconds / memo_baseline(cfg.size, repeat)[0],
            "<= 8",
            correct=ok,
            **figures,
        ),
        scaling_row(cfg, repeat),
        target_row(
            "3 peak memory, bytes per node",
            maxrss / nodes,
            "<= 200",
            correct=ok,
            maxrss_mib=round(maxrss / 2**20, 1),
            **figures,
        ),
        target_row(
            "4 disk, bytes per node", size / nodes, "<= 120", correct=ok, db_bytes=size, **figures
        ),
    ]


def scaling_row(cfg: TargetConfig, repeat: int) -> Row:
    """Target 2: seconds per stored node, the size with most nodes over the fewest."""
    per_node: dict[Size, float] = {}
    nodes: dict[Size, int] = {}
    ok = True
    for size in cfg.scaling_sizes:
        reports = sqlite_runs(size, 1, repeat)
        nodes[size] = reports[-1]["nodes"]
        per_node[size] = median_of(reports, "seconds") / nodes[size]
        ok = ok and reports[-1]["value"] == memo_baseline(size, repeat)[1]
    small, large = min(nodes, key=nodes.__getitem__), max(nodes, key=nodes.__getitem__)
    figures = {f"us_per_node_{size_label(s)}": round(v * 1e6, 2) for s, v in per_node.items()}
    return target_row(
        "2 scaling, s/node largest / smallest",
        per_node[large] / per_node[small],
        "<= 1.5",
        correct=ok,
        case=f"connect-four {size_label(large)} / {size_label(small)}",
        max_over_min=round(max(per_node.values()) / min(per_node.values()), 3),
        **figures,
    )


def resume_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 6: the full SQLite solve in ten budgeted runs over the same in one."""
    ten = sqlite_runs(cfg.size, 10, repeat)
    return [versus_sqlite("6 ten resumed runs / one run", "<= 1.25", "ten_runs", ten, cfg, repeat)]


def postgres_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 7: the full solve into PostgreSQL over the same into SQLite."""
    pg = pg_runs(cfg.size, repeat, cfg.pg_admin_url)
    return [versus_sqlite("7 PostgreSQL / SQLite", "<= 2.5", "postgres", pg, cfg, repeat)]


def versus_sqlite(
    target: str,
    limit: str,
    name: str,
    reports: list[dict[str, Any]],
    cfg: TargetConfig,
    repeat: int,
) -> Row:
    """A target row: the median time of the solves *reports* (figures named *name*) over
    the one-run SQLite solve's; correct when they completed with the baseline's value."""
    one = sqlite_runs(cfg.size, 1, repeat)
    _, value = baseline_figures(cfg.size, repeat)
    seconds = median_of(reports, "seconds")
    return target_row(
        target,
        seconds / median_of(one, "seconds"),
        limit,
        correct=reports[-1]["value"] == value and reports[-1]["complete"],
        case=f"connect-four {size_label(cfg.size)}",
        **{f"{name}_s": round(seconds, 3), f"{name}_runs": len(reports)},
        **solve_figures("sqlite", one),
        baseline_value=value,
    )


def partial_target_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Target 5: a partial solve of the root against alpha-beta with a transposition
    table and move ordering: fewer expansions than its distinct positions, less time."""
    rows = []
    for size in cfg.partial_sizes:
        game = connect_four(size)
        ab_t, ab_runs, ab = sampled(partial(alphabeta, game, ordering=True), repeat)
        t, runs, r = sampled(partial(solve, game), repeat)
        bare_t, _, (bare_value, bare_expansions) = sampled(partial(bare_null_window, game), repeat)
        figures = {
            "case": f"connect-four {size_label(size)}",
            "expansions": r.expansions,
            "seconds": round(t, 3),
            "runs": runs,
            "value": r.value,
            "baseline": "alpha-beta + TT + ordering",
            "baseline_positions": ab.stats.distinct,
            "baseline_s": round(ab_t, 3),
            "baseline_runs": ab_runs,
            "baseline_value": ab.value,
            "bare_search_s": round(bare_t, 3),
            "bare_search_expansions": bare_expansions,
        }
        ok = r.value == ab.value == bare_value
        rows.append(
            target_row(
                "5a partial expansions / alpha-beta positions",
                r.expansions / ab.stats.distinct,
                "< 1",
                correct=ok,
                **figures,
            )
        )
        rows.append(
            target_row(
                "5b partial solve time / alpha-beta time", t / ab_t, "< 1", correct=ok, **figures
            )
        )
    return rows


__all__ = [
    "TargetConfig",
    "partial_target_rows",
    "postgres_rows",
    "resume_rows",
    "sqlite_db",
    "sqlite_rows",
    "sqlite_runs",
]
