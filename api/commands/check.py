"""``negagraph check``: a game held against the Game contract on sampled positions."""

from __future__ import annotations

import json

import click

from api.commands.common import fail, parse_params, user_errors
from api.commands.options import GAME_ARGUMENT, json_option, params_option
from api.console.check import check_failure, check_lines
from solver.games import get_game


@click.command("check")
@GAME_ARGUMENT
@params_option()
@click.option(
    "--positions",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Positions to sample and check.",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="Time budget.",
)
@click.option(
    "--symmetry-pairs",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Positions whose bounds are solved and compared with their canonical "
    "image's (games with symmetry).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random playouts.")
@json_option()
def check_command(
    game_name: str,
    params: tuple[str, ...],
    positions: int,
    max_seconds: float,
    symmetry_pairs: int,
    seed: int,
    as_json: bool,
) -> None:
    """Check GAME against the Game contract on sampled positions; each violation is
    printed with a witness position. Exit status 1 if any is found."""
    from solver.check import WITNESSES, check_game

    with user_errors():
        game = get_game(game_name, **parse_params(params))
        report = check_game(
            game,
            max_positions=positions,
            max_seconds=max_seconds,
            symmetry_pairs=symmetry_pairs,
            seed=seed,
        )
    if as_json:
        click.echo(json.dumps(report.to_json()))
    else:
        for line in check_lines(game, report):
            click.echo(line)
    if not report.ok:
        fail(check_failure(game, report, as_json=as_json, witnesses=WITNESSES))


__all__ = ["check_command"]
