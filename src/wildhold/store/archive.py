"""The match archive: one zip file holding a manifest, the inputs, the event log and the final state.

Format 1, members:
- manifest.json: format, wildhold version, scenario, seed, content digest, clock, agents,
  final tick, final state hash, chain head, event count;
- inputs.jsonl: one input per line (seq, tick, kind, agent, name, args, issuer);
- events.jsonl: one event per line, {"event": <payload JSON>, "hash": <chain hash>};
- final_state.json: the world's full state at the end (the snapshot format).
Anything a report says must be recomputable from this file alone.
"""

from __future__ import annotations

import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

import orjson

from wildhold.store.sqlite import Input, MatchStore
from wildhold.world.events import GENESIS, link

FORMAT = 1


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
    tmp.replace(path)
    return path


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
