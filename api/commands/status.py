"""``negagraph status``: what a database holds."""

from __future__ import annotations

import json

import click

from api.commands.common import load_game_refs, open_engine, user_errors
from api.commands.options import DB_OPTION, GAME_REF_OPTION, json_option
from api.console.status import status_entry, status_lines
from db.repository import list_runs, list_variants
from db.session import database_url, make_session_factory, safe_url, session_scope


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
    data = [status_entry(s, runs[s.variant.id]) for s in summaries]
    if as_json:
        click.echo(json.dumps({"database": safe_url(url), "variants": data}, default=str))
        return
    for line in status_lines(safe_url(url), data):
        click.echo(line)


__all__ = ["status_command"]
