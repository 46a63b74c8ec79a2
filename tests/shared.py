"""Expensive reference results built once per test session, shared by the xdist workers.

The suite runs in several processes (pytest-xdist); a module-scoped fixture there is built
once per process that runs one of its tests. :func:`shared` builds a result once for the
whole session: the first process to ask builds it under a file lock and pickles it into
the session's temporary directory; the others wait for the lock and read it."""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of this test session's, the same in every xdist worker (the workers'
    base temporary directories are in the session's; without xdist, the session's own)."""
    base = tmp_path_factory.getbasetemp()
    where = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"
    where.mkdir(exist_ok=True)
    return where


def shared(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """``build(directory)``'s result, built once a session (see the module docs). *build*
    may leave files in *directory* (its own, kept for the session) for the callers to copy;
    *name* tells the results apart."""
    where = session_dir(tmp_path_factory)
    result = where / f"{name}.pickle"
    with open(where / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not result.exists():
            directory = where / name
            directory.mkdir()
            built = build(directory)
            partial = where / f"{name}.pickle.part"
            partial.write_bytes(pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL))
            partial.rename(result)
            return built
    loaded: T = pickle.loads(result.read_bytes())
    return loaded
