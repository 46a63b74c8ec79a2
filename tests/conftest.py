"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from solver.games import GAMES


@pytest.fixture(autouse=True)
def _games_registered_in_a_test_leave_with_it() -> Iterator[None]:
    """A test that loads a game by reference (``path/file.py:Class``) registers it in
    :data:`solver.games.GAMES`; it is forgotten after the test, so that no test sees
    another's games (the suite runs its tests in several processes, in any order)."""
    with GAMES.restored():
        yield
