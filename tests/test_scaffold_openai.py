"""The OpenAI-compatible adapter against a fake chat-completions server on 127.0.0.1 (no network, no keys)."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

from wildhold.agents.scaffold.openai_compat import OpenAICompatAdapter

COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake-model",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "Looking around.",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "observe", "arguments": "{}"}},
                       {"id": "call_2", "type": "function",
                        "function": {"name": "write_file", "arguments": "{\"path\": \"a.md\", \"content\": \"hi\"}"}}]}}],
    "usage": {"prompt_tokens": 1200, "completion_tokens": 34, "total_tokens": 1234,
              "prompt_tokens_details": {"cached_tokens": 1024}},
}


class FakeServer:
    """Answers /v1/chat/completions: first `failures` requests with a 500, then COMPLETION; keeps every request."""

    def __init__(self, failures: int, status: int = 500):
        self.failures, self.status, self.requests = failures, status, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body))
                if len(outer.requests) <= outer.failures:
                    payload, status = {"error": {"message": "failed", "type": "server_error"}}, outer.status
                else:
                    payload, status = COMPLETION, 200
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

    def __enter__(self):
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


TOOLS = [{"name": "observe", "description": "What you perceive.", "input_schema": {"type": "object", "properties": {}}}]


async def _complete(adapter, messages):
    try:
        return await adapter.complete("You are ann.", messages, TOOLS)
    finally:
        await adapter.close()


def test_tool_calls_usage_with_cached_tokens_and_a_transient_500_retried():
    with FakeServer(failures=1) as url:
        adapter = OpenAICompatAdapter("fake-model", base_url=url, api_key="k", sampling={"temperature": 0.0},
                                      backoff_s=0.01)
        messages = [{"role": "user", "content": "Session 1 begins."},
                    {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "name": "observe", "arguments": {}}]},
                    {"role": "tool", "tool_call_id": "c0", "name": "observe", "content": "{\"ok\": true}"}]
        turn = asyncio.run(_complete(adapter, messages))
    assert turn.retries == 1
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_1", "observe", {}), ("call_2", "write_file", {"path": "a.md", "content": "hi"})]
    assert (turn.usage.input_tokens, turn.usage.cached_input_tokens, turn.usage.output_tokens) == (1200, 1024, 34)
    assert turn.text == "Looking around."


def test_the_request_is_the_chat_completions_wire_format():
    fake = FakeServer(failures=0)
    with fake as url:
        adapter = OpenAICompatAdapter("fake-model", base_url=url, api_key="k", sampling={"temperature": 0.2})
        asyncio.run(_complete(adapter, [
            {"role": "user", "content": "Session 1 begins."},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "name": "observe", "arguments": {}}]},
            {"role": "tool", "tool_call_id": "c0", "name": "observe", "content": "seen"}]))
    path, body = fake.requests[0]
    assert path == "/v1/chat/completions" and body["model"] == "fake-model" and body["temperature"] == 0.2
    assert body["messages"][0] == {"role": "system", "content": "You are ann."}
    assert body["messages"][2]["tool_calls"][0]["function"] == {"name": "observe", "arguments": "{}"}
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "c0", "content": "seen"}
    assert body["tools"][0]["function"]["name"] == "observe"


def test_retries_stop_after_max_retries_and_the_error_surfaces():
    fake = FakeServer(failures=99)
    with fake as url:
        adapter = OpenAICompatAdapter("fake-model", base_url=url, api_key="k", max_retries=2, backoff_s=0.01)
        with pytest.raises(openai.InternalServerError):
            asyncio.run(_complete(adapter, [{"role": "user", "content": "hi"}]))
    assert len(fake.requests) == 3


def test_a_permanent_error_is_not_retried():
    fake = FakeServer(failures=99, status=400)
    with fake as url:
        adapter = OpenAICompatAdapter("fake-model", base_url=url, api_key="k", max_retries=2, backoff_s=0.01)
        with pytest.raises(openai.BadRequestError):
            asyncio.run(_complete(adapter, [{"role": "user", "content": "hi"}]))
    assert len(fake.requests) == 1


def test_an_openai_arm_plays_sessions_through_the_scaffold_until_its_hidden_budget(tmp_path, monkeypatch):
    import copy

    from wildhold.agents.scaffold.accounting import Telemetry, rebuild
    from wildhold.agents.scaffold.experiment import Experiment, Run

    global COMPLETION
    ending = copy.deepcopy(COMPLETION)
    ending["choices"][0]["message"]["tool_calls"][1] = {"id": "call_2", "type": "function",
                                                         "function": {"name": "end_session", "arguments": "{}"}}
    monkeypatch.setattr(__import__(__name__), "COMPLETION", ending)
    monkeypatch.setenv("FAKE_KEY", "k")
    fake = FakeServer(failures=0)
    with fake as url:
        exp = Experiment.model_validate({
            "name": "openai-fake", "scenario": "tiny", "seed": 2, "budget_usd": 0.01, "ceiling_s": 120,
            "caps": {"wake_default_minutes": 5},
            "arms": [{"name": "gpt", "provider": "openai", "model": "fake-model", "base_url": url,
                      "api_key_env": "FAKE_KEY", "sampling": {"temperature": 0.0},
                      "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}]})
        run = Run(exp, tmp_path, tmp_path)
        asyncio.run(run.play())
        paths = run.finish()
    ledger = rebuild(Telemetry(paths["telemetry"]).records()).arm("gpt")
    assert ledger.complete == "budget" and ledger.sessions == 3 and ledger.cached_input_tokens == 3 * 1024
    assert ledger.cost_usd == pytest.approx(3 * (1200 * 3.0 + 34 * 15.0) / 1e6)
    sent = json.dumps([body for _, body in fake.requests]).lower()
    assert "budget" not in sent and "0.01" not in sent and "fake_key" not in sent
