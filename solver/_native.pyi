"""Types of the partial solver's inner loop and key index in C (``solver/_native.c``)."""

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

class KeyTable:
    """A mapping of 64-bit position keys to node ids (0 .. 2**31 - 1)."""

    def __init__(self) -> None: ...
    @classmethod
    def from_keys(cls, keys: Any, /) -> KeyTable:
        """Key i -> i for a buffer of 64-bit keys (an ``array("q")``)."""
    def resolve(self, wanted: Any, next_id: int, ids: Any, first: Any, /) -> int:
        """The id of every key of the buffer *wanted* into *ids*, giving keys not in the
        table ``next_id``, ``next_id + 1``, ... in order of first occurrence (and adding
        them), and each new key's first place in *wanted* into *first* (in id order); the
        number of new keys. All four buffers of 64-bit integers."""
    def __len__(self) -> int: ...
    def __getitem__(self, key: int, /) -> int: ...
    def __setitem__(self, key: int, id: int, /) -> None: ...
    def __delitem__(self, key: int, /) -> None: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __iter__(self) -> Iterator[int]: ...
    @overload
    def get(self, key: int, /) -> int | None: ...
    @overload
    def get(self, key: int, default: int, /) -> int: ...
    def items(self) -> list[tuple[int, int]]: ...
    def keys(self) -> list[int]: ...
    def values(self) -> list[int]: ...
    def update(self, other: Mapping[int, int], /) -> None: ...
    @property
    def nbytes(self) -> int:
        """Bytes of the table's slots."""

class KeyFilter:
    """A Bloom filter of 64-bit position keys: ``k in f`` is false only for keys never
    added (about 1% false positives); keys that are not 64-bit integers are always in."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...
    def add(self, key: int, /) -> None: ...
    def add_many(self, keys: Any, /) -> None:
        """Add a buffer of 64-bit keys (an ``array("q")``, an int64 ndarray)."""
    @property
    def nbytes(self) -> int:
        """Bytes of the filter's bits."""

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
    *mapped: Any,
) -> tuple[int, int, int]:
    """Whether *root*'s value is at least *t*: ``(status, expansions, node)``. A mapped
    graph (``solver.partial.cache``) passes ``load_stub``, ``lookup``, ``reveal`` and the stored
    keys' ``KeyFilter`` as *mapped*, and has its depths kept exact too."""
