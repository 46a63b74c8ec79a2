"""Resume files: a solve's graph as its last run left it, beside the SQLite database.

Reading a stored graph back costs about a microsecond and a half a node even through
:mod:`db.backends.sqlite.load`, and a solve split into runs reads it at every start: for
connect-four 5 x 4 in ten full runs that was a fifth of the whole solve. So a run that
ends cleanly before the solve is complete (a budget ran out, Ctrl-C), with everything
committed, writes its graph, exactly as committed, to one file next to the database::

    <database file>.resume-<variant id>

and the next run of the variant loads that instead, in a fraction of a second, after
checking it against the database: it must have been written by the variant's latest run
before this one (id, start time, final status, node and edge counts, as ``solve_runs``
records them), the stored node ids must end where its nodes do, and a sample of stored
nodes and edges must match it. Anything else (another run came between, the database
was restored from a copy, the file is damaged or from another version) and the file is
ignored and the graph read from the database as usual. A partial run also ignores a
file written by a full run: a full run does not rewrite the rows of the nodes it
expands (their edges say so), a partial run must, and only the database tells which
they are. The file is removed when a run opens the variant, whichever way it then
loads, so none is left behind by a completed solve; a run killed before its clean end
writes none, and its successor reads the database.

Only SQLite databases in a file get resume files, and only graphs whose keys fit in 64
bits; PostgreSQL runs always read the database. A file holds the node columns, each
node's number of edges and, if the run had them all in memory, the edges too (sorted by
parent, as the database returns them): the graph the loader would build, column for
column (``tests/db/test_resume.py`` checks that).
"""

from __future__ import annotations

import glob
import json
import logging
import os
import zipfile
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, text
from sqlalchemy.engine import Connection

from db.models import encode_key
from solver.graph import EXPANDED, NODE_VALUES, UNEXPANDED, Graph
from solver.labels import Labels
from solver.values import decode, decode_depth

log = logging.getLogger(__name__)

FORMAT = 1
"""Version of the file's layout; a file of another version is ignored."""

SAMPLE = 64
"""Stored nodes (and their edges) compared with the file before it is used."""

_NODE_COLUMNS: tuple[tuple[str, str], ...] = (("keys", "q"), *NODE_VALUES, ("child_count", "i"))
"""The columns of a resume file besides the edges: every node's key, values and number
of edges."""


def resume_path(engine: Engine, variant_id: int) -> Path | None:
    """Where *variant_id*'s resume file goes, or ``None`` if the database is not a
    SQLite file."""
    url = engine.url
    database = url.database
    if (
        engine.dialect.name != "sqlite"
        or not database
        or database == ":memory:"
        or database.startswith("file:")
        or url.query.get("mode") == "memory"
    ):
        return None
    return Path(f"{database}.resume-{variant_id}")


def write(path: Path, graph: Graph, meta: dict[str, Any]) -> bool:
    """Write *graph* (every change committed) with *meta* to *path*, atomically (a
    temporary file renamed over it); ``False`` (nothing written) if the graph cannot be
    kept in the file (keys beyond 64 bits) or the file system refuses."""
    if not isinstance(graph.keys, array):
        return False
    columns = {name: _column(getattr(graph, name), code) for name, code in _NODE_COLUMNS}
    order = graph.key_order
    if order is not None and order.shape == (graph.num_nodes,):
        columns["key_order"] = order  # checked by the KeyIndex that reads it
    with_edges = graph.deferred_edges == 0
    names: list[str] = []
    if with_edges:
        parent = _column(graph.edge_parent, "i")
        child = _column(graph.edge_child, "i")
        moves = _column(graph.edge_move.data, graph.edge_move.data.typecode)
        if parent.size and np.any(parent[1:] < parent[:-1]):
            order = np.argsort(parent, kind="stable")  # the database's order
            parent, child, moves = parent[order], child[order], moves[order]
        columns.update(edge_parent=parent, edge_child=child, edge_move=moves)
        names = list(graph.edge_move.names)
    meta = {
        **meta,
        "format": FORMAT,
        "nodes": graph.num_nodes,
        "edges": graph.total_edges,
        "with_edges": with_edges,
        "move_names": names,
    }
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            # numpy's stubs read **columns as its keyword flags
            np.savez(f, meta=np.array(json.dumps(meta)), **columns)  # type: ignore[arg-type]
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not write the resume file %s: %s", path, exc)
        tmp.unlink(missing_ok=True)
        return False
    return True


def take(path: Path) -> tuple[dict[str, Any], Graph] | None:
    """The metadata and graph in the resume file *path*, which is removed; ``None`` if
    there is none or it cannot be read (a damaged file fails its checksums)."""
    _remove_leftovers(path)
    if not path.exists():
        return None
    try:
        try:
            return _read(path)
        finally:
            path.unlink(missing_ok=True)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        log.warning("ignoring the resume file %s: %s", path, exc)
        return None


def _remove_leftovers(path: Path) -> None:
    """Remove the temporary files of writers killed while writing *path*."""
    for tmp in path.parent.glob(glob.escape(path.name) + ".tmp-*"):
        tmp.unlink(missing_ok=True)


def _read(path: Path) -> tuple[dict[str, Any], Graph]:
    with open(path, "rb") as f, np.load(f, allow_pickle=False) as data:
        meta: dict[str, Any] = json.loads(str(data["meta"]))
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, not {FORMAT}")
        graph = Graph()
        n = int(meta["nodes"])
        for name, code in _NODE_COLUMNS:
            values = data[name]
            if values.dtype != np.dtype(code) or values.shape != (n,):
                raise ValueError(f"column {name} is not {n} values of type {code}")
        graph.append_keys(data["keys"])
        graph.append_nodes(n, {name: data[name].tobytes() for name, _ in NODE_VALUES})
        if "key_order" in data.files:
            graph.key_order = data["key_order"]
        counts = data["child_count"]
        total = int(counts.sum(dtype=np.int64))
        if total != meta["edges"] or (n and counts.min() < 0):
            raise ValueError("its edge counts do not add up")
        if meta["with_edges"]:
            _read_edges(graph, data, meta["move_names"], counts)
        else:
            graph.set_edge_counts(counts)
    return meta, graph


def _read_edges(graph: Graph, data: Any, names: list[str], counts: npt.NDArray[Any]) -> None:
    """Append a file's edges (*data*'s edge columns, *counts* a node) to *graph*."""
    n, total = graph.num_nodes, int(counts.sum(dtype=np.int64))
    parent, child, moves = data["edge_parent"], data["edge_child"], data["edge_move"]
    if not parent.shape == child.shape == moves.shape == (total,):
        raise ValueError("its edge columns are not one per edge")
    if not np.array_equal(parent, np.repeat(np.arange(n, dtype=np.int32), counts)):
        raise ValueError("its edges are not sorted by parent as counted")
    if total and (child.min() < 0 or child.max() >= n):
        raise ValueError("an edge leads to a missing node")
    labels = Labels.from_codes(names, moves)
    graph.append_edges(parent.astype(np.int32), child.astype(np.int32), labels)


def _column(values: array[int] | bytearray, code: str) -> npt.NDArray[Any]:
    """A graph column as a numpy array of the array type *code* (a view, when not empty)."""
    if not len(values):
        return np.zeros(0, dtype=np.dtype(code))
    return np.frombuffer(values, dtype=np.dtype(code))


# -- checking a file against the database ----------------------------------------------

_PREVIOUS_RUN = text(
    "SELECT id, status, started_at, nodes, edges FROM solve_runs "
    "WHERE variant_id = :variant AND id < :current ORDER BY id DESC LIMIT 1"
)


def run_marks(conn: Connection, run_id: int) -> dict[str, Any]:
    """What a resume file records of the run *run_id* that writes it (as ``solve_runs``
    has it once the run's end is recorded)."""
    row = conn.execute(
        text("SELECT status, started_at FROM solve_runs WHERE id = :id"), {"id": run_id}
    ).one()
    return {"run_id": run_id, "status": row.status, "started_at": str(row.started_at)}


def mismatch(
    conn: Connection, variant_id: int, run_id: int, meta: dict[str, Any], graph: Graph
) -> str | None:
    """Why the resume file (*meta*, *graph*) is not the stored graph of *variant_id* as
    the run before *run_id* left it, or ``None`` if every check passes."""
    prev = conn.execute(_PREVIOUS_RUN, {"variant": variant_id, "current": run_id}).first()
    if prev is None or prev.id != meta.get("run_id"):
        return "another run came after the one that wrote it"
    if (meta.get("variant_id"), str(prev.started_at), prev.status) != (
        variant_id,
        meta.get("started_at"),
        meta.get("status"),
    ):
        return "it was written by another run of that number"
    if (prev.nodes, prev.edges) != (graph.num_nodes, graph.total_edges):
        return (
            f"its run recorded {prev.nodes} nodes and {prev.edges} edges, "
            f"the file holds {graph.num_nodes} and {graph.total_edges}"
        )
    n = graph.num_nodes
    last = conn.execute(
        text("SELECT max(id) FROM nodes WHERE variant_id = :variant"), {"variant": variant_id}
    ).scalar()
    if (-1 if last is None else last) != n - 1:
        return f"the database's nodes end at id {last}, the file's at {n - 1}"
    if not n:
        return None
    ids = sorted(set(np.linspace(0, n - 1, min(SAMPLE, n)).astype(np.int64).tolist()))
    return _nodes_differ(conn, variant_id, graph, ids) or _edges_differ(
        conn, variant_id, graph, ids
    )


def _nodes_differ(conn: Connection, variant_id: int, graph: Graph, ids: list[int]) -> str | None:
    rows = conn.execute(
        text(
            'SELECT id, "key", low, high, low_final, high_final, depth_low, depth_high, '
            "state, dist FROM nodes WHERE variant_id = :variant AND id IN "
            f"({', '.join(map(str, ids))}) ORDER BY id"
        ),
        {"variant": variant_id},
    ).all()
    if [r.id for r in rows] != ids:
        return "sampled nodes are missing from the database"
    g = graph
    for r in rows:
        i = r.id
        state = r.state
        if state == UNEXPANDED and g.state[i] == EXPANDED and g.child_count[i] > 0:
            state = EXPANDED  # expanded by a full run: its edges say so
        stored = (
            bytes(r.key),
            decode(r.low, upper=False),
            decode(r.high, upper=True),
            bool(r.low_final),
            bool(r.high_final),
            decode_depth(r.depth_low),
            decode_depth(r.depth_high),
            state,
            r.dist,
        )
        kept = (
            encode_key(g.keys[i]),
            g.low[i],
            g.high[i],
            bool(g.low_final[i]),
            bool(g.high_final[i]),
            g.depth_low[i],
            g.depth_high[i],
            g.state[i],
            g.dist[i],
        )
        if stored != kept:
            return f"node {i} differs"
    return None


def _edges_differ(conn: Connection, variant_id: int, graph: Graph, ids: list[int]) -> str | None:
    rows = conn.execute(
        text(
            "SELECT parent, child, move FROM edges WHERE variant_id = :variant AND parent IN "
            f"({', '.join(map(str, ids))}) ORDER BY parent, move_order"
        ),
        {"variant": variant_id},
    ).all()
    g = graph
    stored: dict[int, list[tuple[int, str]]] = {}
    for r in rows:
        stored.setdefault(r.parent, []).append((r.child, r.move))
    for i in ids:
        edges = stored.get(i, [])
        if len(edges) != g.child_count[i]:
            return f"node {i}'s edges differ"
        if g.deferred_edges == 0 and edges != [
            (g.edge_child[e], g.edge_move[e]) for e in g.children(i)
        ]:
            return f"node {i}'s edges differ"
    return None


__all__ = ["FORMAT", "SAMPLE", "mismatch", "resume_path", "run_marks", "take", "write"]
