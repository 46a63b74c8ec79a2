"""What ``negagraph query`` prints: a stored position's answer (:mod:`api.views`) as text,
for games without chance and games of chance."""

from __future__ import annotations

from typing import Any

from api.console.chance import chance_span, fraction_or_float, plies_text


def describe_view(view: dict[str, Any], players: tuple[str, str] = ("MAX", "MIN")) -> list[str]:
    """``query``'s text: *players* name the first and the second player (the game's
    :attr:`~solver.game.GameFacts.players`, e.g. White and Black)."""

    def b(v: int | None, inf: str) -> str:
        return inf if v is None else str(v)

    def d(v: int | None) -> str:
        return "inf" if v is None else str(v)

    lines = [f"{view['position']}  ({view['state']})"]
    if "chance" in view:
        return lines + chance_view_lines(view, players)
    if "max_low" in view:
        lo, hi = b(view["max_low"], "-inf"), b(view["max_high"], "+inf")
        mover = players[0] if view["to_move"] == "MAX" else players[1]
        lines.append(
            f"  {mover} to move; from {players[0]}'s side: " + (lo if lo == hi else f"[{lo}, {hi}]")
        )
    if view["value"] is not None:
        lines.append(f"  value {view['value']}")
    lines.append(
        f"  low {b(view['low'], '-inf')} ({'final' if view['low_final'] else 'not final'}),"
        f" high {b(view['high'], '+inf')} ({'final' if view['high_final'] else 'not final'})"
    )
    if view["repetition_value"] is not None and view["value"] is None:
        lines.append(f"  value {view['repetition_value']} under the game's repetition rule")
    lines.append(f"  depths: low {d(view['depth_low'])} plies, high {d(view['depth_high'])} plies")
    if view["moves"]:
        lines.append("  moves, best first (the mover's bounds; plies to realise low/high):")
        width = max(len(m["move"]) for m in view["moves"])
        for m in view["moves"]:
            lo, hi = b(m["move_low"], "-inf"), b(m["move_high"], "+inf")
            span = lo if lo == hi else f"[{lo}, {hi}]"
            # the move's own depths: one ply more than the child's opposite depths
            plies_low = "inf" if m["depth_high"] is None else str(m["depth_high"] + 1)
            plies_high = "inf" if m["depth_low"] is None else str(m["depth_low"] + 1)
            lines.append(
                f"    {m['move'].ljust(width)}  {span:<10} plies {plies_low}/{plies_high}"
                f"  -> {m['position']} ({m['state']})"
            )
    return lines


def chance_view_lines(view: dict[str, Any], players: tuple[str, str]) -> list[str]:
    """``query``'s text for a position of a game of chance."""
    c = view["chance"]
    lo = fraction_or_float(c["low_exact"], c["low"])
    hi = fraction_or_float(c["high_exact"], c["high"])
    lines = [
        f"  {c['kind']} node, {players[c['player']]}'s; value for {players[c['player']]}: "
        + chance_span(lo, hi)
        + ("" if c["low_exact"] is not None else " (floats rounded outwards)")
    ]
    first_lo, first_hi = c["first_player_low"], c["first_player_high"]
    lines.append(
        f"  from {players[0]}'s side: {chance_span(f'{first_lo:.10g}', f'{first_hi:.10g}')}"
    )
    plies = plies_text(c.get("plies_exact"), c.get("plies"))
    if plies == "infinite" and view.get("state") == "unexpanded":
        plies = "not known (the position is not expanded yet)"
    lines.append(f"  expected plies to the end under optimal play: {plies}")
    if view["moves"]:
        header = (
            "outcomes (probability, value for the mover)"
            if c["kind"] == "chance"
            else ("moves, best first (value for the mover)")
        )
        lines.append(f"  {header}:")
        width = max(len(m["move"]) for m in view["moves"])
        for m in view["moves"]:
            mc = m.get("chance")
            if mc is None:
                span = "unknown"
            else:
                span = chance_span(
                    fraction_or_float(mc["move_low_exact"], mc["move_low"]),
                    fraction_or_float(mc["move_high_exact"], mc["move_high"]),
                )
                if mc["probability"] is not None:
                    span = f"{mc['probability']:>5}  {span}"
            lines.append(f"    {m['move'].ljust(width)}  {span}  -> {m['position']} ({m['state']})")
    return lines


__all__ = ["chance_view_lines", "describe_view"]
