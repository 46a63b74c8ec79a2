"""``negagraph query``: one stored position, as the API answers it; with ``--search``,
an estimate beyond the database where it has not decided the position."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from api.commands.common import Fail, fail, open_engine, parse_params, parse_position, user_errors
from api.commands.options import DB_OPTION, GAME_ARGUMENT, json_option, params_option
from api.console.query import describe_estimate, describe_view
from api.estimates import estimate_view
from api.schemas import Estimate, Position, to_data
from api.views import describe_position
from db.repository import list_variants
from db.session import database_url, make_session_factory, session_scope, sqlite_file
from solver.errors import NegagraphError, UnknownGameError
from solver.game import GameBase, PositionKey
from solver.games import find_game, get_game

SEARCH = re.compile(r"(?:(?P<depth>\d+)|(?P<seconds>\d+(?:\.\d*)?|\.\d+)s)")
"""``--search``'s value: a depth in plies (``8``) or a time in seconds (``2s``, ``0.5s``)."""


@click.command("query")
@GAME_ARGUMENT
@click.argument("position")
@params_option()
@DB_OPTION
@click.option(
    "--search",
    metavar="DEPTH|SECONDSs",
    help="Where the database has not decided POSITION, estimate it by a heuristic search "
    "DEPTH plies deep (e.g. 8) or for SECONDS (e.g. 2s); never written to the database.",
)
@json_option()
def query_command(
    game_name: str,
    position: str,
    params: tuple[str, ...],
    db_url: str | None,
    search: str | None,
    as_json: bool,
) -> None:
    """Look up POSITION (in GAME's notation): bounds, depths, value and moves best first;
    with --search, a heuristic estimate where the database has not decided it."""
    limits = None if search is None else search_limits(search)
    with user_errors():
        given = parse_params(params)
        try:
            cls = find_game(game_name)
        except UnknownGameError:
            if stored_games(database_url(db_url)) & {game_name}:
                fail(
                    f"the database holds game {game_name!r} but it is not installed here "
                    "(install its plugin package, or name its class as module:Class)"
                )
            raise
        implied = cls.params_for(position)  # e.g. a FEN's material
        game = get_game(game_name, **{**implied, **given})
        key = parse_position(game, position)
        if limits is not None:
            estimated, stored = estimate_position(game, key, database_url(db_url), *limits)
            if as_json:
                click.echo(json.dumps(to_data(estimated)))
                return
            lines = describe_estimate(estimated, mover_name(game, key))
            if stored is not None:
                lines += describe_view(stored, game.facts.players)
            for line in lines:
                click.echo(line)
            return
        with open_engine(database_url(db_url)) as engine:
            with session_scope(make_session_factory(engine)) as session:
                view = describe_position(session, game, key)
    if as_json:
        click.echo(json.dumps(to_data(view)))
        return
    for line in describe_view(view, game.facts.players):
        click.echo(line)


def search_limits(text: str) -> tuple[int | None, float | None]:
    """``--search``'s (depth, seconds), one of them given."""
    m = SEARCH.fullmatch(text.strip())
    if m is None:
        fail(f"--search takes a depth in plies (e.g. 8) or seconds (e.g. 2s), not {text!r}")
    depth, seconds = m.group("depth"), m.group("seconds")
    return (int(depth), None) if depth is not None else (None, float(seconds))


def estimate_position(
    game: GameBase, key: PositionKey, url: str, depth: int | None, seconds: float | None
) -> tuple[Estimate, Position | None]:
    """The estimate of *key* with what database *url* knows, and the stored answer when
    it proves the value. A SQLite file that does not exist is not created: the estimate
    then knows nothing proven."""
    path = sqlite_file(url)
    if path is not None and not Path(path).exists():
        return estimate_view(None, game, key, depth, seconds), None
    with open_engine(url) as engine:
        with session_scope(make_session_factory(engine)) as session:
            view = estimate_view(session, game, key, depth, seconds)
            stored = describe_position(session, game, key) if view.kind == "proven" else None
    return view, stored


def mover_name(game: GameBase, key: PositionKey) -> str:
    """The player to move at *key*, by the game's names for its players."""
    side = game.player_to_move(key)
    return "the player to move" if side is None else game.facts.players[side]


def stored_games(url: str) -> set[str]:
    """The names of the games database *url* holds variants of (none if it cannot be
    read: the caller reports its own error)."""
    try:
        with open_engine(url) as engine:
            with session_scope(make_session_factory(engine)) as session:
                return {s.variant.game for s in list_variants(session)}
    except (NegagraphError, Fail):
        return set()


__all__ = ["query_command"]
