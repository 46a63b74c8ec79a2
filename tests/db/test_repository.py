"""Read-side queries (db.repository) on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from db.errors import PositionNotFoundError, RulesVersionError
from db.records import PositionRecord
from db.repository import (
    CHUNK,
    PARAM_MARKERS,
    fetch_positions,
    find_variant,
    get_node,
    get_position,
    get_run,
    get_variant,
    list_runs,
    list_variants,
    position_children,
    position_parents,
    probe_position,
    stored_positions,
)
from db.session import make_session_factory, session_scope
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve
from solver.store import Batch
from solver.values import Bounds
from tests.db.helpers import (
    BIG_KEY,
    TinyGame,
    TinyGameV2,
    build_first_batch,
    build_second_batch,
    progress_of,
    run_options,
)


@pytest.fixture
def stored(engine: Engine) -> Iterator[Engine]:
    """The two hand-built batches of the tiny game (size 15), plus an empty variant."""
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_first_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "budget"))
    store = SqlStore(engine)
    graph = store.open(TinyGame(), run_options())
    build_second_batch(graph)
    store.commit(Batch.of(graph), progress_of(graph))
    store.close(progress_of(graph, "complete"))
    empty = SqlStore(engine)
    g = empty.open(TinyGame(size=3), run_options())
    empty.close(progress_of(g, "stopped"))
    yield engine


def test_find_variant(stored: Engine, session: Session) -> None:
    variant = find_variant(session, TinyGame())
    assert variant is not None
    assert (variant.game, variant.params, variant.rules_version) == ("tiny", "size=15", 1)
    assert variant.params_json == {"size": 15}
    assert (variant.root_key, variant.root_position) == (0, "p0")
    assert variant.created_at.tzinfo is not None
    assert find_variant(session, TinyGame(size=4)) is None
    assert get_variant(session, variant.id) == variant
    assert get_variant(session, 12345) is None


def test_list_variants(stored: Engine, session: Session) -> None:
    summaries = list_variants(session)
    assert [(s.variant.params, s.nodes) for s in summaries] == [("size=15", 7), ("size=3", 0)]
    big, small = summaries
    assert big.last_run is not None and big.last_run.status == "complete"
    assert big.root_bounds == Bounds(1, 2, True, True)
    assert small.root_bounds == Bounds(None, None, False, False)


def test_runs(stored: Engine, session: Session) -> None:
    variant = find_variant(session, TinyGame())
    assert variant is not None
    runs = list_runs(session, variant.id)
    assert [r.status for r in runs] == ["complete", "budget"]  # newest first
    assert len(list_runs(session)) == 3
    first = get_run(session, runs[1].id)
    assert first is not None and first == runs[1]
    assert first.root_bounds == Bounds(1, None, True, False)
    assert (first.nodes, first.edges, first.root_position, first.tablebase) == (4, 3, "p0", False)
    assert first.started_at.tzinfo is not None and first.finished_at is not None
    assert get_run(session, 999) is None


def test_probe_position(stored: Engine, session: Session) -> None:
    game = TinyGame()
    root = probe_position(session, game, 0)
    assert isinstance(root, PositionRecord)
    assert (root.node_id, root.key, root.position, root.state, root.dist) == (
        0,
        0,
        "p0",
        "expanded",
        0,
    )
    assert root.bounds == Bounds(1, 2, True, True)
    assert (root.depth_low, root.depth_high, root.value, root.is_final) == (3, 5, None, True)

    big = probe_position(session, game, BIG_KEY)
    assert (big.value, big.state, big.depth_low) == (-1, "terminal", 0)
    fresh = probe_position(session, game, 256)
    assert fresh.bounds == Bounds(None, None)
    assert (fresh.depth_low, fresh.depth_high) == (None, None)


def test_missing_position(stored: Engine, session: Session) -> None:
    with pytest.raises(PositionNotFoundError) as info:
        probe_position(session, TinyGame(), 77)
    message = str(info.value)
    assert "'p77'" in message and "tiny (size=15)" in message and "variant" in message
    assert isinstance(info.value, KeyError)
    assert not message.startswith('"')

    with pytest.raises(PositionNotFoundError, match="has not been solved"):
        probe_position(session, TinyGame(size=99), 0)
    assert get_position(session, TinyGame(), 77) is None
    assert get_position(session, TinyGame(), 77, default="nope") == "nope"
    assert get_position(session, TinyGame(), 1) == probe_position(session, TinyGame(), 1)
    with pytest.raises(RulesVersionError):
        probe_position(session, TinyGameV2(), 0)


def test_children_and_parents(stored: Engine, session: Session) -> None:
    variant = find_variant(session, TinyGame())
    assert variant is not None
    children = position_children(session, variant.id, 1)
    assert [(c.move, c.move_order, c.child.node_id, c.child.position) for c in children] == [
        ("a", 0, 4, "p256"),
        ("b", 1, 5, f"p{2**64}"),
        ("c", 2, 0, "p0"),
        ("d", 3, 3, "p255"),
    ]
    assert children[1].child.bounds == Bounds(0, 0, True, True)
    assert children[1].child.state == "terminal"
    assert children[3].child.bounds == Bounds(-3, -3, True, True)
    assert (children[3].child.depth_low, children[3].child.depth_high) == (4, 6)
    assert position_children(session, variant.id, 2) == []  # terminal
    assert [p.node_id for p in position_parents(session, variant.id, 3)] == [0, 1]
    assert get_node(session, variant.id, 6) == probe_position(session, TinyGame(), 10**30)
    assert get_node(session, variant.id, 60) is None


def test_queries_work_on_a_connection(stored: Engine) -> None:
    with stored.connect() as conn:
        assert [s.nodes for s in list_variants(conn)] == [7, 0]
        assert probe_position(conn, TinyGame(), 1).bounds == Bounds(-2, 5, False, True)
        assert len(list_runs(conn)) == 3


def test_fetch_positions_on_a_dbapi_cursor_matches_stored_positions(stored: Engine) -> None:
    variant_id = stored_variant_id(stored)
    # Stored and missing keys, a big key, a repeat, and more than one chunk's worth.
    keys = [0, 1, BIG_KEY, 256, 77, 1, *range(1000, 1000 + CHUNK)]
    with stored.connect() as conn:
        expected = stored_positions(conn, variant_id, keys)
    assert set(expected) == {0, 1, BIG_KEY, 256}
    raw = stored.raw_connection()
    try:
        cursor = raw.cursor()
        paramstyle = stored.dialect.paramstyle
        assert fetch_positions(cursor, paramstyle, variant_id, keys) == expected
        assert fetch_positions(cursor, paramstyle, variant_id, [1]) == {1: expected[1]}
        assert fetch_positions(cursor, paramstyle, variant_id, []) == {}
        assert fetch_positions(cursor, paramstyle, variant_id + 1, [0, 1]) == {}
        with pytest.raises(ValueError, match="paramstyle 'named'"):
            fetch_positions(cursor, "named", variant_id, [0])
    finally:
        raw.close()
    assert stored.dialect.paramstyle in PARAM_MARKERS


def stored_variant_id(engine: Engine) -> int:
    with engine.connect() as conn:
        variant = find_variant(conn, TinyGame())
    assert variant is not None
    return variant.id


def test_symmetric_positions_find_their_representative(engine: Engine) -> None:
    game = get_game("tic-tac-toe", symmetry=True)
    result = solve(game, full=True, store=SqlStore(engine))
    assert (result.low, result.high) == (0, 0)
    factory = make_session_factory(engine)
    with session_scope(factory) as session:
        corner = probe_position(session, game, game.parse(game.format(game.initial())))
        assert corner.value == 0 and corner.is_final
        variant = find_variant(session, game)
        assert variant is not None
        moves = position_children(session, variant.id, corner.node_id)
        assert {c.child.value for c in moves} <= {0, 1, -1}
        # Every first move leads to a position stored once per symmetry class.
        assert len({c.child.node_id for c in moves}) == 3
        for move in game.children(game.initial()):
            child = probe_position(session, game, move[1])
            assert child.key == game.canonical(move[1])
