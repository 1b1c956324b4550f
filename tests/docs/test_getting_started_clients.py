"""The MCP client snippets of the getting-started page (docs/getting-started.md): each parses in its client's
format and, read the way that client reads it, connects to a served world (the served path, the bearer header) and
plays as the token's character."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
import re
import shlex
import shutil
import tomllib
from typing import Any, Callable
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from server_support import BASE, auth, serving

from wildhold.cli import serve
from wildhold.server.http import create_app
from wildhold.service import reads
from paths_support import ROOT

ROOT = ROOT
SECTION = "Connect an MCP client"
TOKEN = "<agent token>"  # the page's placeholder for the token POST /api/agents answers
Connection = tuple[str, dict[str, str]]  # (URL, headers) as the client would send them


def section_text() -> str:
    text = (ROOT / "docs" / "getting-started.md").read_text()
    start = text.index(f"\n## {SECTION}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def snippets() -> dict[str, list[tuple[str, str]]]:
    """Each client's fenced blocks in the section, by the bold label of the paragraph that introduces them."""
    found: dict[str, list[tuple[str, str]]] = {}
    label = None
    for m in re.finditer(r"^\*\*(?P<label>[^*\n]+)\*\*|^```(?P<lang>[^\n]*)\n(?P<code>.*?)^```$", section_text(), re.M | re.S):
        if m["label"]:
            label = m["label"]
        else:
            assert label is not None, "a snippet before any client's label"
            assert m["lang"], f"{label}: a fenced block without a language tag"
            found.setdefault(label, []).append((m["lang"], m["code"]))
    return found


def header_line(line: str) -> tuple[str, str]:
    name, sep, value = line.partition(":")
    assert sep and re.fullmatch(r"[A-Za-z0-9_-]+", name), f"not a Name: value header: {line!r}"
    return name, value.strip()


def claude_code_command(code: str, env: dict[str, str]) -> Connection:
    (line,) = [ln for ln in code.splitlines() if ln.strip()]
    argv = shlex.split(line)
    assert argv[:3] == ["claude", "mcp", "add"], argv
    options: dict[str, list[str]] = {}
    positional: list[str] = []
    rest = iter(argv[3:])
    for arg in rest:
        if arg.startswith("--"):
            options.setdefault(arg, []).append(next(rest))
        else:
            positional.append(arg)
    assert options.pop("--transport") == ["http"] and set(options) <= {"--header", "--scope"}, options
    name, url = positional
    assert name == "wildhold"
    return url, dict(header_line(h) for h in options.get("--header", []))


def claude_code_json(code: str, env: dict[str, str]) -> Connection:
    entry = json.loads(code)["mcpServers"]["wildhold"]
    assert entry["type"] == "http" and set(entry) == {"type", "url", "headers"}, entry
    return entry["url"], entry["headers"]


def codex_toml(code: str, env: dict[str, str]) -> Connection:
    entry = tomllib.loads(code)["mcp_servers"]["wildhold"]
    # A url makes it a streamable HTTP server; the token is read from the named variable, never inline.
    assert "command" not in entry and "bearer_token" not in entry, entry
    assert set(entry) <= {"url", "bearer_token_env_var", "http_headers", "env_http_headers"}, entry
    headers = dict(entry.get("http_headers", {}))
    headers.update({k: env[v] for k, v in entry.get("env_http_headers", {}).items()})
    headers["Authorization"] = f"Bearer {env[entry['bearer_token_env_var']]}"
    return entry["url"], headers


def cursor_json(code: str, env: dict[str, str]) -> Connection:
    entry = json.loads(code)["mcpServers"]["wildhold"]
    assert "command" not in entry and set(entry) <= {"url", "headers"}, entry  # a url entry is a remote server
    return entry["url"], entry["headers"]


def bridge_args(entry: dict[str, Any]) -> list[str]:
    """The bridge's own arguments: what follows the package name in `npx -y mcp-remote ...`."""
    assert entry["command"] == "npx", entry
    args = entry["args"]
    (at,) = [i for i, a in enumerate(args) if a.split("@")[0] == "mcp-remote"]
    assert set(args[:at]) <= {"-y", "--yes"}, args
    return args[at + 1:]


def claude_desktop_json(code: str, env: dict[str, str]) -> Connection:
    entry = json.loads(code)["mcpServers"]["wildhold"]
    args = bridge_args(entry)
    assert not any(" " in a for a in entry["args"]), "an argument with a space is mangled by some launchers"
    url, headers = args[0], {}
    for i, a in enumerate(args):
        if a == "--header":  # the bridge fills ${VAR} from its own environment, the entry's "env"
            value = re.sub(r"\$\{([^}]+)\}", lambda m: entry["env"][m[1]], args[i + 1])
            headers.update([header_line(value)])
    return url, headers


READERS: dict[tuple[str, str], Callable[[str, dict[str, str]], Connection]] = {
    ("Claude Code", "sh"): claude_code_command,
    ("Claude Code", "json"): claude_code_json,
    ("Codex", "toml"): codex_toml,
    ("Cursor", "json"): cursor_json,
    ("Claude Desktop", "json"): claude_desktop_json,
}


def codex_env() -> dict[str, str]:
    """The variable the Codex paragraph tells the user to export, with the placeholder as its value."""
    return dict(re.findall(r"`export ([A-Z_][A-Z0-9_]*)=([^`]+)`", section_text()))


def connections(token: str = TOKEN) -> list[tuple[str, Connection]]:
    out = []
    env = {k: v.replace(TOKEN, token) for k, v in codex_env().items()}
    for label, blocks in snippets().items():
        for lang, code in blocks:
            url, headers = READERS[(label, lang)](code.replace(TOKEN, token), env)
            out.append((f"{label} ({lang})", (url, headers)))
    return out


def test_every_client_has_its_snippet_in_its_own_format():
    found = {(label, lang) for label, blocks in snippets().items() for lang, _ in blocks}
    assert found == set(READERS)
    assert codex_env() == {"WILDHOLD_AGENT_TOKEN": TOKEN}


@functools.cache
def served_paths() -> list[str | None]:
    return [getattr(r, "path", None) for r in create_app(lambda: None).routes]  # never opened: its routes only


@pytest.mark.parametrize("which, conn", connections(), ids=[w for w, _ in connections()])
def test_each_snippet_names_the_served_mcp_path_and_the_bearer_header(which, conn):
    url, headers = conn
    parts = urlsplit(url)
    default_port = inspect.signature(serve).parameters["port"].default
    assert (parts.scheme, parts.hostname, parts.port) == ("http", "127.0.0.1", default_port), url
    served = served_paths()
    assert parts.path in served and parts.path == "/mcp", f"{which}: {parts.path} is not the MCP route"
    assert headers == {"Authorization": f"Bearer {TOKEN}"}, f"{which}: {headers}"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_each_snippet_connects_as_the_tokens_character(tmp_path):
    """Read with a real token, each snippet's URL and headers open an MCP session (the initialize handshake)."""
    async with serving(tmp_path) as s:
        token, reg = await s.register("reader")
        assert reg["mcp_url"] == f"{BASE}/mcp"
        for which, (url, headers) in connections(token):
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=s.app), headers=headers) as http:
                async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                    names = {t.name for t in (await client.list_tools()).tools}
                    me = (await client.call_tool("world_info", {})).structured_content
            assert {"observe", "move", "world_info"} <= names, which
            assert me["status"] == "running", which
            assert reads.roster(s.host)[0]["name"] == "reader"
        # The header is what lets them in: the same request without it, or with the placeholder, is refused.
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        accept = {"Accept": "application/json, text/event-stream"}
        refused = await s.http.post("/mcp", json=init, headers=accept)
        placeholder = await s.http.post("/mcp", json=init, headers={**accept, **auth(TOKEN)})
        admitted = await s.http.post("/mcp", json=init, headers={**accept, **auth(token)})
        assert (refused.status_code, placeholder.status_code, admitted.status_code) == (401, 401, 200)


BRIDGE = os.environ.get("WILDHOLD_MCP_REMOTE") or shutil.which("mcp-remote")


@pytest.mark.slow
@pytest.mark.skipif(BRIDGE is None, reason="the mcp-remote bridge is not installed (npm i -g mcp-remote, or set "
                                           "WILDHOLD_MCP_REMOTE to its executable)")
def test_the_claude_desktop_entry_runs_through_the_bridge(tmp_path):
    """The desktop entry as the app would launch it (npx swapped for an installed bridge), against a served world."""
    from wildhold.agents.scaffold.loopback import Loopback
    from wildhold.service.access import HostConfig
    from wildhold.service.host import Host

    (code,) = [c for lang, c in snippets()["Claude Desktop"] if lang == "json"]
    entry = json.loads(code)["mcpServers"]["wildhold"]
    config = HostConfig(signup_token="signup-token-for-bridge", admin_token="admin-token-for-bridge", clock="lockstep",
                        rate_per_s=0.0)
    host = Host.open(tmp_path / "world", config, "tiny", 2, manifest_extra={"tools_hash": "test"})

    async def scenario() -> set[str]:
        async with Loopback(create_app(host)) as server:
            token, _ = host.register("desk", {})
            args = [a.replace(f"http://127.0.0.1:{urlsplit(a).port}", server.url) if a.startswith("http") else a
                    for a in bridge_args(entry)]
            env = {k: v.replace(TOKEN, token) for k, v in entry["env"].items()}
            params = StdioServerParameters(command=BRIDGE, args=args, env={**env, "HOME": str(tmp_path)})
            async with Client(params, mode="legacy") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                await client.call_tool("world_info", {})
            return names

    try:
        names = asyncio.run(scenario())
    finally:
        host.close()
    assert {"observe", "move", "world_info"} <= names
