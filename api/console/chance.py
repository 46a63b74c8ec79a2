"""A game of chance's figures as the command line prints them: bounds as exact fractions
when known, else as floats, and the expected plies to the end."""

from __future__ import annotations


def fraction_or_float(exact: str | None, approx: float) -> str:
    """A chance bound as shown: its exact fraction when known, else the float.

    >>> fraction_or_float("1/3", 0.3333), fraction_or_float(None, 0.25)
    ('1/3', '0.25')
    """
    return exact if exact is not None else f"{approx:.10g}"


def chance_span(low: str, high: str) -> str:
    """``low`` when the bounds meet, else ``[low, high]``."""
    return low if low == high else f"[{low}, {high}]"


def plies_text(exact: str | None, approx: float | None) -> str:
    """Expected plies as shown: the exact fraction when known, else the float, else
    ``infinite`` (play may never end; also what a variant stored before migration 0011
    shows).

    >>> plies_text("13/4", 3.25), plies_text(None, 3.25), plies_text(None, None)
    ('13/4', '3.25', 'infinite')
    """
    if exact is not None:
        return exact
    if approx is not None:
        return f"{approx:.10g}"
    return "infinite"


__all__ = ["chance_span", "fraction_or_float", "plies_text"]
