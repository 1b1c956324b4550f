"""The task suite in Inspect AI, the same benchmark as `wildhold tasks run`: one sample per task of a selection
(lite, full or task ids), each epoch an attempt's repeat (epoch e plays repeat e-1, at the seed `tasks run
--repeats` gives it). An attempt is set up as `tasks run` sets one up (`begin_task` marks the task, repeat and
player in the chained log), served on 127.0.0.1, and played over the world's MCP tools under the task's limits
and the attempt's turn rule (`tasks.attempt.Turns`: the world waits while the player decides, each reply is a
turn, a model's turns are its calls); it ends at success. Its archive is written where `tasks run` would write
a named player's (`OUT/TASK__PLAYER__rR.wha`), so `wildhold tasks score OUT` verifies and tables it, and the
scorer reads the result from that archive alone.

A scripted policy may play instead of the model (`player`): its decisions become tool calls that Inspect sends
over the same MCP connection, so its attempt is the one `tasks run --agent POLICY` plays, chain head included.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ModelUsage, execute_tools
from inspect_ai.scorer import Metric, Score, Target, grouped, mean, metric, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolCall, ToolCallError, ToolDef, ToolError, mcp_connection, mcp_server_http
from inspect_ai.util import LimitExceededError

from wildhold.agents.base import Policy
from wildhold.agents.client import LocalClient
from wildhold.agents.scaffold.accounting import Price, price_table_id
from wildhold.agents.scaffold.adapters import Usage
from wildhold.agents.scaffold.loopback import Loopback
from wildhold.content import default_content
from wildhold.service.access import TOOL_PROFILES, HostConfig
from wildhold.service.host import Host
from wildhold.tasks.attempt import AGENT_NAME, Turns, begin_task, score_archive
from wildhold.tasks.catalog import default_suite
from wildhold.tasks.evaluate import Tracker
from wildhold.tasks.spec import Task
from wildhold.tasks.suite import Player, archive_name, policy_for
from wildhold.world.world import World

HARNESS = "inspect_ai"
ARCHIVE = "wildhold_archive"  # the sample's store key for its attempt's archive
PLAYER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
WAIT_IN_TURN_S = 0.05  # the world stands still during a turn, so a wait inside one can only time out: at once

# What the model is told of the turn rule (the task's description is the sample's input, as `tasks run` gives it).
RULES = {
    "lockstep": "You play one character in a Wildhold world through its tools. The world waits while you think: each "
                "reply of yours is one turn; after it at least one minute of world time passes, and your next turn "
                "comes when your character is free again. A reply that calls no tool ends your attempt.",
    "realtime": "You play one character in a Wildhold world through its tools. The world runs on while you think "
                "(a minute for every {tick_seconds:g} s): each reply of yours is one turn; after it at least one "
                "minute passes, and your next turn comes when your character is free again. A reply that calls no "
                "tool ends your attempt.",
}


@metric
def category() -> Metric:
    """The mean per task category (`category_farming`, ...)."""
    return grouped(mean(), "category", all=False)


@metric
def difficulty() -> Metric:
    """The mean per difficulty (`difficulty_easy`, ...)."""
    return grouped(mean(), "difficulty", all=False)


METRICS = [mean(), stderr(), category(), difficulty()]  # over all, then per category and per difficulty


def samples(suite: str) -> list[Sample]:
    """One sample per task of `suite` (`lite`, `full`, or task ids separated by commas, as `tasks run --suite`)."""
    tasks = default_suite()
    try:
        chosen = tasks.select([name for name in str(suite).split(",") if name])
    except KeyError as exc:
        raise ValueError(f"unknown_task: {exc.args[0]}") from None
    return [Sample(id=t.id, input=t.description, metadata={"task": t.id, "category": t.category,
                                                            "difficulty": t.difficulty}) for t in chosen]


def player_name(model: str) -> str:
    """The name a model's attempts are marked with (the table's row, part of each archive's name)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", model).strip("-.")[:64] or "model"


def checked_name(name: str) -> str:
    if not PLAYER_NAME.fullmatch(name):
        raise ValueError(f"bad_player_name: {name!r}: a player's name takes letters, digits, '_', '-' and '.' (not "
                         "first), at most 64; it is written into archive names")
    return name


@dataclass
class Spend:
    """A model's calls in one attempt, recorded in its archive as one session (as `tasks run` records a model
    arm's), so its turns, tokens and dollars are read from the archive alone."""

    model: str
    price: Price
    tools: str = "full"  # the MCP tool profile it is handed
    calls: int = 0
    usage: ModelUsage = field(default_factory=ModelUsage)

    def add(self, usage: ModelUsage | None) -> None:
        self.calls += 1
        self.usage = self.usage + (usage or ModelUsage())

    def manifest(self, who: str, task: Task) -> dict[str, Any]:
        """What the archive's manifest says of a model player, as it says it of a model arm, by its character's
        name: its identity and the price table its spend is priced by (`tasks score` reads turns, tokens and
        dollars from a model's)."""
        from wildhold.server.mcp import tools_hash

        table = {AGENT_NAME: {"provider": "inspect", "model": self.model, **self.price.dump()}}
        return {"tools_hash": tools_hash(horizon="hidden", profile=self.tools), "price_table": table,
                "price_table_sha256": price_table_id(table), "objective": task.description,
                "arm_identities": {AGENT_NAME: {"provider": "inspect", "model": self.model, "policy": who,
                                                "harness": HARNESS, "tools": self.tools}}}

    def record(self, table: str) -> dict[str, Any]:
        cached = self.usage.input_tokens_cache_read or 0
        used = Usage(input_tokens=self.usage.input_tokens + cached + (self.usage.input_tokens_cache_write or 0),
                     cached_input_tokens=cached, output_tokens=self.usage.output_tokens)
        return {"session": 1, "model": self.model, "llm_calls": self.calls, **used.dump(),
                "cost_usd": self.price.cost(used), "price": self.price.dump(), "price_table": table}


@dataclass
class Served:
    """An attempt set up in a served world: its host, character and bearer token, the loopback server's URL, and
    the task's tracker (None when the set-up failed: the task's fault, scored as an error)."""

    task: Task
    host: Host
    agent: str
    token: str
    url: str
    tracker: Tracker | None


@asynccontextmanager
async def served(task: Task, repeat: int, who: str, joined: dict[str, str], extra: dict[str, Any], clock: str,
                 tick_seconds: float, path: Path, tools: str = "full") -> AsyncIterator[Served]:
    """Set the attempt up as `tasks run` does (`begin_task`, marked for `who`) in a world served on loopback whose
    clock the attempt's turns drive, not the served one; on a clean exit end it and write its archive to `path`
    (an attempt that failed otherwise leaves none)."""
    from wildhold.server.http import create_app

    work = path.with_suffix(".work")
    shutil.rmtree(work, ignore_errors=True)
    content, seed = default_content(), task.seeds.seed(repeat)
    config = HostConfig(signup_token=secrets.token_urlsafe(24), admin_token=secrets.token_urlsafe(24), clock=clock,
                        tick_seconds=tick_seconds, lobby=True, rate_per_s=0.0,
                        idle_after_ticks=task.limits.ticks + 1,  # never away: the world waits for it every turn
                        wait_max_s=WAIT_IN_TURN_S, tools=tools)
    host = Host.open(work / "world", config, task.scenario, seed, horizon="hidden", manifest_extra=extra)
    host.season_ends = False  # a set-up may start past the season's end: only the task's limits end an attempt
    try:
        token, record = host.register(AGENT_NAME, joined)
        async with Loopback(create_app(host)) as server:
            await host.clock.stop()
            host.start()
            agent = record.agent
            assert agent is not None
            with host.changing():
                begun = begin_task(host.match, agent, task, repeat, who)
            host.archives.manifest_extra.update(begun.start)
            tracker = begun.tracker(task, content, seed, agent)
            if tracker is not None:
                host.match.also_follow(tracker.records)  # the task's evaluator, beside whoever follows already
            yield Served(task, host, agent, token, server.url, tracker)
        host.stop("task over")
        os.replace(host.archives.path or host.archives.export(), path)
    finally:
        host.close()
        shutil.rmtree(work, ignore_errors=True)


@solver
def attempt(out: str, player: str | None = None, name: str | None = None, clock: str | None = None,
            tick_seconds: float = 1.0, input_per_mtok: float = 0.0, output_per_mtok: float = 0.0, tools: str = "full"):
    """Play the sample's task at its epoch's repeat and write its archive into `out`.

    `player`: a scripted policy (as `tasks run --agent`) plays instead of the model. `name`: the player's name
    in the log's mark and the table (the policy's, or the model's with other characters than letters, digits,
    '_', '-' and '.' made '-'). `clock` overrides the task's; `tick_seconds` is realtime's wall-clock seconds
    per world minute. A model's dollars are priced at `input_per_mtok` and `output_per_mtok` (dollars per
    million tokens, every input token at the input rate, as `tasks run` prices a model arm). `tools`: the MCP tool
    profile a model is handed (full or compact), recorded in its identity."""
    if tools not in TOOL_PROFILES:
        raise ValueError(f"bad_tools: {tools!r}; a tool profile is one of {', '.join(TOOL_PROFILES)}")
    if player is not None:
        check_player(player)
    if name is not None:
        checked_name(name)
    if clock not in (None, *RULES):
        raise ValueError(f"bad_clock: {clock!r}; a task attempt's clock is lockstep or realtime")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = default_suite().get(state.metadata["task"])
        repeat, model = state.epoch - 1, str(state.model)
        who = name or player or player_name(model)  # a scripted player's is its policy's, as in `tasks run`
        Path(out).mkdir(parents=True, exist_ok=True)
        path = Path(out) / f"{archive_name(task, repeat, Player(who), True)}.wha"
        want = clock or task.clock
        state.store.set(ARCHIVE, str(path))
        if path.exists():  # a finished attempt (a retried eval): read again, never played twice
            result = score_archive(path, default_content())
            if result["policy"] != who or result["clock"] != want:
                raise ValueError(f"attempt_exists: {path} is an attempt by {result['policy']} under the "
                                 f"{result['clock']} clock, not by {who} under the {want} clock: use another out")
            return state
        extra: dict[str, Any] = {"task": task.id, "policy": who, "repeat": repeat}
        if player is not None:
            async with served(task, repeat, who, {"policy": who}, extra, want, tick_seconds, path) as s:
                if s.tracker is not None:
                    policy = policy_for(player, task, default_content())
                    broke = await _play(s, state, want, tick_seconds, _scripted(policy, s.host.world, s.agent))
                    if broke is not None:
                        s.host.archives.manifest_extra["agent_error"] = broke
            return state
        spend = Spend(model, Price(input_per_mtok, output_per_mtok), tools)
        extra.update(spend.manifest(who, task))
        state.messages.insert(0, ChatMessageSystem(content=RULES[want].format(tick_seconds=tick_seconds)))
        async with served(task, repeat, who, {"policy": who, "model": model, "harness": HARNESS}, extra, want,
                          tick_seconds, path, tools) as s:
            if s.tracker is not None:
                await _play(s, state, want, tick_seconds, _model(generate, spend))
            if spend.calls:
                s.host.record_spend(s.agent, spend.record(extra["price_table_sha256"]))
        return state

    return solve


Turn = Callable[[TaskState, Turns], Awaitable["str | None"]]  # one turn: None to go on, or why the attempt ends


async def _play(s: Served, state: TaskState, clock: str, tick_seconds: float, turn: Turn) -> str | None:
    """Hand Inspect the world's MCP tools, as an outside client gets them, and take turns by the attempt's rule
    (`Turns`) until it is over; why it ended early, when a turn said."""
    assert s.tracker is not None
    world = mcp_server_http(name="wildhold", url=f"{s.url}/mcp", headers={"Authorization": f"Bearer {s.token}"})
    async with mcp_connection([world]):
        state.tools = list(await world.tools())
        host, agent = s.host, s.agent
        turns = Turns(host.world, s.task, s.tracker, host.clock.step, lambda: host.world.chars[agent].op is None, clock,
                      tick_seconds)
        try:
            while turns.going() and s.host.state == "running" and not state.completed:
                if turns.due() and (ended := await turn(state, turns)) is not None:
                    return ended
                if not turns.advance():
                    break
        except LimitExceededError:
            pass  # one of Inspect's own limits (`--time-limit`, ...) ended the attempt: it is scored as it stands
    return None


def _model(generate: Generate, spend: Spend) -> Turn:
    """Inspect's model plays: each call is a turn, its tool calls go to the world over MCP; a reply without one
    ends the attempt."""

    async def turn(state: TaskState, turns: Turns) -> str | None:
        started = time.perf_counter()
        output = (await generate(state, tool_calls="none")).output
        turns.took()
        spend.add(output.usage)
        if not output.message.tool_calls:
            return "the model stopped"
        if turns.thought(time.perf_counter() - started):
            state.messages.extend((await execute_tools(state.messages, state.tools)).messages)
        return None

    return turn


def _scripted(policy: Policy, world: World, agent: str) -> Turn:
    """A scripted policy plays as `tasks run --agent` plays it (`attempt.play`), seeing what its client shows it,
    each decision sent as it is to the world's MCP tool over Inspect's connection (not through Inspect's check of
    a model's arguments: a malformed call reaches the world and is refused there, as in `tasks run`), the call and
    its answer kept in the transcript; a policy that breaks ends the attempt, saying how."""
    client = LocalClient(world)
    tools: dict[str, Any] = {}

    async def turn(state: TaskState, turns: Turns) -> str | None:
        tools.update(tools or {ToolDef(t).name: t for t in state.tools})
        started = time.perf_counter()
        try:
            decision = policy.decide(client.view(agent, policy))
        except Exception as exc:  # a player that breaks fails its own attempt, as in `tasks run`
            return f"{type(exc).__name__}: {exc}"[:500]
        if turns.thought(time.perf_counter() - started) and decision is not None:
            name, args = decision
            call = ToolCall(id=f"call{turns.turns + 1}", function=name, arguments=args)
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[call], model=policy.name))
            try:
                answer, error = await tools[name](**args), None
            except ToolError as exc:
                answer, error = "", ToolCallError("unknown", exc.message)
            state.messages.append(ChatMessageTool(content=answer if isinstance(answer, (str, list)) else str(answer),
                                                  tool_call_id=call.id, function=name, error=error))
            turns.took()
        return None

    return turn


def check_player(player: str) -> str:
    """A scripted player `tasks run --agent` takes (oracle, oracle-eps:E, or a scripted policy)."""
    from wildhold.agents.scripted import POLICIES
    from wildhold.tasks.graded import parse_eps

    if player != "oracle" and parse_eps(player) is None and player not in POLICIES:
        raise ValueError(f"unknown_player: {player!r}; known: oracle, oracle-eps:E (the graded player), "
                         f"{', '.join(POLICIES)}")
    return player


@scorer(metrics={"success": METRICS, "progress": METRICS})
def attempt_score():
    """The attempt's result from its archive alone (`tasks.attempt.score_archive`, as `tasks score` reads it):
    success and progress, with their means per category, per difficulty and over all."""

    async def score(state: TaskState, target: Target) -> Score:
        path = Path(state.store.get(ARCHIVE))
        if not path.exists():  # cancelled mid-attempt (an Inspect time limit): no archive, nothing to score
            return Score(value={"success": math.nan, "progress": math.nan}, answer="unplayed",
                         explanation=f"the attempt was cut short before its archive ({path}) was written: unscored")
        result = score_archive(path, default_content())
        if result["status"] == "error":  # the task's set-up failed, not the player: unscored, as `tasks run` leaves it out
            value = {"success": math.nan, "progress": math.nan}
            said = result["error"]
        else:
            value = {"success": float(result["status"] == "success"), "progress": float(result["progress"])}
            said = result.get("agent_error") or (f"{result['status']} at progress {value['progress']:.2f} in "
                                                 f"{result['turns']} turns and {result['ticks']} ticks")
        return Score(value=value, answer=result["status"], explanation=said,
                     metadata={"archive": str(path), "chain_head": result["chain_head"], "result": result})

    return score
