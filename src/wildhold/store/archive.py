"""The match archive: one zip file holding a manifest, the inputs, the event log and the final state.

Format 1, members:
- manifest.json: format, wildhold version, scenario, seed, content digest, clock, agents,
  final tick, final state hash, chain head, event count;
- inputs.jsonl: one input per line (seq, tick, kind, agent, name, args, issuer);
- events.jsonl: one event per line, {"event": <payload JSON>, "hash": <chain hash>};
- final_state.json: the world's full state at the end (the snapshot format);
- programs/*.jsonl, only when agents saved programs: sources.jsonl (every revision's source),
  runs.jsonl (each run: revision, seed, state, counters, error, what it waits on, the call it is
  paused in and its last snapshot, base64), calls.jsonl (the transcript: each world call of each run
  and the answer the program received) and logs.jsonl (the log lines still in each ring buffer).
Anything a report says must be recomputable from this file alone.
"""

from __future__ import annotations

import base64
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

import orjson

from wildhold.store.sqlite import Input, MatchStore
from wildhold.world.events import GENESIS, link

FORMAT = 1
PROGRAMS = "programs/"


class ArchiveError(ValueError):
    """The archive is malformed or its hash chain does not verify."""


def export_archive(store: MatchStore, manifest: dict[str, Any], final_state: bytes, path: Path | str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", orjson.dumps({"format": FORMAT, **manifest}, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        z.writestr("inputs.jsonl", b"".join(orjson.dumps(asdict(i)) + b"\n" for i in store.inputs(0)))
        with z.open("events.jsonl", "w") as f:
            for _, _, _, payload, digest in store.events(0):
                f.write(b'{"event":' + bytes(payload) + b',"hash":"' + digest.encode() + b'"}\n')
        z.writestr("final_state.json", final_state)
        _write_programs(z, store)
    tmp.replace(path)
    return path


def _lines(rows) -> bytes:
    return b"".join(orjson.dumps(row) + b"\n" for row in rows)


def _write_programs(z: zipfile.ZipFile, store: MatchStore) -> None:
    sources = store.program_sources()
    if not sources:
        return
    runs = [{**run, "dump": base64.b64encode(run["dump"]).decode() if run["dump"] is not None else None}
            for run in store.program_runs()]
    z.writestr(PROGRAMS + "sources.jsonl", _lines(sources))
    z.writestr(PROGRAMS + "runs.jsonl", _lines(runs))
    with z.open(PROGRAMS + "calls.jsonl", "w") as f:
        for call in store.program_calls():
            f.write(orjson.dumps(call) + b"\n")
    z.writestr(PROGRAMS + "logs.jsonl", _lines(store.program_logs()))


class Archive:
    """A read-only view of an archive file."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            self.zip = zipfile.ZipFile(self.path)
            self.manifest = orjson.loads(self.zip.read("manifest.json"))
        except (OSError, zipfile.BadZipFile, KeyError, orjson.JSONDecodeError) as exc:
            raise ArchiveError(f"{self.path}: not a Wildhold archive ({exc})") from None
        if self.manifest.get("format") != FORMAT:
            raise ArchiveError(f"{self.path}: archive format {self.manifest.get('format')} is not {FORMAT}")

    def close(self) -> None:
        self.zip.close()

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def inputs(self) -> Iterator[Input]:
        for line in self.zip.read("inputs.jsonl").splitlines():
            yield Input(**orjson.loads(line))

    def event_records(self) -> Iterator[tuple[bytes, str]]:
        """(canonical payload bytes, stored hash) per event, in order."""
        with self.zip.open("events.jsonl") as f:
            for line in f:
                record = orjson.loads(line)
                yield orjson.dumps(record["event"], option=orjson.OPT_SORT_KEYS), record["hash"]

    def events(self) -> Iterator[dict[str, Any]]:
        with self.zip.open("events.jsonl") as f:
            for line in f:
                yield orjson.loads(line)["event"]

    def final_state(self) -> bytes:
        return self.zip.read("final_state.json")

    # ---- programs (present only when agents saved any) -----------------------------------------

    @property
    def has_programs(self) -> bool:
        return PROGRAMS + "sources.jsonl" in self.zip.namelist()

    def _program_rows(self, member: str) -> Iterator[dict[str, Any]]:
        if not self.has_programs:
            return
        with self.zip.open(PROGRAMS + member) as f:
            for line in f:
                yield orjson.loads(line)

    def program_sources(self) -> Iterator[dict[str, Any]]:
        yield from self._program_rows("sources.jsonl")

    def program_runs(self) -> Iterator[dict[str, Any]]:
        for run in self._program_rows("runs.jsonl"):
            yield {**run, "dump": base64.b64decode(run["dump"]) if run["dump"] is not None else None}

    def program_calls(self) -> Iterator[dict[str, Any]]:
        yield from self._program_rows("calls.jsonl")

    def program_logs(self) -> Iterator[dict[str, Any]]:
        yield from self._program_rows("logs.jsonl")

    def verify(self) -> str:
        """Check every event's hash link; return the chain head or raise ArchiveError at the first bad event."""
        head, count = GENESIS, 0
        for count, (payload, stored) in enumerate(self.event_records(), start=1):
            head = link(head, payload)
            if head != stored:
                raise ArchiveError(f"{self.path}: event {count} does not match its hash: the log was altered")
        if count != self.manifest["event_count"] or head != self.manifest["chain_head"]:
            raise ArchiveError(f"{self.path}: the log ends at event {count} ({head[:12]}) but the manifest says {self.manifest['event_count']} ({self.manifest['chain_head'][:12]})")
        return head
