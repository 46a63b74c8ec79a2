"""The key index of a graph (position key -> node id) and the optional C module it
comes from: a :class:`~solver._native.KeyTable` of 64-bit keys when the C module is
built and the keys fit, else a dict (same results).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import MutableMapping
from typing import Any

from solver.game import PositionKey

KeyMap = MutableMapping[PositionKey, int]
"""A graph's key index: position key -> node id."""


def native(name: str) -> Any:
    """:mod:`solver._native`'s *name*, or ``None`` when the C module is not built (no C
    compiler at install) or ``NEGAGRAPH_PURE_PYTHON`` is set: its callers then take their
    Python path, with the same results."""
    if os.environ.get("NEGAGRAPH_PURE_PYTHON"):
        return None
    try:
        from solver import _native
    except ImportError:
        return None
    return getattr(_native, name)


KeyTable: Any = native("KeyTable")
""":class:`solver._native.KeyTable`, or ``None`` when the C module is not built or
``NEGAGRAPH_PURE_PYTHON`` is set (then the index is a dict: same results)."""


def new_index(keys: array[int] | list[PositionKey] | None = None) -> KeyMap:
    """The key index of *keys* (key i -> i; empty without *keys*): a KeyTable while the
    keys fit 64 bits and the C module is there, else a dict."""
    if KeyTable is not None and (keys is None or isinstance(keys, array)):
        table: KeyMap = KeyTable() if keys is None else KeyTable.from_keys(keys)
        return table
    return {} if keys is None else {k: i for i, k in enumerate(keys)}
