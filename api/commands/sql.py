"""``negagraph sql``: run one read-only SQL query on a database, with what the compact
layout needs registered (:mod:`db.sql_functions`), and print its rows."""

from __future__ import annotations

from typing import Any

import click
from sqlalchemy import Engine

from api.commands.common import fail, open_engine, user_errors
from api.commands.options import DB_OPTION
from api.console.table import FORMATS, render
from db import sql_functions
from db.session import database_url


@click.command("sql")
@click.argument("query", metavar="QUERY")
@DB_OPTION
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="How the rows are printed: an aligned table, CSV (a header row first) or JSON "
    "(an array of objects).",
)
def sql_command(query: str, db_url: str | None, fmt: str) -> None:
    """Run QUERY (one SQL statement, read-only) on the database and print its rows.

    On SQLite, notation(variant_id, key), position_key(variant_id, notation) and
    moves(variant_id, key) (a JSON array for json_each) turn the keys of the compact
    layout into positions and moves (docs/sql.md)."""
    with user_errors():
        url = database_url(db_url)
        with open_engine(url) as engine:
            columns, rows = _run(engine, query)
    click.echo(render(columns, rows, fmt))


def _run(engine: Engine, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """*query*'s column names and rows, read in a read-only transaction."""
    raw = engine.raw_connection()
    try:
        driver = raw.driver_connection
        sqlite = engine.dialect.name == "sqlite"
        errors = sql_functions.register(driver) if sqlite else []  # type: ignore[arg-type]
        cursor = raw.cursor()
        try:
            if not sqlite:
                cursor.execute("SET TRANSACTION READ ONLY")
            cursor.execute(query)
            if cursor.description is None:
                fail("the query returns no rows (negagraph sql runs read-only queries)")
            columns = [d[0] for d in cursor.description]
            return columns, [tuple(r) for r in cursor.fetchall()]
        except engine.dialect.loaded_dbapi.Error as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            fail(f"the query failed: {errors[-1] if errors else message}")
        finally:
            cursor.close()
    finally:
        raw.close()


__all__ = ["sql_command"]
