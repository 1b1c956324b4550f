"""The match archive: one zip file holding a manifest, its bound header, the inputs, the event log and the final state.

Format 3, members:
- manifest.json: format, wildhold version, scenario, seed, content digest, clock, horizon (whether the agents
  were told when the match ends), agents, start and final tick, final state hash, chain head, event count,
  the digest of the records among the inputs (a model session's spend; null without any), the archive head,
  and whatever a host adds (tool-surface hash, price table, arm identities, server settings, epilogues, the
  named cohort, a task attempt's task and player);
- header.json: every field of the manifest but its format and the archive head, as canonical JSON. The
  archive head is this header hashed ahead of the event chain's head, so a published archive head covers
  everything a score may read as well as every event, while the world's own chain (and every chain head
  recorded before the header existed) stays as it is. No member but these is read, and a format 3 archive
  holding another is refused;
- inputs.jsonl: one input per line (seq, tick, kind, agent, name, args, issuer);
- events.jsonl: one event per line, {"event": <payload JSON>, "hash": <chain hash>};
- final_state.json: the world's full state at the end (the snapshot format);
- programs/*.jsonl, only when agents saved programs: sources.jsonl (every revision's source),
  runs.jsonl (each run: revision, seed, state, counters, error, what it waits on, the call it is
  paused in and its last snapshot, base64), calls.jsonl (the transcript: each world call of each run
  and the answer the program received) and logs.jsonl (the log lines still in each ring buffer).
Format 2 bound only the core fields (CORE_FIELDS, and those of BOUND_IF_PRESENT it has), format 1 none. Both
still read, and `Archive.manifest` shows only their core fields: what a score reads of any archive is what its
format binds (the core is also what re-simulation checks). `Archive.unbound` names what was left out.
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
from wildhold.store.sqlite import Input, MatchStore, WriteFailed
from wildhold.world.events import GENESIS, link

FORMAT = 3
READABLE = frozenset({1, 2, 3})
HEADER = "header.json"
CORE_FIELDS = ("wildhold_version", "scenario", "seed", "content_digest", "clock", "agents", "start_tick", "final_tick",
               "state_hash", "chain_head", "event_count", "horizon", "records_digest")
BOUND_IF_PRESENT = ("cohort",)  # format 2: scoring fields a manifest may carry; absent, the header is as it was before them
UNHEADED = ("format", "archive_head")  # the format is the reader's to check; the archive head is computed from the header
PROGRAMS = "programs/"
PROGRAM_MEMBERS = tuple(PROGRAMS + name for name in ("sources.jsonl", "runs.jsonl", "calls.jsonl", "logs.jsonl"))
MEMBERS = frozenset({"manifest.json", HEADER, "inputs.jsonl", "events.jsonl", "final_state.json", *PROGRAM_MEMBERS})
STAMP = (1980, 1, 1, 0, 0, 0)


class ArchiveError(ValueError):
    """The archive is malformed or does not verify; `code` names which check it failed, for refusals."""

    def __init__(self, message: str, code: str = "archive_invalid"):
        super().__init__(message)
        self.code = code


def bound_fields(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The manifest fields the archive head covers, by the archive's format: all of them from format 3 on."""
    fmt = manifest.get("format", FORMAT)
    if fmt >= 3:
        return tuple(sorted(k for k in manifest if k not in UNHEADED))
    if fmt == 2:
        return (*CORE_FIELDS, *(k for k in BOUND_IF_PRESENT if k in manifest))
    return ()


def header_bytes(manifest: dict[str, Any], fmt: int = FORMAT) -> bytes:
    """The header record of a manifest written in format `fmt`: every field but the unheaded two (format 3), or
    the core fields (format 2), canonical."""
    if fmt >= 3:
        fields = {k: v for k, v in manifest.items() if k not in UNHEADED}
    else:
        fields = {k: manifest.get(k) for k in CORE_FIELDS} | {k: manifest[k] for k in BOUND_IF_PRESENT if k in manifest}
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
    try:
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
    except OSError as exc:  # a full disk: no archive rather than half of one
        tmp.unlink(missing_ok=True)
        raise WriteFailed(f"the archive {path} could not be written: {exc}") from None
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
    """A read-only view of an archive file. `manifest` holds what a score may read: the whole manifest of a
    format 3 archive; of an older one, only its core fields (`unbound` names the rest, which no score reads).
    `unbound=True` reads an older archive's every field, as its reports were first computed (the released
    goldens of old rubric versions); nothing that scores takes it."""

    def __init__(self, path: Path | str, *, unbound: bool = False):
        self.path = Path(path)
        try:
            self.zip = zipfile.ZipFile(self.path)
            raw = orjson.loads(self.zip.read("manifest.json"))
        except (OSError, zipfile.BadZipFile, KeyError, orjson.JSONDecodeError) as exc:
            raise ArchiveError(f"{self.path}: not a Wildhold archive ({exc})") from None
        if not isinstance(raw, dict) or raw.get("format") not in READABLE:
            fmt = raw.get("format") if isinstance(raw, dict) else None
            raise ArchiveError(f"{self.path}: archive format {fmt} is not one this Wildhold "
                               f"reads ({', '.join(map(str, sorted(READABLE)))})")
        self.raw_manifest: dict[str, Any] = raw
        kept = raw if raw["format"] >= 3 or unbound else {
            k: v for k, v in raw.items() if k in (*CORE_FIELDS, *BOUND_IF_PRESENT, *UNHEADED)}
        self.manifest: dict[str, Any] = dict(kept)
        self.unbound: tuple[str, ...] = tuple(sorted(set(raw) - set(kept)))

    @property
    def bound(self) -> bool:
        """Whether the manifest's fields are bound into the archive head (format 2 on: its core; format 3: all)."""
        return self.raw_manifest["format"] >= 2

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
        strange = sorted(set(self.zip.namelist()) - MEMBERS)
        if strange and self.raw_manifest["format"] >= 3:
            raise ArchiveError(f"{self.path}: it holds {', '.join(strange)}, which no Wildhold writes into an archive: "
                               "it was added after the archive was written", "archive_altered")
        for count, (payload, stored) in enumerate(self.event_records(), start=1):
            head = link(head, payload)
            if head != stored:
                raise ArchiveError(f"{self.path}: event {count} does not match its hash: the log was altered", "archive_altered")
        m = self.raw_manifest
        if count != m.get("event_count") or head != m.get("chain_head"):
            raise ArchiveError(f"{self.path}: the log ends at event {count} ({head[:12]}) but the manifest says "
                               f"{m.get('event_count')} ({str(m.get('chain_head'))[:12]})", "archive_altered")
        if self.bound:
            self._verify_header()
        return head

    def _verify_header(self) -> None:
        m = self.raw_manifest
        try:
            raw = self.zip.read(HEADER)
            header = orjson.loads(raw)
        except (KeyError, orjson.JSONDecodeError):
            raise ArchiveError(f"{self.path}: a format {m['format']} archive without its header", "header_mismatch") from None
        if not isinstance(header, dict):
            raise ArchiveError(f"{self.path}: its header is not a record of fields", "header_mismatch")
        if m["format"] >= 3:
            names = sorted((set(header) | set(m)) - set(UNHEADED))
        else:
            names = [*CORE_FIELDS, *BOUND_IF_PRESENT]
        differ = [k for k in names if header.get(k) != m.get(k)]
        if differ:
            raise ArchiveError(f"{self.path}: the manifest's {', '.join(differ)} differ from the header it was archived "
                               "with", "header_mismatch")
        if archive_head(raw, m["chain_head"]) != m.get("archive_head"):
            raise ArchiveError(f"{self.path}: the archive head does not cover its header and events", "header_mismatch")
