"""The match archive: one zip file holding a manifest, its bound header, the inputs, the event log and the final state.

Format 2, members:
- manifest.json: format, wildhold version, scenario, seed, content digest, clock, horizon (whether the agents
  were told when the match ends), agents, start and final tick, final state hash, chain head, event count,
  the digest of the records among the inputs (a model session's spend; null without any), the archive head,
  and whatever a host adds (tool-surface hash, price table, server settings, epilogues, the named cohort);
- header.json: the manifest's scoring fields (HEADER_FIELDS, and those of BOUND_IF_PRESENT it has) as canonical
  JSON. The archive head is
  this header hashed ahead of the event chain's head, so a published archive head covers the roster,
  the seed, the ticks, the content and the records as well as every event, while the world's own chain (and
  every chain head recorded before the header existed) stays as it is. Archives written before the horizon and
  the records were bound have neither in their header, and read as they were written;
- inputs.jsonl: one input per line (seq, tick, kind, agent, name, args, issuer);
- events.jsonl: one event per line, {"event": <payload JSON>, "hash": <chain hash>};
- final_state.json: the world's full state at the end (the snapshot format);
- programs/*.jsonl, only when agents saved programs: sources.jsonl (every revision's source),
  runs.jsonl (each run: revision, seed, state, counters, error, what it waits on, the call it is
  paused in and its last snapshot, base64), calls.jsonl (the transcript: each world call of each run
  and the answer the program received) and logs.jsonl (the log lines still in each ring buffer).
Format 1 is format 2 without the header and the archive head: it still reads, as unbound.
Members carry a fixed timestamp, so the same match gives the same archive bytes.
Anything a report says must be recomputable from this file alone.
"""

from __future__ import annotations

import base64
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

import orjson

from wildhold.store.private import opener, private_folder
from wildhold.store.sqlite import Input, MatchStore
from wildhold.world.events import GENESIS, link

FORMAT = 2
READABLE = frozenset({1, 2})
HEADER = "header.json"
HEADER_FIELDS = ("wildhold_version", "scenario", "seed", "content_digest", "clock", "agents", "start_tick", "final_tick",
                 "state_hash", "chain_head", "event_count", "horizon", "records_digest")
BOUND_IF_PRESENT = ("cohort",)  # scoring fields a manifest may carry; absent, the header is as it was before them
PROGRAMS = "programs/"
STAMP = (1980, 1, 1, 0, 0, 0)


class ArchiveError(ValueError):
    """The archive is malformed or does not verify; `code` names which check it failed, for refusals."""

    def __init__(self, message: str, code: str = "archive_invalid"):
        super().__init__(message)
        self.code = code


def header_bytes(manifest: dict[str, Any]) -> bytes:
    """The header record of a manifest: its scoring fields, canonical."""
    fields = {k: manifest.get(k) for k in HEADER_FIELDS} | {k: manifest[k] for k in BOUND_IF_PRESENT if k in manifest}
    return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)


def archive_head(header: bytes, chain_head: str) -> str:
    """The head an archive is known by: the header record hashed first, the event chain's head after it."""
    return link(link(GENESIS, header), chain_head.encode())


def _member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=STAMP)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o600 << 16
    return info


def export_archive(store: MatchStore, manifest: dict[str, Any], final_state: bytes, path: Path | str) -> Path:
    path = Path(path)
    private_folder(path.parent)
    tmp = path.with_suffix(path.suffix + ".tmp")
    header = header_bytes(manifest)
    manifest = {"format": FORMAT, **manifest, "archive_head": archive_head(header, manifest["chain_head"])}
    with open(tmp, "wb", opener=opener) as raw, zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(_member("manifest.json"), orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        z.writestr(_member(HEADER), header)
        z.writestr(_member("inputs.jsonl"), b"".join(orjson.dumps(asdict(i)) + b"\n" for i in store.inputs(0)))
        with z.open(_member("events.jsonl"), "w") as f:
            for _, _, _, payload, digest in store.events(0):
                f.write(b'{"event":' + bytes(payload) + b',"hash":"' + digest.encode() + b'"}\n')
        z.writestr(_member("final_state.json"), final_state)
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
    z.writestr(_member(PROGRAMS + "sources.jsonl"), _lines(sources))
    z.writestr(_member(PROGRAMS + "runs.jsonl"), _lines(runs))
    with z.open(_member(PROGRAMS + "calls.jsonl"), "w") as f:
        for call in store.program_calls():
            f.write(orjson.dumps(call) + b"\n")
    z.writestr(_member(PROGRAMS + "logs.jsonl"), _lines(store.program_logs()))


class Archive:
    """A read-only view of an archive file."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            self.zip = zipfile.ZipFile(self.path)
            self.manifest = orjson.loads(self.zip.read("manifest.json"))
        except (OSError, zipfile.BadZipFile, KeyError, orjson.JSONDecodeError) as exc:
            raise ArchiveError(f"{self.path}: not a Wildhold archive ({exc})") from None
        if self.manifest.get("format") not in READABLE:
            raise ArchiveError(f"{self.path}: archive format {self.manifest.get('format')} is not one this Wildhold "
                               f"reads ({', '.join(map(str, sorted(READABLE)))})")

    @property
    def bound(self) -> bool:
        """Whether the manifest's scoring fields are bound into the archive head (format 2 on)."""
        return self.manifest["format"] >= 2

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
        """Check every event's hash link and, when bound, that the header says what the manifest says and the
        archive head covers both; return the chain head or raise ArchiveError at the first fault."""
        head, count = GENESIS, 0
        for count, (payload, stored) in enumerate(self.event_records(), start=1):
            head = link(head, payload)
            if head != stored:
                raise ArchiveError(f"{self.path}: event {count} does not match its hash: the log was altered", "archive_altered")
        if count != self.manifest["event_count"] or head != self.manifest["chain_head"]:
            raise ArchiveError(f"{self.path}: the log ends at event {count} ({head[:12]}) but the manifest says "
                               f"{self.manifest['event_count']} ({self.manifest['chain_head'][:12]})", "archive_altered")
        if self.bound:
            self._verify_header()
        return head

    def _verify_header(self) -> None:
        try:
            raw = self.zip.read(HEADER)
            header = orjson.loads(raw)
        except (KeyError, orjson.JSONDecodeError):
            raise ArchiveError(f"{self.path}: a format {self.manifest['format']} archive without its header", "header_mismatch") from None
        differ = [k for k in (*HEADER_FIELDS, *BOUND_IF_PRESENT) if header.get(k) != self.manifest.get(k)]
        if differ:
            raise ArchiveError(f"{self.path}: the manifest's {', '.join(differ)} differ from the header it was archived with",
                               "header_mismatch")
        if archive_head(raw, self.manifest["chain_head"]) != self.manifest.get("archive_head"):
            raise ArchiveError(f"{self.path}: the archive head does not cover its header and events", "header_mismatch")
