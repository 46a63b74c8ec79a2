"""Move labels stored compactly: a graph's edge labels as one byte (or two) per edge,
an index into the distinct labels seen so far (:class:`Labels`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from solver.game import MoveLabel


class Labels(Sequence[MoveLabel]):
    """A list of move labels stored as one byte (or two) per entry: an index into the
    distinct labels seen so far. Reads like a list of strings."""

    def __init__(self, labels: Iterable[MoveLabel] = ()) -> None:
        self.names: list[MoveLabel] = []
        self.codes: dict[MoveLabel, int] = {}
        self.data = array("B")
        self.extend(labels)

    @classmethod
    def from_codes(cls, names: Sequence[MoveLabel], codes: npt.NDArray[Any]) -> Labels:
        """Labels already encoded: *codes* index *names*.

        :raises ValueError: if a code is out of range.
        """
        out = cls()
        out.names = list(names)
        out.codes = {m: i for i, m in enumerate(out.names)}
        kinds = len(out.names)
        if codes.size and (codes.min() < 0 or codes.max() >= kinds):
            raise ValueError("a move label is out of range")
        typecode = "B" if kinds <= 256 else "H" if kinds <= 65_536 else "l"
        out.data = array(typecode, codes.astype(np.dtype(typecode)).tobytes())
        return out

    def _code(self, label: MoveLabel) -> int:
        code = self.codes.get(label)
        if code is None:
            code = self.codes[label] = len(self.names)
            self.names.append(label)
            if code == 256 and self.data.typecode == "B":
                self.data = array("H", self.data)
            elif code == 65_536 and self.data.typecode == "H":
                self.data = array("l", self.data)
        return code

    def append(self, label: MoveLabel) -> None:
        self.data.append(self._code(label))

    def extend(self, labels: Iterable[MoveLabel]) -> None:
        labels = labels if isinstance(labels, list) else list(labels)
        codes = self.codes
        try:
            new = list(map(codes.__getitem__, labels))  # labels seen before: the rule
        except KeyError:
            code = self._code
            new = [codes[m] if m in codes else code(m) for m in labels]
        self.data.extend(new)  # after the codes: they may have widened the array

    def __len__(self) -> int:
        return len(self.data)

    @overload
    def __getitem__(self, i: int) -> MoveLabel: ...
    @overload
    def __getitem__(self, i: slice) -> list[MoveLabel]: ...
    def __getitem__(self, i: int | slice) -> MoveLabel | list[MoveLabel]:
        if isinstance(i, slice):
            return list(map(self.names.__getitem__, self.data[i]))
        return self.names[self.data[i]]

    def __iter__(self) -> Iterator[MoveLabel]:
        names = self.names
        return (names[c] for c in self.data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Labels):
            return list(self) == list(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Labels({list(self)!r})"
