"""Tiered full solves (solver.tiers.solve) against the untiered full solve, the oracle: the
same positions with the same bounds, flags, depths and distances, the same moves; on
connect-four the same rows id for id. Both engines; games with cycles within tiers
(random ones, hypothesis); a game whose declared tiers are wrong; resuming after
kill -9 at every commit; the refusals."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from db import rows as db_rows
from db.migrate import upgrade
from db.repository import stored_positions
from db.session import make_engine
from db.store import SqlStore
from db.store.writer import CRASH_ENV
from solver.errors import ContractError, InvalidParameterError, SolveError
from solver.game import GameBase, Param, PositionKey
from solver.games import get_game
from solver.graph import Graph
from solver.negamax import solve
from solver.store import MemoryStore, NodeShard, RunOptions, TierNodes
from solver.tiers import discovery as tier_discovery
from solver.tiers import solve as tiered
from tests.db.helpers import pg_database, progress_of
from tests.db.references import References, empty_database
from tests.solver.test_tiers import SMALL

NEGAGRAPH = str(Path(sys.executable).with_name("negagraph"))

TIERED_GAMES = [
    *SMALL,  # the small variants of every game with tiers
    ("chess", {"material": "KQvK"}),  # tablebase positions, cycles within tiers
]


def stored(engine: Engine, game: Any) -> tuple[dict[Any, Any], dict[Any, Any], list[Any]]:
    """The variant's nodes by key (bounds, flags, depths, state, distance), its moves
    by (parent key, move order), and its rows as stored (id order)."""
    with engine.connect() as conn:
        nodes = conn.execute(
            text(
                "SELECT n.id, n.key, n.low, n.high, n.low_final, n.high_final, n.depth_low, "
                "n.depth_high, n.state, n.dist, n.notation FROM nodes n "
                "JOIN variants v ON v.id = n.variant_id WHERE v.game = :g ORDER BY n.id"
            ),
            {"g": game.name},
        ).all()
        edges = conn.execute(
            text(
                "SELECT e.parent, e.move_order, e.child, e.move FROM edges e "
                "JOIN variants v ON v.id = e.variant_id WHERE v.game = :g "
                "ORDER BY e.parent, e.move_order"
            ),
            {"g": game.name},
        ).all()
    key_of = {r[0]: bytes(r[1]) for r in nodes}
    by_key = {
        bytes(r[1]): tuple(bool(v) if i in (4, 5) else v for i, v in enumerate(r[2:], 2))
        for r in nodes
    }
    moves = {(key_of[p], o): (key_of[c], m) for p, o, c, m in edges}
    rows = [tuple(r) for r in nodes] + [tuple(e) for e in edges]
    return by_key, moves, rows


def full_solve(game: Any, url: str, *, tiers: bool, **kw: Any) -> Any:
    engine = make_engine(url)
    try:
        return solve(game, full=True, store=SqlStore(engine), tiers=tiers, **kw)
    finally:
        engine.dispose()


def sqlite_url(tmp_path: Path, name: str) -> str:
    """A new SQLite database *name* at schema head (a copy of this process's first one),
    or an existing one upgraded."""
    return empty_database(tmp_path / name)


def reference_solve(
    references: References,
    tmp_path: Path,
    file: str,
    name: str,
    params: dict[str, Any],
    *,
    tiers: bool,
    **kw: Any,
) -> tuple[str, Any]:
    """A copy (*file* in *tmp_path*) of the session's :func:`full_solve` of game *name*
    with *params*, and its result (the solve runs once a session)."""
    options = json.dumps({"params": params, "tiers": tiers, **kw}, sort_keys=True)
    return references.copy(
        f"full_solve {name} {options}",
        lambda url: full_solve(get_game(name, **params), url, tiers=tiers, **kw),
        tmp_path / file,
    )


def reference_cli(references: References, tmp_path: Path, file: str, *args: str) -> str:
    """A copy (*file* in *tmp_path*) of the session's uninterrupted :func:`_cli` run with
    *args* (which runs once a session; asserted to succeed)."""
    url, returncode = references.copy(
        f"cli connect-four 4x3 {json.dumps(args)}",
        lambda url: _cli(url, *args).returncode,
        tmp_path / file,
    )
    assert returncode == 0
    return str(url)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params"), TIERED_GAMES)
def test_tiered_equals_untiered(
    name: str, params: dict[str, Any], tmp_path: Path, references: References
) -> None:
    compare_with_untiered(name, params, tmp_path, references, tiered_reference=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("connect-four", {"width": 4, "height": 3}),  # every move leaves its tier
        ("tic-tac-toe", {"symmetry": True}),
        ("chess", {"material": "KQvK"}),  # moves within tiers: each tier solved whole
    ],
)
def test_tiers_solved_a_chunk_at_a_time_equal_untiered(
    name: str,
    params: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    references: References,
) -> None:
    monkeypatch.setattr(tiered, "SOLVE_CHUNK", 7)
    compare_with_untiered(name, params, tmp_path, references, tiered_reference=False)


def test_discovered_slices_written_a_chunk_at_a_time_equal_untiered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, references: References
) -> None:
    """Slices of discovered positions (this process's, :data:`tiered.DISCOVERY_SLICE`)
    whose rows are made in several chunks inside the slice's one transaction."""
    monkeypatch.setattr(tiered, "DISCOVERY_SLICE", 50)
    monkeypatch.setattr(db_rows, "ROW_CHUNK", 11)
    compare_with_untiered(
        "connect-four", {"width": 4, "height": 3}, tmp_path, references, tiered_reference=False
    )
    engine = make_engine(sqlite_url(tmp_path, "tiered.db"))
    try:
        with engine.connect() as conn:
            sizes = conn.execute(
                text("SELECT nodes FROM tier_shards WHERE step = 'discover'")
            ).scalars()
            slices = sorted(sizes)
    finally:
        engine.dispose()
    assert max(slices) == 50 and len(slices) > 10  # large tiers in several slices


def compare_with_untiered(
    name: str,
    params: dict[str, Any],
    tmp_path: Path,
    references: References,
    *,
    tiered_reference: bool,
) -> None:
    """The untiered full solve (the session's reference) against the tiered one: the
    session's reference too if *tiered_reference*, else solved here (under the test's
    monkeypatches)."""
    game = get_game(name, **params)
    plain_url, plain = reference_solve(references, tmp_path, "plain.db", name, params, tiers=False)
    if tiered_reference:
        tiered_url, tiered = reference_solve(
            references, tmp_path, "tiered.db", name, params, tiers=True
        )
    else:
        tiered_url = sqlite_url(tmp_path, "tiered.db")
        tiered = full_solve(game, tiered_url, tiers=True)
    assert tiered.status == plain.status == "complete"
    assert (tiered.low, tiered.high, tiered.depth_low, tiered.depth_high) == (
        plain.low,
        plain.high,
        plain.depth_low,
        plain.depth_high,
    )
    assert tiered.low_final and tiered.high_final
    assert (tiered.nodes, tiered.edges) == (plain.nodes, plain.edges)
    assert tiered.extra["tiers"] > 1
    a, b = make_engine(plain_url), make_engine(tiered_url)
    try:
        nodes_a, moves_a, rows_a = stored(a, game)
        nodes_b, moves_b, rows_b = stored(b, game)
        assert nodes_b == nodes_a
        assert moves_b == moves_a
        # the tiered solve's ids in solve order, the reverse of discovery: the tier
        # found last from 0, the root's (found first) last
        with b.connect() as conn:
            tiers = conn.execute(text("SELECT first_id, first_offset, nodes FROM tiers")).all()
        total = sum(n for _, _, n in tiers)
        assert total == len(nodes_b)
        assert all(first == total - offset - n for first, offset, n in tiers)
        for engine in (a, b):
            with engine.connect() as conn:
                settled = conn.execute(text("SELECT settled FROM variants")).scalar()
            assert settled
    finally:
        a.dispose()
        b.dispose()


@pytest.mark.postgres
def test_tiered_on_postgres_equals_sqlite(
    tmp_path: Path, pg_session_url: str, references: References
) -> None:
    game = get_game("connect-four", width=4, height=3)
    engine = make_engine(pg_session_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text("TRUNCATE edges, nodes, solve_runs, variants RESTART IDENTITY CASCADE")
            )
    finally:
        engine.dispose()
    lite_url, lite = reference_solve(
        references, tmp_path, "lite.db", "connect-four", {"width": 4, "height": 3}, tiers=True
    )
    pg = full_solve(game, pg_session_url, tiers=True)
    assert (pg.low, pg.high, pg.nodes, pg.edges) == (lite.low, lite.high, lite.nodes, lite.edges)
    a, b = make_engine(lite_url), make_engine(pg_session_url)
    try:
        assert stored(b, game)[2] == stored(a, game)[2]
        with b.connect() as conn:
            tiers = conn.execute(text("SELECT count(*), count(solved_in) FROM tiers")).one()
        assert tiers[0] == tiers[1] == 13  # 0..12 stones
    finally:
        a.dispose()
        b.dispose()


# -- random games with cycles inside tiers ----------------------------------------------


class RandomTiers(GameBase):
    """A random game on positions 0..n-1 in tiers (``seed``): moves stay in their tier,
    cycles included, or go to a higher tier; some positions are terminal."""

    name: ClassVar[str] = "random-tiers"
    tiers: ClassVar[bool] = True
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("seed", int, 0, "the graph's seed", min=0),
        Param("size", int, 30, "positions", min=2),
        Param("tiers", int, 4, "tiers", min=1),
    )

    def _configure(self) -> None:
        import random

        seed, n, k = (int(self.params[p]) for p in ("seed", "size", "tiers"))
        rng = random.Random(seed)
        self._tier = sorted(rng.randrange(k) for _ in range(n))
        self._tier[0] = 0
        self._moves: dict[int, list[tuple[str, int]]] = {}
        self._value: dict[int, int] = {}
        for p in range(n):
            if rng.random() < 0.25 or p == n - 1:
                self._value[p] = rng.choice([-1, 0, 1])
                continue
            pool = [q for q in range(n) if self._tier[q] >= self._tier[p] and q != p]
            moves = sorted(set(rng.sample(pool, min(len(pool), rng.randint(1, 3)))))
            if not moves:
                self._value[p] = 0
                continue
            self._moves[p] = [(f"m{q}", q) for q in moves]

    def initial(self) -> PositionKey:
        return 0

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        return list(self._moves.get(key, []))

    def terminal_value(self, key: PositionKey) -> int | None:
        return self._value.get(key)

    def parse(self, text: str) -> PositionKey:
        return int(text.removeprefix("p"))

    def format(self, key: PositionKey) -> str:
        return f"p{key}"

    def tier(self, key: PositionKey) -> int:
        return self._tier[key]

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return tuple(range(tier + 1, int(self.params["tiers"])))


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), size=st.integers(2, 40), tiers=st.integers(1, 5))
def test_random_games_with_cycles(tmp_path: Path, seed: int, size: int, tiers: int) -> None:
    game = RandomTiers(seed=seed, size=size, tiers=tiers)
    folder = tmp_path / f"{seed}-{size}-{tiers}"
    folder.mkdir()
    plain_url = sqlite_url(folder, "plain.db")
    tiered_url = sqlite_url(folder, "tiered.db")
    plain = full_solve(game, plain_url, tiers=False)
    tiered = full_solve(game, tiered_url, tiers=True)
    assert (tiered.low, tiered.high, tiered.depth_low, tiered.depth_high) == (
        plain.low,
        plain.high,
        plain.depth_low,
        plain.depth_high,
    )
    a, b = make_engine(plain_url), make_engine(tiered_url)
    try:
        nodes_a, moves_a, _ = stored(a, game)
        nodes_b, moves_b, _ = stored(b, game)
        assert nodes_b == nodes_a
        assert moves_b == moves_a
    finally:
        a.dispose()
        b.dispose()


class WrongTiers(RandomTiers):
    """Declares no child tiers at all: every move out of a tier breaks the contract."""

    name: ClassVar[str] = "wrong-tiers"

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return ()


def test_a_move_into_an_undeclared_tier_is_named(tmp_path: Path) -> None:
    game = WrongTiers(seed=3, size=30, tiers=4)
    source = next(
        p for p, ms in game._moves.items() if any(game.tier(q) != game.tier(p) for _, q in ms)
    )
    assert source is not None
    with pytest.raises(
        ContractError,
        match=r"the move 'm\d+' from 'p\d+' \(tier \d\) leads to 'p\d+' in tier \d, "
        r"which is not one of tier \d's child tiers",
    ):
        full_solve(game, sqlite_url(tmp_path, "wrong.db"), tiers=True)


def test_a_run_ended_in_discovery_reports_its_discovery_time(tmp_path: Path) -> None:
    """A budget spent while tiers are still being found: the result says how long the
    discovery ran (it said 0 seconds when the run ended before the solving sweep)."""
    engine = make_engine(sqlite_url(tmp_path, "c4.db"))
    try:
        c4 = get_game("connect-four", width=4, height=4)
        r = solve(c4, full=True, store=SqlStore(engine), tiers=True, max_expansions=5000)
        assert r.status == "budget" and r.extra["positions_solved"] == 0
        assert r.extra["discover_seconds"] > 0 and r.extra["solve_seconds"] == 0
    finally:
        engine.dispose()


# -- refusals ----------------------------------------------------------------------------


def test_refusals(tmp_path: Path) -> None:
    c4 = get_game("connect-four", width=4, height=3)
    with pytest.raises(InvalidParameterError, match="tiers are for full solves"):
        solve(c4, store=MemoryStore(), tiers=True)
    with pytest.raises(InvalidParameterError, match="needs a database"):
        solve(c4, full=True, store=MemoryStore(), tiers=True)
    with pytest.raises(InvalidParameterError, match="declares no tiers"):
        solve(get_game("domino-tiling"), full=True, store=MemoryStore(), tiers=True)
    url = sqlite_url(tmp_path, "c4.db")
    engine = make_engine(url)
    try:
        # a tiered solve stopped half-way: a partial run may not touch it
        r = solve(c4, full=True, store=SqlStore(engine), tiers=True, max_expansions=1)
        assert r.status == "budget"
        with pytest.raises(SolveError, match="tiered full solve in progress"):
            solve(c4, store=SqlStore(engine))
        with pytest.raises(SolveError, match="tiered full solve in progress"):
            solve(c4, full=True, store=SqlStore(engine), tiers=False)
        # by default the next full run goes on with tiers
        r = solve(c4, full=True, store=SqlStore(engine))
        assert r.status == "complete" and r.extra["tiers"] == 13
        # a variant solved partly without tiers continues without them by default...
        nap = get_game("nap", n=9)
        solve(nap, store=SqlStore(engine), max_expansions=3)
        assert "tiers" not in solve(nap, full=True, store=SqlStore(engine)).extra
        # ... and refuses them when asked
        grundy = get_game("grundy", n=11)
        solve(grundy, store=SqlStore(engine), max_expansions=3)
        with pytest.raises(SolveError, match="solved without tiers: continue it with --no-tiers"):
            solve(grundy, full=True, store=SqlStore(engine), tiers=True)
    finally:
        engine.dispose()


def _fresh_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest, name: str) -> str:
    """An empty database: a new SQLite file *name*, or the session's PostgreSQL one
    emptied."""
    if backend == "sqlite":
        return sqlite_url(tmp_path, name)
    url: str = request.getfixturevalue("pg_session_url")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE edges, nodes, solve_runs, variants RESTART IDENTITY CASCADE"))
    engine.dispose()
    return url


# -- kill -9 at every commit -------------------------------------------------------------


def _cli_args(url: str, *args: str) -> list[str]:
    """``negagraph solve``'s arguments: connect-four 4 x 3, full, tiered, into *url*."""
    return [
        "solve",
        "connect-four",
        "-p",
        "width=4",
        "-p",
        "height=3",
        "--full",
        "--tiers",
        "-q",
        "--db",
        url,
        *args,
    ]


def _cli(
    url: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NEGAGRAPH, *_cli_args(url, *args)],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _cli_in_process(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`_cli` run in this process (click's runner): the run that resumes a killed
    one, which is about the database it finds, not about a process (a second's imports
    saved a run)."""
    from click.testing import CliRunner

    from api.cli import cli

    command = _cli_args(url, *args)
    result = CliRunner().invoke(cli, command)
    failure = "" if result.exception is None else f"\n{result.exception!r}"
    return subprocess.CompletedProcess(
        command, result.exit_code, result.stdout, result.stderr + failure
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_killed_at_every_commit_resumes_to_the_same_rows(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, references: References
) -> None:
    game = get_game("connect-four", width=4, height=3)
    reference_url = reference_cli(references, tmp_path, "reference.db")
    ref = make_engine(reference_url)
    try:
        expected = stored(ref, game)[2]
    finally:
        ref.dispose()
    # 13 tiers: 13 discovery commits, then 13 solving commits
    for after in (1, 5, 13, 14, 20, 26):
        url = _fresh_url(backend, tmp_path, request, f"killed-{after}.db")
        killed = _cli(url, env={CRASH_ENV: f"commit:{after}"})
        assert killed.returncode == -9, killed.stderr
        if backend == "sqlite":
            # written without a key index (db.backends.sqlite.keyindex) until the commit of the last
            # tier builds it, yet a reader finds positions
            assert _key_indexes(url) == (set() if after < 26 else {"nodes_key_1"}), after
            _probe_first_positions(url, game)
        # discovered positions wait as arrays; node rows are written as tiers are solved
        nodes, staged = _layout(url)
        assert (nodes == 0) == (after <= 13), after
        assert (staged == 0) == (after == 26), after
        done = _cli_in_process(url)
        assert done.returncode == 0, done.stderr
        engine = make_engine(url)
        try:
            assert stored(engine, game)[2] == expected, after
        finally:
            engine.dispose()
        if backend == "sqlite":  # built whole, once, by the run that solved the last tier
            assert _key_indexes(url) == {"nodes_key_1"}


@pytest.mark.parametrize(
    ("backend", "crash"),
    [
        ("sqlite", "commit:13"),  # every tier discovered, none solved
        ("sqlite", "shard:90"),  # some tiers solved, one in mid-solve
        pytest.param("postgres", "shard:90", marks=pytest.mark.postgres),
    ],
)
def test_0015_converts_a_tiered_solve_in_progress(
    backend: str, crash: str, tmp_path: Path, references: References
) -> None:
    """A tiered solve stopped under the schema before 0015 (its discovered positions
    unexpanded node rows, a tier's solved shards rewritten in place, ids in discovery
    order) is converted by the upgrades and resumes to the positions and moves of an
    uninterrupted solve; the downgrades refuse while discovered positions wait or while
    ids follow solve order."""
    from db.migrate import downgrade

    game = get_game("connect-four", width=4, height=3)
    reference_url = reference_cli(references, tmp_path, "reference.db", "--shard-size", "300")
    ref = make_engine(reference_url)
    try:
        expected = stored(ref, game)[:2]
    finally:
        ref.dispose()
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            url = sqlite_url(tmp_path, "old.db")
        else:
            url = stack.enter_context(pg_database("negagraph_0015"))
            upgrade(url)
        killed = _cli(url, "--shard-size", "300", env={CRASH_ENV: crash})
        assert killed.returncode == -9, killed.stderr
        with pytest.raises(Exception, match="0016 cannot be undone: a tiered solve gave"):
            downgrade(url, "0015")
        _ids_in_discovery_order(url)
        with pytest.raises(Exception, match="cannot be undone while a tiered solve"):
            downgrade(url, "0014")
        _as_before_0015(url, game)
        downgrade(url, "0014")
        upgrade(url)
        assert _layout(url)[1] > 0
        done = _cli_in_process(url, "--shard-size", "77")
        assert done.returncode == 0, done.stderr
        engine = make_engine(url)
        try:
            assert stored(engine, game)[:2] == expected
        finally:
            engine.dispose()
        assert _layout(url)[1] == 0


def _ids_in_discovery_order(url: str) -> None:
    """Renumber a stopped tiered solve's tiers as the schema before 0016 numbered them,
    in discovery order (a tier's ids from its ``first_offset``): node rows, moves, the
    solved shards' marks and the tiers' ``first_id``."""
    engine = make_engine(url)
    far = 1 << 30  # ids moved out of the way first, so that none collide
    try:
        with engine.begin() as conn:
            # the moves follow their nodes: foreign keys checked at the commit (SQLite) or
            # not at all (PostgreSQL, as a replica would apply them)
            if engine.dialect.name != "sqlite":
                conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
            else:
                conn.exec_driver_sql("PRAGMA defer_foreign_keys = ON")
            tiers = conn.execute(text("SELECT first_id, first_offset, nodes FROM tiers")).all()
            for step in (0, 1):
                for first, offset, count in tiers:
                    lo, shift = (first, far + offset - first) if step == 0 else (far + offset, -far)
                    span = {"lo": lo, "hi": lo + count, "d": shift}
                    for table, column in (
                        ("nodes", "id"),
                        ("edges", "parent"),
                        ("edges", "child"),
                        ("tier_shards", "first_id"),
                    ):
                        steps = " AND step = 'solve'" if table == "tier_shards" else ""
                        conn.execute(
                            text(
                                f"UPDATE {table} SET {column} = {column} + :d "
                                f"WHERE {column} >= :lo AND {column} < :hi{steps}"
                            ),
                            span,
                        )
            conn.execute(text("UPDATE tiers SET first_id = first_offset"))
    finally:
        engine.dispose()


def _as_before_0015(url: str, game: Any) -> None:
    """Rewrite a stopped tiered solve's discovered positions (``discovered_positions``) as the
    schema before 0015 held them: node rows, unexpanded (terminal ones exact and final),
    where no solved shard wrote one."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            have = {i for (i,) in conn.execute(text("SELECT id FROM nodes"))}
            chunks = conn.execute(
                text(
                    "SELECT first_offset, count, keys, dist, terminal, value "
                    "FROM discovered_positions"
                )
            ).all()
            nodes = db_rows.staged_nodes(sorted(chunks), 0, sum(c[1] for c in chunks))
            for i in range(int(nodes.keys.size)):
                if i in have:
                    continue
                key = int(nodes.keys[i])
                term = bool(nodes.terminal[i])
                value = int(nodes.value[i]) if term else None
                conn.execute(
                    text(
                        "INSERT INTO nodes (variant_id, id, low, high, depth_low, depth_high, "
                        'dist, state, low_final, high_final, "key", notation) VALUES '
                        "(1, :i, :v, :v, :d, :d, :dist, :s, :f, :f, :k, :n)"
                    ),
                    {
                        "i": i,
                        "v": value,
                        "d": 0 if term else None,
                        "dist": int(nodes.dist[i]),
                        "s": 2 if term else 0,
                        "f": term,
                        "k": key.to_bytes(max(1, (key.bit_length() + 7) >> 3), "big"),
                        "n": game.format(key),
                    },
                )
            conn.execute(text("DELETE FROM discovered_positions"))
    finally:
        engine.dispose()


def _layout(url: str) -> tuple[int, int]:
    """The node rows and the positions waiting in ``discovered_positions``."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            nodes = conn.execute(text("SELECT count(*) FROM nodes")).scalar_one()
            staged = conn.execute(
                text("SELECT coalesce(sum(count), 0) FROM discovered_positions")
            ).scalar_one()
            return int(nodes), int(staged)
    finally:
        engine.dispose()


def _key_indexes(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB 'nodes_key_*'"
            )
            return {name for (name,) in found}
    finally:
        engine.dispose()


def _probe_first_positions(url: str, game: Any) -> None:
    """The stored positions of the first ids are found by key (and one not stored is not)."""
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            firsts = session.execute(
                text('SELECT id, "key" FROM nodes WHERE variant_id = 1 AND id < 20')
            ).all()
            keys = {int.from_bytes(k, "big"): i for i, k in firsts}
            every = session.execute(text('SELECT "key" FROM nodes WHERE variant_id = 1')).all()
            absent = max((int.from_bytes(k, "big") for (k,) in every), default=0) + 1
            found = stored_positions(session, 1, [*keys, absent])
            assert {k: r.node_id for k, r in found.items()} == keys
    finally:
        engine.dispose()


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_killed_in_mid_tier_resumes_to_the_same_rows(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, references: References
) -> None:
    """Units of 300 positions: 48 slices written, then 48 shards solved, each its own
    transaction; killed after some of a tier's units, the next run keeps them, runs the
    rest and ends with the rows of an uninterrupted run."""
    game = get_game("connect-four", width=4, height=3)
    reference_url = reference_cli(references, tmp_path, "reference.db", "--shard-size", "300")
    ref = make_engine(reference_url)
    try:
        expected = stored(ref, game)[2]
        with ref.connect() as conn:
            units = conn.execute(text("SELECT step, count(*) FROM tier_shards GROUP BY step"))
            assert dict(units.all()) == {"discover": 48, "solve": 48}
    finally:
        ref.dispose()
    for after in (5, 30, 50, 90):
        url = _fresh_url(backend, tmp_path, request, f"killed-shard-{after}.db")
        killed = _cli(url, "--shard-size", "300", env={CRASH_ENV: f"shard:{after}"})
        assert killed.returncode == -9, killed.stderr
        # another shard size on resume: the units written stay, the gaps are cut anew
        done = _cli_in_process(url, "--shard-size", "77")
        assert done.returncode == 0, done.stderr
        engine = make_engine(url)
        try:
            assert stored(engine, game)[2] == expected, after
            with engine.connect() as conn:
                left = conn.execute(text("SELECT count(*) FROM tier_shards WHERE nodes > 300"))
                assert left.scalar_one() == 0
        finally:
            engine.dispose()


def test_a_stopped_run_records_the_units_it_wrote(db_url: str) -> None:
    """A run stopped after a unit was written and before its tier was recorded (Ctrl-C
    in between) records what is stored, units included, not what it had counted."""
    c4 = get_game("connect-four", width=4, height=3)
    root = c4.initial()
    engine = make_engine(db_url)
    try:
        store = SqlStore(engine)
        store.open(c4, RunOptions(root, True, None, None, tiered=True))
        one = TierNodes(
            np.array([root], np.int64),
            np.zeros(1, np.int32),
            np.zeros(1, bool),
            np.zeros(1, np.int64),
        )
        assert store.write_nodes(NodeShard(0, 0, one), c4, "here", time.monotonic())
        store.close(progress_of(Graph(), "stopped"))
        with engine.connect() as conn:
            nodes, added, status = conn.execute(
                text("SELECT nodes, nodes_added, status FROM solve_runs")
            ).one()
            rows = conn.execute(text("SELECT count(*) FROM nodes")).scalar_one()
            found = conn.execute(text("SELECT sum(count) FROM discovered_positions")).scalar_one()
    finally:
        engine.dispose()
    # the position waits as discovered (no node row until its tier is solved)
    assert (rows, found) == (0, 1)
    assert (nodes, added, status) == (1, 1, "stopped")


@pytest.mark.slow
def test_a_tier_s_discovery_reports_what_it_has_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, references: References
) -> None:
    """Chess tiers are named by their material; the listing of the game's tablebase
    positions and a tier's discovery report how far they are as they go (here as often as
    they may); batches of any size store the same rows, id for id."""
    game: Any = get_game("chess", material="KQvK")
    large, _ = reference_solve(  # the default batches, before the monkeypatches
        references, tmp_path, "large-batches.db", "chess", {"material": "KQvK"}, tiers=True
    )
    monkeypatch.setattr(tier_discovery, "DISCOVERY_REPORT", 0.0)  # report every batch
    monkeypatch.setattr(tier_discovery, "FIRST_DISCOVERY_BATCH", 256)
    monkeypatch.setattr(tier_discovery, "DISCOVERY_BATCH", 256)  # never larger
    phases: list[str] = []
    small = sqlite_url(tmp_path, "small-batches.db")
    full_solve(game, small, tiers=True, progress=lambda p: phases.append(p.phase))
    listing = [p for p in phases if p.startswith("listing the game's tablebase positions: ")]
    assert listing and listing[0].endswith(": 4,096")  # every 4,096 positions at most
    assert "discovering tier KQvK" in phases and "discovering tier KvK" in phases
    assert any(p.startswith("solving tier KQvK: ") for p in phases)
    reports = [p for p in phases if p.startswith("discovering tier KQvK: ")]
    counts = [tuple(int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", p)) for p in reports]
    assert len(counts) > 10 and counts == sorted(counts)
    assert all(found >= expanded for found, expanded in counts)
    a, b = make_engine(large), make_engine(small)
    try:
        assert stored(b, game) == stored(a, game)
    finally:
        a.dispose()
        b.dispose()
