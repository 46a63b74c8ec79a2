"""``negagraph status``: what a database holds."""

from __future__ import annotations

import json

import click
from sqlalchemy import select

from api.commands.common import load_game_refs, open_engine, user_errors
from api.commands.options import DB_OPTION, GAME_REF_OPTION, json_option
from api.console.status import status_entry, status_lines
from db.models import ChanceNode
from db.records import ChanceValues, VariantSummary
from db.repository import Reader, list_runs, list_variants, stored_positions
from db.session import database_url, make_session_factory, safe_url, session_scope
from solver.errors import NegagraphError
from solver.games import get_game


@click.command("status")
@DB_OPTION
@GAME_REF_OPTION
@json_option()
def status_command(db_url: str | None, game_refs: tuple[str, ...], as_json: bool) -> None:
    """List the stored variants with node counts, root bounds and solve runs (marking
    those whose game is not installed here)."""
    with user_errors():
        load_game_refs(game_refs)
        url = database_url(db_url)
        with open_engine(url) as engine:
            with session_scope(make_session_factory(engine)) as session:
                summaries = list_variants(session)
                runs = {s.variant.id: list_runs(session, s.variant.id) for s in summaries}
                odds = {s.variant.id: chance_root(session, s) for s in summaries}
    data = [status_entry(s, runs[s.variant.id], odds[s.variant.id]) for s in summaries]
    if as_json:
        click.echo(json.dumps({"database": safe_url(url), "variants": data}, default=str))
        return
    for line in status_lines(safe_url(url), data):
        click.echo(line)


def chance_root(session: Reader, summary: VariantSummary) -> ChanceValues | None:
    """The root's chance values (its expected value for its player, rounded outwards) of
    a game of chance's variant, whose node rows' integer bounds say nothing of it;
    ``None`` for other games, a game not installed here, or a root not stored."""
    v = summary.variant
    has_chance = session.execute(
        select(ChanceNode.id).where(ChanceNode.variant_id == v.id).limit(1)
    ).first()
    if has_chance is None:
        return None  # (asked first: building a game may import its library, python-chess)
    try:
        game = get_game(v.game, **dict(v.params_json))
    except NegagraphError:
        return None  # not installed (status says so), or its parameters changed
    if not game.facts.chance or v.root_position is None:
        return None
    try:
        key = game.parse(v.root_position)
    except NegagraphError:
        return None
    found = stored_positions(session, v.id, [key], chance=True, game=game).get(key)
    return None if found is None else found.chance


__all__ = ["status_command"]
