"""What ``negagraph check`` prints: the report on a game's contract, and the one-line
error that ends a check that found violations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from solver.game import GameBase, params_text

if TYPE_CHECKING:
    from solver.check import CheckReport


def check_lines(game: GameBase, report: CheckReport) -> list[str]:
    """The report's text: what was checked, each violation with its witness, the notes."""
    reach = " (every reachable one)" if report.exhausted else ""
    lines = [
        f"{game.name} ({params_text(game.params) or 'no parameters'}): "
        f"{report.positions} positions checked{reach}, "
        f"{report.symmetry_pairs} symmetry pairs solved, {report.seconds:.1f}s"
    ]
    lines.extend(f"  violation {v}" for v in report.violations)
    lines.extend(f"  note: {note}" for note in report.notes)
    if report.ok:
        lines.append("  ok: no violation found")
    return lines


def check_failure(game: GameBase, report: CheckReport, *, as_json: bool, witnesses: int) -> str:
    """The error message of a check that found violations (*witnesses*: the most each
    per-position check lists)."""
    n, listed = report.found, len(report.violations)
    return f"{game.name} breaks the Game contract: {n:,} violation{'s' if n != 1 else ''}" + (
        ""
        if as_json
        else " (listed above)"
        if listed == n
        else f" ({listed} listed above: of each per-position check, the first {witnesses})"
    )


__all__ = ["check_failure", "check_lines"]
