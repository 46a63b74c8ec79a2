"""``negagraph serve``: the HTTP API under gunicorn."""

from __future__ import annotations

import click

from api.commands.common import load_game_refs, user_errors, warn_plugin_errors
from api.commands.options import DB_OPTION, GAME_REF_OPTION
from db.session import database_url


@click.command("serve")
@DB_OPTION
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (0.0.0.0: every interface).",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=5000,
    show_default=True,
    help="TCP port to listen on.",
)
@click.option(
    "--workers", type=click.IntRange(min=1), default=2, show_default=True, help="Worker processes."
)
@click.option(
    "--connections",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Most simultaneous connections per worker (slow or idle clients hold "
    "a connection, never a worker).",
)
@GAME_REF_OPTION
def serve_command(
    db_url: str | None,
    host: str,
    port: int,
    workers: int,
    connections: int,
    game_refs: tuple[str, ...],
) -> None:
    """Serve the read-only HTTP API (JSON under /api, docs at /api/docs) with gunicorn.

    The database must exist and be at the schema head, and the port free. Ctrl-C or
    SIGTERM stops the server."""
    from api import create_app
    from api.database import check_database
    from api.serve import banner, check_port, serve

    with user_errors():
        load_game_refs(game_refs)
        url = database_url(db_url)
        check_database(url)
        check_port(host, port)
    warn_plugin_errors()
    click.echo(banner(url, host, port, workers, connections), err=True)
    serve(
        create_app({"DATABASE_URL": url}),
        host=host,
        port=port,
        workers=workers,
        connections=connections,
    )


__all__ = ["serve_command"]
