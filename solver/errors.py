"""The one exception hierarchy of negagraph.

Every error roots at :class:`NegagraphError` and also inherits the builtin a caller would
naturally catch (python-chess style), so ``except ValueError`` keeps working for callers who
do not know negagraph's types. Errors become HTTP statuses only in ``api/errors.py``.
"""

from __future__ import annotations


class NegagraphError(Exception):
    """Base of every error negagraph raises on purpose."""


class UnknownGameError(NegagraphError, KeyError):
    """No game is registered under the requested name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown game"


class InvalidParameterError(NegagraphError, ValueError):
    """A game parameter (or a solver option) is unknown, malformed or out of range."""


class InvalidPositionError(NegagraphError, ValueError):
    """A position's text notation cannot be parsed, or describes an impossible position."""


class SolveError(NegagraphError, RuntimeError):
    """The solver cannot go on (for example, a store that belongs to another game)."""


class ContractError(NegagraphError, TypeError):
    """A game breaks the Game contract (a missing method, a malformed declared fact, a
    plugin that is not a game class)."""
