"""Tiered full solves on a real Dask cluster (solver.tiers.cluster, docs/distributed.md): a
scheduler and worker processes started with Dask's own commands, as the docs say, or
the local cluster of ``--workers N``; SQLite and PostgreSQL.

The oracle is the one-process solve: every node and edge, the tiers and the commits the
same. A worker killed (SIGKILL) in mid-solve: Dask runs its units again and the solve
ends the same; everything killed in mid-solve, then the same command again: the same. A
second solve of the variant meanwhile is refused, as for a one-process solve."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest
from sqlalchemy import Engine, make_url, text

from db.session import make_engine
from tests.built_once import shared
from tests.db.test_solve_cli import run
from tests.db.test_tiered import sqlite_url

BIN = Path(sys.executable).parent
NEGAGRAPH = str(BIN / "negagraph")
DASK = str(BIN / "dask")

GAME = ("connect-four", {"width": 4, "height": 4})
SHARD = "3000"
"""Positions a unit: some 60 units over the solve, several a tier."""

LIMIT = 300.0
"""Seconds any awaited event may take on a loaded machine."""


def _solve_args(url: str, *extra: str) -> list[str]:
    name, params = GAME
    return [
        NEGAGRAPH,
        "solve",
        name,
        *(a for k, v in params.items() for a in ("-p", f"{k}={v}")),
        "--full",
        "--shard-size",
        SHARD,
        "-q",
        "--db",
        url,
        *extra,
    ]


def _run(
    url: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _solve_args(url, *extra), capture_output=True, text=True, timeout=LIMIT * 2, env=env
    )


SLOW_EXIT = """
import atexit, sys, time
if "--multiprocessing-fork" in sys.argv:  # a local worker process (spawned)
    atexit.register(time.sleep, 6)
"""
"""Worker processes that take 6 s to exit, as on a loaded machine (Dask kills a worker
process that has not exited 4 s after it was asked to)."""

NO_START = """
import os, sys
if "--multiprocessing-fork" in sys.argv:  # a local worker process (spawned)
    os._exit(3)
"""
"""Worker processes that die as they start."""


def _with_site(where: Path, code: str) -> dict[str, str]:
    """The environment of a command whose Python processes run *code* as they start
    (a ``sitecustomize`` module on ``PYTHONPATH``)."""
    where.mkdir(exist_ok=True)
    (where / "sitecustomize.py").write_text(code)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(where) + (os.pathsep + path if path else "")}


def _noise(stderr: str) -> list[str]:
    """The lines of *stderr* that are errors, warnings or tracebacks, but the taking over
    of a dead run's lease (the run after one killed)."""
    return [
        line
        for line in stderr.splitlines()
        if any(w in line for w in ("ERROR", "WARNING", "Traceback", "Error", "leaked"))
        and "taking over the lease of run" not in line
    ]


def _local_workers(proc: subprocess.Popen[Any]) -> list[psutil.Process]:
    """The worker processes of *proc*'s local cluster (spawned by multiprocessing)."""
    found = []
    for child in psutil.Process(proc.pid).children(recursive=True):
        try:
            if "--multiprocessing-fork" in child.cmdline():
                found.append(child)
        except psutil.Error:  # gone meanwhile
            pass
    return found


_ROWS = [
    # test_tiered.stored's rows (nodes, then edges), and each node's expanding tier
    "SELECT n.id, n.key, n.low, n.high, n.low_final, n.high_final, n.depth_low, "
    "n.depth_high, n.state, n.dist, n.notation FROM nodes n "
    f"JOIN variants v ON v.id = n.variant_id WHERE v.game = '{GAME[0]}' ORDER BY n.id",
    "SELECT e.parent, e.move_order, e.child, e.move FROM edges e "
    f"JOIN variants v ON v.id = e.variant_id WHERE v.game = '{GAME[0]}' "
    "ORDER BY e.parent, e.move_order",
    "SELECT id, expanded_in FROM nodes ORDER BY id",
]


def _snapshot(url: str) -> tuple[list[Any], list[Any], list[Any]]:
    """The rows that must not depend on who solved: nodes and edges (id order), the
    tiers, the commits' numbers and sizes. (The node and edge rows as the driver gives
    them: read through SQLAlchemy's rows, and into test_tiered.stored's dictionaries
    by key, unused here, they took 3 s of CPU a snapshot.)"""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            cursor = conn.connection.cursor()
            try:
                rows: list[Any] = []
                for query in _ROWS:
                    cursor.execute(query)
                    rows += [tuple(r) for r in cursor.fetchall()]
            finally:
                cursor.close()
            tiers = conn.execute(
                text(
                    "SELECT tier, ordinal, first_id, nodes, edges, discovered_in, solved_in, "
                    "inner_moves FROM tiers ORDER BY tier"
                )
            ).all()
            commits = conn.execute(text("SELECT seq, nodes, edges FROM commits ORDER BY seq")).all()
        return (rows, [tuple(t) for t in tiers], [tuple(c) for c in commits])
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any], list[Any]]:
    """The one-process solve's rows (solved in this process, once a test session)."""

    def build(where: Path) -> tuple[list[Any], list[Any], list[Any]]:
        url = sqlite_url(where, "reference.db")
        code, _, err = run(*_solve_args(url)[1:])
        assert code == 0, err
        return _snapshot(url)

    return shared(tmp_path_factory, "test_distributed-reference", build)


def _empty(url: str) -> str:
    if url.startswith("postgresql"):
        engine = make_engine(url)
        with engine.begin() as conn:
            conn.execute(
                text("TRUNCATE edges, nodes, solve_runs, variants RESTART IDENTITY CASCADE")
            )
        engine.dispose()
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path, "distributed.db")
    return _empty(request.getfixturevalue("pg_session_url"))


def _write_lock_free(url: str) -> bool:
    """Whether SQLite's write lock on *url*'s file is free right now."""
    conn = sqlite3.connect(make_url(url).database or "", timeout=0)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.rollback()
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def _freeze_between_commits(proc: subprocess.Popen[str], url: str) -> None:
    """Stop *proc* (SIGSTOP) at a moment it does not hold *url*'s write lock."""

    def frozen_free() -> bool:
        proc.send_signal(signal.SIGSTOP)
        if _write_lock_free(url):
            return True
        proc.send_signal(signal.SIGCONT)
        return False

    _wait_for("a moment the solving client holds no write lock", frozen_free)


def _wait_for(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + LIMIT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {LIMIT:.0f} s for {what}")
        time.sleep(0.05)


class Cluster:
    """A Dask scheduler and worker processes, started as docs/distributed.md says."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.file = where / "scheduler.json"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.scheduler = self._start(
            [DASK, "scheduler", "--scheduler-file", str(self.file), "--port", "0",
             "--dashboard-address", ":0"]
        )  # fmt: skip
        _wait_for("the scheduler file", self.file.exists)

    def _start(self, args: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.where / f"dask-{len(self.procs)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.where
        )
        log.close()
        self.procs.append(proc)
        return proc

    def add_workers(self, count: int) -> None:
        for _ in range(count):
            self.workers.append(
                self._start([DASK, "worker", "--scheduler-file", str(self.file), "--nthreads", "1"])
            )
        self._wait_for_workers()

    def keep_workers(self, count: int) -> None:
        """*count* workers again, the killed ones replaced by new."""
        self.workers = [w for w in self.workers if w.poll() is None]
        self.add_workers(count - len(self.workers))

    def _wait_for_workers(self) -> None:
        """Until the scheduler has exactly the worker processes running (asked through
        one client: a client is made in tens of milliseconds of CPU, and so many more
        on the scheduler)."""
        from distributed import Client

        with Client(scheduler_file=str(self.file), timeout="30s") as client:  # type: ignore[no-untyped-call]
            _wait_for(
                f"{len(self.workers)} workers",
                lambda: len(client.scheduler_info(n_workers=-1)["workers"]) == len(self.workers),
            )

    @property
    def address(self) -> str:
        import json

        return str(json.loads(self.file.read_text())["address"])

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=LIMIT)

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="class")
def started_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A scheduler and two workers, for the tests of a class (started anew for each, the
    tests spent about 6 s of CPU on a cluster's start; an idle one spends some 0.06 s a
    second, so it stops with the class's last test)."""
    cluster = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.add_workers(2)
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def dask_cluster(started_cluster: Cluster) -> Cluster:
    """:func:`started_cluster` with two workers (a worker a test killed replaced)."""
    started_cluster.keep_workers(2)
    return started_cluster


def _shards_written(url: str, engine: Engine | None = None) -> int:
    """The shards written in *url* (through *engine*, one on *url*, if given: a poll
    makes no engine and connection of its own)."""
    own: Engine = engine or make_engine(url)
    try:
        with own.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM tier_shards")).scalar_one())
    finally:
        if engine is None:
            own.dispose()


@contextmanager
def _shard_counter(url: str) -> Iterator[Callable[[], int]]:
    """:func:`_shards_written` for polling *url*: all through one engine."""
    engine = make_engine(url)
    try:
        yield lambda: _shards_written(url, engine)
    finally:
        engine.dispose()


class TestOnACluster:
    """Solves on a cluster started with Dask's commands (one for the class's tests: they
    are not about its start)."""

    @pytest.mark.slow
    def test_a_cluster_solve_equals_the_one_process_solve(
        self,
        db: str,
        dask_cluster: Cluster,
        reference: tuple[list[Any], list[Any], list[Any]],
    ) -> None:
        done = _run(db, "--scheduler", dask_cluster.address)
        assert done.returncode == 0, done.stderr
        assert _snapshot(db) == reference
        engine = make_engine(db)
        try:
            with engine.connect() as conn:
                by_worker = conn.execute(
                    text("SELECT worker, count(*) FROM tier_shards GROUP BY worker")
                ).all()
        finally:
            engine.dispose()
        assert len(by_worker) == 2, by_worker  # both workers wrote shards
        assert "value 0 (exact)" in done.stdout

    @pytest.mark.slow
    def test_a_killed_worker_loses_nothing_and_a_second_solve_is_refused(
        self,
        tmp_path: Path,
        dask_cluster: Cluster,
        reference: tuple[list[Any], list[Any], list[Any]],
    ) -> None:
        url = sqlite_url(tmp_path, "killed-worker.db")
        solving = subprocess.Popen(
            _solve_args(url, "--scheduler", dask_cluster.address),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            with _shard_counter(url) as shards_written:
                _wait_for("the first shards", lambda: shards_written() >= 2)
            # The client frozen while a second solve tries: its run cannot have ended
            # meanwhile, however fast the units are (once it had, and the second ran).
            # Frozen between its commits: frozen inside one, it would hold SQLite's
            # write lock past every other writer's busy timeout, workers included.
            _freeze_between_commits(solving, url)
            # (the second solve in this process: that it is refused is the point)
            code, _, stderr = run(*_solve_args(url)[1:])
            assert code == 1, stderr
            assert stderr.startswith("error: "), stderr
            assert "is being solved by run" in stderr or "locked" in stderr
            assert len(stderr.strip().splitlines()) == 1
            dask_cluster.kill(dask_cluster.workers[0])
            solving.send_signal(signal.SIGCONT)
            out, err = solving.communicate(timeout=LIMIT * 2)
        finally:
            if solving.poll() is None:
                solving.kill()
        assert solving.returncode == 0, err
        assert _snapshot(url) == reference


def _kill_a_starting_worker(proc: subprocess.Popen[Any]) -> None:
    """Kill a worker process of *proc*'s local cluster as soon as there is one: it takes
    seconds to start (imports), so it dies while the cluster starts."""
    killed: list[int] = []

    def kill() -> bool:
        for worker in _local_workers(proc)[:1]:
            worker.kill()
            killed.append(worker.pid)
        return bool(killed)

    _wait_for("a local worker process", kill)


@pytest.mark.slow
def test_everything_killed_then_the_same_command_again(
    db: str, tmp_path: Path, reference: tuple[list[Any], list[Any], list[Any]]
) -> None:
    """A worker killed while the local cluster starts: the cluster is started again and
    the solve goes on (it stopped with a traceback: ``Nanny failed to start``). Then
    everything killed in mid-solve, and the same command again: it ends as the one-process
    solve, and says nothing of its cluster's shutdown, though its worker processes take
    longer to exit than Dask waits (it killed them, with a warning each)."""
    args = _solve_args(db, "--workers", "2")
    log = tmp_path / "killed.log"
    with open(log, "w") as err:
        solving = subprocess.Popen(
            [args[0], "-v", *args[1:]],
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    try:
        _kill_a_starting_worker(solving)
        with _shard_counter(db) as shards_written:
            _wait_for(
                "the first shards", lambda: shards_written() >= 3 or solving.poll() is not None
            )
        assert solving.poll() is None, log.read_text()
    finally:
        os.killpg(solving.pid, signal.SIGKILL)  # the client, its scheduler, its workers
        solving.wait(timeout=LIMIT)
    assert "the local Dask cluster could not start (" in log.read_text()
    written = _shards_written(db)
    again = _run(db, "--workers", "2", env=_with_site(tmp_path / "site", SLOW_EXIT))
    assert again.returncode == 0, again.stderr
    assert _noise(again.stderr) == [], again.stderr
    assert _snapshot(db) == reference
    assert _shards_written(db) >= written


def test_a_local_cluster_that_cannot_start_is_one_error_line(db: str, tmp_path: Path) -> None:
    """Worker processes that die as they start, at every attempt: the solve fails with
    one line (not a traceback), and its run is recorded as failed, the variant free."""
    done = _run(db, "--workers", "2", env=_with_site(tmp_path / "site", NO_START))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "error: the local Dask cluster could not start: Nanny failed to start worker "
        "process (3 attempts)"
    ), done.stderr
    assert _noise(done.stderr) == [], done.stderr
    engine = make_engine(db)
    try:
        with engine.connect() as conn:
            runs = conn.execute(text("SELECT status, nodes FROM solve_runs")).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in runs] == [("failed", 0)]
