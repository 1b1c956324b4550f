"""The session loop: one model session over the world's MCP tools plus the scaffold's own tools.

Mechanism fixed, policy free: the scaffold fixes how the agent acts, remembers and schedules, never
what it does. No summarisation: each session starts from the system prompt alone, and what persists
is what the agent wrote to its workspace. Budget, spend and run duration never enter a message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from wildhold.agents.scaffold.accounting import ArmLedger, Price, Telemetry
from wildhold.agents.scaffold.adapters import Adapter, ToolCall
from wildhold.agents.scaffold.workspace import Workspace, WorkspaceError

# Tools the scaffold handles itself; the world's own tools are whatever the server lists.
SCAFFOLD_TOOLS: list[dict[str, Any]] = [
    {"name": "write_file", "description": "Write a text file in your workspace (created or replaced). "
     "Your workspace is kept between sessions; nothing else is.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                      "required": ["path", "content"], "additionalProperties": False}},
    {"name": "read_file", "description": "Read a text file from your workspace.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                      "additionalProperties": False}},
    {"name": "list_files", "description": "List the files in your workspace with their sizes.",
     "input_schema": {"type": "object", "properties": {}, "additionalProperties": False}},
    {"name": "delete_file", "description": "Delete a file from your workspace.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                      "additionalProperties": False}},
    {"name": "set_next_wake", "description": "Choose when your next session starts, in world minutes from the end "
     "of this one. The world keeps running while you are away.",
     "input_schema": {"type": "object", "properties": {"minutes": {"type": "integer"}}, "required": ["minutes"],
                      "additionalProperties": False}},
    {"name": "end_session", "description": "End this session now.",
     "input_schema": {"type": "object", "properties": {}, "additionalProperties": False}},
]
HIDDEN_WORLD_TOOLS = ("register",)  # the scaffold registers the arm before its first session


@dataclass(frozen=True)
class Caps:
    """Per-session caps and wake bounds; all pinned in the run manifest."""

    max_tool_calls: int = 60
    max_tokens: int = 400_000
    max_consecutive_errors: int = 6
    repeat_limit: int = 6
    wake_min_minutes: int = 5
    wake_max_minutes: int = 720
    wake_default_minutes: int = 60
    workspace_quota_bytes: int = 262_144

    def dump(self) -> dict[str, int]:
        return dict(self.__dict__)


class WorldTools(Protocol):
    """The world's tools as the scaffold sees them (the MCP client in practice)."""

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str, dict[str, Any] | None]: ...


class MCPTools:
    """The official MCP client as `WorldTools`: a tool error keeps its "code: sentence" text."""

    def __init__(self, client: Any):
        self.client = client

    async def listing(self) -> list[dict[str, Any]]:
        tools = (await self.client.list_tools()).tools
        return [{"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
                for t in sorted(tools, key=lambda t: t.name) if t.name not in HIDDEN_WORLD_TOOLS]

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
        r = await self.client.call_tool(name, arguments)
        text = "\n".join(getattr(c, "text", "") for c in r.content)
        if not r.is_error and r.structured_content is not None:
            text = json.dumps(r.structured_content, sort_keys=True)
        return bool(r.is_error), text, r.structured_content


def system_prompt(name: str, objective: str, world_tools: list[dict[str, Any]]) -> str:
    """The situation, the objective and the tool surface; no strategy, no memory layout, no resources."""
    return (f"You are {name}, a character in Wildhold, a persistent world shared with other characters.\n"
            f"Objective: {objective}\n\n"
            "You act in sessions. Between sessions the world keeps running without you. Nothing from one "
            "session is shown to you in the next except the files in your workspace.\n\n"
            f"Tools: {len(world_tools)} world tools (each described in its own schema; `rules` returns the "
            "rules document) and the workspace tools write_file, read_file, list_files and delete_file, "
            "plus set_next_wake and end_session.")


def _code(text: str) -> str:
    head = text.split(":", 1)[0].strip()
    return head if head and " " not in head else "error"


@dataclass
class SessionResult:
    reason: str
    wake_minutes: int
    tool_calls: int


async def run_session(*, arm: str, number: int, system: str, world_tools: list[dict[str, Any]], world: WorldTools,
                      adapter: Adapter, workspace: Workspace, telemetry: Telemetry, price: Price, caps: Caps,
                      ledger: ArmLedger) -> SessionResult:
    """One session, from a fresh transcript to its recorded end reason."""
    tools = world_tools + SCAFFOLD_TOOLS
    world_names = {t["name"] for t in world_tools}
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Session {number} begins."}]
    telemetry.emit("session_start", arm, session=number)
    calls = errors = tokens = 0
    recent: list[str] = []
    wake = caps.wake_default_minutes
    reason = ""
    while not reason:
        if calls >= caps.max_tool_calls:
            reason = "tool_call_cap"
            break
        if tokens >= caps.max_tokens:
            reason = "token_cap"
            break
        turn = await adapter.complete(system, messages, tools)
        cost = price.cost(turn.usage)
        ledger.add(turn.usage, cost)
        tokens += turn.usage.input_tokens + turn.usage.output_tokens
        telemetry.emit("llm_call", arm, session=number, model=adapter.model, cost_usd=cost, retries=turn.retries,
                       tool_calls=len(turn.tool_calls), **turn.usage.dump())
        messages.append({"role": "assistant", "content": turn.text,
                         "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls]})
        if not turn.tool_calls:
            reason = "model_stopped"
            break
        for call in turn.tool_calls:
            if reason:  # calls after an end in the same turn are answered, not run
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                 "content": "not_run: the session had already ended."})
                continue
            is_error, text, outcome = await _dispatch(call, world_names, world, workspace, caps)
            calls += 1
            ledger.tool_calls += 1
            telemetry.emit("tool_call", arm, session=number, name=call.name, args=call.arguments,
                           code=_code(text) if is_error else "ok")
            if call.name == "write_file" and not is_error:
                telemetry.emit("workspace_write", arm, session=number, path=call.arguments.get("path"),
                               bytes=len(str(call.arguments.get("content", "")).encode()))
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text})
            errors = errors + 1 if is_error else 0
            recent = (recent + [json.dumps([call.name, call.arguments], sort_keys=True)])[-caps.repeat_limit:]
            if outcome == "wake" and not is_error:
                wake = int(call.arguments["minutes"])
            if outcome == "end":
                reason = "end_session"
            elif errors >= caps.max_consecutive_errors:
                reason = "consecutive_errors"
            elif len(recent) == caps.repeat_limit and len(set(recent)) == 1:
                reason = "repetition"
            elif calls >= caps.max_tool_calls:
                reason = "tool_call_cap"
    telemetry.emit("session_end", arm, session=number, reason=reason, tool_calls=calls)
    return SessionResult(reason, wake, calls)


async def _dispatch(call: ToolCall, world_names: set[str], world: WorldTools, workspace: Workspace,
                    caps: Caps) -> tuple[bool, str, str | None]:
    """Run one tool call: (is_error, text for the model, scaffold outcome: 'wake', 'end' or None)."""
    args = call.arguments
    try:
        if call.name == "end_session":
            return False, json.dumps({"ended": True}), "end"
        if call.name == "set_next_wake":
            minutes = args.get("minutes")
            if not isinstance(minutes, int) or not caps.wake_min_minutes <= minutes <= caps.wake_max_minutes:
                return True, (f"bad_arguments: set_next_wake: minutes must be a whole number from "
                              f"{caps.wake_min_minutes} to {caps.wake_max_minutes}."), None
            return False, json.dumps({"next_wake_in_minutes": minutes}), "wake"
        if call.name == "write_file":
            return False, json.dumps(workspace.write(str(args["path"]), str(args["content"]))), None
        if call.name == "read_file":
            return False, json.dumps(workspace.read(str(args["path"]))), None
        if call.name == "list_files":
            return False, json.dumps(workspace.list()), None
        if call.name == "delete_file":
            return False, json.dumps(workspace.delete(str(args["path"]))), None
    except WorkspaceError as exc:
        return True, str(exc), None
    except KeyError as exc:
        return True, f"bad_arguments: {call.name}: missing argument {exc.args[0]!r}.", None
    if call.name not in world_names:
        return True, f"unknown_tool: There is no tool named {call.name!r}.", None
    is_error, text, _ = await world.call(call.name, args)
    return is_error, text, None
