"""The MCP face: one tool per registry action, the perception and information tools, and the program
lifecycle tools (from the table in `programs_surface`, shared with the HTTP routes), over streamable HTTP.

Built with the official SDK's `MCPServer`. Action tools take their JSON schema and description
from the registry and hand the raw arguments to the world, so arguments are validated once, by
the registry's own model. A rule failure is a tool error result ("code: sentence"); a missing or
unknown token fails the HTTP request itself (401), before any MCP message is read.
"""

from __future__ import annotations

import asyncio
import functools
from abc import abstractmethod
import hashlib
import json
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import anyio
import orjson
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.shared.exceptions import MCPError
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import PrivateAttr, ValidationError
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wildhold import __version__
from wildhold.docs.rules import rules_markdown
from wildhold.server.bodies import BodyError, TooLarge, parse_json, read_body
from wildhold.server.programs_surface import ProgramOp, program_ops
from wildhold.service.schemas import ErrorBody, OpResult, ProgramList, ProgramStatus
from wildhold.server.surface import (OPERATION_ANSWER, OWN_TOOLS, ActArgs, ProgramArgs, ReadArgs, act_description,
                                     action_description, action_tools, info_tools, program_description, program_verb,
                                     read_description, read_queries, read_query)
from wildhold.service.access import Identity
from wildhold.service.errors import HostError
from wildhold.service.host import Host
from wildhold.service.queries import Args, QueryDef, program_reads, queries
from wildhold.world.actions import ActionDef
from wildhold.world.errors import Rejected
from wildhold.world.world import describe_validation

READ_ONLY = ToolAnnotations(read_only_hint=True)
MAX_BODY_BYTES = 256 * 1024
LOCAL_HOSTS = ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"]
LOCAL_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def bearer(headers: Any) -> str | None:
    value = (headers or {}).get("authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class CodedError(ToolError):
    """A refusal: the model reads "code: sentence" with nothing put before it, and a program reads the same
    `{code, message, retry_after_s}` as structured content that HTTP answers as its body."""

    def __init__(self, code: str, message: str, retry_after: float | None = None):
        super().__init__(f"{code}: {message}")
        self.body = ErrorBody(code=code, message=message,
                              retry_after_s=None if retry_after is None else round(retry_after, 3)).model_dump()

    def result(self) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=str(self))], structured_content=self.body,
                              is_error=True)


def _fail(exc: HostError | Rejected) -> CodedError:
    return CodedError(exc.code, exc.message, getattr(exc, "retry_after", None))


class InfoTool(Tool):
    """A typed information tool whose failures are coded refusals like the action tools' are."""

    async def run(self, arguments: dict[str, Any], context: Context, convert_result: bool = False) -> Any:
        try:
            return await super().run(arguments, context, convert_result)
        except CodedError as exc:
            return exc.result()
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, CodedError):
                return cause.result()
            if isinstance(cause, ValidationError):
                return CodedError("bad_request", f"{self.name}: {describe_validation(cause)}").result()
            raise


def _result(data: dict[str, Any]) -> CallToolResult:
    """The answer as structured content and, for clients that read only text, the same JSON as text."""
    return CallToolResult(content=[TextContent(type="text", text=orjson.dumps(data).decode())], structured_content=data)


class HostedTool(Tool):
    """A tool generated from a registry, answering from the host: a refusal is a coded result, never an exception."""

    _host: Callable[[], Host] | None = PrivateAttr(default=None)

    @abstractmethod
    async def answer(self, host: Host, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        """The answer as JSON data; raise HostError or CodedError to refuse."""

    async def run(self, arguments: dict[str, Any], context: Context, convert_result: bool = False) -> Any:
        if self._host is None:
            raise ToolError("This tool surface is not attached to a running match.")
        try:
            return _result(await self.answer(self._host(), arguments, context))
        except HostError as exc:
            return _fail(exc).result()
        except CodedError as exc:
            return exc.result()


class ActionTool(HostedTool):
    """A registry action as an MCP tool: raw arguments go to the world, which validates them itself."""

    async def answer(self, host: Host, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        return await self.submit(host, self.name, arguments, context)

    @staticmethod
    async def submit(host: Host, action: str, arguments: Any, context: Context) -> dict[str, Any]:
        outcome = host.submit(_agent(host, context), action, arguments)
        if isinstance(outcome, Rejected):
            raise _fail(outcome)
        return OpResult.model_validate(outcome).model_dump(mode="json")


class ProgramTool(HostedTool):
    """A program lifecycle operation as an MCP tool, generated from the same table as its HTTP route."""

    _op: ProgramOp | None = PrivateAttr(default=None)

    async def answer(self, host: Host, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        assert self._op is not None
        return self._op.run(host.programs, _agent(host, context), arguments)


async def _ask(host: Host, q: QueryDef, arguments: Any, context: Context) -> dict[str, Any]:
    """A query's answer to the caller: a public read is anyone's, as over HTTP."""
    who = _identity(host, context, signup=q.caller == "public")
    return await q.run(host, host.access.agent_of(who) if q.caller == "agent" else None, arguments)


def _with_image(result: CallToolResult, q: QueryDef | None) -> CallToolResult:
    """A query's answer holding a picture also carries it as an image a multimodal model sees."""
    if q is not None and q.image is not None and not result.is_error:
        data = result.structured_content
        result.content.append(ImageContent(type="image", data=data[q.image], mime_type=data.get("mime", "image/png")))
    return result


class QueryTool(HostedTool):
    """A query as an MCP tool, generated from the same definition as its HTTP route and program function."""

    _query: QueryDef | None = PrivateAttr(default=None)

    async def answer(self, host: Host, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        assert self._query is not None
        return await _ask(host, self._query, arguments, context)

    async def run(self, arguments: dict[str, Any], context: Context, convert_result: bool = False) -> Any:
        return _with_image(await super().run(arguments, context, convert_result), self._query)


def _compact(model: type[Args], name: str, arguments: Any) -> Any:
    """A compact tool's own arguments, checked as every query's are (`bad_request` naming what is wrong)."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise HostError("bad_request", f"{name}: {describe_validation(exc)}") from None


class ActTool(HostedTool):
    """The compact profile's `act`: any registry action with its arguments, submitted as its own tool submits it."""

    async def answer(self, host: Host, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        a = _compact(ActArgs, self.name, arguments)
        return await ActionTool.submit(host, a.action, a.args, context)


class ReadTool(HostedTool):
    """The compact profile's `read`: any query without a tool of its own, answered as its own tool answers it."""

    async def answer(self, host: Host, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        a = _compact(ReadArgs, self.name, arguments)
        return await _ask(host, read_query(a.query), a.args, context)

    async def run(self, arguments: dict[str, Any], context: Context, convert_result: bool = False) -> Any:
        result = await super().run(arguments, context, convert_result)
        query = arguments.get("query") if isinstance(arguments, dict) else None
        return _with_image(result, read_queries().get(query) if isinstance(query, str) else None)


class ProgramVerbTool(HostedTool):
    """The compact profile's `program`: any program lifecycle operation, by its verb."""

    async def answer(self, host: Host, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        a = _compact(ProgramArgs, self.name, arguments)
        return program_verb(a.op).run(host.programs, _agent(host, context), a.args)


def lean_schema(schema: Any) -> Any:
    """A JSON schema without pydantic's `title` keys (a tool's name and descriptions already say it all):
    every session lists the tools and every model reads them, so what says nothing is left out."""
    if isinstance(schema, list):
        return [lean_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: lean_schema(sub) for name, sub in value.items()}  # names kept, even one called "title"
        elif key in ("default", "const", "enum", "examples"):
            out[key] = value  # values, not schemas
        else:
            out[key] = lean_schema(value)
    return out


@functools.cache
def _answer_template(answer: type | None) -> Tool:
    """A template whose output schema is `answer` (none when None), derived once per answer model."""
    async def template(ctx: Context) -> Any:
        raise RuntimeError("the output-schema template of generated tools is never called")

    template.__annotations__ = {"ctx": Context, "return": answer if answer is not None else Any}
    return Tool.from_function(template, name="template", structured_output=answer is not None)


# An answer model several tools share has its schema shown once, on the tool named here (by profile); the others say
# where it is (every action answers an operation, stated on operation_status; a list of programs holds statuses).
SCHEMA_SHOWN_BY: dict[str, dict[type, str]] = {
    "full": {OpResult: "operation_status", ProgramStatus: "program_status", ProgramList: "program_status"},
    "compact": {OpResult: "wait_operation"},
}
SHOWN_AS = {ProgramList: "Its answer is {{\"programs\": [...]}}, each entry with the schema of {owner}'s output."}
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)


def _shown_once(name: str, answer: type | None, description: str, profile: str) -> tuple[type | None, str]:
    """The answer model whose schema this tool carries, and its description saying where a shared one is."""
    owner = SCHEMA_SHOWN_BY[profile].get(answer) if answer is not None else None
    if owner is None or owner == name:
        return answer, description
    said = SHOWN_AS.get(answer, "Its answer has the schema of {owner}'s output.")
    return None, f"{description} {said.format(owner=owner)}"


def _hosted(cls: type[HostedTool], host: Callable[[], Host] | None, name: str, description: str, args: type,
            answer: type | None, read_only: bool, profile: str) -> Tool:
    """A tool of `cls` answering from `host`: its name, description, argument schema and (shown once) answer schema."""
    answer, description = _shown_once(name, answer, description, profile)
    base = _answer_template(answer)
    tool = cls(fn=base.fn, name=name, title=None, description=description, parameters=lean_schema(args.model_json_schema()),
               fn_metadata=base.fn_metadata, is_async=True, context_kwarg="ctx",
               annotations=READ_ONLY if read_only else WRITES)
    tool._host = host
    return tool


def _query_tool(host: Callable[[], Host] | None, q: QueryDef, horizon: str, profile: str = "full") -> Tool:
    description = f"{q.doc} {OPERATION_ANSWER}" if q.name == SCHEMA_SHOWN_BY[profile][OpResult] else q.doc
    tool = _hosted(QueryTool, host, q.name, description, q.args, q.answer_for(horizon), not q.writes, profile)
    tool._query = q
    return tool


def _program_tool(host: Callable[[], Host] | None, op: ProgramOp) -> Tool:
    tool = _hosted(ProgramTool, host, op.tool, op.description(), op.args, op.answer, op.read_only, "full")
    tool._op = op
    return tool


def _compact_tools(host: Callable[[], Host] | None, horizon: str) -> list[Tool]:
    """The compact profile: act, read and program over the registries, and the queries that keep a tool of their own."""
    tools = [_hosted(ActTool, host, "act", act_description(), ActArgs, OpResult, False, "compact"),
             _hosted(ReadTool, host, "read", read_description(), ReadArgs, None, True, "compact"),
             _hosted(ProgramVerbTool, host, "program", program_description(), ProgramArgs, None, False, "compact")]
    return tools + [_query_tool(host, q, horizon, "compact") for name, q in queries().items() if name in OWN_TOOLS]


def _identity(host: Host, ctx: Context, signup: bool = False) -> Identity:
    """Who calls, with one request spent; the signup token may only register and read what is public (`signup`)."""
    who = host.access.authenticate(bearer(ctx.headers))
    host.access.throttle(who)
    host.count("mcp_calls")
    if who.role == "signup" and not signup:
        raise HostError("forbidden", "The signup token only registers agents (the register tool) and reads the public "
                        "tools (rules, scoring_info); reconnect with the token register returns.")
    return who


def _agent(host: Host, ctx: Context) -> str:
    return host.access.agent_of(_identity(host, ctx))


def _action_tool(host: Callable[[], Host] | None, spec: ActionDef) -> Tool:
    # Every action answers an operation: its schema is stated once, as operation_status's output schema,
    # not repeated on each of the ~70 action tools (it was half of the whole catalogue).
    return _hosted(ActionTool, host, spec.name, action_description(spec), spec.args, None, False, "full")


INSTRUCTIONS = ("A Wildhold world: one character per agent token. `rules` (or the resource wildhold://rules) is the "
                "rules document, `observe` what you perceive; each action is a tool.")  # a surface not yet attached


def build_mcp(get_host: Callable[[], Host] | None, horizon: str = "visible", instructions: str = INSTRUCTIONS,
              profile: str = "full") -> MCPServer:
    """The MCP server over the host `get_host` returns at call time (None only to list and hash the tool surface),
    for a match of this horizon: a hidden one's answer schemas carry the clock without its end. `instructions` are
    what a client is handed on connecting: the match's briefing (`briefing.mcp_instructions`). `profile`: one tool
    per action, query and program operation (full), or the same through a few (compact; `surface`)."""
    docs = info_tools()
    if profile == "compact":
        tools = _compact_tools(get_host, horizon)
    else:
        tools = [_action_tool(get_host, spec) for spec in action_tools().values()]
        tools += [_query_tool(get_host, q, horizon) for q in queries().values()]
        tools += [_program_tool(get_host, op) for op in program_ops(set(docs) | {t.name for t in tools})]

    def info(name: str, read_only: bool = True) -> Callable[[Callable], Callable]:
        def add(fn: Callable) -> Callable:
            tools.append(InfoTool.from_function(fn, name=name, description=docs[name],
                                                annotations=READ_ONLY if read_only else None))
            return fn
        return add

    def guard(fn: Callable[[Host], Any]) -> Any:
        if get_host is None:
            raise ToolError("This tool surface is not attached to a running match.")
        try:
            return fn(get_host())
        except HostError as exc:
            raise _fail(exc) from None

    @info("register", read_only=False)
    async def register(ctx: Context, name: str, model: str | None = None, harness: str | None = None) -> dict[str, Any]:
        def run(host: Host) -> dict[str, Any]:
            who = _identity(host, ctx, signup=True)
            if who.role != "signup":
                raise HostError("forbidden", "Registering needs the signup token; you already hold a token.")
            token, rec = host.register(name, {"model": model or "", "harness": harness or ""})
            return {"token": token, "name": rec.name, "agent": rec.agent, "status": host.state,
                    "next": "Reconnect to this MCP endpoint with 'Authorization: Bearer <token>' to play."}
        return guard(run)


    server = MCPServer("wildhold", version=__version__,
                       instructions=instructions, tools=tools, warn_on_duplicate_tools=True, log_level="WARNING")

    @server.resource(RULES_URI, name="rules", title="Wildhold rules", mime_type="text/markdown",
                     description="The whole rules document as Markdown (the `rules` tool looks up one part of it).")
    async def rules_document() -> str:
        if get_host is None:
            raise ValueError("This resource is not attached to a running match.")
        host = get_host()
        return _rules_markdown(host.content, host.horizon)

    # MCPServer serves prompts/list and prompts/get whether or not it has a prompt; Wildhold has none, so neither
    # is served (nor advertised): a client asking gets "method not found". The SDK (pinned) has no public call.
    for method in ("prompts/list", "prompts/get"):
        server._lowlevel_server._request_handlers.pop(method, None)
    server.middleware.append(_one_page)
    return server


RULES_URI = "wildhold://rules"
_RULES_MD: dict[tuple[str, str], str] = {}
PAGED = frozenset({"tools/list", "resources/list", "resources/templates/list"})


def _rules_markdown(content: Any, horizon: str) -> str:
    """The rules document as Markdown, rendered once per content digest and horizon."""
    key = (content.digest, horizon)
    if key not in _RULES_MD:
        _RULES_MD[key] = rules_markdown(content, program_reads(), horizon)
    return _RULES_MD[key]


async def _one_page(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
    """Every list answers in one page and issues no cursor, so a request carrying one is refused (invalid params)
    rather than answered as if it had none."""
    params = ctx.params if isinstance(ctx.params, dict) else {}
    if ctx.method in PAGED and params.get("cursor") is not None:
        raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor {str(params['cursor'])[:80]!r}: {ctx.method} "
                       "answers in one page and issues no cursor; ask without one.")
    return await call_next(ctx)


def tool_surface(server: MCPServer | None = None, horizon: str = "visible", profile: str = "full") -> list[dict[str, Any]]:
    """Every tool as MCP lists it: name, description, input and output schema, sorted by name (of `server`, or
    the surface a match of `horizon` serves under this tool profile)."""
    listing = (server or build_mcp(None, horizon, profile=profile)).list_tools()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        tools = asyncio.run(listing)
    else:  # called from inside an event loop (an app built in a test): list on a thread of its own
        with ThreadPoolExecutor(1) as pool:
            tools = pool.submit(asyncio.run, listing).result()
    return sorted(({"name": t.name, "description": t.description, "input_schema": t.input_schema,
                    "output_schema": t.output_schema} for t in tools), key=lambda t: t["name"])


# Characters of the served catalogue (names, descriptions, schemas) an LLM pays for every turn, by tool profile; and
# the compact profile's most tools.
CATALOGUE_BUDGET = {"full": 80_000, "compact": 15_000}
COMPACT_MOST_TOOLS = 12


def catalogue_size(surface: list[dict[str, Any]] | None = None) -> int:
    """Characters of the catalogue as hashed: the canonical JSON of every tool's name, description and schemas."""
    return len(_canonical(surface if surface is not None else tool_surface()))


def _canonical(surface: list[dict[str, Any]]) -> str:
    return json.dumps(surface, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tools_hash(surface: list[dict[str, Any]] | None = None, horizon: str = "visible", profile: str = "full") -> str:
    """sha256 of the canonical JSON of the tool surface (by default the one a match of `horizon` serves under this
    tool profile): changes whenever a name, schema or description does."""
    if surface is None:
        return _served_hash(horizon, profile)
    return hashlib.sha256(_canonical(surface).encode()).hexdigest()


@functools.cache
def _served_hash(horizon: str, profile: str) -> str:
    """The served surface is fixed by the code a process runs, the horizon and the profile: its hash is worked out once."""
    return tools_hash(tool_surface(horizon=horizon, profile=profile))


MCP_SESSION_IDLE_S = 600.0  # a session with no request for this long is closed; the client initializes anew
MCP_SESSIONS_TOTAL = 2048  # open sessions on one server, every token together
LOCAL_ONLY = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=LOCAL_HOSTS,
                                       allowed_origins=LOCAL_ORIGINS)


class Sessions:
    """The open MCP sessions, least recently used first, each with the token that opened it: at most `per_token`
    a token and `total` in all, openings still being answered included. Room for a new one is made by closing
    the least recently used (the spec lets a server end a session; its client re-initializes on the 404), so a
    client that never closes its sessions (the official TypeScript SDK's `close()` sends no DELETE) is never
    locked out, and the memory they hold stays bounded."""

    def __init__(self, total: int = MCP_SESSIONS_TOTAL, idle_s: float = MCP_SESSION_IDLE_S):
        self.total, self.idle_s = total, idle_s
        self.seen: OrderedDict[str, float] = OrderedDict()  # session -> last request (monotonic), oldest first
        self.owner: dict[str, str] = {}  # session -> the key of the token that opened it
        self.held: dict[str, int] = {}  # token key -> its open sessions
        self.opening: dict[str, int] = {}  # token key -> its openings not yet answered
        self.busy: dict[str, int] = {}  # session -> its requests being answered now

    def touch(self, session: str, busy: int = 0, key: str | None = None) -> None:
        """A request of `session` (by the token `key`, when given) begins (`busy` 1) or ends (-1): it is the most
        recently used now. Another token's request is no use of it (the SDK answers it 404)."""
        if session in self.seen and key in (None, self.owner[session]):
            self.seen[session] = time.monotonic()
            self.seen.move_to_end(session)
            self.busy[session] = self.busy.get(session, 0) + busy
            if self.busy[session] <= 0:
                del self.busy[session]

    def opened(self, key: str, session: str) -> None:
        if session not in self.owner:
            self.owner[session] = key
            self.held[key] = self.held.get(key, 0) + 1
        self.seen[session] = time.monotonic()
        self.seen.move_to_end(session)

    def closed(self, session: str) -> None:
        key = self.owner.pop(session, None)
        self.seen.pop(session, None)
        self.busy.pop(session, None)
        if key is not None:
            self.held[key] -= 1
            if not self.held[key]:
                del self.held[key]

    def making_room(self, key: str, per_token: int) -> list[str]:
        """Counts one opening for `key` and returns the sessions to close first: those idle past the timeout (the
        transport has closed them already), then the least recently used of this token's past `per_token`, then
        the least recently used of all past `total`; a session answering a request now goes after every idle one
        (closing it loses that answer)."""
        now = time.monotonic()
        stale = [sid for sid, seen in self.seen.items() if now - seen > self.idle_s and sid not in self.busy]
        for sid in stale:
            self.closed(sid)
        order = sorted(self.seen, key=lambda sid: sid in self.busy)  # stable: least recently used first
        close: list[str] = []
        if self.held.get(key, 0) + self.opening.get(key, 0) >= per_token:
            mine = [sid for sid in order if self.owner[sid] == key]
            close += mine[:len(mine) + self.opening.get(key, 0) - per_token + 1]
        surplus = len(self.seen) - len(close) + sum(self.opening.values()) - self.total + 1
        if surplus > 0:
            close += [sid for sid in order if sid not in close][:surplus]
        for sid in close:
            self.closed(sid)
        self.opening[key] = self.opening.get(key, 0) + 1
        return close

    def answered(self, key: str) -> None:
        """An opening was answered (a session opened or not)."""
        self.opening[key] -= 1
        if not self.opening[key]:
            del self.opening[key]


class BearerGuard:
    """The door of /mcp, in this order: the Host and Origin checks (local hosts only: a page on another site
    cannot reach the server through DNS rebinding); a token this server issued (401), not the admin's or the
    spectator's (403); a body it can read (size and nesting bounded, else a JSON-RPC parse error); for a
    request that opens a session, one request of the token's rate limit and room among its sessions, made by
    closing its least recently used one (`Sessions`). Each session answers only the token that opened it
    (another token gets 404, as the SDK answers a session that is not its own); a request still running when
    its session is closed answers 404 too, as any later one does. A refusal is `{code, message, retry_after_s}`."""

    def __init__(self, app: ASGIApp, get_host: Callable[[], Host], manager: StreamableHTTPSessionManager,
                 sessions: Sessions | None = None):
        self.app, self.get_host, self.manager = app, get_host, manager
        self.sessions = sessions or Sessions()
        self.security = TransportSecurityMiddleware(LOCAL_ONLY)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        foreign = await self.security.validate_request(Request(scope), is_post=False)
        if foreign is not None:
            await _refuse(send, "forbidden", f"{bytes(foreign.body).decode()}: this server answers requests for "
                          "127.0.0.1, localhost and [::1] only.", status=foreign.status_code)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        session = headers.get(MCP_SESSION_ID_HEADER)
        host = self.get_host()
        try:
            who = host.access.authenticate(bearer(headers))
            if who.role in ("admin", "spectator"):
                raise HostError("forbidden", f"The {who.role} token is for the operator's routes and the live page; "
                                "MCP takes agent tokens.")
        except HostError as exc:
            await _refuse(send, exc.code, exc.message, exc.retry_after)
            return
        opens = False
        if scope["method"] == "POST":
            try:
                body, receive = await read_body(receive, MAX_BODY_BYTES)
                opens = session is None and _opens_session(parse_json(body))
            except (TooLarge, BodyError) as exc:
                await _unreadable(send, str(exc))
                return
        if opens:
            try:
                host.access.throttle(who)
            except HostError as exc:
                await _refuse(send, exc.code, exc.message, exc.retry_after)
                return
            await self._open(scope, receive, send, who.key, host.config.mcp_sessions_per_token)
            return
        scope["user"] = AuthenticatedUser(AccessToken(token=who.key, client_id=who.key, scopes=[]))
        if session is None:
            await self.app(scope, receive, send)
            return
        self.sessions.touch(session, +1, who.key)
        answer = SessionAnswer(send, lambda: session not in self.manager._server_instances)
        try:
            await self.app(scope, receive, answer.send)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            # The session closed between the request reaching its transport and the transport handing it on: the
            # SDK answers 500 and then raises. The answer is the 404 of a closed session, and nothing is left to do.
            if session in self.manager._server_instances:
                raise
            await answer.gone()
        finally:
            self.sessions.touch(session, -1, who.key)
            if session not in self.manager._server_instances:
                self.sessions.closed(session)  # closed by its client (DELETE), or expired on the server's side

    async def _open(self, scope: Scope, receive: Receive, send: Send, key: str, per_token: int) -> None:
        """Opens a session for `key`, closing first the sessions `Sessions` names to make room."""
        for sid in self.sessions.making_room(key, per_token):
            await self.close(sid)
        scope["user"] = AuthenticatedUser(AccessToken(token=key, client_id=key, scopes=[]))

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 300:
                opened = dict(message.get("headers", [])).get(MCP_SESSION_ID_HEADER.encode())
                if opened:
                    self.sessions.opened(key, opened.decode("latin-1"))
            await send(message)

        try:
            await self.app(scope, receive, noting)
        finally:
            self.sessions.answered(key)

    async def close(self, session: str) -> None:
        """Ends a session on the server's side: its id answers 404 from now on, a request of it still running too.
        The SDK (pinned) offers no public call for this; its manager's own discard is what a DELETE runs."""
        transport = self.manager._server_instances.get(session)
        if transport is not None:
            await self.manager._discard_session(session, transport)


def _opens_session(message: Any) -> bool:
    """Whether a parsed body is (or a batch holds) an `initialize` call: the one request that opens a session."""
    calls = message if isinstance(message, list) else [message]
    return any(isinstance(c, dict) and c.get("method") == "initialize" for c in calls)


class SessionAnswer:
    """`send` for a request of a session: a server error answered because the session was closed while the
    request ran (the SDK answers 500 then) becomes the 404 that any request of a closed session gets."""

    def __init__(self, send: Send, closed: Callable[[], bool]):
        self._send, self.closed = send, closed
        self.started = self.replaced = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 500 and self.closed():
            await self.gone()
        elif not self.replaced:
            self.started = self.started or message["type"] == "http.response.start"
            await self._send(message)

    async def gone(self) -> None:
        """Answers the 404 of a closed session, unless an answer has begun."""
        if self.started or self.replaced:
            return
        self.replaced = True
        body = _jsonrpc_error(INVALID_REQUEST, "Session not found: it was closed while this request ran; "
                              "initialize a new one.", "not_found")
        await self._send({"type": "http.response.start", "status": 404, "headers": _json_headers(body)})
        await self._send({"type": "http.response.body", "body": body})


def _jsonrpc_error(code: int, message: str, wildhold_code: str) -> bytes:
    """A JSON-RPC error answering no request id, with Wildhold's refusal as its data."""
    data = ErrorBody(code=wildhold_code, message=message).model_dump()
    return orjson.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message, "data": data}})


def _json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]


async def _unreadable(send: Send, message: str) -> None:
    """A body the door cannot read (too large, not JSON, nested too deep): a JSON-RPC parse error, HTTP 400."""
    body = _jsonrpc_error(PARSE_ERROR, message, "bad_request")
    await send({"type": "http.response.start", "status": 400, "headers": _json_headers(body)})
    await send({"type": "http.response.body", "body": body})


REFUSAL_STATUS = {"unauthorised": 401, "bad_request": 400, "rate_limited": 429}


async def _refuse(send: Send, code: str, message: str, retry_after: float | None = None,
                  status: int | None = None) -> None:
    """A refusal of the caller as every face answers one: `{code, message, retry_after_s}`, with `Retry-After`
    when there is a wait, and `WWW-Authenticate` on a 401."""
    status = status or REFUSAL_STATUS.get(code, 403)
    body = orjson.dumps(ErrorBody(code=code, message=message,
                                  retry_after_s=None if retry_after is None else round(retry_after, 3)).model_dump())
    extra = [(b"www-authenticate", b'Bearer realm="wildhold"')] if status == 401 else []
    if retry_after is not None:
        extra.append((b"retry-after", str(max(1, round(retry_after + 0.5))).encode()))
    await send({"type": "http.response.start", "status": status, "headers": [*_json_headers(body), *extra]})
    await send({"type": "http.response.body", "body": body})


def mcp_endpoint(app: Any) -> ASGIApp:
    """The ASGI handler behind the streamable HTTP app's /mcp route, to route to it directly."""
    for route in app.routes:
        if getattr(route, "path", None) == "/mcp":
            return route.app
    raise RuntimeError("the MCP streamable HTTP app has no /mcp route")


def mcp_app(server: MCPServer) -> ASGIApp:
    """The streamable HTTP app at /mcp (JSON responses, local hosts only); run `server.session_manager.run()` around it."""
    return server.streamable_http_app(streamable_http_path="/mcp", json_response=True, transport_security=LOCAL_ONLY,
                                      max_request_body_size=MAX_BODY_BYTES, session_idle_timeout=MCP_SESSION_IDLE_S,
                                      max_sessions=None)  # BearerGuard's Sessions bounds them, closing rather than refusing
