"""The store's failures: what a caller may catch by kind (a write the disk refused, a match another process holds)."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database is missing, of another version, or disagrees with itself."""


class WriteFailed(StoreError):
    """A write did not reach the database (the disk is full, or refuses writes): nothing of it was kept, the store is
    as it was before the change began and takes the next write afresh."""


class StoreLocked(StoreError):
    """Another process has the match open for writing: one writer per match."""
