"""Starting the local Dask cluster of ``solve --full --workers N``
(:class:`solver.cluster.DaskRunner`).

A worker process lost while the cluster starts (killed, out of memory) makes
``LocalCluster`` fail whole (``RuntimeError: Nanny failed to start``), after closing
what it had started. The cluster is started again (said with ``-v``), up to
:data:`START_ATTEMPTS` times, then the solve fails with one line
(:class:`~solver.errors.SolveError`), its run recorded as failed.

Dask is imported only here and in :mod:`solver.cluster`, when a run asks for workers.
"""

from __future__ import annotations

import logging
from typing import Any

from solver.errors import SolveError

log = logging.getLogger(__name__)

START_ATTEMPTS = 3
"""Times the local cluster is started before the solve fails."""


def start_local(workers: int, threads: int, memory_limit: int | None) -> Any:
    """A ``distributed.LocalCluster`` of *workers* processes (see the module docs).

    :raises SolveError: if it did not start in :data:`START_ATTEMPTS` attempts.
    """
    from distributed import LocalCluster

    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return LocalCluster(
                n_workers=workers,
                threads_per_worker=threads,
                processes=True,
                memory_limit=(memory_limit // workers) if memory_limit else "auto",
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


def _reason(exc: BaseException) -> str:
    """*exc*'s message, or its cause's where that says more (Dask's ``Nanny failed to
    start.`` is caused by ``Nanny failed to start worker process``)."""
    text = str(exc).rstrip(".") or type(exc).__name__
    cause = exc.__cause__
    if cause is None:
        return text
    inner = _reason(cause)
    return inner if inner.startswith(text) else f"{text} ({inner})"


__all__ = ["START_ATTEMPTS", "start_local"]
