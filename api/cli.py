"""The ``negagraph`` command line.

Commands stay thin: parse arguments, call solver/db functions, echo. Every error a user
can cause ends as one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import json
import logging
import math
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn

import click

from solver.errors import NegagraphError
from solver.game import GameBase
from solver.games import GAMES, get_game
from solver.negamax import SolveResult, solve
from solver.store import Progress
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


def bound_text(v: float | int) -> str:
    if v == math.inf:
        return "+inf"
    if v == -math.inf:
        return "-inf"
    return str(v)


def number(n: float) -> str:
    return f"{n:,.0f}"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="negagraph")
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """negagraph: solve two-player games (cyclic ones too) into a queryable database."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def games(as_json: bool) -> None:
    """List the games negagraph can solve, with their parameters."""
    described = [cls.describe() for cls in GAMES.values()]
    if as_json:
        click.echo(json.dumps(described, indent=2))
        return
    for d in described:
        click.echo(f"{d['name']} (rules version {d['version']})")
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
              help="Expansions per batch (default: adaptive).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def solve_command(
    game_name: str,
    params: tuple[str, ...],
    root: str | None,
    full: bool,
    max_expansions: int | None,
    max_seconds: float | None,
    batch_size: int | None,
    as_json: bool,
) -> None:
    """Solve GAME from its initial position (or --root) and print the root's bounds."""
    with user_errors():
        game = get_game(game_name, **parse_params(params))
        display = ProgressLine(enabled=not as_json and sys.stderr.isatty())
        with graceful_interrupt() as stop:
            try:
                r = solve(
                    game,
                    root,
                    full=full,
                    max_expansions=max_expansions,
                    max_seconds=max_seconds,
                    batch_size=batch_size,
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
    if r.status == "stopped":
        click.echo("  stopped on request", err=True)
    elif r.status == "budget":
        click.echo("  budget exhausted before the root was solved", err=True)


def main() -> None:
    """Entry point of the ``negagraph`` console script."""
    cli(prog_name="negagraph")


__all__ = ["cli", "main", "to_json"]
