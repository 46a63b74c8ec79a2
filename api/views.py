"""Answers about stored positions, as the models of :mod:`api.schemas`, shared by the CLI
(``query --json``) and the API.

Moves are generated from the position the user asked about (not read from the stored
edges), so that move labels always refer to that position even when the game stores a
symmetric representative; each resulting position is then found by its canonical key.

:func:`describe_position` answers one position, :func:`describe_positions` many at once
(a fixed handful of bulk queries); :mod:`api.play` builds principal lines (DESIGN §4)
and strategies (DESIGN §10) from the same fields.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Literal, NotRequired, TypedDict, TypeVar, cast

from pydantic import TypeAdapter

from api.schemas import ChanceFields, ChanceMoveFields, Move, Position, State
from db.errors import PositionNotFoundError, RulesVersionError
from db.records import PositionRecord, VariantRecord
from db.repository import Reader, find_variant, stored_positions
from solver.fixpoint import decided
from solver.game import ChanceRules, Game, MoveLabel, ParamValue, PositionKey, params_text
from solver.strategy import Child, move_sort_key
from solver.values import DEPTH_INF, NEG_INF, POS_INF, clamp, decode, decode_depth, encode

N = TypeVar("N")

UNKNOWN: Literal["unknown"] = "unknown"
"""State of a move's resulting position that is not stored (its parent is unexpanded)."""


class ValueFields(TypedDict):
    """A position's own fields (:class:`api.schemas.PositionFields` without the position),
    as keyword arguments of the models that have them: the fields from the first
    player's side only for games that say who is to move."""

    low: int | None
    high: int | None
    low_final: bool
    high_final: bool
    value: int | None
    repetition_value: int | None
    depth_low: int | None
    depth_high: int | None
    state: State
    to_move: NotRequired[Literal["MAX", "MIN"]]
    max_low: NotRequired[int | None]
    max_high: NotRequired[int | None]
    max_value: NotRequired[int | None]


UNKNOWN_FIELDS = ValueFields(
    low=None,
    high=None,
    low_final=False,
    high_final=False,
    value=None,
    repetition_value=None,
    depth_low=None,
    depth_high=None,
    state=UNKNOWN,
)
"""The fields of a position that is not stored."""


def position_fields(game: Game, rec: PositionRecord | None) -> ValueFields:
    """A position's own fields: bounds (``None`` where infinite), flags, value, the value
    under the game's repetition rule, depths and state (``unknown`` if not stored), and
    the bounds from the first player's side (:func:`add_max_view`)."""
    if rec is None:
        return UNKNOWN_FIELDS.copy()
    return _stored_fields(game, rec, *stored_bounds(rec))


def _stored_fields(game: Game, rec: PositionRecord, low: int, high: int) -> ValueFields:
    """:func:`position_fields` of stored *rec*, whose bounds decode to *low*, *high*."""
    rep = game.repetition_value
    lf, hf = rec.bounds.low_final, rec.bounds.high_final
    fields = ValueFields(
        low=encode(low),
        high=encode(high),
        low_final=lf,
        high_final=hf,
        value=low if low == high and encode(low) is not None else None,
        repetition_value=(
            clamp(rep, low, high) if rep is not None and decided(rep, low, high, lf, hf) else None
        ),
        depth_low=rec.depth_low,
        depth_high=rec.depth_high,
        state=cast(State, rec.state),
    )
    add_max_view(fields, game, rec.key, low, high)
    return fields


def add_max_view(fields: ValueFields, game: Game, key: PositionKey, low: int, high: int) -> None:
    """Add the bounds from MAX's (the first player's) side, for games that say who is to
    move (``player_to_move``); nothing otherwise. MIN to move: MAX's bounds are
    ``-high, -low``."""
    side = game.player_to_move(key)
    if side is None:
        return
    mlow, mhigh = (low, high) if side == 0 else (-high, -low)
    fields["to_move"] = "MAX" if side == 0 else "MIN"
    fields["max_low"] = encode(mlow)
    fields["max_high"] = encode(mhigh)
    fields["max_value"] = mlow if mlow == mhigh and encode(mlow) is not None else None


def chance_fields(game: Game, key: PositionKey, rec: PositionRecord) -> ChanceFields | None:
    """A game of chance's own fields of a stored position (``docs/api.md``): its kind,
    whose it is, its bounds as floats rounded outwards and as exact fractions where they
    are known, the bounds from the first player's side, and the expected plies to the
    end under the optimal strategy (``None`` where infinite). ``None`` for a position
    without chance values (a game without chance)."""
    c = rec.chance
    if c is None:
        return None
    player = game.player_to_move(key)
    assert player is not None  # games of chance say whose position it is
    if rec.state == "terminal":
        kind: Literal["decision", "chance", "terminal"] = "terminal"
    else:
        kind = "decision" if cast(ChanceRules, game).probabilities(key) is None else "chance"
    exact = c.low_exact if c.low_exact is not None and c.low_exact == c.high_exact else None
    return ChanceFields(
        kind=kind,
        player=player,
        low=c.low,
        high=c.high,
        low_exact=c.low_exact,
        high_exact=c.high_exact,
        value=exact,
        first_player_low=(c.low if player == 0 else -c.high) + 0.0,  # never -0.0
        first_player_high=(c.high if player == 0 else -c.low) + 0.0,
        plies=c.plies,
        plies_exact=c.plies_exact,
    )


def describe_position(session: Reader, game: Game, key: PositionKey) -> Position:
    """The full answer for one position: its own fields and its moves, best first.

    Each move carries the resulting position's own bounds, flags, depths and state, and
    the same bounds from the mover's side (``move_low = -high``, ``move_high = -low``).

    :raises PositionNotFoundError: if the position (or the variant) is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    return describe_stored_position(
        game,
        key,
        find_variant(session, game),
        lambda variant_id, keys: stored_positions(
            session, variant_id, keys, chance=game.facts.chance, game=game
        ),
    )


Fetch = Callable[[int, Collection[PositionKey]], Mapping[PositionKey, PositionRecord]]
"""Reads the stored records of some (canonical) keys of a variant, by key
(:func:`db.repository.stored_positions` on some reader)."""


def describe_stored_position(
    game: Game, key: PositionKey, variant: VariantRecord | None, fetch: Fetch
) -> Position:
    """:func:`describe_position` of *game*'s stored *variant* (``None``: not stored),
    reading the position and every child with one call of *fetch*.

    :raises PositionNotFoundError: if the position (or the variant) is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    if variant is None:
        raise PositionNotFoundError(not_found_message(game, key, None))
    check_rules_version(game, variant)
    stored = game.canonical(key) if game.uses_symmetry else key
    moves = moves_of(game, key)  # none exactly when terminal
    found = fetch(variant.id, [stored, *(child for _, _, child in moves)])
    rec = found.get(stored)
    if rec is None:
        raise PositionNotFoundError(not_found_message(game, key, variant))
    return _answer(game, key, rec, moves, found, _Memo(), chance=game.facts.chance)


def _answer(
    game: Game,
    key: PositionKey,
    rec: PositionRecord,
    moves: Sequence[MoveOf],
    found: Mapping[PositionKey, PositionRecord],
    memo: _Memo,
    *,
    chance: bool,
) -> Position:
    """The answer for *key* (stored as *rec*), its moves' children read from *found*
    (*chance*: ``game.facts.chance``, read once by the caller; *memo* keeps the children's
    fields for the other answers of the same call).

    The moves are built as :class:`MoveFields` dicts and validated in one call, which
    costs less than building each :class:`~api.schemas.Move` on its own (about 5% of a
    batch lookup's answers)."""
    answer = Position(
        game=game.name,
        params=dict(game.params),
        position=game.format(key),
        **position_fields(game, rec),
        moves=[]
        if rec.state == "terminal"
        else _moves_model().validate_python(
            _moves_view(game, key, moves, found, memo, chance=chance)
        ),
    )
    own = chance_fields(game, rec.key, rec)
    if own is not None:
        answer.chance = own
    return answer


class MoveFields(ValueFields):
    """A move's fields (:class:`api.schemas.Move`): its label, the resulting position's
    text and own fields, and the move's bounds for the mover."""

    move: MoveLabel
    position: str
    move_low: int | None
    move_high: int | None


class ChanceMoveEntry(MoveFields):
    """A move of a game of chance to a position with chance values."""

    chance: ChanceMoveFields


def _move_fields(
    move: MoveLabel,
    position: str,
    fields: ValueFields,
    move_low: int | None,
    move_high: int | None,
) -> MoveFields:
    """A move's entry: *fields* are the resulting position's own."""
    return {
        "move": move,
        "position": position,
        **fields,
        "move_low": move_low,
        "move_high": move_high,
    }


@cache
def _moves_model() -> TypeAdapter[list[Move]]:
    """Validates a position's moves in one call (made when first needed)."""
    return TypeAdapter(list[Move])


def check_rules_version(game: Game, variant: VariantRecord) -> None:
    """:raises RulesVersionError: if *variant* is stored under another rules version."""
    if variant.rules_version != game.version:
        raise RulesVersionError.for_variant(game, variant.rules_version)


MoveOf = tuple[MoveLabel, PositionKey, PositionKey]
"""A move from a position: its label, the resulting key, and that key as stored."""


def moves_of(game: Game, key: PositionKey) -> list[MoveOf]:
    """The moves from *key* in the game's order, each with the child's stored key."""
    if game.uses_symmetry:
        canon = game.canonical
        return [(move, child, canon(child)) for move, child in game.children(key)]
    return [(move, child, child) for move, child in game.children(key)]


def _moves_view(
    game: Game,
    key: PositionKey,
    moves: Sequence[MoveOf],
    found: Mapping[PositionKey, PositionRecord],
    memo: _Memo,
    *,
    chance: bool,
) -> list[MoveFields]:
    """The entries of the moves from *key* (see :func:`_ranked_moves`), of a game of
    *chance* or not."""
    if chance:
        return _chance_moves(game, key, moves, found, memo)
    return _ranked_moves(game, moves, found, memo)


@dataclass
class _Memo:
    """What the answers of one call share: a child's own fields by its stored key, and
    the text of a position symmetry mapped, by its key. A position in a batch is the child
    of a dozen others (KQvK: 14 moves a position); building its fields and text once
    saves about 4% of a batch's answers (KQvK, all 46,599 positions: 0.350 -> 0.336 ms
    of CPU a position). What is left is mostly pydantic building the models (0.12 ms a
    position, faster than ``model_construct``) and the game's move generation."""

    fields: dict[PositionKey, ValueFields] = field(default_factory=dict)
    texts: dict[PositionKey, str] = field(default_factory=dict)

    def child_fields(
        self, game: Game, crec: PositionRecord | None, low: int, high: int
    ) -> ValueFields:
        """The own fields of a child stored as *crec* (bounds *low*, *high*)."""
        if crec is None:
            return UNKNOWN_FIELDS
        fields = self.fields.get(crec.key)
        if fields is None:
            fields = self.fields[crec.key] = _stored_fields(game, crec, low, high)
        return fields

    def child_text(
        self, game: Game, child: PositionKey, stored: PositionKey, rec: PositionRecord | None
    ) -> str:
        """The resulting position's text: the stored notation unless symmetry mapped it."""
        if rec is not None and stored == child:
            return rec.position
        text = self.texts.get(child)
        if text is None:
            text = self.texts[child] = game.format(child)
        return text


def stored_bounds(rec: PositionRecord | None) -> tuple[int, int]:
    """A position's stored bounds as the solver holds them (infinite when it is not
    stored)."""
    if rec is None:
        return NEG_INF, POS_INF
    return decode(rec.bounds.low, upper=False), decode(rec.bounds.high, upper=True)


def _chance_moves(
    game: Game,
    key: PositionKey,
    moves: Sequence[MoveOf],
    found: Mapping[PositionKey, PositionRecord],
    memo: _Memo,
) -> list[MoveFields]:
    """The moves of a game of chance: at a decision node best first for its player (by
    the move's lower bound, then its upper bound, then move order); at a chance node the
    outcomes in the game's order, each with its probability. A move that keeps the turn
    keeps the child's bounds; one that passes it negates them."""
    player = game.player_to_move(key)
    odds = cast(ChanceRules, game).probabilities(key)
    ranked = []
    for order, (move, child_key, stored_key) in enumerate(moves):
        crec = found.get(stored_key)
        keeps = game.player_to_move(child_key) == player
        low, high = stored_bounds(crec)
        entry = _move_fields(
            move,
            memo.child_text(game, child_key, stored_key, crec),
            memo.child_fields(game, crec, low, high),
            encode(low) if keeps else encode(-high),
            encode(high) if keeps else encode(-low),
        )
        c = None if crec is None else chance_fields(game, crec.key, crec)
        rank = (math.inf, math.inf, order)
        if c is not None:
            probability = None if odds is None else str(odds[order])
            mine = _chance_move(c, probability, keeps)
            entry = ChanceMoveEntry(**entry, chance=mine)
            if odds is None:
                rank = (-mine.move_low, -mine.move_high, order)
            else:
                rank = (0.0, 0.0, order)
        ranked.append((rank, entry))
    ranked.sort(key=lambda item: item[0])
    return [entry for _, entry in ranked]


def _chance_move(c: ChanceFields, probability: str | None, keeps: bool) -> ChanceMoveFields:
    """The chance fields of a move to a position with chance fields *c*: its
    *probability* (at a chance node) and its bounds for the mover (the child's if the
    move *keeps* the turn, else negated)."""
    if keeps:
        low, high, low_exact, high_exact = c.low, c.high, c.low_exact, c.high_exact
    else:
        low, high = -c.high + 0.0, -c.low + 0.0
        low_exact, high_exact = _negated(c.high_exact), _negated(c.low_exact)
    return ChanceMoveFields(
        **c.model_dump(),
        probability=probability,
        keeps_turn=keeps,
        move_low=low,
        move_high=high,
        move_low_exact=low_exact,
        move_high_exact=high_exact,
    )


def _negated(exact: str | None) -> str | None:
    """An exact fraction's opposite, as text (``None`` stays ``None``)."""
    return None if exact is None else str(-Fraction(exact))


def _ranked_moves(
    game: Game,
    moves: Sequence[MoveOf],
    found: Mapping[PositionKey, PositionRecord],
    memo: _Memo,
) -> list[MoveFields]:
    """The entries of *moves*, best first, from the stored child records *found*."""
    ranked = []
    for order, (move, child_key, stored_key) in enumerate(moves):
        crec = found.get(stored_key)
        low, high = stored_bounds(crec)  # read once, for the fields and the rank
        entry = _move_fields(
            move,
            memo.child_text(game, child_key, stored_key, crec),
            memo.child_fields(game, crec, low, high),
            encode(-high),
            encode(-low),
        )
        ranked.append((move_sort_key(_child(order, move, child_key, crec, low, high)), entry))
    ranked.sort(key=lambda item: item[0])
    return [entry for _, entry in ranked]


def child_of(order: int, move: MoveLabel, node: N, rec: PositionRecord | None) -> Child[N]:
    """The :class:`~solver.strategy.Child` of a move to *node*, stored as *rec*
    (``None``: not stored, its bounds and depths infinite)."""
    return _child(order, move, node, rec, *stored_bounds(rec))


def _child(
    order: int, move: MoveLabel, node: N, rec: PositionRecord | None, low: int, high: int
) -> Child[N]:
    """:func:`child_of`, *rec*'s bounds decoded already (:func:`stored_bounds`)."""
    if rec is None:
        return Child(order, move, node, NEG_INF, POS_INF, DEPTH_INF, DEPTH_INF, False, False)
    return Child(
        order,
        move,
        node,
        low,
        high,
        decode_depth(rec.depth_low),
        decode_depth(rec.depth_high),
        rec.state == "terminal",
        rec.state == "expanded",
    )


def _param(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def not_found_message(game: Game, key: PositionKey, variant: VariantRecord | None) -> str:
    """Why *key* has no answer: the variant was never solved here, or never reached it
    (the same wording as :func:`db.repository.probe_position`)."""
    params = params_text(game.params)
    if variant is None:
        return unsolved_message(game.name, game.params, game.format(key))
    return (
        f"position {game.format(key)!r} of {game.name} ({params}) is not in the "
        f"database (variant {variant.id}): the solve never reached it, or a tiered full "
        "solve has not solved its tier yet"
    )


def unsolved_message(game: str, params: Mapping[str, ParamValue], position: str) -> str:
    """Why *position* has no answer when variant (*game*, *params*) is not stored."""
    options = " ".join(f"-p {k}={_param(v)}" for k, v in sorted(params.items()))
    return (
        f"position {position!r} not found: {game} ({params_text(params)}) has not been "
        f"solved in this database (solve it with `negagraph solve {game} {options}`)"
    )


def describe_positions(
    session: Reader, game: Game, keys: Sequence[PositionKey]
) -> list[Position | PositionNotFoundError]:
    """:func:`describe_position` for many positions at once, in the order of *keys*;
    a position that is not stored gets a :class:`PositionNotFoundError` instead.

    The work is a fixed handful of bulk queries whatever the number of positions: the
    variant once, the positions (500 keys per query), then every child of every found
    position together.

    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    variant = find_variant(session, game)
    if variant is None:
        return [PositionNotFoundError(not_found_message(game, k, None)) for k in keys]
    check_rules_version(game, variant)
    canon = game.canonical if game.uses_symmetry else None
    stored = [canon(k) if canon is not None else k for k in keys]
    chance = game.facts.chance
    found = stored_positions(session, variant.id, stored, chance=chance, game=game)
    moves: dict[PositionKey, list[MoveOf]] = {}
    for key, skey in zip(keys, stored, strict=True):
        rec = found.get(skey)
        if rec is not None and rec.state != "terminal" and key not in moves:
            moves[key] = moves_of(game, key)
    children = _children(session, variant.id, moves, found, chance=chance, game=game)
    memo = _Memo()
    out: list[Position | PositionNotFoundError] = []
    for key, skey in zip(keys, stored, strict=True):
        rec = found.get(skey)
        if rec is None:
            out.append(PositionNotFoundError(not_found_message(game, key, variant)))
        else:
            out.append(_answer(game, key, rec, moves.get(key, []), children, memo, chance=chance))
    return out


def _children(
    session: Reader,
    variant_id: int,
    moves: Mapping[PositionKey, Sequence[MoveOf]],
    found: Mapping[PositionKey, PositionRecord],
    *,
    chance: bool,
    game: Game,
) -> dict[PositionKey, PositionRecord]:
    """The stored records of every child of *moves*, those already *found* reused (with
    their chance values for a game of *chance*; *game* reads a compact variant)."""
    wanted = {c for ms in moves.values() for _, _, c in ms}
    children = stored_positions(
        session, variant_id, wanted - found.keys(), chance=chance, game=game
    )
    children.update((k, found[k]) for k in wanted & found.keys())
    return children


__all__ = [
    "UNKNOWN",
    "Fetch",
    "MoveFields",
    "MoveOf",
    "ValueFields",
    "chance_fields",
    "check_rules_version",
    "child_of",
    "describe_position",
    "describe_positions",
    "describe_stored_position",
    "moves_of",
    "not_found_message",
    "position_fields",
    "stored_bounds",
    "unsolved_message",
]
