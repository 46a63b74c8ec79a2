"""Memory targets (issue 17): partial solves of connect-four from the empty board as real
``negagraph solve`` processes, each one's peak RSS measured by the system
(``RUSAGE_CHILDREN`` of a wrapper whose only child it is).

- ``17a``: bytes of peak RSS per node of an unlimited partial solve in memory (the
  figure before the C key table, 255.5 on 6 x 4, is the limit: never worse).
- ``17b``: the same solve into SQLite under a tight ``--memory-limit``, which it meets by
  evicting (docs/design.md §9): the peak over the limit (at most 1), and the share of the
  unlimited solve's expansions it does (1: it proves the root; a run that cannot stay
  under the limit ends at it, every batch committed), with its time against the
  unlimited solve's (``time_ratio``; the target is 3).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.measure import ROOT, Row, size_label, target_row
from bench.targets import TargetConfig, fresh_sqlite, workdir
from solver.memory import parse_size

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))

PEAK = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
sys.exit(done.returncode)
"""
"""Runs a command and prints its peak RSS in bytes (Linux: ``ru_maxrss`` is in KiB) as
the last line of stderr; its only child is the command."""


def measured_solve(*args: str) -> tuple[dict[str, Any], int]:
    """The ``--json`` result of ``negagraph solve ARGS`` and its peak RSS in bytes."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK, NEGAGRAPH, "solve", *args, "--json", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result, int(done.stderr.splitlines()[-1])


def memory_rows(cfg: TargetConfig, repeat: int) -> list[Row]:
    """Targets 17a and 17b (one run each: a 6 x 4 solve takes half a minute)."""
    w, h = cfg.memory_size
    case = f"connect-four {size_label(cfg.memory_size)}"
    game = ["connect-four", "-p", f"width={w}", "-p", f"height={h}"]
    free, free_peak = measured_solve(*game, "--memory")
    per_node = free_peak / free["nodes"]
    rows = [
        target_row(
            "17a partial peak RSS per node, in memory, no limit",
            per_node,
            "<= 255.5",
            correct=free["complete"],
            case=case,
            nodes=free["nodes"],
            expansions=free["expansions"],
            seconds=free["seconds"],
            maxrss_mib=round(free_peak / 2**20, 1),
            value=free["value"],
        )
    ]
    limit = parse_size(cfg.memory_limit)
    with fresh_sqlite(workdir() / "memory.db") as url:
        tight, tight_peak = measured_solve(*game, "--db", url, "--memory-limit", cfg.memory_limit)
    figures = {
        "case": f"{case} under {cfg.memory_limit}",
        "status": tight["status"],
        "ended_by": tight["ended_by"],
        "nodes": tight["nodes"],
        "expansions": tight["expansions"],
        "seconds": tight["seconds"],
        "maxrss_mib": round(tight_peak / 2**20, 1),
        "unlimited_s": free["seconds"],
        "time_ratio": round(tight["seconds"] / free["seconds"], 3),
    }
    rows.append(
        target_row(
            "17b peak RSS / memory limit", tight_peak / limit, "<= 1", correct=True, **figures
        )
    )
    # The search is the same with or without a limit, so the share of the unlimited
    # solve's expansions done says how far it got: 1 when it proved the root (then
    # time_ratio is the 3x target). Correct: whatever it concluded agrees.
    agrees = tight["value"] is None or tight["value"] == free["value"]
    rows.append(
        target_row(
            "17b expansions done under the limit / needed (1: proved)",
            tight["expansions"] / free["expansions"],
            ">= 1",
            correct=agrees,
            **figures,
        )
    )
    return rows


__all__ = ["PEAK", "memory_rows"]
