"""The SQLite backend (:mod:`db.backends.sqlite.backend`) and what only SQLite has: rows
bound in C (:mod:`~db.backends.sqlite.bulk`), columnar reads
(:mod:`~db.backends.sqlite.load`), write-ahead log checkpoints
(:mod:`~db.backends.sqlite.wal`), a key index per variant
(:mod:`~db.backends.sqlite.keyindex`) and resume files (:mod:`~db.backends.sqlite.resume`).
"""
