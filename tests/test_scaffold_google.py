"""The Google adapter against a fake Gemini REST API (generateContent, camelCase JSON) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
import json
import socket

import pydantic
import pytest
from google.genai import errors
from scaffold_fakes import FakeProvider

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


def _error(code, status):
    return {"error": {"code": code, "message": "failed", "status": status}}


def _adapter(url, **kw):
    return GoogleAdapter("gemini-fake", base_url=url, api_key="test-key", backoff_s=0.01, **kw)


async def _complete(adapter, messages=TRANSCRIPT):
    try:
        return await adapter.complete("You are ann.", messages, TOOLS)
    finally:
        await adapter.close()


def _schema(declaration):
    """Proto JSON reads a field under its camelCase or its original name; the SDK may send either."""
    return declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))


def test_a_tool_call_round_trip_in_the_generate_content_wire_format():
    fake = FakeProvider([(200, RESPONSE)])
    with fake as url:
        turn = asyncio.run(_complete(_adapter(url, sampling={"temperature": 0.2, "max_output_tokens": 1000})))
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
            {"functionCall": {"id": "c0", "name": "observe", "args": {}}},
            {"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "notes.md"}}}]},
        {"role": "user", "parts": [  # both responses answer one turn, so they travel together
            {"functionResponse": {"id": "c0", "name": "observe", "response": {"output": "{\"ok\": true}"}}},
            {"functionResponse": {"id": "c1", "name": "read_file",
                                  "response": {"output": "not_found: There is no file notes.md."}}}]},
    ]


def test_usage_prompt_includes_cached_and_output_includes_thoughts():
    with FakeProvider([(200, RESPONSE)]) as url:
        turn = asyncio.run(_complete(_adapter(url)))
    assert (turn.usage.input_tokens, turn.usage.cached_input_tokens, turn.usage.output_tokens) == (1200, 1024, 34)


def test_usage_without_cache_or_thoughts():
    plain = copy.deepcopy(RESPONSE)
    plain["usageMetadata"] = {"promptTokenCount": 900, "candidatesTokenCount": 7, "totalTokenCount": 907}
    with FakeProvider([(200, plain)]) as url:
        turn = asyncio.run(_complete(_adapter(url)))
    assert (turn.usage.input_tokens, turn.usage.cached_input_tokens, turn.usage.output_tokens) == (900, 0, 7)


@pytest.mark.parametrize("code, status", [(429, "RESOURCE_EXHAUSTED"), (500, "INTERNAL"), (503, "UNAVAILABLE")])
def test_transient_errors_are_retried_and_counted(code, status):
    fake = FakeProvider([(code, _error(code, status)), (code, _error(code, status)), (200, RESPONSE)])
    with fake as url:
        turn = asyncio.run(_complete(_adapter(url)))
    assert turn.retries == 2 and len(fake.requests) == 3
    assert fake.requests[0].body == fake.requests[2].body  # the same request, resent
    assert turn.tool_calls[0].id == "fc-1"


def test_retries_stop_after_max_retries_and_the_error_surfaces():
    fake = FakeProvider([(503, _error(503, "UNAVAILABLE"))])
    with fake as url:
        with pytest.raises(errors.ServerError) as caught:
            asyncio.run(_complete(_adapter(url, max_retries=2)))
    assert len(fake.requests) == 3 and caught.value.code == 503


@pytest.mark.parametrize("code, status", [(400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED")])
def test_a_permanent_error_is_raised_without_retry(code, status):
    fake = FakeProvider([(code, _error(code, status))])
    with fake as url:
        with pytest.raises(errors.ClientError) as caught:
            asyncio.run(_complete(_adapter(url)))
    assert len(fake.requests) == 1 and (caught.value.code, caught.value.status) == (code, status)


def test_a_refused_connection_is_retried_then_raised():
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CONNECTION_ERRORS):
        asyncio.run(_complete(_adapter(f"http://127.0.0.1:{port}", max_retries=1)))


def test_a_misspelt_sampling_field_fails_when_the_adapter_is_made():
    with pytest.raises(pydantic.ValidationError, match="temprature"):
        GoogleAdapter("gemini-fake", api_key="k", sampling={"temprature": 0.5})


def test_the_models_own_turn_goes_back_with_its_thought_signature():
    signed = copy.deepcopy(RESPONSE)
    signed["candidates"][0]["content"]["parts"] = [
        {"functionCall": {"name": "observe", "args": {}}, "thoughtSignature": "c2lnLTE="}]
    fake = FakeProvider([(200, signed), (200, RESPONSE), (200, RESPONSE)])

    async def play(adapter):
        first = await adapter.complete("s", TRANSCRIPT[:1], TOOLS)
        follow = TRANSCRIPT[:1] + [
            {"role": "assistant", "content": first.text, "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in first.tool_calls]},
            {"role": "tool", "tool_call_id": first.tool_calls[0].id, "name": "observe", "content": "seen"}]
        await adapter.complete("s", follow, TOOLS)
        await adapter.complete("s", TRANSCRIPT[:1], TOOLS)  # a new session: a fresh transcript
        await adapter.close()
        return first

    with fake as url:
        adapter = _adapter(url)
        first = asyncio.run(play(adapter))
    model_turn, answer = fake.requests[1].body["contents"][1:]
    assert model_turn == {"role": "model", "parts": [
        {"functionCall": {"name": "observe", "args": {}}, "thoughtSignature": "c2lnLTE="}]}
    # the API gave no call id, so none is sent back with the response either
    assert answer == {"role": "user", "parts": [
        {"functionResponse": {"name": "observe", "response": {"output": "seen"}}}]}
    # once its session is over the first turn is forgotten; only the newest turn is kept
    assert first.tool_calls[0].id not in adapter._wire_ids and list(adapter._own_turns) == ["fc-1"]


def test_a_google_arm_plays_sessions_through_the_scaffold(tmp_path, monkeypatch):
    from wildhold.agents.scaffold.accounting import Telemetry, rebuild
    from wildhold.agents.scaffold.experiment import Experiment, Run

    ending = copy.deepcopy(RESPONSE)
    ending["candidates"][0]["content"]["parts"][2] = {"functionCall": {"name": "end_session", "args": {}}}
    monkeypatch.setenv("FAKE_GOOGLE_KEY", "secret-key")
    fake = FakeProvider([(503, _error(503, "UNAVAILABLE")), (200, ending)])
    made = []

    def quick_adapter(self, arm):
        made.append(original(self, arm))
        made[-1].backoff_s = 0.01
        return made[-1]

    original = Run.adapter
    monkeypatch.setattr(Run, "adapter", quick_adapter)
    with fake as url:
        exp = Experiment.model_validate({
            "name": "google-fake", "scenario": "tiny", "seed": 2, "budget_usd": 0.01, "ceiling_s": 120,
            "caps": {"wake_default_minutes": 5},
            "arms": [{"name": "gemini", "provider": "google", "model": "gemini-fake", "base_url": url,
                      "api_key_env": "FAKE_GOOGLE_KEY", "sampling": {"temperature": 0.0},
                      "price": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}]})
        run = Run(exp, tmp_path, tmp_path)
        asyncio.run(run.play())
        paths = run.finish()
    assert isinstance(made[0], GoogleAdapter) and made[0].api_key == "secret-key"
    records = Telemetry(paths["telemetry"]).records()
    ledger = rebuild(records).arm("gemini")
    assert ledger.complete == "budget" and ledger.llm_calls >= 2
    assert ledger.cached_input_tokens == ledger.llm_calls * 1024
    assert ledger.cost_usd == pytest.approx(ledger.llm_calls * (1200 * 3.0 + 34 * 15.0) / 1e6)
    assert [r["retries"] for r in records if r["kind"] == "llm_call"][0] == 1
    assert all(r.headers["x-goog-api-key"] == "secret-key" for r in fake.requests)
    sent = json.dumps([r.body for r in fake.requests]).lower()
    assert "budget" not in sent and "0.01" not in sent and "secret-key" not in sent
    assert "secret-key" not in paths["manifest"].read_text() + paths["telemetry"].read_text()
