"""The ``negagraph`` command line: the command group, its usage errors, and the console
script's main. The commands live in :mod:`api.commands`, a module each; what they print
in :mod:`api.console`.

Commands stay thin: parse arguments, call solver/db functions, echo. Every error a user
can cause ends as one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import importlib
import logging
import signal
import sys
from collections.abc import Sequence
from typing import Any

import click

COMMANDS: dict[str, tuple[str, str]] = {
    "games": (
        "api.commands.games:games_command",
        "List the games negagraph can solve, with their parameters (plugins included).",
    ),
    "solve": (
        "api.commands.solve:solve_command",
        "Solve GAME from its initial position (or --root) and print the root's bounds.",
    ),
    "query": (
        "api.commands.query:query_command",
        "Look up POSITION (in GAME's notation): bounds, depths, value and moves best "
        "first; with --search, a heuristic estimate where the database has not decided it.",
    ),
    "check": (
        "api.commands.check:check_command",
        "Check GAME against the Game contract on sampled positions; each violation is "
        "printed with a witness position.",
    ),
    "status": (
        "api.commands.status:status_command",
        "List the stored variants with node counts, root bounds and solve runs (marking "
        "those whose game is not installed here).",
    ),
    "serve": (
        "api.commands.serve:serve_command",
        "Serve the read-only HTTP API (JSON under /api, docs at /api/docs) with gunicorn.",
    ),
    "sql": (
        "api.commands.sql:sql_command",
        "Run QUERY (one SQL statement, read-only) on the database and print its rows.",
    ),
    "db": ("api.commands.db:db_group", "Manage the database schema."),
}
"""Each command's module and attribute, and the first sentence of its help (what
``negagraph --help`` lists). A command's module is imported only when that command
runs (or shows its own help): `negagraph --help` loads none, and `negagraph status`
neither the solver's nor the server's libraries (tests/test_cli.py holds the sentences
to the commands' docstrings)."""


class Negagraph(click.Group):
    """The command group: a usage error (an unknown option, a bad value, a missing
    argument) is one ``error: ...`` line naming the command's help, exit status 1 —
    not click's usage block.

    The commands are loaded on demand from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, _, attr = COMMANDS[cmd_name][0].partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their first sentences, as click lists them, without loading
        any command."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = [(name, short_help(name, limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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


def short_help(name: str, limit: int) -> str:
    """What ``negagraph --help`` lists for command *name*: its first sentence, cut to
    *limit* characters as click cuts a command's help."""
    return click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)


@click.group(cls=Negagraph, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="negagraph")
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """negagraph: solve two-player games (cyclic ones too) into a queryable database."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def preload(args: Sequence[str]) -> None:
    """Import the module of the command *args* name (their first word that is not an
    option: the group's options take no value), as :func:`api.entry.main` does while a
    Ctrl-C still ends the loading in one line."""
    name = next((arg for arg in args if not arg.startswith("-")), None)
    if name in COMMANDS:
        importlib.import_module(COMMANDS[name][0].partition(":")[0])


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


__all__ = ["COMMANDS", "cli", "main", "preload", "short_help"]
