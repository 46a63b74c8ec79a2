"""The examples in the docstrings run: every module of solver/, db/ and api/ whose source
holds a ``>>>`` example is run through :mod:`doctest`, and each must pass."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("solver", "db", "api")


def modules_with_examples() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(ROOT).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = modules_with_examples()


def test_the_examples_are_found() -> None:
    # The codec, the game registry, the solver's entry point and the strategies at least.
    assert {"solver.values", "solver.games", "solver.negamax", "solver.strategy"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_pass(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name} has '>>>' but doctest found no example"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
