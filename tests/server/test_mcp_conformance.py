"""The official MCP conformance suite against a served match on ONE agent token (as a host built on the TypeScript
SDK connects: a session per scenario, none closed), with the scenarios Wildhold fails for features it does not offer
as the baseline: the suite exits 1 on any other failure, and on a baseline entry that passes. Run when the suite is
installed: WILDHOLD_MCP_CONFORMANCE names its dist/index.js, WILDHOLD_NODE a Node.js of version 22 or later."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from wildhold.agents.scaffold.loopback import Loopback
from wildhold.server.http import create_app
from wildhold.service.access import HostConfig
from wildhold.service.host import Host

SUITE = os.environ.get("WILDHOLD_MCP_CONFORMANCE")
NODE = os.environ.get("WILDHOLD_NODE") or shutil.which("node")
BASELINE = Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "conformance-expected-failures.yaml"


def bearer(upstream: str, token: str, client: httpx2.AsyncClient) -> Starlette:
    """Relays every request to `upstream` with the agent's token added (the suite sends no headers of its own);
    Host and Origin pass as sent, streams as they come."""

    async def relay(request: Request) -> StreamingResponse:
        headers = [(k, v) for k, v in request.headers.items() if k not in ("content-length", "authorization")]
        sent = client.build_request(request.method, upstream + request.url.path, content=await request.body(),
                                    headers=[*headers, ("authorization", f"Bearer {token}")])
        answer = await client.send(sent, stream=True)
        kept = {k: v for k, v in answer.headers.items() if k not in ("content-length", "transfer-encoding")}
        return StreamingResponse(answer.aiter_raw(), status_code=answer.status_code, headers=kept)

    return Starlette(routes=[Route("/{path:path}", relay, methods=["GET", "POST", "DELETE"])])


@pytest.mark.slow(seconds=60)
@pytest.mark.skipif(not SUITE or not NODE, reason="the MCP conformance suite is not installed (npm i "
                    "@modelcontextprotocol/conformance@0.1.16; set WILDHOLD_MCP_CONFORMANCE to its dist/index.js and "
                    "WILDHOLD_NODE to a Node.js 22 or later)")
def test_every_scenario_of_an_offered_feature_passes_on_one_agent_token(tmp_path):
    config = HostConfig(signup_token="conformance-signup", admin_token="conformance-admin", clock="realtime", rate_per_s=0.0)
    host = Host.open(tmp_path / "world", config, "tiny", 1, manifest_extra={"tools_hash": "test"})

    async def run() -> subprocess.CompletedProcess:
        async with Loopback(create_app(host)) as served, httpx2.AsyncClient(timeout=None) as client:
            token, _ = host.register("conformance", {})
            async with Loopback(bearer(served.url, token, client)) as front:
                return await asyncio.to_thread(
                    subprocess.run, [NODE, SUITE, "server", "--url", f"{front.url}/mcp", "--expected-failures",
                                     str(BASELINE), "-o", str(tmp_path / "results")],
                    capture_output=True, text=True, timeout=600, cwd=tmp_path)

    try:
        done = asyncio.run(run())
    finally:
        host.close()
    summary = done.stdout[done.stdout.find("=== SUMMARY"):]
    assert done.returncode == 0, summary + done.stderr[-2000:]
