"""A solve's progress on stderr: a line redrawn in place on a terminal, else a line every
few seconds, with the figures the solver reports, the phase, the time and an ETA."""

from __future__ import annotations

import shutil
import threading
import time
from collections import deque
from pathlib import Path

import click

from api.console.text import duration, number
from solver.memory import format_size
from solver.store import Progress
from solver.values import bound_text, encode

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
        self.database: Path | None = None
        """The SQLite file being written, if it is one: its bytes a position and the
        disk still free are shown."""

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
        low = bound_text(encode(p.root_low), upper=False)
        high = bound_text(encode(p.root_high), upper=True)
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
            f"{high}{'*' if p.root_high_final else ''}]  RAM {memory}{self.disk_text(p)}  "
            f"{elapsed}  {self.phase}" + ("" if eta is None else f"  {eta}")
        )

    def disk_text(self, p: Progress) -> str:
        """``  disk 17.2 B a position, 61 GiB free``: the SQLite file (and its log) over
        the positions stored so far, and the room left beside it ('' for other
        databases, or one not made yet)."""
        if self.database is None:
            return ""
        try:
            used = sum(
                f.stat().st_size
                for f in (self.database, Path(f"{self.database}-wal"))
                if f.exists()
            )
            free = shutil.disk_usage(self.database.parent).free
        except OSError:
            return ""
        per = f"{used / p.nodes:.1f} B a position, " if p.nodes else ""
        return f"  disk {per}{format_size(free)} free"

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
            self._clear()
            click.echo(line, err=True)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self.lock:
            self._clear()

    def _clear(self) -> None:
        """Blank the drawn progress line, if any (the lock held)."""
        if self.drawn:
            click.echo(
                "\r" + " " * max(100, len(self.text(time.monotonic()))) + "\r",
                nl=False,
                err=True,
            )
            self.drawn = False


__all__ = ["LOG_EVERY", "REDRAW_EVERY", "ProgressDisplay"]
