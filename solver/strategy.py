"""Best-move ordering and principal lines (DESIGN §4), over plain-int bounds.

These functions only need each node's bounds and depths, so the in-memory solver and the
database-backed API share them: the caller supplies a ``children`` function that returns a
node's children as :class:`Child` tuples.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar, get_args

N = TypeVar("N", bound=Hashable)


@dataclass(frozen=True)
class Child(Generic[N]):
    """One move from a node: the move label and the child's own bounds and depths."""

    order: int
    """The move's index in the game's move order."""
    move: str
    node: N
    """The child (a node id, a key — whatever the caller's ``children`` understands)."""
    low: int
    high: int
    depth_low: int
    depth_high: int
    terminal: bool
    expanded: bool


def move_sort_key(c: Child[N]) -> tuple[int, int, int, int]:
    """Sort key for best-first move lists (ascending = best first).

    Moves are ordered by the mover's view: the move's lower bound ``-c.high`` descending;
    among winning moves (lower bound above 0) the shortest ``depth_high`` first; else the
    move's upper bound ``-c.low`` descending, then the longest ``depth_low`` when the move
    loses (upper bound below 0), the shortest ``depth_high`` otherwise; then move order.
    (DESIGN §4 puts the upper bound before depth for winning moves too, which would list
    a chess move after which the loser can only hope to loop forever — upper bound +inf
    — before the mate.)
    """
    if -c.high > 0:
        # a win is a win: the fastest one first, whatever the upper bound (a mate beats
        # a move after which the loser could only hope to loop forever)
        return (c.high, 0, c.depth_high, c.order)
    if -c.low < 0:
        dk = -c.depth_low
    else:
        dk = c.depth_high
    return (c.high, c.low, dk, c.order)


def best_first(children: Sequence[Child[N]]) -> list[Child[N]]:
    """*children* sorted best first for the player to move."""
    return sorted(children, key=move_sort_key)


def choose(
    children: Sequence[Child[N]],
    bound: Bound,
    target: int,
    avoid: set[N] | frozenset[N] = frozenset(),
) -> Child[N] | None:
    """The child that realises a node's bound, avoiding the nodes in *avoid*.

    For ``bound="low"`` the candidates attain the low bound (``-c.high == target``) and the
    one with the smallest ``depth_high`` wins (the fastest guarantee); for ``"high"`` they
    attain the high bound (``-c.low == target``) and the largest ``depth_low`` wins (the
    longest resistance). Ties go to the earlier move.
    """
    best: Child[N] | None = None
    if bound == "low":
        for c in children:
            if -c.high == target and c.node not in avoid:
                if best is None or c.depth_high < best.depth_high:
                    best = c
    else:
        for c in children:
            if -c.low == target and c.node not in avoid:
                if best is None or c.depth_low > best.depth_low:
                    best = c
    return best


@dataclass(frozen=True)
class LineStep(Generic[N]):
    """One ply of a principal line."""

    move: str
    node: N
    """The position reached by the move."""
    bound: Bound
    """The bound this step's mover was realising (``low`` or ``high``), or ``value``: a
    move that keeps a value that only endless play gives (see :func:`value_side`)."""


@dataclass(frozen=True)
class Line(Generic[N]):
    """A principal line and why it ended."""

    steps: list[LineStep[N]]
    end: str
    """``terminal``, ``unexpanded``, ``max_plies`` or ``repetition`` (no attaining move
    that does not revisit a position: happens only where the bound is infinite)."""


Bound = Literal["value", "low", "high"]
"""Which bound a line or strategy realises (``value``: the value when it is known, else
the bound the mover can hold; see :func:`value_side`)."""
BOUNDS: tuple[Bound, ...] = get_args(Bound)
"""What a principal line realises (see :func:`principal_line`)."""


def value_side(low: int, high: int, repetition: int | None) -> Bound:
    """Which bound the player to move plays for when he plays for the position's *value*:
    ``low`` when he wins (the fastest guarantee), ``high`` when he loses (the longest
    resistance), ``value`` when the value is *repetition* strictly between the bounds
    (only endless play gives it: keep it).

    The value is ``clamp(repetition, low, high)``; it wins when it is above *repetition*.
    A value equal to *repetition* that a bound attains is played for through that bound
    (``low`` first: a draw that the mover can force ends within ``depth_low`` plies).
    Without a rule (``None``) a position has a value only when ``low == high``: ``high``
    when it is below 0, else ``low``.

    >>> value_side(1, 1, 0), value_side(-1, -1, 0), value_side(-1, 1, 0)
    ('low', 'high', 'value')
    >>> value_side(-3, 5, None), value_side(-2, -2, None)
    ('low', 'high')
    """
    if repetition is None:
        return "high" if low == high and low < 0 else "low"
    if low > repetition or low == repetition:
        return "low"
    if high < repetition or high == repetition:
        return "high"
    return "value"


def principal_line(
    start: N,
    bound: Bound,
    *,
    bounds: Callable[[N], tuple[int, int]],
    state: Callable[[N], str],
    children: Callable[[N], Sequence[Child[N]]],
    max_plies: int | None = None,
    repetition: int | None = None,
) -> Line[N]:
    """The line that realises *start*'s ``value``, ``low`` or ``high`` bound (DESIGN §4).

    With ``low`` or ``high`` the player to move at *start* realises that bound, and at
    each following ply the side flips (the opponent of a ``low`` player plays for its
    ``high`` bound and vice versa): from a lost position the ``low`` line has the loser
    give up fastest. With ``value`` each player plays for his own position's value under
    the game's rule for endless play (*repetition*; see :func:`value_side`): the winner
    wins fastest, the loser resists longest, and the line ends at a terminal position
    where the value is a decided win or loss; where only endless play holds the value,
    moves keep it (best first) until every such move would revisit the line. A game
    without such a rule has no value where ``low < high``: its ``value`` line is the
    ``high`` line from a position lost outright (``low == high < 0``), else the ``low``
    line.

    Depths strictly fall along a line when its bounds are finite, so it cannot loop; a
    position already on the line is never entered again in any case.

    :param bounds: a node's ``(low, high)``.
    :param state: ``"terminal"``, ``"expanded"`` or ``"unexpanded"``.
    :param children: a node's children as :class:`Child` records.
    :param repetition: the game's value for endless play (``None``: it has none).
    :raises ValueError: if *bound* is not one of :data:`BOUNDS`.
    """
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {', '.join(BOUNDS)}, not {bound!r}")
    steps: list[LineStep[N]] = []
    seen: set[N] = {start}
    node = start
    side = bound
    per_node = bound == "value" and repetition is not None
    if bound == "value" and repetition is None:  # the start's side, then alternate
        side = value_side(*bounds(start), None)
    while True:
        st = state(node)
        if st == "terminal":
            return Line(steps, "terminal")
        if st != "expanded":
            return Line(steps, "unexpanded")
        if max_plies is not None and len(steps) >= max_plies:
            return Line(steps, "max_plies")
        low, high = bounds(node)
        plays = value_side(low, high, repetition) if per_node else side
        pick = _pick(children(node), plays, low, high, repetition, seen)
        if pick is None:
            return Line(steps, "repetition")
        steps.append(LineStep(pick.move, pick.node, plays))
        seen.add(pick.node)
        node = pick.node
        side = "high" if side == "low" else "low"


def _pick(
    children: Sequence[Child[N]],
    plays: Bound,
    low: int,
    high: int,
    repetition: int | None,
    seen: set[N],
) -> Child[N] | None:
    """The move :func:`principal_line` plays for *plays* at a node of bounds *low* and
    *high*, never to a node in *seen*."""
    if plays == "value":
        assert repetition is not None
        return _keeping(children, repetition, seen)
    return choose(children, plays, low if plays == "low" else high, seen)


def _keeping(
    children: Sequence[Child[N]], repetition: int, avoid: set[N] | frozenset[N]
) -> Child[N] | None:
    """The best move (best first) that keeps the mover's value at *repetition*: one to a
    child whose bounds hold ``-repetition`` between them (``c.low <= -repetition <=
    c.high``, i.e. ``-c.high <= repetition <= -c.low``), not in *avoid*."""
    for c in best_first(children):
        if -c.high <= repetition <= -c.low and c.node not in avoid:
            return c
    return None


__all__ = [
    "BOUNDS",
    "Child",
    "Line",
    "LineStep",
    "best_first",
    "choose",
    "move_sort_key",
    "principal_line",
    "value_side",
]
