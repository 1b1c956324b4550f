"""The Anthropic adapter against a fake Messages API on 127.0.0.1 (no network, no keys)."""

from __future__ import annotations

import asyncio
import copy
import json
import socket

import anthropic
import pytest
from scaffold_fakes import FakeProvider

from wildhold.agents.scaffold.anthropic_adapter import AnthropicAdapter

MESSAGE = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-fake", "stop_reason": "tool_use",
    "stop_sequence": None,
    "content": [{"type": "text", "text": "Looking around."},
                {"type": "tool_use", "id": "toolu_1", "name": "observe", "input": {}},
                {"type": "tool_use", "id": "toolu_2", "name": "write_file",
                 "input": {"path": "a.md", "content": "hi"}}],
    "usage": {"input_tokens": 120, "cache_read_input_tokens": 1024, "cache_creation_input_tokens": 56,
              "output_tokens": 34},
}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
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


def _adapter(url, **kw):
    return AnthropicAdapter("claude-fake", base_url=url, api_key="test-key", backoff_s=0.01, **kw)


async def _complete(adapter, messages=TRANSCRIPT):
    try:
        return await adapter.complete("You are ann.", messages, TOOLS)
    finally:
        await adapter.close()


def test_a_tool_call_round_trip_in_the_messages_wire_format():
    fake = FakeProvider([(200, MESSAGE)])
    with fake as url:
        turn = asyncio.run(_complete(_adapter(url, sampling={"temperature": 0.2, "max_tokens": 1000})))
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("toolu_1", "observe", {}), ("toolu_2", "write_file", {"path": "a.md", "content": "hi"})]
    assert turn.text == "Looking around." and turn.retries == 0
    (req,) = fake.requests
    assert req.path == "/v1/messages" and req.headers["authorization"] == "Bearer test-key"
    body = req.body
    assert (body["model"], body["system"], body["max_tokens"], body["temperature"]) == (
        "claude-fake", "You are ann.", 1000, 0.2)
    assert body["tools"] == TOOLS and body["cache_control"] == {"type": "ephemeral"}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Session 1 begins."}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "First a look."},
            {"type": "tool_use", "id": "c0", "name": "observe", "input": {}},
            {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "notes.md"}}]},
        {"role": "user", "content": [  # both results answer one turn, so they travel together
            {"type": "tool_result", "tool_use_id": "c0", "content": "{\"ok\": true}"},
            {"type": "tool_result", "tool_use_id": "c1", "content": "not_found: There is no file notes.md."}]},
    ]


def test_usage_input_includes_cache_reads_and_writes_and_cached_is_the_reads():
    with FakeProvider([(200, MESSAGE)]) as url:
        turn = asyncio.run(_complete(_adapter(url)))
    assert (turn.usage.input_tokens, turn.usage.cached_input_tokens, turn.usage.output_tokens) == (
        120 + 1024 + 56, 1024, 34)


def test_usage_without_cache_fields_counts_plain_input():
    plain = copy.deepcopy(MESSAGE)
    plain["usage"] = {"input_tokens": 900, "output_tokens": 7}
    with FakeProvider([(200, plain)]) as url:
        turn = asyncio.run(_complete(_adapter(url)))
    assert (turn.usage.input_tokens, turn.usage.cached_input_tokens, turn.usage.output_tokens) == (900, 0, 7)


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_transient_errors_are_retried_and_counted(status):
    fake = FakeProvider([(status, OVERLOADED), (status, OVERLOADED), (200, MESSAGE)])
    with fake as url:
        turn = asyncio.run(_complete(_adapter(url)))
    assert turn.retries == 2 and len(fake.requests) == 3
    assert fake.requests[0].body == fake.requests[2].body  # the same request, resent
    assert turn.tool_calls[0].id == "toolu_1"


def test_retries_stop_after_max_retries_and_the_overload_surfaces():
    fake = FakeProvider([(529, OVERLOADED)])
    with fake as url:
        with pytest.raises(anthropic.OverloadedError):
            asyncio.run(_complete(_adapter(url, max_retries=2)))
    assert len(fake.requests) == 3


@pytest.mark.parametrize("status, error", [(400, anthropic.BadRequestError), (401, anthropic.AuthenticationError)])
def test_a_permanent_error_is_raised_without_retry(status, error):
    kind = {400: "invalid_request_error", 401: "authentication_error"}[status]
    fake = FakeProvider([(status, {"type": "error", "error": {"type": kind, "message": "tools.0: bad schema"}})])
    with fake as url:
        with pytest.raises(error) as caught:
            asyncio.run(_complete(_adapter(url)))
    assert len(fake.requests) == 1 and caught.value.status_code == status
    assert caught.value.type == kind


def test_a_refused_connection_is_retried_then_raised():
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(anthropic.APIConnectionError):
        asyncio.run(_complete(_adapter(f"http://127.0.0.1:{port}", max_retries=1)))


def test_thinking_blocks_go_back_with_their_tool_use_turn():
    thought = copy.deepcopy(MESSAGE)
    thought["content"] = [{"type": "thinking", "thinking": "Check the map first.", "signature": "sig-1"},
                          {"type": "tool_use", "id": "toolu_9", "name": "observe", "input": {}}]
    fake = FakeProvider([(200, thought), (200, MESSAGE), (200, MESSAGE)])

    async def play(adapter):
        first = await adapter.complete("s", TRANSCRIPT[:1], TOOLS)
        follow = TRANSCRIPT[:1] + [
            {"role": "assistant", "content": first.text, "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in first.tool_calls]},
            {"role": "tool", "tool_call_id": "toolu_9", "name": "observe", "content": "seen"}]
        await adapter.complete("s", follow, TOOLS)
        await adapter.complete("s", TRANSCRIPT[:1], TOOLS)  # a new session: a fresh transcript
        await adapter.close()
        return first

    with fake as url:
        adapter = _adapter(url)
        first = asyncio.run(play(adapter))
    assert first.text == "" and [c.id for c in first.tool_calls] == ["toolu_9"]
    assert fake.requests[1].body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Check the map first.", "signature": "sig-1"},
        {"type": "tool_use", "id": "toolu_9", "name": "observe", "input": {}}]
    assert adapter._thinking == {}  # forgotten once its session is over


def test_an_anthropic_arm_plays_sessions_through_the_scaffold(tmp_path, monkeypatch):
    from wildhold.agents.scaffold.accounting import Telemetry, rebuild
    from wildhold.agents.scaffold.experiment import Experiment, Run

    ending = copy.deepcopy(MESSAGE)
    ending["content"][2] = {"type": "tool_use", "id": "toolu_2", "name": "end_session", "input": {}}
    monkeypatch.setenv("FAKE_ANTHROPIC_KEY", "secret-key")
    fake = FakeProvider([(529, OVERLOADED), (200, ending)])
    with fake as url:
        exp = Experiment.model_validate({
            "name": "anthropic-fake", "scenario": "tiny", "seed": 2, "budget_usd": 0.01, "ceiling_s": 120,
            "caps": {"wake_default_minutes": 5},
            "arms": [{"name": "claude", "provider": "anthropic", "model": "claude-fake", "base_url": url,
                      "api_key_env": "FAKE_ANTHROPIC_KEY", "sampling": {"temperature": 0.0},
                      "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}]})
        made = []

        def quick_adapter(self, arm):
            made.append(original(self, arm))
            made[-1].backoff_s = 0.01
            return made[-1]

        original = Run.adapter
        monkeypatch.setattr(Run, "adapter", quick_adapter)
        run = Run(exp, tmp_path, tmp_path)
        asyncio.run(run.play())
        paths = run.finish()
    assert isinstance(made[0], AnthropicAdapter) and made[0].api_key == "secret-key"
    records = Telemetry(paths["telemetry"]).records()
    ledger = rebuild(records).arm("claude")
    per_call = 120 + 1024 + 56
    assert ledger.complete == "budget" and ledger.llm_calls >= 2
    assert ledger.cached_input_tokens == ledger.llm_calls * 1024
    assert ledger.cost_usd == pytest.approx(ledger.llm_calls * (per_call * 3.0 + 34 * 15.0) / 1e6)
    assert [r["retries"] for r in records if r["kind"] == "llm_call"][0] == 1
    assert all(r.headers["authorization"] == "Bearer secret-key" for r in fake.requests)
    sent = json.dumps([r.body for r in fake.requests]).lower()
    assert "budget" not in sent and "0.01" not in sent and "secret-key" not in sent
    assert "secret-key" not in paths["manifest"].read_text() + paths["telemetry"].read_text()
