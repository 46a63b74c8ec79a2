"""Builds the optional C parts: the partial solver's inner loop (solver/_native.c), the
chance solver's value iteration (solver/chance/_sweep.c), a tiered solve's lookup of
sorted keys (solver/tiers/_lookup.c), connect four's batched rules
(solver/games/_connect_four.c) and the SQLite writer's bulk binding
(db/_sqlite_bulk.c).

Everything else is in pyproject.toml. ``optional=True``: where no C compiler is found the
install goes on without them and negagraph runs its pure-Python paths (same results).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "solver._native",
            ["solver/_native.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "solver.chance._sweep",
            ["solver/chance/_sweep.c"],
            optional=True,
            # No fused multiply-adds: the sums must round as NumPy's do.
            extra_compile_args=["-O2", "-ffp-contract=off"],
        ),
        Extension(
            "solver.tiers._lookup",
            ["solver/tiers/_lookup.c"],
            include_dirs=["solver"],
            depends=["solver/int64_buffer.h"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "solver.games._connect_four",
            ["solver/games/_connect_four.c"],
            include_dirs=["solver"],
            depends=["solver/int64_buffer.h"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "db._sqlite_bulk",
            ["db/_sqlite_bulk.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
