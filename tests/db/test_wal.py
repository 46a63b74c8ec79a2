"""A finished SQLite solve leaves one file: its write-ahead log is checkpointed and
truncated when the writer closes, even while other connections read the database."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from sqlalchemy import text

from db.session import make_engine
from tests.db.test_solve_cli import run


def test_a_finished_solve_truncates_its_write_ahead_log(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    url = f"sqlite:///{path}"
    code, _, err = run("db", "upgrade", "--db", url)
    assert code == 0, err
    reader = sqlite3.connect(path)  # a reader that stays connected (like `serve`)
    try:
        assert reader.execute("SELECT count(*) FROM nodes").fetchone() == (0,)
        code, _, err = run(
            "solve", "connect-four", "-p", "width=4", "-p", "height=4", "--full", "--db", url
        )
        assert code == 0, err
        wal = path.with_name(path.name + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0
        # the database file alone holds everything
        copy = tmp_path / "copy.db"
        copy.write_bytes(path.read_bytes())
        nodes = sqlite3.connect(copy).execute("SELECT count(*) FROM nodes").fetchone()[0]
        assert nodes == reader.execute("SELECT count(*) FROM nodes").fetchone()[0] > 100_000
    finally:
        reader.close()


def test_a_new_connection_leaves_the_others_locked(tmp_path: Path) -> None:
    """Opening a second connection to a file the process already has open must not drop
    the first one's locks. POSIX drops every lock a process holds on a file when it
    closes any descriptor of it (https://sqlite.org/howtocorrupt.html, 2.2); had the
    file's header been read again for the second connection, another process closing
    its own connection would think itself the last, check the write-ahead log into the
    database and delete it under the first connection (readers elsewhere then saw
    "database disk image is malformed" while a solve wrote)."""
    path = tmp_path / "w.db"
    engine = make_engine(f"sqlite:///{path}")
    wal = path.with_name(path.name + "-wal")
    with engine.connect() as first:
        with first.begin():
            first.execute(text("CREATE TABLE t (k INTEGER)"))
            first.execute(text("INSERT INTO t VALUES (1)"))
        reading = first.begin()  # a read transaction, as a solve's lookups hold
        assert first.execute(text("SELECT count(*) FROM t")).scalar() == 1
        assert wal.stat().st_size > 0
        with engine.connect() as second:  # a new connection: the file is looked at again?
            assert second.execute(text("SELECT count(*) FROM t")).scalar() == 1
            other = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            other += "c.execute('SELECT count(*) FROM t').fetchall(); c.close()"
            subprocess.run([sys.executable, "-c", other, str(path)], check=True, timeout=120)
            # the other process was not the last: the log is still there, and still read
            assert wal.exists() and wal.stat().st_size > 0
            assert second.execute(text("SELECT count(*) FROM t")).scalar() == 1
        reading.rollback()
    engine.dispose()
