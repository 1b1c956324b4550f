"""A real `wildhold serve` process on loopback for the hardening benchmark, and the agents that talk to it:
over HTTP (one keep-alive connection each) and over MCP (the official client, or for load the MCP wire itself,
as that client sends it), each call bounded and timed; the CPU the server and the machine spent.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2
import orjson

SIGNUP, ADMIN = "hardening-signup-token", "hardening-admin-token"
STARTUP_TIMEOUT_S = 180.0
CALL_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 120.0
REPLAY_TIMEOUT_S = 900.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def until_healthy(base: str, proc: subprocess.Popen, log: Path, timeout: float = STARTUP_TIMEOUT_S) -> float:
    """Poll /api/health until it answers (the seconds that took); a process that exits first fails with its log."""
    t0 = time.monotonic()
    async with httpx2.AsyncClient(base_url=base, timeout=5) as client:
        while time.monotonic() - t0 < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited ({proc.returncode}): {log.read_text()[-2000:]}")
            try:
                if (await client.get("/api/health")).status_code == 200:
                    return time.monotonic() - t0
            except httpx2.TransportError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError(f"the server on {base} was not ready within {timeout:.0f} s")


class Serve:
    """`wildhold serve` on one data folder: started, killed and started again on a fresh port each time."""

    def __init__(self, data: Path, options: list[str]):
        self.data, self.options = data, options
        self.log = data.parent / f"{data.name}.log"
        self.proc: subprocess.Popen | None = None
        self.base = ""

    def start(self) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "wildhold.cli", "serve", "--port", str(port), "--data", str(self.data),
                   "--signup-token", SIGNUP, "--admin-token", ADMIN, *self.options]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"})

    async def ready(self) -> float:
        assert self.proc is not None
        return await until_healthy(self.base, self.proc, self.log)

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or closed."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.reap()

    def stop(self) -> int:
        """SIGTERM, and the exit code it ends with."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(STOP_TIMEOUT_S)
        finally:
            self.kill()

    def reap(self) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server process has used so far, from /proc."""
        assert self.proc is not None
        return process_cpu_seconds(self.proc.pid)

    def rss_bytes(self) -> int:
        """The server process's resident memory, from /proc."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS in /proc status")

    async def admin(self, method: str, path: str) -> dict[str, Any]:
        async with httpx2.AsyncClient(base_url=self.base, timeout=CALL_TIMEOUT_S) as http:
            r = await http.request(method, path, headers=auth(ADMIN))
            r.raise_for_status()
            return r.json()

    async def register(self, names: list[str]) -> list[str]:
        """An agent token for each name (they join the world at once: no lobby)."""
        tokens = []
        async with httpx2.AsyncClient(base_url=self.base, timeout=CALL_TIMEOUT_S) as http:
            for name in names:
                r = await http.post("/api/agents", json={"name": name}, headers=auth(SIGNUP))
                if r.status_code != 201:
                    raise RuntimeError(f"registering {name}: {r.status_code} {r.text}")
                tokens.append(r.json()["token"])
        return tokens


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of every core together since boot, from /proc/stat: what the whole machine did."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(values) - idle) / tick, sum(values) / tick


def replay_verifies(archive: Path) -> bool:
    """`wildhold replay` of the archive, in its own process, exits 0."""
    done = subprocess.run([sys.executable, "-m", "wildhold.cli", "replay", str(archive)], capture_output=True,
                          timeout=REPLAY_TIMEOUT_S)
    return done.returncode == 0


async def end_match(serve: Serve) -> tuple[Path, int]:
    """Stop the match (its archive is written), then SIGTERM the server: the archive and the exit code."""
    archive = Path((await serve.admin("POST", "/api/admin/stop"))["archive"])
    return archive, serve.stop()


class Answer:
    """One call's outcome: accepted or not, the answer's body (or error text), the time it took."""

    __slots__ = ("ok", "body", "ms")

    def __init__(self, ok: bool, body: Any, ms: float):
        self.ok, self.body, self.ms = ok, body, ms

    @property
    def code(self) -> str | None:
        """A refusal's stable code, read alike from HTTP's error object and MCP's `code: message` text."""
        if self.ok:
            return None
        if isinstance(self.body, dict):
            return self.body.get("code")
        return str(self.body).partition(":")[0] or None


def _unavailable(r: httpx2.Response) -> bool:
    """A 503 that is a coded refusal (`storage_unavailable`, `runner_unavailable`: retry later), not a fault."""
    if r.status_code != 503:
        return False
    try:
        body = r.json()
    except ValueError:
        return False
    return isinstance(body, dict) and str(body.get("code", "")).endswith("_unavailable")


class HttpAgent:
    """An agent over the HTTP API: actions on /api/actions/<name>, reads on /api/<query>."""

    face = "http"

    def __init__(self, base: str, token: str):
        self.base, self.token = base, token
        self.http: httpx2.AsyncClient | None = None

    async def __aenter__(self) -> HttpAgent:
        self.http = httpx2.AsyncClient(base_url=self.base, headers=auth(self.token), timeout=CALL_TIMEOUT_S)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.http is not None
        await self.http.aclose()

    async def _timed(self, method: str, path: str, **kw: Any) -> Answer:
        assert self.http is not None
        t0 = time.perf_counter()
        r = await self.http.request(method, path, **kw)
        ms = (time.perf_counter() - t0) * 1000
        if r.status_code >= 500 and not _unavailable(r):
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
        return Answer(r.status_code == 200, r.json(), ms)

    async def act(self, action: str, args: dict[str, Any]) -> Answer:
        return await self._timed("POST", f"/api/actions/{action}", json=args)

    async def read(self, query: str, args: dict[str, Any]) -> Answer:
        return await self._timed("GET", f"/api/{query}", params=args)

    async def program(self, name: str, source: str) -> Answer:
        saved = await self._timed("POST", f"/api/programs/{name}", json={"source": source})
        return await self._timed("POST", f"/api/programs/{name}/start", json={}) if saved.ok else saved

    async def program_status(self, name: str) -> dict[str, Any]:
        return (await self._timed("GET", f"/api/programs/{name}")).body


class McpAgent:
    """An agent over MCP with the official client: every action and read is a tool."""

    face = "mcp"

    def __init__(self, base: str, token: str):
        self.base, self.token = base, token
        self.session: Any = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> McpAgent:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        transport = await self._stack.enter_async_context(
            httpx2.AsyncClient(headers=auth(self.token), timeout=CALL_TIMEOUT_S))
        self.session = await self._stack.enter_async_context(
            Client(streamable_http_client(f"{self.base}/mcp", http_client=transport)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def _call(self, tool: str, args: dict[str, Any]) -> Answer:
        t0 = time.perf_counter()
        result = await asyncio.wait_for(self.session.call_tool(tool, args), CALL_TIMEOUT_S)
        ms = (time.perf_counter() - t0) * 1000
        body = result.structured_content if not result.is_error else result.content[0].text
        return Answer(not result.is_error, body, ms)

    async def act(self, action: str, args: dict[str, Any]) -> Answer:
        return await self._call(action, args)

    async def read(self, query: str, args: dict[str, Any]) -> Answer:
        return await self._call(query, args)


MCP_WIRE_VERSION = "2026-07-28"
MCP_WIRE_META = {"io.modelcontextprotocol/protocolVersion": MCP_WIRE_VERSION,
                 "io.modelcontextprotocol/clientInfo": {"name": "wildhold-bench", "version": "1"},
                 "io.modelcontextprotocol/clientCapabilities": {}}


class WireMcpAgent:
    """An agent over MCP that writes the wire itself: each tool call one JSON-RPC POST to /mcp with the headers
    and envelope the official client sends (protocol 2026-07-28), its answer read as JSON. The server does all
    it does for the official client; the client skips that client's own work (its tool-list fetch, its output
    validation: measured in-process, about as much CPU a call as the server spends), so a load generator sharing
    the machine measures the server rather than itself."""

    face = "mcp"

    def __init__(self, base: str, token: str):
        self.base, self.token = base, token
        self.http: httpx2.AsyncClient | None = None
        self.next_id = 0

    async def __aenter__(self) -> WireMcpAgent:
        headers = {**auth(self.token), "accept": "application/json, text/event-stream",
                   "content-type": "application/json", "mcp-protocol-version": MCP_WIRE_VERSION}
        self.http = httpx2.AsyncClient(base_url=self.base, headers=headers, timeout=CALL_TIMEOUT_S)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.http is not None
        await self.http.aclose()

    async def _call(self, tool: str, args: dict[str, Any]) -> Answer:
        assert self.http is not None
        self.next_id += 1
        body = orjson.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                             "params": {"name": tool, "arguments": args, "_meta": MCP_WIRE_META}})
        t0 = time.perf_counter()
        r = await self.http.post("/mcp", content=body, headers={"mcp-method": "tools/call", "mcp-name": tool})
        ms = (time.perf_counter() - t0) * 1000
        if r.status_code >= 500:
            raise RuntimeError(f"MCP {tool}: {r.status_code} {r.text[:300]}")
        message = orjson.loads(r.content)
        if "error" in message:
            raise RuntimeError(f"MCP {tool}: {message['error']}")
        result = message["result"]
        failed = bool(result.get("isError"))
        return Answer(not failed, result["content"][0]["text"] if failed else result.get("structuredContent"), ms)

    async def act(self, action: str, args: dict[str, Any]) -> Answer:
        return await self._call(action, args)

    async def read(self, query: str, args: dict[str, Any]) -> Answer:
        return await self._call(query, args)


def agent_for(face: str, base: str, token: str, wire: bool = False) -> HttpAgent | McpAgent | WireMcpAgent:
    """An agent on `face`; `wire` puts MCP agents on the wire client instead of the official one."""
    if face == "http":
        return HttpAgent(base, token)
    return WireMcpAgent(base, token) if wire else McpAgent(base, token)


def failure(name: str, exc: BaseException) -> str:
    """One line for a failed call: the innermost first exception of a task group, which says what happened."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{name}: {type(exc).__name__}: {exc}"[:300]


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of the values by rank; NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]
