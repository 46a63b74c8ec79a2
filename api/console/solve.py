"""What ``negagraph solve`` prints: its result as text or JSON, the lines on stderr
after it (why the run ended early, how to go on), and its exit status."""

from __future__ import annotations

from typing import Any

from api.console.chance import chance_span, fraction_or_float, plies_text
from api.console.text import number
from solver.game import GameBase
from solver.memory import format_size
from solver.run import SolveResult
from solver.values import bound_text

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
        reached = (
            f"  memory limit reached ({format_size(r.peak_rss)} in use, limit "
            f"{format_size(r.memory_limit or 0)})"
        )
        if not stored:
            return [
                f"{reached}; nothing is stored (--memory), the whole graph is in RAM: give "
                "it a larger --memory-limit"
            ]
        return [
            f"{reached} after committing the last batch; "
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
    if r.ended_by == "disk":
        return [
            f"  stopped before the disk filled, after committing the last tier: "
            f"{r.extra.get('disk_short', 'no room for the next tier')}; make room there, or "
            "move the database, and run the same command again to go on"
        ]
    if r.status == "budget":
        if not stored:
            return ["  budget exhausted; nothing is stored (--memory)"]
        return [
            "  budget exhausted after committing the last batch; run the same command "
            "again to continue"
        ]
    return []


def given_root(game: GameBase, r: SolveResult, root: str | None) -> str:
    """The root as the user gave it (normalised), which a game with symmetry stores as
    its canonical image (``r.root_text``)."""
    return r.root_text if root is None else game.format(game.parse(root))


def result_json(game: GameBase, r: SolveResult, root: str | None = None) -> dict[str, Any]:
    """``solve --json``'s object for run *r* from *root* (as given; ``None``: the
    game's initial position)."""
    return {
        "game": r.game,
        "params": r.params,
        "rules_version": game.version,
        "root": given_root(game, r, root),
        "stored_root": r.root_text,
        "low": r.low,  # a game of chance's: floats (rounded outwards), never infinite
        "high": r.high,
        "low_final": r.low_final,
        "high_final": r.high_final,
        "value": r.value,
        "repetition_value": r.repetition_value,
        "depth_low": r.depth_low,
        "depth_high": r.depth_high,
        "expansions": r.expansions,
        "nodes": r.nodes,
        "edges": r.edges,
        "complete": r.complete,
        "status": r.status,
        "full": r.full,
        "seconds": round(r.seconds, 6),
        "ended_by": r.ended_by,
        "peak_rss": r.peak_rss,
        "memory_limit": r.memory_limit,
        "tiered": dict(r.extra) if r.extra.get("tiers") else None,
        "chance": r.extra.get("chance"),
    }


def describe_result(game: GameBase, r: SolveResult, root: str | None = None) -> list[str]:
    """``solve``'s text for run *r* from *root* (as given; ``None``: the initial
    position): the variant and root, then the root's value and bounds and the run's
    figures."""
    params = ", ".join(f"{k}={v}" for k, v in r.params.items())
    given = given_root(game, r, root)
    stored = "" if given == r.root_text else f" (stored as its symmetric image {r.root_text})"
    lines = [f"{r.game}{f' ({params})' if params else ''} from {given}{stored}"]
    chance = r.extra.get("chance")
    if chance is not None:
        return lines + chance_result_lines(game, r, chance)
    return lines + value_result_lines(game, r)


FLAG = {True: "final", False: "not final"}


def value_result_lines(game: GameBase, r: SolveResult) -> list[str]:
    """The root's value, bounds and depths and the run's figures (a game without
    chance)."""
    lines = []
    if r.value is not None:
        lines.append(f"  value {r.value}" + (" (exact)" if r.complete else ""))
    lines.append(
        f"  low {bound_text(r.low, upper=False)} ({FLAG[r.low_final]}), "
        f"high {bound_text(r.high, upper=True)} ({FLAG[r.high_final]})"
    )
    if r.repetition_value is not None and r.value is None:
        lines.append(
            f"  value {r.repetition_value} when endless play scores "
            f"{game.repetition_value} (the game's rule)"
        )
    if r.depth_low is not None or r.depth_high is not None:
        dl = "inf" if r.depth_low is None else str(r.depth_low)
        dh = "inf" if r.depth_high is None else str(r.depth_high)
        lines.append(f"  depths: low {dl} plies, high {dh} plies")
    rate = r.expansions / r.seconds if r.seconds > 0 else 0.0
    solved = r.extra.get("positions_solved")
    stored = (
        f"{number(r.nodes)} nodes, {number(r.edges)} edges"
        if solved is None  # a graph solved as a whole: its nodes and edges
        else f"{number(r.nodes)} positions discovered, {number(solved)} solved"  # tiered
    )
    lines.append(
        f"  {number(r.expansions)} expansions, {stored} in {r.seconds:.2f} s "
        f"({number(rate)} expansions/s)"
    )
    return lines


def chance_result_lines(game: GameBase, r: SolveResult, chance: dict[str, Any]) -> list[str]:
    """The root's value (or bounds) for its player, the expected plies and the run's
    figures (a game of chance; *chance* is the run's ``extra["chance"]``)."""
    unexpanded = chance.get("unexpanded", 0)
    lines = (
        chance_value_lines(game, r, chance)
        if r.low_final
        else chance_bounds_lines(game, r, chance, unexpanded)
    )
    plies = plies_text(chance.get("plies_exact"), chance.get("plies"))
    if plies == "infinite" and unexpanded:
        plies = "infinite or not known yet (the strategy reaches unexpanded positions)"
    lines.append(f"  expected plies to the end under optimal play: {plies}")
    if unexpanded and r.low_final:
        lines.append(
            f"  {number(unexpanded)} positions left unexpanded: no move to them can "
            "change the value"
        )
    elif chance["wide"] and not unexpanded:
        lines.append(f"  {number(chance['wide'])} positions wider than the tolerance")
    lines.append(
        f"  {number(r.nodes)} nodes, {number(r.edges)} edges in {r.seconds:.2f} s "
        f"({number(chance['components'])} components, {number(chance['sweeps'])} sweeps)"
    )
    return lines


def _chance_root(game: GameBase, r: SolveResult, chance: dict[str, Any]) -> tuple[str, str, str]:
    """The root's low and high bounds as shown, and its player."""
    assert r.low is not None and r.high is not None  # a game of chance's are never infinite
    lo = fraction_or_float(chance["low_exact"], r.low)
    hi = fraction_or_float(chance["high_exact"], r.high)
    return lo, hi, game.facts.players[chance["player"]]


def chance_bounds_lines(
    game: GameBase, r: SolveResult, chance: dict[str, Any], unexpanded: int
) -> list[str]:
    """A run that ended before the root's value was known: its bounds, the best move so
    far."""
    lo, hi, mover = _chance_root(game, r, chance)
    lines = [
        f"  bounds for {mover} ({chance['kind']} node): [{lo}, {hi}], not final "
        f"({number(unexpanded)} positions left unexpanded)"
    ]
    if chance["best_move"] is not None:
        lines.append(f"  best move so far: {chance['best_move']}")
    return lines


def chance_value_lines(game: GameBase, r: SolveResult, chance: dict[str, Any]) -> list[str]:
    """The root's value for its player (and the first player's chance to win in a game
    of wins and losses), the best move."""
    lo, hi, mover = _chance_root(game, r, chance)
    lines = [
        f"  value for {mover} ({chance['kind']} node): {chance_span(lo, hi)}"
        + ("" if chance["exact"] else f" (within {chance['tolerance']:g}, outwards-rounded)")
    ]
    if game.facts.value_range == (-1, 1):
        first = chance["value"] if chance["player"] == 0 else -chance["value"]
        lines.append(
            f"  {game.facts.players[0]} wins with probability {(first + 1) / 2:.6f} "
            "under optimal play"
        )
    if chance["best_move"] is not None:
        lines.append(f"  best move: {chance['best_move']}")
    return lines


__all__ = [
    "STOPPED",
    "describe_result",
    "ending_notes",
    "exit_status",
    "given_root",
    "result_json",
]
