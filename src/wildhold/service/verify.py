"""Whether an archive follows from its own inputs: the check every score stands on.

An archive is scored only when its log and bound header verify, it was played under this content, and
re-simulating its seed and inputs gives its events, its final state and its roster, with every program run
re-simulating from its transcript. The chain is unkeyed, so what makes a forgery fail is the re-simulation:
an edited event no longer follows from the inputs, an edited roster no longer matches the joins, and an edited
record (a session's spend, which replay skips) no longer has the digest the header binds.

A verdict is kept by the archive's digest, so scoring the same file again costs one hash of it; but whoever
hands over an archive must not be able to hand over its verdict too. Verdicts live in this user's cache
(`user_cache`, never beside the archives they speak of) and each carries an HMAC under a key made once per
install and kept there; one that does not authenticate, or speaks of other content or other code, is ignored
and the archive re-simulated. Archives of format 1 have no header; they re-simulate all the same and are
verified as unbound, and a score reads only their core fields.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Callable

import orjson

import wildhold
from wildhold.content import Content, default_content
from wildhold.programs.replay import RunCheck, check_archive
from wildhold.service.match import records_digest, replay, roster
from wildhold.store.archive import Archive, ArchiveError
from wildhold.store.private import opener, private_folder, write_private
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
    unbound: tuple[str, ...] = ()  # manifest fields an older format does not bind: no score reads them

    def stamp(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "archive_sha256": self.archive_sha256}
        if self.status == "trusted":
            return {**out, "note": TRUSTED_NOTE}
        out = {**out, "bound": self.bound, "archive_head": self.archive_head}
        return {**out, "ignored_unbound": list(self.unbound)} if self.unbound else out


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


def identity_disagreement(manifest: dict[str, Any], joins: list[dict[str, Any]]) -> str | None:
    """Where the arm identities the manifest records disagree with the characters that joined in its inputs: an
    identity for no character, or (for a character no seat took over) one whose model, policy or provider is not
    what its character joined as, or another harness. None when they agree (or the manifest records none)."""
    by_name = {a.get("name"): a for a in joins}
    fork = manifest.get("fork") if isinstance(manifest.get("fork"), dict) else {}
    taken_over = {a.get("seat") for a in manifest.get("arms") or [] if isinstance(a, dict)} | set(fork.get("agents") or {})
    for arm, ident in sorted((manifest.get("arm_identities") or {}).items()):
        agent = by_name.get(arm)
        if agent is None or not isinstance(ident, dict):
            return f"the identity of arm {arm!r} names no character that joined"
        if arm in taken_over:  # a seat: another player took the character over after it joined
            continue
        named = agent.get("policy") or agent.get("model")
        if named is not None and named not in (ident.get("model"), ident.get("policy"), ident.get("provider")):
            return f"arm {arm!r} joined as {named!r}, but its identity says {ident.get('model') or ident.get('policy')!r}"
        if agent.get("harness", ident.get("harness")) != ident.get("harness", agent.get("harness")):
            return f"arm {arm!r} joined through {agent.get('harness')!r}, but its identity says {ident.get('harness')!r}"
    return None


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
        Check("arm identities", "identity_differs", "agree with the roster",
              identity_disagreement(m, joins) or "agree with the roster"),
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
        if check.code == "identity_differs":
            return Unverified(f"{where.name}: the manifest's arm identities are not the characters that joined in its "
                              f"inputs ({check.replayed})", check.code)
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


KEY_NAME = "verdict.key"
VERDICTS = "verdicts"


def user_cache() -> Path:
    """This user's Wildhold cache: $WILDHOLD_CACHE, else $XDG_CACHE_HOME/wildhold, else ~/.cache/wildhold."""
    named = os.environ.get("WILDHOLD_CACHE")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "wildhold"


def install_key() -> bytes:
    """The key verdicts are authenticated with: 32 random bytes made once in the user's cache, readable by the
    user alone. It is always the user's, wherever `--cache` puts the verdicts, so no archive folder brings one."""
    path = private_folder(user_cache()) / KEY_NAME
    try:
        with open(path, "xb", opener=opener) as f:
            f.write(secrets.token_bytes(32))
    except FileExistsError:
        pass
    key = path.read_bytes()
    if len(key) != 32:
        raise OSError(f"{path} is not a Wildhold verdict key (32 bytes); remove it and a new one is made")
    return key


@cache
def code_digest() -> str:
    """sha256 over this Wildhold's own source files: a verdict holds for the code that reached it, whatever
    the version number says."""
    h = hashlib.sha256()
    root = Path(wildhold.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _mac(key: bytes, entry: dict[str, Any]) -> str:
    return hmac.new(key, orjson.dumps(entry, option=orjson.OPT_SORT_KEYS), hashlib.sha256).hexdigest()


def _entry(digest: str, bound: bool, archive_head: str | None, unbound: tuple[str, ...], content: Content) -> dict[str, Any]:
    return {"archive_sha256": digest, "bound": bound, "archive_head": archive_head, "unbound": list(unbound),
            "content_digest": content.digest, "code": code_digest()}


def _cached(cache: Path, digest: str, content: Content) -> Verdict | None:
    """The kept verdict of this archive digest, when it authenticates under the install's key and was reached by
    this code under this content; None (so: re-simulate) otherwise."""
    try:
        stored = orjson.loads((cache / f"{digest}.json").read_bytes())
        key = install_key()
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(stored, dict) or not isinstance(stored.get("mac"), str):
        return None
    try:
        entry = _entry(digest, bool(stored["bound"]), stored["archive_head"], tuple(stored["unbound"]), content)
    except (KeyError, TypeError):
        return None
    if not hmac.compare_digest(stored["mac"], _mac(key, entry)):
        return None
    return Verdict("verified", digest, entry["bound"], entry["archive_head"], cached=True, unbound=tuple(entry["unbound"]))


def _keep(cache: Path, verdict: Verdict, content: Content) -> None:
    """Best effort: a folder that cannot be written only means verifying again next time."""
    try:
        entry = _entry(verdict.archive_sha256, verdict.bound, verdict.archive_head, verdict.unbound, content)
        entry["mac"] = _mac(install_key(), entry)
        tmp = private_folder(cache) / f"{verdict.archive_sha256}.json.tmp"
        write_private(tmp, orjson.dumps(entry, option=orjson.OPT_SORT_KEYS))
        tmp.replace(cache / f"{verdict.archive_sha256}.json")
    except OSError:
        pass


def default_cache() -> Path:
    """Where verdicts are kept unless a caller names a folder: the user's cache, never an archive's folder."""
    return user_cache() / VERDICTS


def verify_archive(path: Path | str, content: Content | None = None, cache: Path | None = None,
                   on_tick: Callable[[World, int], None] | None = None) -> Verdict:
    """Verify an archive for scoring, or raise ArchiveError (Unverified, with its code) saying what fails.
    `on_tick` watches the re-simulation (see `replay`); a verdict the cache holds re-simulates nothing."""
    path = Path(path)
    content = content or default_content()
    cache = default_cache() if cache is None else cache
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
        verdict = Verdict("verified", digest, archive.bound, archive.manifest.get("archive_head") if archive.bound else None,
                          unbound=archive.unbound)
    _keep(cache, verdict, content)
    return verdict


def admit(path: Path | str, content: Content | None = None, *, trust: bool = False, cache: Path | None = None) -> Verdict:
    """The one call every scoring entry point makes first: verify, or with `trust` take the archive as it is."""
    if not trust:
        return verify_archive(path, content, cache)
    return Verdict("trusted", _sha256(Path(path)), False, None)
