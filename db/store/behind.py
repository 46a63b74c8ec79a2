"""Batches written behind: a thread of its own writes the store's latest batch (or a
tiered solve's shard) on the writer's connection while the solver goes on.

The SQLite statements run without the GIL (``db/_sqlite_bulk.c``), so the search and the
writes share the machine's cores. Whatever uses the writer's connection next waits for
the batch first (:meth:`WriteBehind.wait`), and raises its error if it failed. A crash
meanwhile loses that batch, as it would lose a batch in flight anyway: each is one
transaction. ``NEGAGRAPH_WRITE_BEHIND=0`` writes every batch in the calling thread.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

SWITCH_INTERVAL = 0.001
"""Seconds between the interpreter's thread switches while batches are written behind
(Python's default is 0.005): the batch's thread takes the GIL back after each chunk of
rows, and would otherwise wait that long for the solver's thread to let it go."""
WRITE_BEHIND_ENV = "NEGAGRAPH_WRITE_BEHIND"
"""Set to ``0`` to write every batch in the solving thread (see
:func:`db.store.commit.commit_batch`; the benchmarks' baseline)."""

Flight = tuple[int, int, np.ndarray[Any, np.dtype[np.int64]]]
"""The stored ids a batch written behind holds: new ones from, new ones to, and the
changed ones."""


class WriteBehind:
    """The one thread that writes behind for a store (see the module docs)."""

    def __init__(self) -> None:
        self.enabled = os.environ.get(WRITE_BEHIND_ENV, "1") != "0"
        """Whether batches are written behind at all."""
        self.thread: threading.Thread | None = None
        """The thread writing the latest batch, while the solver goes on."""
        self.error: BaseException | None = None
        """What stopped the thread's batch, for the solver's thread to raise."""
        self.lost = False
        """A batch written behind failed: the graph holds work the database does not."""
        self.evicted = False
        """The graph was evicted while a batch was written behind: reads wait for it."""
        self.flight: Flight | None = None
        """The stored ids the batch written behind holds (:meth:`in_flight`)."""
        self.pinned_for: threading.Thread | None = None
        """The batch whose rows the latest eviction kept resident (:meth:`in_flight`)."""
        self._switch_interval: float | None = None
        """The interpreter's thread switch interval before the first batch written behind."""

    def start(self, work: Callable[[], object], name: str) -> None:
        """Run *work* (a transaction on the writer's connection, which nothing else
        uses until :meth:`join`) in a thread of its own: a batch written behind, or a
        tiered solve's shard."""
        if self._switch_interval is None:
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_INTERVAL, self._switch_interval))
        self.thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=True)
        self.thread.start()

    def _run(self, work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as exc:  # raised by the solver's thread (wait)
            self.error = exc

    def join(self) -> BaseException | None:
        """Wait for the batch written behind, if any: what stopped it, or ``None``. The
        connection is this thread's again afterwards. Ctrl-C does not cut the wait short
        (the batch's thread holds the connection): it is raised once the batch is done."""
        thread = self.thread
        if thread is None:
            return None
        interrupted: KeyboardInterrupt | None = None
        while thread.is_alive():
            try:
                thread.join()
            except KeyboardInterrupt as exc:
                interrupted = exc
        self.thread = None
        self.evicted = False
        error, self.error = self.error, None
        if error is not None:
            self.lost = True
        if interrupted is not None:
            if error is not None:
                log.warning("the batch written behind failed: %s", error)
            raise interrupted
        return error

    def wait(self) -> None:
        """:meth:`join`, raising what stopped the batch."""
        error = self.join()
        if error is not None:
            raise error

    def settle(self) -> None:
        """:meth:`join` before the connection is given up, while another exception (or
        Ctrl-C) is on its way out: the batch's error is only logged."""
        try:
            error = self.join()
        except KeyboardInterrupt:  # again: the run is being abandoned already
            return
        if error is not None:
            log.warning("the batch written behind failed: %s", error)

    def restore(self) -> None:
        """Give the interpreter its thread switch interval back (at the run's end)."""
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None

    def swapped(self) -> None:
        """The graph was evicted: unless the eviction kept the nodes of the batch written
        behind resident (:meth:`in_flight`), reads wait for that batch."""
        self.evicted = self.thread is not None and self.pinned_for is not self.thread

    def in_flight(self, most: int) -> np.ndarray[Any, np.dtype[np.int64]] | None:
        """The stored ids of the nodes whose rows the batch written behind holds, while it
        is being written, if there are at most *most* (:class:`solver.store.NodeSource`;
        the batch after the retrograde pass before a first eviction rewrites most nodes)."""
        behind, flight = self.thread, self.flight
        if behind is None or flight is None or not behind.is_alive():
            return None
        lo, hi, changed = flight
        if hi - lo + changed.size > most:
            return None
        self.pinned_for = behind
        return np.concatenate([np.arange(lo, hi, dtype=np.int64), changed])


__all__ = ["SWITCH_INTERVAL", "WRITE_BEHIND_ENV", "Flight", "WriteBehind"]
