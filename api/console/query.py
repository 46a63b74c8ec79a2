"""What ``negagraph query`` prints: a stored position's answer (:mod:`api.views`) as text,
for games without chance and games of chance."""

from __future__ import annotations

from api.console.chance import chance_span, fraction_or_float, plies_text
from api.schemas import ChanceFields, Estimate, Move, Position
from solver.values import bound_text


def _depth(v: int | None) -> str:
    return "inf" if v is None else str(v)


def _span(low: int | None, high: int | None) -> str:
    lo, hi = bound_text(low, upper=False), bound_text(high, upper=True)
    return lo if lo == hi else f"[{lo}, {hi}]"


def _final(flag: bool) -> str:
    return "final" if flag else "not final"


def describe_view(view: Position, players: tuple[str, str] = ("MAX", "MIN")) -> list[str]:
    """``query``'s text: *players* name the first and the second player (the game's
    :attr:`~solver.game.GameFacts.players`, e.g. White and Black)."""
    lines = [f"{view.position}  ({view.state})"]
    if view.chance is not None:
        return lines + chance_view_lines(view, view.chance, players)
    if view.to_move is not None:
        mover = players[0] if view.to_move == "MAX" else players[1]
        lines.append(
            f"  {mover} to move; from {players[0]}'s side: {_span(view.max_low, view.max_high)}"
        )
    if view.value is not None:
        lines.append(f"  value {view.value}")
    lines.append(
        f"  low {bound_text(view.low, upper=False)} ({_final(view.low_final)}),"
        f" high {bound_text(view.high, upper=True)} ({_final(view.high_final)})"
    )
    if view.repetition_value is not None and view.value is None:
        lines.append(f"  value {view.repetition_value} under the game's repetition rule")
    lines.append(
        f"  depths: low {_depth(view.depth_low)} plies, high {_depth(view.depth_high)} plies"
    )
    if view.moves:
        lines.append("  moves, best first (the mover's bounds; plies to realise low/high):")
        width = max(len(m.move) for m in view.moves)
        lines.extend(move_line(m, width) for m in view.moves)
    return lines


def describe_estimate(view: Estimate, mover: str) -> list[str]:
    """``query --search``'s text: the estimate, labelled heuristic unless the search
    proved it, with the bounds the database has proven; or, where the database holds
    the value, that it does (the stored answer follows, :func:`describe_view`)."""
    if view.proven_value is not None:
        return [f"proven in the database: value {view.proven_value} for {mover}; no search needed"]
    label = (
        "estimate (proven by the search: the game's value)"
        if view.exact
        else "estimate (heuristic, not proven)"
    )
    if view.stored:
        known = (
            f"low {bound_text(view.low, upper=False)} ({_final(view.low_final)}),"
            f" high {bound_text(view.high, upper=True)} ({_final(view.high_final)})"
        )
    else:
        known = "not stored"
    return [
        f"{view.position}",
        f"  {label}: best move {view.best_move}, score {view.score} for {mover} at depth "
        f"{view.depth} in {view.seconds:.1f} s, {view.rate:,.0f} positions/s; "
        f"proven bounds: {known}",
    ]


def move_line(m: Move, width: int) -> str:
    """A move: its bounds for the mover, the plies to realise them, where it leads."""
    # the move's own depths: one ply more than the child's opposite depths
    plies_low = "inf" if m.depth_high is None else str(m.depth_high + 1)
    plies_high = "inf" if m.depth_low is None else str(m.depth_low + 1)
    return (
        f"    {m.move.ljust(width)}  {_span(m.move_low, m.move_high):<10} plies "
        f"{plies_low}/{plies_high}  -> {m.position} ({m.state})"
    )


def chance_view_lines(view: Position, c: ChanceFields, players: tuple[str, str]) -> list[str]:
    """``query``'s text for a position of a game of chance (*c*: its chance fields)."""
    lo = fraction_or_float(c.low_exact, c.low)
    hi = fraction_or_float(c.high_exact, c.high)
    lines = [
        f"  {c.kind} node, {players[c.player]}'s; value for {players[c.player]}: "
        + chance_span(lo, hi)
        + ("" if c.low_exact is not None else " (floats rounded outwards)")
    ]
    first_lo, first_hi = c.first_player_low, c.first_player_high
    lines.append(
        f"  from {players[0]}'s side: {chance_span(f'{first_lo:.10g}', f'{first_hi:.10g}')}"
    )
    plies = plies_text(c.plies_exact, c.plies)
    if plies == "infinite" and view.state == "unexpanded":
        plies = "not known (the position is not expanded yet)"
    lines.append(f"  expected plies to the end under optimal play: {plies}")
    if view.moves:
        header = (
            "outcomes (probability, value for the mover)"
            if c.kind == "chance"
            else "moves, best first (value for the mover)"
        )
        lines.append(f"  {header}:")
        width = max(len(m.move) for m in view.moves)
        lines.extend(chance_move_line(m, width) for m in view.moves)
    return lines


def chance_move_line(m: Move, width: int) -> str:
    """A move of a game of chance: its probability (at a chance node), its value for
    the mover, where it leads."""
    mc = m.chance
    if mc is None:
        span = "unknown"
    else:
        span = chance_span(
            fraction_or_float(mc.move_low_exact, mc.move_low),
            fraction_or_float(mc.move_high_exact, mc.move_high),
        )
        if mc.probability is not None:
            span = f"{mc.probability:>5}  {span}"
    return f"    {m.move.ljust(width)}  {span}  -> {m.position} ({m.state})"


__all__ = ["chance_view_lines", "describe_estimate", "describe_view"]
