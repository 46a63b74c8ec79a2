"""Estimates beyond the store, as :class:`api.schemas.Estimate`, shared by ``negagraph
query --search`` and ``GET /api/games/<game>/estimate``.

Where the database holds a position's exact value that value is the answer and nothing
is searched. Elsewhere a heuristic search (:func:`solver.estimate.estimate`) scores the
position, using the values the database has proven as exact leaves; the answer carries
the position's proven bounds beside the score, so that the two are never confused.
Nothing here writes: an estimate is not a bound and never enters the database.
"""

from __future__ import annotations

from api.schemas import Estimate, EstimateMove
from api.views import check_rules_version, describe_position, stored_bounds
from db.records import PositionRecord, VariantRecord
from db.repository import Reader, find_variant, stored_positions
from solver.estimate import estimate, estimate_rules
from solver.game import Game, PositionKey
from solver.values import encode


def proven_value(rec: PositionRecord | None) -> int | None:
    """The exact value *rec* holds (bounds equal and both final), else ``None``."""
    if rec is None or not (rec.bounds.low_final and rec.bounds.high_final):
        return None
    low, high = stored_bounds(rec)
    return low if low == high and encode(low) is not None else None


class StoredValues:
    """The exact values a stored variant holds, as :func:`solver.estimate.estimate`'s
    *known*: asked for a (canonical) key it reads that position and its children in one
    query, since a search asks for the children next; every answer is kept."""

    def __init__(self, session: Reader, game: Game, variant_id: int) -> None:
        self.session = session
        self.game = game
        self.variant_id = variant_id
        self.values: dict[PositionKey, int | None] = {}

    def __call__(self, key: PositionKey) -> int | None:
        values = self.values
        if key in values:
            return values[key]
        # (not a set minus values.keys(): that copies every key cached so far, each call)
        wanted = [k for k in {key, *self._children(key)} if k not in values]
        found = stored_positions(self.session, self.variant_id, wanted, game=self.game)
        for k in wanted:
            values[k] = proven_value(found.get(k))
        return values[key]

    def _children(self, key: PositionKey) -> list[PositionKey]:
        """The positions the moves of *key* lead to (canonical keys)."""
        game = self.game
        if game.uses_symmetry:
            return [game.canonical(c) for _, c in game.children(key)]
        return [c for _, c in game.children(key)]


def _stored(
    session: Reader | None, game: Game, key: PositionKey
) -> tuple[VariantRecord | None, PositionRecord | None]:
    """*game*'s variant in *session*'s database and the record of *key* there (``None``
    where there is no database, variant or record).

    :raises RulesVersionError: if the variant is stored under another rules version."""
    variant = None if session is None else find_variant(session, game)
    if session is None or variant is None:
        return variant, None
    check_rules_version(game, variant)
    stored = game.canonical(key) if game.uses_symmetry else key
    return variant, stored_positions(session, variant.id, [stored], game=game).get(stored)


def estimate_view(
    session: Reader | None,
    game: Game,
    key: PositionKey,
    depth: int | None,
    seconds: float | None,
    *,
    cap: float | None = None,
) -> Estimate:
    """The estimate of *key*, *depth* plies deep or for about *seconds* (exactly one of
    them; *cap*: a server's limit on either, :func:`solver.estimate.estimate`), with the
    bounds *session*'s database holds (``None``: no database; then, or when the variant
    is not stored, the search knows no proven values).

    :raises InvalidParameterError: for a game that cannot be estimated, bad limits, or a
        terminal position the database does not hold (its value is the rules').
    :raises RulesVersionError: if the variant is stored under another rules version.
    """
    estimate_rules(game, depth=depth, seconds=seconds)  # refuse before reading anything
    variant, rec = _stored(session, game, key)
    low, high = stored_bounds(rec)
    children = game.children(key)
    texts = game.format_many([c for _, c in children])
    side = game.player_to_move(key)
    answer = Estimate(
        game=game.name,
        params=dict(game.params),
        position=game.format(key),
        kind="proven",
        searched=False,
        proven_value=proven_value(rec),
        best_move=None,
        score=None,
        exact=True,
        depth=None,
        positions=0,
        seconds=0.0,
        rate=0.0,
        low=encode(low),
        high=encode(high),
        low_final=rec is not None and rec.bounds.low_final,
        high_final=rec is not None and rec.bounds.high_final,
        stored=rec is not None,
        moves=[EstimateMove(move=m, position=t) for (m, _), t in zip(children, texts, strict=True)],
    )
    if side is not None:  # (left out of the JSON for games that do not say who moves)
        answer = answer.model_copy(update={"to_move": "MAX" if side == 0 else "MIN"})
    if session is not None and answer.proven_value is not None:
        moves = describe_position(session, game, key).moves  # best first
        return answer.model_copy(update={"best_move": moves[0].move if moves else None})
    known = None
    if session is not None and variant is not None:
        known = StoredValues(session, game, variant.id)
    result = estimate(game, key, depth=depth, seconds=seconds, known=known, cap=cap)
    return answer.model_copy(
        update={
            "kind": "estimate",
            "searched": True,
            "best_move": result.best_move,
            "score": result.score,
            "exact": result.exact,
            "depth": result.depth,
            "positions": result.positions,
            "seconds": result.seconds,
            "rate": result.rate,
        }
    )


__all__ = ["StoredValues", "estimate_view", "proven_value"]
