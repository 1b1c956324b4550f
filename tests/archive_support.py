"""Archives edited as a forger would edit them, for the tests of what scoring and replay refuse."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson

from wildhold.store.archive import HEADER, archive_head, header_bytes
from wildhold.world.events import GENESIS, link


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def write(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def forge(src: Path, dst: Path, event=None, agents=None) -> Path:
    """What a careful forger does: edit events (`event(payload) -> payload`) or the roster, then recompute every
    hash the archive carries (the chain, the manifest's head and count, the header and the archive head)."""
    files = members(src)
    manifest = orjson.loads(files["manifest.json"])
    if event is not None:
        head, lines = GENESIS, []
        for line in files["events.jsonl"].splitlines():
            payload = event(orjson.loads(line)["event"])
            head = link(head, orjson.dumps(payload, option=orjson.OPT_SORT_KEYS))
            lines.append(orjson.dumps({"event": payload, "hash": head}))
        files["events.jsonl"] = b"\n".join(lines) + b"\n"
        manifest["chain_head"] = head
    if agents is not None:
        manifest["agents"] = agents(manifest["agents"])
    if HEADER in files:
        files[HEADER] = header_bytes(manifest)
        manifest["archive_head"] = archive_head(files[HEADER], manifest["chain_head"])
    files["manifest.json"] = orjson.dumps(manifest)
    return write(dst, files)
