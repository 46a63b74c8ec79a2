"""The game registry: the built-in games, games from installed plugins, and games named by
a reference to their class.

* Built-in games are one explicit table (:data:`BUILTIN_GAMES`); a game's module is
  imported when that game is first asked for (chess needs python-chess, which a command
  about tic-tac-toe need not load).
* Installed packages add games through the entry-point group ``negagraph.games``
  (:data:`ENTRY_POINT_GROUP`): ``nim = "nim_game:Nim"`` registers class ``Nim`` of module
  ``nim_game``; the entry point's name must be the game's :attr:`~GameBase.name`.
* A *reference* ``module:Class`` or ``path/to/file.py:Class`` is accepted wherever a game
  name is (:func:`find_game`); the references in ``$NEGAGRAPH_GAMES`` (separated by
  commas) are loaded with the plugins, so servers see them too.

A plugin or reference that cannot be loaded (an import error, a class that breaks the
contract, a name already taken) is left out with one line in :func:`plugin_errors`; the
built-in games always work.

>>> from solver.games import get_game
>>> get_game("connect-four", width=5, height=4).params
{'width': 5, 'height': 4, 'symmetry': False}
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from solver.errors import ContractError, UnknownGameError
from solver.game import CONTRACT_VERSION, Game, GameBase, GameFacts, Param

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "negagraph.games"
"""The entry-point group installed packages register their games in."""

GAMES_ENV = "NEGAGRAPH_GAMES"
"""Environment variable: game references (``module:Class`` or ``file.py:Class``, separated
by commas) to load with the plugins."""

GAME_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*\Z")
"""What a game's name may look like (it is a URL path segment and a CLI word)."""

BUILTIN_REFERENCES: dict[str, str] = {
    "number-game": "solver.games.number_game:NumberGame",
    "tic-tac-toe": "solver.games.tic_tac_toe:TicTacToe",
    "connect-four": "solver.games.connect_four:ConnectFour",
    "grundy": "solver.games.grundy:Grundy",
    "nap": "solver.games.nap:Nap",
    "chess": "solver.games.chess_endgame:ChessGame",
    "e-valuate": "solver.games.e_valuate:EValuate",
    "domino-tiling": "solver.games.domino_tiling:DominoTiling",
    "graph-share": "solver.games.graph_share:GraphShare",
    "pig": "solver.games.pig:Pig",
    "coin-nim": "solver.games.coin_nim:CoinNim",
    "dice-race": "solver.games.dice_race:DiceRace",
}
"""Every built-in game's name and its class as ``module:Class``."""


class Builtins(Mapping[str, type[GameBase]]):
    """The built-in game classes by name (:data:`BUILTIN_REFERENCES`), each module
    imported when its game is first looked up; the names are known without importing."""

    def __getitem__(self, name: str) -> type[GameBase]:
        module, _, attr = BUILTIN_REFERENCES[name].partition(":")
        cls: type[GameBase] = vars(importlib.import_module(module))[attr]
        assert cls.name == name, f"{BUILTIN_REFERENCES[name]} is named {cls.name!r}"
        return cls

    def __contains__(self, name: object) -> bool:
        return name in BUILTIN_REFERENCES

    def __iter__(self) -> Iterator[str]:
        return iter(BUILTIN_REFERENCES)

    def __len__(self) -> int:
        return len(BUILTIN_REFERENCES)


BUILTIN_GAMES = Builtins()
"""Every built-in game class by name (its module imported on first use)."""


@dataclass(frozen=True)
class GameSource:
    """Where a registered game comes from."""

    kind: str
    """``"builtin"``, ``"plugin"`` (an entry point) or ``"reference"``."""
    origin: str
    """The built-in module, the distribution (``name version``) or the reference."""
    version: str | None = None
    """The plugin distribution's version, if any."""

    def text(self) -> str:
        return self.kind if self.kind == "builtin" else f"{self.kind} {self.origin}"


def check_game_class(obj: object) -> type[GameBase]:
    """*obj* if it is a game class that keeps the contract's static part.

    :raises ContractError: naming what is wrong (not a class, not a :class:`GameBase`,
        methods left abstract, a malformed name, version, parameters or declared fact,
        or a newer contract version).
    """
    if not (isinstance(obj, type) and issubclass(obj, GameBase)):
        raise ContractError(f"{obj!r} is not a subclass of solver.game.GameBase")
    cls = obj
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise ContractError(f"class {cls.__name__} does not implement {missing}")
    name = _checked_identity(cls)
    try:
        GameFacts(
            finite=cls.finite,
            acyclic=cls.acyclic,
            leak_order=cls.leak_order,
            value_range=cls.value_range,
            repetition_value=cls.repetition_value,
            uses_symmetry=cls.uses_symmetry,
            chance=cls.chance,
            tiers=cls.tiers,
        )
    except ContractError as e:
        raise ContractError(f"game {name!r}: {e}") from None
    if cls.tiers:
        _check_tier_hooks(cls, name)
    if cls.chance:
        _check_chance_hooks(cls, name)
    return cls


def _checked_identity(cls: type[GameBase]) -> str:
    """The name of the game class *cls*, once its name, version, contract version,
    parameters, description and notation are well formed.

    :raises ContractError: naming what is wrong."""
    name = _checked_name(cls)
    if not isinstance(cls.version, int) or isinstance(cls.version, bool) or cls.version < 1:
        raise ContractError(f"game {name!r}: version must be a positive integer")
    if not isinstance(cls.contract, int) or cls.contract > CONTRACT_VERSION:
        raise ContractError(
            f"game {name!r} is written for Game contract {cls.contract!r}; "
            f"this negagraph implements contract {CONTRACT_VERSION}"
        )
    if not isinstance(cls.parameters, tuple) or not all(
        isinstance(p, Param) for p in cls.parameters
    ):
        raise ContractError(f"game {name!r}: parameters must be a tuple of Param")
    for attr, text in (("description", cls.description), ("notation", cls.notation)):
        if not isinstance(text, str):
            raise ContractError(f"game {name!r}: {attr} must be text")
    return name


def _checked_name(cls: type[GameBase]) -> str:
    """The registry name the game class *cls* declares (itself or a base class).

    :raises ContractError: if it is not lowercase letters, digits, '-' and '_'."""
    name: object = cls.__dict__.get("name") or next(
        (c.__dict__["name"] for c in cls.__mro__ if "name" in c.__dict__), None
    )
    if not isinstance(name, str) or not GAME_NAME.match(name):
        raise ContractError(
            f"class {cls.__name__} needs a name of lowercase letters, digits, '-' and '_' "
            f"(not {name!r})"
        )
    return name


def _check_tier_hooks(cls: type[GameBase], name: str) -> None:
    """A game class declaring tiers implements ``tier`` and ``child_tiers`` and is
    written for contract 2 or later."""
    hooks = [h for h in ("tier", "child_tiers") if getattr(cls, h) is getattr(GameBase, h)]
    if hooks:
        raise ContractError(
            f"game {name!r} declares tiers but does not implement {', '.join(hooks)}"
        )
    if cls.contract < 2:
        raise ContractError(
            f"game {name!r} declares tiers, which Game contract 2 added; "
            f"it says it is written for contract {cls.contract}"
        )


def _check_chance_hooks(cls: type[GameBase], name: str) -> None:
    """A game class declaring chance nodes implements ``probabilities`` and is written
    for contract 3 or later."""
    if cls.contract < 3:
        raise ContractError(
            f"game {name!r} declares chance nodes, which Game contract 3 added; "
            f"it says it is written for contract {cls.contract}"
        )
    if cls.probabilities is GameBase.probabilities:
        raise ContractError(
            f"game {name!r} declares chance nodes but does not implement probabilities"
        )


def load_reference(ref: str) -> type[GameBase]:
    """The game class a reference ``module:Class`` or ``path/to/file.py:Class`` names.

    :raises UnknownGameError: if the module, file or class cannot be found or imported,
        or the class breaks the contract.
    """
    where, _, attr = ref.rpartition(":")
    if not where or not attr:
        raise UnknownGameError(f"game reference {ref!r}: expected module:Class or file.py:Class")
    try:
        if where.endswith(".py") or "/" in where or os.sep in where:
            path = Path(where).resolve()
            if not path.is_file():
                raise UnknownGameError(f"game reference {ref!r}: no file {where}")
            digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
            module_name = f"_negagraph_game_{path.stem}_{digest}"
            module = sys.modules.get(module_name)
            if module is None:
                spec = importlib.util.spec_from_file_location(module_name, path)
                if spec is None or spec.loader is None:
                    raise UnknownGameError(f"game reference {ref!r}: cannot load {where}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[module_name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[module_name]
                    raise
        else:
            module = importlib.import_module(where)
        if not hasattr(module, attr):
            raise UnknownGameError(f"game reference {ref!r}: {where} has no {attr}")
        return check_game_class(getattr(module, attr))
    except UnknownGameError:
        raise
    except Exception as e:  # an import error, a syntax error, a contract error...
        raise UnknownGameError(f"game reference {ref!r}: {_one_line(e)}") from None


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


class Registry(Mapping[str, type[GameBase]]):
    """Every registered game class by name: the built-ins, then (loaded on first use)
    the installed plugins and the references in ``$NEGAGRAPH_GAMES``."""

    def __init__(self) -> None:
        self._games: dict[str, type[GameBase]] = {}
        """The games of plugins and references (the built-ins are :data:`BUILTIN_GAMES`)."""
        self._sources: dict[str, GameSource] = {
            name: GameSource("builtin", ref.partition(":")[0])
            for name, ref in BUILTIN_REFERENCES.items()
        }
        self._errors: dict[str, str] = {}
        """One line per plugin or reference that was left out, by its name."""
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            entry_points = sorted(
                metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.value)
            )
        except Exception as e:  # a broken installed distribution's metadata
            self._errors["(entry points)"] = f"cannot list plugins: {_one_line(e)}"
            entry_points = []
        for ep in entry_points:
            dist = ep.dist
            version = None if dist is None else dist.version
            package = "?" if dist is None else f"{dist.name} {version}"
            label = f"plugin {ep.name!r} ({ep.value} from {package})"
            try:
                cls = check_game_class(ep.load())
            except Exception as e:
                self._fail(ep.name, f"{label}: {_one_line(e)}")
                continue
            if cls.name != ep.name:
                self._fail(
                    ep.name, f"{label}: the entry point's name must be the game's name {cls.name!r}"
                )
                continue
            self._add(cls, GameSource("plugin", package, version), label)
        for ref in filter(None, (r.strip() for r in os.environ.get(GAMES_ENV, "").split(","))):
            try:
                self.add_reference(ref)
            except UnknownGameError as e:
                self._fail(ref, f"{GAMES_ENV}: {e}")

    def _fail(self, key: str, message: str) -> None:
        log.debug("%s", message)  # the CLI and the API report plugin_errors()
        self._errors[key] = message

    def _add(self, cls: type[GameBase], source: GameSource, label: str) -> bool:
        taken = BUILTIN_GAMES[cls.name] if cls.name in BUILTIN_GAMES else self._games.get(cls.name)
        if taken is not None and taken is not cls:
            self._fail(
                cls.name,
                f"{label}: the name {cls.name!r} is already taken by "
                f"{self._sources[cls.name].text()} ({taken.__module__}."
                f"{taken.__qualname__})",
            )
            return False
        self._games[cls.name] = cls
        self._sources[cls.name] = source
        return True

    def add_reference(self, ref: str) -> type[GameBase]:
        """Load and register the game a reference names (see :func:`load_reference`).

        :raises UnknownGameError: if it cannot be loaded or its name is taken.
        """
        self._load()
        cls = load_reference(ref)
        if not self._add(cls, GameSource("reference", ref), f"game reference {ref!r}"):
            raise UnknownGameError(self._errors[cls.name])
        return cls

    @contextmanager
    def restored(self) -> Iterator[None]:
        """On leaving, the registry as it was on entering: the games registered inside
        (by reference) and the errors met are forgotten. The test suite runs each test so,
        whatever ran before it in the same process."""
        self._load()
        games, sources, errors = dict(self._games), dict(self._sources), dict(self._errors)
        try:
            yield
        finally:
            self._games, self._sources, self._errors = games, sources, errors

    def errors(self) -> list[str]:
        """One line per plugin or reference that was left out."""
        self._load()
        return list(self._errors.values())

    def error_for(self, name: str) -> str | None:
        """Why the plugin or reference *name* was left out, if it was."""
        self._load()
        return self._errors.get(name)

    def source(self, name: str) -> GameSource:
        """Where game *name* comes from (``KeyError`` if it is not registered)."""
        self._load()
        return self._sources[name]

    def find(self, name: str) -> type[GameBase]:
        """The game registered as *name*, or named by the reference *name*."""
        if name in BUILTIN_GAMES:  # no need to scan the installed packages (~50 ms)
            return BUILTIN_GAMES[name]
        self._load()
        if ":" in name:
            return self.add_reference(name)
        if name in self._games:
            return self._games[name]
        if name in self._errors:
            raise UnknownGameError(f"game {name!r} is not available: {self._errors[name]}")
        raise UnknownGameError(f"unknown game {name!r} (known games: {', '.join(sorted(self))})")

    def __getitem__(self, name: str) -> type[GameBase]:
        if name in BUILTIN_GAMES:
            return BUILTIN_GAMES[name]
        self._load()
        return self._games[name]

    def __contains__(self, name: object) -> bool:
        """Whether *name* is registered (without importing a built-in game's module)."""
        if name in BUILTIN_GAMES:
            return True
        self._load()
        return name in self._games

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter([*BUILTIN_GAMES, *self._games])

    def __len__(self) -> int:
        self._load()
        return len(BUILTIN_GAMES) + len(self._games)


GAMES = Registry()
"""Every registered game class by name (built-ins first, then plugins and references)."""


def find_game(name: str) -> type[GameBase]:
    """The game class registered as *name*, or named by the reference *name*
    (``module:Class`` or ``path/to/file.py:Class``; registered under its own name).

    :raises UnknownGameError: if no game has that name, or the reference or the plugin
        of that name cannot be loaded.
    """
    return GAMES.find(name)


def get_game(name: str, **params: object) -> GameBase:
    """A configured game: *name* (or a reference) with *params* (text values converted).

    :raises UnknownGameError: if no game has that name.
    :raises InvalidParameterError: for unknown, malformed or out-of-range parameters.
    """
    return find_game(name)(**params)


def source_of(game: GameBase | Game) -> str | None:
    """Where *game*'s class comes from (:meth:`GameSource.text`), or ``None`` if it is not
    the class registered under its name (a game solved from Python)."""
    if BUILTIN_GAMES.get(game.name) is type(game):
        return "builtin"  # without scanning the installed packages
    cls = GAMES.get(game.name)
    return GAMES.source(game.name).text() if cls is type(game) else None


def plugin_errors() -> list[str]:
    """One line per plugin or reference that could not be registered."""
    return GAMES.errors()


__all__ = [
    "BUILTIN_GAMES",
    "BUILTIN_REFERENCES",
    "Builtins",
    "ENTRY_POINT_GROUP",
    "GAMES",
    "GAMES_ENV",
    "GameSource",
    "Registry",
    "check_game_class",
    "find_game",
    "get_game",
    "load_reference",
    "plugin_errors",
    "source_of",
]
