"""The claims docs/design.md makes about the code's structure ("The map"), checked from the
source: which package may import which, no import circles, small modules, and games read
through their declared members only.

Imports are read from the syntax trees, wherever they are (a function's own import
counts); those under ``if TYPE_CHECKING:`` are for the type checkers alone and do not.
Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` first, so each counts
as imported too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from solver.game import GameBase

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solver", "db", "api")
MAX_LINES = 700


@cache
def modules() -> dict[str, Path]:
    """Every module of the product packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(n) for n in ast.walk(node))
    return hidden


def _imported_names(name: str, path: Path) -> Iterator[str]:
    """The dotted names module *name* imports at run time (``from a import b`` gives
    ``a.b`` and ``a``)."""
    tree = ast.parse(path.read_text())
    hidden = _type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


@cache
def imports() -> dict[str, frozenset[str]]:
    """Each module's imports at run time: every name and each of its parent packages."""
    graph: dict[str, frozenset[str]] = {}
    for name, path in modules().items():
        found: set[str] = set()
        for dotted in _imported_names(name, path):
            parts = dotted.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        graph[name] = frozenset(found)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("solver", ("db", "api", "sqlalchemy", "alembic", "flask")),
        ("db", ("api", "flask")),
    ],
)
def test_dependencies_point_one_way(package: str, forbidden: tuple[str, ...]) -> None:
    wrong = sorted(
        f"{name} imports {dotted}"
        for name, names in imports().items()
        if name == package or name.startswith(package + ".")
        for dotted in names
        if dotted in forbidden
    )
    assert wrong == []


def test_no_import_circles() -> None:
    mods = modules()
    graph = {
        name: {
            other
            for other in names
            if other in mods and other != name and not name.startswith(other + ".")
        }
        for name, names in imports().items()
    }
    assert _circles(graph) == []


def test_the_checker_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_modules_are_small() -> None:
    large = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert large == {}


GAME_MEMBERS = frozenset(name for name in dir(GameBase) if not name.startswith("__"))


def _probes(tree: ast.Module) -> Iterator[str]:
    """``getattr``/``hasattr`` calls that probe a game: on a name ``game`` or an attribute
    ``….game``, or for a member of the game contract by name (``"draw_svg"``)."""
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
        ):
            continue
        target, member = node.args[0], node.args[1]
        on_game = (isinstance(target, ast.Name) and target.id == "game") or (
            isinstance(target, ast.Attribute) and target.attr == "game"
        )
        by_name = isinstance(member, ast.Constant) and member.value in GAME_MEMBERS
        if on_game or by_name:
            yield f"line {node.lineno}: {ast.unparse(node)}"


def test_games_are_read_through_their_declared_members() -> None:
    probes = {
        name: found
        for name, path in modules().items()
        if (found := list(_probes(ast.parse(path.read_text()))))
    }
    assert probes == {}


def test_the_probe_finder_finds_a_probe() -> None:
    tree = ast.parse(
        "getattr(game, 'x', None)\nhasattr(self.game, 'y')\ngetattr(g, 'draw_svg', None)\n"
        "getattr(graph, name)\n"
    )
    assert len(list(_probes(tree))) == 3
