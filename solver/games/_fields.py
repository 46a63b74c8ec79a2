"""Canonical keys for games whose key is a row of equal-width bit fields.

e-Valuate and graph-share keep one field per variable (or coloured element) plus one for
the pending proposal. Their symmetries permute fields and may also relabel field values
(graph-share's colour permutations). Two ways to pick a representative of a key's orbit:

* :class:`FieldGroup` — an explicit (small) group: the smallest image of the key, each
  image the sum of a few table lookups (one per chunk of fields, as in tic-tac-toe);
* :class:`FieldSorter` — a group that is a product of symmetric groups on classes of
  interchangeable fields (times an explicit set of value relabellings): sort the values
  within each class, which costs one sort per class instead of one image per element.

Both are exact canonical forms: the result lies in the key's orbit, is the same for every
key of the orbit, and is therefore idempotent.

:class:`FieldGame` holds what the two games share besides: the propose-then-assign moves,
terminal detection, the cached symmetry set-up and the notation
(``name=symbol,...;proposed=symbol``, worded by :class:`FieldWords`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from solver.errors import InvalidPositionError
from solver.game import GameBase, MoveLabel, PositionKey

ValueMap = tuple[int, ...]
"""A relabelling of field values: ``value_map[v]`` is the new value of a field holding
``v`` (0, the empty field, must map to 0)."""

FieldPermutation = tuple[int, ...]
"""``perm[f]`` is the field that field ``f``'s value moves to."""

_CHUNK_BITS = 8


def _chunks(width: int, fields: int) -> tuple[int, tuple[tuple[int, ...], ...]]:
    """Fields per chunk and the fields of each chunk (whole fields, at most 8 bits)."""
    per = max(1, _CHUNK_BITS // width)
    return per, tuple(tuple(range(i, min(i + per, fields))) for i in range(0, fields, per))


def _tables(
    width: int, fields: int, perm: FieldPermutation, value_map: ValueMap
) -> tuple[tuple[int, ...], ...]:
    """Per chunk, the image of every chunk value under (*perm*, *value_map*)."""
    mask = (1 << width) - 1
    _, chunks = _chunks(width, fields)
    out: list[tuple[int, ...]] = []
    for chunk in chunks:
        bits = width * len(chunk)
        table: list[int] = []
        for v in range(1 << bits):
            total = 0
            for j, f in enumerate(chunk):
                value = (v >> (width * j)) & mask
                mapped = value_map[value] if value < len(value_map) else value
                total |= mapped << (width * perm[f])
            table.append(total)
        out.append(tuple(table))
    return tuple(out)


class FieldMap:
    """One element: a field permutation with a value relabelling, as chunk tables."""

    def __init__(
        self, width: int, fields: int, perm: FieldPermutation, value_map: ValueMap
    ) -> None:
        _, chunks = _chunks(width, fields)
        self.shifts = tuple(width * chunk[0] for chunk in chunks)
        self.masks = tuple((1 << (width * len(chunk))) - 1 for chunk in chunks)
        self.tables = _tables(width, fields, perm, value_map)

    def image(self, key: int) -> int:
        out = 0
        for table, s, m in zip(self.tables, self.shifts, self.masks, strict=True):
            out |= table[(key >> s) & m]
        return out


def _is_identity(perm: FieldPermutation, value_map: ValueMap) -> bool:
    return all(i == f for i, f in enumerate(perm)) and all(i == v for i, v in enumerate(value_map))


class FieldGroup:
    """An explicit group of (field permutation, value relabelling) pairs.

    ``canonical(key)`` is the smallest image of *key* under the group. Each image costs
    one table lookup per chunk of fields (a chunk is as many whole fields as fit in 8 bits).
    """

    def __init__(
        self,
        width: int,
        fields: int,
        elements: Sequence[tuple[FieldPermutation, ValueMap]],
    ) -> None:
        self.size = len(elements)
        _, chunk_fields = _chunks(width, fields)
        self._shifts = tuple(width * chunk[0] for chunk in chunk_fields)
        self._masks = tuple((1 << (width * len(chunk))) - 1 for chunk in chunk_fields)
        self._images = tuple(
            _tables(width, fields, perm, vmap)
            for perm, vmap in elements
            if not _is_identity(perm, vmap)
        )

        # Specialised loops for the usual numbers of chunks (the hot path of a solve).
        chunks = len(self._shifts)
        self.canonical: Callable[[int], int]
        """The smallest image of a key under the group."""
        if not self._images:
            self.canonical = _identity
        elif chunks == 1:
            self.canonical = self._canonical1
        elif chunks == 2:
            self.canonical = self._canonical2
        elif chunks == 3:
            self.canonical = self._canonical3
        else:
            self.canonical = self._canonical_any

    def _canonical1(self, key: int) -> int:
        (s0,), (m0,) = self._shifts, self._masks
        p0 = (key >> s0) & m0
        return min(key, min(t0[p0] for (t0,) in self._images))

    def _canonical2(self, key: int) -> int:
        (s0, s1), (m0, m1) = self._shifts, self._masks
        p0, p1 = (key >> s0) & m0, (key >> s1) & m1
        return min(key, min(t0[p0] | t1[p1] for t0, t1 in self._images))

    def _canonical3(self, key: int) -> int:
        (s0, s1, s2), (m0, m1, m2) = self._shifts, self._masks
        p0, p1, p2 = (key >> s0) & m0, (key >> s1) & m1, (key >> s2) & m2
        return min(key, min(t0[p0] | t1[p1] | t2[p2] for t0, t1, t2 in self._images))

    def _canonical_any(self, key: int) -> int:
        parts = [(key >> s) & m for s, m in zip(self._shifts, self._masks, strict=True)]
        best = key
        for tables in self._images:
            image = 0
            for table, part in zip(tables, parts, strict=True):
                image |= table[part]
            if image < best:
                best = image
        return best


def _identity(key: int) -> int:
    return key


class FieldSorter:
    """Classes of interchangeable fields, optionally times explicit value relabellings.

    ``canonical(key)``: for each relabelling (the identity included), relabel every field,
    then sort the values within each class (smallest value into the lowest field); the
    smallest result wins. Relabellings must form a group that commutes with the field
    permutations (they act on values only, so they do).
    """

    def __init__(
        self,
        width: int,
        fields: int,
        classes: Sequence[Sequence[int]],
        value_maps: Sequence[ValueMap] = (),
    ) -> None:
        self._mask = (1 << width) - 1
        self._classes = tuple(tuple(width * f for f in sorted(c)) for c in classes if len(c) > 1)
        self._clear = tuple(~sum(self._mask << s for s in shifts) for shifts in self._classes)
        identity = tuple(range(fields))
        self._relabel = tuple(
            FieldMap(width, fields, identity, vmap)
            for vmap in value_maps
            if not _is_identity(identity, vmap)
        )

    def _sort(self, key: int) -> int:
        mask = self._mask
        for shifts, clear in zip(self._classes, self._clear, strict=True):
            values = sorted((key >> s) & mask for s in shifts)
            key &= clear
            for s, v in zip(shifts, values, strict=True):
                key |= v << s
        return key

    def canonical(self, key: int) -> int:
        best = self._sort(key)
        for relabel in self._relabel:
            candidate = self._sort(relabel.image(key))
            if candidate < best:
                best = candidate
        return best


__all__ = ["FieldGroup", "FieldMap", "FieldPermutation", "FieldSorter", "ValueMap"]


Canonical = tuple[Callable[[int], int] | None, int]
"""A canonical-form function (``None``: no symmetry to use) and its group's order."""


@dataclass(frozen=True)
class FieldWords:
    """What a field game's notation calls its parts, in :meth:`FieldGame.parse`'s
    messages."""

    items: str
    """The assignments as a whole (``"assignments"``, ``"colours"``)."""
    element: str
    """What precedes an element's name (``"variable "``, or nothing)."""
    symbol: str
    """The proposal's placeholder in ``';proposed=d'``."""
    filled: str
    """A position whose fields are all filled (``"every variable is instantiated"``)."""
    examples: int | None = None
    """How many fields the empty position's example names (``None``: all)."""


class FieldGame(GameBase):
    """The shared move structure of e-Valuate and graph-share: MAX proposes a value (it
    waits in field 0, the pending proposal), MIN assigns it to an empty field; a position
    whose fields are all filled is terminal. Subclasses call :meth:`_set_fields` and
    :meth:`_set_symmetry` from ``_configure`` and define ``_symmetries`` and
    ``terminal_value``, and, for the notation, :attr:`words`, :meth:`_assignment` and
    :meth:`_value`."""

    words: ClassVar[FieldWords]

    acyclic: ClassVar[bool] = True  # a proposal fills field 0, an assignment a field
    tiers: ClassVar[bool] = True  # the plies played: every move goes one tier on

    _w: int
    _mask: int
    _shift: tuple[int, ...]
    _low_bits: int
    _proposals: tuple[tuple[MoveLabel, int], ...]
    _field_labels: tuple[MoveLabel, ...]
    _field_index: dict[MoveLabel, int]
    _symbols: tuple[str, ...]
    _canon: Callable[[int], int] | None
    symmetry_group_size: int

    def _set_fields(
        self,
        width: int,
        labels: tuple[MoveLabel, ...],
        proposals: tuple[tuple[MoveLabel, int], ...],
    ) -> None:
        """One *width*-bit field per label after the proposal field; MAX's proposals as
        (move label, field value), in the order they are tried."""
        self._w = width
        self._mask = (1 << width) - 1
        self._shift = tuple(width * (j + 1) for j in range(len(labels)))
        # Key of "every field filled": each field's bits OR-ed into its low bit.
        self._low_bits = sum(1 << s for s in self._shift)
        self._proposals = proposals
        self._field_labels = labels
        self._field_index = {label: j for j, label in enumerate(labels)}
        symbols = ["?"] * (1 + len(proposals))  # a field's value as written; 0 is empty
        for label, value in proposals:
            symbols[value] = label
        self._symbols = tuple(symbols)

    def _set_symmetry(self, cache: dict[Any, Canonical], cache_key: Hashable) -> None:
        """Use the variant's symmetries if its ``symmetry`` parameter asks (computed once
        per *cache_key* in *cache*, which is kept to 64 entries)."""
        self.uses_symmetry = bool(self.params["symmetry"])
        self._canon = None
        self.symmetry_group_size = 1
        if self.uses_symmetry:
            cached = cache.get(cache_key)
            if cached is None:
                cached = self._symmetries()
                if len(cache) >= 64:
                    cache.clear()
                cache[cache_key] = cached
            self._canon, self.symmetry_group_size = cached

    def _symmetries(self) -> Canonical:
        raise NotImplementedError

    # -- the Game protocol ------------------------------------------------------------

    def initial(self) -> PositionKey:
        return 0

    def player_to_move(self, key: PositionKey) -> int:
        return 1 if key & self._mask else 0

    def tier(self, key: PositionKey) -> int:
        """The plies played: two per filled field, one more while a proposal waits."""
        mask = self._mask
        filled = sum(1 for s in self._shift if (key >> s) & mask)
        return 2 * filled + (1 if key & mask else 0)

    def child_tiers(self, tier: int) -> tuple[int, ...]:
        return (tier + 1,) if tier < 2 * len(self._shift) else ()

    def _complete(self, key: PositionKey) -> bool:
        folded = key
        for i in range(1, self._w):
            folded |= key >> i
        return folded & self._low_bits == self._low_bits

    def children(self, key: PositionKey) -> list[tuple[MoveLabel, PositionKey]]:
        mask = self._mask
        pending = key & mask
        if pending:
            base = key ^ pending
            return [
                (label, base | (pending << s))
                for label, s in zip(self._field_labels, self._shift, strict=True)
                if not (key >> s) & mask
            ]
        if self._complete(key):
            return []
        return [(label, key | value) for label, value in self._proposals]

    def canonical(self, key: PositionKey) -> PositionKey:
        if self._canon is None:
            return key
        return self._canon(key)

    # -- notation ---------------------------------------------------------------------

    def format(self, key: PositionKey) -> str:
        mask, symbols = self._mask, self._symbols
        text = ",".join(
            f"{name}={symbols[(key >> s) & mask]}"
            for name, s in zip(self._field_labels, self._shift, strict=True)
        )
        pending = key & mask
        if pending:
            text += f";proposed={symbols[pending]}"
        return text

    def parse(self, text: str) -> PositionKey:
        s = text.strip()
        if not s:
            example = ",".join(f"{e}=?" for e in self._field_labels[: self.words.examples])
            raise InvalidPositionError(f"empty position: give {self.words.items} like {example!r}")
        head, sep, tail = s.partition(";")
        key = self._assignments(head, text, only_proposal=bool(sep))
        if sep:
            key |= self._proposal(tail, key, text)
        return key

    def _assignments(self, head: str, text: str, *, only_proposal: bool) -> PositionKey:
        """The key of the assignments *head* (of *text*); an empty *head* assigns nothing
        when *only_proposal* (a proposal follows)."""
        key = 0
        seen: set[str] = set()
        items = [p.replace(" ", "").replace("\t", "") for p in head.split(",")]
        if items == [""] and only_proposal:
            items = []  # only a proposal: nothing assigned yet
        for part, item in zip(head.split(","), items, strict=False):
            name, value = self._assignment(part, item, text)
            if name in seen:
                raise InvalidPositionError(
                    f"{self.words.element}{name!r} is given twice in {text!r}"
                )
            seen.add(name)
            if value != "?":
                key |= self._value(value, text) << self._shift[self._field_index[name]]
        return key

    def _proposal(self, tail: str, key: PositionKey, text: str) -> int:
        """The proposal field's value from *tail*, what follows ``;`` in *text*, after the
        assignments *key*."""
        item = tail.replace(" ", "").replace("\t", "")
        words = self.words
        if not item.startswith("proposed="):
            raise InvalidPositionError(
                f"expected ';proposed={words.symbol}' after the {words.items}, got "
                f"{tail.strip()!r} in {text!r}"
            )
        if self._complete(key):
            raise InvalidPositionError(
                f"impossible position {text!r}: {words.filled}, so nothing can be proposed"
            )
        return self._value(item[len("proposed=") :], text)

    def _assignment(self, part: str, item: str, text: str) -> tuple[str, str]:
        """The field's name and its value's symbol (``?``: empty) that *item* (*part* of
        *text* without blanks) assigns."""
        raise NotImplementedError

    def _value(self, symbol: str, text: str) -> int:
        """The field value written *symbol* in *text*."""
        raise NotImplementedError
