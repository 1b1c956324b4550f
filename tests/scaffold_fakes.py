"""Shared parts of the provider adapter tests: a fake provider server on 127.0.0.1 that plays scripted
(status, JSON) answers and keeps every request, the transcript every adapter is sent, and one-arm runs."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from wildhold.agents.scaffold.accounting import ArmLedger, Telemetry, rebuild
from wildhold.agents.scaffold.adapters import Turn
from wildhold.agents.scaffold.experiment import Experiment, Run

TOOLS = [{"name": "observe", "description": "What you perceive.",
          "input_schema": {"type": "object", "properties": {}, "additionalProperties": False}}]
TRANSCRIPT = [
    {"role": "user", "content": "Session 1 begins."},
    {"role": "assistant", "content": "First a look.", "tool_calls": [
        {"id": "c0", "name": "observe", "arguments": {}},
        {"id": "c1", "name": "read_file", "arguments": {"path": "notes.md"}}]},
    {"role": "tool", "tool_call_id": "c0", "name": "observe", "content": "{\"ok\": true}"},
    {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "not_found: There is no file notes.md."},
]
KEY_ENV, SECRET = "FAKE_PROVIDER_KEY", "secret-key"


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeProvider:
    """Answers each POST with the next scripted (status, payload); the last answer repeats once the script runs out.

    Use as a context manager: it yields the base URL, and stops the server (bounded by the
    socket's timeout) on exit.
    """

    def __init__(self, answers: list[tuple[int, dict[str, Any]]]):
        self.answers, self.requests = list(answers), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 10

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                outer.requests.append(Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, payload = outer.answers[min(len(outer.requests), len(outer.answers)) - 1]
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)

    def serve(self, make_adapter: Callable[[str], Any]) -> Turn:
        """One completion of TRANSCRIPT by an adapter made for this server's URL, while it serves."""
        with self as url:
            return asyncio.run(complete(make_adapter(url)))


async def complete(adapter: Any, messages: list[dict[str, Any]] = TRANSCRIPT) -> Turn:
    """One turn for `messages`, then the adapter's client closed."""
    try:
        return await adapter.complete("You are ann.", messages, TOOLS)
    finally:
        await adapter.close()


async def follow_up_then_new_session(adapter: Any) -> Turn:
    """A first turn, its follow-up carrying the first tool call's answer ("seen"), then a new session's first turn.

    Returns the first turn; the second request shows what the adapter sent back of it.
    """
    first = await adapter.complete("s", TRANSCRIPT[:1], TOOLS)
    follow = TRANSCRIPT[:1] + [
        {"role": "assistant", "content": first.text, "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in first.tool_calls]},
        {"role": "tool", "tool_call_id": first.tool_calls[0].id, "name": "observe", "content": "seen"}]
    await adapter.complete("s", follow, TOOLS)
    await adapter.complete("s", TRANSCRIPT[:1], TOOLS)  # a new session: a fresh transcript
    await adapter.close()
    return first


def refused_url() -> str:
    """A base URL where nothing listens: a port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def assert_retried(fake: FakeProvider, turn: Turn, retries: int) -> None:
    """Each retry is counted in the turn and resent the very same request."""
    assert turn.retries == retries and len(fake.requests) == retries + 1
    assert all(r.body == fake.requests[0].body for r in fake.requests)


def play_one_arm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str, model: str,
                 answers: list[tuple[int, dict[str, Any]]], path: str = "") -> tuple[FakeProvider, list[Any], dict]:
    """Plays the tiny scenario with one arm (named after its provider) against a fake serving `answers`
    at base URL + `path`, until its hidden $0.01 budget at $3/$15 per Mtok runs out.

    The key comes from the environment variable KEY_ENV; backoffs are cut to 0.01 s. Returns the fake,
    the adapters the run made and the paths of what the run wrote.
    """
    monkeypatch.setenv(KEY_ENV, SECRET)
    made = []
    original = Run.adapter

    def quick_adapter(self, arm):
        made.append(original(self, arm))
        made[-1].backoff_s = 0.01
        return made[-1]

    monkeypatch.setattr(Run, "adapter", quick_adapter)
    fake = FakeProvider(answers)
    with fake as url:
        exp = Experiment.model_validate({
            "name": f"{provider}-fake", "scenario": "tiny", "seed": 2, "budget_usd": 0.01, "ceiling_s": 120,
            "caps": {"wake_default_minutes": 5},
            "arms": [{"name": provider, "provider": provider, "model": model, "base_url": url + path,
                      "api_key_env": KEY_ENV, "sampling": {"temperature": 0.0},
                      "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}]})
        run = Run(exp, tmp_path, tmp_path)
        asyncio.run(run.play())
        paths = run.finish()
    return fake, made, paths


def assert_arm_spent_its_budget(fake: FakeProvider, paths: dict, arm: str, input_per_call: int,
                                first_retries: int) -> ArmLedger:
    """The arm ended on its budget after two calls or more, each priced from the provider's own counts
    (`input_per_call` in, 1024 of it cached, 34 out); the first call took `first_retries`. No request
    carried the budget, the key or its variable's name, and the key is in no file the run wrote."""
    records = Telemetry(paths["telemetry"]).records()
    ledger = rebuild(records).arm(arm)
    assert ledger.complete == "budget" and ledger.llm_calls >= 2
    assert ledger.cached_input_tokens == ledger.llm_calls * 1024
    assert ledger.cost_usd == pytest.approx(ledger.llm_calls * (input_per_call * 3.0 + 34 * 15.0) / 1e6)
    assert [r["retries"] for r in records if r["kind"] == "llm_call"][0] == first_retries
    sent = json.dumps([r.body for r in fake.requests]).lower()
    assert "budget" not in sent and "0.01" not in sent and SECRET not in sent and KEY_ENV.lower() not in sent
    assert SECRET not in paths["manifest"].read_text() + paths["telemetry"].read_text()
    return ledger

