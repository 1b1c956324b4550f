"""Durable storage: the SQLite match store and the single-file match archive."""
