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


def edit_manifest(src: Path, dst: Path, edit) -> Path:
    """What a hasty forger does: edit the manifest (`edit(manifest)` changes it in place) and nothing else."""
    files = members(src)
    manifest = orjson.loads(files["manifest.json"])
    edit(manifest)
    files["manifest.json"] = orjson.dumps(manifest)
    return write(dst, files)


def forge(src: Path, dst: Path, event=None, agents=None, manifest_edit=None, inputs=None) -> Path:
    """What a careful forger does: edit events (`event(payload) -> payload`), inputs (`inputs(input) -> input`),
    the roster or any other manifest field (`manifest_edit(manifest)`, in place), then recompute every hash the
    archive carries (the chain, the manifest's head and count, the header and the archive head)."""
    files = members(src)
    manifest = orjson.loads(files["manifest.json"])
    if inputs is not None:
        files["inputs.jsonl"] = b"".join(orjson.dumps(inputs(orjson.loads(line))) + b"\n"
                                         for line in files["inputs.jsonl"].splitlines())
    if manifest_edit is not None:
        manifest_edit(manifest)
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



COMPUTED = ("format", "wildhold_version", "scenario", "seed", "content_digest", "clock", "horizon", "agents", "start_tick",
            "final_tick", "state_hash", "chain_head", "event_count", "records_digest", "archive_head")


def replayed(src: Path, dst: Path, inputs, manifest_edit=None) -> Path:
    """What a forger with Wildhold itself does: edit the inputs (`inputs(input) -> input`), play them again as a
    match, and export the archive that gives (its events, final state, roster and every hash its own), with the
    manifest's other fields carried over (`manifest_edit(manifest)` edits them first, in place)."""
    from wildhold.content import default_content
    from wildhold.service.match import Match
    from wildhold.store.sqlite import Input

    files = members(src)
    manifest = orjson.loads(files["manifest.json"])
    if manifest_edit is not None:
        manifest_edit(manifest)
    match = Match.create(manifest["scenario"], manifest["seed"], dst.with_suffix(".sqlite"), default_content(),
                         clock=manifest["clock"], horizon=manifest.get("horizon", "visible"))
    for line in files["inputs.jsonl"].splitlines():
        inp = Input(**inputs(orjson.loads(line)))
        while match.world.tick < inp.tick:
            match.step()
        match.carry(inp)
    while match.world.tick < manifest["final_tick"]:
        match.step()
    match.flush()
    path = match.export(dst, {k: v for k, v in manifest.items() if k not in COMPUTED})
    match.close(snapshot=False)
    return path
