"""Starting and stopping the local Dask cluster of ``solve --full --workers N``
(:class:`solver.tiers.cluster.DaskRunner`).

Starting: a worker process lost while the cluster starts (killed, out of memory) makes
``LocalCluster`` fail whole (``RuntimeError: Nanny failed to start``), after closing
what it had started. The cluster is started again (said with ``-v``), up to
:data:`START_ATTEMPTS` times, then the solve fails with one line
(:class:`~solver.errors.SolveError`), its run recorded as failed.

Stopping: the client is closed first (by the caller), then each worker process is asked
to exit and given :data:`WORKER_EXIT_SECONDS` to do so, then the scheduler is closed.
Dask's own close gives a worker process four seconds before it kills it, which a loaded
machine's interpreter shutdown can outlast: each kill printed a warning at the end of a
solve that had succeeded (reported with Dask ERROR lines, tracebacks and leaked
semaphores too).

Dask is imported only here and in :mod:`solver.tiers.cluster`, when a run asks for workers.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from solver.errors import SolveError
from solver.memory import MemoryBudget

log = logging.getLogger(__name__)

START_ATTEMPTS = 3
"""Times the local cluster is started before the solve fails."""

WORKER_EXIT_SECONDS = 120.0
"""How long a local worker process may take to exit once asked to, before it is killed."""


def start_local(workers: int, threads: int, memory: MemoryBudget | None) -> Any:
    """A ``distributed.LocalCluster`` of *workers* processes (see the module docs), each
    held to its :meth:`~solver.memory.MemoryBudget.worker_share` of the run's *memory*
    limit (Dask's default without one).

    :raises SolveError: if it did not start in :data:`START_ATTEMPTS` attempts.
    """
    from distributed import LocalCluster

    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return LocalCluster(
                n_workers=workers,
                threads_per_worker=threads,
                processes=True,
                memory_limit="auto" if memory is None else memory.worker_share(workers),
                dashboard_address=":0",
                silence_logs=logging.WARNING,
            )
        except Exception as exc:  # Dask's error, whatever its type (it closed the rest)
            if attempt == START_ATTEMPTS:
                raise SolveError(
                    f"the local Dask cluster could not start: {_reason(exc)} "
                    f"({START_ATTEMPTS} attempts)"
                ) from None
            # (not a warning: the run goes on; a failed run's error is its one line)
            log.info("the local Dask cluster could not start (%s): again", _reason(exc))
    raise AssertionError("unreachable")


def stop_local(cluster: Any, *, busy: bool = False) -> None:
    """Stop *cluster*'s worker processes, each given :data:`WORKER_EXIT_SECONDS` to exit,
    then its scheduler (call once its client is closed). With *busy* (units cancelled
    in flight: a run that failed or was stopped), Dask's own close: a worker still
    running a unit is killed after four seconds, not waited for."""

    async def stop_workers() -> None:
        nannies = list(cluster.workers.values())
        await asyncio.gather(
            *(n.close(timeout=WORKER_EXIT_SECONDS) for n in nannies), return_exceptions=True
        )

    try:
        if not busy:
            cluster.sync(stop_workers)
    finally:
        cluster.close()


def _reason(exc: BaseException) -> str:
    """*exc*'s message, or its cause's where that says more (Dask's ``Nanny failed to
    start.`` is caused by ``Nanny failed to start worker process``)."""
    text = str(exc).rstrip(".") or type(exc).__name__
    cause = exc.__cause__
    if cause is None:
        return text
    inner = _reason(cause)
    return inner if inner.startswith(text) else f"{text} ({inner})"


__all__ = ["START_ATTEMPTS", "WORKER_EXIT_SECONDS", "start_local", "stop_local"]
