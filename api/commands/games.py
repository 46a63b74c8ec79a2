"""``negagraph games``: the games negagraph can solve, with their parameters."""

from __future__ import annotations

import json

import click

from api.commands.common import load_game_refs, user_errors, warn_plugin_errors
from api.commands.options import GAME_REF_OPTION, json_option
from api.console.games import games_lines
from solver.games import GAMES


@click.command("games")
@GAME_REF_OPTION
@json_option()
def games_command(game_refs: tuple[str, ...], as_json: bool) -> None:
    """List the games negagraph can solve, with their parameters (plugins included)."""
    with user_errors():
        load_game_refs(game_refs)
    warn_plugin_errors()
    described = [
        {**cls.describe(), "source": GAMES.source(name).text()} for name, cls in GAMES.items()
    ]
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    for line in games_lines(described):
        click.echo(line)


__all__ = ["games_command"]
