"""Errors raised by the persistence layer, rooted at :class:`~solver.errors.NegagraphError`.

Each also inherits the builtin a caller would naturally catch (``RuntimeError`` for a
database that cannot be used, ``KeyError`` for a missing position); the solve-time errors
derive from :class:`~solver.errors.SolveError` because the solver's store raises them.
"""

from __future__ import annotations

from typing import Self

from solver.errors import NegagraphError, SolveError
from solver.game import Game, params_text


class DatabaseError(NegagraphError, RuntimeError):
    """The database cannot be used: a malformed or unsupported URL, an unreachable server,
    a missing file or directory, or a stored graph that is inconsistent."""


class SchemaError(DatabaseError):
    """The database is not at the schema head this version of negagraph needs (empty,
    behind, or written by another version); the message says how to upgrade it."""


class PositionNotFoundError(NegagraphError, KeyError):
    """The position is not in the database (the variant was never solved that far)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "position not found"


class VariantLockedError(SolveError):
    """Another live writer holds the variant's lock (or took it over from this one)."""


class RulesVersionError(SolveError):
    """The database holds the variant under a different rules version of the game."""

    @classmethod
    def for_variant(cls, game: Game, stored: int, database: str | None = None) -> Self:
        """The error for *game*'s variant stored under rules version *stored* (in the
        database *database*, a URL without its password, when the message should say)."""
        where = "the database" if database is None else f"database {database}"
        return cls(
            f"{where} holds {game.name} ({params_text(game.params)}) under rules version "
            f"{stored}, but this negagraph's {game.name} has rules version {game.version}: "
            "the stored positions and values would not mean the same; use another database"
        )


__all__ = [
    "DatabaseError",
    "PositionNotFoundError",
    "RulesVersionError",
    "SchemaError",
    "VariantLockedError",
]
