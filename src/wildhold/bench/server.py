"""`wildhold bench server`: actions/s and p50/p99 latency over HTTP and MCP, beside a bare FastAPI echo endpoint.

Each server runs in its own process under uvicorn on loopback; the clients run here, as asyncio
tasks, at 1 and 32 concurrent clients. Every client registers its own agent and alternates two
actions that are always accepted (`wait`, then `cancel`), so each request is a full recorded
action. The echo endpoint answers the same JSON body with nothing behind it: the framework's own
cost, measured in the same run. Targets are printed beside the figures; none is asserted in tests.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Awaitable, Callable

import httpx2
from fastapi import FastAPI, Request
from rich.console import Console

from wildhold.bench import publish
from wildhold.terminal import Col, FitTable

TARGET_HTTP_VS_BASELINE = 0.5
TARGET_MCP_P50_MS = 5.0
CLIENTS = (1, 32)
DURATION_S, QUICK_DURATION_S = 3.0, 0.4
WARMUP_S, QUICK_WARMUP_S = 0.5, 0.1
STARTUP_TIMEOUT_S = 30.0
SIGNUP, ADMIN = "bench-signup-token", "bench-admin-token"
ACTIONS = (("wait", {"ticks": 120}), ("cancel", {}))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _echo_app() -> FastAPI:
    app = FastAPI()

    @app.post("/echo")
    async def echo(request: Request) -> Any:
        return await request.json()

    @app.get("/api/health")
    async def health() -> dict[str, bool]:
        return {"ok": True}

    return app


def serve(kind: str, port: int, data: str) -> None:
    """The server side, run in its own process: the wildhold app, or the bare echo app."""
    import uvicorn

    if kind == "echo":
        app = _echo_app()
    else:
        from wildhold.server.http import create_app
        from wildhold.service.access import HostConfig
        from wildhold.service.host import Host

        config = HostConfig(signup_token=SIGNUP, admin_token=ADMIN, clock="realtime", tick_seconds=1.0,
                            rate_per_s=0, max_agents=1000, idle_after_ticks=100_000)
        app = create_app(Host.open(data, config, "default", 1))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


class Server:
    """A server process on a free loopback port, ready when its health check answers."""

    def __init__(self, kind: str, data: Path):
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.log_path = data.parent / f"{kind}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "wildhold.bench.server", kind, str(self.port), str(data)],
                                         stdout=subprocess.DEVNULL, stderr=log, env=env)

    async def ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        async with httpx2.AsyncClient(base_url=self.base) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
                try:
                    if (await client.get("/api/health")).status_code == 200:
                        return
                except httpx2.TransportError:
                    pass
                await asyncio.sleep(0.05)
        raise RuntimeError(f"server on {self.base} not ready within {STARTUP_TIMEOUT_S} s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def _drive(calls: list[Callable[[int], Awaitable[None]]], warmup: float, duration: float) -> tuple[float, list[float]]:
    """Run every client's call in a loop: a warm-up, then `duration` seconds measured. (requests/s, latencies ms)"""
    latencies: list[float] = []
    count = 0
    measuring = False
    stop_at = 0.0

    async def client(call: Callable[[int], Awaitable[None]]) -> None:
        nonlocal count
        i = 0
        while True:
            t0 = time.perf_counter()
            if measuring and t0 >= stop_at:
                return
            await call(i)
            i += 1
            if measuring:
                latencies.append((time.perf_counter() - t0) * 1000)
                count += 1

    async def phases() -> float:
        nonlocal measuring, stop_at
        await asyncio.sleep(warmup)
        start = time.perf_counter()
        stop_at = start + duration
        measuring = True
        return start

    tasks = [asyncio.create_task(client(call)) for call in calls]
    start = await phases()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    return count / elapsed, latencies


def _row(face: str, clients: int, rate: float, lat: list[float]) -> dict[str, Any]:
    lat = sorted(lat)
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan")
    return {"face": face, "clients": clients, "actions_per_s": round(rate, 1),
            "p50_ms": round(statistics.median(lat), 3) if lat else float("nan"), "p99_ms": round(p99, 3), "requests": len(lat)}


async def _register(base: str, clients: int, tag: str) -> list[str]:
    async with httpx2.AsyncClient(base_url=base, timeout=30) as http:
        tokens = []
        for i in range(clients):
            r = await http.post("/api/agents", json={"name": f"{tag}-{i}"}, headers={"Authorization": f"Bearer {SIGNUP}"})
            r.raise_for_status()
            tokens.append(r.json()["token"])
    return tokens


async def _http_clients(base: str, headers: list[dict[str, str]], path: Callable[[int], tuple[str, dict]],
                        warmup: float, duration: float) -> tuple[float, list[float]]:
    """One keep-alive connection per client, as separate agents would have."""
    async with AsyncExitStack() as stack:
        def call_for(http: httpx2.AsyncClient, h: dict[str, str]) -> Callable[[int], Awaitable[None]]:
            async def call(i: int) -> None:
                url, body = path(i)
                r = await http.post(url, json=body, headers=h)
                if r.status_code != 200:
                    raise RuntimeError(f"{url}: {r.status_code} {r.text}")
            return call

        calls = []
        for h in headers:
            http = await stack.enter_async_context(httpx2.AsyncClient(base_url=base, timeout=30))
            calls.append(call_for(http, h))
        return await _drive(calls, warmup, duration)


async def _http_run(base: str, clients: int, tag: str, warmup: float, duration: float) -> dict[str, Any]:
    tokens = await _register(base, clients, tag)
    headers = [{"Authorization": f"Bearer {t}"} for t in tokens]
    rate, lat = await _http_clients(base, headers, lambda i: (f"/api/actions/{ACTIONS[i % 2][0]}", ACTIONS[i % 2][1]),
                                    warmup, duration)
    return _row("http", clients, rate, lat)


async def _echo_run(base: str, clients: int, warmup: float, duration: float) -> dict[str, Any]:
    rate, lat = await _http_clients(base, [{}] * clients, lambda i: ("/echo", ACTIONS[i % 2][1]), warmup, duration)
    return _row("echo (bare FastAPI)", clients, rate, lat)


async def _mcp_run(base: str, clients: int, tag: str, warmup: float, duration: float) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    tokens = await _register(base, clients, tag)
    async with AsyncExitStack() as stack:
        sessions = []
        for token in tokens:
            transport = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
            await stack.enter_async_context(transport)
            sessions.append(await stack.enter_async_context(Client(streamable_http_client(f"{base}/mcp", http_client=transport))))

        def call_for(session: Any) -> Callable[[int], Awaitable[None]]:
            async def call(i: int) -> None:
                action, args = ACTIONS[i % 2]
                result = await session.call_tool(action, args)
                if result.is_error:
                    raise RuntimeError(f"{action}: {result.content}")
            return call

        rate, lat = await _drive([call_for(s) for s in sessions], warmup, duration)
    return _row("mcp", clients, rate, lat)


async def _run_all(quick: bool) -> list[dict[str, Any]]:
    warmup, duration = (QUICK_WARMUP_S, QUICK_DURATION_S) if quick else (WARMUP_S, DURATION_S)
    rows = []
    with tempfile.TemporaryDirectory(prefix="wildhold-bench-") as tmp:
        echo, wild = Server("echo", Path(tmp) / "echo"), Server("wildhold", Path(tmp) / "match")
        try:
            await asyncio.gather(echo.ready(), wild.ready())
            for n in CLIENTS:
                rows.append(await _echo_run(echo.base, n, warmup, duration))
                rows.append(await _http_run(wild.base, n, f"http{n}", warmup, duration))
                rows.append(await _mcp_run(wild.base, n, f"mcp{n}", warmup, duration))
        finally:
            echo.stop()
            wild.stop()
    return rows


def _pick(rows: list[dict[str, Any]], face: str, clients: int) -> dict[str, Any]:
    return next(r for r in rows if r["face"].startswith(face) and r["clients"] == clients)


def bench_server(as_json: bool = False, quick: bool = False, console: Console | None = None) -> dict[str, Any]:
    """Run the benchmark, print a table (and with `as_json` one JSON object last), return the figures."""
    console = console or Console()
    t0 = time.perf_counter()
    rows = asyncio.run(_run_all(quick))
    top = max(CLIENTS)
    http_top, echo_top = _pick(rows, "http", top), _pick(rows, "echo", top)
    http_one, mcp_one, mcp_top = _pick(rows, "http", 1), _pick(rows, "mcp", 1), _pick(rows, "mcp", top)
    figures: dict[str, Any] = {
        "http_actions_per_s": http_top["actions_per_s"],
        "baseline_http_actions_per_s": echo_top["actions_per_s"],
        "http_vs_baseline": round(http_top["actions_per_s"] / echo_top["actions_per_s"], 3) if echo_top["actions_per_s"] else 0.0,
        "http_p50_ms": http_one["p50_ms"],
        "http_p99_ms": http_one["p99_ms"],
        "http_p99_ms_at_32": http_top["p99_ms"],
        "mcp_actions_per_s": mcp_top["actions_per_s"],
        "mcp_p50_ms": mcp_one["p50_ms"],
        "mcp_p99_ms": mcp_one["p99_ms"],
        "runs": rows,
        "quick": quick,
        "seconds": round(time.perf_counter() - t0, 1),
        "targets": {"http_vs_baseline_min": TARGET_HTTP_VS_BASELINE, "mcp_p50_ms_max": TARGET_MCP_P50_MS},
    }
    figures["pass"] = {"http_vs_baseline_min": figures["http_vs_baseline"] >= TARGET_HTTP_VS_BASELINE,
                       "mcp_p50_ms_max": figures["mcp_p50_ms"] < TARGET_MCP_P50_MS}
    table = FitTable([Col("face", "left", key=True), Col("clients"), Col("actions/s"), Col("p50 ms"), Col("p99 ms"),
                      Col("requests")], title=f"wildhold bench server ({'quick' if quick else 'full'}: loopback, one server process each)")
    for r in rows:
        table.add_row(r["face"], str(r["clients"]), f"{r['actions_per_s']:.0f}", f"{r['p50_ms']:.2f}", f"{r['p99_ms']:.2f}", str(r["requests"]))
    ok = figures["pass"]
    table.caption = (f"HTTP at {top} clients is {figures['http_vs_baseline']:.2f} x the bare endpoint (target >= "
                     f"{TARGET_HTTP_VS_BASELINE}: {'pass' if ok['http_vs_baseline_min'] else 'miss'}); MCP p50 at 1 client "
                     f"{figures['mcp_p50_ms']:.2f} ms (target < {TARGET_MCP_P50_MS}: {'pass' if ok['mcp_p50_ms_max'] else 'miss'})")
    return publish(figures, table, as_json, console)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), sys.argv[3])
