"""Type B move ordering against the game's order: connect-four partial solves in memory,
expansions and CPU seconds of each (``docs/pruning.md``, "Type B").

    .venv/bin/python -m bench.ordering                 # 4x5, 5x4 and 6x4
    .venv/bin/python -m bench.ordering --sizes 5x5

The expansion counts are deterministic; the seconds are one run each.
"""

from __future__ import annotations

import argparse
import time

from solver.games import get_game
from solver.negamax import solve
from solver.ordering import ORDERS
from solver.store import MemoryStore


def measure(width: int, height: int) -> str:
    """The table row of connect-four *width* x *height*."""
    game = get_game("connect-four", width=width, height=height)
    cells = []
    counts = []
    value = None
    for order in ORDERS:
        started = time.process_time()
        r = solve(game, store=MemoryStore(), order=order)
        seconds = time.process_time() - started
        value = r.low
        counts.append(r.expansions)
        cells.append(f"{r.expansions:,} ({seconds:.2f} s)")
    return f"| {width} x {height} | {value} | {' | '.join(cells)} | {counts[1] / counts[0]:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ordering", description=__doc__)
    parser.add_argument("--sizes", default="4x5,5x4,6x4", help="boards, WxH, comma separated")
    args = parser.parse_args()
    print("| board | value | game order | `--order evaluate` | ratio |")
    print("|---|---|---|---|---|")
    for size in args.sizes.split(","):
        width, height = (int(n) for n in size.split("x"))
        print(measure(width, height))


if __name__ == "__main__":
    main()
