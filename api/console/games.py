"""What ``negagraph games`` prints: each game with its rules version, source, notation
and parameters."""

from __future__ import annotations

from typing import Any


def games_lines(described: list[dict[str, Any]]) -> list[str]:
    """The text for the games *described* (:meth:`~solver.game.GameBase.describe` with
    their ``source``)."""
    lines = []
    for d in described:
        source = "" if d["source"] == "builtin" else f", {d['source']}"
        lines.append(f"{d['name']} (rules version {d['version']}{source})")
        lines.append(f"    {d['description']}")
        lines.append(f"    notation: {d['notation']}")
        lines.extend(parameter_line(p) for p in d["parameters"])
    return lines


def parameter_line(p: dict[str, Any]) -> str:
    """A parameter (:meth:`~solver.game.Param.describe`): ``-p NAME=DEFAULT (type,
    min..max) help``."""
    rng = ""
    if "min" in p or "max" in p:
        rng = f", {p.get('min', '')}..{p.get('max', '')}"
    default = str(p["default"]).lower() if p["type"] == "bool" else p["default"]
    return f"    -p {p['name']}={default}  ({p['type']}{rng}) {p['help']}"


__all__ = ["games_lines"]
