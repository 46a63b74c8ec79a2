"""Conformance checks of a game against the Game contract, on sampled positions.

:func:`check_game` samples positions (breadth first from the initial position, then random
playouts), runs :func:`check_position` on each, checks the declared ``acyclic`` and
``finite`` facts on the explored graph, and checks that symmetry is sound on a small solved
sample (a position and its canonical image, solved without symmetry, have the same
bounds). Every violation carries a *witness*: a position that shows it. ``negagraph check``
prints the report; the test suite runs the same checks over the built-in games.

>>> from solver.games import get_game
>>> check_game(get_game("tic-tac-toe", symmetry=True), max_positions=300).ok
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, cast

import numpy as np

from solver.check.base import INT64, Violation, find_cycle, first_of, witness
from solver.check.evaluation import (
    check_evaluate_batch,
    evaluation_violations,
    ignored_evaluation,
)
from solver.check.sample import late, safe_moves, sample_positions
from solver.check.tiers import check_position_tiers, check_tiers
from solver.errors import NegagraphError
from solver.game import (
    BatchedNotation,
    ChanceRules,
    Game,
    GameBase,
    GameFacts,
    MoveLabel,
    Param,
    ParamValue,
    PositionKey,
)
from solver.negamax import solve
from solver.run import SolveResult

WITNESSES = 5
"""Violations of one kind reported with their witness (the rest are counted)."""


@dataclass
class CheckReport:
    """What :func:`check_game` found."""

    game: str
    params: dict[str, ParamValue]
    positions: int = 0
    """Positions checked."""
    exhausted: bool = False
    """Whether the sample is every reachable position (the exploration ran out of
    positions within the budget)."""
    symmetry_pairs: int = 0
    """Position/image pairs whose solved bounds were compared."""
    violations: list[Violation] = field(default_factory=list)
    """The violations found, each with its witness: of a per-position check, the first
    :data:`WITNESSES` (the others are counted in :attr:`unlisted`)."""
    unlisted: int = 0
    """Violations found and not in :attr:`violations` (a note says of which checks)."""
    notes: list[str] = field(default_factory=list)
    """Remarks that are not violations (e.g. a claim the budget could not confirm)."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def found(self) -> int:
        """Violations found, listed or not."""
        return len(self.violations) + self.unlisted

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "params": self.params,
            "ok": self.ok,
            "positions": self.positions,
            "exhausted": self.exhausted,
            "symmetry_pairs": self.symmetry_pairs,
            "violations_found": self.found,
            "violations": [
                {"check": v.check, "message": v.message, "witness": v.witness}
                for v in self.violations
            ],
            "notes": self.notes,
            "seconds": round(self.seconds, 3),
        }


def _fresh(game: Game) -> Game | None:
    """Another instance of *game*'s variant, to compare against (``None`` if the game is
    not built on :class:`GameBase`, whose constructor takes the parameters)."""
    if not isinstance(game, GameBase):
        return None
    try:
        return type(game)(**game.params)
    except Exception:
        return None


def check_position(
    game: Game,
    key: PositionKey,
    *,
    facts: GameFacts | None = None,
    other: Game | None = None,
) -> list[Violation]:
    """The contract's per-position checks at *key*: notation round trip, terminal iff no
    moves, terminal values (integers, within the declared range), distinct move labels,
    deterministic children (also against *other*, another instance of the variant), and
    with symmetry: the canonical image is idempotent, writable, has the same terminal
    value and the same moves up to symmetry; with tiers: every move stays in its tier or
    goes to one of the tier's child tiers, and the canonical image is in the same tier;
    with an evaluation (:mod:`solver.evaluation`): an integer in range, deterministic,
    the terminal value at a terminal position."""
    facts = game.facts if facts is None else facts
    out: list[Violation] = []

    def bad(check: str, message: str) -> None:
        out.append(Violation(check, message, witness(game, key)))

    try:
        _check_notation(game, key, out)
        children = list(game.children(key))
        value = game.terminal_value(key)
        _check_terminal(value, len(children), facts, bad)
        _check_moves(game, key, children, other, bad)
        if facts.uses_symmetry:
            out.extend(_check_canonical(game, key, value, children))
        elif game.canonical(key) != key:
            bad("canonical", "canonical() changes the key but uses_symmetry is false")
        if facts.tiers:
            out.extend(check_position_tiers(game, key, children, facts.uses_symmetry))
        if facts.chance:
            for message in _chance_problems(game, key, len(children)):
                bad("chance", message)
        out.extend(evaluation_violations(game, key, value, facts, other))
    except Exception as e:
        bad("error", f"{type(e).__name__}: {e}")
    return out


def _check_notation(game: Game, key: PositionKey, out: list[Violation]) -> None:
    """``format`` writes *key* as a non-empty text that ``parse`` reads back."""
    text = game.format(key)
    if not isinstance(text, str) or not text:
        out.append(
            Violation(
                "notation", f"format() gave {text!r}, not a non-empty text", witness(game, key)
            )
        )
    elif (back := game.parse(text)) != key:
        out.append(
            Violation(
                "notation",
                f"parse(format(key)) is key {back}, not {key}",
                f"key {key} (written {text!r})",
            )
        )


def _check_terminal(
    value: int | None, moves: int, facts: GameFacts, bad: Callable[[str, str], None]
) -> None:
    """A position is terminal iff it has no moves (of *moves*), and its terminal *value*
    is an integer within the declared range."""
    if value is None and not moves:
        bad("terminal", "no moves but terminal_value() is None")
    elif value is not None and moves:
        bad("terminal", f"terminal_value() is {value} but there are {moves} moves")
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        bad("terminal", f"terminal_value() is {value!r}, not an integer")
    elif facts.value_range is not None and not (
        facts.value_range[0] <= value <= facts.value_range[1]
    ):
        bad(
            "range",
            f"terminal value {value} is outside the declared value_range {facts.value_range}",
        )


def _check_moves(
    game: Game,
    key: PositionKey,
    children: list[tuple[MoveLabel, PositionKey]],
    other: Game | None,
    bad: Callable[[str, str], None],
) -> None:
    """The move labels of *children* (*key*'s moves) are distinct non-empty texts, and
    ``children`` gives the same moves again (and in *other*, another instance)."""
    labels = [label for label, _ in children]
    if len(set(labels)) != len(labels):
        bad("moves", "two moves have the same label")
    if not all(isinstance(label, str) and label for label in labels):
        bad("moves", "a move label is not a non-empty text")
    if list(game.children(key)) != children:
        bad("determinism", "children() gave different moves on a second call")
    if other is not None and list(other.children(key)) != children:
        bad("determinism", "children() differs between two instances of the variant")


def _chance_problems(game: Game, key: PositionKey, moves: int) -> list[str]:
    """What breaks the chance contract at *key*: whose the position is (0 or 1) and, at
    a chance node, one positive fraction per outcome, summing to 1."""
    out = []
    player = game.player_to_move(key)
    if player not in (0, 1):
        out.append(f"player_to_move() is {player!r}, not 0 or 1 (a chance game must say)")
    probs = cast(ChanceRules, game).probabilities(key)
    if probs is None:
        return out
    probs = list(probs)
    if not all(isinstance(p, (int, Fraction)) and not isinstance(p, bool) and p > 0 for p in probs):
        out.append(f"probabilities() gave {probs!r}: each must be a positive Fraction")
    elif sum(probs) != 1:
        out.append(f"the probabilities sum to {sum(probs)}, not 1")
    if len(probs) != moves:
        out.append(f"{len(probs)} probabilities for {moves} outcomes")
    return out


def check_format_batch(game: Game, keys: Sequence[PositionKey]) -> list[Violation]:
    """``format_batch`` of the sampled *keys* (those that fit 64 bits) spells what
    ``format`` writes, when the game offers it (a ``None`` answer offers nothing)."""
    fit = [k for k in keys if k in INT64]
    if not isinstance(game, BatchedNotation) or not fit:
        return []
    try:
        found = game.format_batch(np.array(fit, dtype=np.int64))
        if found is None:
            return []
        texts = [t.decode() for t in np.asarray(found).tolist()]
    except Exception as e:
        return [Violation("notation", f"format_batch raised {type(e).__name__}: {e}", "-")]
    if len(texts) != len(fit):
        message = f"format_batch of {len(fit)} keys gives {len(texts)} texts"
        return [Violation("notation", message, "-")]
    wrong = [
        (k, f"format_batch writes {t!r} where format() writes {game.format(k)!r}")
        for k, t in zip(fit, texts, strict=True)
        if t != game.format(k)
    ]
    return first_of(game, "notation", wrong)


def _check_canonical(
    game: Game,
    key: PositionKey,
    value: int | None,
    children: Sequence[tuple[MoveLabel, PositionKey]],
) -> list[Violation]:
    out: list[Violation] = []
    rep = game.canonical(key)
    if game.canonical(rep) != rep:
        out.append(Violation("canonical", "canonical() is not idempotent", witness(game, key)))
        return out
    if game.parse(game.format(rep)) != rep:
        out.append(
            Violation(
                "canonical",
                "the canonical image does not round-trip through the notation",
                witness(game, key),
            )
        )
    if game.terminal_value(rep) != value:
        out.append(
            Violation(
                "canonical",
                f"the canonical image {witness(game, rep)} has another terminal value",
                witness(game, key),
            )
        )
    mine = sorted(game.canonical(c) for _, c in children)
    theirs = sorted(game.canonical(c) for _, c in game.children(rep))
    if mine != theirs:
        out.append(
            Violation(
                "canonical",
                f"the canonical image {witness(game, rep)} has other moves up to symmetry",
                witness(game, key),
            )
        )
    return out


def _without_symmetry(game: Game) -> Game:
    """*game* with symmetry off: the same positions, never canonicalised."""

    class WithoutSymmetry(_WithoutSymmetry):
        name: ClassVar[str] = game.name
        version: ClassVar[int] = game.version
        description: ClassVar[str] = game.description
        notation: ClassVar[str] = game.notation
        parameters: ClassVar[tuple[Param, ...]] = game.parameters

    return WithoutSymmetry(game)


class _WithoutSymmetry:
    """The members of :func:`_without_symmetry`'s game besides its identity, which the
    game's own class attributes give (as :class:`~solver.game.Game` asks)."""

    name: ClassVar[str]
    version: ClassVar[int]
    description: ClassVar[str]
    notation: ClassVar[str]
    parameters: ClassVar[tuple[Param, ...]]

    def __init__(self, game: Game) -> None:
        self._game = game
        self.facts = GameFacts(**{**game.facts.__dict__, "uses_symmetry": False})
        self.params: Mapping[str, ParamValue] = game.params
        self.repetition_value = game.repetition_value
        self.uses_symmetry = False
        self.priority = game.priority
        self.initial = game.initial
        self.children = game.children
        self.terminal_value = game.terminal_value
        self.parse = game.parse
        self.format = game.format
        self.format_many = game.format_many
        self.player_to_move = game.player_to_move

    def canonical(self, key: PositionKey) -> PositionKey:
        return key

    def tablebase_positions(self) -> Iterable[PositionKey] | None:
        return None


def _bounds(r: SolveResult) -> str:
    return f"[{r.low}, {r.high}]"


def check_symmetry(
    game: Game,
    keys: Sequence[PositionKey],
    *,
    pairs: int,
    max_expansions: int,
    deadline: float | None = None,
) -> tuple[list[Violation], int]:
    """Solve up to *pairs* positions of *keys* whose canonical image differs, and their
    images, without symmetry (each within *max_expansions*); where both are solved the
    bounds must be equal (at most ``4 * pairs`` pairs are tried). Returns the violations
    and the pairs compared. Put the
    positions most likely to be solved (deep ones) first in *keys*."""
    plain = _without_symmetry(game)
    out: list[Violation] = []
    compared = tried = 0
    for key in keys:
        if compared >= pairs or tried >= 4 * pairs or late(deadline):
            break
        rep = game.canonical(key)
        if rep == key:
            continue
        tried += 1
        seconds = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            mine = solve(
                plain,
                key,
                max_expansions=max_expansions,
                max_seconds=seconds,
            )
            theirs = solve(
                plain,
                rep,
                max_expansions=max_expansions,
                max_seconds=seconds,
            )
        except NegagraphError:
            continue  # a solve error is reported by the other checks
        if not (mine.complete and theirs.complete):
            continue
        compared += 1
        if _bounds(mine) != _bounds(theirs):
            out.append(
                Violation(
                    "symmetry",
                    f"solved without symmetry it has bounds {_bounds(mine)} but its canonical "
                    f"image {witness(game, rep)} has {_bounds(theirs)}: the symmetry is unsound",
                    witness(game, key),
                )
            )
    return out, compared


def check_game(
    game: Game,
    *,
    max_positions: int = 2000,
    max_seconds: float | None = 60.0,
    symmetry_pairs: int = 20,
    solve_expansions: int = 2_000,
    seed: int = 0,
    bound: Callable[[PositionKey], bool] | None = None,
) -> CheckReport:
    """Every conformance check of *game* within the budget (see the module docstring).

    :param max_positions: positions to sample and check.
    :param max_seconds: time budget (sampling and the symmetry solves stop at it).
    :param symmetry_pairs: position/image pairs to solve and compare.
    :param solve_expansions: expansions per solve of the symmetry check.
    :param bound: keys beyond which not to explore (for infinite games).
    """
    started = time.monotonic()
    deadline = None if max_seconds is None else started + max_seconds
    report = CheckReport(game.name, dict(game.params))
    try:
        facts = game.facts
    except NegagraphError as e:
        report.violations.append(Violation("facts", str(e), "-"))
        return report
    try:
        keys, exhausted = sample_positions(
            game, max_positions, seed=seed, deadline=deadline, bound=bound
        )
    except Exception as e:
        report.violations.append(
            Violation("error", f"exploring from the initial position: {type(e).__name__}: {e}", "-")
        )
        return report
    report.positions, report.exhausted = len(keys), exhausted is True
    sampled = len(keys)
    keys = _check_positions(game, keys, facts, deadline, report)
    if facts.acyclic:  # on the positions themselves: a wrong symmetry is reported apart
        report.violations.extend(_check_acyclic(game, keys))
    report.violations.extend(check_format_batch(game, keys))
    report.violations.extend(check_evaluate_batch(game, keys))
    if (note := ignored_evaluation(game)) is not None:
        report.notes.append(note)
    if facts.tiers:
        _check_sample_tiers(game, keys, deadline, report)
    _note_finite(report, facts, exhausted, len(keys), sampled)
    if facts.uses_symmetry and facts.chance:
        report.notes.append("the symmetry of a game of chance is not checked by solving yet")
    elif facts.uses_symmetry and symmetry_pairs > 0:
        _check_sample_symmetry(game, keys, symmetry_pairs, solve_expansions, deadline, report)
    report.seconds = time.monotonic() - started
    return report


def _check_positions(
    game: Game,
    keys: list[PositionKey],
    facts: GameFacts,
    deadline: float | None,
    report: CheckReport,
) -> list[PositionKey]:
    """:func:`check_position` at each of *keys* until *deadline*, into *report* (the
    first :data:`WITNESSES` violations of each check, the others counted); returns the
    keys checked."""
    other = _fresh(game)
    counts: dict[str, int] = {}
    for i, key in enumerate(keys):
        if late(deadline) and i > 0:
            report.notes.append(
                f"time budget reached after checking {i} of the {len(keys)} sampled positions"
            )
            keys = keys[:i]
            report.positions = i
            break
        for v in check_position(game, key, facts=facts, other=other):
            counts[v.check] = counts.get(v.check, 0) + 1
            if counts[v.check] <= WITNESSES:
                report.violations.append(v)
    for check, n in sorted(counts.items()):
        if n > WITNESSES:
            report.unlisted += n - WITNESSES
            report.notes.append(f"{n - WITNESSES} more {check} violations not shown")
    return keys


def _check_acyclic(game: Game, keys: Sequence[PositionKey]) -> list[Violation]:
    """No line of play among the sampled *keys* repeats a position."""
    try:
        edges = {key: [c for _, c in safe_moves(game, key)] for key in keys}
    except Exception:  # reported per position already
        edges = {}
    cycle = find_cycle(edges)
    if cycle is None:
        return []
    path = " -> ".join(witness(game, k) for k in cycle)
    return [
        Violation(
            "acyclic",
            f"the game declares acyclic but play repeats: {path}",
            witness(game, cycle[0]),
        )
    ]


def _check_sample_tiers(
    game: Game, keys: Sequence[PositionKey], deadline: float | None, report: CheckReport
) -> None:
    """:func:`~solver.check.tiers.check_tiers` over the sampled *keys*, into *report*."""
    try:
        found, notes = check_tiers(game, keys, deadline=deadline)
        report.violations.extend(found)
        report.notes.extend(notes)
    except Exception as e:
        report.violations.append(Violation("error", f"tiers: {type(e).__name__}: {e}", "-"))


def _note_finite(
    report: CheckReport, facts: GameFacts, exhausted: bool | None, checked: int, sampled: int
) -> None:
    """Note what the sample says of the declared ``finite``: every reachable position
    was seen (*exhausted*) though the game says it is infinite, or the game says it is
    finite and the sample could not confirm it."""
    if exhausted and not facts.finite:
        report.notes.append(
            f"finite is false but only {checked} positions are reachable: "
            "declaring finite=True allows full solves without a budget"
        )
    if exhausted is not True and facts.finite:
        report.notes.append(
            "finite is declared; not confirmed: "
            + (
                f"more than {sampled:,} positions are reachable"
                if exhausted is False
                else "the time budget ran out before every reachable position was seen"
            )
        )


def _check_sample_symmetry(
    game: Game,
    keys: Sequence[PositionKey],
    pairs: int,
    max_expansions: int,
    deadline: float | None,
    report: CheckReport,
) -> None:
    """:func:`check_symmetry` over the sampled *keys*, deep ones first, into *report*."""
    found, report.symmetry_pairs = check_symmetry(  # the playouts' deep positions first
        game,
        keys[::-1],
        pairs=pairs,
        max_expansions=max_expansions,
        deadline=deadline,
    )
    report.violations.extend(found)
    if report.symmetry_pairs == 0:
        report.notes.append(
            "symmetry not checked: no sampled position with another "
            "canonical image was solved within the budget"
        )


__all__ = [
    "CheckReport",
    "check_game",
    "check_position",
    "check_symmetry",
    "sample_positions",
]
