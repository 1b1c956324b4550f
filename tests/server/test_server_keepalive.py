"""A served connection outlives an agent's pause between calls: an agent that waits a few seconds (uvicorn's
default keep-alive, 5 s) and calls again is answered on the same connection, rather than racing the server
closing it (the cause of MCP agents dropped with ReadError in the soak)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

SIGNUP, ADMIN = "keepalive-signup-token", "keepalive-admin-token"
PAUSE_S = 6.5  # longer than uvicorn's default keep-alive


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _health(sock: socket.socket) -> bytes:
    """One keep-alive GET /api/health on an open connection; the response's bytes ('' if the server closed it)."""
    sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


@pytest.mark.slow(seconds=60)
def test_a_connection_idle_through_an_agents_pause_still_answers(tmp_path: Path):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wildhold.cli", "serve", "--port", str(port), "--data", str(tmp_path / "m"),
         "--scenario", "tiny", "--clock", "lockstep", "--signup-token", SIGNUP, "--admin-token", ADMIN],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})
    try:
        for _ in range(600):  # at most 60 s for the process to come up
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("serve did not come up")
        with sock:
            assert _health(sock).startswith(b"HTTP/1.1 200")
            time.sleep(PAUSE_S)
            try:
                again = _health(sock)
            except ConnectionResetError:
                again = b""
            assert again.startswith(b"HTTP/1.1 200"), "the server closed the connection during the pause"
    finally:
        proc.terminate()
        proc.wait(60)
