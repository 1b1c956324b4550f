"""The OpenAI-compatible adapter against a fake chat-completions server on 127.0.0.1 (no network, no keys)."""

from __future__ import annotations

import copy
from functools import partial

import openai
import pytest
from scaffold_fakes import SECRET, TOOLS, FakeProvider, assert_arm_spent_its_budget, assert_retried, play_one_arm

from wildhold.agents.scaffold.adapters import Usage
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
ERROR = {"error": {"message": "failed", "type": "server_error"}}


def _adapter(url, **kw):
    return OpenAICompatAdapter("fake-model", base_url=f"{url}/v1", api_key="k", backoff_s=0.01, **kw)


def test_tool_calls_usage_with_cached_tokens_and_a_transient_500_retried():
    fake = FakeProvider([(500, ERROR), (200, COMPLETION)])
    turn = fake.serve(partial(_adapter, sampling={"temperature": 0.0}))
    assert_retried(fake, turn, 1)
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_1", "observe", {}), ("call_2", "write_file", {"path": "a.md", "content": "hi"})]
    assert turn.usage == Usage(1200, 1024, 34)
    assert turn.text == "Looking around."


def test_the_request_is_the_chat_completions_wire_format():
    fake = FakeProvider([(200, COMPLETION)])
    fake.serve(partial(_adapter, sampling={"temperature": 0.2}))
    (req,) = fake.requests
    body = req.body
    assert req.path == "/v1/chat/completions" and body["model"] == "fake-model" and body["temperature"] == 0.2
    assert body["messages"] == [
        {"role": "system", "content": "You are ann."},
        {"role": "user", "content": "Session 1 begins."},
        {"role": "assistant", "content": "First a look.", "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "observe", "arguments": "{}"}},
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"notes.md\"}"}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "{\"ok\": true}"},  # one message per tool result
        {"role": "tool", "tool_call_id": "c1", "content": "not_found: There is no file notes.md."},
    ]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "observe", "description": "What you perceive.", "parameters": TOOLS[0]["input_schema"]}}]


def test_retries_stop_after_max_retries_and_the_error_surfaces():
    fake = FakeProvider([(500, ERROR)])
    with pytest.raises(openai.InternalServerError):
        fake.serve(partial(_adapter, max_retries=2))
    assert len(fake.requests) == 3


def test_a_permanent_error_is_not_retried():
    fake = FakeProvider([(400, ERROR)])
    with pytest.raises(openai.BadRequestError):
        fake.serve(partial(_adapter, max_retries=2))
    assert len(fake.requests) == 1


def test_an_openai_arm_plays_sessions_through_the_scaffold_until_its_hidden_budget(tmp_path, monkeypatch):
    ending = copy.deepcopy(COMPLETION)
    ending["choices"][0]["message"]["tool_calls"][1] = {"id": "call_2", "type": "function",
                                                         "function": {"name": "end_session", "arguments": "{}"}}
    fake, made, paths = play_one_arm(tmp_path, monkeypatch, "openai", "fake-model", [(200, ending)], path="/v1")
    assert isinstance(made[0], OpenAICompatAdapter) and made[0].api_key == SECRET
    ledger = assert_arm_spent_its_budget(fake, paths, "openai", input_per_call=1200, first_retries=0)
    assert ledger.sessions == 3 and ledger.llm_calls == 3
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in fake.requests)


def test_images_a_tool_returned_follow_the_tool_results_as_a_user_message():
    from wildhold.agents.scaffold.openai_compat import to_openai_messages

    messages = [{"role": "user", "content": "Session 1 begins."},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "observe", "arguments": {}},
                                                                   {"id": "c2", "name": "inventory", "arguments": {}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "observe", "content": "{}",
                 "images": [{"mime": "image/png", "data": "QUJD"}]},
                {"role": "tool", "tool_call_id": "c2", "name": "inventory", "content": "{}"}]
    wire = to_openai_messages("system", messages)
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert wire[-1]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}
