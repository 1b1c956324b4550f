"""The metering proxy: the official openai and anthropic SDKs, keyed by an agent's token, through the served
app on 127.0.0.1 to a fake upstream on 127.0.0.1, streaming included; each call's usage and price lands in
the match as the scaffold records it, and a call past the hidden budget is refused in the provider's shape."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import anthropic
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from server_support import config
from wildhold.agents.proxy import ProxySpec, proxy_app
from wildhold.agents.scaffold.loopback import Loopback
from wildhold.eval.metrics import compute_metrics, load_match
from wildhold.eval.report import build_report
from wildhold.eval.spend import read_spend, session_ticks
from wildhold.server.http import create_app
from wildhold.service.host import Host

RESPONSES_USAGE = {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000}, "output_tokens": 30,
                   "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1230}
OPENAI_USAGE = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230, "prompt_tokens_details": {"cached_tokens": 1000}}
ANTHROPIC_USAGE = {"input_tokens": 100, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 0, "output_tokens": 40}
SPEC = {"openai": {"base_url": "", "api_key_env": "WILDHOLD_TEST_OPENAI_KEY"},
        "anthropic": {"base_url": "", "api_key_env": "WILDHOLD_TEST_ANTHROPIC_KEY"},
        "prices": {"gpt-test": {"input_per_mtok": 2.0, "output_per_mtok": 8.0},
                   "claude-test": {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "as_of": "2025-09-29"}},
        "budget_usd": 0.015}


def fake_upstream(seen: list[dict]) -> Starlette:
    """Answers like the two providers, usage included; keeps each request's key and body."""

    async def chat(request: Request) -> Response:
        body = await request.json()
        if body["messages"][0]["content"] == "Overloaded?":
            return JSONResponse({"error": {"message": "Overloaded", "type": "server_error", "param": None, "code": None}},
                                status_code=503)
        seen.append({"provider": "openai", "key": request.headers.get("authorization"), "body": body})
        if not body.get("stream"):
            return JSONResponse({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": "Hello from upstream."}}],
                                 "usage": OPENAI_USAGE})

        def chunk(delta: dict, finish=None, usage=None) -> bytes:
            c = {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
                 "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                c["usage"] = usage
            return b"data: " + json.dumps(c).encode() + b"\n\n"

        async def events():
            yield chunk({"role": "assistant", "content": ""})
            yield chunk({"content": "Hello "})
            yield chunk({"content": "streamed."})
            yield chunk({}, "stop")
            if (body.get("stream_options") or {}).get("include_usage"):
                yield chunk({}, usage=OPENAI_USAGE)
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def responses(request: Request) -> Response:
        body = await request.json()
        seen.append({"provider": "openai", "key": request.headers.get("authorization"), "body": body})
        done = {"id": "resp_1", "object": "response", "created_at": 1, "model": body["model"], "status": "completed",
                "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": "Hello from upstream.", "annotations": []}]}],
                "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": RESPONSES_USAGE}
        if not body.get("stream"):
            return JSONResponse(done)

        def event(kind: str, data: dict, n: int) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': n, **data})}\n\n".encode()

        async def events():
            yield event("response.created", {"response": {**done, "status": "in_progress", "output": [], "usage": None}}, 0)
            yield event("response.output_text.delta", {"item_id": "msg_1", "output_index": 0, "content_index": 0,
                                                       "delta": "Hello streamed.", "logprobs": []}, 1)
            yield event("response.completed", {"response": done}, 2)

        return StreamingResponse(events(), media_type="text/event-stream")

    async def messages(request: Request) -> Response:
        body = await request.json()
        seen.append({"provider": "anthropic", "key": request.headers.get("x-api-key"), "body": body})
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"], "stop_reason": "end_turn",
                   "stop_sequence": None, "content": [{"type": "text", "text": "Hello from upstream."}], "usage": ANTHROPIC_USAGE}
        if not body.get("stream"):
            return JSONResponse(message)

        def event(kind: str, data: dict) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

        async def events():
            yield event("message_start", {"message": {**message, "content": [], "stop_reason": None,
                                                      "usage": {**ANTHROPIC_USAGE, "output_tokens": 1}}})
            yield event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
            yield event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Hello streamed."}})
            yield event("content_block_stop", {"index": 0})
            yield event("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                          "usage": {"output_tokens": ANTHROPIC_USAGE["output_tokens"]}})
            yield event("message_stop", {})

        return StreamingResponse(events(), media_type="text/event-stream")

    async def count(request: Request) -> Response:
        seen.append({"provider": "anthropic", "key": request.headers.get("x-api-key"), "body": await request.json(), "free": True})
        return JSONResponse({"input_tokens": 12})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/responses", responses, methods=["POST"]),
                             Route("/v1/messages/count_tokens", count, methods=["POST"]),
                             Route("/v1/messages", messages, methods=["POST"])])


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    """Two SDK clients through the proxy: plain and streamed chat completions, Responses and Messages calls, then one
    more each past the budget."""
    import os

    os.environ["WILDHOLD_TEST_OPENAI_KEY"], os.environ["WILDHOLD_TEST_ANTHROPIC_KEY"] = "sk-operator", "ak-operator"
    seen: list[dict] = []
    out: dict = {"seen": seen}

    async def main() -> None:
        async with Loopback(fake_upstream(seen)) as upstream:
            spec = ProxySpec.model_validate({**SPEC, "openai": {**SPEC["openai"], "base_url": f"{upstream.url}/v1"},
                                             "anthropic": {**SPEC["anthropic"], "base_url": upstream.url}})
            host = Host.open(tmp_path_factory.mktemp("proxy"), config(clock="fast"), "tiny", 3,
                             manifest_extra={"price_table": spec.price_table()})
            app = create_app(host)
            app.mount("/proxy", proxy_app(host, spec))
            async with Loopback(app) as served:
                token, rec = host.register("harness", {"model": "gpt-test", "harness": "outside"})
                out["agent"], out["token"] = rec.agent, token
                oa = openai.AsyncOpenAI(base_url=f"{served.url}/proxy/openai/v1", api_key=token, max_retries=0)
                an = anthropic.AsyncAnthropic(base_url=f"{served.url}/proxy/anthropic", api_key=token, max_retries=0)
                ask = [{"role": "user", "content": "Hello?"}]
                with pytest.raises(openai.InternalServerError):  # passed through as the upstream said it
                    await oa.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Overloaded?"}])
                out["openai"] = (await oa.chat.completions.create(model="gpt-test", messages=ask)).choices[0].message.content
                stream = await oa.chat.completions.create(model="gpt-test", messages=ask, stream=True)
                out["openai_stream"] = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
                out["responses"] = (await oa.responses.create(model="gpt-test", input="Hello?")).output_text
                stream = await oa.responses.create(model="gpt-test", input="Hello?", stream=True)
                out["responses_stream"] = "".join([e.delta async for e in stream if e.type == "response.output_text.delta"])
                out["anthropic"] = (await an.messages.create(model="claude-test", max_tokens=64, messages=ask)).content[0].text
                out["counted"] = (await an.messages.count_tokens(model="claude-test", messages=ask)).input_tokens
                async with an.messages.stream(model="claude-test", max_tokens=64, messages=ask) as s:
                    out["anthropic_stream"] = "".join([t async for t in s.text_stream])
                with pytest.raises(openai.RateLimitError) as refused:
                    await oa.chat.completions.create(model="gpt-test", messages=ask)
                out["openai_refused"] = refused.value
                with pytest.raises(anthropic.BadRequestError) as refused:
                    await an.messages.create(model="claude-test", max_tokens=64, messages=ask)
                out["anthropic_refused"] = refused.value
                stranger = openai.AsyncOpenAI(base_url=f"{served.url}/proxy/openai/v1", api_key="not-a-token", max_retries=0)
                with pytest.raises(openai.AuthenticationError):
                    await stranger.chat.completions.create(model="gpt-test", messages=ask)
                await stranger.close()
                with pytest.raises(openai.BadRequestError, match="no pinned price.*Add its list price under prices"):
                    await oa.chat.completions.create(model="gpt-unpriced", messages=ask)
                await oa.close()
                await an.close()
            host.stop("test over")
            out["archive"] = host.archives.path or host.archives.export()
            host.close()

    asyncio.run(main())
    return out


def test_both_sdks_get_the_upstreams_answers_plain_and_streamed(proxied):
    assert proxied["openai"] == proxied["responses"] == proxied["anthropic"] == "Hello from upstream."
    assert proxied["openai_stream"] == proxied["responses_stream"] == proxied["anthropic_stream"] == "Hello streamed."


def test_the_upstream_gets_the_operators_key_never_the_agents_token(proxied):
    assert [s["key"] for s in proxied["seen"]] == ["Bearer sk-operator"] * 4 + ["ak-operator"] * 3
    assert proxied["token"] not in json.dumps(proxied["seen"])
    assert proxied["seen"][1]["body"]["stream_options"] == {"include_usage": True}  # a stream is asked for its usage


def test_each_call_is_recorded_in_the_archive_with_its_usage_and_caching_neutral_price(proxied):
    records = [r for r in read_spend(proxied["archive"]) if r["agent"] == proxied["agent"]]
    openai_cost = (1200 * 2.0 + 30 * 8.0) / 1e6  # cached prompt tokens at the input price: caching-neutral
    anthropic_cost = ((100 + 900) * 3.0 + 40 * 15.0) / 1e6
    assert [(r["session"], r["model"], r["input_tokens"], r["cached_input_tokens"], r["output_tokens"]) for r in records] == [
        (1, "gpt-test", 1200, 1000, 30), (2, "gpt-test", 1200, 1000, 30), (3, "gpt-test", 1200, 1000, 30),
        (4, "gpt-test", 1200, 1000, 30), (5, "claude-test", 1000, 900, 40), (6, "claude-test", 1000, 900, 40)]
    assert [r["cost_usd"] for r in records] == pytest.approx([openai_cost] * 4 + [anthropic_cost] * 2)
    assert records[0]["price"] == {"input_per_mtok": 2.0, "output_per_mtok": 8.0} and records[0]["log"]["end_reason"] == "proxy_openai"
    record, sessions = load_match(proxied["archive"]), read_spend(proxied["archive"])
    report = build_report(record, compute_metrics(record, probes=session_ticks(sessions)), None, sessions)
    dollars = report["curves"]["dollars"][proxied["agent"]]
    assert dollars["sessions"] == 6 and dollars["dollars"] == pytest.approx(4 * openai_cost + 2 * anthropic_cost)


def test_a_call_past_the_hidden_budget_is_refused_in_each_providers_own_shape(proxied):
    oa, an = proxied["openai_refused"], proxied["anthropic_refused"]
    assert oa.status_code == 429 and oa.body["code"] == "insufficient_quota" and oa.body["type"] == "insufficient_quota"
    assert an.status_code == 400 and an.body == {"type": "error", "error": {
        "type": "invalid_request_error", "message": "Your credit balance is too low to access the Anthropic API."}}
    assert len(proxied["seen"]) == 7  # neither refused call reached the upstream


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "proxy" / "proxy.yaml"


def test_the_example_proxy_file_is_valid_and_a_bad_one_stops_serve_naming_it(tmp_path):
    from typer.testing import CliRunner

    from wildhold.cli import app

    assert ProxySpec.load(EXAMPLE).budget_usd > 0
    for body, key in (("prices: {}\nbudget_usd: 1\n", "prices"),
                      ("prices: {gpt-5: {input_per_mtok: 1.25, output_per_mtok: 10, as_of: last week}}\nbudget_usd: 1\n", "as_of")):
        bad = tmp_path / "proxy.yaml"
        bad.write_text(body)
        result = CliRunner().invoke(app, ["serve", "--data", str(tmp_path / "m"), "--proxy", str(bad)])
        assert result.exit_code != 0 and "proxy.yaml" in result.output and key in result.output
        assert "Traceback" not in result.output


def test_the_shipped_price_table_prices_both_providers_models_each_dated_and_a_models_id_as_its_alias():
    """Every model a harness of either provider may ask for carries its list price and the day it was read; a dated
    Anthropic id costs what its alias costs."""
    prices = ProxySpec.load(EXAMPLE).prices
    assert all(p.as_of is not None for p in prices.values())
    assert sum(m.startswith(("gpt-", "o3", "o4")) for m in prices) >= 5 and sum(m.startswith("claude-") for m in prices) >= 6
    for model, price in prices.items():
        alias = re.sub(r"-20\d{6}$", "", model)
        assert price == prices[alias], model
        assert 0 < price.input_per_mtok < price.output_per_mtok, model


def test_the_runs_price_table_keeps_each_prices_date_and_an_undated_one_pins_as_before(proxied):
    from wildhold.store.archive import Archive

    with Archive(proxied["archive"]) as archive:
        table = archive.manifest["price_table"]
    assert table["claude-test"] == {"provider": "proxy", "model": "claude-test", "input_per_mtok": 3.0,
                                    "output_per_mtok": 15.0, "as_of": "2025-09-29"}
    assert table["gpt-test"] == {"provider": "proxy", "model": "gpt-test", "input_per_mtok": 2.0, "output_per_mtok": 8.0}


def test_an_upstream_failure_is_a_service_interruption_recorded_with_the_next_call(proxied):
    records = [r for r in read_spend(proxied["archive"]) if r["agent"] == proxied["agent"]]
    [met] = records[0]["log"]["interruptions"]
    assert (met["kind"], met["error"]) == ("provider_error", "upstream 503") and met["duration_s"] >= 0
    assert all(r["log"]["interruptions"] == [] for r in records[1:])
    record, sessions = load_match(proxied["archive"]), read_spend(proxied["archive"])
    report = build_report(record, compute_metrics(record, probes=session_ticks(sessions)), None, sessions)
    assert report["study"]["interruptions"][proxied["agent"]]["count"] == 1


def test_a_call_that_costs_nothing_is_forwarded_and_never_metered(proxied):
    assert proxied["counted"] == 12 and sum(1 for s in proxied["seen"] if s.get("free")) == 1
    assert len(read_spend(proxied["archive"])) == 6  # the six model calls, not the count


def honest_upstream(seen: list[dict]) -> Starlette:
    """Answers as a provider bills: input tokens at most the request's bytes / 4, output tokens the whole output limit
    the request allows (the worst case), or 4,000 when it states none."""

    def limit(body: dict, *fields: str) -> int:
        return next((body[f] for f in fields if isinstance(body.get(f), int)), 4_000)

    async def chat(request: Request) -> Response:
        raw = await request.body()
        body = json.loads(raw)
        seen.append(body)
        usage = {"prompt_tokens": len(raw) // 4, "completion_tokens": limit(body, "max_tokens", "max_completion_tokens")}
        return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": body["model"], "usage": usage,
                             "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "."}}]})

    async def messages(request: Request) -> Response:
        raw = await request.body()
        body = json.loads(raw)
        seen.append(body)
        usage = {"input_tokens": len(raw) // 4, "output_tokens": limit(body, "max_tokens")}
        return JSONResponse({"id": "m", "type": "message", "role": "assistant", "model": body["model"], "stop_reason": "max_tokens",
                             "stop_sequence": None, "content": [{"type": "text", "text": "."}], "usage": usage})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/messages", messages, methods=["POST"])])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_no_call_crosses_the_budget_its_last_output_limit_is_clamped_and_then_calls_are_refused(tmp_path, provider):
    """A $1.00 budget once ended at $1.2024: the call that crossed it was let through. Now each call holds its worst
    case (input at a token a byte, output at its limit) while it runs, concurrent calls included; the call the budget
    cannot pay in full has its output limit lowered to what it can; then calls are refused."""
    import httpx2

    seen: list[dict] = []
    spec = ProxySpec.model_validate({**SPEC, "budget_usd": 1.0, "openai": {"base_url": "http://upstream/v1"},
                                     "anthropic": {"base_url": "http://upstream"}})
    host = Host.open(tmp_path / "m", config(clock="fast"), "tiny", 3, manifest_extra={"price_table": spec.price_table()})
    token, _ = host.register("harness", {"model": "x", "harness": "outside"})
    other, _ = host.register("silent", {"model": "x", "harness": "outside"})
    proxy = proxy_app(host, spec, transport=httpx2.ASGITransport(app=honest_upstream(seen)))
    # gpt-test's output is $8/M tokens, claude-test's $15/M: each call allows 20,000 (0.16 or 0.30 dollars at most)
    field, model, path = (("max_completion_tokens", "gpt-test", "/openai/v1/chat/completions") if provider == "openai"
                          else ("max_tokens", "claude-test", "/anthropic/v1/messages"))
    body = {"model": model, field: 20_000, "messages": [{"role": "user", "content": "Hello?"}]}

    def key(t: str) -> dict:
        return {"authorization": f"Bearer {t}"} if provider == "openai" else {"x-api-key": t}

    async def calls() -> list[int]:
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=proxy), base_url="http://proxy") as client:
            statuses = []
            for _ in range(8):
                together = await asyncio.gather(*(client.post(path, json=body, headers=key(token)) for _ in range(3)))
                statuses += [r.status_code for r in together]
            if provider == "openai":  # a call stating no limit gets the one its budget pays at most
                unstated = {k: v for k, v in body.items() if k != field}
                assert (await client.post(path, json=unstated, headers=key(other))).status_code == 200
            return statuses

    try:
        statuses = asyncio.run(calls())
    finally:
        host.close()
    refused = 429 if provider == "openai" else 400
    assert set(statuses) == {200, refused} and statuses[-3:] == [refused] * 3
    allowed = [b[field] for b in seen]
    assert allowed[0] == 20_000 and 0 < min(allowed) < 20_000  # the last call paid was clamped, not refused
    records = [inp for inp in _spend_inputs(tmp_path / "m")]
    mine = sum(r.args["cost_usd"] for r in records if r.agent == "a1")
    assert len([r for r in records if r.agent == "a1"]) == statuses.count(200)
    assert 0.95 < mine <= 1.0, mine
    if provider == "openai":
        assert 124_000 < seen[-1][field] < 125_000  # 128,000 worst case, lowered to what $1.00 pays at $8/M


def _spend_inputs(data):
    from wildhold.service.match import SPEND
    from wildhold.store.sqlite import MatchStore

    store = MatchStore(data / "match.sqlite")
    try:
        return [inp for inp in store.inputs(0) if inp.kind == SPEND]
    finally:
        store.close()
