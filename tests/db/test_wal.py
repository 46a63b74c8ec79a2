"""A finished SQLite solve leaves one file: its write-ahead log is checkpointed and
truncated when the writer closes, even while other connections read the database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
