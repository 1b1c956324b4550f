"""The app served by uvicorn on 127.0.0.1 for `wildhold run`: MCP over real TCP, its lifespan, a clean stop."""

from __future__ import annotations

import asyncio
import socket
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI

from wildhold.agents.scaffold.loopback import Loopback
from wildhold.eval.report import score_archive
from wildhold.server.http import create_app
from wildhold.service.access import HostConfig
from wildhold.service.host import Host

SIGNUP = "signup-token-for-loopback"


def _refused(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    try:
        socket.create_connection((host, int(port)), timeout=1.0).close()
    except OSError:
        return True
    return False


def test_mcp_clients_reach_the_served_world_over_tcp_and_the_server_stops_cleanly(tmp_path):
    config = HostConfig(signup_token=SIGNUP, admin_token="admin-token-for-loopback", clock="lockstep", lobby=True,
                        rate_per_s=0.0)
    host = Host.open(tmp_path / "world", config, "tiny", 2, manifest_extra={"tools_hash": "test"})
    app = create_app(host, scorer=score_archive)

    async def scenario() -> tuple[str, dict, list[str], bool]:
        async with Loopback(app) as server:
            assert server.url.startswith("http://127.0.0.1:")
            async with httpx.AsyncClient(base_url=server.url) as http:  # the same port answers plain HTTP
                health = (await http.get("/api/health")).status_code
            async with server.mcp(SIGNUP) as c:
                r = await c.call_tool("register", {"name": "ann"})
            token = r.structured_content["token"]
            host.start()
            async with server.mcp(token) as c:
                names = [t.name for t in (await c.list_tools()).tools]
                info = (await c.call_tool("world_info", {})).structured_content
            clock_ran = host.clock.running
            return server.url, info, names, clock_ran and health == 200

    try:
        url, info, names, ok = asyncio.run(scenario())
    finally:
        host.close()
    assert ok and info["status"] == "running" and {"observe", "wait", "world_info"} <= set(names)
    assert _refused(url)  # nothing listens after the context closed
    assert not host.clock.running  # the app's lifespan shutdown ran


def test_an_app_that_fails_to_start_is_an_error_not_an_exit(tmp_path):
    @asynccontextmanager
    async def broken(app):
        raise RuntimeError("no world to serve")
        yield

    async def scenario() -> None:
        async with Loopback(FastAPI(lifespan=broken)):
            pass

    with pytest.raises(RuntimeError, match="failed to start"):
        asyncio.run(scenario())


def test_the_listening_socket_sends_without_waiting_for_acks(tmp_path):
    """Nagle off on the socket the served connections are accepted from: with it on, each response from
    a server sharing the arms' process waits out a delayed ACK (see `wildhold bench server` for latency)."""
    app = FastAPI()

    async def check() -> int:
        async with Loopback(app) as lb:
            return lb.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)

    assert asyncio.run(check()) != 0
