"""``negagraph db``: the database schema."""

from __future__ import annotations

import click

from api.commands.common import user_errors
from api.commands.options import DB_OPTION
from db import migrate
from db.session import database_url, make_engine, safe_url, translate_errors


@click.group("db")
def db_group() -> None:
    """Manage the database schema."""


@db_group.command("upgrade")
@DB_OPTION
@click.option(
    "--allow-other-tables",
    is_flag=True,
    help="Create the schema even in a database that holds other tables "
    "(one shared with another application).",
)
def db_upgrade(db_url: str | None, allow_other_tables: bool) -> None:
    """Create the schema, or upgrade it to the newest revision."""
    with user_errors():
        url = database_url(db_url)
        engine = make_engine(url)
        try:
            with translate_errors(engine):
                if not allow_other_tables:
                    migrate.check_other_tables(engine)
                migrate.upgrade(engine)
        finally:
            engine.dispose()
    click.echo(f"{safe_url(url)} is at schema revision {migrate.head_revision()}")


__all__ = ["db_group"]
