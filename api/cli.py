"""The ``negagraph`` command line: the command group, its usage errors, and the console
script's main. The commands live in :mod:`api.commands`, a module each; what they print
in :mod:`api.console`.

Commands stay thin: parse arguments, call solver/db functions, echo. Every error a user
can cause ends as one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Sequence
from typing import Any

import click

from api.commands.check import check_command
from api.commands.db import db_group
from api.commands.games import games_command
from api.commands.query import query_command
from api.commands.serve import serve_command
from api.commands.solve import solve_command
from api.commands.sql import sql_command
from api.commands.status import status_command


class Negagraph(click.Group):
    """The command group: a usage error (an unknown option, a bad value, a missing
    argument) is one ``error: ...`` line naming the command's help, exit status 1 —
    not click's usage block."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        standalone = standalone_mode
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # `negagraph` alone: its help
            if not standalone:
                raise
            assert exc.ctx is not None
            click.echo(exc.ctx.get_help())
            sys.exit(0)
        except click.UsageError as exc:
            if not standalone:
                raise
            where = exc.ctx.command_path if exc.ctx is not None else "negagraph"
            message = exc.format_message().rstrip(".")
            click.echo(f"error: {message} (see `{where} --help`)", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            if not standalone:
                raise
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            if not standalone:
                raise
            click.echo("interrupted", err=True)
            sys.exit(130)
        if standalone:
            sys.exit(rv if isinstance(rv, int) else 0)
        return rv


@click.group(cls=Negagraph, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="negagraph")
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """negagraph: solve two-player games (cyclic ones too) into a queryable database."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


for command in (
    games_command,
    solve_command,
    query_command,
    check_command,
    status_command,
    sql_command,
    serve_command,
    db_group,
):
    cli.add_command(command)


def main() -> None:
    """Run the command line as the ``negagraph`` console script does (its entry point,
    :func:`api.entry.main`, loads this module and calls this)."""
    try:
        cli(prog_name="negagraph")
    finally:
        # The command is over (its result printed, its exit status chosen): a Ctrl-C
        # from here to the process's end would only make a finished command die of
        # SIGINT. (Not in cli() itself, which tests also run in their own process.)
        signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["cli", "main"]
