"""The game registry: one explicit table of every built-in game.

>>> from solver.games import get_game
>>> get_game("connect-four", width=5, height=4).params
{'width': 5, 'height': 4, 'symmetry': False}
"""

from __future__ import annotations

from solver.errors import UnknownGameError
from solver.game import GameBase
from solver.games.chess_endgame import ChessGame
from solver.games.connect_four import ConnectFour
from solver.games.domino_tiling import DominoTiling
from solver.games.e_valuate import EValuate
from solver.games.graph_share import GraphShare
from solver.games.grundy import Grundy
from solver.games.nap import Nap
from solver.games.number_game import NumberGame
from solver.games.tic_tac_toe import TicTacToe

GAMES: dict[str, type[GameBase]] = {
    cls.name: cls
    for cls in (
        NumberGame,
        TicTacToe,
        ConnectFour,
        Grundy,
        Nap,
        ChessGame,
        EValuate,
        DominoTiling,
        GraphShare,
    )
}
"""Every registered game class by name."""


def find_game(name: str) -> type[GameBase]:
    """The game class registered as *name*.

    :raises UnknownGameError: if no game has that name.
    """
    try:
        return GAMES[name]
    except KeyError:
        raise UnknownGameError(
            f"unknown game {name!r} (known games: {', '.join(sorted(GAMES))})"
        ) from None


def get_game(name: str, **params: object) -> GameBase:
    """A configured game: *name* with *params* (text values are converted).

    :raises UnknownGameError: if no game has that name.
    :raises InvalidParameterError: for unknown, malformed or out-of-range parameters.
    """
    return find_game(name)(**params)


__all__ = ["GAMES", "find_game", "get_game"]
