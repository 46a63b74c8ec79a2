"""Reading requests: the game variant from the query string or the JSON body, positions in
the game's notation, and the other query parameters. Every problem is raised as a domain
error (:mod:`api.errors` turns it into a 400, 404, 413 or 415), never answered here."""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from flask import request
from pydantic import ValidationError
from sqlalchemy import select
from werkzeug.exceptions import UnsupportedMediaType

from api.database import get_session
from api.errors import BatchTooLargeError, GameNotInstalledError, InvalidRequestError
from api.schemas import BatchRequest
from db.models import Variant as VariantRow
from solver.errors import InvalidPositionError, UnknownGameError
from solver.game import GameBase, ParamValue, PositionKey, params_text
from solver.games import GAME_NAME, GAMES

POSITION_ARG = "p"
"""The query parameter holding a position in the game's notation."""

SYMMETRY_PARAM = "symmetry"
"""The parameter by which games with a symmetry set-up turn it on or off."""

GAME_CACHE_SIZE = 32
"""Configured games each thread keeps (least recently used ones are dropped)."""


def find_game(name: str) -> type[GameBase]:
    """The registered game *name* (plugins included). Game references (``module:Class``)
    are not taken over HTTP: a server loads them at start (``serve --game``).

    :raises UnknownGameError: if no game is called *name* (saying why, when it is a
        plugin that could not be loaded).
    :raises GameNotInstalledError: if the database holds game *name* but this server
        does not have it (its plugin is not installed, or broken).
    """
    if ":" in name:
        error = UnknownGameError(
            f"unknown game {name!r}: the API takes game names, not references "
            "(start the server with --game MODULE:CLASS)"
        )
    else:
        try:
            return GAMES.find(name)
        except UnknownGameError as e:
            error = e
    if (
        GAME_NAME.match(name)
        and get_session()
        .execute(select(VariantRow.id).where(VariantRow.game == name).limit(1))
        .first()
        is not None
    ):
        broken = GAMES.error_for(name)
        raise GameNotInstalledError(
            f"the database holds game {name!r} but it is not installed on this server "
            "(install its plugin package, or start the server with --game MODULE:CLASS)"
            + ("" if broken is None else f": {broken}")
        )
    raise error


class _Games(threading.local):
    """This thread's configured games, by class and parameters as given, most recently
    used last. Per thread, because game objects keep scratch state (chess: a board)."""

    def __init__(self) -> None:
        self.games: OrderedDict[tuple[Any, ...], GameBase] = OrderedDict()


_games = _Games()


def configured_game(cls: type[GameBase], params: Mapping[str, object]) -> GameBase:
    """``cls(**params)``, made once per thread for each parameter mapping and then reused:
    making a game can be costly (connect-four builds its notation tables on first use).

    :raises InvalidParameterError: for unknown, malformed or out-of-range parameters
        (never cached).
    """
    # The value's type is part of the key: True == 1, but width=True is an error.
    key = (cls, *sorted((k, type(v), v) for k, v in params.items()))
    games = _games.games
    game = games.get(key)
    if game is None:
        game = games[key] = cls(**params)
        if len(games) > GAME_CACHE_SIZE:
            games.popitem(last=False)
    else:
        games.move_to_end(key)
    return game


def single_args() -> dict[str, str]:
    """The query string as a mapping, refusing repeated parameters.

    :raises InvalidRequestError: if a parameter is given more than once.
    """
    args = request.args
    for name in args:
        if len(args.getlist(name)) > 1:
            raise InvalidRequestError(f"query parameter {name!r} is given more than once")
    return dict(args.items())


class Variant(NamedTuple):
    """A game variant a request names, before its game is built: the game class and its
    parameters in normal form (:meth:`GameBase.variant_params`)."""

    cls: type[GameBase]
    params: dict[str, ParamValue]

    @property
    def text(self) -> str:
        """The parameters' canonical text, as the database stores them."""
        return params_text(self.params)

    def game(self) -> GameBase:
        """The configured game (:func:`configured_game`: built once per thread)."""
        return configured_game(self.cls, self.params)

    def notation_game(self) -> GameBase:
        """A game that reads and writes this variant's positions as :meth:`game` does but
        may skip its costly set-up: the same variant with ``symmetry`` off when the game
        has that parameter (notation never depends on it; symmetry set-up can take
        seconds). For positions of variants that are not stored: never for answers."""
        if self.params.get(SYMMETRY_PARAM) is True:
            return configured_game(self.cls, {**self.params, SYMMETRY_PARAM: False})
        return self.game()


def variant_from_query(name: str, *, reserved: Collection[str] = ()) -> Variant:
    """Game *name*'s variant named by the query parameters (those in *reserved*
    excepted), without building the game.

    :raises UnknownGameError: if no game is called *name*.
    :raises InvalidParameterError: for unknown, malformed or out-of-range parameters.
    :raises InvalidRequestError: for a repeated query parameter.
    """
    cls = find_game(name)
    args = single_args()
    params: dict[str, object] = {k: v for k, v in args.items() if k not in reserved}
    if POSITION_ARG in args:  # e.g. a chess FEN names its material table
        implied = cls.params_for(args[POSITION_ARG])
        params = {**{k: v for k, v in implied.items() if k not in params}, **params}
    return Variant(cls, cls.variant_params(params))


def game_from_query(name: str, *, reserved: Collection[str] = ()) -> GameBase:
    """Game *name* configured by the query parameters (those in *reserved* excepted).

    :raises UnknownGameError: if no game is called *name*.
    :raises InvalidParameterError: for unknown, malformed or out-of-range parameters.
    :raises InvalidRequestError: for a repeated query parameter.
    """
    return variant_from_query(name, reserved=reserved).game()


def parse_position(game: GameBase, text: str) -> PositionKey:
    """*text* in *game*'s notation.

    :raises InvalidPositionError: naming the game, if *text* is malformed or impossible.
    """
    try:
        return game.parse(text)
    except InvalidPositionError as exc:
        raise InvalidPositionError(
            f"invalid {game.name} position {shorten(text)!r}: {shorten(str(exc), 400)}"
        ) from None


def shorten(text: str, limit: int = 80) -> str:
    """*text*, cut to about *limit* characters (error messages echo user input)."""
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def position_from_query(game: GameBase) -> tuple[PositionKey, str]:
    """The position given as ``?p=`` (its key and text).

    :raises InvalidRequestError: if ``p`` is missing.
    :raises InvalidPositionError: if it is malformed.
    """
    text = request.args.get(POSITION_ARG)
    if text is None:
        raise InvalidRequestError(
            f"missing query parameter {POSITION_ARG!r}: the position in {game.name}'s "
            f"notation ({game.notation})"
        )
    return parse_position(game, text), text


def choice_from_query(name: str, choices: tuple[str, ...], default: str) -> str:
    """Query parameter *name*, one of *choices* (*default* when absent).

    :raises InvalidRequestError: for any other value.
    """
    value = request.args.get(name, default)
    if value not in choices:
        raise InvalidRequestError(
            f"query parameter {name!r} must be one of {', '.join(choices)}, not {shorten(value)!r}"
        )
    return value


def int_from_query(name: str, *, minimum: int, maximum: int, default: int) -> int:
    """Query parameter *name* as an integer in ``minimum..maximum`` (*default* if absent).

    :raises InvalidRequestError: if it is not such an integer.
    """
    raw = request.args.get(name)
    if raw is None:
        return default
    text = raw.strip()
    if not (text.isascii() and text.lstrip("-+").isdigit()) or len(text) > 20:
        raise InvalidRequestError(
            f"query parameter {name!r} must be an integer, not {shorten(raw)!r}"
        )
    value = int(text)
    if not minimum <= value <= maximum:
        raise InvalidRequestError(
            f"query parameter {name!r} must be between {minimum} and {maximum}, not {value}"
        )
    return value


def number_from_query(name: str, *, maximum: float) -> float | None:
    """Query parameter *name* as a number above 0 and at most *maximum* (``None`` if
    absent).

    :raises InvalidRequestError: if it is not such a number.
    """
    raw = request.args.get(name)
    if raw is None:
        return None
    text = raw.strip()
    try:
        value = float(text) if text.isascii() and len(text) <= 20 else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InvalidRequestError(
            f"query parameter {name!r} must be a number, not {shorten(raw)!r}"
        )
    if not 0 < value <= maximum:
        raise InvalidRequestError(
            f"query parameter {name!r} must be more than 0 and at most {maximum:g}, not {value:g}"
        )
    return value


def json_type(value: object) -> str:
    """The JSON type name of a decoded value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def json_body() -> Any:
    """The request's JSON body.

    :raises UnsupportedMediaType: if the body is not declared as JSON.
    :raises InvalidRequestError: if it is not valid JSON (UTF-8).
    :raises RequestEntityTooLarge: if it is larger than ``MAX_CONTENT_LENGTH``.
    """
    if not request.is_json:
        raise UnsupportedMediaType(
            "the body must be JSON sent with Content-Type: application/json, not "
            f"{request.mimetype or 'no content type'!r}"
        )
    try:
        return json.loads(request.get_data())
    except ValueError as exc:
        raise InvalidRequestError(f"malformed JSON body: {exc}") from None
    except RecursionError:
        raise InvalidRequestError("malformed JSON body: nested too deeply") from None


def batch_from_body(name: str, *, max_batch: int) -> tuple[Variant, list[str]]:
    """The variant (its game not built yet) and positions of a batch lookup, from a JSON body
    ``{"params": {...}, "positions": ["...", ...]}``.

    :raises UnknownGameError: if no game is called *name*.
    :raises InvalidRequestError: for query parameters (they belong in the body) or a body
        of the wrong shape.
    :raises BatchTooLargeError: for more than *max_batch* positions.
    :raises InvalidParameterError: for unknown, malformed or out-of-range parameters.
    :raises UnsupportedMediaType: if the body is not declared as JSON.
    :raises RequestEntityTooLarge: if it is larger than ``MAX_CONTENT_LENGTH``.
    """
    cls = find_game(name)
    if request.args:
        raise InvalidRequestError(
            "a batch lookup takes its game parameters in the JSON body "
            '({"params": {...}, "positions": [...]}), not in the query string'
        )
    body = json_body()
    try:
        batch = BatchRequest.model_validate(body, strict=True)
    except ValidationError as exc:
        raise InvalidRequestError(_batch_problem(exc, body, name)) from None
    if len(batch.positions) > max_batch:
        raise BatchTooLargeError(
            f"a batch lookup answers at most {max_batch} positions, not "
            f"{len(batch.positions)}: split the request"
        )
    return Variant(cls, cls.variant_params(batch.params)), batch.positions


def _batch_problem(exc: ValidationError, body: Any, name: str) -> str:
    """The one-line message for the first thing wrong with a batch *body* (as
    :class:`~api.schemas.BatchRequest` found it): its shape, unknown members, the
    parameters, then the positions."""
    errors = exc.errors()
    shape = 'the body must be a JSON object {"params": {...}, "positions": [...]}'
    if not isinstance(body, dict):
        return shape
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    if unknown:
        return (
            f"unknown member{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))} in the body (allowed: params, positions)"
        )
    first = min(errors, key=lambda e: (e["loc"][0] != "params", len(e["loc"])))
    loc = first["loc"]
    if loc[0] == "params":
        if len(loc) == 1:
            return '"params" must be an object of game parameters'
        return (
            f"game parameter {str(loc[1])!r} must be a string, an integer or a boolean, "
            f"not {json_type(body['params'][loc[1]])}"
        )
    if len(loc) == 1:
        return '"positions" must be an array of positions (strings)'
    index = int(loc[1])
    return (
        f"positions[{index}] must be a string in {name}'s notation, "
        f"not {json_type(body['positions'][index])}"
    )


__all__ = [
    "POSITION_ARG",
    "Variant",
    "batch_from_body",
    "choice_from_query",
    "configured_game",
    "game_from_query",
    "int_from_query",
    "json_body",
    "parse_position",
    "shorten",
    "position_from_query",
    "single_args",
    "variant_from_query",
]
