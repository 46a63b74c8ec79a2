"""The work of ``negagraph solve``: the game and root built from its arguments, checked
before any database is opened, the solve run with its progress on stderr, and Ctrl-C
handled (the first stops after the batch in progress, a second at once)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from types import FrameType

import click

from api.commands.common import fail, open_engine, parse_params, parse_position, user_errors
from api.console.progress import ProgressDisplay
from db.session import database_url, sqlite_file
from db.store import SqlStore
from solver.game import GameBase
from solver.games import get_game
from solver.negamax import solve
from solver.ordering import Order
from solver.run import Layout, SolveResult, Until, check_arguments
from solver.store import Progress, Store


@dataclass(frozen=True)
class SolveArguments:
    """What ``negagraph solve`` was asked: its argument and options as click parsed
    them (each field is the option of that name; see ``negagraph solve --help``)."""

    game_name: str
    params: tuple[str, ...]
    """``-p NAME=VALUE`` pairs, as typed."""
    root: str | None
    full: bool
    tiers: bool | None
    workers: int
    shard_size: int | None
    layout: Layout | None
    tolerance: float | None
    scheduler: str | None
    max_expansions: int | None
    max_seconds: float | None
    batch_size: int | None
    until: Until
    memory_limit: int
    resident_nodes: int | None
    order: Order
    as_json: bool
    db_url: str | None
    memory: bool
    """``--memory``: solve in memory, store nothing."""
    quiet: bool

    def check(self) -> None:
        """Refuse options that exclude each other (before anything else is done)."""
        if self.memory and self.db_url:
            fail("--memory and --db exclude each other")
        if self.scheduler is not None and self.workers != 1:
            fail(
                "--workers and --scheduler exclude each other (the scheduler's cluster has its own)"
            )

    def progress_mode(self) -> str:
        """How progress shows: ``off`` (``-q``), ``line`` on a terminal, else ``log``."""
        return "off" if self.quiet else "line" if sys.stderr.isatty() else "log"


@dataclass(frozen=True)
class Solved:
    """A finished solve: its result, the database it went into (``None``: in memory)
    and the game."""

    result: SolveResult
    url: str | None
    game: GameBase


class Interrupts:
    """Ctrl-C during a solve. The first asks the solver to stop after the batch in
    progress; a second interrupts at once (the batch in flight is lost, committed ones
    are not). Once the run is closing, Ctrl-C is ignored: the result follows."""

    def __init__(self) -> None:
        self.stop = False
        self.closing = False
        self.before_run = False
        """Whether the solve ended before it opened its variant in the database (while it
        walked a tiered game's child tiers, say): nothing of it was written."""

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


def run_solve(args: SolveArguments, interrupts: Interrupts) -> Solved:
    """The solve command's work (with progress on stderr); its result and database."""
    with user_errors():
        game = get_game(args.game_name, **parse_params(args.params))
        # before the database is opened (or created): bad arguments change nothing
        root_key = None if args.root is None else parse_position(game, args.root)
        check_arguments(
            game,
            full=args.full,
            max_expansions=args.max_expansions,
            max_seconds=args.max_seconds,
            batch_size=args.batch_size,
            until=args.until,
            tiers=args.tiers,
            workers=args.workers,
            scheduler=args.scheduler,
            shard_size=args.shard_size,
            tolerance=args.tolerance,
            resident_nodes=args.resident_nodes,
            layout=args.layout,
            order=args.order,
        )
        display = ProgressDisplay(
            args.progress_mode(),
            full=args.full,
            max_expansions=args.max_expansions,
            max_seconds=args.max_seconds,
        )
        if args.memory:
            display.phase = "starting"
        with ExitStack() as stack:
            stack.callback(display.close)
            display.start()
            url = None if args.memory else database_url(args.db_url)
            display.database = None if url is None else sqlite_file(url)
            store = (
                None
                if url is None
                else SqlStore(stack.enter_context(open_engine(url, create=True)))
            )
            r = _solve(args, game, root_key, store, display, interrupts)
            interrupts.closing = True
    return Solved(r, url, game)


def _solve(
    args: SolveArguments,
    game: GameBase,
    root_key: int | None,
    store: Store | None,
    display: ProgressDisplay,
    interrupts: Interrupts,
) -> SolveResult:
    """:func:`solver.negamax.solve` with *args*' options, its progress shown on
    *display*; a run that fails or is interrupted at once is recorded as such."""

    def progress(p: Progress) -> None:
        if p.phase == "closing":
            interrupts.closing = True  # the run is over: the result follows
        display(p)

    try:
        return solve(
            game,
            root_key,
            full=args.full,
            max_expansions=args.max_expansions,
            max_seconds=args.max_seconds,
            batch_size=args.batch_size,
            until=args.until,
            store=store,
            progress=progress,
            stop=interrupts,
            memory_limit=args.memory_limit,
            resident_nodes=args.resident_nodes,
            tiers=args.tiers,
            workers=args.workers,
            scheduler=args.scheduler,
            shard_size=args.shard_size,
            tolerance=args.tolerance,
            layout=args.layout,
            order=args.order,
            notice=display.note,
        )
    except BaseException as exc:
        # solve() closes the run itself, unless a second Ctrl-C lands where it cannot
        # (between opening the run and its clean-up): then record it here.
        if isinstance(store, SqlStore):
            interrupts.before_run = store.variant_id is None
            store.abandon("stopped" if isinstance(exc, KeyboardInterrupt) else "failed")
        raise


__all__ = ["Interrupts", "SolveArguments", "Solved", "graceful_interrupt", "run_solve"]
