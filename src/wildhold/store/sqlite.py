"""SQLite (WAL) store of one match: its inputs, its hash-chained events, periodic snapshots.

Inputs (joins, actions, setup commands) are committed before they take effect, so anything
acknowledged survives a kill at any moment; events and snapshots are derived from inputs and
can be rebuilt, which is how a match resumes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import orjson

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inputs (
    seq INTEGER PRIMARY KEY, tick INTEGER NOT NULL, kind TEXT NOT NULL,
    agent TEXT, name TEXT NOT NULL, args TEXT NOT NULL, issuer TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY, tick INTEGER NOT NULL, kind TEXT NOT NULL,
    payload BLOB NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
    tick INTEGER PRIMARY KEY, input_seq INTEGER NOT NULL, event_seq INTEGER NOT NULL, state BLOB NOT NULL);
"""


class StoreError(RuntimeError):
    """The database is missing, of another version, or disagrees with itself."""


@dataclass(frozen=True, slots=True)
class Input:
    """One thing that entered the world from outside: a join, an action, a setup command, the end."""

    seq: int
    tick: int
    kind: str
    agent: str | None
    name: str
    args: dict[str, Any]
    issuer: str


class MatchStore:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store schema {version}, this Wildhold reads {SCHEMA_VERSION}")
        row = self.db.execute("SELECT MAX(seq) FROM inputs").fetchone()
        self.last_input = row[0] or 0

    def close(self) -> None:
        self.db.close()

    # ---- meta ---------------------------------------------------------------------------------

    def set_meta(self, values: dict[str, Any]) -> None:
        self._batch("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, orjson.dumps(v).decode()) for k, v in values.items()])

    def meta(self) -> dict[str, Any]:
        return {k: orjson.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    # ---- inputs -------------------------------------------------------------------------------

    def record_input(self, tick: int, kind: str, agent: str | None, name: str, args: dict[str, Any], issuer: str) -> int:
        """Commit one input; once this returns, the input is acknowledged and survives a crash."""
        self.last_input += 1
        self.db.execute(
            "INSERT INTO inputs VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self.last_input, tick, kind, agent, name, orjson.dumps(args).decode(), issuer),
        )
        return self.last_input

    def inputs(self, after: int = 0) -> Iterator[Input]:
        for seq, tick, kind, agent, name, args, issuer in self.db.execute(
            "SELECT * FROM inputs WHERE seq > ? ORDER BY seq", (after,)
        ):
            yield Input(seq, tick, kind, agent, name, orjson.loads(args), issuer)

    # ---- events -------------------------------------------------------------------------------

    def _batch(self, sql: str, rows: list[tuple]) -> None:
        self.db.execute("BEGIN")
        try:
            self.db.executemany(sql, rows)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def append_events(self, records: list[tuple[int, int, str, bytes, str]]) -> None:
        if records:
            self._batch("INSERT OR REPLACE INTO events VALUES (?, ?, ?, ?, ?)", records)

    def event_hashes(self, after: int) -> dict[int, str]:
        return dict(self.db.execute("SELECT seq, hash FROM events WHERE seq > ?", (after,)))

    def events(self, after: int = 0) -> Iterator[tuple[int, int, str, bytes, str]]:
        yield from self.db.execute("SELECT seq, tick, kind, payload, hash FROM events WHERE seq > ? ORDER BY seq", (after,))

    def last_event_tick(self) -> int | None:
        return self.db.execute("SELECT MAX(tick) FROM events").fetchone()[0]

    def truncate_events(self, after: int) -> None:
        self.db.execute("DELETE FROM events WHERE seq > ?", (after,))

    # ---- snapshots ----------------------------------------------------------------------------

    def save_snapshot(self, tick: int, input_seq: int, event_seq: int, state: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?)", (tick, input_seq, event_seq, state))

    def latest_snapshot(self) -> tuple[int, int, int, bytes] | None:
        return self.db.execute("SELECT tick, input_seq, event_seq, state FROM snapshots ORDER BY tick DESC LIMIT 1").fetchone()
