"""Values and bounds: plain ints inside the solver, typed objects at the edges.

Inside the hot loops a bound is a plain ``int``; the infinities are the sentinels
:data:`NEG_INF` and :data:`POS_INF` (``-POS_INF == NEG_INF``, so negation flips the point of
view without special cases). :class:`Bounds` is the public value type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

POS_INF = 1 << 60
"""Sentinel for an infinite upper bound (far above any game value)."""
NEG_INF = -POS_INF
"""Sentinel for an infinite lower bound."""
DEPTH_INF = (1 << 31) - 1
"""Sentinel for an infinite (unknown) depth (the largest 32-bit int: depths are stored in
4 bytes)."""


# The one codec of bounds and depths. A bound has three spellings: the solver's plain
# int (the sentinels above), the public number (``math.inf``) and JSON/SQL (``None``, which
# side being known from the column). A depth has two: the int (``DEPTH_INF``) and
# JSON/SQL (``None``). Every conversion between them is here.


def to_public(v: int) -> float | int:
    """A bound as a Python number: the sentinels become ``-math.inf`` / ``math.inf``.

    >>> to_public(3), to_public(POS_INF), to_public(NEG_INF)
    (3, inf, -inf)
    """
    if v >= POS_INF:
        return math.inf
    if v <= NEG_INF:
        return -math.inf
    return v


def from_public(v: float | int) -> int:
    """The inverse of :func:`to_public`: ``math.inf`` and ``-math.inf`` become the sentinels.

    >>> from_public(-math.inf) == NEG_INF, from_public(math.inf) == POS_INF, from_public(3)
    (True, True, 3)
    """
    if isinstance(v, float) and math.isinf(v):
        return POS_INF if v > 0 else NEG_INF
    return int(v)


def to_json(v: int) -> int | None:
    """A bound for JSON and SQL: infinite bounds become ``None``.

    >>> to_json(3), to_json(POS_INF), to_json(NEG_INF)
    (3, None, None)
    """
    return None if v >= POS_INF or v <= NEG_INF else v


def from_json(v: int | None, *, upper: bool) -> int:
    """The inverse of :func:`to_json` for a bound (``upper`` tells which infinity).

    >>> from_json(None, upper=True) == POS_INF, from_json(None, upper=False) == NEG_INF
    (True, True)
    """
    if v is None:
        return POS_INF if upper else NEG_INF
    return v


def low_from_json(v: int | None) -> int:
    """:func:`from_json` of a lower bound (``None`` is ``NEG_INF``)."""
    return NEG_INF if v is None else v


def high_from_json(v: int | None) -> int:
    """:func:`from_json` of an upper bound (``None`` is ``POS_INF``)."""
    return POS_INF if v is None else v


def public_from_json(v: int | None, *, upper: bool) -> float | int:
    """A JSON/SQL bound as a public number (``None`` is ``math.inf`` or ``-math.inf``).

    >>> public_from_json(None, upper=False), public_from_json(4, upper=True)
    (-inf, 4)
    """
    if v is None:
        return math.inf if upper else -math.inf
    return v


def public_to_json(v: float | int) -> int | None:
    """A public bound for JSON and SQL: ``math.inf`` and ``-math.inf`` become ``None``.

    >>> public_to_json(-math.inf), public_to_json(3)
    (None, 3)
    """
    return None if isinstance(v, float) and math.isinf(v) else int(v)


def depth_to_json(d: int) -> int | None:
    """A depth for JSON and SQL: ``DEPTH_INF`` (unknown) becomes ``None``.

    >>> depth_to_json(7), depth_to_json(DEPTH_INF)
    (7, None)
    """
    return None if d >= DEPTH_INF else d


def depth_from_json(d: int | None) -> int:
    """The inverse of :func:`depth_to_json`."""
    return DEPTH_INF if d is None else d


def bounds_to_json(values: list[int]) -> list[int | None]:
    """:func:`to_json` of a whole column of bounds (the list itself when none is infinite).

    >>> bounds_to_json([1, NEG_INF, POS_INF])
    [1, None, None]
    """
    if values and (min(values) <= NEG_INF or max(values) >= POS_INF):
        return [None if v <= NEG_INF or v >= POS_INF else v for v in values]
    return values  # type: ignore[return-value]  # not copied: nothing is None


def depths_to_json(values: list[int]) -> list[int | None]:
    """:func:`depth_to_json` of a whole column of depths (the list itself when every depth
    is known; a negative depth, which no pass leaves, is unknown too).

    >>> depths_to_json([0, DEPTH_INF, 3])
    [0, None, 3]
    """
    if values and (min(values) < 0 or max(values) >= DEPTH_INF):
        return [None if v < 0 or v >= DEPTH_INF else v for v in values]
    return values  # type: ignore[return-value]  # not copied: nothing is None


def bound_text(v: float | int | None, infinite: str = "") -> str:
    """A public bound as text: ``-inf``/``+inf`` for the infinities (*infinite* for
    ``None``, the JSON and SQL spelling of either, when the caller knows which).

    >>> bound_text(3), bound_text(math.inf), bound_text(-math.inf), bound_text(None, "?")
    ('3', '+inf', '-inf', '?')
    """
    if v is None:
        return infinite
    if v == math.inf:
        return "+inf"
    if v == -math.inf:
        return "-inf"
    return str(v)


def clamp(x: int, low: int, high: int) -> int:
    """``x`` clamped into ``[low, high]`` — the value under a repetition rule worth ``x``.

    >>> clamp(0, 3, 5), clamp(0, -2, 4), clamp(0, NEG_INF, -1)
    (3, 0, -1)
    """
    return low if x < low else high if x > high else x


@dataclass(frozen=True, order=False)
class Bounds:
    """The bounds of a position from the point of view of the player to move.

    ``low`` is what the mover can force if endless play counted as -inf for him, ``high``
    what he can force if it counted as +inf. Infinite bounds are ``-math.inf``/``math.inf``.
    """

    low: float | int
    """Lower bound (``-math.inf`` when nothing is known)."""
    high: float | int
    """Upper bound (``math.inf`` when nothing is known)."""
    low_final: bool = False
    """True when no further expansion anywhere can change ``low``."""
    high_final: bool = False
    """True when no further expansion anywhere can change ``high``."""

    @property
    def is_final(self) -> bool:
        """Both bounds are final."""
        return self.low_final and self.high_final

    @property
    def value(self) -> int | None:
        """The exact value when ``low == high``, else ``None``."""
        if self.low == self.high and not math.isinf(self.low):
            return int(self.low)
        return None

    def __neg__(self) -> Bounds:
        """The same bounds from the other player's point of view."""
        return Bounds(-self.high, -self.low, self.high_final, self.low_final)

    def __repr__(self) -> str:
        return (
            f"Bounds({self.low!r}, {self.high!r}, low_final={self.low_final!r}, "
            f"high_final={self.high_final!r})"
        ).replace("inf", "math.inf")
