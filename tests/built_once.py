"""Build a test artefact once per test session, shared by the xdist worker processes.

The suite runs in several processes (pytest-xdist): a module- or session-scoped fixture
there is built once in every process that runs one of its tests. What is built here is
built once for the whole session, by the first process to ask, under a file lock in a
folder of the session's that every worker sees; the others wait and use it: a folder of
files (:func:`built_once`), or a picklable result (:func:`shared`)."""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def session_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test session's, the same in every xdist worker (the workers'
    base temporary folders are in the session's; without xdist, the session's own: the
    folder above it is kept across sessions and would serve stale artefacts)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def locked(lock: Path) -> Iterator[None]:
    """Hold the exclusive lock of file *lock* (made if missing) for the block."""
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """The folder *name*, filled by ``build(folder)`` in the first process of this
    session to ask for it; the others wait on its lock and get the same folder. Whoever
    uses it only reads it."""
    root = session_folder(tmp_path_factory)
    folder = root / f"built-once-{name}"
    done = folder.with_name(folder.name + ".done")
    with locked(root / f"built-once-{name}.lock"):
        if not done.exists():
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


def shared(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """``build(folder)``'s result, built once a session and pickled for the other
    processes; *build* may leave files in *folder* (its own, kept for the session) for
    the callers to copy; *name* tells the results apart."""
    root = session_folder(tmp_path_factory)
    result = root / f"shared-{name}.pickle"
    with locked(root / f"shared-{name}.lock"):
        if not result.exists():
            folder = root / f"shared-{name}"
            folder.mkdir()
            built = build(folder)
            partial = result.with_name(result.name + ".part")
            partial.write_bytes(pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL))
            partial.rename(result)
            return built
    loaded: T = pickle.loads(result.read_bytes())
    return loaded
