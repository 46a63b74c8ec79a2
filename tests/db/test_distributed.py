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
from solver.games import get_game
from tests.db.test_tiered import sqlite_url, stored

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


def _snapshot(url: str) -> tuple[list[Any], list[Any], list[Any]]:
    """The rows that must not depend on who solved: nodes and edges (id order), the
    tiers, the commits' numbers and sizes."""
    engine = make_engine(url)
    try:
        rows = stored(engine, get_game(GAME[0], **GAME[1]))[2]
        with engine.connect() as conn:
            tiers = conn.execute(
                text(
                    "SELECT tier, ordinal, first_id, nodes, edges, discovered_in, solved_in, "
                    "inner_moves FROM tiers ORDER BY tier"
                )
            ).all()
            commits = conn.execute(text("SELECT seq, nodes, edges FROM commits ORDER BY seq")).all()
            expanded = conn.execute(text("SELECT id, expanded_in FROM nodes ORDER BY id")).all()
        return (
            rows + [tuple(r) for r in expanded],
            [tuple(t) for t in tiers],
            [tuple(c) for c in commits],
        )
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any], list[Any]]:
    """The one-process solve's rows."""
    url = sqlite_url(tmp_path_factory.mktemp("reference"), "reference.db")
    done = _run(url)
    assert done.returncode == 0, done.stderr
    return _snapshot(url)


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
        _wait_for(f"{len(self.workers)} workers", lambda: self.count() >= len(self.workers))

    def count(self) -> int:
        from distributed import Client

        with Client(scheduler_file=str(self.file), timeout="30s") as client:  # type: ignore[no-untyped-call]
            return len(client.scheduler_info(n_workers=-1)["workers"])

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


@contextmanager
def dask_cluster(where: Path, workers: int) -> Iterator[Cluster]:
    cluster = Cluster(where)
    try:
        cluster.add_workers(workers)
        yield cluster
    finally:
        cluster.close()


def _shards_written(url: str) -> int:
    engine: Engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM tier_shards")).scalar_one())
    finally:
        engine.dispose()


@pytest.mark.slow
def test_a_cluster_solve_equals_the_one_process_solve(
    db: str, tmp_path: Path, reference: tuple[list[Any], list[Any], list[Any]]
) -> None:
    with dask_cluster(tmp_path, 2) as cluster:
        done = _run(db, "--scheduler", cluster.address)
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
    tmp_path: Path, reference: tuple[list[Any], list[Any], list[Any]]
) -> None:
    url = sqlite_url(tmp_path, "killed-worker.db")
    with dask_cluster(tmp_path, 2) as cluster:
        solving = subprocess.Popen(
            _solve_args(url, "--scheduler", cluster.address),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_for("the first shards", lambda: _shards_written(url) >= 2)
            # The client frozen while a second solve tries: its run cannot have ended
            # meanwhile, however fast the units are (once it had, and the second ran).
            # Frozen between its commits: frozen inside one, it would hold SQLite's
            # write lock past every other writer's busy timeout, workers included.
            _freeze_between_commits(solving, url)
            second = _run(url)
            assert second.returncode == 1, second.stderr
            assert second.stderr.startswith("error: "), second.stderr
            assert "is being solved by run" in second.stderr or "locked" in second.stderr
            assert len(second.stderr.strip().splitlines()) == 1
            cluster.kill(cluster.workers[0])
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
        _wait_for(
            "the first shards", lambda: _shards_written(db) >= 3 or solving.poll() is not None
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
