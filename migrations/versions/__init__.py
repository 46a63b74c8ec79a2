"""Alembic revision scripts, one per schema version."""
