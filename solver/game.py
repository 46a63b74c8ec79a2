"""The :class:`Game` protocol: what the solver needs to know about a game.

Positions are plain integer *keys* (GamesmanPy style): immutable, hashable, cheap to store,
and reversible — every game can turn a key back into its position. The text notation
(:meth:`Game.parse` / :meth:`Game.format`) is for people and the API; keys are for the
solver and the database.

Values are integers from the point of view of the player to move (negamax convention).
The contract has two parts (OpenSpiel's ``GameType``/``GameInfo`` split, in one record):
the *hooks* a game implements (:class:`Game`: ``initial``, ``children``, ... each optional
one with its default on :class:`GameBase`), and the *facts* it declares about itself
(:class:`GameFacts`, frozen: value range, finiteness, acyclicity, repetition value,
symmetry, leak order). The solver reads facts only through :attr:`Game.facts`. The contract
is versioned (:data:`CONTRACT_VERSION`); a game written for a newer contract is refused at
registration rather than misread.
"""

from __future__ import annotations

import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, TypeGuard, runtime_checkable

from solver.errors import ContractError, InvalidParameterError

if typing.TYPE_CHECKING:  # numpy in annotations only: `negagraph` starts without it
    import numpy as np
    import numpy.typing as npt

CONTRACT_VERSION = 4
"""The version of the Game contract this negagraph implements. A game declares the one it
was written for (:attr:`GameBase.contract`); games written for a later one are refused.
Version 2 added tiers (:attr:`GameFacts.tiers` and the hooks :meth:`GameBase.tier`,
:meth:`GameBase.child_tiers`, :meth:`GameBase.tier_positions`) and batched rules
(:meth:`GameBase.children_batch`, :meth:`GameBase.terminal_values_batch`,
:meth:`GameBase.canonical_batch`, :meth:`GameBase.tiers_batch`); version 3 chance nodes
(:attr:`GameFacts.chance` and the hook :meth:`GameBase.probabilities`); version 4 the
optional evaluation (:mod:`solver.evaluation`). Games written for an earlier version are
unchanged by a later one."""

Tier: TypeAlias = int
"""A tier's number (see :attr:`GameFacts.tiers`), e.g. connect-four's stones on the board."""

PositionKey: TypeAlias = int
"""A reversible integer encoding of a position (canonical when symmetry is on)."""

MoveLabel: TypeAlias = str
"""A move in the game's own notation, e.g. ``"4"`` for a connect-four column."""

ParamValue: TypeAlias = int | str | bool


@dataclass(frozen=True)
class BatchMoves:
    """The moves of many positions at once (:meth:`GameBase.children_batch`): for
    parent ``i``, ``counts[i]`` moves, whose child keys and move labels follow those of
    parents ``0..i-1`` in ``keys`` and ``labels``, in the game's move order; a move's
    label is ``label_names[labels[j]]``."""

    counts: npt.NDArray[np.int64]
    keys: npt.NDArray[np.int64]
    labels: npt.NDArray[np.int64]
    label_names: tuple[MoveLabel, ...]


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
        if self.type is bool:
            return self._convert_bool(raw)
        if self.type is int:
            return self._convert_int(raw)
        return self._convert_str(raw)

    def _convert_bool(self, raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
            return raw.strip().lower() in _TRUE
        if isinstance(raw, int) and raw in (0, 1):
            return bool(raw)
        raise InvalidParameterError(f"parameter {self.name!r} must be true or false, not {raw!r}")

    def _convert_int(self, raw: object) -> int:
        if isinstance(raw, bool):
            raise InvalidParameterError(f"parameter {self.name!r} must be an integer, not {raw!r}")
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
        return value

    def _convert_str(self, raw: object) -> str:
        if not isinstance(raw, str):
            raise InvalidParameterError(f"parameter {self.name!r} must be text, not {raw!r}")
        value = raw.strip()
        if self.choices is not None and value not in self.choices:
            raise InvalidParameterError(
                f"parameter {self.name!r} must be one of {', '.join(self.choices)}, not {raw!r}"
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


LeakOrder: TypeAlias = Literal["depth", "breadth"]
"""How a partial solve picks leaves to expand when the game has no ``priority``."""

LEAK_ORDERS: tuple[LeakOrder, ...] = ("depth", "breadth")


@dataclass(frozen=True)
class GameFacts:
    """What a configured game declares about itself; the solver trusts these, and
    ``negagraph check`` tests them on sampled positions.

    Every field has the safe default: a game that declares nothing is solved correctly,
    only perhaps more slowly.
    """

    finite: bool = True
    """False for games with infinitely many positions (a full solve needs a budget)."""
    acyclic: bool = False
    """True if no line of play ever repeats a position (e.g. every move adds a stone).
    The partial solver then uses a recursive null-window search that keeps bounds along
    its path only; a game that says so and repeats a position gets a
    :class:`~solver.errors.SolveError` (when the solver notices)."""
    value_range: tuple[int, int] | None = None
    """The smallest and largest value any position can have, if known (e.g. ``(-1, 1)``);
    a bound at the edge of the range is final at once, which shortens partial solves."""
    repetition_value: int | None = None
    """The value of endless play for both sides (e.g. 0: a draw), or ``None`` if the rules
    give none (acyclic games, or games where the solver's bounds are the answer)."""
    uses_symmetry: bool = False
    """Whether :meth:`Game.canonical` can change a key; if false the solver never calls
    it. When true, a position and its canonical image must have the same value."""
    leak_order: LeakOrder = "depth"
    """Without a ``priority``: ``"depth"`` (the leftmost leaves of a depth-first walk in
    move order) or ``"breadth"`` (the shallowest leaves first: short forced wins)."""
    players: tuple[str, str] = ("MAX", "MIN")
    """What people call the first player and the second (who is which at a position:
    :meth:`Game.player_to_move`), e.g. ``("White", "Black")``; for what the CLI prints."""
    chance: bool = False
    """True if some positions are *chance* nodes (contract 3): an outcome is drawn with
    the probabilities :meth:`GameBase.probabilities` gives, and every position says whose
    it is (:meth:`GameBase.player_to_move`), since players need not alternate. A chance
    game must declare a symmetric ``value_range`` (endless play starts at its ends); it
    is solved by :mod:`solver.chance` (``docs/design.md`` §10)."""
    tiers: bool = False
    """True if the game splits its positions into *tiers* (:meth:`GameBase.tier`): every
    move stays in its tier or leads to one of the tier's *child tiers*
    (:meth:`GameBase.child_tiers`), and the child-tier relation is acyclic, so tiers can
    be solved children first, each with only its own positions and its children's values
    at hand (GamesmanOne's tier solver). Moves within a tier may form cycles (chess: moves
    that capture nothing). Connect-four's tiers are the stones on the board, a chess
    endgame's its material."""

    def __post_init__(self) -> None:
        self._check_values()
        self._check_declarations()
        if self.chance:
            self._check_chance()

    def _check_values(self) -> None:
        """``value_range`` and ``repetition_value`` are integers (low <= high)."""
        if self.value_range is not None:
            lo, hi = (
                self.value_range
                if isinstance(self.value_range, tuple) and len(self.value_range) == 2
                else (None, None)
            )
            if not (_is_int(lo) and _is_int(hi) and lo <= hi):
                raise ContractError(
                    f"value_range must be two integers (low, high) with low <= high, "
                    f"not {self.value_range!r}"
                )
        if self.repetition_value is not None and not _is_int(self.repetition_value):
            raise ContractError(
                f"repetition_value must be an integer or None, not {self.repetition_value!r}"
            )

    def _check_declarations(self) -> None:
        """``players`` are two names, ``leak_order`` is one of :data:`LEAK_ORDERS`, and
        the flags are booleans."""
        if not (
            isinstance(self.players, tuple)
            and len(self.players) == 2
            and all(isinstance(p, str) and p for p in self.players)
        ):
            raise ContractError(f"players must be two names, not {self.players!r}")
        if self.leak_order not in LEAK_ORDERS:
            raise ContractError(
                f"leak_order must be one of {', '.join(LEAK_ORDERS)}, not {self.leak_order!r}"
            )
        flags = {
            "finite": self.finite,
            "acyclic": self.acyclic,
            "uses_symmetry": self.uses_symmetry,
            "chance": self.chance,
            "tiers": self.tiers,
        }
        for name, flag in flags.items():
            if not isinstance(flag, bool):
                raise ContractError(f"{name} must be true or false, not {flag!r}")

    def _check_chance(self) -> None:
        """A game with chance nodes declares a symmetric value range, and no tiers."""
        if self.value_range is None or self.value_range[0] != -self.value_range[1]:
            raise ContractError(
                "a game with chance nodes must declare a value_range (-r, r), "
                f"not {self.value_range!r}"
            )
        if self.tiers:
            raise ContractError("a game with chance nodes cannot declare tiers (yet)")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


@runtime_checkable
class Game(Protocol):
    """What the solver needs from a configured game (one variant: game + parameters).

    The game's identity (``name``, ``version``, ``description``, ``notation``,
    ``parameters``) is class attributes, as :class:`GameBase` declares them; every other
    member is read-only, so a plain class with attributes satisfies it as well as
    :class:`GameBase` does. Optional hooks are part of the protocol too; :class:`GameBase`
    gives each its default (documented there), so games written on it implement only the
    required ones: ``initial``, ``children``, ``terminal_value``, ``parse``, ``format``.
    """

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

    @property
    def facts(self) -> GameFacts:
        """What the game declares about itself (:class:`GameFacts`)."""
        ...

    @property
    def repetition_value(self) -> int | None:
        """``facts.repetition_value`` (kept as its own member: results report it)."""
        ...

    @property
    def uses_symmetry(self) -> bool:
        """``facts.uses_symmetry``."""
        ...

    @property
    def priority(self) -> Callable[[PositionKey], float] | None:
        """Expansion priority (smaller first), or ``None`` (the facts' leak order)."""
        ...

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

    def format_many(self, keys: Sequence[PositionKey]) -> list[str]:
        """:meth:`format` of each of *keys* (optional; for speed)."""
        ...

    def tablebase_positions(self) -> Iterable[PositionKey] | None:
        """Where a full solve starts besides the root (optional; ``None``: the root)."""
        ...

    def player_to_move(self, key: PositionKey) -> int | None:
        """0 for MAX, 1 for MIN, ``None`` if the game does not say (optional)."""
        ...


class ChanceRules(Protocol):
    """The hook of chance games (contract 3): which positions are chance nodes and the
    probabilities of their outcomes (see :meth:`GameBase.probabilities`)."""

    def probabilities(self, key: PositionKey) -> Sequence[Fraction] | None: ...


@runtime_checkable
class BatchedNotation(Protocol):
    """The optional batched notation: a game that has it (every :class:`GameBase` does;
    it may answer ``None``) can write the notation of many 64-bit keys at once."""

    def format_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.bytes_] | None:
        """:meth:`Game.format` of every key as UTF-8 (numpy dtype ``S``), or ``None``."""
        ...


@runtime_checkable
class BatchedRules(Protocol):
    """The optional batched rules (contract 2): a game that has these members (every
    :class:`GameBase` does; each may answer ``None``: "not for these keys") can be asked
    for the moves, terminal values, canonical forms and tiers of many 64-bit keys at
    once. The per-position hooks stay the reference: the answers must be theirs."""

    def children_batch(self, keys: npt.NDArray[np.int64]) -> BatchMoves | None:
        """:meth:`Game.children` of every key (see :class:`BatchMoves`), or ``None``."""
        ...

    def terminal_values_batch(
        self, keys: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]] | None:
        """Whether each key is terminal and its value, or ``None``."""
        ...

    def canonical_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """:meth:`Game.canonical` of every key, or ``None``."""
        ...

    def tiers_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """:meth:`GameBase.tier` of every key (games that declare tiers), or ``None``."""
        ...


@runtime_checkable
class TieredRules(Protocol):
    """The tier hooks (contract 2), which a game whose facts declare ``tiers`` has (see
    :attr:`GameFacts.tiers`; every :class:`GameBase` has them, raising when undeclared)."""

    def tier(self, key: PositionKey) -> Tier:
        """:meth:`GameBase.tier`."""
        ...

    def child_tiers(self, tier: Tier) -> Sequence[Tier]:
        """:meth:`GameBase.child_tiers`."""
        ...

    def tier_positions(self, tier: Tier) -> Iterable[PositionKey] | None:
        """:meth:`GameBase.tier_positions`."""
        ...

    def tier_name(self, tier: Tier) -> str:
        """:meth:`GameBase.tier_name`."""
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
    contract: ClassVar[int] = CONTRACT_VERSION
    """The Game contract version the class was written for (:data:`CONTRACT_VERSION`)."""

    # The facts (see GameFacts for each one's meaning), declared per class or, when they
    # depend on the parameters, set per instance in _configure; read through `facts`.
    finite: ClassVar[bool] = True
    acyclic: ClassVar[bool] = False
    leak_order: ClassVar[LeakOrder] = "depth"
    players: ClassVar[tuple[str, str]] = ("MAX", "MIN")
    tiers: ClassVar[bool] = False
    chance: ClassVar[bool] = False
    repetition_value: int | None = None
    value_range: tuple[int, int] | None = None
    uses_symmetry: bool = False

    priority: Callable[[PositionKey], float] | None = None
    """Expansion priority of a partial solve (smaller first), or ``None``."""

    @property
    def facts(self) -> GameFacts:
        """The declared facts as one frozen, validated record.

        :raises ContractError: if a declared fact has the wrong type or is unsupported.
        """
        return GameFacts(
            finite=self.finite,
            acyclic=self.acyclic,
            value_range=self.value_range,
            repetition_value=self.repetition_value,
            uses_symmetry=self.uses_symmetry,
            leak_order=self.leak_order,
            players=self.players,
            chance=self.chance,
            tiers=self.tiers,
        )

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

    def format_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.bytes_] | None:
        """:meth:`format` of every key of *keys* (64-bit) as UTF-8 in a numpy array of
        fixed-width bytes (dtype ``S``; numpy pads the shorter ones with NUL bytes, so a
        text must not end in one), or ``None`` (the default; then :meth:`format_many`).
        The stores write the texts of millions of positions from such an array without
        making a Python string of each. The texts must be exactly :meth:`format`'s."""
        return None

    def canonical(self, key: PositionKey) -> PositionKey:
        """The representative of *key*'s symmetry class; the identity by default (called
        only when ``uses_symmetry`` is set)."""
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

    # -- batched rules (contract 2, optional): the per-position hooks stay the oracle ---

    def children_batch(self, keys: npt.NDArray[np.int64]) -> BatchMoves | None:
        """:meth:`children` of every key of *keys* (64-bit) in one call, or ``None`` when
        the game cannot (the default; then the solver calls :meth:`children` per key).
        The moves must be exactly :meth:`children`'s, in the same order."""
        return None

    def terminal_values_batch(
        self, keys: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]] | None:
        """:meth:`terminal_value` of every key of *keys*: whether each is terminal and
        its value (anything where it is not), or ``None`` (the default: per key)."""
        return None

    def canonical_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """:meth:`canonical` of every key of *keys*, or ``None`` (the default: per key)."""
        return None

    def tiers_batch(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
        """:meth:`tier` of every key of *keys* (64-bit), as an int64 array, or ``None``
        (the default; then the solver calls :meth:`tier` per key). Games with tiers and
        64-bit keys may implement it: a tiered full solve routes every move's child to
        its tier with it. The tiers must be exactly :meth:`tier`'s."""
        return None

    # -- tiers (contract 2): read only when the facts declare ``tiers`` ----------------

    def tier(self, key: PositionKey) -> Tier:
        """The tier of *key* (a game that declares ``tiers`` implements it). A position
        and its canonical image are in the same tier."""
        raise ContractError(f"{self.name} declares no tiers")

    def child_tiers(self, tier: Tier) -> Sequence[Tier]:
        """The tiers that moves from positions of *tier* can lead to, besides *tier*
        itself (moves within a tier are always allowed); the relation must be acyclic
        (a game that declares ``tiers`` implements it)."""
        raise ContractError(f"{self.name} declares no tiers")

    def tier_name(self, tier: Tier) -> str:
        """How progress lines and messages name *tier*: its number (the default), or
        what it stands for (chess: the material, ``KQvKR``)."""
        return str(tier)

    def tier_positions(self, tier: Tier) -> Iterable[PositionKey] | None:
        """Positions of *tier*, canonical when the variant uses symmetry, each once, in
        a fixed order — every one the game can list (chess: every legal placement of a
        material) — or ``None`` to leave their discovery to the solver. A tiered solve
        starts a tier from them and adds any other position of the tier moves reach."""
        return None

    def probabilities(self, key: PositionKey) -> Sequence[Fraction] | None:
        """At a chance node (contract 3, games that declare ``chance``): the probability
        of each of :meth:`children`'s outcomes, in the same order, as positive fractions
        summing to 1; ``None`` (the default) at a decision node, where the player to move
        chooses."""
        return None

    def player_to_move(self, key: PositionKey) -> int | None:
        """0 if the first player (MAX) is to move at *key*, 1 for the second (MIN), or
        ``None`` if the game does not say. Values stay from the mover's point of view; this
        only lets the CLI and the API also report them from MAX's side."""
        return None

    def draw_svg(self, key: PositionKey) -> str | None:
        """Position *key* drawn as an SVG document with no external references, for the
        explorer (``docs/explorer.md``), or ``None``: the explorer then draws a grid when
        the notation is rows separated by ``/``, else shows the text. Optional, also for
        games that do not derive from this class."""
        del key
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
    "BatchMoves",
    "BatchedNotation",
    "BatchedRules",
    "CONTRACT_VERSION",
    "ChanceRules",
    "LEAK_ORDERS",
    "Game",
    "GameBase",
    "GameFacts",
    "LeakOrder",
    "MoveLabel",
    "Param",
    "ParamValue",
    "PositionKey",
    "params_text",
]
