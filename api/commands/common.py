"""What the commands share: one-line user errors, game parameters and positions as typed
on the command line, game references, and opening a database."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click
from sqlalchemy.engine import Engine

from db import migrate
from db.session import make_engine, safe_url, translate_errors
from solver.errors import InvalidPositionError, NegagraphError
from solver.game import GameBase
from solver.games import GAMES_ENV, find_game, plugin_errors


class Fail(click.ClickException):
    """A user-facing error: printed as ``error: <message>``, exit status 1."""

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def fail(message: str) -> NoReturn:
    raise Fail(message)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn negagraph's own errors into one-line CLI errors."""
    try:
        yield
    except NegagraphError as exc:
        fail(str(exc))


def parse_params(pairs: tuple[str, ...]) -> dict[str, str]:
    """``-p NAME=VALUE`` pairs as a mapping (values as text, for the game to parse)."""
    params: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            fail(f"parameter {pair!r} must look like NAME=VALUE (e.g. -p width=5)")
        if name.strip() in params:
            fail(f"parameter {name.strip()!r} is given twice")
        params[name.strip()] = value
    return params


def parse_position(game: GameBase, text: str) -> int:
    """*text* in *game*'s notation; errors name the game."""
    try:
        return game.parse(text)
    except InvalidPositionError as exc:
        fail(f"invalid {game.name} position: {exc}")


@contextmanager
def open_engine(url: str, *, create: bool = False) -> Iterator[Engine]:
    """An engine for *url*, checked to be at the schema head, disposed on exit.

    With *create* (a command that writes), an empty database (a new SQLite file, say)
    first gets the schema; without it the engine only reads (a missing SQLite file is
    reported, never created, and nothing is written). A database at another schema
    revision is refused either way. Driver errors that mean the database cannot be used
    (not a database, damaged, unreachable...) become :class:`DatabaseError` here."""
    engine = make_engine(url, read_only=not create)
    try:
        with translate_errors(engine):
            if create and migrate.ensure_schema(engine):
                click.echo(f"created the negagraph schema in {safe_url(url)}", err=True)
            migrate.require_head(engine)
            yield engine
    finally:
        engine.dispose()


def load_game_refs(refs: tuple[str, ...]) -> None:
    """Register the games *refs* name, here and (through ``$NEGAGRAPH_GAMES``) in any
    process started from here, such as the server's workers."""
    for ref in refs:
        find_game(ref)
    if refs:
        old = os.environ.get(GAMES_ENV, "")
        os.environ[GAMES_ENV] = ",".join(filter(None, (old, *refs)))


def warn_plugin_errors() -> None:
    """One ``warning:`` line per plugin or reference that could not be loaded."""
    for line in plugin_errors():
        click.echo(f"warning: {line}", err=True)


__all__ = [
    "Fail",
    "fail",
    "load_game_refs",
    "open_engine",
    "parse_params",
    "parse_position",
    "user_errors",
    "warn_plugin_errors",
]
