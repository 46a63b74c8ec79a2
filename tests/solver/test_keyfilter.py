"""solver._native.KeyFilter, the Bloom filter of stored keys that spares a bounded-memory
run (solver.partial.cache) a query for each new child key: never a false negative (the run would
make a second node for a stored position), few false positives, growth past its first
part, and keys it cannot hold always reported as possibly stored."""

from __future__ import annotations

import random
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("solver._native", reason="the C module is not built")
from solver._native import KeyFilter  # noqa: E402

int64s = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=200)
@given(st.lists(int64s, max_size=300), st.lists(int64s, max_size=300), st.booleans())
def test_every_added_key_is_in(added: list[int], more: list[int], many: bool) -> None:
    f = KeyFilter()
    if many:
        f.add_many(array("q", added))
        f.add_many(np.array(more, dtype=np.int64))
    else:
        for k in added + more:
            f.add(k)
    assert len(f) == len(added) + len(more)
    assert all(k in f for k in added + more)


def test_false_positives_are_rare_and_growth_keeps_every_key() -> None:
    # 3 million keys: past the first part (2**20 keys), so two parts are asked
    rng = random.Random(17)
    keys = [rng.getrandbits(64) - 2**63 for _ in range(3_000_000)]
    f = KeyFilter()
    f.add_many(array("q", keys))
    assert all(k in f for k in keys)
    stored = set(keys)
    others = [k for k in (rng.getrandbits(64) - 2**63 for _ in range(200_000)) if k not in stored]
    rate = sum(k in f for k in others) / len(others)
    assert rate < 0.02  # 0.5% measured
    # 12 bits a key, parts of 2**20 and 2**21 keys
    assert f.nbytes == (2**20 + 2**21) * 12 // 8


def test_dense_keys_and_what_it_cannot_hold() -> None:
    f = KeyFilter()
    f.add_many(np.arange(0, 100_000, 2, dtype=np.int64))
    assert all(k in f for k in range(0, 100_000, 2))
    assert sum(k in f for k in range(1, 100_000, 2)) < 1_000
    assert 2**70 in f and "a" in f and (1, 2) in f  # cannot tell: always looked up
    with pytest.raises(TypeError):
        f.add(2**70)
    with pytest.raises(TypeError):
        f.add_many(array("i", [1, 2]))
    with pytest.raises(TypeError):
        KeyFilter(10)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
