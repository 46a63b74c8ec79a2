"""negagraph's benchmarks (``python -m bench``); not part of the test suite."""
