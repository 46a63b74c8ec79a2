"""Tiered full solves: the tier graph (:mod:`~solver.tiers.graph`), discovery
(:mod:`~solver.tiers.discovery`), the per-tier solve (:mod:`~solver.tiers.solve`), its units
of work (:mod:`~solver.tiers.units`, :mod:`~solver.tiers.shards`) and who runs them
(:mod:`~solver.tiers.runner` in this process, :mod:`~solver.tiers.cluster` on a Dask
cluster started by :mod:`~solver.tiers.local_cluster`); :mod:`~solver.tiers.run` is the
runner :func:`solver.negamax.solve` hands a tiered solve to."""
