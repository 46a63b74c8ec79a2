"""The :class:`Game` protocol: what the solver needs to know about a game.

Positions are plain integer *keys* (GamesmanPy style): immutable, hashable, cheap to store,
and reversible — every game can turn a key back into its position. The text notation
(:meth:`Game.parse` / :meth:`Game.format`) is for people and the API; keys are for the
solver and the database.

Values are integers from the point of view of the player to move (negamax convention).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeAlias, runtime_checkable

from solver.errors import InvalidParameterError

PositionKey: TypeAlias = int
"""A reversible integer encoding of a position (canonical when symmetry is on)."""

MoveLabel: TypeAlias = str
"""A move in the game's own notation, e.g. ``"4"`` for a connect-four column."""

ParamValue: TypeAlias = int | str | bool


@dataclass(frozen=True)
class Param:
    """One parameter of a game, with its type, default and allowed range."""

    name: str
    """The parameter's name as given on the command line (``-p name=value``)."""
    type: type[int] | type[str] | type[bool]
    """``int``, ``str`` or ``bool``; text values are converted to this type."""
    default: ParamValue
    """The value used when the parameter is not given."""
    help: str
    """One line for ``negagraph games`` and ``/api/games``."""
    min: int | None = None
    """Smallest allowed value of an ``int`` parameter."""
    max: int | None = None
    """Largest allowed value of an ``int`` parameter."""
    choices: tuple[str, ...] | None = None
    """Allowed values of a ``str`` parameter, when the set is closed."""

    def convert(self, raw: object) -> ParamValue:
        """Convert and validate *raw* (a value or its text).

        :raises InvalidParameterError: if *raw* has the wrong type or is out of range.
        """
        value: ParamValue
        if self.type is bool:
            if isinstance(raw, bool):
                value = raw
            elif isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
                value = raw.strip().lower() in _TRUE
            elif isinstance(raw, int) and raw in (0, 1):
                value = bool(raw)
            else:
                raise InvalidParameterError(
                    f"parameter {self.name!r} must be true or false, not {raw!r}"
                )
        elif self.type is int:
            if isinstance(raw, bool):
                raise InvalidParameterError(
                    f"parameter {self.name!r} must be an integer, not {raw!r}"
                )
            if isinstance(raw, int):
                value = raw
            else:
                try:
                    value = int(str(raw).strip())
                except ValueError:
                    raise InvalidParameterError(
                        f"parameter {self.name!r} must be an integer, not {raw!r}"
                    ) from None
            if self.min is not None and value < self.min:
                raise InvalidParameterError(
                    f"parameter {self.name!r} must be at least {self.min}, not {value}"
                )
            if self.max is not None and value > self.max:
                raise InvalidParameterError(
                    f"parameter {self.name!r} must be at most {self.max}, not {value}"
                )
        else:
            if not isinstance(raw, str):
                raise InvalidParameterError(
                    f"parameter {self.name!r} must be text, not {raw!r}"
                )
            value = raw.strip()
            if self.choices is not None and value not in self.choices:
                raise InvalidParameterError(
                    f"parameter {self.name!r} must be one of {', '.join(self.choices)}, "
                    f"not {raw!r}"
                )
        return value

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for ``negagraph games --json`` and the API."""
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type.__name__,
            "default": self.default,
            "help": self.help,
        }
        if self.min is not None:
            out["min"] = self.min
        if self.max is not None:
            out["max"] = self.max
        if self.choices is not None:
            out["choices"] = list(self.choices)
        return out


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@runtime_checkable
class Game(Protocol):
    """What the solver needs from a configured game (one variant: game + parameters)."""

    name: ClassVar[str]
    """The registry name, e.g. ``"connect-four"``."""
    version: ClassVar[int]
    """The rules version; bump it whenever keys, moves or values change meaning."""
    description: ClassVar[str]
    notation: ClassVar[str]
    """Help text for the position notation accepted by :meth:`parse`."""
    parameters: ClassVar[tuple[Param, ...]]

    @property
    def params(self) -> Mapping[str, ParamValue]:
        """Every parameter's value, defaults included (the variant's identity)."""
        ...

    repetition_value: int | None
    """The value of endless play for both sides (e.g. 0: a draw), or ``None`` if the rules
    give none (acyclic games, or games where the solver's bounds are the answer)."""
    uses_symmetry: bool
    """Whether :meth:`canonical` can change a key; if false the solver never calls it."""
    priority: Callable[[PositionKey], float] | None
    """Expansion priority (smaller first), or ``None`` for breadth-first order."""

    def initial(self) -> PositionKey:
        """The default root position."""
        ...

    def children(self, key: PositionKey) -> Sequence[tuple[MoveLabel, PositionKey]]:
        """The moves from *key* in the game's move order, each with the resulting key.

        Empty exactly when the position is terminal. Child keys are *not* canonicalised;
        the solver applies :meth:`canonical` when :attr:`uses_symmetry` is set.
        """
        ...

    def terminal_value(self, key: PositionKey) -> int | None:
        """The exact value for the player to move if *key* is terminal, else ``None``."""
        ...

    def canonical(self, key: PositionKey) -> PositionKey:
        """The representative of *key*'s symmetry class (idempotent)."""
        ...

    def parse(self, text: str) -> PositionKey:
        """Read a position in the game's notation.

        :raises InvalidPositionError: for malformed text or an impossible position.
        """
        ...

    def format(self, key: PositionKey) -> str:
        """Write a position in the game's notation; ``parse(format(k)) == k``."""
        ...


class GameBase(ABC):
    """Shared plumbing for the built-in games: parameter handling, defaults, ``repr``.

    Subclasses set the class attributes, implement the position methods and, if they
    need derived state, override :meth:`_configure`.
    """

    name: ClassVar[str]
    version: ClassVar[int] = 1
    description: ClassVar[str] = ""
    notation: ClassVar[str] = ""
    parameters: ClassVar[tuple[Param, ...]] = ()

    finite: ClassVar[bool] = True
    """False for games with infinitely many positions (a full solve needs a budget)."""
    acyclic: ClassVar[bool] = False
    """True if no line of play ever repeats a position (e.g. every move adds a stone).
    The partial solver then uses a recursive null-window search that keeps bounds along
    its path only and restores the fixpoint once per pass; a game that says so and
    repeats a position gets a :class:`~solver.errors.SolveError`."""

    repetition_value: int | None = None
    value_range: tuple[int, int] | None = None
    """The smallest and largest value any position can have, if known (e.g. ``(-1, 1)``);
    a bound at the edge of the range is final at once, which shortens partial solves."""
    uses_symmetry: bool = False
    priority: Callable[[PositionKey], float] | None = None

    def __init__(self, **params: object) -> None:
        self.params: dict[str, ParamValue] = self.variant_params(params)
        self._configure()

    @classmethod
    def variant_params(cls, params: Mapping[str, object]) -> dict[str, ParamValue]:
        """The parameters ``cls(**params).params`` holds (converted, defaults added and
        normalised: the variant's identity), found without the game's set-up: cheap
        enough to check that a variant is stored before building its game.

        :raises InvalidParameterError: for unknown, malformed or out-of-range parameters,
            or a combination the game refuses.
        """
        known = {p.name: p for p in cls.parameters}
        unknown = sorted(set(params) - set(known))
        if unknown:
            allowed = ", ".join(known) if known else "none"
            raise InvalidParameterError(
                f"unknown parameter{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))} for game {cls.name!r} "
                f"(parameters: {allowed})"
            )
        values: dict[str, ParamValue] = {}
        for p in cls.parameters:
            values[p.name] = p.convert(params[p.name]) if p.name in params else p.default
        cls._normalize_params(values)
        return values

    @classmethod  # noqa: B027 - an optional hook, not abstract
    def _normalize_params(cls, values: dict[str, ParamValue]) -> None:
        """Rewrite converted parameter *values* in place to their normal form (e.g. an
        expression's shortest text) and refuse bad combinations; cheap, no set-up.
        Games whose parameters have several spellings override it.

        :raises InvalidParameterError: for a value or combination the game refuses.
        """

    def _configure(self) -> None:  # noqa: B027 - an optional hook, not abstract
        """Validate parameter combinations and precompute tables (override as needed).
        :attr:`params` already holds :meth:`variant_params`' normal form."""

    @abstractmethod
    def initial(self) -> PositionKey:
        """The default root position."""

    @abstractmethod
    def children(self, key: PositionKey) -> Sequence[tuple[MoveLabel, PositionKey]]:
        """The moves from *key* with the resulting keys (empty exactly when terminal)."""

    @abstractmethod
    def terminal_value(self, key: PositionKey) -> int | None:
        """The exact value for the player to move if *key* is terminal, else ``None``."""

    @abstractmethod
    def parse(self, text: str) -> PositionKey:
        """Read a position in the game's notation (raises ``InvalidPositionError``)."""

    @abstractmethod
    def format(self, key: PositionKey) -> str:
        """Write a position in the game's notation."""

    def format_many(self, keys: Sequence[PositionKey]) -> list[str]:
        """:meth:`format` of each of *keys* (games may do it faster all at once; stores
        writing millions of positions call this)."""
        return list(map(self.format, keys))

    def canonical(self, key: PositionKey) -> PositionKey:
        return key

    @classmethod
    def params_for(cls, text: str) -> dict[str, ParamValue]:
        """Parameters a position's text implies (chess: the FEN's material), used by
        lookups that were not given them explicitly; empty if none (or unparsable)."""
        return {}

    def tablebase_positions(self) -> Iterable[PositionKey] | None:
        """Every position a tablebase (``solve --full``) of this variant starts from, in a
        fixed order, or ``None`` to start from the root alone. Chess endgames, say, list
        every legal position of their material balance."""
        return None

    def player_to_move(self, key: PositionKey) -> int | None:
        """0 if the first player (MAX) is to move at *key*, 1 for the second (MIN), or
        ``None`` if the game does not say. Values stay from the mover's point of view; this
        only lets the CLI and the API also report them from MAX's side."""
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"get_game({self.name!r}{', ' if args else ''}{args})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GameBase)
            and other.name == self.name
            and other.version == self.version
            and other.params == self.params
        )

    def __hash__(self) -> int:
        return hash((self.name, self.version, tuple(sorted(self.params.items()))))

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """A JSON-ready description of the game and its parameters."""
        return {
            "name": cls.name,
            "version": cls.version,
            "description": cls.description,
            "notation": cls.notation,
            "parameters": [p.describe() for p in cls.parameters],
        }


def params_text(params: Mapping[str, ParamValue]) -> str:
    """Canonical text of a parameter mapping: ``"height=4,width=5"`` (sorted by name)."""
    return ",".join(f"{k}={_param_str(v)}" for k, v in sorted(params.items()))


def _param_str(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


__all__ = [
    "Game",
    "GameBase",
    "MoveLabel",
    "Param",
    "ParamValue",
    "PositionKey",
    "params_text",
]
