"""The served app on loopback: uvicorn on 127.0.0.1, on a free port, in the caller's event loop.

`wildhold run` plays every arm through this server, so each arm's MCP client dials a real TCP
socket exactly as an outside agent would. The server runs as a task of the same loop as the arms,
so the run can still read its own host (the season's state, the tick) between calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from typing import Any, AsyncIterator

import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from wildhold.server.http import KEEP_ALIVE_S

STARTUP_TIMEOUT_S = 15.0
SHUTDOWN_TIMEOUT_S = 10.0


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: Ctrl-C interrupts the run as usual and a rerun resumes it."""

    @contextlib.contextmanager
    def capture_signals(self):  # type: ignore[override]
        yield


class Loopback:
    """Serves `app` (its lifespan included) on 127.0.0.1 while the context is open; `url` is where."""

    def __init__(self, app: Any):
        self.app = app
        self.url = ""
        self.server: _Server | None = None
        self.task: asyncio.Task | None = None
        self.sock: socket.socket | None = None

    async def __aenter__(self) -> Loopback:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Accepted connections inherit this: without it each response waits out the client's delayed
        # ACK (~40 ms a call measured here when server and client share the process).
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(self.app, lifespan="on", log_config=None, log_level="warning", access_log=False,
                                timeout_graceful_shutdown=int(SHUTDOWN_TIMEOUT_S // 2), timeout_keep_alive=KEEP_ALIVE_S)
        self.server = _Server(config)
        self.task = asyncio.create_task(self._serve(), name="wildhold-loopback")
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self.server.started:
            if self.task.done():
                self.sock.close()
                self.task.result()  # raises whatever stopped the server
                raise RuntimeError(f"the loopback server on {self.url} stopped while starting")
            if time.monotonic() > deadline:
                await self.close()
                raise RuntimeError(f"the loopback server on {self.url} did not start within {STARTUP_TIMEOUT_S:.0f} s")
            await asyncio.sleep(0.01)
        return self

    async def _serve(self) -> None:
        try:
            await self.server.serve(sockets=[self.sock])
        except SystemExit as exc:  # uvicorn exits the process when the app's startup fails; here it is an error
            raise RuntimeError(f"the app served on {self.url} failed to start (uvicorn exit {exc.code}); "
                               "its error is logged above") from None

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop accepting, let open requests finish (bounded), run the app's shutdown, release the port."""
        if self.server is None or self.task is None:
            return
        self.server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self.task), SHUTDOWN_TIMEOUT_S)
        except TimeoutError:
            self.server.force_exit = True
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        finally:
            if self.sock is not None:
                self.sock.close()
            self.server = self.task = None

    @contextlib.asynccontextmanager
    async def mcp(self, token: str) -> AsyncIterator[Client]:
        """The official MCP client over streamable HTTP to this server, as `token`; its connections close on exit."""
        async with httpx2.AsyncClient(base_url=self.url, headers={"Authorization": f"Bearer {token}"},
                                      timeout=60.0, trust_env=False) as http:  # loopback: never via a proxy
            async with Client(streamable_http_client(f"{self.url}/mcp", http_client=http)) as client:
                yield client
