"""Whether an archive follows from its own inputs: the check every score stands on.

An archive is scored only when its log and bound header verify, it was played under this content, and
re-simulating its seed and inputs gives its events, its final state and its roster, with every program run
re-simulating from its transcript. The chain is unkeyed, so what makes a forgery fail is the re-simulation:
an edited event no longer follows from the inputs, an edited roster no longer matches the joins, and an edited
record (a session's spend, which replay skips) no longer has the digest the header binds. A verdict is
kept in a cache folder by the archive's digest, so scoring the same file again costs one hash of it.
Archives of format 1 have no header; they re-simulate all the same and are verified as unbound.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import orjson

from wildhold import __version__
from wildhold.content import Content, default_content
from wildhold.programs.replay import RunCheck, check_archive
from wildhold.service.match import records_digest, replay, roster
from wildhold.store.archive import Archive, ArchiveError
from wildhold.store.private import private_folder, write_private
from wildhold.store.sqlite import StoreError
from wildhold.world.serialize import dumps, state_hash
from wildhold.world.world import World

TRUSTED_NOTE = "scored with --trust: not verified by re-simulation"


class Unverified(ArchiveError):
    """An archive refused for scoring: one sentence, and the code of the check it failed."""


@dataclass(frozen=True)
class Check:
    """One comparison between what the archive says and what its re-simulation gives."""

    name: str
    code: str
    archived: str
    replayed: str

    @property
    def same(self) -> bool:
        return self.archived == self.replayed


@dataclass(frozen=True)
class Resimulation:
    world: World
    roster: list[dict[str, Any]]
    checks: list[Check]
    runs: list[RunCheck]


@dataclass(frozen=True)
class Verdict:
    """What a score may say about its archive: verified (bound or not) or trusted unchecked."""

    status: str
    archive_sha256: str
    bound: bool
    archive_head: str | None
    cached: bool = False

    def stamp(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "archive_sha256": self.archive_sha256}
        if self.status == "trusted":
            return {**out, "note": TRUSTED_NOTE}
        return {**out, "bound": self.bound, "archive_head": self.archive_head}


def check_content(manifest: dict[str, Any], content: Content, where: Path) -> None:
    """Refuse an archive played under other content files, naming both digests."""
    played = manifest.get("content_digest") or "none"
    if played != content.digest:
        raise Unverified(f"{where.name} was played under other content files ({played[:12]}); this Wildhold has "
                         f"{content.digest[:12]}", "content_drift")


def _fields(agent: dict[str, Any] | None) -> str:
    return "nothing" if agent is None else ", ".join(f"{k} {v}" for k, v in sorted(agent.items()) if k != "id")


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def resimulate(archive: Archive, content: Content, on_tick: Callable[[World, int], None] | None = None) -> Resimulation:
    """Re-simulate an archive (its log already verified) and compare each thing it says with what replay gives."""
    m = archive.manifest
    try:
        inputs = list(archive.inputs())
        world = replay(content, m["scenario"], m["seed"], inputs, m["final_tick"], on_tick)
        joins = roster(world, inputs)
    except (StoreError, KeyError, TypeError, ValueError) as exc:  # an input log no match could have recorded
        raise Unverified(f"{archive.path.name}: its inputs cannot be re-simulated ({exc})", "resimulation_differs") from None
    final = hashlib.sha256(archive.final_state()).hexdigest()
    checks = [
        Check("chain head", "resimulation_differs", m["chain_head"], world.events.head),
        Check("events", "resimulation_differs", str(m["event_count"]), str(world.events.seq)),
        Check("state hash", "resimulation_differs", m["state_hash"], state_hash(world)),
        Check("start tick", "resimulation_differs", str(m.get("start_tick")), str(world.start_tick)),
        Check("final state", "final_state_differs", final, hashlib.sha256(dumps(world)).hexdigest()),
        Check("roster", "roster_differs", _digest(m.get("agents")), _digest(joins)),
        Check("records", "records_differ", str(m.get("records_digest")), str(records_digest(inputs))),
    ]
    return Resimulation(world, joins, checks, check_archive(archive, content))


def _refusal(where: Path, sim: Resimulation, manifest: dict[str, Any]) -> Unverified | None:
    """The first thing the re-simulation disagrees with, as one sentence; None when it agrees."""
    for check in sim.checks:
        if check.same:
            continue
        if check.code == "roster_differs":
            listed = {a.get("id"): a for a in manifest.get("agents") or []}
            wrong = next((a for a in sim.roster if listed.get(a["id"]) != a), None)
            which = f"{wrong['id']} joined as {_fields(wrong)}" if wrong else "the list names characters that never joined"
            return Unverified(f"{where.name}: the manifest's agents are not the characters that joined in its inputs "
                              f"({which}; the manifest says {_fields(listed.get(wrong['id'])) if wrong else 'otherwise'})",
                              check.code)
        if check.code == "records_differ":
            return Unverified(f"{where.name}: the records among its inputs (each model session's spend) are not the "
                              f"ones its manifest binds ({check.replayed[:12]}, the manifest says {check.archived[:12]})",
                              check.code)
        if check.code == "final_state_differs":
            return Unverified(f"{where.name}: final_state.json is not the state its re-simulation ends in", check.code)
        return Unverified(f"{where.name}: re-simulating its seed and inputs gives another {check.name} "
                          f"({check.replayed[:12]}, the archive says {check.archived[:12]}): its events were not "
                          "played from its inputs", check.code)
    bad = next((r for r in sim.runs if not r.ok), None)
    if bad is not None:
        return Unverified(f"{where.name}: program run {bad.run} ({bad.agent} {bad.name}@{bad.revision}) does not "
                          f"re-simulate from its transcript: {bad.problem}", "program_runs_differ")
    return None


def _sha256(path: Path) -> str:
    """The archive's digest, which the cache is keyed by."""
    h = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise ArchiveError(f"{path}: not a Wildhold archive ({exc.strerror or exc})") from None
    return h.hexdigest()


def _cached(cache: Path, digest: str, content: Content) -> Verdict | None:
    try:
        entry = orjson.loads((cache / f"{digest}.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if entry.get("content_digest") != content.digest or entry.get("wildhold_version") != __version__:
        return None
    return Verdict("verified", digest, bool(entry.get("bound")), entry.get("archive_head"), cached=True)


def _keep(cache: Path, verdict: Verdict, content: Content) -> None:
    """Best effort: a folder that cannot be written only means verifying again next time."""
    entry = {"archive_sha256": verdict.archive_sha256, "bound": verdict.bound, "archive_head": verdict.archive_head,
             "content_digest": content.digest, "wildhold_version": __version__}
    try:
        tmp = private_folder(cache) / f"{verdict.archive_sha256}.json.tmp"
        write_private(tmp, orjson.dumps(entry, option=orjson.OPT_SORT_KEYS))
        tmp.replace(cache / f"{verdict.archive_sha256}.json")
    except OSError:
        pass


def default_cache(path: Path | str) -> Path:
    """The cache of an archive's data folder (the folder it was written into: a server's, a run's, a demo's)."""
    return Path(path).parent / "cache"


def verify_archive(path: Path | str, content: Content | None = None, cache: Path | None = None,
                   on_tick: Callable[[World, int], None] | None = None) -> Verdict:
    """Verify an archive for scoring, or raise ArchiveError (Unverified, with its code) saying what fails.
    `on_tick` watches the re-simulation (see `replay`); a verdict the cache holds re-simulates nothing."""
    path = Path(path)
    content = content or default_content()
    cache = default_cache(path) if cache is None else cache
    digest = _sha256(path)
    hit = _cached(cache, digest, content)
    if hit is not None:
        return hit
    with Archive(path) as archive:
        archive.verify()
        check_content(archive.manifest, content, path)
        sim = resimulate(archive, content, on_tick)
        refusal = _refusal(path, sim, archive.manifest)
        if refusal is not None:
            raise refusal
        verdict = Verdict("verified", digest, archive.bound, archive.manifest.get("archive_head") if archive.bound else None)
    _keep(cache, verdict, content)
    return verdict


def admit(path: Path | str, content: Content | None = None, *, trust: bool = False, cache: Path | None = None) -> Verdict:
    """The one call every scoring entry point makes first: verify, or with `trust` take the archive as it is."""
    if not trust:
        return verify_archive(path, content, cache)
    return Verdict("trusted", _sha256(Path(path)), False, None)
