"""Partial solves: the runner (:mod:`~solver.partial.run`), the null-window searches
(:mod:`~solver.partial.search`), the leak walks (:mod:`~solver.partial.leaks`) and the
node cache of a bounded-memory run, which evicts to the store (:mod:`~solver.partial.cache`).
"""
