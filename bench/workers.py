"""Distributed tiered solves (issue 19; group ``workers``, on request: about a quarter of
an hour): the main case's full solve (connect-four 5 x 4) by ``negagraph solve --full
--workers N``, each solve a process of its own on a fresh database, in one invocation.

- ``19a`` / ``19b``: seconds with ``--workers 1`` over seconds with ``--workers 2``, into
  SQLite and into PostgreSQL (limit: at least 1.6);
- ``19c``: the scale simulation: 1, 2, 4 and 8 workers (oversubscribed past 2 on this
  machine) into PostgreSQL, each row with where the time went: the discovery sweep (run
  by the solving process alone), the solving sweep's wall time, and the units' own
  seconds reading, solving and writing (summed over the workers), from which
  ``docs/distributed.md`` predicts larger machines.

Each row also gives the CPU seconds of the solve's processes and of the local PostgreSQL
server, and the cores they kept busy on average; 19a and 19b give ``cpu_bound``, the most
the two-worker run's CPU work allows over the one-worker run on this machine's cores.
"""

from __future__ import annotations

import os
import resource
from typing import Any

from bench.measure import Row, size_label, target_row
from bench.memory import measured_solve
from bench.targets import TargetConfig, fresh_pg_database, fresh_sqlite, workdir

SCALE = (1, 2, 4, 8)
"""Workers of the scale simulation."""


def server_cpu() -> float:
    """CPU seconds used so far by the local PostgreSQL server: every ``postgres`` process's
    own and its reaped children's (the postmaster's count the connections' backends that
    have exited), from ``/proc``; 0 if none is visible."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if name.startswith("postgres"):
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / tick


def _solve(cfg: TargetConfig, url: str, workers: int) -> tuple[dict[str, Any], int]:
    """The solve's result, with the CPU seconds of its processes (``cpu_s``) and of the
    database server (``server_cpu_s``, PostgreSQL only) added, and its peak RSS."""
    w, h = cfg.size
    before, server = resource.getrusage(resource.RUSAGE_CHILDREN), server_cpu()
    result, peak = measured_solve(
        "connect-four", "-p", f"width={w}", "-p", f"height={h}", "--full", "--tiers",
        "--workers", str(workers), "--db", url,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["cpu_s"] = round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1)
    result["server_cpu_s"] = round(server_cpu() - server, 1) if "postgresql" in url else 0.0
    return result, peak


def _on(cfg: TargetConfig, engine: str, workers: int) -> tuple[dict[str, Any], int]:
    if engine == "sqlite":
        with fresh_sqlite(workdir() / f"workers-{workers}.db") as url:
            return _solve(cfg, url, workers)
    with fresh_pg_database(cfg.pg_admin_url) as url:
        return _solve(cfg, url, workers)


def _figures(r: dict[str, Any], peak: int) -> dict[str, Any]:
    t = r.get("tiered") or {}
    return {
        "seconds": round(r["seconds"], 2),
        "discover_s": t.get("discover_seconds"),
        "solve_s": t.get("solve_seconds"),
        "units": t.get("units"),
        "unit_read_s": t.get("unit_read_seconds"),
        "unit_solve_s": t.get("unit_solve_seconds"),
        "unit_write_s": t.get("unit_write_seconds"),
        "maxrss_mib": round(peak / 2**20, 1),
        "cpu_s": r["cpu_s"],
        "server_cpu_s": r["server_cpu_s"],
        "cores_used": round((r["cpu_s"] + r["server_cpu_s"]) / r["seconds"], 2),
    }


def cpu_bound(one: dict[str, Any], two: dict[str, Any], cores: int) -> float:
    """The most the two-worker run could have gained on *cores* cores: the one-worker
    run's seconds over the least wall time the two-worker run's CPU work (its processes'
    and the server's) can take on them."""
    work = float(two["cpu_s"]) + float(two["server_cpu_s"])
    return round(float(one["seconds"]) / (work / cores), 2)


def worker_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Targets 19a-19c (one solve each: a 5 x 4 solve takes a minute or more)."""
    case = f"connect-four {size_label(cfg.size)} --full"
    rows: list[Row] = []
    runs: dict[tuple[str, int], tuple[dict[str, Any], int]] = {}
    for label, engine in (("19a", "sqlite"), ("19b", "postgres")):
        one = runs[(engine, 1)] = _on(cfg, engine, 1)
        two = runs[(engine, 2)] = _on(cfg, engine, 2)
        same = one[0]["value"] == two[0]["value"] and one[0]["nodes"] == two[0]["nodes"]
        rows.append(
            target_row(
                f"{label} --workers 2 speed-up into {engine}",
                one[0]["seconds"] / two[0]["seconds"],
                ">= 1.6",
                correct=same and one[0]["complete"] and two[0]["complete"],
                case=case,
                nodes=one[0]["nodes"],
                cpu_bound=cpu_bound(one[0], two[0], os.cpu_count() or 1),
                **{f"w1_{k}": v for k, v in _figures(*one).items()},
                **{f"w2_{k}": v for k, v in _figures(*two).items()},
            )
        )
    base = runs[("postgres", 1)][0]
    for workers in SCALE:
        r, peak = runs.get(("postgres", workers)) or _on(cfg, "postgres", workers)
        rows.append(
            {
                "benchmark": "19c scale simulation (PostgreSQL)",
                "case": case,
                "workers": workers,
                "speedup": round(base["seconds"] / r["seconds"], 2),
                "correct": r["value"] == base["value"] and r["nodes"] == base["nodes"],
                **_figures(r, peak),
            }
        )
    return rows


__all__ = ["SCALE", "worker_rows"]
