"""Running a tiered solve's units on Dask (``solve --full --workers N`` or
``--scheduler ADDRESS``; ``docs/distributed.md``).

negagraph writes no scheduler of its own: :class:`DaskRunner` submits each unit
(:mod:`solver.tiers.units`) to a Dask cluster, a local one of *N* worker processes
(``distributed.LocalCluster``) or an existing one whose workers run on other machines,
and hands results back to :class:`~solver.tiers.solve.TieredSolve` as they finish. The
database stays the single source of truth: a worker writes its shard itself, in its own
transaction, and a unit whose worker died is run again by Dask (writing a shard twice
writes nothing the second time). The order of tiers, and which tiers may run at once,
stays with :class:`~solver.tiers.solve.TieredSolve`, which submits a tier's shards once its
child tiers' values are in (their rows may still be being written).

Dask is imported only when a run asks for workers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError
from typing import Any

from solver.errors import InvalidParameterError, NegagraphError, SolveError
from solver.game import Game
from solver.memory import MemoryBudget
from solver.store import NodeShard, ShardTarget, TierRecord
from solver.tiers.local_cluster import start_local, stop_local
from solver.tiers.units import (
    ShardResult,
    SolvedTier,
    Unit,
    solve_part,
    values_of,
    write_nodes_part,
    write_part,
)

log = logging.getLogger(__name__)

WORKER_THREADS = 1
"""Threads per local worker process: the units are CPU-bound Python and numpy."""

MAX_ATTEMPTS = 3
"""Times a unit whose task Dask cancelled is submitted again before the solve fails."""

SCATTER_SECONDS = 30.0
SCATTER_RATE = 10 * 2**20
"""A solved tier's copy to the workers is given up (and made again) after
:data:`SCATTER_SECONDS` plus a second for every this many bytes of it."""


def _failed(exc: BaseException) -> SolveError:
    """The cluster's failure (a lost scheduler, a unit that kept killing workers)."""
    return SolveError(
        f"the Dask cluster failed a unit ({type(exc).__name__}: {exc}); what the "
        "workers wrote is kept: run the same command again to go on"
    )


def _key(step: str, name: str, attempt: int) -> str:
    """A task's Dask key: its step and unit, and the attempt after the first."""
    return f"negagraph-{step}-{name}" + (f"-again{attempt}" if attempt else "")


class DaskRunner:
    """Runs shards on a Dask cluster (see the module docs); a context manager that
    closes what it started."""

    def __init__(
        self,
        target: ShardTarget,
        *,
        workers: int | None = None,
        scheduler: str | None = None,
        memory: MemoryBudget | None = None,
        tell: Callable[[str], None] | None = None,
    ) -> None:
        try:
            from distributed import Client, as_completed
        except ImportError as exc:  # pragma: no cover - a dependency of negagraph
            raise SolveError(f"--workers needs Dask distributed ({exc})") from None
        # Dask's own INFO lines (cluster start, dashboard hints) only with negagraph -vv.
        logging.getLogger("distributed").setLevel(
            max(logging.WARNING, logging.getLogger().getEffectiveLevel())
        )
        if (workers is None) == (scheduler is None):
            raise InvalidParameterError("give either a number of workers or a scheduler")
        self.target = target
        self.cluster: Any = None
        if scheduler is None:
            assert workers is not None
            if workers < 1:
                raise InvalidParameterError(f"--workers must be at least 1, not {workers}")
            self.cluster = start_local(workers, WORKER_THREADS, memory)
            try:
                self.client: Any = Client(self.cluster)
            except BaseException:
                stop_local(self.cluster)
                raise
        else:
            try:
                self.client = Client(scheduler, timeout="30s")
            except OSError as exc:
                raise SolveError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        info = self.client.scheduler_info(n_workers=-1)
        self.workers = max(1, len(info.get("workers", {})))
        self.dashboard = self.client.dashboard_link
        self._done: Any = as_completed()
        self._futures: dict[Any, Any] = {}
        self._again: dict[Any, Callable[[int], Any]] = {}
        """How to submit each tracked task anew (given the attempt's number), should Dask
        cancel it: a result lost with a worker that Dask does not recompute (its input
        forgotten already) is run again from scratch: writing a unit twice writes
        nothing the second time."""
        self._attempts: dict[Any, int] = {}
        self._holding: dict[Any, Any] = {}
        """Each solved shard's future, held until its rows are written: while the client
        wants it, Dask solves the shard again if the worker holding it is lost."""
        self._sent: dict[tuple[int, int], Any] = {}
        self._resent: dict[tuple[int, int], int] = {}
        """The attempt for which each solved tier was last sent anew (:meth:`_resend`)."""
        """The solved tiers sent to the workers (futures), by (tier, first node id)."""
        if tell is not None:
            tell(f"Dask: {self.workers} workers, dashboard {self.dashboard}")

    @property
    def in_flight(self) -> int:
        return len(self._futures)

    @property
    def ready(self) -> bool:
        return bool(self._done.has_ready())

    def submit(
        self,
        game: Game,
        shards: Sequence[Unit],
        children: list[TierRecord],
        tables: Sequence[SolvedTier] = (),
    ) -> None:
        sent = self._send(tables)
        client, target = self.client, self.target
        for shard in shards:
            name = f"{target.ident}-{shard.first_id}"
            if isinstance(shard, NodeShard):

                def discover(attempt: int, shard: NodeShard = shard, name: str = name) -> Any:
                    return client.submit(
                        write_nodes_part, target, game, shard, key=_key("discover", name, attempt)
                    )

                self._track(discover(0), discover)
                continue
            # Solving first (the next tiers wait for it), the values back at once, the
            # rows written when a worker is free; Dask keeps the solved shard on its
            # worker until written (and solves it again if that worker is lost).

            def solve(attempt: int, shard: Unit = shard, name: str = name) -> Any:
                return client.submit(
                    solve_part,
                    target,
                    game,
                    shard,
                    children,
                    sent if not attempt else self._resend(tables, attempt),
                    key=_key("solve", name, attempt),
                    pure=False,
                    priority=1,
                )

            def values(attempt: int, name: str = name, solve: Any = solve) -> Any:
                return client.submit(
                    values_of, solve(attempt), key=_key("values", name, attempt), priority=2
                )

            def write(attempt: int, name: str = name, solve: Any = solve) -> Any:
                solved = solve(attempt)
                future = client.submit(write_part, target, solved, key=_key("write", name, attempt))
                self._holding[future.key] = solved
                return future

            solved = solve(0)
            self._track(
                client.submit(values_of, solved, key=_key("values", name, 0), priority=2), values
            )
            written = client.submit(write_part, target, solved, key=_key("write", name, 0))
            self._holding[written.key] = solved
            self._track(written, write)

    def _track(self, future: Any, again: Callable[[int], Any]) -> None:
        self._futures[future.key] = future
        self._again[future.key] = again
        self._done.add(future)

    def _send(self, tables: Sequence[SolvedTier]) -> list[Any]:
        """The client's solved child tiers on every worker (each sent once, and dropped
        once no unit submitted after needs it: Dask keeps what a unit in flight uses)."""
        keys = [(t.record.tier, t.record.first_id) for t in tables]
        for key in [k for k in self._sent if k not in keys]:
            del self._sent[key]
        for key, table in zip(keys, tables, strict=True):
            if key not in self._sent:
                self._sent[key] = self._scatter(table)
        return [self._sent[key] for key in keys]

    def _resend(self, tables: Sequence[SolvedTier], attempt: int) -> list[Any]:
        """:meth:`_send`'s tables for a unit submitted again: those whose copies were all
        lost with workers (Dask cannot compute scattered data again) are sent anew, and
        from a unit's third attempt on all of them (once per attempt)."""
        out = []
        for table in tables:
            key = (table.record.tier, table.record.first_id)
            future = self._sent.get(key)
            stale = attempt >= 2 and self._resent.get(key, 0) < attempt
            if future is None or future.status != "finished" or stale:
                future = self._sent[key] = self._scatter(table)
                self._resent[key] = attempt
            out.append(future)
        return out

    def _scatter(self, table: SolvedTier) -> Any:
        """*table* copied to every worker. A worker lost while it is copied can make the
        scheduler fail the copy (it lists the worker, then no longer has it), or leave it
        waiting for good (``Client.scatter`` has no limit on the copy itself): give up
        after :func:`_scatter_seconds` and copy again, to the workers there are then."""
        client = self.client
        seconds = _scatter_seconds(table)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return client.sync(
                    client._scatter, table, broadcast=True, hash=False, callback_timeout=seconds
                )
            except Exception as exc:  # the scheduler's error, whatever its type
                if attempt == MAX_ATTEMPTS:
                    raise _failed(exc) from exc
                log.warning("copying a solved tier to the workers failed (%s): again", exc)
        raise AssertionError("unreachable")

    def wait(self) -> ShardResult:
        while True:
            future = next(self._done)
            key = future.key
            self._futures.pop(key, None)
            self._holding.pop(key, None)
            again = self._again.pop(key, None)
            attempt = self._attempts.pop(key, 0)
            try:
                result: ShardResult = future.result()
            except NegagraphError:
                raise  # the unit's own error (a database's, the game's contract), as it is
            except CancelledError as exc:
                if again is None or attempt >= MAX_ATTEMPTS:
                    raise _failed(exc) from exc
                # Dask gave up on the task (its input was lost with a worker and already
                # forgotten): submit the unit anew; what it wrote stays written.
                log.warning("Dask cancelled %s: submitting it again", key)
                retry = again(attempt + 1)
                self._attempts[retry.key] = attempt + 1
                self._track(retry, again)
                continue
            except Exception as exc:
                raise _failed(exc) from exc
            return result

    def close(self) -> None:
        """Cancel the units not finished, and stop the local cluster (a remote one
        keeps running)."""
        futures = list(self._futures.values())
        self._futures.clear()
        self._again.clear()
        self._holding.clear()
        self._sent.clear()
        try:
            if futures:
                self.client.cancel(futures)
            self.client.close()
        finally:
            cluster, self.cluster = self.cluster, None
            if cluster is not None:
                stop_local(cluster, busy=bool(futures))  # the client closed first

    def __enter__(self) -> DaskRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _scatter_seconds(table: Any) -> float:
    """How long a copy of *table* to the workers may take before it is given up:
    :data:`SCATTER_SECONDS`, plus a second for every :data:`SCATTER_RATE` bytes."""
    from dask.sizeof import sizeof  # (dask only where a run asks for workers)

    return SCATTER_SECONDS + int(sizeof(table)) / SCATTER_RATE


__all__ = ["DaskRunner"]
