"""Partial solves: the runner, the null-window searches, the leak walks and the node cache that evicts to the store."""
