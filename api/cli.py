"""The ``negagraph`` command line.

Commands stay thin: parse arguments, call solver/db functions, echo. Every error a user
can cause ends as one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from types import FrameType
from typing import Any, NoReturn

import click
from sqlalchemy.engine import Engine

from api.views import describe_position
from db import migrate
from db.repository import list_runs, list_variants
from db.session import (
    database_url,
    make_engine,
    make_session_factory,
    safe_url,
    session_scope,
    translate_errors,
)
from db.store import SqlStore
from solver.errors import InvalidPositionError, NegagraphError, UnknownGameError
from solver.game import GameBase, params_text
from solver.games import GAMES, GAMES_ENV, find_game, get_game, plugin_errors
from solver.negamax import SolveResult, solve
from solver.store import Progress, Store
from solver.values import to_json

log = logging.getLogger("negagraph")


class Fail(click.ClickException):
    """A user-facing error: printed as ``error: <message>``, exit status 1."""

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def fail(message: str) -> NoReturn:
    raise Fail(message)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn negagraph's own errors into one-line CLI errors."""
    try:
        yield
    except NegagraphError as exc:
        fail(str(exc))


def parse_params(pairs: tuple[str, ...]) -> dict[str, str]:
    params: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            fail(f"parameter {pair!r} must look like NAME=VALUE (e.g. -p width=5)")
        if name.strip() in params:
            fail(f"parameter {name.strip()!r} is given twice")
        params[name.strip()] = value
    return params


def parse_position(game: GameBase, text: str) -> int:
    """*text* in *game*'s notation; errors name the game."""
    try:
        return game.parse(text)
    except InvalidPositionError as exc:
        fail(f"invalid {game.name} position: {exc}")


def bound_text(v: float | int) -> str:
    if v == math.inf:
        return "+inf"
    if v == -math.inf:
        return "-inf"
    return str(v)


def number(n: float) -> str:
    return f"{n:,.0f}"


DB_OPTION = click.option(
    "--db", "db_url", metavar="URL",
    help="Database URL (default: $NEGAGRAPH_DATABASE_URL, else sqlite:///negagraph.db).",
)


@contextmanager
def open_engine(url: str, *, create: bool = False) -> Iterator[Engine]:
    """An engine for *url*, checked to be at the schema head, disposed on exit.

    With *create* (a command that writes), an empty database (a new SQLite file, say)
    first gets the schema; without it the engine only reads (a missing SQLite file is
    reported, never created, and nothing is written). A database at another schema
    revision is refused either way. Driver errors that mean the database cannot be used
    (not a database, damaged, unreachable...) become :class:`DatabaseError` here."""
    engine = make_engine(url, read_only=not create)
    try:
        with translate_errors(engine):
            if create and migrate.ensure_schema(engine):
                click.echo(f"created the negagraph schema in {safe_url(url)}", err=True)
            migrate.require_head(engine)
            yield engine
    finally:
        engine.dispose()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="negagraph")
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """negagraph: solve two-player games (cyclic ones too) into a queryable database."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


GAME_REF_OPTION = click.option(
    "--game", "game_refs", multiple=True, metavar="MODULE:CLASS",
    help="Also load the game class this reference names (module:Class or "
         "path/to/file.py:Class; repeatable).")


def load_game_refs(refs: tuple[str, ...]) -> None:
    """Register the games *refs* name, here and (through ``$NEGAGRAPH_GAMES``) in any
    process started from here, such as the server's workers."""
    for ref in refs:
        find_game(ref)
    if refs:
        old = os.environ.get(GAMES_ENV, "")
        os.environ[GAMES_ENV] = ",".join(filter(None, (old, *refs)))


def warn_plugin_errors() -> None:
    """One ``warning:`` line per plugin or reference that could not be loaded."""
    for line in plugin_errors():
        click.echo(f"warning: {line}", err=True)


@cli.command()
@GAME_REF_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def games(game_refs: tuple[str, ...], as_json: bool) -> None:
    """List the games negagraph can solve, with their parameters (plugins included)."""
    with user_errors():
        load_game_refs(game_refs)
    warn_plugin_errors()
    described = [
        {**cls.describe(), "source": GAMES.source(name).text()} for name, cls in GAMES.items()
    ]
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    for d in described:
        source = "" if d["source"] == "builtin" else f", {d['source']}"
        click.echo(f"{d['name']} (rules version {d['version']}{source})")
        click.echo(f"    {d['description']}")
        click.echo(f"    notation: {d['notation']}")
        for p in d["parameters"]:
            rng = ""
            if "min" in p or "max" in p:
                rng = f", {p.get('min', '')}..{p.get('max', '')}"
            default = str(p['default']).lower() if p['type'] == 'bool' else p['default']
            click.echo(f"    -p {p['name']}={default}  ({p['type']}{rng}) {p['help']}")


class ProgressLine:
    """A one-line progress display on a terminal (stderr), redrawn at most twice a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = 0.0
        self.drawn = False

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.5:
            return
        self.last = now
        rate = p.expansions / p.seconds if p.seconds > 0 else 0.0
        low = bound_text(-math.inf if p.root_low < -(1 << 59) else p.root_low)
        high = bound_text(math.inf if p.root_high > 1 << 59 else p.root_high)
        line = (
            f"\r{number(p.expansions)} expansions ({number(rate)}/s)  "
            f"{number(p.nodes)} nodes  {number(p.frontier)} frontier  "
            f"root [{low}{'*' if p.root_low_final else ''}, "
            f"{high}{'*' if p.root_high_final else ''}]  {p.seconds:.0f}s"
        )
        click.echo(line.ljust(100), nl=False, err=True)
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            click.echo("\r" + " " * 100 + "\r", nl=False, err=True)


@contextmanager
def graceful_interrupt() -> Iterator[Callable[[], bool]]:
    """The first Ctrl-C asks the solver to stop after the batch in progress; a second one
    interrupts at once (the batch in flight is then lost, committed ones are not)."""
    state = {"stop": False}

    def handler(signum: int, frame: FrameType | None) -> None:
        if state["stop"]:
            raise KeyboardInterrupt
        state["stop"] = True
        click.echo(
            "\nstopping after the current batch (press Ctrl-C again to abort it)...",
            err=True,
        )

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: state["stop"]
    finally:
        signal.signal(signal.SIGINT, previous)


def result_json(game: GameBase, r: SolveResult) -> dict[str, Any]:
    def bound(v: float | int) -> int | None:
        return None if isinstance(v, float) and math.isinf(v) else int(v)

    return {
        "game": r.game,
        "params": r.params,
        "rules_version": game.version,
        "root": r.root_text,
        "low": bound(r.low),
        "high": bound(r.high),
        "low_final": r.low_final,
        "high_final": r.high_final,
        "value": r.value,
        "repetition_value": r.repetition_value,
        "depth_low": r.depth_low,
        "depth_high": r.depth_high,
        "expansions": r.expansions,
        "nodes": r.nodes,
        "edges": r.edges,
        "complete": r.complete,
        "status": r.status,
        "full": r.full,
        "seconds": round(r.seconds, 6),
    }


def describe_result(game: GameBase, r: SolveResult) -> list[str]:
    params = ", ".join(f"{k}={v}" for k, v in r.params.items())
    lines = [f"{r.game}{f' ({params})' if params else ''} from {r.root_text}"]
    flag = {True: "final", False: "not final"}
    if r.value is not None:
        lines.append(f"  value {r.value}" + (" (exact)" if r.complete else ""))
    lines.append(
        f"  low {bound_text(r.low)} ({flag[r.low_final]}), "
        f"high {bound_text(r.high)} ({flag[r.high_final]})"
    )
    if r.repetition_value is not None and r.value is None:
        lines.append(
            f"  value {r.repetition_value} when endless play scores "
            f"{game.repetition_value} (the game's rule)"
        )
    if r.depth_low is not None or r.depth_high is not None:
        dl = "inf" if r.depth_low is None else str(r.depth_low)
        dh = "inf" if r.depth_high is None else str(r.depth_high)
        lines.append(f"  depths: low {dl} plies, high {dh} plies")
    rate = r.expansions / r.seconds if r.seconds > 0 else 0.0
    lines.append(
        f"  {number(r.expansions)} expansions, {number(r.nodes)} nodes, "
        f"{number(r.edges)} edges in {r.seconds:.2f} s ({number(rate)} expansions/s)"
    )
    return lines


@cli.command("solve")
@click.argument("game_name", metavar="GAME")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A game parameter (repeatable), e.g. -p width=5 -p height=4.")
@click.option("--root", metavar="POSITION", help="Root position in the game's notation.")
@click.option("--full", is_flag=True, help="Tablebase mode: expand everything reachable.")
@click.option("--max-expansions", type=click.IntRange(min=0), metavar="N",
              help="Stop after about N expansions (continue later).")
@click.option("--max-seconds", type=click.FloatRange(min=0), metavar="S",
              help="Stop after about S seconds (continue later).")
@click.option("--batch-size", type=click.IntRange(min=1), metavar="N",
              help="Expansions per batch, each one commit (default: adaptive; a full "
                   "solve commits when its new positions reach half the stored ones, "
                   "or every 30 s).")
@click.option("--until", type=click.Choice(["bounds", "value"]), default="bounds",
              show_default=True,
              help="End a partial solve when both root bounds are final, or as soon as "
                   "the value under the game's repetition rule is decided.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@DB_OPTION
@click.option("--memory", is_flag=True, help="Solve in memory and store nothing.")
def solve_command(
    game_name: str,
    params: tuple[str, ...],
    root: str | None,
    full: bool,
    max_expansions: int | None,
    max_seconds: float | None,
    batch_size: int | None,
    until: str,
    as_json: bool,
    db_url: str | None,
    memory: bool,
) -> None:
    """Solve GAME from its initial position (or --root) and print the root's bounds.

    The graph is stored in the database (--db, else $NEGAGRAPH_DATABASE_URL, else
    sqlite:///negagraph.db); running the same command again continues the solve."""
    if memory and db_url:
        fail("--memory and --db exclude each other")
    with user_errors():
        game = get_game(game_name, **parse_params(params))
        display = ProgressLine(enabled=not as_json and sys.stderr.isatty())
        with ExitStack() as stack:
            store: Store | None = None
            url = None
            if not memory:
                url = database_url(db_url)
                engine = stack.enter_context(open_engine(url, create=True))
                store = SqlStore(engine)
            stop = stack.enter_context(graceful_interrupt())
            try:
                r = solve(
                    game,
                    None if root is None else parse_position(game, root),
                    full=full,
                    max_expansions=max_expansions,
                    max_seconds=max_seconds,
                    batch_size=batch_size,
                    until=until,
                    store=store,
                    progress=display,
                    stop=stop,
                )
            finally:
                display.close()
    if as_json:
        click.echo(json.dumps(result_json(game, r)))
        return
    for line in describe_result(game, r):
        click.echo(line)
    if url is not None:
        click.echo(f"  stored in {safe_url(url)}")
    if r.status in ("stopped", "budget"):
        why = "stopped on request" if r.status == "stopped" else "budget exhausted"
        again = "" if url is None else "; run the same command again to continue"
        click.echo(f"  {why} after committing the last batch{again}", err=True)


@cli.command("query")
@click.argument("game_name", metavar="GAME")
@click.argument("position")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A game parameter (repeatable).")
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def query_command(
    game_name: str, position: str, params: tuple[str, ...], db_url: str | None,
    as_json: bool,
) -> None:
    """Look up POSITION (in GAME's notation): bounds, depths, value and moves best first."""
    with user_errors():
        given = parse_params(params)
        try:
            cls = find_game(game_name)
        except UnknownGameError:
            if stored_games(database_url(db_url)) & {game_name}:
                fail(f"the database holds game {game_name!r} but it is not installed here "
                     "(install its plugin package, or name its class as module:Class)")
            raise
        implied = cls.params_for(position)  # e.g. a FEN's material
        game = get_game(game_name, **{**implied, **given})
        key = parse_position(game, position)
        with open_engine(database_url(db_url)) as engine:
            with session_scope(make_session_factory(engine)) as session:
                view = describe_position(session, game, key)
    if as_json:
        click.echo(json.dumps({"game": game.name, "params": dict(game.params), **view}))
        return
    for line in describe_view(view):
        click.echo(line)


def stored_games(url: str) -> set[str]:
    """The names of the games database *url* holds variants of (none if it cannot be
    read: the caller reports its own error)."""
    try:
        with open_engine(url) as engine:
            with session_scope(make_session_factory(engine)) as session:
                return {s.variant.game for s in list_variants(session)}
    except (NegagraphError, Fail):
        return set()


def describe_view(view: dict[str, Any]) -> list[str]:
    def b(v: int | None, inf: str) -> str:
        return inf if v is None else str(v)

    def d(v: int | None) -> str:
        return "inf" if v is None else str(v)

    lines = [f"{view['position']}  ({view['state']})"]
    if "max_low" in view:
        lo, hi = b(view["max_low"], "-inf"), b(view["max_high"], "+inf")
        lines.append(f"  {view['to_move']} to move; from MAX's side: "
                     + (lo if lo == hi else f"[{lo}, {hi}]"))
    if view["value"] is not None:
        lines.append(f"  value {view['value']}")
    lines.append(
        f"  low {b(view['low'], '-inf')} ({'final' if view['low_final'] else 'not final'}),"
        f" high {b(view['high'], '+inf')} ({'final' if view['high_final'] else 'not final'})"
    )
    if view["repetition_value"] is not None and view["value"] is None:
        lines.append(f"  value {view['repetition_value']} under the game's repetition rule")
    lines.append(f"  depths: low {d(view['depth_low'])} plies, high {d(view['depth_high'])} plies")
    if view["moves"]:
        lines.append("  moves, best first (the mover's bounds; plies to realise low/high):")
        width = max(len(m["move"]) for m in view["moves"])
        for m in view["moves"]:
            lo, hi = b(m["move_low"], "-inf"), b(m["move_high"], "+inf")
            span = lo if lo == hi else f"[{lo}, {hi}]"
            # the move's own depths: one ply more than the child's opposite depths
            plies_low = "inf" if m["depth_high"] is None else str(m["depth_high"] + 1)
            plies_high = "inf" if m["depth_low"] is None else str(m["depth_low"] + 1)
            lines.append(
                f"    {m['move'].ljust(width)}  {span:<10} plies {plies_low}/{plies_high}"
                f"  -> {m['position']} ({m['state']})"
            )
    return lines


@cli.command("check")
@click.argument("game_name", metavar="GAME")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A game parameter (repeatable).")
@click.option("--positions", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Positions to sample and check.")
@click.option("--max-seconds", type=click.FloatRange(min=0), default=60.0,
              show_default=True, help="Time budget.")
@click.option("--symmetry-pairs", type=click.IntRange(min=0), default=20, show_default=True,
              help="Positions whose bounds are solved and compared with their canonical "
                   "image's (games with symmetry).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the random playouts.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def check_command(game_name: str, params: tuple[str, ...], positions: int,
                  max_seconds: float, symmetry_pairs: int, seed: int, as_json: bool) -> None:
    """Check GAME against the Game contract on sampled positions; each violation is
    printed with a witness position. Exit status 1 if any is found."""
    from solver.check import check_game

    with user_errors():
        game = get_game(game_name, **parse_params(params))
        report = check_game(game, max_positions=positions, max_seconds=max_seconds,
                            symmetry_pairs=symmetry_pairs, seed=seed)
    if as_json:
        click.echo(json.dumps(report.to_json()))
    else:
        reach = " (every reachable one)" if report.exhausted else ""
        click.echo(f"{game.name} ({params_text(game.params) or 'no parameters'}): "
                   f"{report.positions} positions checked{reach}, "
                   f"{report.symmetry_pairs} symmetry pairs solved, {report.seconds:.1f}s")
        for v in report.violations:
            click.echo(f"  violation {v}")
        for note in report.notes:
            click.echo(f"  note: {note}")
        if report.ok:
            click.echo("  ok: no violation found")
    if not report.ok:
        n = len(report.violations)
        fail(f"{game.name} breaks the Game contract: {n} violation{'s' if n != 1 else ''}"
             + ("" if as_json else " (listed above)"))


@cli.command("status")
@DB_OPTION
@GAME_REF_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
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
    click.echo(f"{safe_url(url)}: {len(data)} variant{'s' if len(data) != 1 else ''}")
    for v in data:
        root = v["root_bounds"]
        bounds = "" if root is None else f"  root {v['root']} [{root['low']}, {root['high']}]"
        missing = "" if v["installed"] else " [game not installed]"
        click.echo(f"  {v['game']} ({v['params']}) rules v{v['rules_version']}: "
                   f"{number(v['nodes'])} nodes{bounds}{missing}")
        for run in v["runs"]:
            click.echo(
                f"    run {run['id']} {run['status']:<8} {run['started_at']}  "
                f"{number(run['expansions'])} expansions  +{number(run['nodes_added'])} nodes"
                f"  {run['seconds']:.1f}s"
            )


def status_entry(summary: Any, runs: list[Any]) -> dict[str, Any]:
    def bounds(b: Any) -> dict[str, Any]:
        return {
            "low": None if math.isinf(b.low) else b.low,
            "high": None if math.isinf(b.high) else b.high,
            "low_final": b.low_final, "high_final": b.high_final,
        }

    v = summary.variant
    return {
        "id": v.id,
        "game": v.game,
        "installed": v.game in GAMES,
        "game_source": v.game_source,
        "params": v.params,
        "rules_version": v.rules_version,
        "nodes": summary.nodes,
        "root": v.root_position,
        "root_bounds": None if summary.root_bounds is None else bounds(summary.root_bounds),
        "runs": [
            {
                "id": r.id, "status": r.status, "started_at": r.started_at.isoformat(),
                "finished_at": None if r.finished_at is None else r.finished_at.isoformat(),
                "root": r.root_position, "full": r.tablebase,
                "expansions": r.expansions, "nodes_added": r.nodes_added,
                "edges_added": r.edges_added, "nodes": r.nodes, "frontier": r.frontier,
                "root_bounds": bounds(r.root_bounds), "seconds": r.seconds,
            }
            for r in runs
        ],
    }


@cli.command("serve")
@DB_OPTION
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(1, 65535), default=5000, show_default=True,
              help="TCP port to listen on.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Worker processes.")
@click.option("--connections", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Most simultaneous connections per worker (slow or idle clients hold "
                   "a connection, never a worker).")
@GAME_REF_OPTION
def serve_command(db_url: str | None, host: str, port: int, workers: int,
                  connections: int, game_refs: tuple[str, ...]) -> None:
    """Serve the read-only HTTP API (JSON under /api, docs at /api/docs) with gunicorn.

    The database must exist and be at the schema head, and the port free. Ctrl-C or
    SIGTERM stops the server."""
    from api import create_app
    from api.database import check_database
    from api.serve import check_port, serve

    with user_errors():
        load_game_refs(game_refs)
        url = database_url(db_url)
        check_database(url)
        check_port(host, port)
    warn_plugin_errors()
    shown = f"[{host}]" if ":" in host else host
    click.echo(
        f"negagraph: serving {safe_url(url)} at http://{shown}:{port}/api "
        f"(docs: http://{shown}:{port}/api/docs) with {workers} worker"
        f"{'s' if workers != 1 else ''} of up to {connections} connection"
        f"{'s' if connections != 1 else ''}",
        err=True,
    )
    serve(create_app({"DATABASE_URL": url}), host=host, port=port, workers=workers,
          connections=connections)


@cli.group("db")
def db_group() -> None:
    """Manage the database schema."""


@db_group.command("upgrade")
@DB_OPTION
@click.option("--allow-other-tables", is_flag=True,
              help="Create the schema even in a database that holds other tables "
                   "(one shared with another application).")
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


def main() -> None:
    """Entry point of the ``negagraph`` console script."""
    cli(prog_name="negagraph")


__all__ = ["cli", "main", "to_json"]
