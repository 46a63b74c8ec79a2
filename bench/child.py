"""One persisted full solve in a process of its own, so that its peak memory is its own.

``python -m bench.child URL WIDTH HEIGHT [RUNS TOTAL]`` solves connect-four WIDTHxHEIGHT
into the empty database at URL (see :func:`bench.persist.persisted_solve`) and prints one
JSON object: ``seconds``, ``value``, ``nodes``, ``expansions`` (of the last run),
``complete`` and ``maxrss_bytes``, the process's peak resident memory (interpreter and
imports included).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any

from bench.measure import ROOT


def main(argv: list[str]) -> int:
    from bench.persist import persisted_solve
    from solver.games import get_game

    url, width, height = argv[0], int(argv[1]), int(argv[2])
    runs = int(argv[3]) if len(argv) > 3 else 1
    total = int(argv[4]) if len(argv) > 4 else None
    game = get_game("connect-four", width=width, height=height)
    seconds, r = persisted_solve(url, game, runs, total)
    maxrss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "seconds": seconds,
                "value": r.value,
                "nodes": r.nodes,
                "expansions": r.expansions,
                "complete": r.complete,
                "maxrss_bytes": maxrss_kib * 1024,
            }
        )
    )
    return 0


def solve_in_child(
    url: str, size: tuple[int, int], runs: int = 1, total: int | None = None
) -> dict[str, Any]:
    """Run :func:`main` in a fresh interpreter and return what it printed."""
    args = [url, str(size[0]), str(size[1]), str(runs)] + ([] if total is None else [str(total)])
    out = subprocess.run(
        [sys.executable, "-m", "bench.child", *args],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    report: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return report


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
