"""The numpy passes against their plain-Python counterparts: the key index against a dict,
bulk expansion against node-by-node expansion, the rebuilt reverse edges against the
incrementally threaded ones, and the move-label column against a list."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solver.expand
import solver.full.run
from solver.errors import SolveError
from solver.games import get_game
from solver.graph import Graph
from solver.keytable import KeyTable
from solver.labels import Labels
from solver.negamax import solve
from solver.store import MemoryStore
from solver.values import DEPTH_INF, NEG_INF, POS_INF
from tests.db.helpers import snapshot
from tests.oracles import ExplicitGame
from tests.solver.test_negamax import graphs

KEYS = st.integers(-(1 << 63), (1 << 63) - 1)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(KEYS, max_size=30),
    st.lists(st.lists(KEYS | st.sampled_from([0, 1, 2]), max_size=20), max_size=5),
)
def test_key_index_numbers_new_keys_in_discovery_order(
    known: list[int], batches: list[list[int]]
) -> None:
    known = list(dict.fromkeys(known))
    graph = Graph()
    for k in known:
        graph.add_node(k, 0, None)
    index = solver.expand.KeyIndex(graph.keys)  # type: ignore[arg-type]
    reference = {k: i for i, k in enumerate(known)}
    next_id = len(known)
    for batch in batches:
        ids, new_keys, first = index.resolve(np.array(batch, dtype=np.int64), next_id)
        expected: list[int] = []
        fresh: list[tuple[int, int]] = []
        for slot, k in enumerate(batch):
            if k not in reference:
                reference[k] = next_id + len(fresh)
                fresh.append((k, slot))
            expected.append(reference[k])
        assert ids.tolist() == expected
        assert new_keys.tolist() == [k for k, _ in fresh]
        assert first.tolist() == [slot for _, slot in fresh]
        next_id += len(fresh)


def _full(game: object, monkeypatch: pytest.MonkeyPatch | None = None) -> Graph:
    store = MemoryStore()
    if monkeypatch is not None:  # no key index: node-by-node expansion with the dict
        monkeypatch.setattr(solver.full.run, "key_index", lambda g: None)
    solve(game, full=True, store=store, batch_size=3)  # type: ignore[arg-type]
    [graph] = store.graphs.values()
    return graph


@settings(max_examples=150, deadline=None)
@given(graphs(max_nodes=12))
def test_retrograde_expansion_builds_the_same_graph_as_node_by_node(
    gl: tuple[list[list[int]], dict[int, int]],
) -> None:
    succ, leaf = gl
    bulk = _full(ExplicitGame(succ, leaf))
    with pytest.MonkeyPatch.context() as mp:
        plain = _full(ExplicitGame(succ, leaf), mp)
    assert snapshot(bulk) == snapshot(plain)
    assert list(bulk.edge_parent) == list(plain.edge_parent)
    assert list(bulk.edge_child) == list(plain.edge_child)


def test_retrograde_expansion_matches_on_connect_four_with_symmetry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = get_game("connect-four", width=4, height=3, symmetry=True)
    bulk = _full(game)
    plain = _full(game, monkeypatch)
    assert snapshot(bulk) == snapshot(plain)


class BigKeys(ExplicitGame):
    """An explicit game whose positions but the root have keys beyond 64 bits (so the
    bulk expansion gives up on its first batch and the dict takes over)."""

    OFFSET = 1 << 70

    def children(self, key: int) -> list[tuple[str, int]]:
        return [(m, c and c + self.OFFSET) for m, c in super().children(key % self.OFFSET)]

    def terminal_value(self, key: int) -> int | None:
        return super().terminal_value(key % self.OFFSET)


@settings(max_examples=50, deadline=None)
@given(graphs(max_nodes=12))
def test_keys_beyond_64_bits_fall_back_to_the_dict(
    gl: tuple[list[list[int]], dict[int, int]],
) -> None:
    succ, leaf = gl
    plain = _full(ExplicitGame(succ, leaf))
    big = _full(BigKeys(succ, leaf))
    assert [k % BigKeys.OFFSET for k in big.keys] == list(plain.keys)
    for name in ("low", "high", "depth_low", "depth_high", "state", "edge_child"):
        assert list(getattr(big, name)) == list(getattr(plain, name)), name


class MixedKeys(ExplicitGame):
    """An explicit game whose odd-numbered positions have keys beyond 64 bits: one
    expansion may find a 64-bit and a wider new key together."""

    OFFSET = 1 << 70

    def children(self, key: int) -> list[tuple[str, int]]:
        return [
            (m, c + self.OFFSET if c % 2 else c) for m, c in super().children(key % self.OFFSET)
        ]

    def terminal_value(self, key: int) -> int | None:
        return super().terminal_value(key % self.OFFSET)


class Faulty(ExplicitGame):
    """An explicit game whose rules fail on position 3."""

    def terminal_value(self, key: int) -> int | None:
        if key == 3:
            raise ValueError("no rules for 3")
        return super().terminal_value(key)


@pytest.mark.parametrize("full", [False, True])
def test_an_expansion_the_game_fails_leaves_the_graph_as_it_was(full: bool) -> None:
    store = MemoryStore()
    # the game's own failure comes back as one SolveError naming the game, caused by it
    with pytest.raises(SolveError, match="own code failed.*ValueError: no rules for 3") as e:
        solve(Faulty([[1, 2], [2, 3], [], []], {2: 0, 3: 1}), full=full, store=store)
    assert isinstance(e.value.__cause__, ValueError)
    (g,) = store.graphs.values()
    # 0 expanded (children 1 and 2); 1's expansion failed on its new child 3
    assert list(g.keys) == [0, 1, 2] and g.index == {0: 0, 1: 1, 2: 2}
    assert {
        len(c)
        for c in (
            g.low,
            g.high,
            g.state,
            g.dist,
            g.first_edge,
            g.child_count,
            g.low_final,
            g.depth_low,
        )
    } == {3}
    assert g.num_edges == 2 and g.child_count[1] == 0


@settings(max_examples=100, deadline=None)
@given(graphs(max_nodes=12), st.booleans())
def test_keys_that_outgrow_64_bits_mid_expansion(
    gl: tuple[list[list[int]], dict[int, int]],
    full: bool,
) -> None:
    # The keys column turns into a list when the first wide key comes; an expansion
    # that brings a 64-bit key and a wider one must add each exactly once.
    succ, leaf = gl
    graphs_of = []
    for game in (ExplicitGame(succ, leaf), MixedKeys(succ, leaf)):
        store = MemoryStore()
        solve(game, full=full, store=store)
        (g,) = store.graphs.values()
        graphs_of.append(g)
    plain, mixed = graphs_of
    assert [k % MixedKeys.OFFSET for k in mixed.keys] == list(plain.keys)
    assert mixed.index == {k: i for i, k in enumerate(mixed.keys)}
    for name in (
        "low",
        "high",
        "low_final",
        "high_final",
        "depth_low",
        "depth_high",
        "state",
        "dist",
        "edge_child",
    ):
        assert list(getattr(mixed, name)) == list(getattr(plain, name)), name


@settings(max_examples=100, deadline=None)
@given(graphs(max_nodes=12))
def test_rebuilt_reverse_edges_equal_threaded_ones(
    gl: tuple[list[list[int]], dict[int, int]],
) -> None:
    succ, leaf = gl
    graph = _full(ExplicitGame(succ, leaf))
    threaded = Graph()
    for k in graph.keys:
        threaded.add_node(k, 0, None)
    for n in range(graph.num_nodes):
        threaded.set_children(
            n, [(graph.edge_move[e], graph.edge_child[e]) for e in graph.children(n)]
        )
    graph.drop_derived()
    assert list(graph.rev_head) == list(threaded.rev_head)
    assert list(graph.rev_next) == list(threaded.rev_next)
    assert graph.index == threaded.index


@settings(max_examples=200, deadline=None)
@given(st.lists(KEYS, max_size=30), KEYS | st.sampled_from([0, 1, 1 << 64, -(1 << 64)]))
def test_find_answers_as_the_index_does_without_building_it(keys: list[int], probe: int) -> None:
    graph = Graph()
    for k in dict.fromkeys(keys):
        graph.add_node(k, 0, None)
    for k in [probe, *keys]:
        graph.drop_derived()
        assert graph.find(k) == graph.index.get(k)  # find scanned: no index yet
        assert graph.find(k) == graph.index.get(k)  # and now through the index
    graph.drop_derived()
    graph.find(probe)
    assert graph._index is None
    graph.keys = list(graph.keys) + [1 << 70]  # keys beyond 64 bits: a list
    graph.drop_derived()
    assert graph.find(1 << 70) == len(graph.keys) - 1 and graph.find(-(1 << 70)) is None


def test_labels_read_like_a_list_and_widen() -> None:
    labels = Labels(["a", "b", "a"])
    assert list(labels) == ["a", "b", "a"] and labels[1] == "b" and labels[-1] == "a"
    assert labels[0:2] == ["a", "b"] and len(labels) == 3 and labels == ["a", "b", "a"]
    many = [f"m{i}" for i in range(300)]
    labels.extend(many)  # more than 256 distinct labels: two bytes each from now on
    labels.append("a")
    assert list(labels) == ["a", "b", "a", *many, "a"]
    assert labels.data.typecode == "H"


@pytest.mark.parametrize("value", [3, (1 << 31) - 1, 1 << 40])
def test_retrograde_keeps_values_beyond_32_bits(value: int) -> None:
    # Bounds are computed in 32 bits while the values fit, in 64 otherwise.
    game = ExplicitGame([[1, 2], [], [3], [2]], {1: value})
    graph = _full(game)
    # 0 may move into 1 (a win worth *value* for the opponent) or into the endless 2 <-> 3
    assert (graph.low[0], graph.high[0]) == (-value, POS_INF)
    assert (graph.depth_low[0], graph.depth_high[0]) == (1, DEPTH_INF)
    assert (graph.low[2], graph.high[2]) == (NEG_INF, POS_INF)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(-(1 << 63), (1 << 63) - 1), unique=True, max_size=40),
    st.sampled_from(["right", "swapped", "repeated", "short", "out of range", "int64"]),
)
def test_a_key_index_takes_a_known_order_only_if_it_sorts_the_keys(
    keys: list[int], how: str
) -> None:
    """The sorted arrays of the index without the C module (the C table needs no
    order)."""
    from array import array

    from solver.expand import KeyIndex

    ks = array("q", keys)
    sorted_ids = np.argsort(np.array(keys, dtype=np.int64), kind="stable").astype(np.int32)
    order = sorted_ids.copy()
    if how == "swapped" and len(keys) > 1:
        order[[0, -1]] = order[[-1, 0]]
    elif how == "repeated" and len(keys) > 1:
        order[-1] = order[0]
    elif how == "short":
        order = order[:-1]
    elif how == "out of range" and len(keys):
        order[0] = len(keys)
    elif how == "int64":
        order = order.astype(np.int64)
    index = KeyIndex(ks, order, table=False)
    # whatever it was given, the index is the sorted one
    assert index.ids.tolist() == sorted_ids.tolist()
    assert index.keys.tolist() == sorted(keys)
    assert index.ids.dtype == np.int32


def test_a_budgeted_full_run_leaves_its_key_order_for_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the C module the index is sorted arrays, whose order a budgeted run hands
    on; with it, a hash table, which keeps none (below)."""
    monkeypatch.setattr(solver.expand, "KeyTable", None)
    game = get_game("tic-tac-toe")
    store = MemoryStore()
    solve(game, full=True, store=store, max_expansions=500, batch_size=100)
    (g,) = store.graphs.values()
    assert g.key_order is not None
    keys = np.array(g.keys, dtype=np.int64)  # a copy: a view would pin the column
    assert g.key_order.tolist() == np.argsort(keys, kind="stable").tolist()
    assert solve(game, full=True, store=store).complete
    assert g.key_order is None  # taken by the second run's index
    expected = MemoryStore()
    solve(game, full=True, store=expected)
    assert snapshot(g) == snapshot(next(iter(expected.graphs.values())))


def test_a_full_run_with_the_c_key_table_hands_no_order_on() -> None:
    if KeyTable is None:
        pytest.skip("the C module is not built")
    game = get_game("tic-tac-toe")
    store = MemoryStore()
    solve(game, full=True, store=store, max_expansions=500, batch_size=100)
    (g,) = store.graphs.values()
    assert g.key_order is None
    assert solve(game, full=True, store=store).complete
    expected = MemoryStore()
    solve(game, full=True, store=expected)
    assert snapshot(g) == snapshot(next(iter(expected.graphs.values())))
