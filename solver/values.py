"""Values and bounds: plain ints inside the solver, typed objects at the edges.

Inside the hot loops a bound is a plain ``int``; the infinities are the sentinels
:data:`NEG_INF` and :data:`POS_INF` (``-POS_INF == NEG_INF``, so negation flips the point of
view without special cases). :class:`Bounds` is the public value type, in which an
infinite bound is ``None`` (:func:`encode`, :func:`decode`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

POS_INF = 1 << 60
"""Sentinel for an infinite upper bound (far above any game value)."""
NEG_INF = -POS_INF
"""Sentinel for an infinite lower bound."""
DEPTH_INF = (1 << 31) - 1
"""Sentinel for an infinite (unknown) depth (the largest 32-bit int: depths are stored in
4 bytes)."""


# The one codec of bounds and depths. Inside the solver a bound is a plain int and its
# infinities are the sentinels above; everywhere a user sees one (Python results, JSON,
# SQL) an infinite bound is ``None`` (``null``, ``NULL``), which infinity being known from
# the side: see :func:`encode`. An infinite (unknown) depth is ``DEPTH_INF`` inside and
# ``None`` outside. Every conversion between the two spellings is here.


def encode(v: int) -> int | None:
    """A solver bound in its public spelling: the sentinels become ``None``.

    A low bound of ``None`` means -inf, a high bound of ``None`` means +inf: the one
    public encoding of an infinite bound, in Python results (:class:`Bounds`,
    :class:`~solver.run.SolveResult`), in JSON (``null``) and in SQL (``NULL``).

    >>> encode(3), encode(POS_INF), encode(NEG_INF)
    (3, None, None)
    """
    return None if v >= POS_INF or v <= NEG_INF else v


def decode(v: int | None, *, upper: bool) -> int:
    """The inverse of :func:`encode` for a low (``upper`` false) or a high bound.

    >>> decode(None, upper=True) == POS_INF, decode(None, upper=False) == NEG_INF
    (True, True)
    >>> decode(4, upper=True)
    4
    """
    if v is None:
        return POS_INF if upper else NEG_INF
    return v


def decode_all(values: Iterable[int | None], *, upper: bool) -> Iterator[int]:
    """:func:`decode` of a column of low (``upper`` false) or high bounds, lazily.

    >>> list(decode_all([None, 2], upper=False)) == [NEG_INF, 2]
    True
    """
    inf = POS_INF if upper else NEG_INF
    return (inf if v is None else v for v in values)


def encode_depth(d: int) -> int | None:
    """A depth in its public spelling: ``DEPTH_INF`` (unknown) becomes ``None``.

    >>> encode_depth(7), encode_depth(DEPTH_INF)
    (7, None)
    """
    return None if d >= DEPTH_INF else d


def decode_depth(d: int | None) -> int:
    """The inverse of :func:`encode_depth`."""
    return DEPTH_INF if d is None else d


def bound_text(v: float | None, *, upper: bool) -> str:
    """A public bound as the command line writes it: ``-inf``/``+inf`` for ``None`` as a
    low (``upper`` false) or a high bound.

    >>> bound_text(3, upper=False), bound_text(None, upper=True), bound_text(None, upper=False)
    ('3', '+inf', '-inf')
    """
    if v is None:
        return "+inf" if upper else "-inf"
    return str(v)


def _negated(v: int | None) -> int | None:
    """A public bound seen from the other side (``None`` stays infinite, on the other
    side)."""
    return None if v is None else -v


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
    what he can force if it counted as +inf. An infinite bound is ``None`` (:func:`encode`).
    """

    low: int | None
    """Lower bound (``None``, -inf, when nothing is known)."""
    high: int | None
    """Upper bound (``None``, +inf, when nothing is known)."""
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
        return self.low if self.low is not None and self.low == self.high else None

    def __neg__(self) -> Bounds:
        """The same bounds from the other player's point of view.

        >>> -Bounds(None, 3)
        Bounds(-3, None, low_final=False, high_final=False)
        """
        return Bounds(_negated(self.high), _negated(self.low), self.high_final, self.low_final)

    def __repr__(self) -> str:
        return (
            f"Bounds({self.low!r}, {self.high!r}, low_final={self.low_final!r}, "
            f"high_final={self.high_final!r})"
        )
