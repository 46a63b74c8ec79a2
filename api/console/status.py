"""``negagraph status``: what a database holds, as JSON and as text."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from api.console.text import duration, number
from solver.games import GAMES
from solver.memory import format_size
from solver.values import bound_text


def status_lines(database: str, data: list[dict[str, Any]]) -> list[str]:
    """``status``'s text for the variants *data* (:func:`status_entry`) of *database*."""
    lines = [f"{database}: {len(data)} variant{'s' if len(data) != 1 else ''}"]
    for v in data:
        root, odds = v["root_bounds"], v.get("root_chance")
        bounds = (
            ""
            if root is None
            else f"  root {v['root']} [{odds['low']:.10g}, {odds['high']:.10g}] (expected value)"
            if odds is not None
            else (
                f"  root {v['root']} [{bound_text(root['low'], upper=False)}, "
                f"{bound_text(root['high'], upper=True)}]"
            )
        )  # null in JSON
        missing = "" if v["installed"] else " [game not installed]"
        lines.append(
            f"  {v['game']} ({v['params_text']}) rules v{v['rules_version']}: "
            f"{variant_nodes_text(v)}{bounds}{missing}"
        )
        for run in v["runs"]:
            # a tiered run's nodes are the positions it discovered (node rows come
            # with their tier's solve)
            added = "positions discovered" if run["tiers_total"] is not None else "nodes"
            lines.append(
                f"    run {run['id']} {run['status']:<8} {run['started_at']}  "
                f"{number(run['expansions'])} expansions  +{number(run['nodes_added'])} "
                f"{added}  {run['seconds']:.1f}s{memory_text(run)}"
            )
            for w in run["worker_units"]:
                lines.append(
                    f"      worker {w['worker']}: {number(w['units'])} units, "
                    f"{number(w['discovered'])} positions discovered and "
                    f"{number(w['solved'])} solved, {w['seconds']:.1f}s"
                )
    return lines


def variant_nodes_text(v: dict[str, Any]) -> str:
    """A variant's size: ``161,029 nodes``, or in the middle of a tiered solve, whose
    positions wait for their tier's solve to become nodes, ``2,095,564 positions
    discovered, 0 solved``; a compact variant's (values by key, no graph) ``161,029
    positions, compact``."""
    waiting = v["discovered_unsolved"]
    if not waiting and v.get("layout") == "compact":
        return f"{number(v['nodes'])} positions, compact"
    if not waiting:
        return f"{number(v['nodes'])} nodes"
    return f"{number(v['nodes'] + waiting)} positions discovered, {number(v['nodes'])} solved"


def memory_text(run: dict[str, Any]) -> str:
    """``  tiers 5/13 ~4m10s left  RAM 1.2 GiB of 18 GiB, 10,575,506 nodes resident`` (the
    tiers of tiered runs only, the time left of running ones once known; empty for runs
    recorded before the figures were)."""
    tiers = (
        "" if run["tiers_total"] is None else f"  tiers {run['tiers_done']}/{run['tiers_total']}"
    )
    if run.get("units_total") is not None and run["units_total"] != run["tiers_total"]:
        tiers += f" units {run['units_done']}/{run['units_total']}"
    if (run.get("workers") or 1) > 1:
        tiers += f" on {run['workers']} workers"
    if run.get("eta_seconds") is not None:
        tiers += f" ~{duration(run['eta_seconds'])} left"
    if run["rss_bytes"] is None:
        return tiers
    limit = run["memory_limit"]
    resident = run["resident_nodes"]
    return (
        tiers
        + f"  RAM {format_size(run['rss_bytes'])}"
        + ("" if limit is None else f" of {format_size(limit)}")
        + ("" if resident is None else f", {number(resident)} nodes resident")
    )


def status_entry(summary: Any, runs: list[Any], odds: Any = None) -> dict[str, Any]:
    """A variant's entry of ``status --json``: *odds* are the root's chance values in a
    game of chance (its expected value for its player, rounded outwards; the integer
    ``root_bounds`` of its node row say nothing of it)."""

    def bounds(b: Any) -> dict[str, Any]:
        return {
            "low": b.low,
            "high": b.high,
            "low_final": b.low_final,
            "high_final": b.high_final,
        }

    v = summary.variant
    return {
        "id": v.id,
        "game": v.game,
        "installed": v.game in GAMES,
        "game_source": v.game_source,
        "params": dict(v.params_json),
        "params_text": v.params,
        "rules_version": v.rules_version,
        "nodes": summary.nodes,
        "layout": v.layout,
        "discovered_unsolved": summary.discovered_unsolved,
        "root": v.root_position,
        "root_bounds": None if summary.root_bounds is None else bounds(summary.root_bounds),
        "root_chance": None if odds is None else {"low": odds.low, "high": odds.high},
        "runs": [
            {
                "id": r.id,
                "status": r.status,
                "started_at": r.started_at.isoformat(),
                "finished_at": None if r.finished_at is None else r.finished_at.isoformat(),
                "root": r.root_position,
                "full": r.tablebase,
                "expansions": r.expansions,
                "nodes_added": r.nodes_added,
                "edges_added": r.edges_added,
                "nodes": r.nodes,
                "frontier": r.frontier,
                "root_bounds": bounds(r.root_bounds),
                "seconds": r.seconds,
                "rss_bytes": r.rss_bytes,
                "memory_limit": r.memory_limit,
                "resident_nodes": r.resident_nodes,
                "tiers_done": r.tiers_done,
                "tiers_total": r.tiers_total,
                "units_done": r.units_done,
                "units_total": r.units_total,
                "workers": r.workers,
                "eta_seconds": r.eta_seconds,
                "worker_units": [
                    {**asdict(w), "seconds": round(w.seconds, 3)} for w in r.worker_units
                ],
            }
            for r in runs
        ],
    }


__all__ = ["memory_text", "status_entry", "status_lines", "variant_nodes_text"]
