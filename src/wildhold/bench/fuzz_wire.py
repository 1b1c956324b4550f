"""Raw-protocol fuzzing of /mcp for `wildhold bench hardening`: what no official client sends. Bodies that are not
JSON or not JSON-RPC, batches, ids and methods of every wrong type, params nested 100,000 deep, strings near and
past the body bound, every header the transport reads set wrong (the session, the protocol version, Accept,
Content-Type, the HTTP method), and sessions closed while a call of theirs runs (by DELETE, and by the server
closing a token's least recently used session). Counted: requests sent, answers with a 5xx status, and JSON-RPC
internal errors (-32603) in any answer.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any, Callable

import httpx2
import orjson

from wildhold.bench.served import CALL_TIMEOUT_S, auth

INTERNAL_ERROR = -32603
VERSION = "2025-06-18"
JSON_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
SESSIONS = 4  # sessions the fuzzer keeps open and sends in-session messages through
CLOSING_SHARE = 0.05  # of the cases: a session closed while a call of it runs
KEPT = 10


class WireTally:
    """Requests sent on the wire and what came back wrong, with a few examples."""

    def __init__(self) -> None:
        self.requests = self.server_errors = self.internal_errors = self.transport_errors = self.closed_mid_call = 0
        self.by_status: dict[str, int] = {}
        self.examples: list[str] = []

    def seen(self, what: str, response: httpx2.Response) -> None:
        self.requests += 1
        key = str(response.status_code)
        self.by_status[key] = self.by_status.get(key, 0) + 1
        if response.status_code >= 500:
            self.server_errors += 1
            self._keep(f"{what} -> {response.status_code}: {response.text[:160]}")
        elif response.is_stream_consumed and INTERNAL_ERROR in _error_codes(response.content):
            self.internal_errors += 1
            self._keep(f"{what} -> internal error: {response.text[:160]}")

    def _keep(self, line: str) -> None:
        if len(self.examples) < KEPT:
            self.examples.append(line[:400])

    def dump(self) -> dict[str, Any]:
        return {"requests": self.requests, "server_errors": self.server_errors + self.internal_errors,
                "internal_errors": self.internal_errors, "transport_errors": self.transport_errors,
                "closed_mid_call": self.closed_mid_call, "by_status": dict(sorted(self.by_status.items())),
                "examples": self.examples}


def _error_codes(content: bytes) -> list[int]:
    try:
        message = orjson.loads(content)
    except orjson.JSONDecodeError:
        return []
    items = message if isinstance(message, list) else [message]
    return [m["error"].get("code") for m in items if isinstance(m, dict) and isinstance(m.get("error"), dict)]


# ---- what is sent ------------------------------------------------------------------------------------------

WRONG = [None, True, 0, -1, 2**63, 2**70, 1.5, float("-0"), "", "x" * 300, [], [1], {}, {"a": 1}, "\u0000", "\ud7ff"]
METHODS = ["initialize", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list",
           "prompts/list", "prompts/get", "ping", "logging/setLevel", "completion/complete", "notifications/initialized",
           "notifications/cancelled", "subscriptions/listen", "rpc.discover", "", "tools/", "TOOLS/LIST", "../admin"]
TOOLS = ["observe", "rules", "wait", "wait_operation", "say", "register", "view_image", "map_memory", "nope"]


def _dumps(value: Any) -> bytes:
    """JSON as a client may write it: integers of any size (orjson stops at 64 bits)."""
    return json.dumps(value).encode()


def _deep(levels: int, rng: random.Random) -> str:
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    return opener * levels + "0" + closer * levels


def _message(rng: random.Random, values: list[Any]) -> Any:
    """One JSON-RPC message (as data), mostly well-formed in shape with one part wrong."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rng.randrange(1, 10**6), "method": rng.choice(METHODS)}
    if message["method"] == "tools/call":
        message["params"] = {"name": rng.choice(TOOLS + WRONG), "arguments": rng.choice(values + [{}, [], "x", None])}
    elif message["method"] == "initialize":
        message["params"] = {"protocolVersion": rng.choice([VERSION, "2024-11-05", "2099-01-01", "", 7, None]),
                             "capabilities": rng.choice([{}, [], None, "x"]),
                             "clientInfo": rng.choice([{"name": "fuzz", "version": "1"}, {}, None, "x"])}
    else:
        message["params"] = rng.choice([{}, {"cursor": rng.choice(WRONG + ["c"])}, {"uri": rng.choice(["wildhold://rules", "x:", 5])},
                                        {"name": rng.choice(TOOLS)}, {"level": "debug"}, rng.choice(values)])
    wrong = rng.randrange(8)
    if wrong == 0:
        message["id"] = rng.choice(WRONG)
    elif wrong == 1:
        message["method"] = rng.choice(WRONG)
    elif wrong == 2:
        message["jsonrpc"] = rng.choice(["1.0", "2", 2.0, None, ""])
    elif wrong == 3:
        del message["id"]  # a notification of a request method
    elif wrong == 4:
        message = {"jsonrpc": "2.0", "id": message["id"], rng.choice(["result", "error"]): rng.choice(values)}  # a response
    elif wrong == 5:
        message.pop(rng.choice(["jsonrpc", "method", "params"]), None)
    elif wrong == 6:
        message["extra"] = rng.choice(values)
    return message


def body(rng: random.Random, values: list[Any]) -> bytes:
    """A request body: JSON-RPC with a wrong part, a batch, deep nesting, a huge string, or bytes that are not JSON."""
    kind = rng.randrange(10)
    if kind == 0:
        return _dumps([_message(rng, values) for _ in range(rng.randrange(0, 6))])
    if kind == 1:
        inner = _deep(rng.choice([65, 1_000, 100_000]), rng)
        return ('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": ' + inner + '}}').encode()
    if kind == 2:
        size = rng.choice([1_000, 100_000, 260_000, 300_000])
        return _dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "say", "arguments": {"text": "x" * size}}})
    if kind == 3:
        whole = _dumps(_message(rng, values))
        return rng.choice([whole[: rng.randrange(len(whole))], b"", b"null", b"[]", b"[[]]", b'"x"', b"\xff\xfe{",
                           bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))), whole + b"}", b"NaN",
                           b'{"id": 1e400, "jsonrpc": "2.0", "method": "ping"}', b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}'])
    return _dumps(_message(rng, values))


def headers(rng: random.Random, token: str, session: str | None) -> dict[str, str]:
    """The headers of a request: mostly right, sometimes one the transport reads set wrong."""
    out = {**auth(token), **JSON_HEADERS}
    if session is not None:
        out["mcp-session-id"] = session
        out["mcp-protocol-version"] = VERSION
    wrong = rng.randrange(12)
    if wrong == 0:
        out["mcp-session-id"] = rng.choice(["nope", "x" * 5000, "0" * 32, (session or "a" * 32)[::-1]])
    elif wrong == 1:
        out["mcp-protocol-version"] = rng.choice(["2026-07-28", "1999-01-01", "", "garbage", "2025-03-26"])
    elif wrong == 2:
        out["accept"] = rng.choice(["text/html", "", "*/*", "text/event-stream"])
    elif wrong == 3:
        out["content-type"] = rng.choice(["text/plain", "", "application/json; charset=latin-1", "multipart/form-data"])
    elif wrong == 4:
        out.pop("mcp-session-id", None)
    return out


# ---- how it is sent -----------------------------------------------------------------------------------------


class Wire:
    """One token's raw traffic to /mcp, with a few open sessions to send in-session messages through."""

    def __init__(self, http: httpx2.AsyncClient, token: str, tally: WireTally, rng: random.Random):
        self.http, self.token, self.tally, self.rng = http, token, tally, rng
        self.sessions: list[str] = []

    async def send(self, what: str, method: str, content: bytes | None, hdrs: dict[str, str]) -> httpx2.Response | None:
        """One request; an event stream (a GET of a live session) is answered by its status and then left."""
        try:
            async with self.http.stream(method, "/mcp", content=content, headers=hdrs) as r:
                if not r.headers.get("content-type", "").startswith("text/event-stream"):
                    await r.aread()
        except httpx2.TransportError as exc:
            self.tally.transport_errors += 1
            self.tally._keep(f"{what}: {type(exc).__name__}: {exc}")
            return None
        self.tally.seen(what, r)
        return r

    async def open(self) -> str | None:
        """A session opened the way a client opens one (initialize, then initialized)."""
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}
        r = await self.send("initialize", "POST", orjson.dumps(init), {**auth(self.token), **JSON_HEADERS})
        sid = r.headers.get("mcp-session-id") if r is not None and r.status_code == 200 else None
        if sid:
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await self.send("initialized", "POST", orjson.dumps(done),
                            {**auth(self.token), **JSON_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": VERSION})
        return sid

    async def session(self) -> str | None:
        if len(self.sessions) < SESSIONS:
            sid = await self.open()
            if sid:
                self.sessions.append(sid)
            return sid
        return self.rng.choice(self.sessions)

    async def case(self, values: list[Any]) -> None:
        """One fuzzed request (or, now and then, a session closed under a running call)."""
        rng = self.rng
        if rng.random() < CLOSING_SHARE:
            await self.close_mid_call()
            return
        sid = await self.session() if rng.random() < 0.7 else None
        method = rng.choice(["POST"] * 12 + ["GET", "DELETE", "PUT", "PATCH", "OPTIONS"])
        content = body(rng, values) if method in ("POST", "PUT", "PATCH") else None
        r = await self.send(f"{method} {(content or b'')[:60]!r}", method, content, headers(rng, self.token, sid))
        if sid and r is not None and r.status_code == 404 and sid in self.sessions:
            self.sessions.remove(sid)  # closed on the server's side: a client initializes anew

    async def close_mid_call(self) -> None:
        """A long poll in a fresh session, and while it runs the session is closed: by DELETE, or by the server
        when this token opens more sessions than it may hold (its least recently used one goes)."""
        sid = await self.open()
        if not sid:
            return
        hdrs = {**auth(self.token), **JSON_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": VERSION}

        def call(tool: str, arguments: dict[str, Any]) -> bytes:
            return orjson.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})

        await self.send("cancel", "POST", call("cancel", {}), hdrs)
        started = await self.send("wait", "POST", call("wait", {"ticks": 50}), hdrs)
        op = _op(started)
        poll = call("wait_operation", {"op": op, "timeout_s": 0.5}) if op else call("observe", {})
        running = asyncio.create_task(self.send("call closed mid-way", "POST", poll, hdrs))
        await asyncio.sleep(self.rng.uniform(0.0, 0.05))
        if self.rng.random() < 0.5:
            await self.send("DELETE mid-call", "DELETE", None, hdrs)
        else:
            for _ in range(SESSIONS + 8):
                await self.open()  # past the token's limit: the server closes its least recently used sessions
        await running
        self.tally.closed_mid_call += 1


def _op(answer: httpx2.Response | None) -> str | None:
    """The operation a started action answered, if it was accepted."""
    if answer is None or answer.status_code != 200:
        return None
    try:
        op = orjson.loads(answer.content)["result"]["structuredContent"]["op"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    return op if isinstance(op, str) else None


async def fuzz_wire(base: str, token: str, budget: int, seed: int, values: Callable[[], list[Any]]) -> WireTally:
    """`budget` raw requests to /mcp (every request sent counts, the opening ones included)."""
    tally = WireTally()
    rng = random.Random(seed)
    pool = values()
    async with httpx2.AsyncClient(base_url=base, timeout=CALL_TIMEOUT_S) as http:
        wire = Wire(http, token, tally, rng)
        while tally.requests < budget:
            await wire.case(pool)
            if tally.transport_errors:
                break
    return tally
