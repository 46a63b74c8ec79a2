"""The games and positions endpoints: the game list with the variants the database holds,
single and batch position lookups, and principal lines.

Positions are in the game's text notation; the game's parameters are query parameters
(``?width=4&height=3``), or the ``params`` member of a batch lookup's JSON body. Every
answer is a model of :mod:`api.schemas`; a position's is
:func:`api.views.describe_position`'s, shared with ``negagraph query --json``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from functools import cache

from flask import Response, current_app, request

import api.schemas as schemas
from api.database import get_database, get_session
from api.errors import InvalidRequestError, error_detail, status_of
from api.estimates import estimate_view
from api.params import (
    POSITION_ARG,
    Variant,
    batch_from_body,
    choice_from_query,
    int_from_query,
    number_from_query,
    parse_position,
    variant_from_query,
)
from api.play import describe_line, describe_strategy
from api.responses import json_answer
from api.views import describe_positions, describe_stored_position, unsolved_message
from db.errors import PositionNotFoundError
from db.records import PositionRecord, VariantRecord, VariantSummary
from db.repository import list_variants, variant_is_closed
from solver.errors import InvalidParameterError, InvalidPositionError
from solver.estimate import estimate_rules
from solver.game import GameBase, PositionKey
from solver.games import GAMES, plugin_errors
from solver.strategy import BOUNDS
from solver.values import Bounds

LINE_ARGS = (POSITION_ARG, "bound", "max_plies")
"""Query parameters of the line endpoint that are not game parameters."""
STRATEGY_ARGS = (POSITION_ARG, "max_nodes")
"""Query parameters of the strategy endpoint that are not game parameters."""
ESTIMATE_ARGS = (POSITION_ARG, "depth", "seconds")
"""Query parameters of the estimate endpoint that are not game parameters."""
MAX_ESTIMATE_DEPTH = 200
"""The deepest search the estimate endpoint takes (``MAX_ESTIMATE_SECONDS`` stops it
sooner)."""
DEFAULT_STRATEGY_NODES = 200
"""The strategy tree's default node limit (at most ``MAX_STRATEGY_NODES``)."""


def bounds_model(b: Bounds) -> schemas.Bounds:
    """A :class:`Bounds` as the API shows it (``null`` for infinite bounds)."""
    return schemas.Bounds(
        low=b.low,
        high=b.high,
        low_final=b.low_final,
        high_final=b.high_final,
    )


@cache
def initial_text(cls: type[GameBase]) -> str:
    """The initial position of *cls* with its default parameters, in its notation."""
    game = cls()
    return game.format(game.initial())


@cache
def estimable(cls: type[GameBase]) -> bool:
    """Whether positions of *cls* (default parameters) can be estimated beyond the
    database: the estimate endpoint's own check, asked once (a page offers to play on
    past the store only where it can)."""
    try:
        estimate_rules(cls(), depth=1, seconds=None)
    except InvalidParameterError:
        return False
    return True


def variant_model(summary: VariantSummary, cls: type[GameBase]) -> schemas.Variant:
    """A stored variant of installed game *cls*, as the game list shows it."""
    v = summary.variant
    run = summary.last_run
    return schemas.Variant(
        id=v.id,
        params=dict(v.params_json),
        params_text=v.params,
        rules_version=v.rules_version,
        game_source=v.game_source,
        compatible=v.rules_version == cls.version,
        nodes=summary.nodes,
        layout="compact" if v.layout == "compact" else "graph",
        root=v.root_position,
        root_bounds=None if summary.root_bounds is None else bounds_model(summary.root_bounds),
        last_run=None if run is None else schemas.LastRun(id=run.id, status=run.status),
    )


def game_model(name: str, cls: type[GameBase], stored: list[VariantSummary]) -> schemas.Game:
    """Installed game *cls* with its parameters and notation, and its *stored* variants."""
    return schemas.Game(
        **cls.describe(),
        source=GAMES.source(name).text(),
        installed=True,
        players=cls.players,
        chance=cls.chance,
        value_range=cls.value_range,
        initial=initial_text(cls),
        estimates=estimable(cls),
        variants=[variant_model(s, cls) for s in stored],
    )


def missing_game_model(name: str, stored: list[VariantSummary]) -> schemas.MissingGame:
    """A game the database holds but this server does not have (a plugin not installed
    here), with its *stored* variants."""
    return schemas.MissingGame(
        name=name,
        installed=False,
        variants=[
            schemas.MissingVariant(
                id=s.variant.id,
                params_text=s.variant.params,
                nodes=s.nodes,
                rules_version=s.variant.rules_version,
            )
            for s in stored
        ],
    )


def list_games() -> Response:
    """Every registered game with its parameters, defaults and notation, plus the
    variants this database holds (node counts, root, root bounds)."""
    stored: dict[str, list[VariantSummary]] = defaultdict(list)
    for summary in list_variants(get_session()):
        stored[summary.variant.game].append(summary)
    games: list[schemas.Game | schemas.MissingGame] = [
        game_model(name, cls, stored.get(name, [])) for name, cls in GAMES.items()
    ]
    # stored by a plugin not installed here
    games.extend(
        missing_game_model(name, stored[name]) for name in sorted(set(stored) - set(GAMES))
    )
    return json_answer(schemas.Games(games=games, plugin_errors=plugin_errors()))


def is_final_view(view: schemas.Position) -> bool:
    """Whether a position answer's values can never change: its bounds are final and so
    are every move's (a terminal child's always are). Its depths can, until the variant
    is closed (:func:`db.repository.variant_is_closed`)."""
    return (
        view.low_final and view.high_final and all(m.low_final and m.high_final for m in view.moves)
    )


def position_text(variant: Variant) -> str:
    """The position given as ``?p=``, as text (parsed once the game is built).

    :raises InvalidRequestError: if ``p`` is missing.
    """
    text = request.args.get(POSITION_ARG)
    if text is None:
        cls = variant.cls
        raise InvalidRequestError(
            f"missing query parameter {POSITION_ARG!r}: the position in {cls.name}'s "
            f"notation ({cls.notation})"
        )
    return text


def stored_variant(variant: Variant, position: str) -> VariantRecord:
    """The stored record of *variant*, looked up before its game is built: building can
    be costly (a symmetry set-up can take seconds), so a variant the database does not
    hold costs one indexed query and a check of *position* in its notation.

    :raises InvalidPositionError: if the variant is not stored and *position* is
        malformed.
    :raises PositionNotFoundError: if the variant is not stored.
    """
    record = get_database().variant(variant.cls.name, variant.text)
    if record is None:
        raise PositionNotFoundError(unsolved(variant, position))
    return record


def unsolved(variant: Variant, position: str) -> str:
    """The 404 message for *position* of *variant*, which the database does not hold.

    :raises InvalidPositionError: if *position* is malformed.
    """
    probe = variant.notation_game()
    text = probe.format(parse_position(probe, position))
    return unsolved_message(variant.cls.name, variant.params, text)


def get_position(game: str) -> Response:
    """One position: bounds, flags, value, depths, state and the moves best first.

    :raise 400: malformed position or parameter, ``p`` missing.
    :raise 404: unknown game, the variant is not stored (whatever the position), or the
        position is not in the database.
    :raise 409: the database holds the variant under another rules version.
    """
    variant = variant_from_query(game, reserved=(POSITION_ARG,))
    text = position_text(variant)
    record = stored_variant(variant, text)
    g = variant.game()
    key = parse_position(g, text)
    database = get_database()
    newest = [-1]

    def fetch(variant_id: int, keys: Collection[PositionKey]) -> dict[PositionKey, PositionRecord]:
        found = database.fetch_positions(variant_id, keys, chance=g.facts.chance, game=g)
        newest[0] = max([newest[0], *(r.node_id for r in found.values())])
        return found

    view = describe_stored_position(g, key, record, fetch)
    immutable = is_final_view(view) and database.closed(record.id, newest[0])
    return json_answer(view, immutable=immutable)


def post_positions(game: str) -> Response:
    """Up to ``MAX_BATCH`` lookups at once, answered in order; each result is a position
    answer or ``{"position": ..., "error": {"code", "message"}}`` (every position of a
    variant the database does not hold: a 404 entry).

    :raise 400: malformed JSON or body, or a bad game parameter.
    :raise 404: unknown game.
    :raise 409: the database holds the variant under another rules version.
    :raise 413: too many positions (or too large a body).
    :raise 415: a body that is not declared as JSON.
    """
    variant, texts = batch_from_body(game, max_batch=int(current_app.config["MAX_BATCH"]))
    if texts and get_database().variant(variant.cls.name, variant.text) is None:
        notation = variant.notation_game()  # not stored: its notation, no costly set-up
        initial = notation.format(notation.initial())
        return json_answer(
            schemas.BatchResponse(
                game=variant.cls.name,
                params=variant.params,
                initial=initial,
                results=[unstored_entry(variant, text) for text in texts],
            )
        )
    g = variant.game()
    initial = g.format(g.initial())
    parsed = [parsed_entry(g, text) for text in texts]
    keys = [p for p in parsed if not isinstance(p, schemas.PositionError)]
    answers = iter(describe_positions(get_session(), g, keys) if keys else [])
    results: list[schemas.Position | schemas.PositionError] = []
    for text, p in zip(texts, parsed, strict=True):
        if isinstance(p, schemas.PositionError):
            results.append(p)
            continue
        answer = next(answers)
        results.append(error_entry(text, answer) if isinstance(answer, Exception) else answer)
    return json_answer(
        schemas.BatchResponse(game=g.name, params=dict(g.params), initial=initial, results=results)
    )


def parsed_entry(game: GameBase, text: str) -> PositionKey | schemas.PositionError:
    """Position *text* of a batch, parsed; or its entry, if it is malformed."""
    try:
        return parse_position(game, text)
    except InvalidPositionError as exc:
        return error_entry(text, exc)


def error_entry(text: str, exc: Exception) -> schemas.PositionError:
    """A batch entry for position *text* that has no answer, saying why (*exc*)."""
    return schemas.PositionError(position=text, error=error_detail(status_of(exc), str(exc)))


def unstored_entry(variant: Variant, text: str) -> schemas.PositionError:
    """A batch entry for position *text* of *variant*, which the database does not hold:
    a 404, or a 400 if *text* is malformed."""
    try:
        message = unsolved(variant, text)
        return schemas.PositionError(position=text, error=error_detail(404, message))
    except InvalidPositionError as exc:
        return error_entry(text, exc)


def get_line(game: str) -> Response:
    """The principal line realising the position's value (default: the winner wins
    fastest, the loser resists longest) or its ``low`` or ``high`` bound.

    :raise 400: malformed position, parameter, ``bound`` or ``max_plies``.
    :raise 404: unknown game, the variant is not stored, or the position is not in the
        database.
    :raise 409: the database holds the variant under another rules version.
    """
    variant = variant_from_query(game, reserved=LINE_ARGS)
    text = position_text(variant)
    bound = choice_from_query("bound", BOUNDS, "value")
    limit = int(current_app.config["MAX_LINE_PLIES"])
    max_plies = int_from_query("max_plies", minimum=0, maximum=limit, default=limit)
    record = stored_variant(variant, text)
    g = variant.game()
    key = parse_position(g, text)
    line = describe_line(get_session(), g, key, bound, max_plies=max_plies)
    data = schemas.Line(
        game=g.name,
        params=dict(g.params),
        bound=line.bound,
        max_plies=max_plies,
        start=line.start,
        steps=line.steps,
        plies=len(line.steps),
        end=line.end,
    )
    final = all(p.low_final and p.high_final for p in [line.start, *line.steps])
    return json_answer(data, immutable=final and variant_is_closed(get_session(), record.id))


def get_strategy(game: str) -> Response:
    """A game of chance's optimal strategy from a position, as a tree of at most
    ``max_nodes`` positions: the best move at each decision node, every outcome at each
    chance node, each position with its values and expected plies.

    :raise 400: malformed position or parameter, ``max_nodes`` out of range, a game
        without chance nodes.
    :raise 404: unknown game, the variant is not stored, or the position is not in the
        database.
    :raise 409: the database holds the variant under another rules version.
    """
    variant = variant_from_query(game, reserved=STRATEGY_ARGS)
    text = position_text(variant)
    limit = int(current_app.config["MAX_STRATEGY_NODES"])
    max_nodes = int_from_query(
        "max_nodes", minimum=1, maximum=limit, default=min(DEFAULT_STRATEGY_NODES, limit)
    )
    record = stored_variant(variant, text)
    g = variant.game()
    key = parse_position(g, text)
    tree = describe_strategy(get_session(), g, key, max_nodes=max_nodes)
    return json_answer(tree, immutable=variant_is_closed(get_session(), record.id))


def get_estimate(game: str) -> Response:
    """A heuristic estimate of a position (``depth`` plies deep, or for ``seconds``)
    with its proven bounds; the database's exact value, unsearched, where it holds one.
    Every search stops after ``MAX_ESTIMATE_SECONDS``, at its last completed iteration.

    :raise 400: malformed position or parameter, ``p`` missing, not exactly one of
        ``depth`` and ``seconds`` (``seconds`` beyond ``MAX_ESTIMATE_SECONDS``), a game
        without an evaluation, a terminal position the database does not hold.
    :raise 404: unknown game.
    :raise 409: the database holds the variant under another rules version.
    """
    variant = variant_from_query(game, reserved=ESTIMATE_ARGS)
    text = position_text(variant)
    cap = float(current_app.config["MAX_ESTIMATE_SECONDS"])
    depth = None
    if "depth" in request.args:
        depth = int_from_query("depth", minimum=1, maximum=MAX_ESTIMATE_DEPTH, default=1)
    seconds = number_from_query("seconds", maximum=cap)
    g = variant.game()
    key = parse_position(g, text)
    return json_answer(estimate_view(get_session(), g, key, depth, seconds, cap=cap))


__all__ = [
    "bounds_model",
    "get_estimate",
    "get_line",
    "get_position",
    "get_strategy",
    "is_final_view",
    "list_games",
    "post_positions",
]
