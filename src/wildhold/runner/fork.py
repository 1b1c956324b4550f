"""`wildhold fork`: a new match from the verified, replayed state of an archive at a tick, with the same agents or
others (a counterfactual: this agent absent, another policy or another model taking over from here).

The fork's log starts with the parent's inputs before the tick, carried at their ticks, so the fork re-simulates
from its own seed and inputs like any archive, and its chain at the fork point is the parent's. Its manifest
records the parent's digest, the parent's chain head at the fork and the tick; `fork_checks` holds the fork's log
to them (and to the parent archive, when given).

Agent programs running at the fork are restarted there, from the revision each ran, by the fork (a program's
memory does not carry over, as a scripted policy's does not): the fork records the parent's run as stopped at the tick
and a new run started, so the fork's archive holds the sources saved before the fork and the program runs from the fork
on, each re-simulating from its transcript. A program whose character is absent or replaced by a policy is only
stopped. The parent's runs before the fork are the parent's, verified with it.

Played directly, every kept character goes on with its scripted policy in process (and its restarted programs take
their turns at each tick, as a served match gives them). With an experiment, the fork is
played as `wildhold run` plays one (`ForkRun`): each arm with a `seat` takes that character over through the MCP
server, an arm without one joins as a new character at the fork, and every other kept character plays its scripted
policy over MCP like any scripted arm; the archive carries each arm's identity by the character it played.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path
from typing import Any, Callable

from wildhold.agents.runner import ScriptedRun
from wildhold.agents.scaffold.adapters import Limiter
from wildhold.agents.scaffold.experiment import ArmSpec, Experiment, Run, live_view
from wildhold.agents.scripted import make_policy
from wildhold.content import default_content
from wildhold.service.access import HostConfig
from wildhold.service.host import Host
from wildhold.service.match import Match
from wildhold.service.program_state import begin_run
from wildhold.service.verify import verify_archive
from wildhold.store.archive import Archive
from wildhold.store.private import private_folder
from wildhold.store.sqlite import Input

ABSENT = "absent"
PROGRAM_ENDS = ("stop", "finish", "fail")
PROGRAM_MEMORY = ("a restarted program runs its revision from the first line at the fork: what it held in memory "
                  "there is not carried, as a scripted policy restarts with no memory")


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
         ticks: int | None = None, cache: Path | None = None, experiment: Experiment | None = None,
         base: Path | None = None, limiter: Limiter | None = None, quiet: bool = True) -> dict[str, Any]:
    """Fork `parent` at tick `at` into `out`: verify it, carry its inputs before `at`, then play `ticks` more (default:
    as many as the parent played after `at`) with every agent's policy, those in `replace` (name -> policy) taking
    over and those in `absent` idle; with `experiment` (its files relative to `base`), its arms take their seats and
    the fork is played as a run (its model calls held to `limiter`'s limits when given), which ends early once every
    model arm is done, its live view on a terminal unless `quiet`. Returns the fork's archive path and its fork record
    (and, with an experiment, the run's files under `run`)."""
    parent, out = Path(parent), Path(out)
    content = default_content()
    verify_archive(parent, content, cache=cache)
    with Archive(parent) as arc:
        m = arc.manifest
        if not m["start_tick"] < at < m["final_tick"]:
            raise ForkError(f"tick {at} is outside the match ({m['start_tick']} to {m['final_tick']}, exclusive)",
                            "fork_tick_out_of_range")
        inputs = [inp for inp in arc.inputs() if inp.tick < at and inp.kind != "end"]
        sources = [src for src in arc.program_sources() if src["tick"] < at]
    arms = list(experiment.arms) if experiment is not None else []
    names = {a["id"]: a["name"] for a in m["agents"]}
    live = _live_programs(inputs)
    players, changes = _players([inp.args for inp in inputs if inp.kind == "join"], dict(replace or {}),
                                list(absent or []), arms, m.get("arm_identities", {}), content,
                                {names[run["agent"]] for run in live})
    if experiment is not None:
        _fits(experiment, m, out)
    folder = private_folder(out / "world") if experiment is not None else out
    folder.mkdir(parents=True, exist_ok=True)
    match = Match.create(m["scenario"], m["seed"], folder / "match.sqlite", content, replace=True,
                         **({"clock": experiment.clock, "horizon": experiment.horizon} if experiment is not None else {}))
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
        played = m["final_tick"] - at if ticks is None else ticks
        record = {"parent_sha256": _sha256(parent), "parent_archive_head": m.get("archive_head"),
                  "parent_chain_head": m["chain_head"], "tick": at, "seq": seq, "chain_head_at_fork": head,
                  "inputs_carried": len(inputs), "agents": changes}
        if sources or live:
            record["programs"] = _restart_programs(match, sources, live, names, players, changes)
            record["program_memory"] = PROGRAM_MEMORY
        if experiment is None:
            policies = {agent: make_policy(players[args["name"]], content) for agent, args in match.joins().items()
                        if isinstance(players[args["name"]], str)}
            if any(p["to"] == "restarted" for p in record.get("programs", ())):
                _ProgramsRun(match, policies, out).run(until=at + played)
            else:
                ScriptedRun(match, policies).run(until=at + played)
            match.end("season over" if match.world.finished else "fork ticks played")
            return {"archive": match.export(out / "match.wildhold.zip", {"fork": record}), "fork": record}
    finally:
        match.close()
    record["experiment"] = experiment.name
    seated = [who if isinstance(who, ArmSpec) else ArmSpec(name=name, provider="scripted", policy=who, seat=name)
              for name, who in players.items() if who is not None]
    exp = experiment.model_copy(update={"scenario": m["scenario"], "seed": m["seed"],
                                        "arms": seated + [a for a in arms if not a.seat]})
    run = ForkRun(exp, out, Path(base or "."), record, at + played, limiter)
    paths = run.play_through(None if quiet else live_view(run))
    return {"archive": paths["archive"], "fork": record, "run": paths}


def _live_programs(inputs: list[Input]) -> list[dict[str, Any]]:
    """The program runs the log has started and not ended (stopped, finished, failed) before its end, in the order
    programs take their turns (character, name)."""
    live: dict[int, dict[str, Any]] = {}
    for inp in inputs:
        if inp.kind == "program" and inp.name == "start":
            live[inp.args["run"]] = {"agent": inp.agent, "name": inp.args["name"], "revision": inp.args["revision"],
                                     "run": inp.args["run"], "args": inp.args.get("args") or {}}
        elif inp.kind == "program" and inp.name in PROGRAM_ENDS:
            live.pop(inp.args["run"], None)
    return sorted(live.values(), key=lambda r: (r["agent"], r["name"]))


def _restart_programs(match: Match, sources: list[dict[str, Any]], live: list[dict[str, Any]], names: dict[str, str],
                      players: dict[str, Any], changes: dict[str, Any]) -> list[dict[str, Any]]:
    """At the fork tick: keep the sources saved before it, and end each run the parent had going there, starting it
    again from its revision unless another policy plays its character or it is absent. What happened to each."""
    store = match.store
    with store.transaction():
        for src in sources:
            store.add_program_source(src["agent"], src["name"], src["revision"], src["tick"], src["sha256"], src["source"])
    out = []
    for run in live:
        who = names[run["agent"]]
        stopped = who in changes and not isinstance(players[who], ArmSpec)  # absent, or a policy plays it
        why = (f"the fork at tick {match.world.tick} restarts it" if not stopped
               else f"its character is {ABSENT} from the fork" if players[who] is None
               else f"{players[who]} plays its character from the fork")
        match.program(run["agent"], "stop", {"name": run["name"], "revision": run["revision"], "run": run["run"],
                                             "reason": why}, "operator")
        entry = {"character": who, "agent": run["agent"], "program": run["name"], "revision": run["revision"],
                 "tick": match.world.tick, "parent_run": run["run"]}
        if stopped:
            out.append({**entry, "to": "stopped", "why": why})
            continue
        new = begin_run(match, run["agent"], run["name"], run["revision"], "operator", run["args"])
        out.append({**entry, "to": "restarted", "run": new.run})
    match.flush(snapshot=True)
    return out


class _ProgramsRun(ScriptedRun):
    """A direct fork whose programs run: the scripted policies act as in `ScriptedRun`, and after each tick every
    running program takes its turn through a program host on the same match (its runner process, its records)."""

    def __init__(self, match: Match, policies: dict[str, Any], folder: Path):
        super().__init__(match, policies)
        config = HostConfig(signup_token=secrets.token_urlsafe(24), admin_token=secrets.token_urlsafe(24),
                            clock="lockstep", rate_per_s=0.0)
        self.host = Host(match, config, folder)

    def step(self) -> None:
        super().step()
        if self.world.finished:
            self.host.programs.stop_all("the match ended")
        else:
            self.host.programs.tick()

    def run(self, on_tick: Callable[[Any], None] | None = None, until: int | None = None) -> None:
        """As `ScriptedRun.run`, every program stopped at the end and the runner process let go."""
        try:
            super().run(on_tick, until)
            self.host.programs.stop_all("the match ended")
        finally:
            self.host.programs.close()


def _fits(experiment: Experiment, parent: dict[str, Any], out: Path) -> None:
    """An experiment a fork of `parent` into `out` can play: the parent's scenario and seed (the fork's are the
    parent's), into a folder that holds no run yet."""
    for key in ("scenario", "seed"):
        if key in experiment.model_fields_set and getattr(experiment, key) != parent[key]:
            raise ForkError(f"the experiment's {key} is {getattr(experiment, key)!r}, the parent's {parent[key]!r}: a fork "
                            f"plays its parent's (leave {key} out)", "fork_experiment_mismatch")
    if (out / "world").exists() or (out / "telemetry.jsonl").exists():
        raise ForkError(f"{out} holds a run already; fork into a new --out", "fork_out_used")


def _players(joined: list[dict[str, Any]], replace: dict[str, str], absent: list[str], arms: list[ArmSpec],
             identities: dict[str, dict[str, Any]], content,
             programmed: set[str] = frozenset()) -> tuple[dict[str, str | ArmSpec | None], dict[str, Any]]:
    """Who plays each character (by name, from the arguments each joined with) from the fork on: a scripted policy
    (its own, or the one its parent's arm identity names), an experiment's arm seated on it, or no one (absent, or
    one of `programmed`, whose program was running at the fork and goes on alone); and what changed (name ->
    {from, to}, `to` the policy or the arm's name)."""
    by_name = {args["name"]: args for args in joined}
    seats = [a.seat for a in arms if a.seat]
    strangers = sorted((set(replace) | set(absent) | set(seats)) - set(by_name))
    if strangers:
        raise ForkError(f"no agent named {', '.join(strangers)} in this match; agents: {', '.join(by_name)}",
                        "fork_unknown_agent")
    twice = sorted({s for s in seats if seats.count(s) > 1})
    if twice:
        raise ForkError(f"more than one arm has the seat {', '.join(twice)}; one arm takes a character over",
                        "fork_seat_taken")
    both = sorted((set(replace) & set(absent)) | (set(seats) & (set(replace) | set(absent))))
    if both:
        raise ForkError(f"{', '.join(both)} cannot be given to more than one of --replace, --absent and an arm's seat",
                        "fork_conflicting_agents")
    clash = sorted(a.name for a in arms if a.name in by_name and a.seat != a.name)
    if clash:
        raise ForkError(f"the arms {', '.join(clash)} are named as characters of the match they do not take over; "
                        "rename them, or seat each on its namesake", "fork_name_taken")
    seated = {a.seat: a for a in arms if a.seat}
    players: dict[str, str | ArmSpec | None] = {}
    changes: dict[str, Any] = {}
    for name, args in by_name.items():
        was = args.get("policy") or args.get("model")
        if name in absent:
            players[name], changes[name] = None, {"from": was, "to": ABSENT}
            continue
        if name in seated:
            players[name], changes[name] = seated[name], {"from": was, "to": seated[name].name}
            continue
        ident = identities.get(name, {})
        policy = replace.get(name, args.get("policy") or (ident.get("policy") if ident.get("provider") == "scripted" else None))
        if policy is None and name in programmed:
            players[name] = None
            continue
        if policy is None:
            raise ForkError(f"agent {name} was not a scripted policy in the parent ({args.get('model', 'no model')}); "
                            f"give it one (--replace {name}=POLICY), seat an arm on it or make it absent",
                            "fork_agent_unassigned")
        try:
            make_policy(policy, content)
        except ValueError as exc:
            raise ForkError(str(exc), "fork_unknown_policy") from None
        players[name] = policy
        if name in replace:
            changes[name] = {"from": was, "to": policy}
    return players, changes


class ForkRun(Run):
    """`Run` of a fork: the match is the parent's history up to the fork, each seated arm takes its character over,
    and the match ends at the fork's last tick (or once every model arm is done, as a run does)."""

    takes_seats = True

    def __init__(self, exp: Experiment, out: Path, base: Path, record: dict[str, Any], stop_tick: int,
                 limiter: Limiter | None = None):
        self.record = record
        super().__init__(exp, out, base, limiter)
        self.host.archives.manifest_extra["fork"] = record
        self.host.ends_when = lambda: "fork ticks played" if self.host.world.tick >= stop_tick else None

    def identities(self) -> dict[str, dict[str, Any]]:
        """As a run's; a character another agent took over says so: the fork's tick and who played it before."""
        identities = super().identities()
        for name, change in self.record["agents"].items():
            if name in identities:
                identities[name]["fork"] = {"tick": self.record["tick"], "from": change["from"]}
        return identities


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
