"""SQLite (WAL) store of one match: its inputs, its hash-chained events, periodic snapshots, its programs.

Inputs (joins, actions, setup commands) are committed before they take effect, so anything
acknowledged survives a kill at any moment; events and snapshots are derived from inputs and
can be rebuilt, which is how a match resumes. Agent-written programs keep their sources, their
runs (with each paused program's snapshot), the transcript of every world call and their logs;
a tick's program writes commit in one transaction with the actions they submitted. One process
writes a store (`wildhold.store.lock`); a write the disk refuses raises `WriteFailed` and leaves no
transaction open, so the next write starts afresh. A row is replaced only where a later value
supersedes it (meta, snapshots, a program run's record); a duplicate event or input is an error.
"""

from __future__ import annotations

import sqlite3
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from wildhold.store.errors import StoreError, WriteFailed
from wildhold.store.lock import WriterLock
from wildhold.store.private import private_file
from wildhold.world.events import GENESIS, link

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


def _upsert(table: str, columns: tuple[str, ...], key: tuple[str, ...]) -> str:
    """An insert whose row replaces the one under the same key: for values a later one supersedes."""
    rest = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {rest}")


SET_META = _upsert("meta", ("key", "value"), ("key",))
SAVE_SNAPSHOT = _upsert("snapshots", ("tick", "input_seq", "event_seq", "state"), ("tick",))
SAVE_RUN = _upsert("program_runs", RUN_COLUMNS, ("run",))
SAVE_LOG_STATE = _upsert("program_log_state", ("agent", "name", "next_seq", "dropped"), ("agent", "name"))
SIDE_FILES = ("", "-wal", "-shm")  # the database and the files SQLite keeps beside it


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
    """One match's database, open for writing by this process only (`StoreLocked` otherwise). `replace` starts it
    afresh, whatever it held (the lock is taken first, so a match another process writes is never removed)."""

    def __init__(self, path: Path | str, replace: bool = False):
        path = Path(path)
        self.lock = WriterLock(path)
        self.db: sqlite3.Connection | None = None
        try:
            if replace:
                for suffix in SIDE_FILES:
                    path.with_name(path.name + suffix).unlink(missing_ok=True)
            self.path = private_file(path)  # its -wal and -shm files take its mode
            self.db = self._connect()
            self._savepoints = 0
            self._doomed: WriteFailed | None = None  # a write failed inside the open transaction: none of it may commit
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                self._execute(SCHEMA, script=True)
                self._execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise StoreError(f"{self.path}: store schema {version}, this Wildhold reads {SCHEMA_VERSION}")
            self._execute(PROGRAM_SCHEMA, script=True)
            self.last_input = self._max_input()
        except BaseException:
            self.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.OperationalError as exc:
            db.close()
            raise WriteFailed(f"the match store {self.path} cannot be opened for writing: {exc}") from None
        return db

    def close(self) -> None:
        try:
            if self.db is not None:
                self.db.close()
        finally:
            self.lock.release()

    def _max_input(self) -> int:
        return self.db.execute("SELECT MAX(seq) FROM inputs").fetchone()[0] or 0

    # ---- writing ------------------------------------------------------------------------------

    def _execute(self, sql: str, params: Any = (), many: bool = False, script: bool = False) -> None:
        """Every write goes through here: one the disk refuses raises `WriteFailed`, and leaves no transaction open
        (SQLite may have rolled it back already, or kept it open after a failed commit)."""
        try:
            if script:
                self.db.executescript(sql)
            elif many:
                self.db.executemany(sql, params)
            else:
                self.db.execute(sql, params)
        except sqlite3.OperationalError as exc:
            failed = WriteFailed(f"{self.path.name} could not be written: {exc}")
            if self._savepoints:
                self._doomed = self._doomed or failed
            else:
                self._rollback()
            raise failed from None
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"{self.path}: {exc}: the store already holds that record, which only a second "
                             "process writing the same match would write") from None

    def _rollback(self) -> None:
        """Nothing of the open transaction is kept; a connection that cannot roll back is opened again, which does."""
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        if self.db.in_transaction:
            self.db.close()
            self.db = self._connect()
        self.last_input = self._max_input()

    # ---- meta ---------------------------------------------------------------------------------

    def set_meta(self, values: dict[str, Any]) -> None:
        self._batch(SET_META, [(k, orjson.dumps(v).decode()) for k, v in values.items()])

    def meta(self) -> dict[str, Any]:
        return {k: orjson.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    # ---- inputs -------------------------------------------------------------------------------

    def record_input(self, tick: int, kind: str, agent: str | None, name: str, args: dict[str, Any], issuer: str) -> int:
        """Write one input; once it is committed (at once, or with the transaction it is part of), the input is
        acknowledged and survives a crash."""
        seq = self.last_input + 1
        self._execute("INSERT INTO inputs VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (seq, tick, kind, agent, name, orjson.dumps(args).decode(), issuer))
        self.last_input = seq
        return seq

    def inputs(self, after: int = 0) -> Iterator[Input]:
        for seq, tick, kind, agent, name, args, issuer in self.db.execute(
            "SELECT * FROM inputs WHERE seq > ? ORDER BY seq", (after,)
        ):
            yield Input(seq, tick, kind, agent, name, orjson.loads(args), issuer)

    def program_start_args(self) -> dict[int, dict[str, Any]]:
        """The start arguments of every program run started with some, by run: read from the recorded starts."""
        rows = self.db.execute("SELECT args FROM inputs WHERE kind = 'program' AND name = 'start'")
        return {args["run"]: args["args"] for args in map(orjson.loads, (r[0] for r in rows)) if args.get("args")}

    def has_input(self, kind: str) -> bool:
        return self.db.execute("SELECT 1 FROM inputs WHERE kind = ? LIMIT 1", (kind,)).fetchone() is not None

    # ---- events -------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything written inside commits together, or not at all; transactions nest. A write that fails rolls the
        whole outermost transaction back, even one an inner part caught, and raises `WriteFailed` there."""
        depth = self._savepoints
        name = f"sp{depth + 1}"
        self._execute(f"SAVEPOINT {name}")
        self._savepoints += 1
        try:
            yield
            if depth == 0 and self._doomed is not None:
                raise self._doomed
            self._execute(f"RELEASE {name}")
        except BaseException:
            if depth == 0:
                self._savepoints = 0
                self._rollback()
            else:
                self._undo(name)
            raise
        finally:
            self._savepoints = depth
            if depth == 0:
                self._doomed = None

    def _undo(self, name: str) -> None:
        """An inner transaction's writes are undone; when they cannot be (SQLite rolled everything back), the outermost
        transaction is doomed."""
        try:
            self.db.execute(f"ROLLBACK TO {name}")
            self.db.execute(f"RELEASE {name}")
        except sqlite3.Error as exc:
            self._doomed = self._doomed or WriteFailed(f"{self.path.name} could not be written: {exc}")
        self.last_input = self._max_input()

    def _batch(self, sql: str, rows: list[tuple]) -> None:
        with self.transaction():
            self._execute(sql, rows, many=True)

    def append_events(self, records: list[tuple[int, int, str, bytes, str]]) -> None:
        """New events only: an event already stored under the same number is an error, never replaced."""
        if records:
            self._batch("INSERT INTO events VALUES (?, ?, ?, ?, ?)", records)

    def verify_chain(self) -> tuple[int, str]:
        """Every stored event, numbered from 1 without a gap and linked to the one before: (count, head). A damaged log
        raises `StoreError` naming its first bad event."""
        head, count = GENESIS, 0
        for seq, payload, digest in self.db.execute("SELECT seq, payload, hash FROM events ORDER BY seq"):
            count += 1
            if seq != count:
                raise StoreError(f"{self.path}: the stored log is damaged: event {count} is missing (the next is {seq}); "
                                 "it cannot be resumed")
            head = link(head, payload)
            if head != digest:
                raise StoreError(f"{self.path}: the stored log is damaged: event {seq} does not match its hash (two "
                                 "processes wrote this match, or the file was edited); it cannot be resumed")
        return count, head

    def event_hash(self, seq: int) -> str | None:
        row = self.db.execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
        return row[0] if row else None

    def event_hashes(self, after: int) -> dict[int, str]:
        return dict(self.db.execute("SELECT seq, hash FROM events WHERE seq > ?", (after,)))

    def events(self, after: int = 0) -> Iterator[tuple[int, int, str, bytes, str]]:
        yield from self.db.execute("SELECT seq, tick, kind, payload, hash FROM events WHERE seq > ? ORDER BY seq", (after,))

    def last_event_tick(self) -> int | None:
        return self.db.execute("SELECT MAX(tick) FROM events").fetchone()[0]

    def truncate_events(self, after: int) -> None:
        self._execute("DELETE FROM events WHERE seq > ?", (after,))

    # ---- snapshots ----------------------------------------------------------------------------

    def save_snapshot(self, tick: int, input_seq: int, event_seq: int, state: bytes) -> None:
        """A later snapshot at the same tick (more inputs taken in it) supersedes the earlier one."""
        self._execute(SAVE_SNAPSHOT, (tick, input_seq, event_seq, state))

    def probe(self) -> None:
        """Write the latest snapshot again as it is: a write of a snapshot's size that changes nothing, which raises
        `WriteFailed` while the disk refuses writes (a cheap test before taking a match up again)."""
        with self.transaction():
            self._execute("UPDATE snapshots SET tick = tick WHERE tick = (SELECT MAX(tick) FROM snapshots)")  # rewrites the row

    def latest_snapshot(self) -> tuple[int, int, int, bytes] | None:
        return self.db.execute("SELECT tick, input_seq, event_seq, state FROM snapshots ORDER BY tick DESC LIMIT 1").fetchone()

    # ---- programs -----------------------------------------------------------------------------

    def add_program_source(self, agent: str, name: str, revision: int, tick: int, sha256: str, source: str) -> None:
        self._execute("INSERT INTO program_sources VALUES (?, ?, ?, ?, ?, ?)", (agent, name, revision, tick, sha256, source))

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
        """Write one run's row, replacing its previous state; `run` holds every column (JSON columns as Python values)."""
        values = [orjson.dumps(run[c]).decode() if c in RUN_JSON and run[c] is not None else run[c] for c in RUN_COLUMNS]
        self._execute(SAVE_RUN, values)

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
        self._execute("INSERT INTO program_calls VALUES (?, ?, ?, ?, ?, ?)",
                      [(r, q, t, c, orjson.dumps(a).decode(), zlib.compress(res, 1)) for r, q, t, c, a, res in rows], many=True)

    def program_calls(self, run: int | None = None) -> Iterator[dict[str, Any]]:
        """The transcript, in run then call order: each world call and the answer the program received."""
        where, params = ("WHERE run = ?", (run,)) if run is not None else ("", ())
        for r, q, t, c, a, res in self.db.execute(f"SELECT * FROM program_calls {where} ORDER BY run, seq", params):
            yield {"run": r, "seq": q, "tick": t, "call": c, "args": orjson.loads(a), "result": orjson.loads(zlib.decompress(res))}

    def add_program_logs(self, agent: str, name: str, lines: list[tuple[int, int, str]], keep: int,
                         next_seq: int, dropped: int) -> None:
        """Append (seq, tick, text) lines to a program's log, keep only the last `keep`, note the counters."""
        self._execute("INSERT INTO program_logs VALUES (?, ?, ?, ?, ?)", [(agent, name, *line) for line in lines], many=True)
        self._execute("DELETE FROM program_logs WHERE agent = ? AND name = ? AND seq < ?", (agent, name, next_seq - keep))
        self._execute(SAVE_LOG_STATE, (agent, name, next_seq, dropped))

    def program_logs(self) -> Iterator[dict[str, Any]]:
        for agent, name, seq, tick, text in self.db.execute("SELECT * FROM program_logs ORDER BY agent, name, seq"):
            yield {"agent": agent, "name": name, "seq": seq, "tick": tick, "text": text}

    def program_log_state(self) -> dict[tuple[str, str], tuple[int, int]]:
        return {(a, n): (nxt, dropped) for a, n, nxt, dropped in self.db.execute("SELECT * FROM program_log_state")}
