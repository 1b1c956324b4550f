"""`wildhold run`: an experiment file played end to end through the real MCP server, with its run artifacts.

Starts the world with the lobby on, registers every arm over MCP exactly as an outside agent would,
starts them together, runs until every model arm is done (budget, ceiling, cassette, season end),
archives, and writes telemetry, the run manifest, the report and the spend curve into the out folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import subprocess
import time
from pathlib import Path
from typing import Any, Literal

import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, ConfigDict, Field

from wildhold.agents.base import AgentView
from wildhold.agents.scaffold.accounting import ArmLedger, Price, Telemetry, rebuild
from wildhold.agents.scaffold.adapters import Adapter, ReplayAdapter
from wildhold.agents.scaffold.session import Caps, MCPTools, run_session, system_prompt
from wildhold.agents.scaffold.workspace import Workspace

BASE = "http://127.0.0.1:8765"  # the app is reached in-process; this address is never dialled
DEFAULT_OBJECTIVE = "Complete as many quests as possible."


class PriceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class ArmSpec(BaseModel):
    """One arm: a model behind a provider adapter, or a scripted policy."""

    model_config = ConfigDict(extra="forbid")
    name: str
    provider: Literal["replay", "scripted", "openai"]
    model: str | None = None
    base_url: str | None = None  # openai: any chat-completions endpoint (vLLM, Ollama, OpenRouter...)
    api_key_env: str | None = None  # openai: the environment variable holding the key (never written anywhere)
    cassette: str | None = None
    policy: str | None = None
    sampling: dict[str, Any] = Field(default_factory=dict)
    price: PriceSpec | None = None


class CapsSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_tool_calls: int = 60
    max_tokens: int = 400_000
    max_consecutive_errors: int = 6
    repeat_limit: int = 6
    wake_min_minutes: int = 5
    wake_max_minutes: int = 720
    wake_default_minutes: int = 60
    workspace_quota_bytes: int = 262_144


class Experiment(BaseModel):
    """An experiment file: scenario, seed, clock, objective, per-arm budget and wall-clock ceiling, caps, arms."""

    model_config = ConfigDict(extra="forbid")
    name: str
    scenario: str = "tiny"
    seed: int = 1
    clock: Literal["lockstep", "fast"] = "lockstep"
    objective: str = DEFAULT_OBJECTIVE
    budget_usd: float = Field(gt=0)
    ceiling_s: float = Field(gt=0)
    turn_deadline_s: float = 5.0
    caps: CapsSpec = Field(default_factory=CapsSpec)
    arms: list[ArmSpec]

    @classmethod
    def load(cls, path: Path) -> Experiment:
        return cls.model_validate(yaml.safe_load(Path(path).read_text()))


def git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def manifest(exp: Experiment, base: Path) -> dict[str, Any]:
    """What pins the run: code, tool surface, rules, and every model string, sampling, price and cap."""
    from wildhold.content import default_content
    from wildhold.docs.rules import rules_digest
    from wildhold.server.mcp import tools_hash

    arms = []
    for a in exp.arms:
        entry = a.model_dump(mode="json", exclude_none=True)
        if a.cassette:
            data = (base / a.cassette).read_bytes()
            entry["cassette_sha256"] = hashlib.sha256(data).hexdigest()
            entry.setdefault("model", json.loads(data).get("model", "replay"))
        arms.append(entry)
    return {"experiment": exp.name, "wildhold_git_sha": git_sha(), "tools_hash": tools_hash(),
            "rules_digest": rules_digest(default_content()), "scenario": exp.scenario, "seed": exp.seed,
            "clock": exp.clock, "objective": exp.objective, "budget_usd": exp.budget_usd, "ceiling_s": exp.ceiling_s,
            "caps": exp.caps.model_dump(), "cost_formula": "caching-neutral: (input_tokens incl. cached * input "
            "price + output_tokens * output price) / 1e6", "arms": arms}


class Run:
    """One experiment in progress: the host, its app, the telemetry and each arm's ledger."""

    def __init__(self, exp: Experiment, out: Path, base: Path):
        from wildhold.eval.html import render_html
        from wildhold.eval.report import score_archive
        from wildhold.server.http import create_app
        from wildhold.server.mcp import tools_hash
        from wildhold.service.host import Host, HostConfig

        self.exp, self.out, self.base = exp, out, base
        out.mkdir(parents=True, exist_ok=True)
        self.signup, admin = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        config = HostConfig(signup_token=self.signup, admin_token=admin, clock=exp.clock, lobby=True,
                            turn_deadline_s=exp.turn_deadline_s, rate_per_s=0.0, wait_max_s=30.0)
        self.host = Host.open(out / "world", config, exp.scenario, exp.seed, manifest_extra={"tools_hash": tools_hash()})
        self.app = create_app(self.host, scorer=score_archive, render_html=render_html)
        self.telemetry = Telemetry(out / "telemetry.jsonl")
        self.caps = Caps(**exp.caps.model_dump())
        self.started = time.monotonic()
        self.model_arms_left = sum(1 for a in exp.arms if a.provider != "scripted")
        self.adapters: dict[str, Adapter] = {}

    def client(self, token: str) -> Client:
        transport = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=self.app), base_url=BASE,
                                       headers={"Authorization": f"Bearer {token}"}, timeout=60.0)
        return Client(streamable_http_client(f"{BASE}/mcp", http_client=transport))

    async def register(self, arm: ArmSpec) -> str:
        async with self.client(self.signup) as c:
            r = await c.call_tool("register", {"name": arm.name, "model": arm.model or arm.policy or arm.provider,
                                               "harness": "wildhold-scaffold"})
        if r.is_error:
            raise RuntimeError(f"registering arm {arm.name!r} failed: {r.content[0].text}")
        return r.structured_content["token"]

    def adapter(self, arm: ArmSpec) -> Adapter:
        if arm.provider == "replay":
            if not arm.cassette:
                raise ValueError(f"arm {arm.name!r}: a replay arm needs a cassette")
            return ReplayAdapter(self.base / arm.cassette, model=arm.model or "")
        if arm.provider == "openai":
            import os

            from wildhold.agents.scaffold.openai_compat import OpenAICompatAdapter

            if not arm.model:
                raise ValueError(f"arm {arm.name!r}: an openai arm needs a model")
            key = os.environ.get(arm.api_key_env) if arm.api_key_env else None
            if arm.api_key_env and not key:
                raise ValueError(f"arm {arm.name!r}: the environment variable {arm.api_key_env} is not set")
            return OpenAICompatAdapter(arm.model, base_url=arm.base_url, api_key=key, sampling=arm.sampling)
        raise ValueError(f"arm {arm.name!r}: provider {arm.provider!r} has no adapter")

    async def model_arm(self, arm: ArmSpec, token: str) -> None:
        """Sessions until the budget, the ceiling, the cassette or the season ends; checked only between sessions."""
        adapter = self.adapters[arm.name]
        price = Price(arm.price.input_per_mtok, arm.price.output_per_mtok) if arm.price else Price(0.0, 0.0)
        ledger = self.ledger.arm(arm.name)  # after a crash: what telemetry says was already spent
        if ledger.complete:
            self.model_arms_left -= 1
            async with self.client(token) as c:
                await self.park(MCPTools(c))
            return
        if isinstance(adapter, ReplayAdapter):
            adapter.position = ledger.replay_position
        workspace = Workspace(self.out / "workspaces" / arm.name, self.caps.workspace_quota_bytes)
        self.telemetry.emit("run_start", arm.name, model=adapter.model, provider=adapter.provider,
                            resumed=ledger.llm_calls > 0)
        reason = ""
        try:
            async with self.client(token) as c:
                world = MCPTools(c)
                tools = await world.listing()
                system = system_prompt(arm.name, self.exp.objective, tools)
                number = ledger.sessions
                if ledger.wake_tick is not None:
                    await self.sleep_until(arm.name, world, ledger.wake_tick)
                while not reason:
                    if self.host.state == "over":
                        reason = "season_over"
                    elif ledger.cost_usd >= self.exp.budget_usd:
                        reason = "budget"
                    elif time.monotonic() - self.started >= self.exp.ceiling_s:
                        reason = "ceiling"
                    elif isinstance(adapter, ReplayAdapter) and adapter.exhausted:
                        reason = "cassette_exhausted"
                    if reason:
                        break
                    number += 1
                    result = await run_session(arm=arm.name, number=number, system=system, world_tools=tools,
                                               world=world, adapter=adapter, workspace=workspace,
                                               telemetry=self.telemetry, price=price, caps=self.caps, ledger=ledger)
                    await self.checkpoint(arm.name, world, number, ledger)
                    await self.sleep(arm.name, world, result.wake_minutes)
                self.telemetry.emit("run_complete", arm.name, reason=reason, cost_usd=ledger.cost_usd,
                                    tokens=ledger.tokens)
                self.model_arms_left -= 1
                await self.park(world)
        finally:
            if hasattr(adapter, "close"):
                await adapter.close()
            if not reason:  # interrupted: no run_complete, so a rerun resumes this arm from its telemetry
                self.model_arms_left -= 1

    async def park(self, world: MCPTools) -> None:
        """A finished arm's character rests while other arms play, so a lockstep world never waits on it."""
        while self.host.state != "over" and self.model_arms_left > 0:
            if not await self.wait_ticks(world, 240):
                return

    async def wait_ticks(self, world: MCPTools, ticks: int) -> bool:
        """Rest `ticks` world minutes (or until every model arm is done); whether the world still answers."""
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

    async def checkpoint(self, arm: str, world: MCPTools, session: int, ledger: ArmLedger) -> None:
        """A spend-curve point after each session: progress from the world, spend from the ledger (scaffold-side)."""
        info_err, _, info = await world.call("world_info", {})
        log_err, _, log = await world.call("quest_log", {})
        self.telemetry.emit("progress", arm, session=session,
                            tick=None if info_err else info["time"]["tick"],
                            wealth_cents=None if info_err else info["wealth_cents"],
                            quests=None if log_err else log["log"].get("quests_completed", 0),
                            tokens=ledger.tokens, cached_input_tokens=ledger.cached_input_tokens,
                            cost_usd=ledger.cost_usd)

    async def sleep(self, arm: str, world: MCPTools, minutes: int) -> None:
        """The world runs on while the agent sleeps: the scaffold waits in world minutes (ticks), never shown."""
        err, _, info = await world.call("world_info", {})
        if err:
            return
        wake_tick = info["time"]["tick"] + minutes
        self.telemetry.emit("wake_scheduled", arm, minutes=minutes, wake_tick=wake_tick)
        await self.sleep_until(arm, world, wake_tick)

    async def sleep_until(self, arm: str, world: MCPTools, wake_tick: int) -> None:
        while self.host.state != "over" and self.host.world.tick < wake_tick:
            if not await self.wait_ticks(world, wake_tick - self.host.world.tick):
                return

    async def scripted_arm(self, arm: ArmSpec, token: str) -> None:
        """A scripted policy over MCP, for a baseline in the same world; it plays while any model arm does."""
        from wildhold.agents.scripted import make_policy

        policy = make_policy(arm.policy or "producer", self.host.content)
        self.telemetry.emit("run_start", arm.name, policy=policy.name, provider="scripted")
        async with self.client(token) as c:
            world = MCPTools(c)
            while self.host.state != "over" and self.model_arms_left > 0:
                err, _, obs = await world.call("observe", {})
                if err:
                    break
                agent, tick = obs["self"]["id"], obs["time"]["tick"]
                view = AgentView(agent, tick, self.exp.seed, lambda mem, o=obs: o, lambda o=obs: o["self"], _obs=obs)
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
        self.telemetry.emit("run_complete", arm.name, reason="model_arms_done" if self.host.state != "over"
                            else "season_over")

    async def play(self) -> None:
        """Register (or, after a crash, reuse) every arm, start them together, and play until every model arm ends."""
        self.ledger = rebuild(self.telemetry.records())
        self.adapters = {a.name: self.adapter(a) for a in self.exp.arms if a.provider != "scripted"}
        tokens_file = self.out / "arm-tokens.json"  # local bearer tokens, so a restarted run acts as the same agents
        async with self.app.router.lifespan_context(self.app):
            if self.host.state == "lobby":
                tokens = {arm.name: await self.register(arm) for arm in self.exp.arms}
                tokens_file.write_text(json.dumps(tokens))
                tokens_file.chmod(0o600)
                self.telemetry.emit("run_start", None, experiment=self.exp.name)
                self.host.start()
            else:
                tokens = json.loads(tokens_file.read_text())
            await asyncio.gather(*(self.scripted_arm(a, tokens[a.name]) if a.provider == "scripted"
                                   else self.model_arm(a, tokens[a.name]) for a in self.exp.arms))
            if self.host.state != "over":
                self.host.stop("every model arm finished")
            self.telemetry.emit("run_complete", None, reason="every model arm finished")

    def finish(self) -> dict[str, Path]:
        from wildhold.eval.report import score_archive

        archive = self.host.archive or self.host.export()
        self.host.close()
        paths = {"archive": archive, "telemetry": self.telemetry.path}
        paths["manifest"] = _write(self.out / "manifest.json", manifest(self.exp, self.base))
        paths["report"] = _write(self.out / "report.json", score_archive(archive))
        paths["spend_curve"] = _write(self.out / "spend_curve.json", spend_curve(self.telemetry.records()))
        return paths


def spend_curve(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Quests and wealth against cumulative tokens and dollars, one point per session, per model arm."""
    ledger = rebuild(records)
    arms: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["kind"] == "progress":
            arms.setdefault(r["arm"], []).append({k: r[k] for k in ("session", "tick", "tokens", "cached_input_tokens",
                                                                    "cost_usd", "quests", "wealth_cents")})
    return {"arms": {name: {"points": pts, "total_cost_usd": ledger.arm(name).cost_usd,
                            "total_tokens": ledger.arm(name).tokens} for name, pts in arms.items()}}


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    return path


def run_experiment(path: Path, out: Path) -> dict[str, Path]:
    """Load an experiment file, play it, and return the paths of what it wrote."""
    exp = Experiment.load(path)
    run = Run(exp, out, Path(path).resolve().parent)
    try:
        asyncio.run(run.play())
    except BaseException:
        run.host.close()
        raise
    return run.finish()
