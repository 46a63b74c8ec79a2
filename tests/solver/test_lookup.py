"""A solved tier's sorted keys are found by their directory of leading bits
(solver.tiers.lookup, in C) at the places numpy's binary search gives, over keys of any
spread (negative ones, keys of 2**63 and above stored less 2**64, crowded buckets), and
a key that is not there makes the whole lookup answer None."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.tiers import lookup
from solver.tiers.lookup import SortedKeys

INT64 = st.integers(-(1 << 63), (1 << 63) - 1)


def assert_places(found: np.ndarray | None) -> list[int]:
    """*found*'s places (the lookup found every key)."""
    assert found is not None
    return [int(p) for p in found]


def test_the_c_module_is_built() -> None:
    # the install compiles solver/tiers/_lookup.c (setup.py); the tests below run it
    assert lookup._c_module() is not None


@settings(max_examples=300, deadline=None)
@given(
    st.sets(
        st.one_of(INT64, st.integers(0, 64), st.integers(1 << 40, (1 << 40) + 9)), max_size=200
    ),
    st.data(),
)
def test_places_equal_the_binary_search(keys: set[int], data: st.DataObject) -> None:
    sorted_keys = np.array(sorted(keys), dtype=np.int64)
    table = SortedKeys(sorted_keys)
    assert keys == set() or table.directory is not None
    if keys:
        queries = np.array(
            data.draw(st.lists(st.sampled_from(sorted(keys)), max_size=300)), np.int64
        )
        expected = np.searchsorted(sorted_keys, queries).tolist()
        assert assert_places(table.find(queries)) == expected
    stranger = data.draw(INT64.filter(lambda k: k not in keys))
    mixed = np.array([*sorted(keys)[:3], stranger], dtype=np.int64)
    assert table.find(mixed) is None


def test_the_pure_python_path_answers_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(-(1 << 62), 1 << 62, 5000))
    queries = rng.choice(keys, 20000)
    fast = SortedKeys(keys).find(queries)
    monkeypatch.setenv("NEGAGRAPH_PURE_PYTHON", "1")
    slow = SortedKeys(keys)
    assert slow.directory is None
    assert fast is not None and assert_places(slow.find(queries)) == fast.tolist()
    assert slow.find(np.array([keys[0] + 1 if keys[1] != keys[0] + 1 else keys[0] - 1])) is None


def test_pickled_without_the_directory_and_rebuilt() -> None:
    import pickle

    keys = np.arange(0, 3000, 3, dtype=np.int64)
    table = pickle.loads(pickle.dumps(SortedKeys(keys)))
    assert table.directory is not None
    assert assert_places(table.find(np.array([2997, 0, 3]))) == [999, 0, 1]


def test_unaligned_arrays_are_found_alike() -> None:
    # a Dask worker's arrays arrive in buffers of any alignment (format "=q")
    def unaligned(values: list[int]) -> np.ndarray:
        raw = bytearray(8 * len(values) + 1)
        array = np.frombuffer(raw, dtype=np.int64, count=len(values), offset=1)
        array[:] = values
        assert not array.flags.aligned
        return array

    table = SortedKeys(unaligned([3, 8, 1 << 50]))
    assert assert_places(table.find(unaligned([1 << 50, 3]))) == [2, 0]
