"""JSON-ready views of stored positions, shared by the CLI (``query --json``) and the API.

Moves are generated from the position the user asked about (not read from the stored
edges), so that move labels always refer to that position even when the game stores a
symmetric representative; each resulting position is then found by its canonical key.

:func:`describe_position` answers one position, :func:`describe_positions` many at once
(a fixed handful of bulk queries), :func:`describe_line` a principal line (DESIGN §4),
:func:`describe_strategy` a game of chance's optimal strategy (DESIGN §10).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

from db.errors import PositionNotFoundError, RulesVersionError
from db.records import PositionRecord, VariantRecord
from db.repository import Reader, find_variant, probe_position, stored_positions
from solver.errors import InvalidParameterError
from solver.fixpoint import decided
from solver.game import ChanceRules, Game, MoveLabel, ParamValue, PositionKey, params_text
from solver.strategy import BOUNDS, Child, move_sort_key, principal_line
from solver.values import DEPTH_INF, NEG_INF, POS_INF, clamp, depth_from_json, from_public, to_json

UNKNOWN = "unknown"
"""State of a move's resulting position that is not stored (its parent is unexpanded)."""


def position_fields(game: Game, rec: PositionRecord | None) -> dict[str, Any]:
    """A position's own fields: bounds (``None`` where infinite), flags, value, the value
    under the game's repetition rule, depths and state (``unknown`` if not stored)."""
    if rec is None:
        return {
            "low": None,
            "high": None,
            "low_final": False,
            "high_final": False,
            "value": None,
            "repetition_value": None,
            "depth_low": None,
            "depth_high": None,
            "state": UNKNOWN,
        }
    low, high = from_public(rec.bounds.low), from_public(rec.bounds.high)
    rep = game.repetition_value
    lf, hf = rec.bounds.low_final, rec.bounds.high_final
    return {
        "low": to_json(low),
        "high": to_json(high),
        "low_final": rec.bounds.low_final,
        "high_final": rec.bounds.high_final,
        "value": low if low == high and to_json(low) is not None else None,
        "repetition_value": (
            clamp(rep, low, high) if rep is not None and decided(rep, low, high, lf, hf) else None
        ),
        "depth_low": rec.depth_low,
        "depth_high": rec.depth_high,
        "state": rec.state,
        **max_view(game, rec.key, low, high),
        **({} if rec.chance is None else {"chance": chance_fields(game, rec.key, rec)}),
    }


def chance_fields(game: Game, key: PositionKey, rec: PositionRecord) -> dict[str, Any]:
    """A game of chance's own fields of a stored position (``docs/api.md``): its kind,
    whose it is, its bounds as floats rounded outwards and as exact fractions where they
    are known, the bounds from the first player's side, and the expected plies to the
    end under the optimal strategy (``None`` where infinite)."""
    c = rec.chance
    assert c is not None
    player = game.player_to_move(key)
    if rec.state == "terminal":
        kind = "terminal"
    else:
        kind = "decision" if cast(ChanceRules, game).probabilities(key) is None else "chance"
    exact = c.low_exact if c.low_exact is not None and c.low_exact == c.high_exact else None
    return {
        "kind": kind,
        "player": player,
        "low": c.low,
        "high": c.high,
        "low_exact": c.low_exact,
        "high_exact": c.high_exact,
        "value": exact,
        "first_player_low": (c.low if player == 0 else -c.high) + 0.0,  # never -0.0
        "first_player_high": (c.high if player == 0 else -c.low) + 0.0,
        "plies": c.plies,
        "plies_exact": c.plies_exact,
    }


def max_view(game: Game, key: PositionKey, low: int, high: int) -> dict[str, Any]:
    """The bounds from MAX's (the first player's) side, for games that say who is to move
    (``player_to_move``); empty otherwise. MIN to move: MAX's bounds are ``-high, -low``."""
    side = game.player_to_move(key)
    if side is None:
        return {}
    mlow, mhigh = (low, high) if side == 0 else (-high, -low)
    return {
        "to_move": "MAX" if side == 0 else "MIN",
        "max_low": to_json(mlow),
        "max_high": to_json(mhigh),
        "max_value": mlow if mlow == mhigh and to_json(mlow) is not None else None,
    }


def describe_position(session: Reader, game: Game, key: PositionKey) -> dict[str, Any]:
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
            session, variant_id, keys, chance=game.facts.chance
        ),
    )


Fetch = Callable[[int, Collection[PositionKey]], Mapping[PositionKey, PositionRecord]]
"""Reads the stored records of some (canonical) keys of a variant, by key
(:func:`db.repository.stored_positions` on some reader)."""


def describe_stored_position(
    game: Game, key: PositionKey, variant: VariantRecord | None, fetch: Fetch
) -> dict[str, Any]:
    """:func:`describe_position` of *game*'s stored *variant* (``None``: not stored),
    reading the position and every child with one call of *fetch*.

    :raises PositionNotFoundError: if the position (or the variant) is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    if variant is None:
        raise PositionNotFoundError(not_found_message(game, key, None))
    check_rules_version(game, variant)
    stored = game.canonical(key) if game.uses_symmetry else key
    moves = _moves_of(game, key)  # none exactly when terminal
    found = fetch(variant.id, [stored, *(child for _, _, child in moves)])
    rec = found.get(stored)
    if rec is None:
        raise PositionNotFoundError(not_found_message(game, key, variant))
    out: dict[str, Any] = {"position": game.format(key)}
    out.update(position_fields(game, rec))
    out["moves"] = [] if rec.state == "terminal" else _moves_view(game, key, moves, found)
    return out


def check_rules_version(game: Game, variant: VariantRecord) -> None:
    """:raises RulesVersionError: if *variant* is stored under another rules version."""
    if variant.rules_version != game.version:
        raise RulesVersionError.for_variant(game, variant.rules_version)


Move = tuple[MoveLabel, PositionKey, PositionKey]
"""A move from a position: its label, the resulting key, and that key as stored."""


def _moves_of(game: Game, key: PositionKey) -> list[Move]:
    """The moves from *key* in the game's order, each with the child's stored key."""
    if game.uses_symmetry:
        canon = game.canonical
        return [(move, child, canon(child)) for move, child in game.children(key)]
    return [(move, child, child) for move, child in game.children(key)]


def _moves_view(
    game: Game, key: PositionKey, moves: Sequence[Move], found: Mapping[PositionKey, PositionRecord]
) -> list[dict[str, Any]]:
    """The JSON entries of the moves from *key* (see :func:`_ranked_moves`)."""
    if game.facts.chance:
        return _chance_moves(game, key, moves, found)
    return _ranked_moves(game, moves, found)


def _chance_moves(
    game: Game, key: PositionKey, moves: Sequence[Move], found: Mapping[PositionKey, PositionRecord]
) -> list[dict[str, Any]]:
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
        entry: dict[str, Any] = {
            "move": move,
            "position": game.format(child_key)
            if crec is None or stored_key != child_key
            else crec.position,
        }
        entry.update(position_fields(game, crec))
        if crec is None:
            low, high = NEG_INF, POS_INF
        else:
            low, high = from_public(crec.bounds.low), from_public(crec.bounds.high)
        entry["move_low"], entry["move_high"] = (
            (to_json(low), to_json(high)) if keeps else (to_json(-high), to_json(-low))
        )
        c = entry.get("chance")
        if c is not None:
            c = entry["chance"] = dict(c)
            c["probability"] = None if odds is None else str(odds[order])
            c["keeps_turn"] = keeps
            c["move_low"], c["move_high"] = (
                (c["low"], c["high"]) if keeps else (-c["high"] + 0.0, -c["low"] + 0.0)
            )
            c["move_low_exact"], c["move_high_exact"] = (
                (c["low_exact"], c["high_exact"])
                if keeps
                else (_negated(c["high_exact"]), _negated(c["low_exact"]))
            )
            rank = (
                (0.0, 0.0, order) if odds is not None else (-c["move_low"], -c["move_high"], order)
            )
        else:
            rank = (math.inf, math.inf, order)
        ranked.append((rank, entry))
    ranked.sort(key=lambda item: item[0])
    return [entry for _, entry in ranked]


def _negated(exact: str | None) -> str | None:
    """An exact fraction's opposite, as text (``None`` stays ``None``)."""
    return None if exact is None else str(-Fraction(exact))


def _ranked_moves(
    game: Game, moves: Sequence[Move], found: Mapping[PositionKey, PositionRecord]
) -> list[dict[str, Any]]:
    """The JSON entries of *moves*, best first, from the stored child records *found*."""
    ranked = []
    for order, (move, child_key, stored_key) in enumerate(moves):
        crec = found.get(stored_key)
        fields = position_fields(game, crec)
        if crec is None:
            low, high, dlow, dhigh = NEG_INF, POS_INF, DEPTH_INF, DEPTH_INF
            text = game.format(child_key)
        else:
            low, high = from_public(crec.bounds.low), from_public(crec.bounds.high)
            dlow = depth_from_json(crec.depth_low)
            dhigh = depth_from_json(crec.depth_high)
            # The stored notation is the child's own text unless symmetry mapped it.
            text = crec.position if stored_key == child_key else game.format(child_key)
        entry: dict[str, Any] = {"move": move, "position": text}
        entry.update(fields)
        entry["move_low"] = to_json(-high)
        entry["move_high"] = to_json(-low)
        rank = move_sort_key(
            Child(
                order,
                move,
                child_key,
                low,
                high,
                dlow,
                dhigh,
                crec is not None and crec.state == "terminal",
                crec is not None and crec.state == "expanded",
            )
        )
        ranked.append((rank, entry))
    ranked.sort(key=lambda item: item[0])
    return [entry for _, entry in ranked]


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
) -> list[dict[str, Any] | PositionNotFoundError]:
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
    found = stored_positions(session, variant.id, stored, chance=game.facts.chance)
    moves: dict[PositionKey, list[Move]] = {}
    for key, skey in zip(keys, stored, strict=True):
        rec = found.get(skey)
        if rec is not None and rec.state != "terminal" and key not in moves:
            moves[key] = _moves_of(game, key)
    wanted = {c for ms in moves.values() for _, _, c in ms}
    children = stored_positions(
        session, variant.id, wanted - found.keys(), chance=game.facts.chance
    )
    children.update((k, found[k]) for k in wanted & found.keys())
    out: list[dict[str, Any] | PositionNotFoundError] = []
    for key, skey in zip(keys, stored, strict=True):
        rec = found.get(skey)
        if rec is None:
            out.append(PositionNotFoundError(not_found_message(game, key, variant)))
            continue
        view: dict[str, Any] = {"position": game.format(key)}
        view.update(position_fields(game, rec))
        view["moves"] = _moves_view(game, key, moves[key], children) if key in moves else []
        out.append(view)
    return out


@dataclass(frozen=True)
class _At:
    """A node of a principal line: the position as reached (for move labels and text),
    compared by its stored key (so symmetric transpositions count as repetitions)."""

    stored: PositionKey
    key: PositionKey = field(compare=False)


LINE_ENDS = ("terminal", "unexpanded", "max_plies", "repetition")
"""Why a principal line ends (see :class:`solver.strategy.Line`)."""


def describe_line(
    session: Reader, game: Game, key: PositionKey, bound: str, *, max_plies: int | None = None
) -> dict[str, Any]:
    """The principal line from *key* realising its ``value``, ``low`` or ``high`` *bound*
    (:func:`solver.strategy.principal_line`):
    the start position's fields, the steps (each with its move, the bound its mover
    realises and the reached position's fields) and why the line ended.

    Moves are generated from the positions as reached, so labels and texts follow the
    asked position's orientation even when the game stores symmetric representatives.

    :raises PositionNotFoundError: if the start position (or the variant) is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    :raises ValueError: if *bound* is not one of :data:`solver.strategy.BOUNDS`.
    """
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {', '.join(BOUNDS)}, not {bound!r}")
    if game.facts.chance:
        raise InvalidParameterError(
            f"{game.name} has chance nodes: its optimal play is a strategy (a best move "
            f"for every outcome), not a line: GET /api/games/{game.name}/strategy"
        )
    start = probe_position(session, game, key)
    records: dict[PositionKey, PositionRecord | None] = {start.key: start}

    def bounds(node: _At) -> tuple[int, int]:
        rec = records[node.stored]
        if rec is None:
            return NEG_INF, POS_INF
        return from_public(rec.bounds.low), from_public(rec.bounds.high)

    def state(node: _At) -> str:
        rec = records[node.stored]
        return UNKNOWN if rec is None else rec.state

    def children(node: _At) -> list[Child[_At]]:
        moves = _moves_of(game, node.key)
        missing = {stored for _, _, stored in moves if stored not in records}
        if missing:
            found = stored_positions(session, start.variant_id, missing)
            for stored in missing:
                records[stored] = found.get(stored)
        out = []
        for order, (move, child, stored) in enumerate(moves):
            rec = records[stored]
            if rec is None:
                out.append(
                    Child(
                        order,
                        move,
                        _At(stored, child),
                        NEG_INF,
                        POS_INF,
                        DEPTH_INF,
                        DEPTH_INF,
                        False,
                        False,
                    )
                )
                continue
            out.append(
                Child(
                    order,
                    move,
                    _At(stored, child),
                    from_public(rec.bounds.low),
                    from_public(rec.bounds.high),
                    depth_from_json(rec.depth_low),
                    depth_from_json(rec.depth_high),
                    rec.state == "terminal",
                    rec.state == "expanded",
                )
            )
        return out

    line = principal_line(
        _At(start.key, key),
        bound,
        bounds=bounds,
        state=state,
        children=children,
        max_plies=max_plies,
        repetition=game.repetition_value,
    )
    first: dict[str, Any] = {"position": game.format(key)}
    first.update(position_fields(game, start))
    steps = []
    for ply, step in enumerate(line.steps, start=1):
        entry: dict[str, Any] = {
            "ply": ply,
            "move": step.move,
            "bound": step.bound,
            "position": game.format(step.node.key),
        }
        entry.update(position_fields(game, records[step.node.stored]))
        steps.append(entry)
    return {"bound": bound, "start": first, "steps": steps, "end": line.end}


def describe_strategy(
    session: Reader, game: Game, key: PositionKey, *, max_nodes: int
) -> dict[str, Any]:
    """The optimal strategy of a game of chance from *key* (``docs/design.md`` §10), as
    a tree of at most *max_nodes* positions, breadth first: each node with its position,
    its chance fields (kind, player, bounds, expected plies) and its children: a decision
    node's best move (as its position answer ranks moves: by the mover's ``low``, then
    ``high``, then the game's order), a chance node's every outcome with its probability.
    A position already in the tree is not repeated: the move refers to its node
    (``ref``). A node whose children would pass *max_nodes*, and every node after it, is
    ``cut`` (its children are left out), as is one whose children are not stored.

    :raises InvalidParameterError: if the game has no chance nodes.
    :raises PositionNotFoundError: if the position (or the variant) is not stored.
    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    if not game.facts.chance:
        raise InvalidParameterError(
            f"{game.name} has no chance nodes: its optimal play is a line "
            f"(GET /api/games/{game.name}/line), not a strategy"
        )
    start = probe_position(session, game, key)
    records: dict[PositionKey, PositionRecord | None] = {start.key: start}
    ids: dict[PositionKey, int] = {start.key: 0}
    nodes: list[dict[str, Any]] = [_strategy_node(game, 0, key, start)]
    wave = [(0, key)]
    full = False  # the node limit is reached: every node still to expand is cut
    while wave:
        moves = {i: _moves_of(game, k) for i, k in wave if nodes[i]["kind"] != "terminal"}
        missing = {s for ms in moves.values() for _, _, s in ms if s not in records}
        if missing:
            found = stored_positions(session, start.variant_id, missing, chance=True)
            records.update((s, found.get(s)) for s in missing)
        following = []
        for i, k in wave:
            node = nodes[i]
            if i not in moves:
                continue
            chosen = _strategy_moves(game, k, moves[i], records)
            if chosen is None:  # a child is not stored
                node["cut"] = True
                continue
            new = {s for _, _, _, s in chosen if s not in ids}
            if full or len(nodes) + len(new) > max_nodes:
                full = True
                node["cut"] = True
                continue
            for label, probability, child, stored in chosen:
                ref = stored in ids
                if not ref:
                    ids[stored] = len(nodes)
                    rec = records[stored]
                    assert rec is not None  # _strategy_moves found every child
                    nodes.append(_strategy_node(game, len(nodes), child, rec))
                    following.append((ids[stored], child))
                node["children"].append(
                    {"move": label, "probability": probability, "node": ids[stored], "ref": ref}
                )
        wave = following
    return {
        "position": game.format(key),
        "nodes": nodes,
        "cut": any(n["cut"] for n in nodes),
    }


def _strategy_node(
    game: Game, node_id: int, key: PositionKey, rec: PositionRecord
) -> dict[str, Any]:
    """A strategy tree's node, without its children yet."""
    return {
        "id": node_id,
        "position": game.format(key),
        **chance_fields(game, key, rec),
        "children": [],
        "cut": False,
    }


def _strategy_moves(
    game: Game,
    key: PositionKey,
    moves: Sequence[Move],
    records: Mapping[PositionKey, PositionRecord | None],
) -> list[tuple[MoveLabel, str | None, PositionKey, PositionKey]] | None:
    """The strategy's moves from *key*: a chance node's every outcome, a decision node's
    best move, each as (label, probability, child, stored child); ``None`` if a child
    is not stored (or has no chance values)."""
    odds = cast(ChanceRules, game).probabilities(key)
    if odds is not None:
        out: list[tuple[MoveLabel, str | None, PositionKey, PositionKey]] = []
        for (label, child, stored), p in zip(moves, odds, strict=True):
            if records.get(stored) is None:
                return None
            out.append((label, str(p), child, stored))
        return out
    player = game.player_to_move(key)
    ranked = []
    for order, (label, child, stored) in enumerate(moves):
        rec = records.get(stored)
        if rec is None or rec.chance is None:
            return None
        c = rec.chance
        keeps = game.player_to_move(child) == player
        low, high = (c.low, c.high) if keeps else (-c.high, -c.low)
        ranked.append(((-low, -high, order), (label, None, child, stored)))
    return [min(ranked, key=lambda item: item[0])[1]]


__all__ = [
    "LINE_ENDS",
    "UNKNOWN",
    "Fetch",
    "check_rules_version",
    "describe_line",
    "describe_position",
    "describe_positions",
    "describe_stored_position",
    "describe_strategy",
    "not_found_message",
    "position_fields",
    "unsolved_message",
]
