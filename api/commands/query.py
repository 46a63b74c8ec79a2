"""``negagraph query``: one stored position, as the API answers it."""

from __future__ import annotations

import json

import click

from api.commands.common import Fail, fail, open_engine, parse_params, parse_position, user_errors
from api.commands.options import DB_OPTION, GAME_ARGUMENT, json_option, params_option
from api.console.query import describe_view
from api.schemas import to_data
from api.views import describe_position
from db.repository import list_variants
from db.session import database_url, make_session_factory, session_scope
from solver.errors import NegagraphError, UnknownGameError
from solver.games import find_game, get_game


@click.command("query")
@GAME_ARGUMENT
@click.argument("position")
@params_option()
@DB_OPTION
@json_option()
def query_command(
    game_name: str,
    position: str,
    params: tuple[str, ...],
    db_url: str | None,
    as_json: bool,
) -> None:
    """Look up POSITION (in GAME's notation): bounds, depths, value and moves best first."""
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
        with open_engine(database_url(db_url)) as engine:
            with session_scope(make_session_factory(engine)) as session:
                view = describe_position(session, game, key)
    if as_json:
        click.echo(json.dumps(to_data(view)))
        return
    for line in describe_view(view, game.facts.players):
        click.echo(line)


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
