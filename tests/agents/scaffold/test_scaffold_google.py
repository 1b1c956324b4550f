"""The Google adapter against a fake Gemini REST API (generateContent, camelCase JSON) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
from functools import partial

import pydantic
import pytest
from google.genai import errors
from scaffold_fakes import (SECRET, TOOLS, FakeProvider, assert_arm_spent_its_budget, assert_retried, complete,
                            follow_up_then_new_session, play_one_arm, refused_url)

from wildhold.agents.scaffold.adapters import Usage
from wildhold.agents.scaffold.google_adapter import CONNECTION_ERRORS, GoogleAdapter

RESPONSE = {
    "candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
        {"text": "Looking around."},
        {"functionCall": {"id": "fc-1", "name": "observe", "args": {}}},
        {"functionCall": {"name": "write_file", "args": {"path": "a.md", "content": "hi"}}}]}}],
    "usageMetadata": {"promptTokenCount": 1200, "cachedContentTokenCount": 1024, "candidatesTokenCount": 30,
                      "thoughtsTokenCount": 4, "totalTokenCount": 1234},
    "modelVersion": "gemini-fake",
}


UNSIGNED = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="


def _error(code, status):
    return {"error": {"code": code, "message": "failed", "status": status}}


def _adapter(url, **kw):
    return GoogleAdapter("gemini-fake", base_url=url, api_key="test-key", backoff_s=0.01, **kw)


def _schema(declaration):
    """Proto JSON reads a field under its camelCase or its original name; the SDK may send either."""
    return declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))


def test_a_tool_call_round_trip_in_the_generate_content_wire_format():
    fake = FakeProvider([(200, RESPONSE)])
    turn = fake.serve(partial(_adapter, sampling={"temperature": 0.2, "max_output_tokens": 1000}))
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("observe", {}), ("write_file", {"path": "a.md", "content": "hi"})]
    assert turn.tool_calls[0].id == "fc-1" and turn.tool_calls[1].id not in ("", "fc-1")
    assert turn.text == "Looking around." and turn.retries == 0
    (req,) = fake.requests
    assert req.path.endswith("/models/gemini-fake:generateContent") and req.headers["x-goog-api-key"] == "test-key"
    body = req.body
    assert body["systemInstruction"]["parts"] == [{"text": "You are ann."}]
    assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 1000}
    (declaration,) = body["tools"][0]["functionDeclarations"]
    assert (declaration["name"], declaration["description"], _schema(declaration)) == (
        "observe", "What you perceive.", TOOLS[0]["input_schema"])
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Session 1 begins."}]},
        {"role": "model", "parts": [
            {"text": "First a look."},
            # a turn this adapter did not make carries Gemini's documented stand-in signature on its first call
            {"functionCall": {"id": "c0", "name": "observe", "args": {}}, "thoughtSignature": UNSIGNED},
            {"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "notes.md"}}}]},
        {"role": "user", "parts": [  # both responses answer one turn, so they travel together
            {"functionResponse": {"id": "c0", "name": "observe", "response": {"output": "{\"ok\": true}"}}},
            {"functionResponse": {"id": "c1", "name": "read_file",
                                  "response": {"output": "not_found: There is no file notes.md."}}}]},
    ]


def test_usage_prompt_includes_cached_and_output_includes_thoughts():
    turn = FakeProvider([(200, RESPONSE)]).serve(_adapter)
    assert turn.usage == Usage(1200, 1024, 34)


def test_usage_without_cache_or_thoughts():
    plain = copy.deepcopy(RESPONSE)
    plain["usageMetadata"] = {"promptTokenCount": 900, "candidatesTokenCount": 7, "totalTokenCount": 907}
    turn = FakeProvider([(200, plain)]).serve(_adapter)
    assert turn.usage == Usage(900, 0, 7)


@pytest.mark.parametrize("code, status", [(429, "RESOURCE_EXHAUSTED"), (500, "INTERNAL"), (503, "UNAVAILABLE")])
def test_transient_errors_are_retried_and_counted(code, status):
    fake = FakeProvider([(code, _error(code, status)), (code, _error(code, status)), (200, RESPONSE)])
    turn = fake.serve(_adapter)
    assert_retried(fake, turn, 2)
    assert turn.tool_calls[0].id == "fc-1"


def test_retries_stop_after_max_retries_and_the_error_surfaces():
    fake = FakeProvider([(503, _error(503, "UNAVAILABLE"))])
    with pytest.raises(errors.ServerError) as caught:
        fake.serve(partial(_adapter, max_retries=2))
    assert len(fake.requests) == 3 and caught.value.code == 503


@pytest.mark.parametrize("code, status", [(400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED")])
def test_a_permanent_error_is_raised_without_retry(code, status):
    fake = FakeProvider([(code, _error(code, status))])
    with pytest.raises(errors.ClientError) as caught:
        fake.serve(_adapter)
    assert len(fake.requests) == 1 and (caught.value.code, caught.value.status) == (code, status)


def test_a_refused_connection_is_retried_then_raised():
    with pytest.raises(CONNECTION_ERRORS):
        asyncio.run(complete(_adapter(refused_url(), max_retries=1)))


def test_a_misspelt_sampling_field_fails_when_the_adapter_is_made():
    with pytest.raises(pydantic.ValidationError, match="temprature"):
        GoogleAdapter("gemini-fake", api_key="k", sampling={"temprature": 0.5})


def test_the_models_own_turn_goes_back_with_its_thought_signature():
    signed = copy.deepcopy(RESPONSE)
    signed["candidates"][0]["content"]["parts"] = [
        {"functionCall": {"name": "observe", "args": {}}, "thoughtSignature": "c2lnLTE="}]
    fake = FakeProvider([(200, signed), (200, RESPONSE), (200, RESPONSE)])
    with fake as url:
        adapter = _adapter(url)
        first = asyncio.run(follow_up_then_new_session(adapter))
    model_turn, answer = fake.requests[1].body["contents"][1:]
    assert model_turn == {"role": "model", "parts": [
        {"functionCall": {"name": "observe", "args": {}}, "thoughtSignature": "c2lnLTE="}]}
    # the API gave no call id, so none is sent back with the response either
    assert answer == {"role": "user", "parts": [
        {"functionResponse": {"name": "observe", "response": {"output": "seen"}}}]}
    # once its session is over the first turn is forgotten; only the newest turn is kept
    assert first.tool_calls[0].id not in adapter._wire_ids and list(adapter._own_turns) == ["fc-1"]


def test_a_google_arm_plays_sessions_through_the_scaffold(tmp_path, monkeypatch):
    ending = copy.deepcopy(RESPONSE)
    ending["candidates"][0]["content"]["parts"][2] = {"functionCall": {"name": "end_session", "args": {}}}
    fake, made, paths = play_one_arm(tmp_path, monkeypatch, "google", "gemini-fake",
                                     [(503, _error(503, "UNAVAILABLE")), (200, ending)])
    assert isinstance(made[0], GoogleAdapter) and made[0].api_key == SECRET
    assert_arm_spent_its_budget(fake, paths, "google", input_per_call=1200, first_retries=1)
    assert all(r.headers["x-goog-api-key"] == SECRET for r in fake.requests)


def test_images_a_tool_returned_are_inline_parts_beside_its_response():
    from wildhold.agents.scaffold.google_adapter import to_google_contents

    messages = [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "observe", "arguments": {}},
                                                                   {"id": "c2", "name": "inventory", "arguments": {}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "observe", "content": "{}",
                 "images": [{"mime": "image/png", "data": "QUJD"}]},
                {"role": "tool", "tool_call_id": "c2", "name": "inventory", "content": "{}"}]
    contents = to_google_contents(messages)
    assert len(contents) == 2
    parts = contents[1].parts
    assert parts[0].function_response.name == "observe" and parts[1].inline_data.data == b"ABC"
    assert parts[1].inline_data.mime_type == "image/png" and parts[2].function_response.name == "inventory"
