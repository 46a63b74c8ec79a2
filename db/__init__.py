"""Persistence for negagraph: SQLAlchemy models, engines and sessions, migrations, the
solver's SQL store and the read-side repository (SQLite by default, or PostgreSQL)."""
