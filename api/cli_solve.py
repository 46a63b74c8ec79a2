"""How ``negagraph solve`` ends: the lines on stderr after its result, and its exit
status."""

from __future__ import annotations

from solver.memory import format_size
from solver.run import SolveResult

STOPPED = 130
"""The exit status of a solve stopped by Ctrl-C, the first (after its result) or the
second (at once): 128 + SIGINT, the shell's convention for a process SIGINT ended, so
that a script can tell a stopped solve from a finished one (status 0)."""


def exit_status(r: SolveResult) -> int:
    """0 for a run that ended of itself (complete, or a budget or the memory limit ran
    out), :data:`STOPPED` for one stopped on request.

    >>> from solver.games import get_game
    >>> from solver.negamax import solve
    >>> exit_status(solve(get_game("number-game"), stop=lambda: True))
    130
    >>> exit_status(solve(get_game("number-game"), max_expansions=3))
    0
    """
    return STOPPED if r.status == "stopped" else 0


def ending_notes(r: SolveResult, stored: bool, as_json: bool) -> list[str]:
    """The lines for stderr after the result of run *r* (into a database if *stored*):
    why it ended before completing and how to go on. A stop on request says so even with
    ``--json`` (the exit status is not 0); the rest only in text."""
    if r.status == "stopped":
        if not stored:
            return ["  stopped on request; nothing is stored (--memory)"]
        return [
            "  stopped on request after committing the last batch; run the same command "
            "again to continue"
        ]
    if as_json:
        return []
    if r.ended_by == "memory":
        return [
            f"  memory limit reached ({format_size(r.peak_rss)} in use, limit "
            f"{format_size(r.memory_limit or 0)}) after committing the last batch; "
            + (
                "a tiered solve holds one tier and what its moves reach in RAM: run "
                "the same command again to go on (a fresh process), or give it a "
                "larger --memory-limit"
                if r.extra.get("tiers")
                else "this solve holds its whole graph in RAM (depth-first partial "
                "solves of games without repetitions into a database evict instead), so "
                "the same command goes little further: give it a larger --memory-limit"
            )
        ]
    if r.status == "budget":
        again = "; run the same command again to continue" if stored else ""
        return [f"  budget exhausted after committing the last batch{again}"]
    return []


__all__ = ["STOPPED", "ending_notes", "exit_status"]
