"""``negagraph solve``: its options, gathered into :class:`SolveArguments`, and what it
prints once the run is over."""

from __future__ import annotations

import json

import click

from api.commands.options import (
    DB_OPTION,
    GAME_ARGUMENT,
    MemorySize,
    into,
    json_option,
    params_option,
)
from api.commands.solving import SolveArguments, Solved, graceful_interrupt, run_solve
from api.console.solve import STOPPED, describe_result, ending_notes, exit_status, result_json
from db.session import safe_url
from solver.memory import DEFAULT_FRACTION, MINIMUM, default_memory_limit, format_size
from solver.ordering import ORDERS


@click.command("solve")
@GAME_ARGUMENT
@params_option("A game parameter (repeatable), e.g. -p width=5 -p height=4.")
@click.option("--root", metavar="POSITION", help="Root position in the game's notation.")
@click.option("--full", is_flag=True, help="Tablebase mode: expand everything reachable.")
@click.option(
    "--tiers/--no-tiers",
    default=None,
    help="Solve --full a tier at a time, the database holding what is done (default: "
    "when the game declares tiers and the variant was not solved otherwise).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Solve a tiered --full solve's units on a local Dask cluster of N worker "
    "processes (1: this process alone, no Dask).",
)
@click.option(
    "--shard-size",
    type=click.IntRange(min=1),
    metavar="N",
    help="Positions per unit of work of a tiered --full solve (default 131,072): a "
    "tier whose moves all leave it is solved in shards of N positions, each its own "
    "transaction, and discovered positions are written in slices of N (default "
    "8,388,608 without --workers).",
)
@click.option(
    "--layout",
    type=click.Choice(["graph", "compact"]),
    help="How a tiered --full solve is stored: compact (one row a position, its bounds "
    "and depths by key; no graph: docs/design.md, 'The compact layout'), or graph (nodes "
    "and edges). Default: as the variant is stored, a graph if it is new.",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0, min_open=True, max=1),
    metavar="EPS",
    help="Games of chance: how close value iteration brings the two bounds of a position "
    "on a cycle through a chance node (default 1e-9; the bounds stay sound whatever it is).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Hand a tiered --full solve's units to the Dask scheduler at ADDRESS (e.g. "
    "tcp://10.0.0.5:8786), whose workers reach the same database (docs/distributed.md).",
)
@click.option(
    "--max-expansions",
    type=click.IntRange(min=0),
    metavar="N",
    help="Stop after exactly N expansions (continue later).",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0),
    metavar="S",
    help="Stop at the first batch boundary after S seconds of work (continue later).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    metavar="N",
    help="Expansions per batch, each one commit (default: adaptive; a depth-first "
    "partial solve expands a 32nd of its graph a batch, at most 65,536; a full "
    "solve commits when its new positions reach half the stored ones, "
    "or every 30 s).",
)
@click.option(
    "--until",
    type=click.Choice(["bounds", "value"]),
    default="bounds",
    show_default=True,
    help="End a partial solve when both root bounds are final, or as soon as "
    "the value under the game's repetition rule is decided.",
)
@click.option(
    "--memory-limit",
    type=MemorySize(),
    metavar="SIZE",
    help=f"Stay under SIZE of RAM (e.g. 4GiB, 512MiB; at least {format_size(MINIMUM)}"
    "). A depth-first partial solve of a "
    "game without repetitions into a database keeps part of its graph in RAM to stay "
    "under it (the database holds the rest) and goes on; other solves end, every batch "
    "committed, before their memory (RSS) would reach it.",
    default=default_memory_limit,
    show_default=f"{DEFAULT_FRACTION:.0%} of this machine's RAM, "
    f"{format_size(default_memory_limit())}",
)
@click.option(
    "--resident-nodes",
    type=click.IntRange(min=1),
    metavar="N",
    default=None,
    help="A depth-first partial solve into a database: after a batch, keep about N/2 "
    "nodes in RAM once more than N are there; the database holds the rest and is read "
    "back when the search returns (same results; docs/design.md §9). Default: from "
    "--memory-limit, for games without repetitions.",
)
@click.option(
    "--order",
    type=click.Choice(ORDERS),
    default="game",
    show_default=True,
    help="A partial solve: the order in which a position's moves are made and searched: "
    "the game's own, or 'evaluate', best first by the game's ordering score or "
    "evaluation (connect-four: the winning cells a move makes). The values proved are the "
    "same; a good order expands fewer positions (docs/pruning.md).",
)
@json_option("Print one JSON object.")
@DB_OPTION
@click.option("--memory", is_flag=True, help="Solve in memory and store nothing.")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress on stderr (by default: a line redrawn in place on a "
    "terminal, else a line every 5 s).",
)
@into(SolveArguments)
def solve_command(args: SolveArguments) -> None:
    """Solve GAME from its initial position (or --root) and print the root's bounds.

    The graph is stored in the database (--db, else $NEGAGRAPH_DATABASE_URL, else
    sqlite:///negagraph.db); running the same command again continues the solve. Ctrl-C
    stops after the current batch, with exit status 130 (a second one at once)."""
    args.check()
    # Ctrl-C is handled from here on: a second one (or one during start-up) ends in one
    # line, the run recorded as stopped; once the run closes, the result is printed.
    with graceful_interrupt() as interrupts:
        try:
            solved = run_solve(args, interrupts)
        except KeyboardInterrupt:
            click.echo(
                "\ninterrupted: "
                + (
                    "nothing is stored"
                    if args.memory
                    else "the solve had not begun: nothing of it was written; run the same "
                    "command again to solve"
                    if interrupts.before_run
                    else "every committed batch is kept; run the same command again to continue"
                ),
                err=True,
            )
            raise click.exceptions.Exit(STOPPED) from None
        interrupts.closing = True
        show(args, solved)


def show(args: SolveArguments, solved: Solved) -> None:
    """The result on stdout, as text or JSON; then the ending notes on stderr; exit with
    the run's status."""
    r, url, game = solved.result, solved.url, solved.game
    if args.as_json:
        click.echo(json.dumps(result_json(game, r, args.root)))
    else:
        for line in describe_result(game, r, args.root):
            click.echo(line)
        if url is not None:
            click.echo(f"  stored in {safe_url(url)}")
    for line in ending_notes(r, url is not None, args.as_json):
        click.echo(line, err=True)
    if exit_status(r):
        raise click.exceptions.Exit(exit_status(r))


__all__ = ["solve_command"]
