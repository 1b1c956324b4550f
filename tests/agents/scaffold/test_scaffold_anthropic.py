"""The Anthropic adapter against a fake Messages API on 127.0.0.1 (no network, no keys)."""

from __future__ import annotations

import asyncio
import copy
from functools import partial

import anthropic
import pytest
from scaffold_fakes import (SECRET, TOOLS, FakeProvider, assert_arm_spent_its_budget, assert_retried, complete,
                            follow_up_then_new_session, play_one_arm, refused_url)

from wildhold.agents.scaffold.adapters import CannotContinue, Usage
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


def _adapter(url, **kw):
    return AnthropicAdapter("claude-fake", base_url=url, api_key="test-key", backoff_s=0.01, **kw)


def test_a_tool_call_round_trip_in_the_messages_wire_format():
    fake = FakeProvider([(200, MESSAGE)])
    turn = fake.serve(partial(_adapter, sampling={"temperature": 0.2, "max_tokens": 1000}))
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
    turn = FakeProvider([(200, MESSAGE)]).serve(_adapter)
    assert turn.usage == Usage(120 + 1024 + 56, 1024, 34)


def test_usage_without_cache_fields_counts_plain_input():
    plain = copy.deepcopy(MESSAGE)
    plain["usage"] = {"input_tokens": 900, "output_tokens": 7}
    turn = FakeProvider([(200, plain)]).serve(_adapter)
    assert turn.usage == Usage(900, 0, 7)


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_transient_errors_are_retried_and_counted(status):
    fake = FakeProvider([(status, OVERLOADED), (status, OVERLOADED), (200, MESSAGE)])
    turn = fake.serve(_adapter)
    assert_retried(fake, turn, 2)
    assert turn.tool_calls[0].id == "toolu_1"


def test_retries_stop_after_max_retries_and_the_overload_surfaces():
    fake = FakeProvider([(529, OVERLOADED)])
    with pytest.raises(anthropic.OverloadedError):
        fake.serve(partial(_adapter, max_retries=2))
    assert len(fake.requests) == 3


@pytest.mark.parametrize("status, error", [(400, anthropic.BadRequestError), (401, anthropic.AuthenticationError)])
def test_a_permanent_error_is_raised_without_retry(status, error):
    kind = {400: "invalid_request_error", 401: "authentication_error"}[status]
    fake = FakeProvider([(status, {"type": "error", "error": {"type": kind, "message": "tools.0: bad schema"}})])
    with pytest.raises(error) as caught:
        fake.serve(_adapter)
    assert len(fake.requests) == 1 and caught.value.status_code == status
    assert caught.value.type == kind


def test_a_refused_connection_is_retried_then_raised():
    with pytest.raises(anthropic.APIConnectionError):
        asyncio.run(complete(_adapter(refused_url(), max_retries=1)))


def test_thinking_blocks_go_back_with_their_tool_use_turn():
    thought = copy.deepcopy(MESSAGE)
    thought["content"] = [{"type": "thinking", "thinking": "Check the map first.", "signature": "sig-1"},
                          {"type": "tool_use", "id": "toolu_9", "name": "observe", "input": {}}]
    fake = FakeProvider([(200, thought), (200, MESSAGE), (200, MESSAGE)])
    with fake as url:
        adapter = _adapter(url)
        first = asyncio.run(follow_up_then_new_session(adapter))
    assert first.text == "" and [c.id for c in first.tool_calls] == ["toolu_9"]
    assert fake.requests[1].body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Check the map first.", "signature": "sig-1"},
        {"type": "tool_use", "id": "toolu_9", "name": "observe", "input": {}}]
    assert adapter._thinking == {}  # forgotten once its session is over


def test_an_anthropic_arm_plays_sessions_through_the_scaffold(tmp_path, monkeypatch):
    ending = copy.deepcopy(MESSAGE)
    ending["content"][2] = {"type": "tool_use", "id": "toolu_2", "name": "end_session", "input": {}}
    fake, made, paths = play_one_arm(tmp_path, monkeypatch, "anthropic", "claude-fake",
                                     [(529, OVERLOADED), (200, ending)])
    assert isinstance(made[0], AnthropicAdapter) and made[0].api_key == SECRET
    assert_arm_spent_its_budget(fake, paths, "anthropic", input_per_call=120 + 1024 + 56, first_retries=1)
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in fake.requests)


def test_with_thinking_on_a_tool_loop_made_before_a_restart_cannot_be_continued_and_nothing_is_sent():
    fake = FakeProvider([(200, MESSAGE)])
    with fake as url:
        thinking = _adapter(url, sampling={"thinking": {"type": "enabled", "budget_tokens": 2048}})
        with pytest.raises(CannotContinue):
            asyncio.run(complete(thinking))  # TRANSCRIPT's tool turn was not made by this adapter
        assert fake.requests == []
        asyncio.run(complete(_adapter(url)))  # without thinking the same transcript continues
    assert len(fake.requests) == 1


def test_a_session_the_provider_cannot_continue_ends_interrupted(tmp_path):
    from test_scaffold_resume import WORLD_TOOLS, FakeWorld, _interrupted_session

    from wildhold.agents.scaffold.accounting import Price, Telemetry, rebuild
    from wildhold.agents.scaffold.session import SessionState, run_session
    from wildhold.agents.scaffold.workspace import Workspace

    records, caps = _interrupted_session(tmp_path)
    adapter = AnthropicAdapter("claude-fake", base_url=refused_url(), api_key="k",
                               sampling={"thinking": {"type": "enabled", "budget_tokens": 2048}})
    telemetry = Telemetry(tmp_path / "telemetry.jsonl")
    result = asyncio.run(run_session(arm="a", number=3, system="s", world_tools=WORLD_TOOLS, world=FakeWorld(),
                                     adapter=adapter, workspace=Workspace(tmp_path / "ws", 1000), telemetry=telemetry,
                                     price=Price(1.0, 1.0), caps=caps, ledger=rebuild(records).arm("a"),
                                     resumed=SessionState.resume(records, "a", caps)))
    assert result.reason == "interrupted" and result.wake_minutes == 45
    ends = [r for r in telemetry.records() if r["kind"] == "session_end"]
    assert [(r["session"], r["reason"]) for r in ends] == [(3, "interrupted")]
    assert not [r for r in telemetry.records()[len(records):] if r["kind"] == "llm_call"]


def test_images_a_tool_returned_are_image_blocks_in_its_result():
    from wildhold.agents.scaffold.anthropic_adapter import to_anthropic_messages

    messages = [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "observe", "arguments": {}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "observe", "content": "{}",
                 "images": [{"mime": "image/png", "data": "QUJD"}]}]
    result = to_anthropic_messages(messages)[-1]["content"][0]
    assert result["content"] == [{"type": "text", "text": "{}"},
                                 {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}]
