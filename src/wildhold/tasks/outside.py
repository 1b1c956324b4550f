"""An outside agent's attempt at a task: the task served on 127.0.0.1 (HTTP API and MCP, and the metering proxy
when a proxy file is given), the agent's own command run against it, and the archive scored like any player's.

The command runs in a fresh process group with WILDHOLD_MCP_URL, WILDHOLD_HTTP_URL, WILDHOLD_TOKEN,
WILDHOLD_OBJECTIVE (the task's description) and WILDHOLD_MCP_CONFIG (an MCP client config file naming the
server and token) in its environment; with a proxy, OPENAI_BASE_URL / ANTHROPIC_BASE_URL and their API keys
point its model calls through the meter. The clock is the task's own: on lockstep the world waits for the agent
(up to the turn deadline each tick), so its thinking costs no world time. The attempt ends when the task is done,
at its limits (world minutes; turns, which for an outside agent are the actions it submits itself, accepted or
refused: reads, waits on operations and its programs' actions are not turns), at the wall-clock ceiling, or when
the command exits (once the operation it left running finishes). The command's process group is then ended:
SIGTERM, and SIGKILL after the grace period."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wildhold.content import Content
from wildhold.service.host import Host
from wildhold.service.match import Match
from wildhold.store.private import write_private
from wildhold.store.sqlite import Input
from wildhold.tasks.attempt import AGENT_NAME, score_archive
from wildhold.tasks.served import ServedTask
from wildhold.tasks.spec import Task

HARNESS = "agent-cmd"  # the harness an outside agent is labelled with unless --harness names its own
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@/+-]{0,99}")
POLL_S = 0.05  # how often the runner looks at the command and the match


@dataclass(frozen=True)
class AgentCommand:
    """An outside agent: the shell command that runs it, the labels of its arm (harness, model), the proxy file
    metering its model calls, and the limits the runner holds it to."""

    command: str
    harness: str = HARNESS
    model: str | None = None
    proxy: str | None = None  # a proxy file (agents.proxy): upstreams, pinned prices, a budget per attempt
    turn_deadline_s: float = 60.0  # lockstep: the longest one tick waits for the agent
    ceiling_s: float = 1800.0  # wall-clock seconds an attempt may last
    grace_s: float = 5.0  # between SIGTERM and SIGKILL
    tools: str = "full"  # the MCP tool profile it is served (service.access.TOOL_PROFILES)

    def __post_init__(self) -> None:
        if not self.command.strip():
            raise ValueError("the agent command is empty")
        for what, value in (("harness", self.harness), ("model", self.model)):
            if value is not None and not LABEL.fullmatch(value):
                raise ValueError(f"--{what} {value!r}: a label of 1 to 100 letters, digits and _ . : @ / + -, "
                                 "starting with a letter or digit")
        from wildhold.service.access import TOOL_PROFILES

        if self.tools not in TOOL_PROFILES:
            raise ValueError(f"--tools {self.tools!r}: one of {', '.join(TOOL_PROFILES)}")
        if self.turn_deadline_s <= 0 or self.ceiling_s <= 0 or self.grace_s < 0:
            raise ValueError("the turn deadline and the ceiling must be positive, the grace period not negative")

    @property
    def player(self) -> str:
        """The name its results are filed under: harness/model, or the harness alone."""
        return f"{self.harness}/{self.model}" if self.model else self.harness

    def identity(self, clock: str, tick_seconds: float, tools: str, prices: str | None) -> dict[str, Any]:
        """What makes this arm the configuration it is (the archive binds it): the harness, model and command, the
        clock it was held to, the tool surface it was served and the price table its spend was metered at."""
        ident: dict[str, Any] = {"harness": self.harness, "provider": HARNESS, "model": self.model,
                                 "agent_cmd": self.command, "clock": clock, "tools": self.tools, "tools_hash": tools,
                                 "ceiling_s": self.ceiling_s, "price_table_sha256": prices}
        ident.update({"turn_deadline_s": self.turn_deadline_s} if clock == "lockstep" else {"tick_seconds": tick_seconds})
        return {k: v for k, v in ident.items() if v is not None}


class Turns:
    """The agent's turns: the actions it submits itself (accepted or refused), as the log records them. Once its
    turns are spent and its last action has finished, the attempt is over."""

    def __init__(self, match: Match, agent: str, limit: int):
        self.match, self.agent, self.limit, self.count = match, agent, limit, 0
        kept = match.on_ack

        def count(inp: Input) -> None:
            if kept is not None:
                kept(inp)
            if inp.kind == "action" and inp.agent == agent and inp.issuer == "direct":
                self.count += 1

        match.on_ack = count

    def over(self) -> str | None:
        if self.count >= self.limit and self.match.world.chars[self.agent].op is None:
            return "turn limit"
        return None


def run_outside_attempt(task: Task, agent: AgentCommand, repeat: int, out: Path, content: Content, *, name: str,
                        clock: str | None = None, tick_seconds: float = 1.0) -> dict[str, Any]:
    """Play one attempt of the outside agent and write `out/NAME.wha` (its command's output in `out/NAME.agent.log`);
    the live result. The match plays in `out/NAME.work/`, removed once the archive is in place; an attempt cut
    short is played again from the start."""
    from wildhold.agents.proxy import ProxySpec
    from wildhold.agents.scaffold.accounting import price_table_id
    from wildhold.server.mcp import tools_hash
    from wildhold.service.access import HostConfig

    clock = clock or task.clock
    work = out / f"{name}.work"
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    spec = ProxySpec.load(Path(agent.proxy)) if agent.proxy else None
    tools = tools_hash(horizon="visible", profile=agent.tools)
    extra: dict[str, Any] = {"tools_hash": tools, "task": task.id, "policy": agent.player, "repeat": repeat,
                             "objective": task.description, "agent_cmd": agent.command, "turns_counted": "actions"}
    prices = None
    if spec is not None:
        prices = price_table_id(spec.price_table())
        extra |= {"price_table": spec.price_table(), "price_table_sha256": prices, "proxy_budget_usd": spec.budget_usd}
    extra["arm_identities"] = {AGENT_NAME: agent.identity(clock, tick_seconds, tools, prices)}
    config = HostConfig(signup_token=secrets.token_urlsafe(24), admin_token=secrets.token_urlsafe(24), clock=clock,
                        lobby=True, tick_seconds=tick_seconds, turn_deadline_s=agent.turn_deadline_s, wait_max_s=30.0,
                        tools=agent.tools)
    host = Host.open(work / "world", config, task.scenario, task.seeds.seed(repeat), content, manifest_extra=extra)
    served = ServedTask(host, task, content, repeat, agent.player)
    log = out / f"{name}.agent.log"
    try:
        asyncio.run(_play(host, served, agent, spec, work, log))
        archive = host.archives.path or host.archives.export()
    finally:
        host.close()
    path = out / f"{name}.wha"
    os.replace(archive, path)
    shutil.rmtree(work, ignore_errors=True)
    return score_archive(path, content, live=served.tracker)


async def _play(host: Host, served: ServedTask, agent: AgentCommand, spec: Any, work: Path, log: Path) -> None:
    """Serve the match, register the agent, set the task up, run the command until the attempt ends, stop it."""
    from wildhold.agents.scaffold.loopback import Loopback
    from wildhold.eval.html import render_html
    from wildhold.eval.report import score_archive as report
    from wildhold.server.http import create_app

    app = create_app(host, scorer=report, render_html=render_html)
    if spec is not None:
        from wildhold.agents.proxy import proxy_app

        app.mount("/proxy", proxy_app(host, spec))
    async with Loopback(app) as server:
        token, record = host.register(AGENT_NAME, {"model": agent.model or "", "harness": agent.harness})
        host.start()
        character = record.agent
        assert character is not None
        start = served.begin(character)
        if "task_error" in start:
            return
        served.limit = Turns(host.match, character, served.task.limits.turns).over
        env = _environment(server.url, token, served.task.description, spec, work)
        with open(log, "wb", opener=lambda p, f: os.open(p, f, 0o600)) as sink:
            proc = await asyncio.create_subprocess_shell(agent.command, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                         stdout=sink, stderr=asyncio.subprocess.STDOUT,
                                                         start_new_session=True)
            try:
                reason = await _watch(host, proc, character, agent.ceiling_s)
            finally:
                await _end_group(proc, agent.grace_s)
        if reason == "agent exited" and proc.returncode:
            host.archives.manifest_extra["agent_error"] = (f"the agent's command exited with status {proc.returncode} "
                                                           f"(its output: {log.name})")
        if host.state != "over":
            host.stop(reason)


def _environment(url: str, token: str, objective: str, spec: Any, work: Path) -> dict[str, str]:
    """The command's environment: this process's, the attempt's variables, an MCP client config file, and the
    proxy's base URLs with the agent's token as the API key when its model calls are metered."""
    config = {"mcpServers": {"wildhold": {"type": "http", "url": f"{url}/mcp",
                                          "headers": {"Authorization": f"Bearer {token}"}}}}
    mcp_config = write_private(work / "mcp.json", json.dumps(config, indent=1).encode())
    env = dict(os.environ, WILDHOLD_MCP_URL=f"{url}/mcp", WILDHOLD_HTTP_URL=url, WILDHOLD_TOKEN=token,
               WILDHOLD_OBJECTIVE=objective, WILDHOLD_MCP_CONFIG=str(mcp_config))
    if spec is not None and spec.openai is not None:
        env |= {"OPENAI_BASE_URL": f"{url}/proxy/openai/v1", "OPENAI_API_KEY": token}
    if spec is not None and spec.anthropic is not None:
        env |= {"ANTHROPIC_BASE_URL": f"{url}/proxy/anthropic", "ANTHROPIC_API_KEY": token}
    return env


async def _watch(host: Host, proc: asyncio.subprocess.Process, character: str, ceiling_s: float) -> str:
    """Wait until the match is over, the command exits or the ceiling passes; why the attempt ends. A command that
    exits leaves its running operation to finish first, as a player out of turns does."""
    deadline = time.monotonic() + ceiling_s
    exited = asyncio.ensure_future(proc.wait())
    try:
        while host.state != "over":
            if time.monotonic() >= deadline:
                return "wall-clock ceiling"
            if exited.done() and host.world.chars[character].op is None:
                return "agent exited"
            await asyncio.wait({exited}, timeout=POLL_S)
        return "over"
    finally:
        if not exited.done():
            exited.cancel()


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _end_group(proc: asyncio.subprocess.Process, grace_s: float) -> None:
    """End the command and everything it started in its process group: SIGTERM, then SIGKILL to whatever is left
    after `grace_s`. The group outlives its leader while any child of it lives, so both are waited for."""
    group = proc.pid
    _signal(group, signal.SIGTERM)
    until = time.monotonic() + grace_s
    while time.monotonic() < until and (proc.returncode is None or _alive(group)):
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), POLL_S)
        except TimeoutError:
            pass
    _signal(group, signal.SIGKILL)
    await proc.wait()
