"""Build a test artefact once per test session, shared by the xdist worker processes."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """The directory *name*, filled by ``build(directory)`` in the first process of this
    session to ask for it; the others wait on a file lock and get the same directory
    (under xdist, the workers' base temporary directories share a parent that belongs to
    this session alone). Whoever uses it only reads it."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    directory = root / f"built-once-{name}"
    done = directory.with_name(directory.name + ".done")
    with open(root / f"built-once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            directory.mkdir()
            build(directory)
            done.touch()
    return directory
