"""SQLite (WAL) store of one match: its inputs, its hash-chained events, periodic snapshots, its programs.

Inputs (joins, actions, setup commands) are committed before they take effect, so anything
acknowledged survives a kill at any moment; events and snapshots are derived from inputs and
can be rebuilt, which is how a match resumes. Agent-written programs keep their sources, their
runs (with each paused program's snapshot), the transcript of every world call and their logs;
a tick's program writes commit in one transaction with the actions they submitted.
"""

from __future__ import annotations

import sqlite3
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from wildhold.store.private import private_file

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

# Added beside schema 1 on every open (older stores simply gain the empty tables).
PROGRAM_SCHEMA = """
CREATE TABLE IF NOT EXISTS program_sources (
    agent TEXT NOT NULL, name TEXT NOT NULL, revision INTEGER NOT NULL, tick INTEGER NOT NULL,
    sha256 TEXT NOT NULL, source TEXT NOT NULL, PRIMARY KEY (agent, name, revision));
CREATE TABLE IF NOT EXISTS program_runs (
    run INTEGER PRIMARY KEY, agent TEXT NOT NULL, name TEXT NOT NULL, revision INTEGER NOT NULL,
    seed INTEGER NOT NULL, state TEXT NOT NULL, started_tick INTEGER NOT NULL, ended_tick INTEGER,
    error TEXT, actions INTEGER NOT NULL, host_calls INTEGER NOT NULL, waiting_on TEXT, pending TEXT,
    seq INTEGER NOT NULL, dump BLOB);
CREATE TABLE IF NOT EXISTS program_calls (
    run INTEGER NOT NULL, seq INTEGER NOT NULL, tick INTEGER NOT NULL, call TEXT NOT NULL,
    args TEXT NOT NULL, result BLOB NOT NULL, PRIMARY KEY (run, seq));
CREATE TABLE IF NOT EXISTS program_logs (
    agent TEXT NOT NULL, name TEXT NOT NULL, seq INTEGER NOT NULL, tick INTEGER NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (agent, name, seq));
CREATE TABLE IF NOT EXISTS program_log_state (
    agent TEXT NOT NULL, name TEXT NOT NULL, next_seq INTEGER NOT NULL, dropped INTEGER NOT NULL,
    PRIMARY KEY (agent, name));
"""
RUN_COLUMNS = ("run", "agent", "name", "revision", "seed", "state", "started_tick", "ended_tick", "error",
               "actions", "host_calls", "waiting_on", "pending", "seq", "dump")
RUN_JSON = ("error", "waiting_on", "pending")


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
        self.path = private_file(Path(path))  # its -wal and -shm files take its mode
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store schema {version}, this Wildhold reads {SCHEMA_VERSION}")
        self.db.executescript(PROGRAM_SCHEMA)
        self._savepoints = 0
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

    def has_input(self, kind: str) -> bool:
        return self.db.execute("SELECT 1 FROM inputs WHERE kind = ? LIMIT 1", (kind,)).fetchone() is not None

    # ---- events -------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything written inside commits together, or not at all; transactions nest."""
        self._savepoints += 1
        name = f"sp{self._savepoints}"
        self.db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self.db.execute(f"ROLLBACK TO {name}")
            self.db.execute(f"RELEASE {name}")
            self.last_input = self.db.execute("SELECT MAX(seq) FROM inputs").fetchone()[0] or 0
            raise
        else:
            self.db.execute(f"RELEASE {name}")
        finally:
            self._savepoints -= 1

    def _batch(self, sql: str, rows: list[tuple]) -> None:
        with self.transaction():
            self.db.executemany(sql, rows)

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

    # ---- programs -----------------------------------------------------------------------------

    def add_program_source(self, agent: str, name: str, revision: int, tick: int, sha256: str, source: str) -> None:
        self.db.execute("INSERT INTO program_sources VALUES (?, ?, ?, ?, ?, ?)", (agent, name, revision, tick, sha256, source))

    def program_sources(self, with_source: bool = True) -> list[dict[str, Any]]:
        """Every saved revision (agent, name, revision, tick, sha256 and, unless asked not to, the source)."""
        cols = ("agent", "name", "revision", "tick", "sha256") + (("source",) if with_source else ())
        rows = self.db.execute(f"SELECT {', '.join(cols)} FROM program_sources ORDER BY agent, name, revision")
        return [dict(zip(cols, row)) for row in rows]

    def program_source(self, agent: str, name: str, revision: int) -> str | None:
        row = self.db.execute("SELECT source FROM program_sources WHERE agent = ? AND name = ? AND revision = ?",
                              (agent, name, revision)).fetchone()
        return row[0] if row else None

    def save_program_run(self, run: dict[str, Any]) -> None:
        """Insert or replace one run's row; `run` holds every column (JSON columns as Python values)."""
        values = [orjson.dumps(run[c]).decode() if c in RUN_JSON and run[c] is not None else run[c] for c in RUN_COLUMNS]
        self.db.execute(f"INSERT OR REPLACE INTO program_runs VALUES ({', '.join('?' * len(RUN_COLUMNS))})", values)

    def program_runs(self) -> list[dict[str, Any]]:
        out = []
        for row in self.db.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM program_runs ORDER BY run"):
            run = dict(zip(RUN_COLUMNS, row))
            for c in RUN_JSON:
                run[c] = orjson.loads(run[c]) if run[c] is not None else None
            out.append(run)
        return out

    def next_program_run(self) -> int:
        """A run number no run of this match's log has had: past every stored run and every recorded start (a
        fork's log carries its parent's starts without their runs)."""
        return (self.db.execute("SELECT MAX(run) FROM (SELECT run FROM program_runs UNION ALL SELECT "
                                "json_extract(args, '$.run') FROM inputs WHERE kind = 'program' AND name = 'start')"
                                ).fetchone()[0] or 0) + 1

    def add_program_calls(self, rows: Iterable[tuple[int, int, int, str, Any, bytes]]) -> None:
        """Transcript rows (run, seq, tick, call, args, result as the JSON the program was sent); results
        (observations, mostly) are stored compressed."""
        self.db.executemany("INSERT INTO program_calls VALUES (?, ?, ?, ?, ?, ?)",
                            [(r, q, t, c, orjson.dumps(a).decode(), zlib.compress(res, 1)) for r, q, t, c, a, res in rows])

    def program_calls(self, run: int | None = None) -> Iterator[dict[str, Any]]:
        """The transcript, in run then call order: each world call and the answer the program received."""
        where, params = ("WHERE run = ?", (run,)) if run is not None else ("", ())
        for r, q, t, c, a, res in self.db.execute(f"SELECT * FROM program_calls {where} ORDER BY run, seq", params):
            yield {"run": r, "seq": q, "tick": t, "call": c, "args": orjson.loads(a), "result": orjson.loads(zlib.decompress(res))}

    def add_program_logs(self, agent: str, name: str, lines: list[tuple[int, int, str]], keep: int,
                         next_seq: int, dropped: int) -> None:
        """Append (seq, tick, text) lines to a program's log, keep only the last `keep`, note the counters."""
        self.db.executemany("INSERT INTO program_logs VALUES (?, ?, ?, ?, ?)", [(agent, name, *line) for line in lines])
        self.db.execute("DELETE FROM program_logs WHERE agent = ? AND name = ? AND seq < ?", (agent, name, next_seq - keep))
        self.db.execute("INSERT OR REPLACE INTO program_log_state VALUES (?, ?, ?, ?)", (agent, name, next_seq, dropped))

    def program_logs(self) -> Iterator[dict[str, Any]]:
        for agent, name, seq, tick, text in self.db.execute("SELECT * FROM program_logs ORDER BY agent, name, seq"):
            yield {"agent": agent, "name": name, "seq": seq, "tick": tick, "text": text}

    def program_log_state(self) -> dict[tuple[str, str], tuple[int, int]]:
        return {(a, n): (nxt, dropped) for a, n, nxt, dropped in self.db.execute("SELECT * FROM program_log_state")}
