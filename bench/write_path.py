"""SQLite's write path alone, as a large evicting solve drives it: rows shaped as ``nodes``
(random 5-byte keys into the unique ``(variant_id, key)`` index) and ``edges``, committed
in batches into a fresh file, with the rate printed as the file grows.

``python -m bench.write_path PATH [--nodes N] [--commit N] [--cache-kib N]
[--checkpoint PAGES] [--sorted] [--page-size BYTES] [--key-ranges IDS]`` — the figures
in docs/performance.md ("Eviction") came from it, one variant at a time: the defaults are
the solver's settings before session 16 (64 MiB page cache, a checkpoint every 16,384
pages, 150,000 nodes a commit); ``--key-ranges`` replaces the one key index by a partial
unique index for each range of that many ids, and ends with the cost of a lookup that
asks every range. It measures SQLite, not negagraph: it is how the write path's options
were weighed before any went into the solver.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import time

NODES = """CREATE TABLE nodes (variant_id INTEGER NOT NULL, id INTEGER NOT NULL, low BIGINT,
 high BIGINT, depth_low INTEGER, depth_high INTEGER, dist INTEGER NOT NULL,
 state SMALLINT NOT NULL, low_final BOOLEAN NOT NULL, high_final BOOLEAN NOT NULL,
 "key" BLOB NOT NULL, notation TEXT NOT NULL, expanded_in INTEGER,
 PRIMARY KEY (variant_id, id){unique}) WITHOUT ROWID"""
EDGES = """CREATE TABLE edges (variant_id INTEGER NOT NULL, parent INTEGER NOT NULL,
 move_order SMALLINT NOT NULL, child INTEGER NOT NULL, move TEXT NOT NULL,
 PRIMARY KEY (variant_id, parent, move_order)) WITHOUT ROWID"""
REPORT_EVERY = 20
"""Commits between two lines of output."""


def run(args: argparse.Namespace) -> None:
    db = _open(args)
    started = time.perf_counter()
    made, probes = _write(db, args)
    print(f"done: {time.perf_counter() - started:.1f} s, {os.path.getsize(args.path):,} bytes")
    _probe(db, args.key_ranges, made, probes[:2000])


def _open(args: argparse.Namespace) -> sqlite3.Connection:
    """A new file at *args.path* with the tables and the pragmas asked for."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(args.path + suffix):
            os.remove(args.path + suffix)
    db = sqlite3.connect(args.path, isolation_level=None)
    db.execute(f"PRAGMA page_size = {args.page_size}")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(f"PRAGMA cache_size = -{args.cache_kib}")
    db.execute(f"PRAGMA wal_autocheckpoint = {args.checkpoint}")
    db.execute(NODES.format(unique="" if args.key_ranges else ', UNIQUE (variant_id, "key")'))
    db.execute(EDGES)
    return db


def _write(db: sqlite3.Connection, args: argparse.Namespace) -> tuple[int, list[bytes]]:
    """Commit *args.nodes* node rows (and as many edges) *args.commit* at a time, with the
    key indexes of *args.key_ranges* ids each made as ids reach them; the number of
    those indexes and a key of every 1,000 written (to look up)."""
    span = args.key_ranges
    rng = random.Random(1)
    started = last = time.perf_counter()
    made, nid, probes = 0, 0, []
    while nid < args.nodes:
        while span and made * span <= nid + args.commit:
            db.execute(
                f'CREATE UNIQUE INDEX nodes_key_{made} ON nodes (variant_id, "key") '
                f"WHERE id >= {made * span} AND id < {(made + 1) * span}"
            )
            made += 1
        rows = []
        for i in range(args.commit):
            key = rng.getrandbits(35).to_bytes(5, "big")
            rows.append((1, nid + i, -1, 1, None, None, 7, 1, 0, 0, key, "x" * 35, None))
            if i % 1000 == 0:
                probes.append(key)
        if args.sorted:
            rows.sort(key=lambda r: r[10])
        edges = [(1, nid + i // 2, i % 2, nid + i, "a1") for i in range(args.commit)]
        db.execute("BEGIN IMMEDIATE")
        # (random keys repeat now and then: those rows are skipped)
        db.executemany("INSERT OR IGNORE INTO nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        db.executemany("INSERT INTO edges VALUES (?,?,?,?,?)", edges)
        db.execute("COMMIT")
        nid += args.commit
        if (nid // args.commit) % REPORT_EVERY == 0:
            now = time.perf_counter()
            rate = REPORT_EVERY * args.commit / (now - last)
            print(f"{nid / 1e6:6.1f} M nodes  {rate:9,.0f} rows/s  {now - started:7.1f} s")
            last = now
    return made, probes


def _probe(db: sqlite3.Connection, span: int, made: int, probes: list[bytes]) -> None:
    """Time lookups of *probes* by key (through the *made* partial indexes of *span* ids
    each, or the one unique index)."""
    if span:
        where = " UNION ALL ".join(
            f'SELECT id FROM nodes WHERE variant_id = 1 AND "key" = ?1 '
            f"AND id >= {n * span} AND id < {(n + 1) * span}"
            for n in range(made)
        )
    else:
        where = 'SELECT id FROM nodes WHERE variant_id = 1 AND "key" = ?1'
    t = time.perf_counter()
    found = sum(1 for key in probes if db.execute(where, (key,)).fetchone() is not None)
    each = (time.perf_counter() - t) / max(1, len(probes)) * 1e6
    print(f"lookups: {found} of {len(probes)} stored keys found, {each:.0f} us each")


def main() -> None:
    parser = argparse.ArgumentParser(description="SQLite's write path alone (bench/write_path.py)")
    parser.add_argument("path", help="the SQLite file to write (replaced)")
    parser.add_argument("--nodes", type=float, default=30e6)
    parser.add_argument("--commit", type=int, default=150_000, help="nodes a commit")
    parser.add_argument("--cache-kib", type=int, default=65_536)
    parser.add_argument("--checkpoint", type=int, default=16_384, help="WAL pages")
    parser.add_argument("--sorted", action="store_true", help="each commit's rows by key")
    parser.add_argument("--page-size", type=int, default=4096)
    parser.add_argument("--key-ranges", type=int, default=0, help="ids a key index covers")
    args = parser.parse_args()
    args.nodes = int(args.nodes)
    run(args)


if __name__ == "__main__":
    main()
