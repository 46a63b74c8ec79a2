"""Full solves (tablebase mode) over a graph in RAM: the runner and the retrograde passes."""
