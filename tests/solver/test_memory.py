"""Memory sizes, and a solve's memory limit in process (tests/db/test_memory_limit.py
runs it as a real process and measures its peak)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.errors import InvalidParameterError
from solver.games import get_game
from solver.memory import (
    MINIMUM,
    RESERVE_PER_NODE,
    MemoryBudget,
    format_size,
    headroom,
    parse_size,
    rss,
)
from solver.negamax import solve
from solver.run import Limits
from solver.store import MemoryStore


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("4GiB", 4 * 2**30),
        ("4gib", 4 * 2**30),
        ("4G", 4 * 2**30),
        ("4GB", 4 * 10**9),
        ("512MiB", 512 * 2**20),
        ("512 MiB", 512 * 2**20),
        ("1.5GiB", 3 * 2**29),
        (".5T", 2**39),
        ("2kB", 2000),
        ("100", 100),
        ("100B", 100),
    ],
)
def test_sizes_parse(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "GiB", "4 GiBs", "-1GiB", "4 Gib 2", "1e9", "four"])
def test_malformed_sizes_are_refused_in_one_line(text: str) -> None:
    with pytest.raises(InvalidParameterError, match="such as 4GiB") as info:
        parse_size(text)
    assert "\n" not in str(info.value)


@given(st.integers(min_value=0, max_value=2**50))
def test_a_formatted_size_parses_back_within_its_rounding(n: int) -> None:
    text = format_size(n)
    back = parse_size(text.replace(" ", ""))
    assert abs(back - n) <= max(0.005 * n, 1)


def test_a_limit_below_the_minimum_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="at least 128 MiB"):
        Limits(memory_limit=MINIMUM - 1)
    with pytest.raises(InvalidParameterError, match="at least 128 MiB"):
        solve(get_game("number-game"), memory_limit=10)


def test_a_limit_already_reached_ends_the_run_before_its_first_batch() -> None:
    limit = MINIMUM
    ballast = b"\x01" * limit  # written, so resident: this process is over the limit
    assert rss() > limit
    store = MemoryStore()
    r = solve(get_game("connect-four", width=4, height=4), store=store, memory_limit=limit)
    del ballast
    assert (r.status, r.ended_by, r.expansions) == ("budget", "memory", 0)
    assert r.memory_limit == limit and r.peak_rss > limit
    # nothing is lost: the same store goes on without the limit to the same result
    again = solve(get_game("connect-four", width=4, height=4), store=store)
    fresh = solve(get_game("connect-four", width=4, height=4))
    assert (again.status, again.ended_by) == ("complete", None)
    assert (again.low, again.high, again.nodes) == (fresh.low, fresh.high, fresh.nodes)


def test_the_check_keeps_a_reserve_for_the_run_end() -> None:
    limit = max(MINIMUM, rss()) + 32 * 2**20
    # with the reserve for ten million nodes the limit is reached, without it not
    assert Limits(memory_limit=limit).why(0, None, reserve=0) is None
    assert Limits(memory_limit=limit).why(0, None, reserve=RESERVE_PER_NODE * 10**7) == "memory"
    assert headroom(4 * 2**30) == int(4 * 2**30 * 0.02)
    assert headroom(MINIMUM) == 4 * 2**20


def test_a_complete_run_names_no_reason_and_reports_its_memory() -> None:
    r = solve(get_game("number-game"), memory_limit=64 * 2**30)
    assert (r.status, r.ended_by, r.memory_limit) == ("complete", None, 64 * 2**30)
    assert 0 < r.peak_rss <= rss() * 2


def test_large_blocks_are_mapped_on_glibc() -> None:
    # the tiered solve's arrays go back to the system when freed (solver.memory)
    import platform

    from solver.memory import map_large_blocks

    assert map_large_blocks() == (platform.libc_ver()[0] == "glibc")


@pytest.mark.parametrize(
    ("limit", "store_cache", "resident_nodes", "room", "three_workers"),
    [
        # limit: the store's cache, the resident nodes with the process at 100 MiB,
        # headroom, each local Dask worker's share when there are three
        (512 * 2**20, 32 * 2**20, 646_202, 10_737_418, 178_956_970),
        (4 * 2**30, 512 * 2**20, 5_945_565, 85_899_345, 1_431_655_765),
        (64 * 2**30, 2**30, 110_277_479, 1_374_389_534, 22_906_492_245),
    ],
)
def test_a_memory_limit_is_shared_as_before(
    limit: int, store_cache: int, resident_nodes: int, room: int, three_workers: int
) -> None:
    # What --memory-limit gives an evicting run's store cache and resident nodes, the
    # headroom every run (a game of chance's too) keeps below it, and a tiered run's
    # local Dask workers, pinned.
    budget = MemoryBudget(limit)
    assert Limits(memory_limit=limit).memory == budget
    assert budget.store_cache == store_cache
    assert budget.resident_nodes(100 * 2**20) == resident_nodes
    assert budget.headroom == headroom(limit) == room
    assert budget.resident_nodes(limit) == 1_000  # no room left: the least
    assert budget.worker_share(3) == three_workers == limit // 3
    assert budget.worker_share(1) == limit
