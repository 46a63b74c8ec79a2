"""Types of the chance solver's value iteration in C (``solver/chance/_sweep.c``)."""

from typing import Any

def iterate(
    low: Any,
    high: Any,
    start: Any,
    child: Any,
    sign: Any,
    weight: Any,
    kind: Any,
    nodes: Any,
    bounds: Any,
    tolerance: float,
    max_sweeps: int,
    /,
) -> int:
    """Value iteration over the layers ``nodes[bounds[i]:bounds[i + 1]]``, in place in
    *low* / *high*, as :func:`solver.chance.bounds._iterate` sweeps them; the sweeps it
    took."""
