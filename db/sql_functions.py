"""The SQL functions ``negagraph sql`` registers on a SQLite connection, so that a query
can turn keys into positions and back, and list a position's moves as rows — what the
compact layout (:mod:`db.compact`) leaves to the rules:

- ``notation(variant_id, key)``: the position's notation (``key`` an integer, as a
  compact table stores it, or a ``nodes.key`` blob);
- ``position_key(variant_id, notation)``: the position's key as a compact table stores
  it (canonical where the game uses symmetry); NULL for text that is not a position;
- ``moves(variant_id, key)``: its moves as a JSON array of objects ``{"move", "order",
  "key", "position"}`` (the resulting position's stored key and notation), for SQLite's
  ``json_each``: ``SELECT m.value ->> 'move' FROM json_each(moves(3, 4369)) AS m``.

Each variant's game is made once per connection from its ``variants`` row. A variant
whose game is not installed makes the functions raise, which SQLite reports as the
query's error.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from db import compact
from db.models import decode_key
from solver.errors import NegagraphError
from solver.game import Game
from solver.games import get_game


class _Games:
    """The games of the variants a connection's queries name, made once each."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.games: dict[int, Game] = {}

    def __call__(self, variant_id: int) -> Game:
        game = self.games.get(variant_id)
        if game is None:
            row = self.conn.execute(
                "SELECT game, params_json FROM variants WHERE id = ?", (variant_id,)
            ).fetchone()
            if row is None:
                raise ValueError(f"no variant {variant_id} in this database")
            game = self.games[variant_id] = get_game(row[0], **json.loads(row[1]))
        return game


def _key(stored: int | bytes) -> int:
    """A key as a compact table (an integer) or ``nodes`` (a blob) stores it."""
    if isinstance(stored, bytes):
        return decode_key(stored)
    return compact.unsigned(int(stored))


def register(conn: sqlite3.Connection) -> list[str]:
    """Register the functions of the module docs on *conn*; the messages of the errors
    they raise will be appended to the list returned (SQLite itself only says that a
    user-defined function raised an exception)."""
    games = _Games(conn)
    errors: list[str] = []

    def reported(function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            try:
                return function(*args)
            except Exception as exc:
                errors.append(f"{function.__name__}(): {exc}")
                raise

        return call

    def notation(variant_id: int, key: int | bytes) -> str:
        return games(variant_id).format(_key(key))

    def position_key(variant_id: int, text: str) -> int | None:
        game = games(variant_id)
        try:
            key = game.parse(text)
        except NegagraphError:
            return None
        return compact.signed(game.canonical(key) if game.uses_symmetry else key)

    def moves(variant_id: int, key: int | bytes) -> str:
        game = games(variant_id)
        found = []
        for order, (move, child) in enumerate(game.children(_key(key))):
            stored = game.canonical(child) if game.uses_symmetry else child
            found.append(
                {
                    "move": move,
                    "order": order,
                    "key": compact.signed(stored),
                    "position": game.format(child),
                }
            )
        return json.dumps(found)

    functions: list[tuple[str, Callable[..., Any]]] = [
        ("notation", notation),
        ("position_key", position_key),
        ("moves", moves),
    ]
    for name, function in functions:
        conn.create_function(name, 2, reported(function), deterministic=True)
    return errors


__all__ = ["register"]
