"""Soak: solves killed at random moments, resumed, and compared with uninterrupted ones.

    .venv/bin/python -m bench.soak --kills 100            # both engines, both modes
    .venv/bin/python -m bench.soak --kills 10 --engine sqlite --mode partial

For every mode (partial, ``--full``) and engine (SQLite, PostgreSQL) it runs rounds until
``--kills`` SIGKILLs have landed: a round solves one game into a fresh database with
``negagraph solve``, killing the process again and again and starting it anew until a run
completes; then it compares every stored node and edge with an uninterrupted in-memory
solve of the same game and runs the command once more (which must find nothing to do).
Most kills come at a random moment of the run (uniform over the uninterrupted run's wall
time); a quarter come at a random step of the closing sequence or any commit, through
``db.store.writer.CRASH_ENV``. After each kill the stored node count must not have fallen (what
was committed stays) and a SQLite file must pass ``integrity_check``.

The table counts kills, completed rounds, rounds whose graph differs from the reference
(``different``), kills after which committed nodes went missing (``lost``), and runs that
failed otherwise (``errors``).

Then (``--hostile-seconds``, 0 to skip) it serves a solved tic-tac-toe database with
``negagraph serve --workers 2`` on a loopback port and runs :func:`bench.hostile.run_hostile`
against it: slow clients, costly-variant lookups and malformed HTTP, while normal lookups
are timed; the second table counts 5xx answers, error answers that are not the API's JSON,
unanswered requests, and the normal lookups' latencies.

Not part of the tests: it takes tens of minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import text

from bench.hostile import run_hostile
from bench.targets import PG_ADMIN_URL, fresh_pg_database
from db.migrate import upgrade
from db.models import encode_key
from db.session import make_engine
from db.store.writer import CRASH_ENV
from solver.games import get_game
from solver.graph import Graph
from solver.negamax import solve
from solver.store import Batch, MemoryStore, Progress
from solver.values import DEPTH_INF, NEG_INF, POS_INF

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))

Rows = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]


@dataclass(frozen=True)
class Case:
    """One game solved in one mode."""

    label: str
    game: str
    params: dict[str, str]
    full: bool
    root: str | None = None
    batch_size: int | None = None

    def args(self, url: str) -> list[str]:
        args = ["solve", self.game, "--db", url, "--json"]
        for name, value in self.params.items():
            args += ["-p", f"{name}={value}"]
        if self.root is not None:
            args += ["--root", self.root]
        if self.full:
            args.append("--full")
        if self.batch_size is not None:
            args += ["--batch-size", str(self.batch_size)]
        return args


CASES = {
    "partial": [
        Case(
            "connect-four 4x4 (acyclic)", "connect-four", {"width": "4", "height": "4"}, full=False
        ),
        Case(
            "chess KRvK (cyclic)",
            "chess",
            {"material": "KRvK"},
            full=False,
            root="k7/8/2K5/8/8/8/8/7R w - -",
        ),
    ],
    "full": [
        Case(
            "connect-four 4x4",
            "connect-four",
            {"width": "4", "height": "4"},
            full=True,
            batch_size=700,
        ),
    ],
}


@dataclass
class Tally:
    kills: int = 0
    closing_kills: int = 0
    rounds: int = 0
    different: int = 0
    lost: int = 0
    errors: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Reference:
    rows: Rows
    commits: int
    wall: float


class CountingStore(MemoryStore):
    """A memory store that counts the solver's commits."""

    def __init__(self) -> None:
        super().__init__()
        self.commits = 0

    def commit(self, batch: Batch, progress: Progress) -> None:
        self.commits += 1
        super().commit(batch, progress)


def graph_rows(g: Graph) -> Rows:
    def bound(v: int) -> int | None:
        return None if v >= POS_INF or v <= NEG_INF else v

    def depth(v: int) -> int | None:
        return None if v >= DEPTH_INF else v

    nodes = [
        (
            n,
            encode_key(g.keys[n]),
            bound(g.low[n]),
            bound(g.high[n]),
            bool(g.low_final[n]),
            bool(g.high_final[n]),
            depth(g.depth_low[n]),
            depth(g.depth_high[n]),
            g.state[n],
            g.dist[n],
        )
        for n in range(g.num_nodes)
    ]
    edges = sorted(
        (g.edge_parent[e], e - g.first_edge[g.edge_parent[e]], g.edge_child[e], g.edge_move[e])
        for e in range(g.num_edges)
    )
    return nodes, edges


def keyed(rows: Rows) -> Rows:
    """*rows* with each node id replaced by the node's key, sorted: what the rows mean
    whatever the numbering (an in-memory solve numbers positions breadth first from the
    root, a tiered full solve tier by tier in solve order)."""
    nodes, edges = rows
    key = {n[0]: n[1] for n in nodes}
    return (
        sorted(n[1:] for n in nodes),
        sorted((key[p], order, key[c], move) for p, order, c, move in edges),
    )


def stored_rows(url: str) -> Rows:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            nodes = [
                (r[0], bytes(r[1]), r[2], r[3], bool(r[4]), bool(r[5]), r[6], r[7], r[8], r[9])
                for r in conn.execute(
                    text(
                        "SELECT id, key, low, high, low_final, high_final, depth_low, depth_high,"
                        " state, dist FROM nodes ORDER BY id"
                    )
                )
            ]
            edges = [
                tuple(r)
                for r in conn.execute(
                    text(
                        "SELECT parent, move_order, child, move FROM edges"
                        " ORDER BY parent, move_order"
                    )
                )
            ]
    finally:
        engine.dispose()
    return nodes, edges


def stored_nodes(url: str) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM nodes")).scalar_one())
    finally:
        engine.dispose()


def sqlite_intact(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return bool(conn.execute(text("PRAGMA integrity_check")).scalar_one() == "ok")
    finally:
        engine.dispose()


def reference(case: Case) -> Reference:
    """The uninterrupted solve: its graph in memory, its commits, its CLI wall time."""
    store = CountingStore()
    game = get_game(case.game, **case.params)
    solve(game, case.root, full=case.full, store=store, batch_size=case.batch_size)
    (g,) = store.graphs.values()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'reference.db'}"
        t0 = time.monotonic()
        done = subprocess.run(
            [NEGAGRAPH, *case.args(url)], capture_output=True, text=True, check=False
        )
        wall = time.monotonic() - t0
        if done.returncode != 0:
            raise SystemExit(f"error: the reference run failed: {done.stderr.strip()}")
    return Reference(graph_rows(g), store.commits, wall)


def same_rows(case: Case, stored: Rows, expected: Rows) -> bool:
    """Whether *stored* are the reference's rows: id for id, but for a full solve (tiered
    by default: its own numbering, :func:`keyed`)."""
    return keyed(stored) == keyed(expected) if case.full else stored == expected


def fresh_database(engine: str, tmp: Path, n: int) -> AbstractContextManager[str]:
    if engine == "postgres":
        return fresh_pg_database(PG_ADMIN_URL)

    @contextmanager
    def sqlite() -> Iterator[str]:
        path = tmp / f"soak-{n}.db"
        yield f"sqlite:///{path}"
        for p in tmp.glob(f"soak-{n}.db*"):
            p.unlink()

    return sqlite()


def one_round(
    case: Case,
    ref: Reference,
    url: str,
    rng: random.Random,
    tally: Tally,
    kills_left: int,
    hook_share: float,
) -> None:
    """Kill runs of *case* into *url* until one completes (or no kills are left, then let
    the next run complete), then compare."""
    upgrade(url)
    before = 0
    while True:
        env, delay, closing = _kill_plan(ref, rng, kills_left, hook_share)
        proc = subprocess.Popen(
            [NEGAGRAPH, *case.args(url)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        if delay is not None:
            try:
                proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        if proc.returncode == -signal.SIGKILL:
            tally.kills += 1
            tally.closing_kills += closing
            kills_left -= 1
            before = _after_kill(case, url, tally, before)
            continue
        if proc.returncode != 0 or not json.loads(out)["complete"]:
            tally.errors += 1
            tally.notes.append(f"{case.label}: exit {proc.returncode}: {err.strip()[-300:]}")
            return
        break
    tally.rounds += 1
    _compare(case, ref, url, tally)


def _kill_plan(
    ref: Reference, rng: random.Random, kills_left: int, hook_share: float
) -> tuple[dict[str, str], float | None, bool]:
    """How the next run dies: its environment (a crash hook at a commit or the closing
    sequence, *hook_share* of the time), else a delay before SIGKILL (uniform over the
    reference's wall time); and whether the kill falls in the closing sequence. No kill
    once *kills_left* is 0."""
    env = dict(os.environ)
    if kills_left <= 0:
        return env, None, False
    if rng.random() < hook_share:
        k = rng.randint(1, ref.commits + 1)
        env[CRASH_ENV] = "close" if k > ref.commits else f"commit:{k}"
        return env, None, k >= ref.commits - 1
    return env, rng.uniform(0.0, ref.wall * 1.1), False


def _after_kill(case: Case, url: str, tally: Tally, before: int) -> int:
    """Check what a kill left in *url*: no fewer stored nodes than *before* (returned
    anew), and an intact SQLite file."""
    now = stored_nodes(url)
    if now < before:
        tally.lost += 1
        tally.notes.append(f"{case.label}: {before} stored nodes fell to {now}")
    if url.startswith("sqlite") and not sqlite_intact(url):
        tally.lost += 1
        tally.notes.append(f"{case.label}: integrity_check failed")
    return now


def _compare(case: Case, ref: Reference, url: str, tally: Tally) -> None:
    """A completed round's rows against the reference's, and once more after a run that
    must find nothing to do."""
    if not same_rows(case, stored_rows(url), ref.rows):
        tally.different += 1
        tally.notes.append(f"{case.label}: round {tally.rounds} differs from the reference")
    again = subprocess.run(
        [NEGAGRAPH, *case.args(url)], capture_output=True, text=True, check=False
    )
    if (
        again.returncode != 0
        or json.loads(again.stdout)["expansions"] != 0
        or not same_rows(case, stored_rows(url), ref.rows)
    ):
        tally.different += 1
        tally.notes.append(f"{case.label}: a run after completion changed something")


def soak(
    mode: str, engine: str, kills: int, rng: random.Random, hook_share: float, per_round: int
) -> list[tuple[Case, Tally]]:
    cases = CASES[mode]
    refs = {case.label: reference(case) for case in cases}
    tallies = {case.label: Tally() for case in cases}
    done = 0
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        while done < kills:
            case = cases[n % len(cases)]
            tally = tallies[case.label]
            t0 = time.monotonic()
            start = tally.kills
            with fresh_database(engine, Path(tmp), n) as url:
                one_round(
                    case,
                    refs[case.label],
                    url,
                    rng,
                    tally,
                    min(per_round, kills - done),
                    hook_share,
                )
            tally.seconds += time.monotonic() - t0
            done += tally.kills - start
            n += 1
            print(
                f"  {mode} {engine} {case.label}: {done}/{kills} kills, round {n}",
                file=sys.stderr,
                flush=True,
            )
    return [(case, tallies[case.label]) for case in cases]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def hostile(seconds: float) -> dict[str, Any]:
    """:func:`run_hostile` for *seconds* against a served, solved tic-tac-toe database."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'ttt.db'}"
        subprocess.run(
            [NEGAGRAPH, "solve", "tic-tac-toe", "--full", "--db", url],
            check=True,
            capture_output=True,
        )
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        # Not a pipe: gunicorn logs a line per refused request, and a pipe nobody reads
        # fills up and blocks the workers.
        server = subprocess.Popen(
            [NEGAGRAPH, "serve", "--db", url, "--port", str(port), "--workers", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 120
            while True:  # until the server answers its health check
                try:
                    with urllib.request.urlopen(f"{base}/api/health", timeout=5) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("error: the server did not come up")
                time.sleep(0.1)
            return run_hostile(base, seconds)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--kills", type=int, default=100, help="SIGKILLs per mode and engine (default 100)"
    )
    parser.add_argument("--engine", action="append", choices=["sqlite", "postgres"])
    parser.add_argument("--mode", action="append", choices=sorted(CASES))
    parser.add_argument(
        "--kills-per-round",
        type=int,
        default=8,
        help="kills before a round's run may complete (default 8)",
    )
    parser.add_argument(
        "--hook-share",
        type=float,
        default=0.25,
        help="share of kills at a chosen commit rather than a moment",
    )
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument(
        "--hostile-seconds",
        type=float,
        default=60.0,
        help="seconds of hostile-client load (0: none; default 60)",
    )
    args = parser.parse_args(argv)
    notes = _soak_table(args) if args.kills > 0 else []
    if args.hostile_seconds > 0:
        notes += _hostile_table(args.hostile_seconds)
    for note in notes:
        print(f"- {note}")
    return 0 if not notes else 1


def _soak_table(args: argparse.Namespace) -> list[str]:
    """Print the kill soak's table for the modes and engines of *args*; its notes."""
    rng = random.Random(args.seed)
    lines = [
        "| mode | engine | game | kills | of them in the closing sequence | rounds "
        "| different | lost | errors | seconds |",
        "|" + "---|" * 10,
    ]
    notes: list[str] = []
    for mode in args.mode or ["partial", "full"]:
        for engine in args.engine or ["sqlite", "postgres"]:
            for case, t in soak(
                mode, engine, args.kills, rng, args.hook_share, args.kills_per_round
            ):
                lines.append(
                    f"| {mode} | {engine} | {case.label} | {t.kills} | "
                    f"{t.closing_kills} | {t.rounds} | {t.different} | {t.lost} | "
                    f"{t.errors} | {t.seconds:.0f} |"
                )
                notes += t.notes
    print("\n".join(lines))
    return notes


def _hostile_table(seconds: float) -> list[str]:
    """Print the hostile-client load's table (*seconds* of it); its notes."""
    h = hostile(seconds)
    n = h["normal"]
    print()
    print(
        "| hostile load | seconds | requests | 5xx | non-JSON errors | unanswered "
        "| normal lookups | not 200 | p50 ms | p99 ms | max ms |"
    )
    print("|" + "---|" * 11)
    print(
        f"| {', '.join(f'{k} {v}' for k, v in h['requests'].items())} | "
        f"{h['seconds']} | {sum(h['requests'].values())} | {h['server_errors']} | "
        f"{h['non_json_errors']} | {h['unanswered']} | {n['count']} | {n['not_200']} "
        f"| {n['p50_ms']} | {n['p99_ms']} | {n['max_ms']} |"
    )
    if h["server_errors"] or h["non_json_errors"] or h["unanswered"] or n["not_200"]:
        return [f"hostile load: {json.dumps(h['examples'])}"]
    return []


if __name__ == "__main__":
    raise SystemExit(main())
