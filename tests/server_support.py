"""Helpers for the server tests: a served match in-process, its HTTP client and official MCP clients."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import httpx
import httpx2
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from wildhold.eval.html import render_html
from wildhold.eval.report import score_archive
from wildhold.server.http import create_app
from wildhold.service.access import HostConfig
from wildhold.service.host import Host
from wildhold.web.site import add_site

SIGNUP, ADMIN, SPECTATOR = "signup-token-for-tests", "admin-token-for-tests", "spectator-token-for-tests"
BASE = "http://127.0.0.1:8765"  # never dialled: requests go to the app in-process


def config(**overrides: Any) -> HostConfig:
    settings: dict[str, Any] = {"clock": "lockstep", "turn_deadline_s": 60.0, "rate_per_s": 0.0, "wait_max_s": 10.0}
    settings.update(overrides)
    return HostConfig(signup_token=SIGNUP, admin_token=ADMIN, spectator_token=SPECTATOR, **settings)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Served:
    app: FastAPI
    host: Host
    http: httpx.AsyncClient

    async def register(self, name: str) -> tuple[str, dict[str, Any]]:
        r = await self.http.post("/api/agents", json={"name": name}, headers=auth(SIGNUP))
        assert r.status_code == 201, r.text
        return r.json()["token"], r.json()

    def mcp(self, token: str, mode: str = "auto") -> Client:
        """The official MCP client over streamable HTTP, carried in-process by an ASGI transport."""
        transport = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=self.app), base_url=BASE, headers=auth(token))
        return Client(streamable_http_client(f"{BASE}/mcp", http_client=transport), mode=mode)


@asynccontextmanager
async def serving(data: Path, scenario: str = "tiny", seed: int = 3, horizon: str = "visible", site: bool = False,
                  **overrides: Any) -> AsyncIterator[Served]:
    """A match served by the real app, lifespan (clock, MCP sessions) running, on this event loop; with `site`,
    the web pages too, as `wildhold serve` adds them."""
    host = Host.open(data, config(**overrides), scenario, seed, manifest_extra={"tools_hash": "test"}, horizon=horizon)
    app = create_app(host, scorer=score_archive, render_html=render_html)
    if site:
        add_site(app)
    try:
        async with app.router.lifespan_context(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
                yield Served(app, host, http)
    finally:
        host.close()


async def until(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll a condition every few milliseconds, at most `timeout` seconds; whether it came true."""
    for _ in range(int(timeout / 0.01)):
        if predicate():
            return True
        await asyncio.sleep(0.01)
    return predicate()
