"""Types of the sorted-key lookup in C (``solver/tiers/_lookup.c``)."""

from typing import Any

def directory(keys: Any, shift: int, out: Any, /) -> None:
    """The place of the first of the sorted *keys* in each bucket of ``2**shift`` key
    values above the smallest, into *out* (its last entry: the number of keys)."""

def find(keys: Any, directory: Any, shift: int, queries: Any, out: Any, /) -> int:
    """The place of each of *queries* among the sorted *keys* into *out*: the index of
    the first query not among them, or -1 when all are."""
