"""Alembic migrations of the negagraph schema (run them with ``negagraph db upgrade``)."""
