"""Full solves (tablebase mode) over a graph in RAM: the runner (:mod:`~solver.full.run`)
and the retrograde passes (:mod:`~solver.full.retrograde`)."""
