"""`wildhold fork`: a new match from the verified, replayed state of an archive at a tick, with the same agents or
others (a counterfactual: this agent absent, or another policy taking over from here).

The fork's log starts with the parent's inputs before the tick, carried at their ticks, so the fork re-simulates
from its own seed and inputs like any archive, and its chain at the fork point is the parent's. Its manifest
records the parent's digest, the parent's chain head at the fork and the tick; `fork_checks` holds the fork's log
to them (and to the parent archive, when given).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from wildhold.agents.runner import ScriptedRun
from wildhold.agents.scripted import make_policy
from wildhold.content import default_content
from wildhold.service.match import Match
from wildhold.service.verify import verify_archive
from wildhold.store.archive import Archive

ABSENT = "absent"


class ForkError(ValueError):
    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _hash_at(archive: Archive, seq: int) -> str | None:
    """The chain head after the archive's event `seq` (None past its end; the genesis is never asked)."""
    for count, (_, stored) in enumerate(archive.event_records(), start=1):
        if count == seq:
            return stored
    return None


def fork(parent: Path, at: int, out: Path, *, replace: dict[str, str] | None = None, absent: list[str] | None = None,
         ticks: int | None = None, cache: Path | None = None) -> dict[str, Any]:
    """Fork `parent` at tick `at` into `out`: verify it, carry its inputs before `at`, then play `ticks` more (default:
    as many as the parent played after `at`) with every agent's policy, those in `replace` (name -> policy) taking
    over and those in `absent` idle. Returns the fork's archive path and its fork record."""
    parent = Path(parent)
    content = default_content()
    verify_archive(parent, content, cache=cache)
    with Archive(parent) as arc:
        m = arc.manifest
        if arc.has_programs:
            raise ForkError(f"{parent.name} ran agent programs, whose transcripts a fork cannot carry", "fork_programs")
        if not m["start_tick"] < at < m["final_tick"]:
            raise ForkError(f"tick {at} is outside the match ({m['start_tick']} to {m['final_tick']}, exclusive)",
                            "fork_tick_out_of_range")
        inputs = [inp for inp in arc.inputs() if inp.tick < at and inp.kind != "end"]
    replace, absent = dict(replace or {}), list(absent or [])
    out.mkdir(parents=True, exist_ok=True)
    db = out / "match.sqlite"
    for stale in out.glob("match.sqlite*"):
        stale.unlink()
    match = Match.create(m["scenario"], m["seed"], db, content)
    try:
        for inp in inputs:
            while match.world.tick < inp.tick:
                match.step()
            match.carry(inp)
        while match.world.tick < at:
            match.step()
        match.flush(snapshot=True)
        seq, head = match.world.events.seq, match.world.events.head
        with Archive(parent) as arc:
            parent_head = _hash_at(arc, seq)
        if parent_head != head:
            raise ForkError(f"the replayed history at tick {at} ends in {head[:12]}, the parent's log in "
                            f"{str(parent_head)[:12]}", "fork_diverged")
        policies, changes = _policies(match, replace, absent, content)
        run = ScriptedRun(match, policies)
        played = m["final_tick"] - at if ticks is None else ticks
        run.run(until=at + played)
        record = {"parent_sha256": _sha256(parent), "parent_archive_head": m.get("archive_head"),
                  "parent_chain_head": m["chain_head"], "tick": at, "seq": seq, "chain_head_at_fork": head,
                  "inputs_carried": len(inputs), "agents": changes}
        match.end("season over" if match.world.finished else "fork ticks played")
        path = match.export(out / "match.wildhold.zip", {"fork": record})
    finally:
        match.close()
    return {"archive": path, "fork": record}


def _policies(match: Match, replace: dict[str, str], absent: list[str], content) -> tuple[dict, dict[str, Any]]:
    """Each character's policy from the fork on, and what changed (name -> {from, to})."""
    joins = match.joins()
    by_name = {args["name"]: (agent, args) for agent, args in joins.items()}
    strangers = sorted((set(replace) | set(absent)) - set(by_name))
    if strangers:
        raise ForkError(f"no agent named {', '.join(strangers)} in this match; agents: {', '.join(by_name)}",
                        "fork_unknown_agent")
    both = sorted(set(replace) & set(absent))
    if both:
        raise ForkError(f"{', '.join(both)} cannot be both replaced and absent", "fork_conflicting_agents")
    policies, changes = {}, {}
    for name, (agent, args) in by_name.items():
        if name in absent:
            changes[name] = {"from": args.get("policy") or args.get("model"), "to": ABSENT}
            continue
        policy = replace.get(name, args.get("policy"))
        if policy is None:
            raise ForkError(f"agent {name} was not a scripted policy in the parent ({args.get('model', 'no model')}); "
                            f"give it one (--replace {name}=POLICY) or make it absent", "fork_agent_unassigned")
        try:
            policies[agent] = make_policy(policy, content)
        except ValueError as exc:
            raise ForkError(str(exc), "fork_unknown_policy") from None
        if name in replace:
            changes[name] = {"from": args.get("policy") or args.get("model"), "to": policy}
    return policies, changes


def fork_checks(archive: Path, parent: Path | None = None) -> list[tuple[str, str, str, bool]]:
    """For a fork: its log at the fork point against the chain head it records, and, given the parent archive, the
    parent's digest and its log at the same point. (name, recorded, found, same) rows; none for another archive."""
    with Archive(archive) as arc:
        record = arc.manifest.get("fork")
        if record is None:
            return []
        own = _hash_at(arc, record["seq"]) or "-"
    rows = [("fork point in its log", record["chain_head_at_fork"], own, own == record["chain_head_at_fork"])]
    if parent is not None:
        digest = _sha256(parent)
        rows.append(("parent digest", record["parent_sha256"], digest, digest == record["parent_sha256"]))
        with Archive(parent) as arc:
            theirs = _hash_at(arc, record["seq"]) or "-"
        rows.append(("fork point in the parent", record["chain_head_at_fork"], theirs, theirs == record["chain_head_at_fork"]))
    return rows
