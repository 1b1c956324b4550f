"""The session loop: one model session over the world's MCP tools plus the scaffold's own tools.

Mechanism fixed, policy free: the scaffold fixes how the agent acts, remembers and schedules, never
what it does. No summarisation: each session starts from the system prompt alone, and what persists
is what the agent wrote to its workspace. Budget, spend and run duration never enter a message.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from pydantic import ConfigDict

from wildhold.agents.scaffold.accounting import ArmLedger, Price, Telemetry
from wildhold.agents.scaffold.adapters import Adapter, CannotContinue, ToolCall
from wildhold.agents.scaffold.workspace import Workspace, WorkspaceError
from wildhold.server.surface import compact_call

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
# What an experiment's `observation` shows the model when it observes: the observation as text, its view as an
# image (the text less its view section, plus the `view_image` picture), or both.
OBSERVATIONS = ("text", "image", "both")
DESIGN_TOOLS = ("rules",)  # the world's tools that return the design document (withheld under `design_withheld`)


@dataclass(frozen=True)
class Caps:
    """Per-session caps and wake bounds; all pinned in the run manifest. An experiment file's `caps` is
    validated as this class (an unknown key is refused)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

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
    """The official MCP client as `WorldTools`: a tool error keeps its "code: sentence" text. Under the compact tool
    profile a call of a full-profile tool (the scaffold's own: wait, world_info, view_image...) goes through the
    compact tool that serves it; a model's calls are only ever of the tools listed to it."""

    def __init__(self, client: Any, profile: str = "full"):
        self.client = client
        self.profile = profile
        self.read_only: frozenset[str] = frozenset()  # tools the server marks read-only, known after `listing`

    async def listing(self) -> list[dict[str, Any]]:
        tools = [t for t in (await self.client.list_tools()).tools if t.name not in HIDDEN_WORLD_TOOLS]
        self.read_only = frozenset(t.name for t in tools if t.annotations and t.annotations.read_only_hint)
        return [{"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
                for t in sorted(tools, key=lambda t: t.name)]

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
        if self.profile == "compact":
            name, arguments = compact_call(name, arguments)
        r = await self.client.call_tool(name, arguments)
        text = "\n".join(getattr(c, "text", "") for c in r.content)
        if not r.is_error and r.structured_content is not None:
            text = json.dumps(r.structured_content, sort_keys=True)
        return bool(r.is_error), text, r.structured_content


def system_prompt(name: str, objective: str, world_tools: list[dict[str, Any]]) -> str:
    """The situation, the objective and the tool surface; no strategy, no memory layout, no resources. The
    rules document is named only when its tool is among the world's tools."""
    rules = "; `rules` returns the rules document" if any(t["name"] == "rules" for t in world_tools) else ""
    return (f"You are {name}, a character in Wildhold, a persistent world shared with other characters.\n"
            f"Objective: {objective}\n\n"
            "You act in sessions. Between sessions the world keeps running without you. Nothing from one "
            "session is shown to you in the next except the files in your workspace.\n\n"
            f"Tools: {len(world_tools)} world tools (each described in its own schema{rules}) and the workspace "
            "tools write_file, read_file, list_files and delete_file, plus set_next_wake and end_session.")


def _code(text: str) -> str:
    head = text.split(":", 1)[0].strip()
    return head if head and " " not in head else "error"


INTERRUPTED = ("interrupted: The connection was lost before this call's result arrived; it may or may not "
               "have taken effect.")
NOT_RUN = "not_run: the session had already ended."


@dataclass
class SessionResult:
    reason: str
    wake_minutes: int
    tool_calls: int


@dataclass
class SessionState:
    """Where one session stands: its transcript and what its caps and breakers count.

    Built fresh when a session starts, or rebuilt from telemetry (`resume`) when a crash cut a
    session short, so the resumed session goes on from exactly the transcript the model had seen.
    `unanswered` holds the last turn's tool calls that have no result yet.
    """

    number: int
    wake: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    errors: int = 0
    tokens: int = 0
    recent: list[str] = field(default_factory=list)
    unanswered: list[ToolCall] = field(default_factory=list)
    reason: str = ""

    @classmethod
    def fresh(cls, number: int, caps: Caps, note: str = "") -> SessionState:
        """A new session's transcript: its opening line, and the scaffold profile's `note` after it when it has one."""
        opening = f"Session {number} begins." + (f" {note}" if note else "")
        return cls(number, caps.wake_default_minutes, [{"role": "user", "content": opening}])

    @classmethod
    def resume(cls, records: list[dict[str, Any]], arm: str, caps: Caps) -> SessionState | None:
        """The arm's session that started but never ended, replayed from its telemetry; None when there is none."""
        state: SessionState | None = None
        for r in records:
            if r.get("arm") != arm:
                continue
            kind = r["kind"]
            if kind == "session_start":
                state = cls.fresh(r["session"], caps, r.get("note", ""))
            elif kind == "session_end":
                state = None
            elif state is not None and kind == "llm_call":
                calls = [ToolCall(c["id"], c["name"], c["arguments"]) for c in r.get("calls", [])]
                state.on_turn(r.get("text", ""), calls, r["input_tokens"] + r["output_tokens"])
            elif state is not None and kind == "tool_call":
                call = next((c for c in state.unanswered if c.id == r.get("id")), None)
                if call is not None:
                    state.on_result(call, r["code"] != "ok", r.get("result", ""), caps, r.get("images", []))
        return state

    def on_turn(self, text: str, calls: list[ToolCall], tokens: int) -> None:
        self.tokens += tokens
        self.messages.append({"role": "assistant", "content": text,
                              "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]})
        self.unanswered = list(calls)
        if not calls:
            self.reason = "model_stopped"

    def on_result(self, call: ToolCall, is_error: bool, text: str, caps: Caps,
                  images: list[dict[str, str]] | None = None) -> None:
        """A call's result joins the transcript (with the images it carries, each {mime, data}: base64); the caps and
        breakers decide whether the session ends."""
        self.unanswered.remove(call)
        self.calls += 1
        message: dict[str, Any] = {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text}
        if images:
            message["images"] = list(images)
        self.messages.append(message)
        self.errors = self.errors + 1 if is_error else 0
        self.recent = (self.recent + [json.dumps([call.name, call.arguments], sort_keys=True)])[-caps.repeat_limit:]
        if call.name == "set_next_wake" and not is_error:
            self.wake = int(call.arguments["minutes"])
        if call.name == "end_session":
            self.reason = "end_session"
        elif self.errors >= caps.max_consecutive_errors:
            self.reason = "consecutive_errors"
        elif len(self.recent) == caps.repeat_limit and len(set(self.recent)) == 1:
            self.reason = "repetition"
        elif self.calls >= caps.max_tool_calls:
            self.reason = "tool_call_cap"

    def skip(self, call: ToolCall) -> None:
        """A call after the session ended in the same turn: answered, never run."""
        self.unanswered.remove(call)
        self.messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": NOT_RUN})


async def run_session(*, arm: str, number: int, system: str, world_tools: list[dict[str, Any]], world: WorldTools,
                      adapter: Adapter, workspace: Workspace, telemetry: Telemetry, price: Price, caps: Caps,
                      ledger: ArmLedger, resumed: SessionState | None = None,
                      repeatable: frozenset[str] = frozenset(), observation: str = "text",
                      stop: Callable[[], str] | None = None, clock: Callable[[], int | None] | None = None,
                      note: str = "") -> SessionResult:
    """One session, from a fresh transcript (or the one a crash interrupted) to its recorded end reason.

    `repeatable` names the world tools that only read (the server marks them read-only): after a crash,
    a call of the interrupted turn that has no recorded result runs again if it only reads or is a
    scaffold tool; any other is answered as interrupted, since the world may already have done it.
    `stop`, looked at before every model call, names a reason to end the session there ('' to go on).
    `clock` reads the world's tick, recorded with the session's start, each tool call and its end. `note`
    follows a fresh session's opening line (a scaffold profile's: the budget-visible arm's budget and spend);
    it is recorded with the session's start, so a resumed session sees the transcript it saw.
    A provider's failed attempts (the adapter's `interruptions`) are recorded with the turn they delayed;
    a failure that ends the arm is recorded (`provider_error`) before it is raised.
    """
    tools = world_tools + SCAFFOLD_TOOLS
    world_names = {t["name"] for t in world_tools}
    safe = repeatable | {t["name"] for t in SCAFFOLD_TOOLS}
    state = resumed or SessionState.fresh(number, caps, note)
    tick = clock or (lambda: None)
    if resumed is None:
        ledger.sessions += 1
        telemetry.emit("session_start", arm, session=number, tick=tick(), **({"note": note} if note else {}))
    else:
        telemetry.emit("session_resumed", arm, session=number, unanswered=len(state.unanswered), tick=tick())

    async def answer(after_crash: bool) -> None:
        for call in list(state.unanswered):
            if state.reason:
                state.skip(call)
                continue
            images: list[dict[str, str]] = []
            if after_crash and call.name not in safe:
                is_error, text = True, INTERRUPTED
            else:
                is_error, text, images = await _dispatch(call, world_names, world, workspace, caps, observation)
            ledger.tool_calls += 1
            telemetry.emit("tool_call", arm, session=number, id=call.id, name=call.name, args=call.arguments,
                           code=_code(text) if is_error else "ok", result=text, tick=tick(),
                           **({"images": images} if images else {}))
            if call.name == "write_file" and not is_error:
                telemetry.emit("workspace_write", arm, session=number, path=call.arguments.get("path"),
                               bytes=len(str(call.arguments.get("content", "")).encode()))
            state.on_result(call, is_error, text, caps, images)

    await answer(after_crash=True)
    while not state.reason:
        if state.calls >= caps.max_tool_calls:
            state.reason = "tool_call_cap"
            break
        if state.tokens >= caps.max_tokens:
            state.reason = "token_cap"
            break
        if stop is not None and (reason := stop()):
            state.reason = reason
            break
        started = time.monotonic()
        try:
            turn = await adapter.complete(system, state.messages, tools)
        except CannotContinue as exc:
            telemetry.emit("provider_error", arm, session=number, error=f"cannot_continue: {exc}"[:300], fatal=False,
                           attempts=_drain(adapter), tick=tick())
            state.reason = "interrupted"
            break
        except Exception as exc:
            telemetry.emit("provider_error", arm, session=number, error=f"{type(exc).__name__}: {exc}"[:300], fatal=True,
                           attempts=_drain(adapter), tick=tick())
            raise
        latency = time.monotonic() - started
        cost = price.cost(turn.usage)
        ledger.add(turn.usage, cost, number)
        telemetry.emit("llm_call", arm, session=number, model=adapter.model, cost_usd=cost, retries=turn.retries,
                       latency_s=round(latency, 4), tool_calls=len(turn.tool_calls), text=turn.text,
                       calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls],
                       interruptions=_drain(adapter), **turn.usage.dump())
        state.on_turn(turn.text, turn.tool_calls, turn.usage.input_tokens + turn.usage.output_tokens)
        await answer(after_crash=False)
    telemetry.emit("session_end", arm, session=number, reason=state.reason, tool_calls=state.calls,
                   wake_minutes=state.wake, tick=tick())
    return SessionResult(state.reason, state.wake, state.calls)


def _drain(adapter: Adapter) -> list[dict[str, Any]]:
    """The failed attempts the adapter met since the last turn (each with its time, error and wait), taken from it."""
    met = getattr(adapter, "interruptions", None)
    if not met:
        return []
    out = list(met)
    met.clear()
    return out


async def _dispatch(call: ToolCall, world_names: set[str], world: WorldTools, workspace: Workspace,
                    caps: Caps, observation: str = "text") -> tuple[bool, str, list[dict[str, str]]]:
    """Run one tool call: (is_error, the text the model gets back, the images it gets with it)."""
    args = call.arguments
    try:
        if call.name == "end_session":
            return False, json.dumps({"ended": True}), []
        if call.name == "set_next_wake":
            minutes = args.get("minutes")
            if not isinstance(minutes, int) or not caps.wake_min_minutes <= minutes <= caps.wake_max_minutes:
                return True, (f"bad_arguments: set_next_wake: minutes must be a whole number from "
                              f"{caps.wake_min_minutes} to {caps.wake_max_minutes}."), []
            return False, json.dumps({"next_wake_in_minutes": minutes}), []
        if call.name == "write_file":
            return False, json.dumps(workspace.write(str(args["path"]), str(args["content"]))), []
        if call.name == "read_file":
            return False, json.dumps(workspace.read(str(args["path"]))), []
        if call.name == "list_files":
            return False, json.dumps(workspace.list()), []
        if call.name == "delete_file":
            return False, json.dumps(workspace.delete(str(args["path"]))), []
    except WorkspaceError as exc:
        return True, str(exc), []
    except KeyError as exc:
        return True, f"bad_arguments: {call.name}: missing argument {exc.args[0]!r}.", []
    if call.name not in world_names:
        return True, f"unknown_tool: There is no tool named {call.name!r}.", []
    is_error, text, data = await world.call(call.name, args)
    name = "view_image" if call.name == "read" and args.get("query") == "view_image" else call.name  # compact tools
    if is_error or data is None or observation == "text" or name not in ("observe", "view_image"):
        return is_error, text, []
    if name == "view_image":
        picture, shown = data, {k: v for k, v in data.items() if k != "png_base64"}
    else:
        failed, _, picture = await world.call("view_image", {})
        if failed or picture is None:
            return is_error, text, []
        shown = data if observation == "both" else {k: v for k, v in data.items() if k != "view"}
    return False, json.dumps(shown, sort_keys=True), [{"mime": picture["mime"], "data": picture["png_base64"]}]
