"""SqlStore against real SQLite and PostgreSQL databases: round trips, locking and
leases, rules versions, schema checks, atomic batches (including ``kill -9`` mid-batch)
and whole solves through :func:`solver.negamax.solve`."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, make_url, select, text, update
from sqlalchemy import exc as sa_exc

import db.rows
from db.backends.postgres import PostgresBackend, copy_text
from db.backends.sqlite.resume import resume_path
from db.errors import DatabaseError, RulesVersionError, SchemaError, VariantLockedError
from db.migrate import current_revision, downgrade, head_revision, upgrade
from db.models import Edge, Node, SolveRun, Variant, encode_key, utcnow
from db.session import make_engine
from db.store import SqlStore, load_graph
from solver.errors import SolveError
from solver.games import get_game
from solver.graph import EXPANDED, TERMINAL, UNEXPANDED, Graph
from solver.negamax import solve
from solver.store import Batch, MemoryStore
from solver.values import DEPTH_INF, NEG_INF, POS_INF
from tests.db.helpers import (
    BIG_KEY,
    TinyGame,
    TinyGameV2,
    assert_consistent,
    build_first_batch,
    build_second_batch,
    keyed_snapshot,
    pg_database,
    progress_of,
    run_options,
    set_node,
    snapshot,
)
from tests.oracles import ExplicitGame

ROOT = Path(__file__).resolve().parents[2]


def count(engine: Engine, model: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(model)).scalar_one())


def runs(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(select(SolveRun.__table__).order_by(SolveRun.id)))


def commit_two_batches(engine: Engine, game: TinyGame | None = None) -> Graph:
    store = SqlStore(engine)
    graph = store.open(game or TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    build_second_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "complete"))
    return graph


# -- round trips -----------------------------------------------------------------------


def test_empty_variant_opens_empty(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    assert graph.num_nodes == 0 and graph.num_edges == 0
    assert store.run_id is not None and store.variant_id is not None
    store.close(progress_of(graph, "stopped"))
    assert store.run_id is None
    [variant] = _variants(engine)
    assert (variant.game, variant.params, variant.rules_version) == ("tiny", "size=15", 1)
    assert variant.params_json == '{"size": 15}'
    assert (variant.root_key, variant.root_notation) == (b"\x00", "p0")


def _variants(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(select(Variant.__table__)))


def test_round_trip_is_exact(engine: Engine) -> None:
    written = commit_two_batches(engine)
    assert_consistent(written)

    store = SqlStore(engine)
    loaded = store.open(TinyGame(), run_options())
    try:
        assert_consistent(loaded)
        assert snapshot(loaded) == snapshot(written)
        # Here edges were also created in parent order, so even edge ids and the reverse
        # lists agree: every array is identical.
        assert vars(loaded) == vars(written)
        assert loaded.keys[2] == BIG_KEY
        assert loaded.low[1] == -2 and loaded.high[2] == -1
        assert loaded.low[4] == NEG_INF and loaded.high[4] == POS_INF
        assert loaded.depth_low[4] == DEPTH_INF
        assert list(loaded.state) == [
            EXPANDED,
            EXPANDED,
            TERMINAL,
            UNEXPANDED,
            EXPANDED,
            TERMINAL,
            UNEXPANDED,
        ]
        assert loaded.child_ids(1) == [4, 5, 0, 3]
        assert sorted(loaded.parents(0)) == [1]
        assert loaded.get(2**64) == 5
    finally:
        store.close(progress_of(loaded, "stopped"))
    assert load_graph(engine, TinyGame()).keys == written.keys


def test_rows_are_what_analysts_expect(engine: Engine) -> None:
    commit_two_batches(engine)
    with engine.connect() as conn:
        nodes = {r.id: r for r in conn.execute(select(Node.__table__).order_by(Node.id))}
        edges = list(conn.execute(select(Edge.__table__).order_by(Edge.parent, Edge.move_order)))
        view = {
            r.node_id: r
            for r in conn.execute(text("SELECT * FROM position_values ORDER BY node_id"))
        }
    assert nodes[0].key == b"\x00" and nodes[3].key == b"\xff" and nodes[4].key == b"\x01\x00"
    assert nodes[2].key == encode_key(BIG_KEY)
    assert nodes[2].notation == f"p{BIG_KEY}"
    assert (nodes[0].low, nodes[0].high, nodes[0].depth_low, nodes[0].depth_high) == (1, 2, 3, 5)
    assert (nodes[4].low, nodes[4].high, nodes[4].depth_low) == (None, None, None)
    assert (nodes[6].dist, nodes[6].state) == (3, 0)
    assert [(e.parent, e.move_order, e.child, e.move) for e in edges] == [
        (0, 0, 1, "L"),
        (0, 1, 2, "R"),
        (0, 2, 3, "X"),
        (1, 0, 4, "a"),
        (1, 1, 5, "b"),
        (1, 2, 0, "c"),
        (1, 3, 3, "d"),
        (4, 0, 1, "z"),
    ]
    assert set(view) == set(range(7))
    assert (view[2].game, view[2].params, view[2].position) == ("tiny", "size=15", f"p{BIG_KEY}")
    assert (view[2].value, view[2].state) == (-1, "terminal")
    assert (view[0].value, view[0].state, view[0].low, view[0].high) == (None, "expanded", 1, 2)
    assert (view[4].low, view[4].high, view[4].value, view[4].state) == (
        None,
        None,
        None,
        "expanded",
    )
    assert bool(view[3].low_final) and view[3].value == -3


def test_run_rows_record_progress(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    [run] = runs(engine)
    assert run.status == "running" and run.finished_at is None
    assert (run.nodes, run.edges, run.root_low, run.root_high) == (4, 3, 1, None)
    assert run.root_low_final and not run.root_high_final
    assert run.pid == os.getpid() and run.hostname == socket.gethostname()
    store.close(progress_of(graph, "budget"))
    [run] = runs(engine)
    assert run.status == "budget" and run.finished_at is not None
    assert run.seconds == 1.5 and run.root_notation == "p0" and not run.tablebase


def test_resume_adds_to_the_stored_graph(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "budget"))

    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    assert graph.committed_nodes == 4
    build_second_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "complete"))
    assert count(engine, Node) == 7 and count(engine, Edge) == 8
    assert [r.status for r in runs(engine)] == ["budget", "complete"]


def test_variants_are_separate(engine: Engine) -> None:
    small, large = SqlStore(engine), SqlStore(engine)
    g1 = small.open(TinyGame(size=15), run_options())
    g2 = large.open(TinyGame(size=31), run_options())  # a different variant: not locked
    build_first_batch(g1)
    small.commit(Batch.of(g1), progress_of(g1))
    assert g2.num_nodes == 0
    large.close(progress_of(g2, "stopped"))
    small.close(progress_of(g1, "stopped"))
    assert load_graph(engine, TinyGame(size=31)).num_nodes == 0
    assert load_graph(engine, TinyGame(size=15)).num_nodes == 4


def test_commit_of_a_foreign_graph_is_refused(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    with pytest.raises(SolveError, match="did not return"):
        store.commit(Batch.of(Graph()), progress_of(graph))
    store.close(progress_of(graph, "stopped"))
    with pytest.raises(SolveError, match="not open"):
        store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "stopped"))  # idempotent


def test_a_transaction_cut_short_inside_begin_still_lets_the_run_be_recorded(
    engine: Engine,
) -> None:
    """Ctrl-C can land inside SQLAlchemy's ``begin()`` after it made its transaction but
    before the ``with`` block was entered (a killed tiered solve showed it in CI): the
    connection then holds a transaction nothing will end, and recording the run's end
    must not fail on it (it raised InvalidRequestError: exit 1 and a traceback)."""
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    assert store.writer.conn is not None
    store.writer.conn.begin()  # what the interrupted begin() leaves behind
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        store.close(progress_of(graph, "stopped"))
    with engine.connect() as conn:
        assert conn.execute(select(SolveRun.status)).scalars().all() == ["stopped"]
    assert load_graph(engine, TinyGame()).num_nodes == graph.num_nodes  # the commit holds
    again = SqlStore(engine)  # and the lock is free
    again.close(progress_of(again.open(TinyGame(), run_options()), "stopped"))


def test_a_failed_clean_up_after_ctrl_c_is_the_stop_not_a_database_error(engine: Engine) -> None:
    """A second Ctrl-C can land inside a PostgreSQL COPY; the rollback that follows then
    fails on the busy connection ("another command is already in progress", seen in a
    test run) and SQLAlchemy raises that instead. The store's error translation gives back
    the Ctrl-C, so the run ends as stopped, not as a database error with exit status 1;
    a driver error that no Ctrl-C caused is still a DatabaseError."""
    from sqlalchemy import exc as sa_exc

    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    dbapi = engine.dialect.loaded_dbapi
    busy = sa_exc.OperationalError(
        "ROLLBACK", None, dbapi.OperationalError("another command is already in progress")
    )
    ctrl_c = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt) as raised:
        with store.writer.errors():
            try:
                raise ctrl_c
            except KeyboardInterrupt:
                raise busy from None  # (as SQLAlchemy's rollback does: context kept)
    assert raised.value is ctrl_c
    with pytest.raises(DatabaseError, match="busy"):
        with store.writer.errors():
            raise sa_exc.OperationalError("ROLLBACK", None, dbapi.OperationalError("busy"))
    store.close(progress_of(graph, "stopped"))


# -- locking ---------------------------------------------------------------------------


def test_second_writer_is_locked_out(engine: Engine) -> None:
    first = SqlStore(engine)
    graph = first.open(TinyGame(), run_options())
    second = SqlStore(engine)
    with pytest.raises(VariantLockedError) as info:
        second.open(TinyGame(), run_options())
    message = str(info.value)
    assert f"run {first.run_id}" in message and f"pid {os.getpid()}" in message
    assert socket.gethostname() in message and "since" in message
    assert isinstance(info.value, SolveError)
    first.close(progress_of(graph, "stopped"))

    graph2 = second.open(TinyGame(), run_options())  # free again
    second.close(progress_of(graph2, "stopped"))
    assert [r.status for r in runs(engine)] == ["stopped", "stopped"]


def test_lease_of_a_dead_process_is_taken_over(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    first = SqlStore(engine)
    graph = first.open(TinyGame(), run_options())
    build_first_batch(graph)
    first.commit(Batch.of(graph), progress_of(graph))
    run_id = first.run_id
    assert run_id is not None
    # Pretend the writer was that (now dead) process and vanished without closing.
    with engine.begin() as conn:
        conn.execute(update(SolveRun).where(SolveRun.id == run_id).values(pid=pid))
    first.writer.conn.close()  # type: ignore[union-attr]
    first.writer.conn = None

    second = SqlStore(engine)
    loaded = second.open(TinyGame(), run_options())
    assert snapshot(loaded) == snapshot(graph)
    second.close(progress_of(loaded, "stopped"))
    assert [(r.id, r.status) for r in runs(engine)] == [(run_id, "failed"), (run_id + 1, "stopped")]


@pytest.mark.parametrize(
    ("hostname", "age", "reused", "stale"),
    [
        ("elsewhere.example", timedelta(hours=1), False, True),
        ("elsewhere.example", timedelta(seconds=5), False, False),
        (None, timedelta(hours=1), False, False),  # this host, live pid: never stale
        (None, timedelta(0), True, True),  # this host, pid reused by a newer process
    ],
)
def test_sqlite_lease_staleness(
    sqlite_engine: Engine, hostname: str | None, age: timedelta, reused: bool, stale: bool
) -> None:
    engine = sqlite_engine
    first = SqlStore(engine)
    graph = first.open(TinyGame(), run_options())
    values: dict[str, Any] = {"heartbeat_at": utcnow() - age}
    if hostname is not None:
        values["hostname"] = hostname
    if reused:
        values["started_at"] = utcnow() - timedelta(days=365 * 30)
    with engine.begin() as conn:
        conn.execute(update(SolveRun).where(SolveRun.id == first.run_id).values(**values))

    second = SqlStore(engine, lease_timeout=600)
    if stale:
        taken = second.open(TinyGame(), run_options())
        # The first writer is fenced off: its next commit fails and writes nothing.
        build_first_batch(graph)
        with pytest.raises(VariantLockedError, match="lost its lock"):
            first.commit(Batch.of(graph), progress_of(graph))
        assert count(engine, Node) == 0
        first.close(progress_of(graph, "stopped"))
        second.close(progress_of(taken, "stopped"))
        assert [r.status for r in runs(engine)] == ["failed", "stopped"]
    else:
        with pytest.raises(VariantLockedError, match="is being solved by run"):
            second.open(TinyGame(), run_options())
        first.close(progress_of(graph, "stopped"))


def test_taken_over_writer_cannot_commit(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    with engine.begin() as conn:  # what a takeover does to the lease
        conn.execute(update(SolveRun).where(SolveRun.id == store.run_id).values(status="failed"))
    with pytest.raises(VariantLockedError, match="lost its lock"):
        store.commit(Batch.of(graph), progress_of(graph))
    assert graph.committed_nodes == 0
    store.close(progress_of(graph, "failed"))
    assert count(engine, Node) == 0


_KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    import db.rows
    from db.session import make_engine
    from db.store import SqlStore
    from solver.store import Batch
    from tests.db.helpers import (
        TinyGame, build_first_batch, build_second_batch, progress_of, run_options,
    )

    engine = make_engine(sys.argv[1])
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    build_second_batch(graph)

    def die(*args, **kwargs):  # after the nodes of batch 2 are in, before its edges
        os.kill(os.getpid(), signal.SIGKILL)
        yield

    db.rows.edge_columns = die
    store.commit(Batch.of(graph), progress_of(graph))
    """
)


def test_kill_9_in_mid_batch_loses_only_that_batch(engine: Engine, db_url: str) -> None:
    first_batch = Graph()
    build_first_batch(first_batch)
    first_batch.mark_committed()

    child = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, db_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    # The crashed run left its lease behind; the next writer takes over (SQLite: dead pid;
    # PostgreSQL: the advisory lock died with the connection) and sees batch 1 only.
    assert [r.status for r in runs(engine)] == ["running"]
    assert count(engine, Node) == 4

    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())  # PostgreSQL: waits for the dead lock
    assert snapshot(graph) == snapshot(first_batch)
    build_second_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "complete"))
    assert [r.status for r in runs(engine)] == ["failed", "complete"]
    assert count(engine, Node) == 7


# -- failures --------------------------------------------------------------------------


def test_failed_batch_leaves_nothing_behind(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    before = snapshot(load_graph(engine, TinyGame()))
    [run_before] = runs(engine)

    build_second_batch(graph)
    bad = graph.add_node(999, 4, None)
    set_node(graph, bad, 5, 4)  # violates CHECK (low <= high), after good new nodes
    set_node(graph, 3, 0, 0)  # a dirty old node, updated after the inserts
    with pytest.raises(DatabaseError, match="ck_nodes_low_le_high|CHECK constraint"):
        store.commit(Batch.of(graph), progress_of(graph))
    assert graph.committed_nodes == 4  # still pending: the solver could retry
    assert snapshot(load_graph(engine, TinyGame())) == before
    [run_after] = runs(engine)
    assert run_after.nodes == run_before.nodes == 4

    # The store is still usable once the bad node is fixed.
    set_node(graph, bad, 4, 5)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "complete"))
    assert count(engine, Node) == 8


def test_failure_after_node_inserts_rolls_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    build_second_batch(graph)

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")
        yield  # a generator, like the real one

    monkeypatch.setattr(db.rows, "edge_columns", fail)
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.commit(Batch.of(graph), progress_of(graph))
    assert count(engine, Node) == 4 and count(engine, Edge) == 3
    store.close(progress_of(graph, "failed"))
    assert [r.status for r in runs(engine)] == ["failed"]


def test_readers_never_see_half_a_batch(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    build_second_batch(graph)
    seen: list[tuple[int, int]] = []
    real_edge_columns = db.rows.edge_columns

    def peek(*args: Any) -> Any:
        # Batch 2's nodes are written but not committed: another connection (which must
        # not be blocked either) still sees exactly batch 1.
        seen.append((count(engine, Node), count(engine, Edge)))
        yield from real_edge_columns(*args)

    monkeypatch.setattr(db.rows, "edge_columns", peek)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "complete"))
    assert seen == [(4, 3)]
    assert (count(engine, Node), count(engine, Edge)) == (7, 8)


def test_foreign_keys_hold(sqlite_engine: Engine) -> None:
    # The SQLite writer skips enforcing them (check_foreign_keys=False); they must hold.
    for check in (False, True):
        store = SqlStore(sqlite_engine, check_foreign_keys=check)
        game = TinyGame(size=15 + check)
        graph = store.open(game, run_options())
        build_first_batch(graph)
        store.commit(Batch.of(graph), progress_of(graph))
        build_second_batch(graph)
        store.commit(Batch.of(graph), progress_of(graph))
        store.close(progress_of(graph, "complete"))
    solve(get_game("tic-tac-toe"), full=True, store=SqlStore(sqlite_engine))
    with sqlite_engine.connect() as conn:
        assert conn.execute(text("PRAGMA foreign_key_check")).all() == []
        assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1  # restored
        assert conn.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"


_ORPHANS = (
    "SELECT (SELECT count(*) FROM edges AS e WHERE NOT EXISTS (SELECT 1 FROM nodes AS n "
    "WHERE n.variant_id = e.variant_id AND n.id = e.parent)) + (SELECT count(*) FROM edges "
    "AS e WHERE NOT EXISTS (SELECT 1 FROM nodes AS n WHERE n.variant_id = e.variant_id AND "
    "n.id = e.child)) + (SELECT count(*) FROM nodes AS n WHERE NOT EXISTS (SELECT 1 FROM "
    "variants AS v WHERE v.id = n.variant_id))"
)


def _roles_in_batches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``session_replication_role`` as each PostgreSQL batch left it (recorded per commit)."""
    seen: list[str] = []
    write = PostgresBackend.write_rows  # every batch's rows, tiered or not

    def recording(self: PostgresBackend, cursor: Any, *args: Any) -> None:
        write(self, cursor, *args)
        cursor.execute("SHOW session_replication_role")
        seen.append(cursor.fetchone()[0])

    monkeypatch.setattr(PostgresBackend, "write_rows", recording)
    return seen


@pytest.mark.postgres
@pytest.mark.parametrize("check", [False, True])
def test_postgres_writer_skips_the_key_checks_only_in_its_batches(
    pg_session_url: str, monkeypatch: pytest.MonkeyPatch, check: bool
) -> None:
    # The PostgreSQL counterpart of foreign_keys = OFF: SET LOCAL session_replication_role
    # in the writer's batches (the test role is a superuser); the keys must hold anyway.
    roles = _roles_in_batches(monkeypatch)
    with pg_database() as url:
        upgrade(url)
        engine = make_engine(url)
        try:
            solve(
                get_game("tic-tac-toe"),
                full=True,
                store=SqlStore(engine, check_foreign_keys=check),
                batch_size=2_000,
            )
            assert len(roles) > 2 and set(roles) == {"origin" if check else "replica"}
            with engine.connect() as conn:
                assert conn.execute(text(_ORPHANS)).scalar_one() == 0
                # nothing of it outlives the batch: a pooled connection is back to normal
                assert conn.execute(text("SHOW session_replication_role")).scalar() == "origin"
            memory = MemoryStore()
            solve(get_game("tic-tac-toe"), full=True, store=memory, batch_size=2_000)
            [expected] = memory.graphs.values()
            loaded = load_graph(engine, get_game("tic-tac-toe"))  # tiered: its own ids
            assert keyed_snapshot(loaded) == keyed_snapshot(expected)
        finally:
            engine.dispose()


@pytest.mark.postgres
def test_postgres_writer_without_the_right_keeps_the_checks(
    pg_session_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    roles = _roles_in_batches(monkeypatch)
    role = f"negagraph_plain_{secrets.token_hex(4)}"
    with pg_database() as url:
        upgrade(url)
        admin = make_engine(url)
        with admin.begin() as conn:
            conn.execute(text(f'CREATE ROLE "{role}" LOGIN NOSUPERUSER'))
        try:
            with admin.begin() as conn:
                for grant in (
                    "ALL ON ALL TABLES IN SCHEMA public",
                    "ALL ON ALL SEQUENCES IN SCHEMA public",
                ):
                    conn.execute(text(f'GRANT {grant} TO "{role}"'))
            engine = make_engine(
                make_url(url).set(username=role).render_as_string(hide_password=False)
            )
            try:
                with caplog.at_level(logging.INFO, logger="db.backends.postgres"):
                    result = solve(
                        get_game("tic-tac-toe"), full=True, store=SqlStore(engine), batch_size=2_000
                    )
                assert result.complete and (result.low, result.high) == (0, 0)
                assert roles and set(roles) == {"origin"}
                assert any("foreign keys stay checked" in r.getMessage() for r in caplog.records)
                with engine.connect() as conn:
                    assert conn.execute(text(_ORPHANS)).scalar_one() == 0
            finally:
                engine.dispose()
        finally:
            with admin.begin() as conn:  # roles belong to the whole server
                conn.execute(text(f'DROP OWNED BY "{role}"'))
                conn.execute(text(f'DROP ROLE "{role}"'))
            admin.dispose()


def test_rules_version_mismatch_is_refused(engine: Engine) -> None:
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    store.close(progress_of(graph, "stopped"))
    with pytest.raises(RulesVersionError) as info:
        SqlStore(engine).open(TinyGameV2(), run_options())
    assert "rules version 1" in str(info.value) and "rules version 2" in str(info.value)
    with pytest.raises(RulesVersionError):
        load_graph(engine, TinyGameV2())
    assert len(runs(engine)) == 1


def test_database_not_at_head_is_refused(engine: Engine, db_url: str) -> None:
    downgrade(engine, "base")
    try:
        with pytest.raises(SchemaError) as info:
            SqlStore(engine).open(TinyGame(), run_options())
        message = str(info.value)
        assert "not at schema head" in message and f"need {head_revision()}" in message
        assert "negagraph db upgrade --db" in message
    finally:
        upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'ffffffff'"))
    try:
        with pytest.raises(SchemaError, match="does not know"):
            SqlStore(engine).open(TinyGame(), run_options())
    finally:
        with engine.begin() as conn:
            conn.execute(text(f"UPDATE alembic_version SET version_num = '{head_revision()}'"))


def test_an_empty_sqlite_file_gets_the_schema(tmp_path: Path) -> None:
    """As with `negagraph solve` (issue 14: the README's snippet on a new file)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        store = SqlStore(engine)
        graph = store.open(TinyGame(), run_options())
        assert graph.num_nodes == 0 and store.run_id is not None
        store.close(progress_of(graph, "stopped"))
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_unreachable_database_is_a_clean_error(tmp_path: Path) -> None:
    for url in (
        f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}",
        "postgresql://postgres@127.0.0.1:1/nothing",
    ):
        engine = make_engine(url)
        try:
            with pytest.raises(DatabaseError, match="cannot use database"):
                SqlStore(engine).open(TinyGame(), run_options())
        finally:
            engine.dispose()


def test_engine_must_come_from_make_engine(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    engine = create_engine(f"sqlite:///{tmp_path / 'plain.db'}")
    try:
        with pytest.raises(DatabaseError, match="make_engine"):
            SqlStore(engine).open(TinyGame(), run_options())
    finally:
        engine.dispose()


# -- whole solves ----------------------------------------------------------------------


def test_solve_tic_tac_toe_through_the_store(engine: Engine) -> None:
    game = get_game("tic-tac-toe")
    result = solve(game, full=True, store=SqlStore(engine))
    assert result.complete and (result.low, result.high) == (0, 0)

    memory = MemoryStore()
    solve(game, full=True, store=memory)
    [expected] = memory.graphs.values()
    loaded = load_graph(engine, game)
    assert_consistent(loaded)
    assert keyed_snapshot(loaded) == keyed_snapshot(expected)  # tiered: its own ids
    assert count(engine, Node) == result.nodes and count(engine, Edge) == result.edges
    [run] = runs(engine)
    assert (run.status, run.root_low, run.root_high, run.tablebase) == ("complete", 0, 0, True)

    again = solve(game, full=True, store=SqlStore(engine))  # nothing left to do
    assert (again.low, again.high, again.expansions) == (0, 0, 0)


def test_interrupted_solve_matches_uninterrupted(engine: Engine) -> None:
    game = get_game("number-game")
    memory = MemoryStore()
    once = solve(game, store=memory)
    [expected] = memory.graphs.values()

    result = solve(game, store=SqlStore(engine), max_expansions=2)
    steps = 1
    while not result.complete:
        result = solve(game, store=SqlStore(engine), max_expansions=2)
        steps += 1
        assert steps < 100
    assert steps > 3
    assert (result.low, result.high, result.low_final, result.high_final) == (3, 5, True, True)
    assert (result.low, result.high) == (once.low, once.high)
    assert snapshot(load_graph(engine, game)) == snapshot(expected)
    assert [r.status for r in runs(engine)] == ["budget"] * (steps - 1) + ["complete"]


def test_full_solve_interrupted_then_finished_in_partial_mode(engine: Engine) -> None:
    # A full solve records expansions through its edges only (the state column catches
    # up at its last commit); a stop in between, then a partial run, must still leave
    # every row saying what the graph holds.
    game = get_game("tic-tac-toe")
    stopped = solve(
        game, full=True, store=SqlStore(engine), max_expansions=700, batch_size=300, tiers=False
    )
    assert stopped.status == "budget"
    with engine.connect() as conn:
        lagging = conn.execute(
            text(
                "SELECT count(*) FROM nodes AS n WHERE n.state = 0 AND EXISTS "
                "(SELECT 1 FROM edges AS e WHERE e.variant_id = n.variant_id AND e.parent = n.id)"
            )
        ).scalar_one()
    assert lagging > 0  # else this test tests nothing
    loaded = load_graph(engine, game)
    assert sum(s == EXPANDED for s in loaded.state) == 700
    assert loaded.dirty and all(loaded.state[n] == EXPANDED for n in loaded.dirty)

    finished = solve(game, store=SqlStore(engine))  # partial mode from here on
    assert finished.complete and (finished.low, finished.high) == (0, 0)
    graph = load_graph(engine, game)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, state FROM nodes ORDER BY id")).all()
        stored: dict[int, int] = {n: s for n, s in rows}
    assert stored == dict(enumerate(graph.state))
    assert all((s == EXPANDED) == (graph.child_count[n] > 0) for n, s in stored.items())


@pytest.mark.parametrize("resume_files", [True, False], ids=["resume-files", "no-resume-files"])
def test_full_solve_in_budgeted_runs_matches_one_run(engine: Engine, resume_files: bool) -> None:
    # Full-mode runs load the nodes and only the edge counts; the run that finishes the
    # expansion loads the edges for the retrograde pass. The result is the same graph.
    # With a resume file (SQLite) a run starts from the graph its predecessor left,
    # edges included: the same graph again.
    game = get_game("tic-tac-toe")
    memory = MemoryStore()
    solve(game, full=True, store=memory)
    [expected] = memory.graphs.values()
    path = resume_path(engine, 1)
    from_file = resume_files and path is not None

    statuses: list[str] = []
    while not statuses or statuses[-1] != "complete":
        if not resume_files and path is not None:
            path.unlink(missing_ok=True)
        statuses.append(
            solve(
                game,
                full=True,
                store=SqlStore(engine),
                max_expansions=1_000,
                batch_size=400,
                tiers=False,
            ).status
        )
        if statuses[-1] == "budget":
            assert (path is not None and path.exists()) == (path is not None)
            if not resume_files and path is not None:
                path.unlink(missing_ok=True)
            store = SqlStore(engine)
            graph = store.open(game, run_options(game.initial(), full=True))
            stored_edges = count(engine, Edge)
            assert stored_edges
            if from_file:
                assert (graph.num_edges, graph.deferred_edges) == (stored_edges, 0)
            else:
                assert (graph.num_edges, graph.total_edges) == (0, stored_edges)
            graph.require_edges()
            assert (graph.num_edges, graph.deferred_edges) == (stored_edges, 0)
            full = load_graph(engine, game)
            assert [graph.child_ids(n) for n in range(graph.num_nodes)] == [
                full.child_ids(n) for n in range(full.num_nodes)
            ]
            assert list(graph.edge_move) == list(full.edge_move)
            assert bytes(graph.state) == bytes(full.state)
            store.close(progress_of(graph, "stopped"))
        assert len(statuses) < 20
    assert statuses == ["budget"] * (len(statuses) - 1) + ["complete"] and len(statuses) > 3
    assert path is None or not path.exists()  # a completed solve leaves none
    loaded = load_graph(engine, game)
    assert_consistent(loaded)
    assert snapshot(loaded) == snapshot(expected)
    finished = [r for r in runs(engine) if r.status == "complete"]
    assert [(r.nodes, r.edges) for r in finished] == [(expected.num_nodes, expected.num_edges)]


def test_a_terminal_root_is_stored(engine: Engine) -> None:
    # Nothing to expand: the partial solve is complete at once, and must still commit
    # the root it created, as the full solve does.
    game = ExplicitGame([[]], {0: 1})
    for full in (False, True):
        result = solve(game, full=full, store=SqlStore(engine))
        assert result.complete and (result.low, result.high) == (1, 1)
        graph = load_graph(engine, game)
        assert (graph.num_nodes, graph.low[0], graph.high[0]) == (1, 1, 1)


def test_rewriting_every_node_leaves_out_terminal_ones() -> None:
    # A full solve's end marks every node changed; terminal rows never change, so the
    # rows written are the others', with the same values as one by one.
    graph = MemoryStore()
    game = get_game("tic-tac-toe")
    solve(game, full=True, store=graph)
    [g] = graph.graphs.values()
    every = list(db.rows.update_rows(g, range(g.num_nodes)))
    inner = [i for i in range(g.num_nodes) if g.state[i] != TERMINAL]
    assert 0 < len(inner) < g.num_nodes
    assert [r[0] for r in every] == inner
    assert every == list(db.rows.update_rows(g, inner))  # the node-by-node path


AWKWARD = ["plain", "tab\there", "new\nline", "back\\slash", "cr\rx", "\\N", "", "ünï"]


def test_copy_text_round_trips_awkward_values(engine: Engine) -> None:
    # PostgreSQL gets nodes and edges as COPY text built a column at a time: NULLs,
    # bytea keys and notations with the format's special characters must come back
    # unchanged (on SQLite, the same rows through executemany).
    columns = [
        list(range(len(AWKWARD))),
        [None, 0, -1, 1 << 40, None, 5, 6, 7],
        [b"\x00", b"\\", b"\t\n", bytes(range(256)), b"x", b"\x00\x01", b"\xff", b"N"],
        AWKWARD,
    ]
    rows = list(zip(*columns, strict=True))
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TEMPORARY TABLE awkward (i integer, v bigint, k bytea, t text)"
            if engine.dialect.name == "postgresql"
            else "CREATE TEMPORARY TABLE awkward (i integer, v bigint, k blob, t text)"
        )
        driver = conn.connection.driver_connection
        assert driver is not None
        cursor = driver.cursor()
        if engine.dialect.name == "postgresql":
            with cursor.copy("COPY awkward (i, v, k, t) FROM STDIN") as copy:
                copy.write(copy_text(columns))
        else:
            cursor.executemany("INSERT INTO awkward VALUES (?, ?, ?, ?)", rows)
        back = [tuple(r) for r in conn.exec_driver_sql("SELECT i, v, k, t FROM awkward ORDER BY i")]
    assert [(i, v, bytes(k), t) for i, v, k, t in back] == rows


def test_a_run_cut_short_before_its_clean_up_is_recorded_by_abandon(engine: Engine) -> None:
    # A second Ctrl-C can land between open() and the solver's own clean-up; the CLI then
    # abandons the store: the run is recorded stopped with the figures of its last commit,
    # the lock is released, and closing or abandoning again does nothing.
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    build_second_batch(graph)  # never committed
    store.abandon("stopped")
    (run,) = runs(engine)
    assert run.status == "stopped" and run.finished_at is not None
    assert (run.nodes, run.edges) == (count(engine, Node), count(engine, Edge)) == (4, 3)
    store.abandon("failed")
    store.close(progress_of(graph, "complete"))
    assert [r.status for r in runs(engine)] == ["stopped"]
    again = SqlStore(engine)  # the lock is free
    again.open(TinyGame(), run_options())
    again.close(progress_of(Graph(), "stopped"))


def test_a_driver_message_of_several_lines_is_told_in_one(tmp_path: Path) -> None:
    # libpq reports a connection the server dropped in mid-query over two lines; the
    # store's error (the CLI's `error: ...`) is one.
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    store = SqlStore(engine)
    orig = sqlite3.OperationalError(
        "consuming input failed: server closed the connection unexpectedly\n"
        "\tThis probably means the server terminated abnormally\n"
        "\tbefore or while processing the request.\n"
    )
    with pytest.raises(DatabaseError) as caught, store.writer.errors():
        raise sa_exc.OperationalError("SELECT 1", None, orig)
    engine.dispose()
    message = str(caught.value)
    assert "\n" not in message and "\t" not in message
    assert message.endswith(
        "server closed the connection unexpectedly This probably means the server "
        "terminated abnormally before or while processing the request."
    )
