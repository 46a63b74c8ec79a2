"""Figures as the command line prints them: counts with thousands separators, durations
for people."""

from __future__ import annotations


def number(n: float) -> str:
    """*n* rounded, with thousands separators.

    >>> number(2095564)
    '2,095,564'
    """
    return f"{n:,.0f}"


def duration(seconds: float) -> str:
    """*seconds* for people: ``45s``, ``3m05s``, ``2h07m``.

    >>> duration(45), duration(185), duration(7620)
    ('45s', '3m05s', '2h07m')
    """
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


__all__ = ["duration", "number"]
