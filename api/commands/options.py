"""The options and arguments several commands take, declared once: the database URL,
game references, the game and its parameters, ``--json``; a memory size's type; and
:func:`into`, which hands a command its options as one typed value."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from solver.errors import NegagraphError
from solver.memory import check_memory_limit, parse_size

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

DB_OPTION = click.option(
    "--db",
    "db_url",
    metavar="URL",
    help="Database URL (default: $NEGAGRAPH_DATABASE_URL, else sqlite:///negagraph.db).",
)

GAME_REF_OPTION = click.option(
    "--game",
    "game_refs",
    multiple=True,
    metavar="MODULE:CLASS",
    help="Also load the game class this reference names (module:Class or "
    "path/to/file.py:Class; repeatable).",
)

GAME_ARGUMENT = click.argument("game_name", metavar="GAME")


def params_option(help: str = "A game parameter (repeatable).") -> Callable[[F], F]:
    """``-p/--param NAME=VALUE``, repeatable, as ``params``."""
    return click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help=help)


def json_option(help: str = "Print JSON.") -> Callable[[F], F]:
    """``--json``, as ``as_json``."""
    return click.option("--json", "as_json", is_flag=True, help=help)


class MemorySize(click.ParamType[int]):
    """A memory size such as ``4GiB`` or ``512MiB`` (:func:`solver.memory.parse_size`)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return check_memory_limit(parse_size(str(value)))
        except NegagraphError as exc:
            self.fail(str(exc), param, ctx)


def into(options: Callable[..., T]) -> Callable[[Callable[[T], None]], Callable[..., None]]:
    """Decorate a command that takes its options as one value: click's keyword arguments
    (one per option and argument, named as *options*' fields) become ``options(**kw)``,
    built once, before the command runs. Put it under the option decorators."""

    def decorate(command: Callable[[T], None]) -> Callable[..., None]:
        @functools.wraps(command)
        def run(**kwargs: Any) -> None:
            command(options(**kwargs))

        return run

    return decorate


__all__ = [
    "DB_OPTION",
    "GAME_ARGUMENT",
    "GAME_REF_OPTION",
    "MemorySize",
    "into",
    "json_option",
    "params_option",
]
