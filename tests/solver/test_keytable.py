"""solver._native.KeyTable, the partial solver's key index, against a dict (the oracle it
replaces): any sequence of inserts, overwrites, deletions and lookups, with keys over the
whole 64-bit range and in dense clusters (long probe runs, deletions inside them)."""

from __future__ import annotations

import random
from array import array
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.expand import KeyIndex
from solver.games import get_game
from solver.keytable import KeyTable, new_index
from solver.negamax import solve
from solver.store import MemoryStore

pytestmark = pytest.mark.skipif(KeyTable is None, reason="the C module is not built")

keys = st.one_of(
    st.integers(0, 60),  # a small pool: the same keys set, deleted and set again
    st.integers(-(2**63), 2**63 - 1),
)
ops = st.lists(
    st.tuples(st.sampled_from(["set", "del", "get"]), keys, st.integers(0, 2**31 - 1)),
    max_size=400,
)


@settings(max_examples=300)
@given(ops)
def test_keytable_behaves_as_a_dict(steps: list[tuple[str, int, int]]) -> None:
    table: Any = KeyTable()
    oracle: dict[int, int] = {}
    for op, key, value in steps:
        if op == "set":
            table[key] = value
            oracle[key] = value
        elif op == "del":
            if key in oracle:
                del table[key]
                del oracle[key]
            else:
                with pytest.raises(KeyError):
                    del table[key]
        else:
            assert table.get(key) == oracle.get(key)
            assert (key in table) == (key in oracle)
        assert len(table) == len(oracle)
    assert table == oracle and dict(table.items()) == oracle
    assert sorted(table) == sorted(oracle) == sorted(table.keys())
    for key, value in oracle.items():
        assert table[key] == value


@pytest.mark.parametrize("seed", range(4))
def test_churn_against_a_dict(seed: int) -> None:
    """Many more operations than hypothesis draws: tables of thousands of keys, half the
    operations deletions, so that deletions land inside long probe runs."""
    rng = random.Random(seed)
    table: Any = KeyTable()
    oracle: dict[int, int] = {}
    pool = 4000
    for i in range(60_000):
        key = rng.randrange(pool) * (1 << 40) + seed  # keys that differ in their high bits
        if rng.random() < 0.5:
            table[key] = i
            oracle[key] = i
        elif key in oracle:
            del table[key]
            del oracle[key]
        assert table.get(key) == oracle.get(key)
    assert table == oracle
    assert all(table[k] == v for k, v in oracle.items())


def test_keys_that_are_not_64_bit_integers() -> None:
    table: Any = KeyTable()
    table[1] = 0
    assert "1" not in table and 2**64 not in table and table.get(2**64) is None
    with pytest.raises(KeyError):
        table[2**64]
    with pytest.raises(OverflowError):
        table[2**63] = 1
    with pytest.raises(TypeError):
        table["x"] = 1
    with pytest.raises(ValueError):
        table[2] = -1
    assert table == {1: 0}


def test_from_keys_and_size() -> None:
    stored = array("q", [5, -7, 2**62, 0])
    table = KeyTable.from_keys(stored)
    assert table == {5: 0, -7: 1, 2**62: 2, 0: 3}
    big = KeyTable.from_keys(array("q", range(0, 3_000_000, 3)))
    assert len(big) == 1_000_000
    assert big.nbytes <= 32 * len(big)  # 12 bytes a slot, load at least 3/8
    with pytest.raises(TypeError):
        KeyTable.from_keys(array("i", [1, 2]))


def test_a_graph_whose_keys_outgrow_64_bits_turns_its_index_into_a_dict() -> None:
    g = solve(get_game("number-game"), store=(store := MemoryStore()))
    (graph,) = store.graphs.values()
    assert isinstance(graph.index, KeyTable) and g.nodes == len(graph.index)
    before = dict(graph.index.items())
    graph.add_node(2**70, 1, None)
    assert isinstance(graph.index, dict)
    assert graph.index == {**before, 2**70: g.nodes}
    assert new_index(list(graph.keys)) == graph.index


@settings(max_examples=200)
@given(
    st.lists(keys, unique=True, max_size=50),
    st.lists(st.lists(keys, max_size=60), max_size=5),
)
def test_resolve_in_c_gives_what_the_sorted_arrays_and_a_dict_give(
    known: list[int], calls: list[list[int]]
) -> None:
    """``KeyTable.resolve`` behind :class:`solver.expand.KeyIndex` (a tier's discovery, a
    full solve's expansion): call after call the same ids, new keys and first places as
    the sorted arrays, and as a dict numbering keys in order of first occurrence."""
    in_c, by_sorting = KeyIndex(array("q", known)), KeyIndex(array("q", known), table=False)
    assert in_c.table is not None and by_sorting.table is None
    oracle = {k: i for i, k in enumerate(known)}
    for wanted in calls:
        next_id = len(oracle)
        first = [i for i, k in enumerate(wanted) if k not in oracle and k not in wanted[:i]]
        for k in wanted:
            oracle.setdefault(k, len(oracle))
        w = np.array(wanted, dtype=np.int64)
        for index in (in_c, by_sorting):
            ids, new, at = index.resolve(w, next_id)
            assert ids.tolist() == [oracle[k] for k in wanted]
            assert new.tolist() == [wanted[i] for i in first]
            assert at.tolist() == first


def test_resolve_refuses_what_it_cannot_hold() -> None:
    table: Any = KeyTable()
    w = np.arange(3, dtype=np.int64)
    out = np.empty(3, np.int64)
    with pytest.raises(TypeError, match="wanted must be a buffer of 64-bit integers"):
        table.resolve(w.astype(np.int32), 0, out, out.copy())
    with pytest.raises(ValueError, match="ids and first must hold a value a key"):
        table.resolve(w, 0, out[:2], out.copy())
    with pytest.raises(OverflowError, match="ids past 2\\*\\*31 - 1"):
        table.resolve(w, 2**31 - 2, out, out.copy())
    assert len(table) == 0
    assert table.resolve(w, 5, out, out.copy()) == 3 and out.tolist() == [5, 6, 7]
