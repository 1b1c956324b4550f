"""`wildhold serve` on loopback, `wildhold rules --tools-hash`, and `wildhold bench server --quick` (keys, no timings)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from wildhold.bench.server import bench_server
from wildhold.cli import app
from wildhold.server.mcp import catalogue_size, tool_surface, tools_hash
from wildhold.service.host import Host, HostConfig
from wildhold.store.sqlite import MatchStore

SIGNUP, ADMIN = "cli-signup-token", "cli-admin-token"


@pytest.mark.parametrize("profile,budget", [("full", "80,000"), ("compact", "15,000")])
def test_rules_tools_hash_prints_the_surface_hash_its_tools_and_its_size_within_the_budget(profile, budget):
    result = CliRunner().invoke(app, ["rules", "--tools-hash", "--tools", profile])
    assert result.exit_code == 0
    digest, size = result.output.splitlines()
    assert digest == tools_hash(profile=profile) and len(digest) == 64
    surface = tool_surface(profile=profile)
    assert size == (f"{profile} profile: {len(surface)} tools, {catalogue_size(surface):,} characters of names, "
                    f"descriptions and schemas (budget {budget})")


def test_serve_refuses_unplayable_settings(tmp_path):
    result = CliRunner().invoke(app, ["serve", "--data", str(tmp_path), "--no-late-join"])
    assert result.exit_code == 2 and "late join off needs the lobby" in result.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_tiny(port: int, data: Path) -> subprocess.Popen:
    """`wildhold serve` of a tiny lockstep match, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "wildhold.cli", "serve", "--port", str(port), "--data", str(data), "--scenario", "tiny",
         "--clock", "lockstep", "--signup-token", SIGNUP, "--admin-token", ADMIN],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "COLUMNS": "200"},
    )


def _until_healthy(http: httpx.Client) -> None:
    for _ in range(600):  # at most 60 s for the process to come up
        try:
            if http.get("/api/health").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("serve did not come up")


def test_serve_starts_on_loopback_prints_how_to_connect_and_archives_on_stop(tmp_path):
    port = _free_port()
    proc = _serve_tiny(port, tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=5) as http:
            _until_healthy(http)
            r = http.post("/api/agents", json={"name": "cli-agent"}, headers={"Authorization": f"Bearer {SIGNUP}"})
            assert r.status_code == 201 and r.json()["mcp_url"] == f"{base}/mcp"
            token = r.json()["token"]
            assert http.get("/api/world", headers={"Authorization": f"Bearer {token}"}).json()["clock"] == "lockstep"
            assert http.post("/api/admin/stop", headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    text = out.decode()
    assert f"{base}/mcp" in text and f"{base}/api" in text and "POST" in text and "/api/agents" in text
    assert (tmp_path / "match.wildhold.zip").exists() and (tmp_path / "match.sqlite").exists()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_serve_cleanly_store_closed_runner_folder_removed_match_resumable(tmp_path, sig):
    port, data = _free_port(), tmp_path / "m"
    proc = _serve_tiny(port, data)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            _until_healthy(http)
            token = http.post("/api/agents", json={"name": "signalled"}, headers={"Authorization": f"Bearer {SIGNUP}"}).json()["token"]
            agent = {"Authorization": f"Bearer {token}"}
            saved = http.post("/api/programs/idler", json={"source": "while True:\n    wait(ticks=1)\n"}, headers=agent)
            assert saved.status_code == 200, saved.text
            assert http.post("/api/programs/idler/start", json={}, headers=agent).status_code == 200
            said = http.post("/api/actions/say", json={"text": "heard before the signal"}, headers=agent)
            assert said.status_code == 200, said.text
        runners = _children(proc.pid)
        assert len(runners) == 1, "the program runner is the server's one child"
        runner_folder = Path(os.readlink(f"/proc/{runners[0]}/cwd"))
        assert runner_folder.name.startswith("wildhold-runner-")
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=20)
    assert proc.returncode == 0, out.decode()[-2000:]
    assert not runner_folder.exists()
    assert not (data / "match.sqlite-wal").exists(), "the store was not closed"
    store = MatchStore(data / "match.sqlite")
    assert [i.args for i in store.inputs() if i.name == "say"] == [{"text": "heard before the signal"}]
    store.close()
    host = Host.open(data, HostConfig(signup_token=SIGNUP, admin_token=ADMIN, clock="lockstep"), "tiny", 1)
    try:
        assert host.state == "running" and host.programs.status("a1", "idler")["state"] in ("running", "waiting")
    finally:
        host.close()


@pytest.mark.slow
def test_quick_server_bench_prints_one_json_object_last_with_the_figures(capsys):
    returned = bench_server(as_json=True, quick=True)
    lines = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures == json.loads(json.dumps(returned))
    for key in ("http_actions_per_s", "baseline_http_actions_per_s", "http_p99_ms", "mcp_p50_ms"):
        assert isinstance(figures[key], float) and figures[key] > 0, key
    assert {(r["face"].split()[0], r["clients"]) for r in figures["runs"]} == {
        (face, n) for face in ("echo", "http", "mcp") for n in (1, 32)}
    assert set(figures["pass"]) == set(figures["targets"])
