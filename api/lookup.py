"""Lookups from Python: a solved database opened read-only, answering with the same
records as the HTTP API (``GET /api/games/<game>/positions`` and ``.../line``).

>>> from api.lookup import SolvedDatabase
>>> with SolvedDatabase("sqlite:///negagraph.db") as db:  # doctest: +SKIP
...     answer = db.position("connect-four", "..../..../..../....", width=4, height=4)
...     answer["value"], answer["moves"][0]["move"]
(0, '1')

Every method opens one session and closes it, so a :class:`SolvedDatabase` can live as
long as the program and be used while a solve writes into the same database: each answer
sees what was committed when it was asked.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from sqlalchemy import Engine

from api.play import describe_line
from api.schemas import to_data
from api.views import describe_position
from db import migrate
from db.records import VariantSummary
from db.repository import list_variants
from db.session import make_engine, make_session_factory, safe_url
from solver.game import GameBase
from solver.games import get_game
from solver.strategy import BOUNDS


class SolvedDatabase:
    """A negagraph database opened for reading.

    :param url: a database URL (default: ``$NEGAGRAPH_DATABASE_URL``, else
        ``sqlite:///negagraph.db``); it is never written, and a SQLite file that does not
        exist is not created.
    :raises DatabaseError: if the URL is malformed or the file does not exist.
    """

    def __init__(self, url: str | None = None) -> None:
        self.engine: Engine = make_engine(url, read_only=True)
        self._sessions = make_session_factory(self.engine)
        self._checked = False

    def __repr__(self) -> str:
        return f"SolvedDatabase({safe_url(self.engine)!r})"

    def __enter__(self) -> SolvedDatabase:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the database's connections."""
        self.engine.dispose()

    def _require_head(self) -> None:
        if not self._checked:
            migrate.require_head(self.engine)
            self._checked = True

    def variants(self) -> list[VariantSummary]:
        """The stored variants, with their node counts and latest runs.

        :raises SchemaError: if the database is not at the schema head.
        """
        self._require_head()
        with self._sessions() as session:
            return list_variants(session)

    def position(self, game: str | GameBase, position: str, **params: object) -> dict[str, Any]:
        """The answer of ``GET /api/games/<game>/positions?p=<position>``: the position's
        bounds, flags, value, depths and state, and its moves best first.

        :param game: a game name (with its *params*) or a configured game.
        :raises UnknownGameError: for an unknown game name.
        :raises InvalidParameterError: for bad parameters.
        :raises InvalidPositionError: if *position* does not parse.
        :raises PositionNotFoundError: if the position (or the variant) is not stored.
        :raises RulesVersionError: if the variant is stored under another rules version.
        """
        g = self._game(game, params)
        key = g.parse(position)
        self._require_head()
        with self._sessions() as session:
            answer = describe_position(session, g, key)
        data: dict[str, Any] = to_data(answer)
        return data

    def line(
        self,
        game: str | GameBase,
        position: str,
        *,
        bound: str = "value",
        max_plies: int | None = None,
        **params: object,
    ) -> dict[str, Any]:
        """The answer of ``GET /api/games/<game>/line``: the principal line from
        *position* realising its value (default) or its ``low`` or ``high`` *bound*.

        :raises ValueError: for another *bound*; and the errors of :meth:`position`.
        """
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {', '.join(BOUNDS)}, not {bound!r}")
        g = self._game(game, params)
        key = g.parse(position)
        self._require_head()
        with self._sessions() as session:
            line = describe_line(session, g, key, bound, max_plies=max_plies)
        return {
            "game": g.name,
            "params": dict(g.params),
            "bound": line.bound,
            "start": to_data(line.start),
            "steps": [to_data(step) for step in line.steps],
            "end": line.end,
            "plies": len(line.steps),
        }

    @staticmethod
    def _game(game: str | GameBase, params: dict[str, object]) -> GameBase:
        if isinstance(game, GameBase):
            if params:
                raise TypeError("give parameters with a game name, not with a built game")
            return game
        return get_game(game, **params)


__all__ = ["SolvedDatabase"]
