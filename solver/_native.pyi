"""Types of the partial solver's inner loop in C (``solver/_native.c``)."""

from collections.abc import Callable, Sequence
from typing import Any

def acyclic_test(
    graph: Any,
    root: int,
    t: int,
    budget: int,
    children: Callable[[Any], Sequence[tuple[Any, Any]]],
    terminal_value: Callable[[Any], int | None],
    canonical: Callable[[Any], Any] | None,
    vmin: int,
    vmax: int,
    /,
) -> tuple[int, int, int]:
    """Whether *root*'s value is at least *t*: ``(status, expansions, node)``."""
