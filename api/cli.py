"""The ``negagraph`` command line.

Commands stay thin: parse arguments, call solver/db functions, echo. Every error a user
can cause ends as one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from types import FrameType
from typing import Any, NoReturn

import click
from sqlalchemy.engine import Engine

from api.cli_solve import STOPPED, ending_notes, exit_status
from api.cli_status import status_entry, status_lines
from api.cli_text import duration, number
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
from solver.memory import (
    DEFAULT_FRACTION,
    MINIMUM,
    check_memory_limit,
    default_memory_limit,
    format_size,
    parse_size,
)
from solver.negamax import solve
from solver.run import SolveResult, Until, check_arguments
from solver.store import Progress, Store
from solver.values import bound_text, public_to_json, to_json, to_public

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


DB_OPTION = click.option(
    "--db",
    "db_url",
    metavar="URL",
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


class Negagraph(click.Group):
    """The command group: a usage error (an unknown option, a bad value, a missing
    argument) is one ``error: ...`` line naming the command's help, exit status 1 —
    not click's usage block."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        standalone = standalone_mode
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # `negagraph` alone: its help
            if not standalone:
                raise
            assert exc.ctx is not None
            click.echo(exc.ctx.get_help())
            sys.exit(0)
        except click.UsageError as exc:
            if not standalone:
                raise
            where = exc.ctx.command_path if exc.ctx is not None else "negagraph"
            message = exc.format_message().rstrip(".")
            click.echo(f"error: {message} (see `{where} --help`)", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            if not standalone:
                raise
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            if not standalone:
                raise
            click.echo("interrupted", err=True)
            sys.exit(130)
        if standalone:
            sys.exit(rv if isinstance(rv, int) else 0)
        return rv


@click.group(cls=Negagraph, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="negagraph")
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """negagraph: solve two-player games (cyclic ones too) into a queryable database."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


GAME_REF_OPTION = click.option(
    "--game",
    "game_refs",
    multiple=True,
    metavar="MODULE:CLASS",
    help="Also load the game class this reference names (module:Class or "
    "path/to/file.py:Class; repeatable).",
)


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
            default = str(p["default"]).lower() if p["type"] == "bool" else p["default"]
            click.echo(f"    -p {p['name']}={default}  ({p['type']}{rng}) {p['help']}")


LOG_EVERY = 5.0
"""Seconds between progress lines when stderr is not a terminal."""

REDRAW_EVERY = 1.0
"""Seconds between redraws of the terminal's progress line while nothing is reported."""


class ProgressDisplay:
    """A solve's progress on stderr, never silent for long.

    On a terminal (*mode* ``line``): one line redrawn in place, at most twice a second
    when the solver reports and every :data:`REDRAW_EVERY` seconds by a ticker thread,
    so long steps (loading, a commit, the retrograde pass) show their name and the time
    ticking. Elsewhere (*mode* ``log``): a line every :data:`LOG_EVERY` seconds with the
    same figures. An ETA is shown while expanding when the remaining work is known: a
    budget (``--max-expansions`` at the current rate, ``--max-seconds``), or in a full
    solve a shrinking frontier (at the rate it shrinks)."""

    def __init__(
        self,
        mode: str,
        *,
        full: bool = False,
        max_expansions: int | None = None,
        max_seconds: float | None = None,
    ) -> None:
        self.mode = mode
        self.full = full
        self.max_expansions = max_expansions
        self.max_seconds = max_seconds
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.latest: Progress | None = None
        self.phase = "loading the stored graph"
        self.last_drawn = 0.0
        self.last_logged = self.started
        self.drawn = False
        self.samples: deque[tuple[float, int]] = deque()
        """(time, frontier) while expanding, the last minute: the frontier's trend."""
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self) -> ProgressDisplay:
        if self.mode != "off":
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()
        return self

    def __call__(self, p: Progress) -> None:
        with self.lock:
            self.latest = p
            self.phase = p.phase
            now = time.monotonic()
            if p.phase == "expanding":
                self.samples.append((now, p.frontier))
                while self.samples and now - self.samples[0][0] > 60:
                    self.samples.popleft()
            if self.mode == "line" and now - self.last_drawn >= 0.5:
                self._draw(now)

    def _tick(self) -> None:
        period = REDRAW_EVERY if self.mode == "line" else min(1.0, LOG_EVERY)
        while not self._stop.wait(period):
            with self.lock:
                now = time.monotonic()
                if self.mode == "line" and now - self.last_drawn >= REDRAW_EVERY:
                    self._draw(now)
                elif self.mode == "log" and now - self.last_logged >= LOG_EVERY:
                    self.last_logged = now
                    click.echo(f"progress: {self.text(now)}", err=True)

    def _draw(self, now: float) -> None:
        self.last_drawn = now
        line = self.text(now)
        width = max(100, len(line))
        click.echo("\r" + line.ljust(width), nl=False, err=True)
        self.drawn = True

    def text(self, now: float) -> str:
        """The figures, the phase, the time so far and the ETA, if known."""
        elapsed = duration(now - self.started)
        p = self.latest
        if p is None:
            return f"{self.phase}  {elapsed}"
        rate = p.expansions / p.seconds if p.seconds > 0 else 0.0
        low = bound_text(to_public(p.root_low))
        high = bound_text(to_public(p.root_high))
        eta = self.eta(p, rate, now) if self.phase == "expanding" else None
        memory = (
            format_size(p.rss)
            + ("" if p.memory_limit is None else f" of {format_size(p.memory_limit)}")
            + (
                ""
                if not p.resident_nodes or p.resident_nodes >= p.nodes
                else f", {number(p.resident_nodes)} nodes resident"
            )
        )
        tiers = (
            f"  tiers {p.tiers_done}/{p.tiers_total}"
            + ("" if p.units_total == p.tiers_total else f" units {p.units_done}/{p.units_total}")
            + ("" if p.workers <= 1 else f" on {p.workers} workers")
            + ("" if p.eta is None else f" ~{duration(p.eta)} left")
            if p.tiers_total
            else ""
        )
        return (
            f"{number(p.expansions)} expansions ({number(rate)}/s)  "
            f"{number(p.nodes)} nodes{tiers}  {number(p.frontier)} frontier  "
            f"root [{low}{'*' if p.root_low_final else ''}, "
            f"{high}{'*' if p.root_high_final else ''}]  RAM {memory}  {elapsed}  {self.phase}"
            + ("" if eta is None else f"  {eta}")
        )

    def eta(self, p: Progress, rate: float, now: float) -> str | None:
        """``~T left (why)``: the soonest end that is known, or ``None``."""
        ends: list[tuple[float, str]] = []
        if self.max_seconds is not None:
            ends.append((self.max_seconds - p.seconds, "time budget"))
        if self.max_expansions is not None and rate > 0:
            ends.append(((self.max_expansions - p.expansions) / rate, "expansion budget"))
        if self.full and len(self.samples) >= 2:
            (t0, f0), (t1, f1) = self.samples[0], self.samples[-1]
            if f1 < f0 and t1 > t0:
                ends.append((f1 / ((f0 - f1) / (t1 - t0)), "frontier draining"))
        if not ends:
            return None
        left, why = min(ends)
        return f"~{duration(left)} left ({why})"

    def note(self, line: str) -> None:
        """Print *line* on stderr (under the progress line, which is redrawn), even with
        ``-q``: notices the user must see (a dashboard's address)."""
        with self.lock:
            if self.drawn:
                click.echo(
                    "\r" + " " * max(100, len(self.text(time.monotonic()))) + "\r",
                    nl=False,
                    err=True,
                )
                self.drawn = False
            click.echo(line, err=True)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self.lock:
            if self.drawn:
                click.echo(
                    "\r" + " " * max(100, len(self.text(time.monotonic()))) + "\r",
                    nl=False,
                    err=True,
                )
                self.drawn = False


class Interrupts:
    """Ctrl-C during a solve. The first asks the solver to stop after the batch in
    progress; a second interrupts at once (the batch in flight is lost, committed ones
    are not). Once the run is closing, Ctrl-C is ignored: the result follows."""

    def __init__(self) -> None:
        self.stop = False
        self.closing = False

    def __call__(self) -> bool:
        return self.stop

    def handler(self, signum: int, frame: FrameType | None) -> None:
        if self.closing:
            click.echo("\nfinishing: the result follows", err=True)
            return
        if self.stop:
            raise KeyboardInterrupt
        self.stop = True
        click.echo(
            "\nstopping after the current batch (press Ctrl-C again to abort it)...",
            err=True,
        )


@contextmanager
def graceful_interrupt() -> Iterator[Interrupts]:
    """:class:`Interrupts` as the SIGINT handler for the block."""
    state = Interrupts()
    previous = signal.signal(signal.SIGINT, state.handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)


def given_root(game: GameBase, r: SolveResult, root: str | None) -> str:
    """The root as the user gave it (normalised), which a game with symmetry stores as
    its canonical image (``r.root_text``)."""
    return r.root_text if root is None else game.format(game.parse(root))


def result_json(game: GameBase, r: SolveResult, root: str | None = None) -> dict[str, Any]:
    # A game of chance's bounds are floats (rounded outwards), never infinite.
    bound = float if "chance" in r.extra else public_to_json
    return {
        "game": r.game,
        "params": r.params,
        "rules_version": game.version,
        "root": given_root(game, r, root),
        "stored_root": r.root_text,
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
        "ended_by": r.ended_by,
        "peak_rss": r.peak_rss,
        "memory_limit": r.memory_limit,
        "tiered": dict(r.extra) if r.extra.get("tiers") else None,
        "chance": r.extra.get("chance"),
    }


def describe_result(game: GameBase, r: SolveResult, root: str | None = None) -> list[str]:
    params = ", ".join(f"{k}={v}" for k, v in r.params.items())
    given = given_root(game, r, root)
    stored = "" if given == r.root_text else f" (stored as its symmetric image {r.root_text})"
    lines = [f"{r.game}{f' ({params})' if params else ''} from {given}{stored}"]
    flag = {True: "final", False: "not final"}
    chance = r.extra.get("chance")
    if chance is not None:
        lo = fraction_or_float(chance["low_exact"], float(r.low))
        hi = fraction_or_float(chance["high_exact"], float(r.high))
        mover = game.facts.players[chance["player"]]
        unexpanded = chance.get("unexpanded", 0)
        if not r.low_final:  # a run that ended before the root's value was known
            lines.append(
                f"  bounds for {mover} ({chance['kind']} node): [{lo}, {hi}], not final "
                f"({number(unexpanded)} positions left unexpanded)"
            )
            if chance["best_move"] is not None:
                lines.append(f"  best move so far: {chance['best_move']}")
        else:
            lines.append(
                f"  value for {mover} ({chance['kind']} node): {chance_span(lo, hi)}"
                + (
                    ""
                    if chance["exact"]
                    else f" (within {chance['tolerance']:g}, outwards-rounded)"
                )
            )
            if game.facts.value_range == (-1, 1):
                first = chance["value"] if chance["player"] == 0 else -chance["value"]
                lines.append(
                    f"  {game.facts.players[0]} wins with probability {(first + 1) / 2:.6f} "
                    "under optimal play"
                )
            if chance["best_move"] is not None:
                lines.append(f"  best move: {chance['best_move']}")
        plies = plies_text(chance)
        if plies == "infinite" and unexpanded:
            plies = "infinite or not known yet (the strategy reaches unexpanded positions)"
        lines.append(f"  expected plies to the end under optimal play: {plies}")
        if unexpanded and r.low_final:
            lines.append(
                f"  {number(unexpanded)} positions left unexpanded: no move to them can "
                "change the value"
            )
        elif chance["wide"] and not unexpanded:
            lines.append(f"  {number(chance['wide'])} positions wider than the tolerance")
        lines.append(
            f"  {number(r.nodes)} nodes, {number(r.edges)} edges in {r.seconds:.2f} s "
            f"({number(chance['components'])} components, {number(chance['sweeps'])} sweeps)"
        )
        return lines
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


class MemorySize(click.ParamType[int]):
    """A memory size such as ``4GiB`` or ``512MiB`` (:func:`solver.memory.parse_size`)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return check_memory_limit(parse_size(str(value)))
        except NegagraphError as exc:
            self.fail(str(exc), param, ctx)


@cli.command("solve")
@click.argument("game_name", metavar="GAME")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A game parameter (repeatable), e.g. -p width=5 -p height=4.",
)
@click.option("--root", metavar="POSITION", help="Root position in the game's notation.")
@click.option("--full", is_flag=True, help="Tablebase mode: expand everything reachable.")
@click.option(
    "--tiers/--no-tiers",
    default=None,
    help="Solve --full a tier at a time, the database holding what is done (default: "
    "when the game declares tiers and the variant was not solved otherwise).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Solve a tiered --full solve's units on a local Dask cluster of N worker "
    "processes (1: this process alone, no Dask).",
)
@click.option(
    "--shard-size",
    type=click.IntRange(min=1),
    metavar="N",
    help="Positions per unit of work of a tiered --full solve (default 131,072): a "
    "tier whose moves all leave it is solved in shards of N positions, each its own "
    "transaction, and discovered positions are written in slices of N (default "
    "8,388,608 without --workers).",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0, min_open=True, max=1),
    metavar="EPS",
    help="Games of chance: how close value iteration brings the two bounds of a position "
    "on a cycle through a chance node (default 1e-9; the bounds stay sound whatever it is).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Hand a tiered --full solve's units to the Dask scheduler at ADDRESS (e.g. "
    "tcp://10.0.0.5:8786), whose workers reach the same database (docs/distributed.md).",
)
@click.option(
    "--max-expansions",
    type=click.IntRange(min=0),
    metavar="N",
    help="Stop after exactly N expansions (continue later).",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0),
    metavar="S",
    help="Stop at the first batch boundary after S seconds of work (continue later).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    metavar="N",
    help="Expansions per batch, each one commit (default: adaptive; a depth-first "
    "partial solve expands a 32nd of its graph a batch, at most 65,536; a full "
    "solve commits when its new positions reach half the stored ones, "
    "or every 30 s).",
)
@click.option(
    "--until",
    type=click.Choice(["bounds", "value"]),
    default="bounds",
    show_default=True,
    help="End a partial solve when both root bounds are final, or as soon as "
    "the value under the game's repetition rule is decided.",
)
@click.option(
    "--memory-limit",
    type=MemorySize(),
    metavar="SIZE",
    help=f"Stay under SIZE of RAM (e.g. 4GiB, 512MiB; at least {format_size(MINIMUM)}"
    "). A depth-first partial solve of a "
    "game without repetitions into a database keeps part of its graph in RAM to stay "
    "under it (the database holds the rest) and goes on; other solves end, every batch "
    "committed, before their memory (RSS) would reach it.",
    default=default_memory_limit,
    show_default=f"{DEFAULT_FRACTION:.0%} of this machine's RAM, "
    f"{format_size(default_memory_limit())}",
)
@click.option(
    "--resident-nodes",
    type=click.IntRange(min=1),
    metavar="N",
    default=None,
    help="A depth-first partial solve into a database: after a batch, keep about N/2 "
    "nodes in RAM once more than N are there; the database holds the rest and is read "
    "back when the search returns (same results; docs/design.md §9). Default: from "
    "--memory-limit, for games without repetitions.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@DB_OPTION
@click.option("--memory", is_flag=True, help="Solve in memory and store nothing.")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress on stderr (by default: a line redrawn in place on a "
    "terminal, else a line every 5 s).",
)
def solve_command(
    game_name: str,
    params: tuple[str, ...],
    root: str | None,
    full: bool,
    tiers: bool | None,
    workers: int,
    shard_size: int | None,
    tolerance: float | None,
    scheduler: str | None,
    max_expansions: int | None,
    max_seconds: float | None,
    batch_size: int | None,
    until: Until,
    memory_limit: int,
    resident_nodes: int | None,
    as_json: bool,
    db_url: str | None,
    memory: bool,
    quiet: bool,
) -> None:
    """Solve GAME from its initial position (or --root) and print the root's bounds.

    The graph is stored in the database (--db, else $NEGAGRAPH_DATABASE_URL, else
    sqlite:///negagraph.db); running the same command again continues the solve. Ctrl-C
    stops after the current batch, with exit status 130 (a second one at once)."""
    if memory and db_url:
        fail("--memory and --db exclude each other")
    if scheduler is not None and workers != 1:
        fail("--workers and --scheduler exclude each other (the scheduler's cluster has its own)")
    mode = "off" if quiet else "line" if sys.stderr.isatty() else "log"
    # Ctrl-C is handled from here on: a second one (or one during start-up) ends in one
    # line, the run recorded as stopped; once the run closes, the result is printed.
    with graceful_interrupt() as interrupts:
        try:
            r, url, game = _solve(
                game_name,
                params,
                root,
                full,
                tiers,
                (workers, scheduler, shard_size),
                tolerance,
                max_expansions,
                max_seconds,
                batch_size,
                until,
                (memory_limit, resident_nodes),
                db_url,
                memory,
                mode,
                interrupts,
            )
        except KeyboardInterrupt:
            click.echo(
                "\ninterrupted: "
                + (
                    "nothing is stored"
                    if memory
                    else "every committed batch is kept; run the same command again to continue"
                ),
                err=True,
            )
            raise click.exceptions.Exit(STOPPED) from None
        interrupts.closing = True
        if as_json:
            click.echo(json.dumps(result_json(game, r, root)))
        else:
            for line in describe_result(game, r, root):
                click.echo(line)
            if url is not None:
                click.echo(f"  stored in {safe_url(url)}")
        for line in ending_notes(r, url is not None, as_json):
            click.echo(line, err=True)
        if exit_status(r):
            raise click.exceptions.Exit(exit_status(r))


def _solve(
    game_name: str,
    params: tuple[str, ...],
    root: str | None,
    full: bool,
    tiers: bool | None,
    cluster: tuple[int, str | None, int | None],
    tolerance: float | None,
    max_expansions: int | None,
    max_seconds: float | None,
    batch_size: int | None,
    until: Until,
    memory: tuple[int, int | None],
    db_url: str | None,
    in_memory: bool,
    mode: str,
    interrupts: Interrupts,
) -> tuple[SolveResult, str | None, GameBase]:
    """The solve command's work (with progress on stderr); its result and database."""
    with user_errors():
        game = get_game(game_name, **parse_params(params))
        # before the database is opened (or created): bad arguments change nothing
        root_key = None if root is None else parse_position(game, root)
        check_arguments(
            game,
            full=full,
            max_expansions=max_expansions,
            max_seconds=max_seconds,
            batch_size=batch_size,
            until=until,
            tiers=tiers,
            workers=cluster[0],
            scheduler=cluster[1],
            shard_size=cluster[2],
            tolerance=tolerance,
            resident_nodes=memory[1],
        )
        display = ProgressDisplay(
            mode, full=full, max_expansions=max_expansions, max_seconds=max_seconds
        )
        if in_memory:
            display.phase = "starting"

        def progress(p: Progress) -> None:
            if p.phase == "closing":
                interrupts.closing = True  # the run is over: the result follows
            display(p)

        with ExitStack() as stack:
            store: Store | None = None
            url = None
            stack.callback(display.close)
            display.start()
            if not in_memory:
                url = database_url(db_url)
                engine = stack.enter_context(open_engine(url, create=True))
                store = SqlStore(engine)
            try:
                r = solve(
                    game,
                    root_key,
                    full=full,
                    max_expansions=max_expansions,
                    max_seconds=max_seconds,
                    batch_size=batch_size,
                    until=until,
                    store=store,
                    progress=progress,
                    stop=interrupts,
                    memory_limit=memory[0],
                    resident_nodes=memory[1],
                    tiers=tiers,
                    workers=cluster[0],
                    scheduler=cluster[1],
                    shard_size=cluster[2],
                    tolerance=tolerance,
                    notice=display.note,
                )
            except BaseException as exc:
                # solve() closes the run itself, unless a second Ctrl-C lands where it
                # cannot (between opening the run and its clean-up): then record it here.
                if isinstance(store, SqlStore):
                    store.abandon("stopped" if isinstance(exc, KeyboardInterrupt) else "failed")
                raise
            interrupts.closing = True
    return r, url, game


@cli.command("query")
@click.argument("game_name", metavar="GAME")
@click.argument("position")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A game parameter (repeatable).",
)
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def query_command(
    game_name: str,
    position: str,
    params: tuple[str, ...],
    db_url: str | None,
    as_json: bool,
) -> None:
    """Look up POSITION (in GAME's notation): bounds, depths, value and moves best first."""
    with user_errors():
        given = parse_params(params)
        try:
            cls = find_game(game_name)
        except UnknownGameError:
            if stored_games(database_url(db_url)) & {game_name}:
                fail(
                    f"the database holds game {game_name!r} but it is not installed here "
                    "(install its plugin package, or name its class as module:Class)"
                )
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
    for line in describe_view(view, game.facts.players):
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


def describe_view(view: dict[str, Any], players: tuple[str, str] = ("MAX", "MIN")) -> list[str]:
    """``query``'s text: *players* name the first and the second player (the game's
    :attr:`~solver.game.GameFacts.players`, e.g. White and Black)."""

    def b(v: int | None, inf: str) -> str:
        return inf if v is None else str(v)

    def d(v: int | None) -> str:
        return "inf" if v is None else str(v)

    lines = [f"{view['position']}  ({view['state']})"]
    if "chance" in view:
        return lines + chance_view_lines(view, players)
    if "max_low" in view:
        lo, hi = b(view["max_low"], "-inf"), b(view["max_high"], "+inf")
        mover = players[0] if view["to_move"] == "MAX" else players[1]
        lines.append(
            f"  {mover} to move; from {players[0]}'s side: " + (lo if lo == hi else f"[{lo}, {hi}]")
        )
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


def fraction_or_float(exact: str | None, approx: float) -> str:
    """A chance bound as shown: its exact fraction when known, else the float."""
    return exact if exact is not None else f"{approx:.10g}"


def chance_span(low: str, high: str) -> str:
    return low if low == high else f"[{low}, {high}]"


def plies_text(chance: dict[str, Any]) -> str:
    """A chance object's expected plies as shown: the exact fraction when known, else
    the float, else ``infinite`` (play may never end; also what a variant stored before
    migration 0011 shows)."""
    if chance.get("plies_exact") is not None:
        return str(chance["plies_exact"])
    if chance.get("plies") is not None:
        return f"{chance['plies']:.10g}"
    return "infinite"


def chance_view_lines(view: dict[str, Any], players: tuple[str, str]) -> list[str]:
    """``query``'s text for a position of a game of chance."""
    c = view["chance"]
    lo = fraction_or_float(c["low_exact"], c["low"])
    hi = fraction_or_float(c["high_exact"], c["high"])
    lines = [
        f"  {c['kind']} node, {players[c['player']]}'s; value for {players[c['player']]}: "
        + chance_span(lo, hi)
        + ("" if c["low_exact"] is not None else " (floats rounded outwards)")
    ]
    first_lo, first_hi = c["first_player_low"], c["first_player_high"]
    lines.append(
        f"  from {players[0]}'s side: {chance_span(f'{first_lo:.10g}', f'{first_hi:.10g}')}"
    )
    plies = plies_text(c)
    if plies == "infinite" and view.get("state") == "unexpanded":
        plies = "not known (the position is not expanded yet)"
    lines.append(f"  expected plies to the end under optimal play: {plies}")
    if view["moves"]:
        header = (
            "outcomes (probability, value for the mover)"
            if c["kind"] == "chance"
            else ("moves, best first (value for the mover)")
        )
        lines.append(f"  {header}:")
        width = max(len(m["move"]) for m in view["moves"])
        for m in view["moves"]:
            mc = m.get("chance")
            if mc is None:
                span = "unknown"
            else:
                span = chance_span(
                    fraction_or_float(mc["move_low_exact"], mc["move_low"]),
                    fraction_or_float(mc["move_high_exact"], mc["move_high"]),
                )
                if mc["probability"] is not None:
                    span = f"{mc['probability']:>5}  {span}"
            lines.append(f"    {m['move'].ljust(width)}  {span}  -> {m['position']} ({m['state']})")
    return lines


@cli.command("check")
@click.argument("game_name", metavar="GAME")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A game parameter (repeatable).",
)
@click.option(
    "--positions",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Positions to sample and check.",
)
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="Time budget.",
)
@click.option(
    "--symmetry-pairs",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Positions whose bounds are solved and compared with their canonical "
    "image's (games with symmetry).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random playouts.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def check_command(
    game_name: str,
    params: tuple[str, ...],
    positions: int,
    max_seconds: float,
    symmetry_pairs: int,
    seed: int,
    as_json: bool,
) -> None:
    """Check GAME against the Game contract on sampled positions; each violation is
    printed with a witness position. Exit status 1 if any is found."""
    from solver.check import WITNESSES, check_game

    with user_errors():
        game = get_game(game_name, **parse_params(params))
        report = check_game(
            game,
            max_positions=positions,
            max_seconds=max_seconds,
            symmetry_pairs=symmetry_pairs,
            seed=seed,
        )
    if as_json:
        click.echo(json.dumps(report.to_json()))
    else:
        reach = " (every reachable one)" if report.exhausted else ""
        click.echo(
            f"{game.name} ({params_text(game.params) or 'no parameters'}): "
            f"{report.positions} positions checked{reach}, "
            f"{report.symmetry_pairs} symmetry pairs solved, {report.seconds:.1f}s"
        )
        for v in report.violations:
            click.echo(f"  violation {v}")
        for note in report.notes:
            click.echo(f"  note: {note}")
        if report.ok:
            click.echo("  ok: no violation found")
    if not report.ok:
        n, listed = report.found, len(report.violations)
        fail(
            f"{game.name} breaks the Game contract: {n:,} violation{'s' if n != 1 else ''}"
            + (
                ""
                if as_json
                else " (listed above)"
                if listed == n
                else f" ({listed} listed above: of each per-position check, the first {WITNESSES})"
            )
        )


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
    for line in status_lines(safe_url(url), data):
        click.echo(line)


@cli.command("serve")
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


@cli.group("db")
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


def main() -> None:
    """Run the command line as the ``negagraph`` console script does (its entry point,
    :func:`api.entry.main`, loads this module and calls this)."""
    try:
        cli(prog_name="negagraph")
    finally:
        # The command is over (its result printed, its exit status chosen): a Ctrl-C
        # from here to the process's end would only make a finished command die of
        # SIGINT. (Not in cli() itself, which tests also run in their own process.)
        signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["cli", "main", "to_json"]
