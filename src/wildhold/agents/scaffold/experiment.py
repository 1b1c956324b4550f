"""`wildhold run`: an experiment file played end to end through the real MCP server, with its run artifacts.

Serves the world with the lobby on over uvicorn on 127.0.0.1 (a free port), registers every arm over
MCP exactly as an outside agent would, starts them together, runs until every model arm is done
(budget, ceiling, cassette, season end), archives, and writes telemetry, the run manifest, the report
and the spend curve into the out folder. A rerun into the same folder resumes where telemetry stops.
Each model session's usage and price is recorded in the match as it ends, so the archive carries the spend.
The horizon is hidden unless the experiment says otherwise: the orientation protocol tells no agent when
the match ends, how long it lasts or that spend is measured.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from rich.console import Console

from wildhold.agents.base import AgentView
from wildhold.agents.scaffold.accounting import ArmLedger, Price, PriceSpec, Telemetry, price_table_id, rebuild, session_log
from wildhold.agents.scaffold.adapters import Adapter, Limiter, ReplayAdapter, limited
from wildhold.agents.scaffold.loopback import Loopback
from wildhold.agents.scaffold.session import (
    DESIGN_TOOLS,
    SCAFFOLD_TOOLS,
    Caps,
    MCPTools,
    SessionState,
    run_session,
    system_prompt,
)
from wildhold.agents.scaffold.workspace import Workspace, WorkspaceError
from wildhold.extras import require
from wildhold.readable import read_model
from wildhold.service.match import SPEND
from wildhold.revision import git_revision
from wildhold.store.private import private_folder, write_private

DEFAULT_OBJECTIVE = "Complete as many quests as possible."
# Seed 001's planned arms: what the scaffold tells an agent beyond the zero-priors situation, objective and tools.
PROFILES: dict[str, str] = {
    "zero_priors": "the situation, the objective and the tools; an empty workspace; nothing about budget or spend",
    "knowledge_pack": "as zero_priors, with a committed notes folder (knowledge_pack) in the workspace before the first session",
    "budget_visible": "as zero_priors, and each session opens with the arm's budget and what it has spent so far",
    "design_withheld": "as zero_priors, without the rules tool: the design document is never offered",
}
Profile = Literal["zero_priors", "knowledge_pack", "budget_visible", "design_withheld"]
PROGRAM_POLL_S = 0.05  # how often a sleeping arm looks whether its programs still run


class ArmSpec(BaseModel):
    """One arm: a model behind a provider adapter, or a scripted policy. A `standin` arm is the stand-in model
    (agents.scaffold.standin): its `policy` (quester unless named) behind the OpenAI-compatible adapter, its model
    named for it."""

    model_config = ConfigDict(extra="forbid")
    name: str
    provider: Literal["replay", "scripted", "openai", "anthropic", "google", "standin"]
    model: str | None = None
    base_url: str | None = None  # openai: any chat-completions endpoint (vLLM, Ollama, OpenRouter...)
    api_key_env: str | None = None  # openai: the environment variable holding the key (never written anywhere)
    cassette: str | None = None
    policy: str | None = None
    sampling: dict[str, Any] = Field(default_factory=dict)
    price: PriceSpec | None = None
    budget_usd: float | None = Field(default=None, gt=0)  # this arm's budget; the experiment's when absent
    ceiling_s: float | None = Field(default=None, gt=0)  # this arm's wall-clock ceiling; the experiment's when absent
    scaffold_profile: Profile | None = None  # this arm's profile (PROFILES); the experiment's when absent
    knowledge_pack: str | None = None  # knowledge_pack: the notes folder, relative to the experiment file
    seat: str | None = None  # a fork's only: the name of the character, already in the match, this arm takes over

    @model_validator(mode="after")
    def _standin_is_named(self) -> ArmSpec:
        """A stand-in arm's policy is a scripted one (quester by default) and its model is named for it."""
        if self.provider == "standin":
            from wildhold.agents.scaffold.standin import DEFAULT_POLICY, standin_model
            from wildhold.agents.scripted import POLICIES

            self.policy = self.policy or DEFAULT_POLICY
            if self.policy not in POLICIES:
                raise ValueError(f"arm {self.name!r}: the stand-in plays a scripted policy ({', '.join(POLICIES)}), "
                                 f"not {self.policy!r}")
            if self.model not in (None, standin_model(self.policy)):
                raise ValueError(f"arm {self.name!r}: a stand-in's model is {standin_model(self.policy)!r}, named for "
                                 "its policy (it is not a language model)")
            self.model = standin_model(self.policy)
        return self


class ExperimentError(ValueError):
    """An experiment that cannot be played as given; `code` is stable."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


class Experiment(BaseModel):
    """An experiment file: scenario, seed, clock, objective, per-arm budget and wall-clock ceiling, caps, arms."""

    model_config = ConfigDict(extra="forbid")
    name: str
    scenario: str = "tiny"
    seed: int = 1
    clock: Literal["lockstep", "fast", "realtime"] = "lockstep"
    tick_seconds: float = Field(default=1.0, gt=0)  # realtime: wall-clock seconds per world minute
    objective: str = DEFAULT_OBJECTIVE
    horizon: Literal["hidden", "visible"] = "hidden"  # hidden: no face tells an agent when the match ends
    observation: Literal["text", "image", "both"] = "text"  # what an observe shows a model arm (session.OBSERVATIONS)
    tools: Literal["full", "compact"] = "full"  # the MCP tool profile the model arms are served (access.TOOL_PROFILES)
    budget_usd: float = Field(gt=0)  # per arm, unless the arm sets its own
    ceiling_s: float = Field(gt=0)  # per arm, unless the arm sets its own
    turn_deadline_s: float = 5.0
    caps: Caps = Field(default_factory=Caps)
    arms: list[ArmSpec] = Field(min_length=1)
    cohort: list[str] | None = None  # the arms it evaluates: the composite's maxima are theirs, not a baseline's
    scaffold_profile: Profile = "zero_priors"  # every model arm's, unless the arm sets its own (PROFILES)
    knowledge_pack: str | None = None  # the notes folder a knowledge_pack arm starts with, unless the arm names its own

    @model_validator(mode="after")
    def _arms_are_complete(self) -> Experiment:
        names = [a.name for a in self.arms]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"arm names must be distinct; repeated: {', '.join(dup)}")
        for a in self.arms:
            if a.provider != "scripted" and a.price is None:  # without a pinned price no budget could ever end it
                raise ValueError(f"arm {a.name!r}: a model arm needs its pinned price (price: {{input_per_mtok, "
                                 "output_per_mtok}})")
            if a.provider == "replay" and not a.cassette:
                raise ValueError(f"arm {a.name!r}: a replay arm needs a cassette")
        if all(a.provider == "scripted" for a in self.arms):
            raise ValueError("an experiment needs at least one model arm (scripted arms play only while one does)")
        for a in self.arms:
            profile, pack = self.profile(a), self.pack(a)
            if a.provider == "scripted" and a.scaffold_profile is not None:
                raise ValueError(f"arm {a.name!r}: a scripted arm has no scaffold, so no scaffold_profile")
            if a.provider != "scripted" and profile == "knowledge_pack" and not pack:
                raise ValueError(f"arm {a.name!r}: the knowledge_pack profile needs a knowledge_pack folder (the arm's or "
                                 "the experiment's)")
            if a.knowledge_pack and profile != "knowledge_pack":
                raise ValueError(f"arm {a.name!r}: a knowledge_pack folder is only read under the knowledge_pack profile "
                                 f"(this arm's is {profile})")
        strangers = sorted(set(self.cohort or ()) - set(names))
        if strangers:
            raise ValueError(f"the cohort names arms the experiment does not have: {', '.join(strangers)}")
        return self

    @classmethod
    def load(cls, path: Path) -> Experiment:
        """The experiment file, or UnreadableFile naming it and the keys at fault."""
        return read_model(path, cls)

    def check_files(self, base: Path) -> None:
        """Every file an arm names is where it says, beside the experiment file (`base`): refused before anything
        is written, naming the arm and the file."""
        for a in self.arms:
            if a.cassette and not (base / a.cassette).is_file():
                raise ExperimentError(f"arm {a.name!r}: its cassette {a.cassette} is not a file beside the experiment "
                                      f"({base / a.cassette}); record one or correct the path", "cassette_missing")
            pack = self.pack(a)
            if pack and not (base / pack).is_dir():
                raise ExperimentError(f"arm {a.name!r}: its knowledge_pack {pack} is not a folder beside the experiment "
                                      f"({base / pack})", "knowledge_pack_missing")

    def budget(self, arm: ArmSpec) -> float:
        return arm.budget_usd if arm.budget_usd is not None else self.budget_usd

    def profile(self, arm: ArmSpec) -> str:
        return arm.scaffold_profile or self.scaffold_profile

    def pack(self, arm: ArmSpec) -> str | None:
        """The notes folder the arm starts with (only under the knowledge_pack profile)."""
        return (arm.knowledge_pack or self.knowledge_pack) if self.profile(arm) == "knowledge_pack" else None

    def ceiling(self, arm: ArmSpec) -> float:
        return arm.ceiling_s if arm.ceiling_s is not None else self.ceiling_s

    def price_table(self) -> dict[str, Any]:
        """Each model arm's provider, model and pinned price: the table its spend is priced by."""
        return {a.name: {"provider": a.provider, "model": a.model, **a.price.pinned()}
                for a in self.arms if a.provider != "scripted" and a.price is not None}


def manifest(exp: Experiment, base: Path) -> dict[str, Any]:
    """What pins the run: code, tool surface, rules, and every model string, sampling, price and cap."""
    from wildhold.content import default_content
    from wildhold.docs.rules import rules_digest
    from wildhold.server.mcp import tools_hash
    from wildhold.service.queries import program_reads

    arms = []
    for a in exp.arms:
        entry = a.model_dump(mode="json", exclude_none=True)
        if a.provider != "scripted":  # what this arm actually ran under, its own override or the default
            entry["budget_usd"], entry["ceiling_s"] = exp.budget(a), exp.ceiling(a)
            entry["scaffold_profile"] = exp.profile(a)
            pack = exp.pack(a)
            if pack:
                entry["knowledge_pack"], entry["knowledge_pack_sha256"] = pack, pack_digest(base / pack)
        if a.cassette:
            data = (base / a.cassette).read_bytes()
            entry["cassette_sha256"] = hashlib.sha256(data).hexdigest()
            entry.setdefault("model", json.loads(data).get("model", "replay"))
        arms.append(entry)
    table = exp.price_table()
    return {"experiment": exp.name, "wildhold_git_sha": git_revision(short=False),
            "tools_hash": tools_hash(horizon=exp.horizon, profile=exp.tools), "tools": exp.tools, "horizon": exp.horizon,
            "observation": exp.observation,
            "rules_digest": rules_digest(default_content(), program_reads(), exp.horizon),
            "price_table": table, "price_table_sha256": price_table_id(table), "scenario": exp.scenario, "seed": exp.seed,
            "clock": exp.clock, "tick_seconds": exp.tick_seconds if exp.clock == "realtime" else None,
            "turn_deadline_s": exp.turn_deadline_s if exp.clock == "lockstep" else None,
            "objective": exp.objective, "budget_usd": exp.budget_usd, "ceiling_s": exp.ceiling_s,
            "caps": asdict(exp.caps), "scaffold_profile": exp.scaffold_profile,
            "scaffold_profiles": {a.name: exp.profile(a) for a in exp.arms if a.provider != "scripted"},
            "profiles": {name: PROFILES[name] for name in sorted({exp.profile(a) for a in exp.arms if a.provider != "scripted"})},
            "cost_formula": "caching-neutral: (input_tokens incl. cached * input "
            "price + output_tokens * output price) / 1e6", "arms": arms,
            "arm_identities": {a.name: arm_identity(exp, a, base) for a in exp.arms}, **cohort(exp)}


HARNESS = "wildhold-scaffold"
SDK = {"standin": "openai"}  # the extra a provider's adapter needs, where it is not the provider's own name

# The settings an arm's identity leaves out, each with why: they change nothing its agent sees or may do. Every other
# field of `Experiment` and `ArmSpec` is part of the identity (`arm_identity`), so a new setting is in it unless it is
# named here (a test enumerates the fields).
NEUTRAL: dict[str, str] = {
    "Experiment.name": "the experiment's display name",
    "Experiment.scenario": "the world it is played in, as the seed: the leaderboard keeps scenarios apart, sweeps and "
                           "compare keep a row per protocol",
    "Experiment.seed": "the world it is played in: what a configuration's results are pooled over",
    "Experiment.arms": "the other arms: each has its own identity",
    "Experiment.cohort": "whose scores set the composite's maxima: how the match is scored, not how it is played",
    "ArmSpec.name": "the arm's display name",
    "ArmSpec.api_key_env": "where the provider's key is read from",
    "ArmSpec.seat": "which character a fork's arm takes over: the fork point's, as a spawn is the match's",
}
# Settings only the scaffold reads: a scripted arm's policy never sees them, so its identity leaves them out.
SCAFFOLD_ONLY = frozenset({
    "Experiment.objective", "Experiment.observation", "Experiment.tools", "Experiment.budget_usd", "Experiment.ceiling_s", "Experiment.caps",
    "Experiment.scaffold_profile", "Experiment.knowledge_pack", "ArmSpec.model", "ArmSpec.base_url", "ArmSpec.cassette",
    "ArmSpec.sampling", "ArmSpec.price", "ArmSpec.budget_usd", "ArmSpec.ceiling_s", "ArmSpec.scaffold_profile",
    "ArmSpec.knowledge_pack",
})


def _cassette(base: Path, arm: ArmSpec) -> bytes:
    return (base / arm.cassette).read_bytes() if arm.cassette else b""


# A setting whose value as it takes effect is not the field's own, by field name: what it puts in the identity.
_EFFECTIVE: dict[str, Callable[[Experiment, ArmSpec, Path], dict[str, Any]]] = {
    "budget_usd": lambda exp, arm, base: {"budget_usd": exp.budget(arm)},
    "ceiling_s": lambda exp, arm, base: {"ceiling_s": exp.ceiling(arm)},
    "scaffold_profile": lambda exp, arm, base: {"scaffold_profile": exp.profile(arm)},
    "knowledge_pack": lambda exp, arm, base: ({"knowledge_pack_sha256": pack_digest(base / pack)}
                                              if (pack := exp.pack(arm)) else {}),
    "cassette": lambda exp, arm, base: ({"cassette_sha256": hashlib.sha256(_cassette(base, arm)).hexdigest()}
                                        if arm.cassette else {}),
    "model": lambda exp, arm, base: {"model": arm.model or (json.loads(_cassette(base, arm)).get("model", "replay")
                                                            if arm.cassette else None)},
    "policy": lambda exp, arm, base: {"policy": arm.policy or ("producer" if arm.provider == "scripted" else None)},
    "sampling": lambda exp, arm, base: {"sampling": dict(sorted(arm.sampling.items()))},
    "caps": lambda exp, arm, base: {"caps": asdict(exp.caps)},
    "tick_seconds": lambda exp, arm, base: {"tick_seconds": exp.tick_seconds} if exp.clock == "realtime" else {},
    "turn_deadline_s": lambda exp, arm, base: {"turn_deadline_s": exp.turn_deadline_s} if exp.clock == "lockstep" else {},
}


def arm_identity(exp: Experiment, arm: ArmSpec, base: Path) -> dict[str, Any]:
    """What makes an arm the configuration it is, never its label: every setting of the experiment and the arm as it
    takes effect (provider, model, sampling, price, the scaffold's caps, budget and ceiling, profile and knowledge
    pack, what an observe shows, the clock, the horizon, the objective, the cassette's digest) and the harness, less
    what `NEUTRAL` names and, for a scripted arm, what only the scaffold reads (`SCAFFOLD_ONLY`). Two arms with the
    same identity are one configuration wherever they ran; the archive carries it so the leaderboard can key on it."""
    ident: dict[str, Any] = {"harness": HARNESS}
    for owner, of in ((Experiment, exp), (ArmSpec, arm)):
        for name in owner.model_fields:
            setting = f"{owner.__name__}.{name}"
            if setting in NEUTRAL or (arm.provider == "scripted" and setting in SCAFFOLD_ONLY):
                continue
            effective = _EFFECTIVE.get(name)
            if effective is not None:
                ident.update(effective(exp, arm, base))
            else:
                value = getattr(of, name)
                ident[name] = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    return {key: value for key, value in ident.items() if value is not None}


def pack_files(folder: Path) -> dict[str, str]:
    """A knowledge pack's text files by their path inside it, in order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"the knowledge pack {folder} is not a folder")
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file()}


def pack_digest(folder: Path) -> str:
    """sha256 over a knowledge pack's paths and contents: the manifest pins what the arm was given."""
    h = hashlib.sha256()
    for path, text in pack_files(folder).items():
        h.update(path.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()


def cohort(exp: Experiment) -> dict[str, Any]:
    """The cohort as a manifest carries it (the archive's, bound into its head, and the run's); none unnamed."""
    return {"cohort": exp.cohort} if exp.cohort is not None else {}


class Run:
    """One experiment in progress: the host, its app served on loopback, the telemetry and each arm's ledger."""

    takes_seats = False  # whether arms may take over characters already in the match (a fork's run does)

    def __init__(self, exp: Experiment, out: Path, base: Path, limiter: Limiter | None = None):
        """`limiter`, when given, holds every model call to its provider's limit (a sweep's, shared by its workers)."""
        from wildhold.eval.html import render_html
        from wildhold.eval.report import score_archive
        from wildhold.server.http import create_app
        from wildhold.server.mcp import tools_hash
        from wildhold.service.access import HostConfig
        from wildhold.service.host import Host

        self.exp, self.out, self.base, self.limiter = exp, out, base, limiter
        exp.check_files(base)
        for arm in exp.arms:  # a provider SDK that is not installed fails here, before anything is written
            if arm.provider in ("openai", "anthropic", "google", "standin"):
                require(SDK.get(arm.provider, arm.provider), f"the {arm.provider} arm {arm.name!r}")
        seated = [a.name for a in exp.arms if a.seat]
        if seated and not self.takes_seats:
            raise ExperimentError(f"the arms {', '.join(seated)} have a seat, a character already in the match: only "
                                  "a fork has one (wildhold fork ARCHIVE --at TICK --experiment ...)",
                                  "seat_without_fork")
        private_folder(out)
        self.signup, admin = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        config = HostConfig(signup_token=self.signup, admin_token=admin, clock=exp.clock, lobby=True,
                            tick_seconds=exp.tick_seconds, turn_deadline_s=exp.turn_deadline_s, rate_per_s=0.0,
                            wait_max_s=30.0, tools=exp.tools)
        self.price_table = exp.price_table()
        self.price_table_id = price_table_id(self.price_table)
        self.host = Host.open(out / "world", config, exp.scenario, exp.seed, horizon=exp.horizon,
                              manifest_extra={"tools_hash": tools_hash(horizon=exp.horizon, profile=exp.tools),
                                              "price_table": self.price_table,
                                              "price_table_sha256": self.price_table_id,
                                              "arm_identities": self.identities(),
                                              **cohort(exp),
                                              "scaffold_profiles": {a.name: exp.profile(a) for a in exp.arms
                                                                    if a.provider != "scripted"}})
        self.app = create_app(self.host, scorer=score_archive, render_html=render_html)
        self.telemetry = Telemetry(out / "telemetry.jsonl")
        self.caps = exp.caps
        self.model_arms_left = sum(1 for a in exp.arms if a.provider != "scripted")
        self.adapters: dict[str, Adapter] = {}
        self.records: list[dict[str, Any]] = []
        self.ledger = rebuild([])
        self.states: dict[str, str] = {}  # each arm's state, for the operator's live view only
        self.lives: dict[str, float] = {}  # when each arm's life in this process began (monotonic)
        self.server: Loopback | None = None
        self.agents: dict[str, str] = {}  # arm name -> its character, once the match has started
        self.spent: set[tuple[str, int]] = set()  # (character, session) whose spend the match has recorded

    def identities(self) -> dict[str, dict[str, Any]]:
        """Each arm's identity (`arm_identity`) by the name of the character it plays, as the archive carries them."""
        return {a.seat or a.name: arm_identity(self.exp, a, self.base) for a in self.exp.arms}

    def started(self) -> None:
        """The match has just left its lobby and no arm has played yet (a task attempt sets its task up here)."""

    def session_stop(self) -> str:
        """A reason to end a model session before its next model call ('' to go on): a session plays on
        after the match ends unless a subclass says otherwise (a task attempt stops it there)."""
        return ""

    def budget(self, arm: ArmSpec) -> float:
        return self.exp.budget(arm)

    def ceiling(self, arm: ArmSpec) -> float:
        return self.exp.ceiling(arm)

    def elapsed(self, arm: str) -> float:
        """Wall-clock seconds this arm has been alive, earlier processes included (rebuilt from telemetry)."""
        started = self.lives.get(arm)
        return self.ledger.arm(arm).elapsed_s + (time.monotonic() - started if started is not None else 0.0)

    def stop_clock(self, arm: str) -> None:
        """The arm's wall-clock time stops counting once it is done."""
        self.ledger.arm(arm).elapsed_s = self.elapsed(arm)
        self.lives.pop(arm, None)

    def connect(self, token: str):
        """An MCP client session over TCP to the loopback server, acting as `token`."""
        assert self.server is not None, "the loopback server is not running"
        return self.server.mcp(token)

    def world_tools(self, client: Any) -> MCPTools:
        """The world's tools over an MCP session, as the scaffold and a scripted arm call them under the served profile."""
        return MCPTools(client, self.exp.tools)

    async def register(self, arm: ArmSpec) -> str:
        """The arm's bearer token: a new character's, registered over MCP as an outside agent would, or, for an arm
        with a seat, the operator's token for that character."""
        if arm.seat:
            return self.host.seat(arm.seat, {"model": arm.model or arm.policy or arm.provider, "harness": HARNESS})[0]
        async with self.connect(self.signup) as c:
            r = await c.call_tool("register", {"name": arm.name, "model": arm.model or arm.policy or arm.provider,
                                               "harness": HARNESS})
        if r.is_error:
            raise RuntimeError(f"registering arm {arm.name!r} failed: {r.content[0].text}")
        return r.structured_content["token"]

    def adapter(self, arm: ArmSpec) -> Adapter:
        if arm.provider == "replay":
            if not arm.cassette:
                raise ValueError(f"arm {arm.name!r}: a replay arm needs a cassette")
            return ReplayAdapter(self.base / arm.cassette, model=arm.model or "")
        if arm.provider == "standin":
            from wildhold.agents.scaffold.openai_compat import StandinAdapter

            return StandinAdapter(arm.model or "", sampling=arm.sampling)
        if arm.provider in ("openai", "anthropic", "google"):
            import os

            if not arm.model:
                raise ValueError(f"arm {arm.name!r}: provider {arm.provider!r} needs a model")
            key = os.environ.get(arm.api_key_env) if arm.api_key_env else None
            if arm.api_key_env and not key:
                raise ValueError(f"arm {arm.name!r}: the environment variable {arm.api_key_env} is not set")
            if arm.provider == "anthropic":
                from wildhold.agents.scaffold.anthropic_adapter import AnthropicAdapter

                return AnthropicAdapter(arm.model, base_url=arm.base_url, api_key=key, sampling=arm.sampling)
            if arm.provider == "google":
                from wildhold.agents.scaffold.google_adapter import GoogleAdapter

                return GoogleAdapter(arm.model, base_url=arm.base_url, api_key=key, sampling=arm.sampling)
            from wildhold.agents.scaffold.openai_compat import OpenAICompatAdapter

            return OpenAICompatAdapter(arm.model, base_url=arm.base_url, api_key=key, sampling=arm.sampling)
        raise ValueError(f"arm {arm.name!r}: provider {arm.provider!r} has no adapter")

    async def model_arm(self, arm: ArmSpec, token: str) -> None:
        """Sessions until the budget, the ceiling, the cassette or the season ends; checked only between sessions.

        After a crash it starts where telemetry stops: a session cut short goes on with its transcript,
        and a session that ended without its checkpoint or wake gets them now.
        """
        adapter = self.adapters[arm.name]
        price = Price(arm.price.input_per_mtok, arm.price.output_per_mtok) if arm.price else Price(0.0, 0.0)
        ledger = self.ledger.arm(arm.name)  # after a crash: what telemetry says was already spent
        for number in ledger.ended_sessions:  # a crash right after a session ended: its record is still owed
            self.record_spend(arm.name, number, ledger, adapter.model, price)
        if ledger.complete:
            self.model_arms_left -= 1
            self.states[arm.name] = f"done: {ledger.complete}"
            async with self.connect(token) as c:
                await self.park(self.world_tools(c))
            return
        if isinstance(adapter, ReplayAdapter):
            adapter.position = ledger.replay_position
        workspace = Workspace(self.out / "workspaces" / arm.name, self.caps.workspace_quota_bytes)
        profile = self.exp.profile(arm)
        pack = self.exp.pack(arm)
        if pack and ledger.sessions == 0 and not any(r.get("arm") == arm.name and r["kind"] == "workspace_preloaded"
                                                    for r in self.records):
            for path, text in pack_files(self.base / pack).items():
                try:
                    workspace.write(path, text)
                except WorkspaceError as exc:
                    raise ValueError(f"arm {arm.name!r}: the knowledge pack {pack} does not fit its workspace ({exc})") from None
            self.telemetry.emit("workspace_preloaded", arm.name, pack=pack, files=len(pack_files(self.base / pack)),
                                sha256=pack_digest(self.base / pack))
        resumed = SessionState.resume(self.records, arm.name, self.caps)
        self.telemetry.emit("run_start", arm.name, model=adapter.model, provider=adapter.provider,
                            resumed=ledger.sessions > 0)
        self.lives[arm.name] = time.monotonic()
        reason = ""
        try:
            async with self.connect(token) as c:
                world = self.world_tools(c)
                tools = await world.listing()
                if profile == "design_withheld":
                    tools = [t for t in tools if t["name"] not in DESIGN_TOOLS]
                system = system_prompt(arm.name, self.exp.objective, tools)

                async def session(number: int, state: SessionState | None) -> None:
                    self.states[arm.name] = f"session {number}"
                    result = await run_session(arm=arm.name, number=number, system=system, world_tools=tools,
                                               world=world, adapter=adapter, workspace=workspace,
                                               telemetry=self.telemetry, price=price, caps=self.caps, ledger=ledger,
                                               resumed=state, repeatable=world.read_only,
                                               observation=self.exp.observation, stop=self.session_stop, clock=self.tick,
                                               note=self.budget_note(arm, ledger) if profile == "budget_visible" else "")
                    self.record_spend(arm.name, number, ledger, adapter.model, price)
                    await self.checkpoint(arm.name, world, number, ledger)
                    await self.sleep(arm.name, world, number, result.wake_minutes)

                if resumed is not None:
                    await session(resumed.number, resumed)
                elif ledger.ended_session:  # a crash between sessions: finish what the last one left undone
                    if ledger.progress_session < ledger.ended_session:
                        await self.checkpoint(arm.name, world, ledger.ended_session, ledger)
                    if ledger.wake_session < ledger.ended_session:
                        await self.sleep(arm.name, world, ledger.ended_session,
                                         ledger.ended_wake or self.caps.wake_default_minutes)
                    elif ledger.wake_tick is not None:
                        self.states[arm.name] = f"asleep until tick {ledger.wake_tick}"
                        await self.sleep_until(world, ledger.wake_tick)
                while not reason:
                    reason = self.stop_reason(arm, ledger, adapter)
                    if not reason:
                        await session(ledger.sessions + 1, None)
                self.telemetry.emit("run_complete", arm.name, reason=reason, cost_usd=ledger.cost_usd,
                                    tokens=ledger.tokens)
                self.model_arms_left -= 1
                self.states[arm.name] = f"done: {reason}"
                self.stop_clock(arm.name)
                await self.park(world)
        finally:
            if hasattr(adapter, "close"):
                await adapter.close()
            if not reason:  # interrupted: no run_complete, so a rerun resumes this arm from its telemetry
                self.model_arms_left -= 1
                self.states[arm.name] = "interrupted"
                self.stop_clock(arm.name)

    def record_spend(self, arm: str, session: int, ledger: ArmLedger, model: str, price: Price) -> None:
        """The session's usage and price, recorded once as an input of the match (the operator's, never the agent's)."""
        agent = self.agents[arm]
        if (agent, session) in self.spent:
            return
        record = ledger.session(session).record(session, model, price, self.price_table_id)
        record["log"] = session_log(self.telemetry.records(), arm, session, frozenset(t["name"] for t in SCAFFOLD_TOOLS),
                                    frozenset(DESIGN_TOOLS))
        self.host.record_spend(agent, record)
        self.spent.add((agent, session))

    def budget_note(self, arm: ArmSpec, ledger: ArmLedger) -> str:
        """What a budget-visible arm is told as each session opens: its budget and its spend so far."""
        budget = self.budget(arm)
        return (f"Your inference budget is ${budget:.2f}; you have spent ${ledger.cost_usd:.4f} of it "
                f"({100 * ledger.cost_usd / budget:.1f}%). The run stops when it is spent.")

    def tick(self) -> int:
        """The world's tick now (for the session's record; never shown to the agent)."""
        return self.host.world.tick

    def stop_reason(self, arm: ArmSpec, ledger: ArmLedger, adapter: Adapter) -> str:
        """Why this arm should start no further session ('' while it may go on)."""
        if self.host.state == "over":
            return "season_over"
        if ledger.cost_usd >= self.budget(arm):
            return "budget"
        if self.elapsed(arm.name) >= self.ceiling(arm):
            return "ceiling"
        if isinstance(adapter, ReplayAdapter) and adapter.exhausted:
            return "cassette_exhausted"
        return ""

    async def park(self, world: MCPTools) -> None:
        """A finished arm's character rests while other arms play, so a lockstep world never waits on it."""
        while self.host.state != "over" and self.model_arms_left > 0:
            if not await self.wait_ticks(world, 240):
                return

    async def wait_ticks(self, world: MCPTools, ticks: int) -> bool:
        """Rest `ticks` world minutes (or until every model arm is done); whether the world still answers.

        While a program of the agent's runs, resting submits nothing (see `watch_programs`)."""
        if await self.programs_running(world):
            return await self.watch_programs(world, ticks)
        err, text, op = await world.call("wait", {"ticks": max(1, min(240, ticks))})
        if err and text.startswith("busy:"):  # an operation the agent started is still running: let it finish
            await world.call("wait_operation", {"timeout_s": 1.0})
            return True
        if err:
            return False
        while self.host.state != "over" and self.model_arms_left > 0:
            err, _, done = await world.call("wait_operation", {"op": op["op"], "timeout_s": 1.0})
            if err:
                return False
            if done.get("status") != "running":
                return True
        return True

    async def programs_running(self, world: MCPTools) -> bool:
        err, _, listing = await world.call("list_programs", {})
        return not err and any(p["state"] in ("running", "waiting") for p in listing["programs"])

    async def watch_programs(self, world: MCPTools, ticks: int) -> bool:
        """Let `ticks` world minutes pass without acting while the agent's programs act for it: a direct
        `wait` would occupy the character, and its programs' actions would be rejected busy until it ended.
        The lockstep clock counts a character with a running program as ready. Back early once none runs."""
        until = self.host.world.tick + max(1, min(240, ticks))
        while self.host.state != "over" and self.model_arms_left > 0 and self.host.world.tick < until:
            await asyncio.sleep(PROGRAM_POLL_S)
            if not await self.programs_running(world):
                return True
        return True

    async def checkpoint(self, arm: str, world: MCPTools, session: int, ledger: ArmLedger) -> None:
        """A spend-curve point after each session: progress from the world, spend from the ledger (scaffold-side)."""
        info_err, _, info = await world.call("world_info", {})
        log_err, _, log = await world.call("quest_log", {})
        self.telemetry.emit("progress", arm, session=session,
                            tick=None if info_err else info["time"]["tick"],
                            wealth_cents=None if info_err else info["wealth_cents"],
                            quests=None if log_err else log["log"].get("quests_completed", 0),
                            tokens=ledger.tokens, cached_input_tokens=ledger.cached_input_tokens,
                            cost_usd=ledger.cost_usd, elapsed_s=round(self.elapsed(arm), 3))

    async def sleep(self, arm: str, world: MCPTools, session: int, minutes: int) -> None:
        """The world runs on while the agent sleeps: the scaffold waits in world minutes (ticks), never shown."""
        err, _, info = await world.call("world_info", {})
        if err:
            return
        wake_tick = info["time"]["tick"] + minutes
        self.telemetry.emit("wake_scheduled", arm, session=session, minutes=minutes, wake_tick=wake_tick)
        self.states[arm] = f"asleep until tick {wake_tick}"
        await self.sleep_until(world, wake_tick)

    async def sleep_until(self, world: MCPTools, wake_tick: int) -> None:
        while self.host.state != "over" and self.host.world.tick < wake_tick:
            if not await self.wait_ticks(world, wake_tick - self.host.world.tick):
                return

    async def scripted_arm(self, arm: ArmSpec, token: str) -> None:
        """A scripted policy over MCP, for a baseline in the same world; it plays while any model arm does."""
        from wildhold.agents.scripted import make_policy
        from wildhold.server.surface import action_tools

        policy = make_policy(arm.policy or "producer", self.host.content)
        actions = tuple(sorted(action_tools()))  # the action tools this server lists
        self.telemetry.emit("run_start", arm.name, policy=policy.name, provider="scripted")
        self.states[arm.name] = "playing"
        kept = getattr(policy, "memory_since", None)  # a policy that keeps its map is sent only the changes
        agent: str | None = None
        async with self.connect(token) as c:
            world = self.world_tools(c)
            while self.host.state != "over" and self.model_arms_left > 0:
                since = kept(agent) if kept is not None and agent is not None else None
                err, _, obs = await world.call("observe", {"memory": "full"} if since is None else {"memory_since": since})
                if err:
                    break
                agent, tick = obs["self"]["id"], obs["time"]["tick"]
                view = AgentView(agent, tick, self.exp.seed, lambda since, o=obs: o, lambda o=obs: o["self"], _obs=obs,
                                 actions=actions)
                decision = policy.decide(view) or ("wait", {"ticks": 1})
                err, text, op = await world.call(*decision)
                if err and text.startswith("busy:"):
                    await world.call("wait_operation", {"timeout_s": 1.0})
                    continue
                if err:
                    err, _, op = await world.call("wait", {"ticks": 1})
                if err:
                    continue
                while self.host.state != "over" and self.model_arms_left > 0 and op.get("status") == "running":
                    err, _, op = await world.call("wait_operation", {"op": op["op"], "timeout_s": 1.0})
                    if err:
                        break
        reason = "model_arms_done" if self.host.state != "over" else "season_over"
        self.telemetry.emit("run_complete", arm.name, reason=reason)
        self.states[arm.name] = f"done: {reason}"

    async def play(self, view: Any = None) -> None:
        """Serve the world on loopback, register (or, after a crash, reuse) every arm, start them together,
        and play until every model arm ends. `view` is an optional live view (an async context manager)."""
        self.records = self.telemetry.records()
        self.ledger = rebuild(self.records)
        self.adapters = {a.name: self.adapter(a) for a in self.exp.arms if a.provider != "scripted"}
        if self.limiter is not None:
            for a in self.exp.arms:
                if a.name in self.adapters:
                    limited(self.adapters[a.name], a.provider, self.limiter)
        tokens_file = self.out / "arm-tokens.json"  # local bearer tokens, so a restarted run acts as the same agents
        tokens: dict[str, str] = json.loads(tokens_file.read_text()) if tokens_file.exists() else {}
        async with Loopback(self.app) as self.server:
            self.telemetry.emit("run_start", None, experiment=self.exp.name, resumed=bool(self.records),
                                server=self.server.url)
            if self.host.state == "lobby":
                for arm in self.exp.arms:
                    if arm.name not in tokens:
                        self.states[arm.name] = "registering"
                        tokens[arm.name] = await self.register(arm)
                        _write_private(tokens_file, tokens)
                self.host.start()
                self.started()
            self.agents = {args["name"]: agent for agent, args in self.host.match.joins().items()}
            self.agents.update({a.name: self.agents[a.seat] for a in self.exp.arms if a.seat})
            self.spent = {(inp.agent, inp.args["session"]) for inp in self.host.match.store.inputs(0) if inp.kind == SPEND}
            missing = sorted(a.name for a in self.exp.arms if a.name not in tokens)
            if missing:
                raise ValueError(f"{self.out} holds a started match without tokens for the arms {', '.join(missing)}; "
                                 "resume it with the experiment file it was started with, or use a new --out")
            async with view if view is not None else _nothing():
                try:
                    async with asyncio.TaskGroup() as arms:  # one arm failing stops them all: a rerun resumes
                        for a in self.exp.arms:
                            arms.create_task(self.scripted_arm(a, tokens[a.name]) if a.provider == "scripted"
                                             else self.model_arm(a, tokens[a.name]), name=f"arm-{a.name}")
                except ExceptionGroup as failed:
                    if len(failed.exceptions) == 1:  # the arm's own error, as the caller would expect it
                        raise failed.exceptions[0] from None
                    raise
                if self.host.state != "over":
                    self.host.stop("every model arm finished")
            self.telemetry.emit("run_complete", None, reason="every model arm finished")
        self.server = None

    def play_through(self, view: Any = None) -> dict[str, Path]:
        """Play (`play`) and write the run's files (`finish`); if playing fails, the host is closed and it raises."""
        try:
            asyncio.run(self.play(view))
        except BaseException:
            self.host.close()
            raise
        return self.finish()

    def finish(self) -> dict[str, Path]:
        from wildhold.eval.html import render_html
        from wildhold.eval.report import score_archive

        archive = self.host.archives.path or self.host.archives.export()
        self.host.close()
        paths = {"archive": archive, "telemetry": self.telemetry.path}
        paths["manifest"] = _write(self.out / "manifest.json", manifest(self.exp, self.base))
        report = score_archive(archive)
        paths["report"] = _write(self.out / "report.json", report)
        paths["report_html"] = write_private(self.out / "report.html", render_html(report).encode())  # what a person opens
        paths["spend_curve"] = _write(self.out / "spend_curve.json",
                                      spend_curve(self.telemetry.records(), trial_ticks(archive)))
        return paths


class _nothing:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


CURVE_FIELDS = ("session", "tick", "elapsed_s", "tokens", "cached_input_tokens", "cost_usd", "quests", "wealth_cents")


def stage_ticks(events: Any, scenario: str, names: dict[str, str] | None = None) -> dict[str, dict[str, list[int]]]:
    """Per character (by name when `names` maps ids to names): the ticks its trial stages were credited
    under the cumulative rule (`native`) and attained in any order (`independent`), from its events
    through the same assessment the report uses."""
    from wildhold.content import default_content
    from wildhold.eval.trial import assess

    names = names or {}
    return {names.get(agent, agent): {"native": sorted(p["native_ticks"].values()),
                                      "independent": sorted(r["tick"] for r in p["independent"].values())}
            for agent, p in assess(events, default_content(), scenario).items()}


def trial_ticks(archive: Path) -> dict[str, dict[str, list[int]]]:
    """`stage_ticks` of an archive: the world's tamper-evident record, joined to telemetry by tick."""
    from wildhold.store.archive import Archive

    with Archive(archive) as a:
        names = {agent["id"]: agent["name"] for agent in a.manifest["agents"]}
        return stage_ticks(a.events(), a.manifest["scenario"], names)


def spend_curve(records: list[dict[str, Any]], stages: dict[str, dict[str, list[int]]] | None = None) -> dict[str, Any]:
    """Quests, trial stages and wealth against cumulative tokens and dollars: one point per session per model arm.

    `trial_stages` counts the stages passed under the trial's cumulative rule by the point's tick, and
    `trial_stages_independent` those attained in any order (both None without `stages`, see `trial_ticks`).
    """
    ledger = rebuild(records)
    stages = stages or {}
    arms: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["kind"] != "progress":
            continue
        point = {k: r.get(k) for k in CURVE_FIELDS}
        ticks = stages.get(r["arm"])
        for key, kind in (("trial_stages", "native"), ("trial_stages_independent", "independent")):
            point[key] = None if ticks is None or r["tick"] is None else sum(1 for t in ticks[kind] if t <= r["tick"])
        arms.setdefault(r["arm"], []).append(point)
    return {"arms": {name: {"points": pts, "total_cost_usd": ledger.arm(name).cost_usd,
                            "total_tokens": ledger.arm(name).tokens} for name, pts in arms.items()},
            "x": ["cost_usd", "tokens"], "y": ["quests", "trial_stages", "wealth_cents"]}


def _write(path: Path, data: Any) -> Path:
    return write_private(path, (json.dumps(data, indent=2, sort_keys=True, default=str) + "\n").encode())


def _write_private(path: Path, data: Any) -> None:
    """Bearer tokens: written whole (a crash leaves the old file or the new one), readable by the owner only."""
    tmp = path.with_suffix(".tmp")
    write_private(tmp, json.dumps(data).encode()).replace(path)


def live_view(run: Run, console: Console | None = None) -> Any:
    """The run's live view on a terminal (stderr unless `console`), or None where output is not a terminal."""
    from wildhold.agents.scaffold.progress import LiveView

    console = console or Console(stderr=True)
    return LiveView(run, console) if console.is_terminal else None


def run_experiment(path: Path, out: Path, *, quiet: bool = False, console: Console | None = None) -> dict[str, Path]:
    """Load an experiment file, play it (live progress on a terminal unless `quiet`), return what it wrote."""
    exp = Experiment.load(path)
    run = Run(exp, out, Path(path).resolve().parent)
    return run.play_through(None if quiet else live_view(run, console))
