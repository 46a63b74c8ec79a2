"""Finding keys in a solved tier's sorted keys (:class:`SortedKeys`): the second sweep
looks up every move's child, hundreds of millions of keys in no useful order.

:func:`numpy.searchsorted` over a tier of millions of keys misses the cache at most of
its steps: connect-four 6 x 4's largest tiers took about 1.7 microseconds a key. The
optional C module (``solver/tiers/_lookup.c``) first reads a *directory* of the keys'
leading bits, the place of the first key of each bucket of ``2**shift`` consecutive key
values, at least :data:`KEYS_A_BUCKET` keys a bucket on average, then searches that
bucket alone (2-4 bytes a key more while the tier is held). Without the C module (no compiler at
install, or ``NEGAGRAPH_PURE_PYTHON``) it is :func:`numpy.searchsorted`: same places.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt

KEYS_A_BUCKET = 2
"""The directory's buckets: one for every this many keys at most (a power of two)."""


def _c_module() -> Any:
    """The C module, unless it is not built or ``NEGAGRAPH_PURE_PYTHON`` is set."""
    if os.environ.get("NEGAGRAPH_PURE_PYTHON"):
        return None
    try:
        from solver.tiers import _lookup
    except ImportError:  # no C compiler at install: numpy's binary search
        return None
    return _lookup


class SortedKeys:
    """Sorted 64-bit keys (ascending, distinct) and a directory to find them by."""

    def __init__(self, keys: npt.NDArray[np.int64]) -> None:
        self._build(keys)

    def _build(self, keys: npt.NDArray[np.int64]) -> None:
        self.keys = np.require(keys, np.int64, ["C", "A"])
        self.module = _c_module()
        self.shift = 0
        self.directory: npt.NDArray[np.int64] | None = None
        n = int(self.keys.size)
        if self.module is None or not n:
            return
        span = int(self.keys[-1]) - int(self.keys[0])  # below 2**64
        buckets = max(1, n // KEYS_A_BUCKET)
        self.shift = max(0, span.bit_length() - max(1, buckets.bit_length() - 1))
        directory = np.empty((span >> self.shift) + 2, dtype=np.int64)
        self.module.directory(self.keys, self.shift, directory)
        self.directory = directory

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to a Dask worker) without the directory, made again on arrival."""
        return {"keys": self.keys}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._build(state["keys"])

    def find(self, queries: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """The place of every key of *queries* among the keys (``None`` unless all
        are there)."""
        queries = np.require(queries, np.int64, ["C", "A"])
        keys = self.keys
        if not keys.size:
            return None if queries.size else np.zeros(0, np.int64)
        if self.directory is not None:
            out = np.empty(queries.size, dtype=np.int64)
            missing = self.module.find(keys, self.directory, self.shift, queries, out)
            return out if missing < 0 else None
        pos = np.minimum(np.searchsorted(keys, queries), keys.size - 1)
        return pos if bool(np.all(keys[pos] == queries)) else None


__all__ = ["KEYS_A_BUCKET", "SortedKeys"]
