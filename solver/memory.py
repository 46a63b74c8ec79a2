"""Memory sizes and the process's use of memory: the ``--memory-limit`` of a solve.

A solve keeps its graph in RAM (about 240 bytes a node in partial mode, 180 in full
mode, measured on connect-four; ``docs/performance.md``). A run under a memory limit
checks the process's resident set size (RSS) between batches, with a reserve for what
its end still needs (the closing pass's retrograde and the last commit), and ends like a
spent budget — every batch committed, nothing lost — before the limit is reached,
instead of being killed by the system or driving the machine into swap.

>>> parse_size("4GiB"), parse_size("512 MiB"), parse_size("1.5G"), parse_size("1000")
(4294967296, 536870912, 1610612736, 1000)
>>> format_size(3 * 2**30 + 2**29), format_size(200 * 2**20)
('3.5 GiB', '200 MiB')
"""

from __future__ import annotations

import ctypes
import functools
import re
import resource
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solver.errors import InvalidParameterError

if TYPE_CHECKING:
    import psutil

UNITS = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "kb": 10**3,
    "kib": 2**10,
    "m": 2**20,
    "mb": 10**6,
    "mib": 2**20,
    "g": 2**30,
    "gb": 10**9,
    "gib": 2**30,
    "t": 2**40,
    "tb": 10**12,
    "tib": 2**40,
}
"""Size suffixes, case-insensitive: IEC (KiB, MiB, GiB, TiB) and their one-letter forms
(K, M, G, T) are powers of 1024; SI (kB, MB, GB, TB) powers of 1000."""

_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*")

DEFAULT_FRACTION = 0.75
"""The default limit: this fraction of the machine's physical memory."""

HEADROOM = 0.02
"""And this fraction of the limit (at least :data:`MINIMUM_HEADROOM`) for what one batch
adds between two checks."""

MINIMUM_HEADROOM = 4 * 2**20

MINIMUM = 128 * 2**20
"""No solve runs in less: the interpreter, the libraries and the game take about 90 MiB."""

RESERVE_PER_NODE = 40
"""Bytes a node to keep free for a run's end (its closing pass and last commit). Measured
on connect-four, as the peak RSS over the RSS at the run's last batch: partial 6 x 4
(10.6 M nodes) into SQLite 20 bytes a node (1,238 -> 1,451 MiB), in memory 32 (994 ->
1,332 MiB; the retrograde pass's arrays, once the key index and reverse edges are freed);
full 5 x 4 (3.9 M nodes) into SQLite 27 (570 -> 677 MiB)."""


def parse_size(text: str) -> int:
    """Bytes in *text*: a number with an optional unit (``4GiB``, ``512MiB``, ``1.5G``,
    ``2GB``; plain bytes without one).

    :raises InvalidParameterError: for anything else.
    """
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in UNITS:
        raise InvalidParameterError(
            f"memory size must be a number with a unit such as 4GiB, 512MiB or 1.5G, not {text!r}"
        )
    return round(float(match.group(1)) * UNITS[unit])


def format_size(n: int) -> str:
    """*n* bytes with an IEC unit, to two or three significant digits."""
    size = float(n)
    unit = "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024:
            break
        size /= 1024
        unit = bigger
    if unit == "B" or size >= 100:
        return f"{size:.0f} {unit}"
    return f"{size:.3g} {unit}"


_M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter for the size from which blocks are mapped, not heap."""


def map_large_blocks(threshold: int = 128 * 1024) -> bool:
    """Have the C allocator map every block of *threshold* bytes or more and unmap it when
    freed (glibc's ``mallopt(M_MMAP_THRESHOLD)``; whether it took). By default glibc
    raises that threshold up to 32 MiB each time it frees a mapped block, after which
    arrays of a few MiB come from the heap and their memory stays with the process once
    freed: a tiered solve, which allocates and frees a tier's arrays one tier after
    another, peaked at 489 MiB on connect-four 5 x 4 instead of 349. Elsewhere than glibc
    nothing changes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))


def machine_memory() -> int:
    """The machine's physical memory in bytes."""
    import psutil  # here: a command that never measures memory starts without it

    return int(psutil.virtual_memory().total)


def default_memory_limit() -> int:
    """:data:`DEFAULT_FRACTION` of the machine's memory (the rest for the system, the
    database server and whatever else runs)."""
    return int(machine_memory() * DEFAULT_FRACTION)


def headroom(limit: int) -> int:
    """Bytes below *limit* that a run keeps free besides its end's reserve: what the
    batch after a check may add."""
    return max(MINIMUM_HEADROOM, int(limit * HEADROOM))


def check_memory_limit(limit: int) -> int:
    """*limit*, if a solve can run in it.

    :raises InvalidParameterError: if it is below :data:`MINIMUM`.
    """
    if limit < MINIMUM:
        raise InvalidParameterError(
            f"memory limit must be at least {format_size(MINIMUM)}, not {format_size(limit)}"
        )
    return limit


RESIDENT_BYTES = 600
"""Bytes of a memory limit an evicting run counts per resident node: the graph's columns,
key index and reverse edges, the nodes a batch adds, reads back and writes, and the
first eviction's retrograde pass (measured on connect-four 5 x 4 into SQLite: 500-1,100
bytes of peak RSS per resident node over the start, docs/performance.md)."""

MIN_RESIDENT = 1_000
"""The least resident budget a memory limit gives (a limit too small for more still ends
the run when the RSS reaches it)."""

STORE_CACHE_SHARE = 16
"""An evicting run holds its store's cache (SQLite's page cache, which counts in the
process's memory) to this share of a memory limit below :data:`STORE_CACHE_LARGE`..."""

STORE_CACHE_LARGE = 2**30
STORE_CACHE_LARGE_SHARE = 8
"""... and to this share of a larger one, at most :data:`STORE_CACHE_MAX`: a large limit
is for a large solve, whose commits insert keys at random places in an index that
outgrows the cache, and run faster the more of it stays cached (docs/performance.md,
"Eviction"). SQLite's page cache of a solve is otherwise 64 MiB (db.session)."""

STORE_CACHE_MAX = 2**30


@dataclass(frozen=True)
class MemoryBudget:
    """A run's memory limit, *limit* bytes of RSS, and the shares of it that the run's
    parts take: the :attr:`headroom` every check keeps for the next batch, and, for a
    run that evicts (:mod:`solver.partial.cache`), its store's cache (:attr:`store_cache`) and
    the nodes it keeps resident (:meth:`resident_nodes`); for a tiered run on a local
    Dask cluster, what each worker process may hold (:meth:`worker_share`).

    >>> budget = MemoryBudget(4 * 2**30)
    >>> format_size(budget.headroom), format_size(budget.store_cache)
    ('81.9 MiB', '512 MiB')
    >>> MemoryBudget(2**20)
    Traceback (most recent call last):
    ...
    solver.errors.InvalidParameterError: memory limit must be at least 128 MiB, not 1 MiB
    """

    limit: int

    def __post_init__(self) -> None:
        check_memory_limit(self.limit)

    @property
    def headroom(self) -> int:
        """Bytes kept free besides a run's end's reserve (:func:`headroom`)."""
        return headroom(self.limit)

    @property
    def store_cache(self) -> int:
        """What an evicting run lets its store cache in RAM."""
        if self.limit < STORE_CACHE_LARGE:
            return self.limit // STORE_CACHE_SHARE
        return min(STORE_CACHE_MAX, self.limit // STORE_CACHE_LARGE_SHARE)

    def worker_share(self, workers: int) -> int:
        """What each of the *workers* processes of a tiered run's local Dask cluster
        (:mod:`solver.tiers.local_cluster`) may hold: an equal share of the limit, which
        Dask enforces as the worker's own memory limit (pausing, then restarting a
        worker that goes past it)."""
        return self.limit // workers

    def resident_nodes(self, used: int) -> int:
        """The resident budget of an evicting run whose process holds *used* bytes now:
        the limit less that, the store's cache and the headroom, at
        :data:`RESIDENT_BYTES` a node (at least :data:`MIN_RESIDENT`)."""
        room = self.limit - used - self.store_cache - self.headroom
        return max(MIN_RESIDENT, room // RESIDENT_BYTES)


_process: psutil.Process | None = None


def rss() -> int:
    """This process's resident set size in bytes (about 20 microseconds)."""
    global _process
    if _process is None:
        import psutil

        _process = psutil.Process()
    return int(_process.memory_info().rss)


def peak_rss() -> int:
    """The most this process's resident set has been so far, in bytes (the kernel's
    high-water mark: it sees the spikes that samples of :func:`rss` miss)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # KiB on Linux


__all__ = [
    "DEFAULT_FRACTION",
    "MemoryBudget",
    "peak_rss",
    "HEADROOM",
    "MINIMUM",
    "MINIMUM_HEADROOM",
    "RESERVE_PER_NODE",
    "check_memory_limit",
    "default_memory_limit",
    "format_size",
    "headroom",
    "machine_memory",
    "parse_size",
    "rss",
]


def give_back() -> None:
    """Return the C heap's free memory to the system (glibc's ``malloc_trim``), so that
    what an eviction freed leaves the RSS; nothing where there is no glibc."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
