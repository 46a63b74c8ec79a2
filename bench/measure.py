"""What every benchmark shares: rows, timing by medians, sizes and target rows."""

from __future__ import annotations

import math
import operator
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

Row = dict[str, Any]
T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
"""The checkout benchmark subprocesses run negagraph from (their working directory)."""

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
}
"""The operators a target's limit may use."""


def timed(fn: Callable[[], T], repeat: int, *, once_over: float = math.inf) -> tuple[float, T]:
    """Median wall time of *fn* over *repeat* runs, and its last result; a first run
    slower than *once_over* seconds is not repeated."""
    runs = repeated(partial(clocked, fn), repeat, once_over=once_over)
    return statistics.median(s for s, _ in runs), runs[-1][1]


def clocked(fn: Callable[[], T]) -> tuple[float, T]:
    """Wall time of one call of *fn*, and its result."""
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def repeated(
    fn: Callable[[], tuple[float, T]], repeat: int, *, once_over: float = math.inf
) -> list[tuple[float, T]]:
    """Up to *repeat* calls of *fn*, which returns ``(seconds, result)``; after a first
    call slower than *once_over* seconds, no more."""
    runs = [fn()]
    while len(runs) < repeat and runs[0][0] <= once_over:
        runs.append(fn())
    return runs


def parse_size(text: str) -> tuple[int, int]:
    """``"5x4"`` as ``(5, 4)`` (connect-four width and height)."""
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise ValueError(f"a size looks like WIDTHxHEIGHT (e.g. 5x4), not {text!r}")
    return int(width), int(height)


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """``"5x4,4x5"`` as ``[(5, 4), (4, 5)]``."""
    return [parse_size(part) for part in text.split(",") if part.strip()]


def size_label(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def target_row(target: str, measured: float, limit: str, *, correct: bool, **figures: Any) -> Row:
    """One row of the ``targets`` table: *measured* against *limit* (``"<= 8"``).

    ``met`` holds only when the limit is kept *and* the run computed the right value
    (*correct*: the solve's root value equals its baseline's)."""
    op, _, bound = limit.partition(" ")
    kept = COMPARISONS[op](measured, float(bound))
    return {
        "benchmark": "targets",
        "target": target,
        "measured": round(measured, 3),
        "limit": limit,
        "met": bool(kept and correct),
        "correct": correct,
        **figures,
    }


__all__ = [
    "ROOT",
    "Row",
    "clocked",
    "parse_size",
    "parse_sizes",
    "repeated",
    "size_label",
    "target_row",
    "timed",
]
