"""Tiered full solves: the tier relation, discovery, the per-tier solve, its units of work and the Dask runner of those units."""
