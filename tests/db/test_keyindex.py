"""SQLite's key index per variant (:mod:`db.backends.sqlite.keyindex`): a partial solve
that outgrows one range of ids switches to the index by range and stores what a run with
the whole index stores; every reader finds every stored key through the ranges while the
solve is under way; the run that completes the solve makes the index whole again; and
migration 0014 moves a database between the old constraint and the new indexes without
losing a row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from db.backends.sqlite import keyindex
from db.migrate import downgrade, upgrade
from db.repository import fetch_positions, probe_position, stored_positions
from db.session import make_engine
from db.store import SqlStore
from solver.games import get_game
from solver.negamax import solve
from tests.db.test_eviction import EDGE_SQL, NODE_SQL, key_index_names, key_ranges, stored

GAME = ("connect-four", {"width": 4, "height": 4})
BITS = 8
"""Ranges of 256 ids: connect-four 4 x 4 (about 9,000 nodes) spans dozens."""


def solve_into(path: Path, **kw: object) -> object:
    engine = make_engine(f"sqlite:///{path}")
    try:
        return solve(get_game(GAME[0], **GAME[1]), store=SqlStore(engine), **kw)  # type: ignore[arg-type]
    finally:
        engine.dispose()


def stored_keys(path: Path) -> dict[int, int]:
    """Every stored node's key and id, read by scanning the table."""
    with sqlite3.connect(path) as conn:
        return {
            int.from_bytes(k, "big"): i
            for i, k in conn.execute("SELECT id, key FROM nodes WHERE variant_id = 1")
        }


def test_a_partial_solve_past_one_range_finds_its_keys_by_range(tmp_path: Path) -> None:
    plain = tmp_path / "plain.db"
    solve_into(plain)
    assert key_index_names(plain) == {"nodes_key_1"}

    ranged = tmp_path / "ranged.db"
    with key_ranges(BITS):
        first = solve_into(ranged, resident_nodes=300, max_expansions=1500)
        assert not first.complete  # type: ignore[attr-defined]
        assert key_index_names(ranged) == {"nodes_key_1_ranged"}
        keys = stored_keys(ranged)
        assert len(keys) > 8 * keyindex.KEY_RANGE  # many ranges

        # Every reader finds every stored key, and a key not stored is not found.
        game = get_game(GAME[0], **GAME[1])
        absent = max(keys) + 1
        engine = make_engine(f"sqlite:///{ranged}")
        try:
            with Session(engine) as session:
                found = stored_positions(session, 1, [*keys, absent])
                assert {k: r.node_id for k, r in found.items()} == keys
                for key in list(keys)[:: len(keys) // 50]:
                    assert probe_position(session, game, key).node_id == keys[key]
            raw = engine.raw_connection()
            try:
                cursor = raw.cursor()
                found = fetch_positions(cursor, "qmark", 1, [*keys, absent])
                assert {k: r.node_id for k, r in found.items()} == keys
                table, where = keyindex.reader_lookup(cursor, 1) or ("", "")
                plan = cursor.execute(
                    f'EXPLAIN QUERY PLAN SELECT n.id FROM {table} WHERE {where} AND n."key" = ?',
                    (b"\x01",),
                ).fetchall()
                assert "nodes_key_1_ranged" in str(plan)
            finally:
                raw.close()
        finally:
            engine.dispose()

        done = solve_into(ranged, resident_nodes=300)
        assert done.complete  # type: ignore[attr-defined]
    # The same rows as the run with the whole index, and the index whole again.
    mine, theirs = stored(ranged), stored(plain)
    assert [r[:-1] for r in mine[0]] == [r[:-1] for r in theirs[0]]  # (commits aside)
    assert mine[1] == theirs[1]
    assert key_index_names(ranged) == {"nodes_key_1"}


def test_migration_0014_keeps_every_row_both_ways(tmp_path: Path) -> None:
    # Dropping the old nodes table with foreign keys on would delete every edge: the
    # migration runs with them off and checks them at the end.
    path = tmp_path / "m.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    solve_into(path)
    with sqlite3.connect(path) as conn:
        before = conn.execute(NODE_SQL).fetchall(), conn.execute(EDGE_SQL).fetchall()
    assert len(before[1]) > 1000

    downgrade(url, "0013")
    with sqlite3.connect(path) as conn:
        assert (conn.execute(NODE_SQL).fetchall(), conn.execute(EDGE_SQL).fetchall()) == before
        ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'nodes'").fetchone()[0]
        assert 'UNIQUE (variant_id, "key")' in ddl and "WITHOUT ROWID" in ddl
        assert conn.execute("SELECT count(*) FROM position_values").fetchone()[0] == len(before[0])
    assert key_index_names(path) == set()

    upgrade(url)
    with sqlite3.connect(path) as conn:
        assert (conn.execute(NODE_SQL).fetchall(), conn.execute(EDGE_SQL).fetchall()) == before
        ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'nodes'").fetchone()[0]
        assert "UNIQUE" not in ddl and "WITHOUT ROWID" in ddl
    assert key_index_names(path) == {"nodes_key_1"}
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1
            plan = conn.execute(
                text(
                    'EXPLAIN QUERY PLAN SELECT id FROM nodes WHERE variant_id = :v AND "key" = :k'
                ),
                {"v": 1, "k": b"\x01"},
            ).all()
            assert "nodes_key_1" in str(plan)
    finally:
        engine.dispose()


@pytest.mark.parametrize("bits", [None, BITS])
def test_a_second_variant_keeps_its_own_index(tmp_path: Path, bits: int | None) -> None:
    # Two variants in one file: each its own index, the second's reshaping leaves the
    # first's alone.
    path = tmp_path / "two.db"
    engine = make_engine(f"sqlite:///{path}")
    try:
        solve(get_game("tic-tac-toe"), store=SqlStore(engine))
        with key_ranges(bits):
            solve(get_game(GAME[0], **GAME[1]), store=SqlStore(engine), resident_nodes=300,
                  max_expansions=1500)  # fmt: skip
    finally:
        engine.dispose()
    second = "nodes_key_2_ranged" if bits else "nodes_key_2"
    assert key_index_names(path) == {"nodes_key_1", second}


def test_a_reader_whose_ranges_were_merged_meanwhile_asks_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The API's reader looks at the variant's index, then reads: if the solve completed
    # in between, the ranged index it was about to name is gone, and it looks again.
    path = tmp_path / "done.db"
    solve_into(path)
    keys = stored_keys(path)
    calls: list[int] = []
    real = keyindex.reader_lookup

    def stale_once(raw: object, vid: int) -> tuple[str, str] | None:
        calls.append(vid)
        if len(calls) == 1:
            return keyindex.lookup(vid, keyindex.RANGED, len(keys))
        return real(raw, vid)

    monkeypatch.setattr(keyindex, "reader_lookup", stale_once)
    engine = make_engine(f"sqlite:///{path}")
    try:
        raw = engine.raw_connection()
        try:
            found = fetch_positions(raw.cursor(), "qmark", 1, keys)
        finally:
            raw.close()
    finally:
        engine.dispose()
    assert {k: r.node_id for k, r in found.items()} == keys
    assert calls == [1, 1]
