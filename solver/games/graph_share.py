"""e-Valuate on graphs (seed 003, section 5): share a graph's edges or vertices by colouring.

MAX proposes a colour from a palette of ``colors`` colours; MIN assigns it to an uncoloured
element of his choice. When every element is coloured, each shared element ``s`` goes to
MAX if the elements of its set ``S(s)`` are not all of one colour, and to MIN if they are
(the paper's ``f_s``: 1 unless ``S(s)`` is monochromatic). MAX's share is the result.

* ``mode=vertices`` — the paper's ``(V, E)`` game: colour the vertices, share the edges;
  ``S(uv) = {u, v}``, so an edge is MAX's exactly when its ends have different colours.
* ``mode=edges`` — the ``(E, V)`` game: colour the edges, share the vertices; ``S(v)`` is
  the set of edges at ``v``, so a vertex is MAX's exactly when two of its edges have
  different colours (every vertex needs an edge; one of degree 1 is always MIN's).

Key: bit fields of width ``w = colors.bit_length()``. Field 0 (the low bits) is the pending
proposal, field ``1 + i`` the colour of element ``i`` (vertices in label order, or edges
in the order they are listed); a field holds 0 (nothing) or ``1 + c`` for colour ``c``.
MIN is to move exactly when a proposal is pending. Every game ends after MIN's last
move, so terminal positions have MAX to move and are worth ``+share`` to him.

Symmetry (``symmetry=true``): the graph's automorphisms (found by backtracking over vertex
maps that keep adjacency), acting on the coloured elements, times the permutations of the
colours (they act on the proposal too). When that group has at most
:data:`GROUP_CAP` elements it is used whole; otherwise (e.g. complete graphs) only swaps
of two interchangeable elements and, with at most 4 colours, the colour permutations.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import operator
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import ClassVar

from solver.errors import InvalidParameterError, InvalidPositionError
from solver.game import Param, ParamValue, PositionKey
from solver.games._fields import (
    Canonical,
    FieldGame,
    FieldGroup,
    FieldSorter,
    FieldWords,
    ValueMap,
)

logger = logging.getLogger(__name__)

MAX_VERTICES = 30
"""Most vertices of a graph."""
MAX_COLORS = 6
"""Most colours."""
GROUP_CAP = 2000
"""Largest explicit symmetry group used for canonical keys."""
COLOR_NAMES = "abcdef"
"""Colour ``c`` is written ``COLOR_NAMES[c]``."""

Edge = tuple[int, int]

_SYMMETRY_CACHE: dict[tuple[str, str, int], Canonical] = {}
"""Canonical-key functions by (graph, mode, colors): building a group's tables can take a
noticeable fraction of a second, and every instance of a variant shares them."""

_BUILTIN = re.compile(r"(friendship|cycle|path|complete|star)-([0-9]{1,2})", flags=re.ASCII)
_EDGE = re.compile(r"([0-9]{1,2})-([0-9]{1,2})", flags=re.ASCII)
_ASSIGNMENT = re.compile(r"^([0-9]{1,2}(?:-[0-9]{1,2})?)=([a-z?])$", flags=re.ASCII)


def build_graph(spec: str) -> tuple[tuple[int, ...], tuple[Edge, ...]]:
    """Vertices (sorted labels) and edges of a graph description.

    Built-ins: ``friendship-N`` (N triangles sharing vertex 0: the windmill, the paper's
    friendship graph is ``friendship-3``), ``cycle-N``, ``path-N``, ``complete-N``,
    ``star-N`` (a centre 0 and N leaves); or an explicit list ``edges:0-1,1-2,2-0`` of
    edges between vertex labels 0-99 (the vertices are the labels that occur).

    :raises InvalidParameterError: for unknown names, sizes out of range, self-loops or
        repeated edges.

    >>> build_graph("friendship-1")
    ((0, 1, 2), ((0, 1), (0, 2), (1, 2)))
    """
    s = spec.strip()
    m = _BUILTIN.fullmatch(s)
    if m is not None:
        return _builtin_graph(spec, m.group(1), int(m.group(2)))
    if s.startswith("edges:"):
        return _listed_graph(spec, s[len("edges:") :])
    raise InvalidParameterError(
        f"unknown graph {spec!r}: use friendship-N, cycle-N, path-N, complete-N, star-N or "
        "an edge list like 'edges:0-1,1-2,2-0'"
    )


def _builtin_graph(spec: str, kind: str, n: int) -> tuple[tuple[int, ...], tuple[Edge, ...]]:
    """The built-in graph *kind*-*n* (see :func:`build_graph`)."""
    smallest = {"friendship": 1, "cycle": 3, "path": 2, "complete": 2, "star": 1}[kind]
    vertices = {"friendship": 2 * n + 1, "star": n + 1}.get(kind, n)
    if n < smallest or vertices > MAX_VERTICES:
        largest = {"friendship": (MAX_VERTICES - 1) // 2, "star": MAX_VERTICES - 1}.get(
            kind, MAX_VERTICES
        )
        raise InvalidParameterError(f"graph {spec!r}: {kind}-N needs {smallest} <= N <= {largest}")
    edges: list[Edge]
    if kind == "friendship":
        edges = []
        for t in range(n):
            a, b = 2 * t + 1, 2 * t + 2
            edges += [(0, a), (0, b), (a, b)]
    elif kind == "cycle":
        edges = [(i, i + 1) for i in range(n - 1)] + [(0, n - 1)]
    elif kind == "path":
        edges = [(i, i + 1) for i in range(n - 1)]
    elif kind == "star":
        edges = [(0, i) for i in range(1, n + 1)]
    else:
        edges = [(i, j) for i in range(n) for j in range(i + 1, n)]
    return tuple(range(vertices)), tuple(edges)


def _listed_graph(spec: str, body: str) -> tuple[tuple[int, ...], tuple[Edge, ...]]:
    """The graph of the edge list *body* (``0-1,1-2,2-0``; see :func:`build_graph`)."""
    if not body.strip():
        raise InvalidParameterError(f"graph {spec!r} lists no edges")
    seen: set[Edge] = set()
    edges = []
    for part in body.split(","):
        item = part.strip()
        em = _EDGE.fullmatch(item)
        if em is None:
            raise InvalidParameterError(
                f"bad edge {item!r} in graph {spec!r}: expected two vertex labels 0-99 "
                "joined by '-', like '0-1'"
            )
        u, v = int(em.group(1)), int(em.group(2))
        if u == v:
            raise InvalidParameterError(f"self-loop {item!r} in graph {spec!r}")
        edge = (min(u, v), max(u, v))
        if edge in seen:
            raise InvalidParameterError(f"edge {item!r} is listed twice in graph {spec!r}")
        seen.add(edge)
        edges.append(edge)
    labels = sorted({x for e in edges for x in e})
    if len(labels) > MAX_VERTICES:
        raise InvalidParameterError(
            f"graph {spec!r} has {len(labels)} vertices; at most {MAX_VERTICES}"
        )
    return tuple(labels), tuple(edges)


def automorphisms(
    vertices: Sequence[int], edges: Sequence[Edge], cap: int
) -> list[tuple[int, ...]] | None:
    """Every automorphism of the graph as a map of vertex *indices* (``None`` if there are
    more than *cap*), by backtracking over vertex maps that keep adjacency and degrees.

    Vertices are mapped in breadth-first order, so each one after the first of its
    component has a mapped neighbour and its image is one of that neighbour image's
    neighbours: a few choices per step instead of every vertex (by index order, a rigid
    30-vertex cubic graph took minutes)."""
    n = len(vertices)
    index = {v: i for i, v in enumerate(vertices)}
    adj = [0] * n
    for u, v in edges:
        adj[index[u]] |= 1 << index[v]
        adj[index[v]] |= 1 << index[u]
    degree = [a.bit_count() for a in adj]
    order: list[int] = []
    anchor: list[int] = []  # a neighbour mapped before order[t], or -1
    placed = [False] * n
    for root in range(n):
        if placed[root]:
            continue
        placed[root] = True
        queue = [root]
        parent = {root: -1}
        for v in queue:
            order.append(v)
            anchor.append(parent[v])
            for w in range(n):
                if (adj[v] >> w) & 1 and not placed[w]:
                    placed[w] = True
                    parent[w] = v
                    queue.append(w)
    found: list[tuple[int, ...]] = []
    image = [-1] * n
    everything = (1 << n) - 1

    def extend(t: int, used: int) -> bool:
        if t == n:
            found.append(tuple(image))
            return len(found) <= cap
        i = order[t]
        a = anchor[t]
        pool = (adj[image[a]] if a >= 0 else everything) & ~used
        while pool:
            low = pool & -pool
            pool ^= low
            j = low.bit_length() - 1
            if degree[j] != degree[i]:
                continue
            if any(((adj[i] >> k) & 1) != ((adj[j] >> image[k]) & 1) for k in order[:t]):
                continue
            image[i] = j
            ok = extend(t + 1, used | low)
            image[i] = -1
            if not ok:
                return False
        return True

    return found if extend(0, 0) else None


def _swap_test(sets: Sequence[frozenset[int]], m: int) -> Callable[[int, int], bool]:
    """Whether swapping elements *a* and *b* (of ``0..m-1``) maps the family *sets* (a
    multiset) onto itself.

    Sets holding both or neither are fixed; the swap maps those holding only *a* onto
    those holding only *b*, so it keeps the family exactly when ``{S - a}`` over the sets
    S holding only *a* equals ``{T - b}`` over those holding only *b* (as multisets).
    Compared by XOR hashes of the sets first (O(degree) per pair, where sorting the whole
    family per pair took 16 s on complete-30's 435 edges), then exactly.
    """
    rng = random.Random(m)
    code = [rng.getrandbits(64) for _ in range(m)]
    digests = [functools.reduce(operator.xor, (code[x] for x in s), 0) for s in sets]
    holding: list[list[int]] = [[] for _ in range(m)]
    for i, s in enumerate(sets):
        for x in s:
            holding[x].append(i)

    def swappable(a: int, b: int) -> bool:
        only_a = [i for i in holding[a] if b not in sets[i]]
        only_b = [i for i in holding[b] if a not in sets[i]]
        if len(only_a) != len(only_b):
            return False
        if sorted(digests[i] ^ code[a] for i in only_a) != sorted(
            digests[i] ^ code[b] for i in only_b
        ):
            return False
        return Counter(sets[i] - {a} for i in only_a) == Counter(sets[i] - {b} for i in only_b)

    return swappable


class GraphShare(FieldGame):
    """Graph sharing (see the module docstring)."""

    name: ClassVar[str] = "graph-share"
    version: ClassVar[int] = 1
    description: ClassVar[str] = (
        "e-Valuate on graphs: MAX proposes a colour, MIN colours an uncoloured vertex (or "
        "edge) with it; at the end an edge (or vertex) is MAX's when the vertices (edges) it "
        "touches are not all of one colour. MAX's share is the result."
    )
    notation: ClassVar[str] = (
        "Every coloured element as 'element=colour' or 'element=?' (uncoloured), separated "
        "by ',', then ';proposed=c' when MAX has proposed colour c and MIN is to place it. "
        "Elements are vertex labels ('3') in mode=vertices and edges ('0-1', smaller label "
        "first) in mode=edges; colours are letters 'a', 'b', ... E.g. "
        "'0=a,1=?,2=b,3=?,4=?,5=?,6=?;proposed=a'. When parsing, elements may come in any "
        "order and omitted ones are uncoloured. Moves: MAX's are the colour proposed ('a'), "
        "MIN's the element that receives it ('3' or '0-1'). Values are from the mover's "
        "view; MAX is to move when nothing is proposed."
    )
    parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "graph",
            str,
            "friendship-3",
            "friendship-N, cycle-N, path-N, complete-N, star-N or edges:0-1,1-2,...",
        ),
        Param(
            "mode",
            str,
            "vertices",
            "vertices: colour vertices, share edges; edges: colour edges, share vertices",
            choices=("vertices", "edges"),
        ),
        Param("colors", int, 2, "number of colours MAX may propose", min=1, max=MAX_COLORS),
        Param(
            "symmetry",
            bool,
            True,
            "identify positions under graph automorphisms and colour permutations",
        ),
    )

    @classmethod
    def _normalize_params(cls, values: dict[str, ParamValue]) -> None:
        spec = str(values["graph"])
        _, edges = build_graph(spec)
        if spec.startswith("edges:"):
            values["graph"] = "edges:" + ",".join(f"{u}-{v}" for u, v in edges)

    def _configure(self) -> None:
        spec = str(self.params["graph"])  # in normal form (see _normalize_params)
        vertices, edges = build_graph(spec)
        self.vertices = vertices
        self.edges = edges
        self.mode = str(self.params["mode"])
        colors = int(self.params["colors"])
        self.colors = colors
        vindex = {v: i for i, v in enumerate(vertices)}
        if self.mode == "vertices":
            self.element_names: tuple[str, ...] = tuple(str(v) for v in vertices)
            # S(uv) = {u, v}
            sets: list[tuple[int, ...]] = [(vindex[u], vindex[v]) for u, v in edges]
        else:
            self.element_names = tuple(f"{u}-{v}" for u, v in edges)
            # Every vertex has an edge: build_graph's graphs have no isolated vertices.
            # S(v) = the edges at v
            sets = [tuple(i for i, e in enumerate(edges) if v in e) for v in vertices]
        self.shared_sets: tuple[tuple[int, ...], ...] = tuple(sets)
        self.value_range = (-len(sets), len(sets))
        m = len(self.element_names)
        w = colors.bit_length()
        self._m = m
        self._set_fields(
            w, self.element_names, tuple((COLOR_NAMES[c], c + 1) for c in range(colors))
        )
        # MAX's share: for each shared set, 1 unless all its fields hold the same colour.
        field_masks = tuple(
            tuple((self._mask << self._shift[i], self._shift[i]) for i in s) for s in sets
        )
        self._field_masks = field_masks
        self._set_symmetry(_SYMMETRY_CACHE, (spec, self.mode, colors))

    # -- symmetry ---------------------------------------------------------------------

    def _element_permutation(self, vmap: Sequence[int]) -> tuple[int, ...]:
        """The permutation of coloured elements induced by a vertex map (of indices)."""
        if self.mode == "vertices":
            return tuple(vmap)
        vindex = {v: i for i, v in enumerate(self.vertices)}
        eindex = {(vindex[u], vindex[v]): i for i, (u, v) in enumerate(self.edges)}
        out = []
        for u, v in self.edges:
            a, b = vmap[vindex[u]], vmap[vindex[v]]
            out.append(eindex[(min(a, b), max(a, b))])
        return tuple(out)

    def _color_maps(self, limit: int) -> list[ValueMap]:
        """Colour permutations as field-value maps (0 stays 0), if there are <= *limit*."""
        if math.factorial(self.colors) > limit:
            return [tuple(range(1 << self._w))]
        out: list[ValueMap] = []
        for perm in itertools.permutations(range(self.colors)):
            vmap = [0, *(1 + p for p in perm)]
            vmap += list(range(len(vmap), 1 << self._w))
            out.append(tuple(vmap))
        return out

    def _symmetries(self) -> Canonical:
        colour_maps = self._color_maps(GROUP_CAP)
        autos = automorphisms(self.vertices, self.edges, GROUP_CAP // len(colour_maps))
        fields = self._m + 1
        if autos is not None:
            perms = list(dict.fromkeys(self._element_permutation(a) for a in autos))
            elements = [
                ((0, *(1 + p[i] for i in range(self._m))), vmap)
                for p in perms
                for vmap in colour_maps
            ]
            if len(elements) == 1:
                return None, 1
            logger.debug("graph-share: explicit symmetry group of order %d", len(elements))
            return FieldGroup(self._w, fields, elements).canonical, len(elements)
        # Too many automorphisms: swaps of interchangeable elements (the two elements
        # touch the same shared sets up to the swap) and, with few colours, colour maps.
        swappable = _swap_test([frozenset(s) for s in self.shared_sets], self._m)
        parent = list(range(self._m))
        for a in range(self._m):
            for b in range(a + 1, self._m):
                if parent[b] == b and swappable(a, b):
                    parent[b] = parent[a]
        classes: dict[int, list[int]] = {}
        for i in range(self._m):
            classes.setdefault(parent[i], []).append(1 + i)
        maps = self._color_maps(24)
        size = math.prod(math.factorial(len(c)) for c in classes.values()) * len(maps)
        sorter = FieldSorter(self._w, fields, list(classes.values()), maps)
        return sorter.canonical, size

    # -- the Game protocol ------------------------------------------------------------

    def share(self, key: PositionKey) -> int:
        """MAX's share in the fully coloured position *key*."""
        mask = self._mask
        total = 0
        for fields in self._field_masks:
            first = -1
            for _, s in fields:
                colour = (key >> s) & mask
                if first < 0:
                    first = colour
                elif colour != first:
                    total += 1
                    break
        return total

    def terminal_value(self, key: PositionKey) -> int | None:
        if key & self._mask or not self._complete(key):
            return None
        return self.share(key)

    # -- notation (FieldGame's, with these words and fields) --------------------------

    words: ClassVar[FieldWords] = FieldWords(
        "colours", "", "c", "every element is coloured", examples=3
    )

    def _assignment(self, part: str, item: str, text: str) -> tuple[str, str]:
        """The element (by its name, an edge's ends in order) and the colour (``?``:
        none) that *item* (*part* of *text* without blanks) assigns."""
        m = _ASSIGNMENT.match(item)
        if m is None:
            raise InvalidPositionError(
                f"expected 'element=colour' or 'element=?', got {part.strip()!r} in {text!r}"
            )
        name, colour = m.group(1), m.group(2)
        if "-" in name:  # an edge may be written either way round
            u, v = (int(x) for x in name.split("-"))
            name = f"{min(u, v)}-{max(u, v)}"
        else:
            name = str(int(name))
        if name not in self._field_index:
            kind = "vertex" if self.mode == "vertices" else "edge"
            raise InvalidPositionError(
                f"{name!r} is not a coloured {kind} of graph {self.params['graph']} in {text!r}"
            )
        return name, colour

    def _value(self, symbol: str, text: str) -> int:
        c = COLOR_NAMES.find(symbol) if len(symbol) == 1 else -1
        if not 0 <= c < self.colors:
            raise InvalidPositionError(
                f"{symbol!r} is not a colour in {text!r} (colours: "
                f"{', '.join(COLOR_NAMES[: self.colors])})"
            )
        return c + 1


__all__ = ["COLOR_NAMES", "GraphShare", "automorphisms", "build_graph"]
