"""The metering proxy: OpenAI- and Anthropic-compatible endpoints in front of the real providers, keyed by the
agent's token, so an outside harness is measured like the reference scaffold.

Point Codex (the Responses API) or any chat-completions client at
`OPENAI_BASE_URL=http://127.0.0.1:PORT/proxy/openai/v1`, or Claude Code at
`ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/proxy/anthropic`, with the agent's Wildhold token as the API key.
Each call is forwarded to the upstream with the operator's key (the agent never holds it), its
provider-reported usage priced by the pinned table (caching-neutral, as the scaffold prices it) and
recorded into the match as one session record, so the archive carries the same spend curves as a
scaffold arm's. No call crosses the hidden budget: each holds its worst case while it runs (its input at
one token per byte of the request, its output limit at the pinned price) and an output limit the budget
left cannot pay is lowered to what it can (`max_tokens` clamped); a call that cannot pay for one output
token is refused in the provider's own error shape. Streaming is relayed as it arrives; OpenAI streams
are asked for their usage (`stream_options.include_usage`). Calls that cost nothing (Anthropic's token
counting, the model lists) are forwarded and never metered.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import httpx2
from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from wildhold.agents.scaffold.accounting import Price, PriceSpec, SessionSpend, price_table_id
from wildhold.agents.scaffold.adapters import Usage
from wildhold.readable import read_model
from wildhold.server.bodies import BodyError, BodyLimit, TooLarge, parse_json
from wildhold.service.errors import HostError

HOP_HEADERS = frozenset({"host", "content-length", "authorization", "x-api-key", "connection", "accept-encoding",
                         "transfer-encoding", "keep-alive"})
MAX_BODY_BYTES = 32 * 2**20  # a model request with its images: the largest the providers take
# The request fields that bound a call's output tokens, by upstream path: the first one a request states counts;
# the last is the one set when a request states none and the budget must bound it.
OUTPUT_LIMITS = {"/chat/completions": ("max_tokens", "max_completion_tokens"), "/responses": ("max_output_tokens",),
                 "/v1/messages": ("max_tokens",)}
UNSTATED_OUTPUT_TOKENS = 128_000  # a call that states no output limit may produce this many (today's largest limit)


class UpstreamSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    base_url: str  # openai: up to /v1 (https://api.openai.com/v1); anthropic: the host (https://api.anthropic.com)
    api_key_env: str | None = None  # the operator's key, read from this environment variable, never written anywhere


class ProxySpec(BaseModel):
    """A proxy file: the upstreams, the pinned price of each model, and each agent's hidden budget. A model is priced
    by one line under `prices`: its string as the harness sends it, the provider's list input and output prices per
    million tokens, and `as_of`, the day they were read; examples/proxy/proxy.yaml ships a dated table of OpenAI's
    and Anthropic's models and says how to add one. A model not in the table is refused."""

    model_config = ConfigDict(extra="forbid")
    openai: UpstreamSpec | None = None
    anthropic: UpstreamSpec | None = None
    prices: dict[str, PriceSpec] = Field(min_length=1)
    budget_usd: float = Field(gt=0)

    @classmethod
    def load(cls, path: Path) -> ProxySpec:
        """The proxy file, or UnreadableFile naming it and the keys at fault."""
        return read_model(path, cls)

    def price_table(self) -> dict[str, Any]:
        return {model: {"provider": "proxy", "model": model, **p.pinned()} for model, p in sorted(self.prices.items())}


@dataclass
class Meter:
    """What each agent has spent through the proxy, rebuilt from the match's records at start."""

    spec: ProxySpec
    host: Any
    table: str = ""
    spent: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    failed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # upstream failures since the last recorded call
    held: dict[str, float] = field(default_factory=dict)  # dollars the calls running now may still cost, by agent

    def __post_init__(self) -> None:
        self.table = price_table_id(self.spec.price_table())
        from wildhold.service.match import SPEND

        for inp in self.host.match.store.inputs(0):
            if inp.kind == SPEND and inp.agent is not None:
                self.spent[inp.agent] = self.spent.get(inp.agent, 0.0) + inp.args.get("cost_usd", 0.0)
                self.calls[inp.agent] = max(self.calls.get(inp.agent, 0), inp.args.get("session", 0))

    def admit(self, agent: str, model: str, path: str, body: dict[str, Any], size: int) -> Grant | None:
        """The call's worst case held against what the budget has left (None: it cannot pay for one output token):
        its input at one token per byte of the request (a token is at least a byte of text) and its output limit,
        lowered (`clamp`) to what is left when the request asks more or states none."""
        p = self.spec.prices[model]
        left = self.spec.budget_usd - self.spent.get(agent, 0.0) - self.held.get(agent, 0.0)
        input_worst = size * p.input_per_mtok / 1e6
        per_output = p.output_per_mtok / 1e6
        fields = OUTPUT_LIMITS[path]
        stated_field = next((f for f in fields if _tokens(body.get(f)) is not None), None)
        asked = _tokens(body.get(stated_field)) if stated_field else UNSTATED_OUTPUT_TOKENS
        assert asked is not None
        affordable = math.floor((left - input_worst) / per_output) if per_output else asked
        if left <= 0 or left < input_worst or affordable < 1:
            return None
        granted = min(asked, affordable)
        clamp = (stated_field or fields[-1], granted) if granted < asked else None
        reserved = input_worst + granted * per_output
        self.held[agent] = self.held.get(agent, 0.0) + reserved
        return Grant(agent, reserved, clamp)

    def release(self, grant: Grant) -> None:
        """The call is over (metered, failed or refused upstream): its worst case is no longer held."""
        self.held[grant.agent] = max(0.0, self.held.get(grant.agent, 0.0) - grant.reserved)

    def record(self, agent: str, model: str, usage: Usage, started: float, provider: str) -> None:
        """One call as the match records a session: usage, dollars at the pinned price, and its log."""
        p = self.spec.prices[model]
        price = Price(p.input_per_mtok, p.output_per_mtok)
        cost = price.cost(usage)
        spend = SessionSpend()
        spend.add(usage, cost)
        number = self.calls.get(agent, 0) + 1
        self.calls[agent] = number
        self.spent[agent] = self.spent.get(agent, 0.0) + cost
        ended = round(time.time(), 3)
        record = spend.record(number, model, price, self.table)
        tick = self.host.world.tick
        record["log"] = {"started_at": round(started, 3), "ended_at": ended, "start_tick": tick, "end_tick": tick,
                         "end_reason": f"proxy_{provider}", "wake_minutes": None,
                         "turns": [[ended, cost, usage.input_tokens + usage.output_tokens, 0, 0]], "calls": [], "writes": [],
                         "deletes": [], "design_reads": [], "interruptions": self.failed.pop(agent, [])}
        self.host.record_spend(agent, record)

    def failure(self, agent: str, started: float, error: str) -> None:
        """An upstream failure (an error status or no answer): a service interruption, recorded with the agent's next
        metered call (the harness's retry, in practice), lasting from the request to the failure."""
        now = time.time()
        self.failed.setdefault(agent, []).append({"kind": "provider_error", "at": round(started, 3),
                                                  "duration_s": round(now - started, 3), "error": error})


@dataclass(frozen=True)
class Grant:
    """A call let through: the dollars held for its worst case, and the output limit set on it, if one was."""

    agent: str
    reserved: float
    clamp: tuple[str, int] | None  # (the request field, the tokens it now allows)


def _tokens(value: Any) -> int | None:
    """A request's output limit as a count of tokens, or None when it states none the upstream would take."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def openai_usage(u: dict[str, Any] | None) -> Usage:
    """OpenAI's counts in our terms: prompt (or, in the Responses API, input) tokens include the cached ones."""
    if not u:
        return Usage()
    if "input_tokens" in u:  # the Responses API
        cached = (u.get("input_tokens_details") or {}).get("cached_tokens") or 0
        return Usage(u.get("input_tokens", 0), cached, u.get("output_tokens", 0))
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return Usage(u.get("prompt_tokens", 0), cached, u.get("completion_tokens", 0))


def anthropic_usage(u: dict[str, Any] | None) -> Usage:
    """Anthropic's counts in our terms: input includes cache reads and cache writes; cached = cache reads."""
    if not u:
        return Usage()
    read, written = u.get("cache_read_input_tokens") or 0, u.get("cache_creation_input_tokens") or 0
    return Usage((u.get("input_tokens") or 0) + read + written, read, u.get("output_tokens") or 0)


def _openai_error(status: int, message: str, kind: str, code: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}}, status_code=status)


def _anthropic_error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)


def _failing(provider: str) -> Callable[[int, str, str, str], JSONResponse]:
    """An error in the provider's own shape: (status, message, type, OpenAI's code)."""
    if provider == "openai":
        return _openai_error
    return lambda status, message, kind, code: _anthropic_error(status, message, kind)


def proxy_app(host: Any, spec: ProxySpec, transport: httpx2.AsyncBaseTransport | None = None) -> ASGIApp:
    """The proxy's routes, to mount at /proxy on the served app; `transport` is for tests (the upstream in-process)."""
    meter = Meter(spec, host)

    def who(request: Request, provider: str) -> str | Response:
        token = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        try:
            return host.access.agent_of(host.access.authenticate(token or None))
        except HostError as exc:
            message = f"{exc.code}: {exc}"
            return (_openai_error(401, message, "invalid_request_error", "invalid_api_key") if provider == "openai"
                    else _anthropic_error(401, message, "authentication_error"))

    async def forward(request: Request, provider: str, path: str) -> Response:
        up = getattr(spec, provider)
        fail = _failing(provider)
        if up is None:
            return fail(404, f"This server proxies no {provider} upstream.", "invalid_request_error", "not_found")
        agent = who(request, provider)
        if isinstance(agent, Response):
            return agent
        raw = await request.body()
        try:
            body = parse_json(raw)
        except BodyError as exc:
            return fail(400, str(exc), "invalid_request_error", "bad_request")
        model = body.get("model") if isinstance(body, dict) else None
        if not isinstance(model, str) or model not in spec.prices:
            return fail(400, f"The model {model!r} has no pinned price here; priced: {', '.join(sorted(spec.prices))}. "
                        "Add its list price under prices in the proxy file to use it.",
                        "invalid_request_error", "model_not_found")
        grant = meter.admit(agent, model, path, body, len(raw))
        if grant is None:
            if provider == "openai":
                return _openai_error(429, "You exceeded your current quota, please check your plan and billing details.",
                                     "insufficient_quota", "insufficient_quota")
            return _anthropic_error(400, "Your credit balance is too low to access the Anthropic API.", "invalid_request_error")
        if grant.clamp is not None:
            body[grant.clamp[0]] = grant.clamp[1]
        try:
            return await send_metered(request, provider, path, up, agent, model, body, grant)
        except BaseException:
            meter.release(grant)
            raise

    async def send_metered(request: Request, provider: str, path: str, up: UpstreamSpec, agent: str, model: str,
                           body: dict[str, Any], grant: Grant) -> Response:
        """Forward the call and meter it; the grant is released once it is metered (a stream's: when it ends)."""
        fail = _failing(provider)
        stream = bool(body.get("stream"))
        if stream and path == "/chat/completions":
            body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        headers.update(_upstream_key(up, provider))
        client = httpx2.AsyncClient(base_url=up.base_url.rstrip("/"), timeout=600.0, transport=transport, trust_env=False)
        started = time.time()
        try:
            upstream = await client.send(client.build_request("POST", path, json=body, headers=headers), stream=True)
        except httpx2.HTTPError as exc:
            await client.aclose()
            meter.failure(agent, started, type(exc).__name__)
            meter.release(grant)
            return fail(502, f"The {provider} upstream could not be reached ({type(exc).__name__}).", "api_error", "upstream_error")
        kept = {k: v for k, v in upstream.headers.items() if k.lower() in ("content-type", "request-id", "x-request-id")}
        if upstream.status_code >= 400 or not stream:
            try:
                data = await upstream.aread()
            finally:
                await upstream.aclose()
                await client.aclose()
            if upstream.status_code < 400:
                payload = json.loads(data)
                usage = openai_usage(payload.get("usage")) if provider == "openai" else anthropic_usage(payload.get("usage"))
                meter.record(agent, model, usage, started, provider)
            elif upstream.status_code == 429 or upstream.status_code >= 500:  # the provider's trouble, not the request's
                meter.failure(agent, started, f"upstream {upstream.status_code}")
            meter.release(grant)
            return Response(data, status_code=upstream.status_code, headers=kept)

        async def relay() -> AsyncIterator[bytes]:
            seen: dict[str, Any] = {}
            buffer = b""
            try:
                async for chunk in upstream.aiter_raw():
                    yield chunk
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        _read_usage(provider, line, seen)
            finally:
                await upstream.aclose()
                await client.aclose()
                usage = openai_usage(seen.get("usage")) if provider == "openai" else anthropic_usage(seen)
                meter.record(agent, model, usage, started, provider)
                meter.release(grant)

        return StreamingResponse(relay(), status_code=upstream.status_code, headers=kept)

    async def passthrough(request: Request, provider: str, path: str) -> Response:
        """A call that costs nothing (token counting, the model list): forwarded for the agent, never metered."""
        up = getattr(spec, provider)
        agent = who(request, provider)
        if isinstance(agent, Response):
            return agent
        if up is None:
            return _openai_error(404, f"This server proxies no {provider} upstream.", "invalid_request_error", "not_found") \
                if provider == "openai" else _anthropic_error(404, f"This server proxies no {provider} upstream.", "not_found_error")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        headers.update(_upstream_key(up, provider))
        async with httpx2.AsyncClient(base_url=up.base_url.rstrip("/"), timeout=60.0, transport=transport, trust_env=False) as client:
            try:
                r = await client.request(request.method, path, content=await request.body(), headers=headers)
            except httpx2.HTTPError as exc:
                return _openai_error(502, f"The upstream could not be reached ({type(exc).__name__}).", "api_error", "upstream_error") \
                    if provider == "openai" else _anthropic_error(502, f"The upstream could not be reached ({type(exc).__name__}).", "api_error")
        kept = {k: v for k, v in r.headers.items() if k.lower() in ("content-type", "request-id", "x-request-id")}
        return Response(r.content, status_code=r.status_code, headers=kept)

    async def chat(request: Request) -> Response:
        return await forward(request, "openai", "/chat/completions")

    async def responses(request: Request) -> Response:
        return await forward(request, "openai", "/responses")

    async def messages(request: Request) -> Response:
        return await forward(request, "anthropic", "/v1/messages")

    async def openai_models(request: Request) -> Response:
        return await passthrough(request, "openai", "/models")

    async def anthropic_models(request: Request) -> Response:
        return await passthrough(request, "anthropic", "/v1/models")

    async def count_tokens(request: Request) -> Response:
        return await passthrough(request, "anthropic", "/v1/messages/count_tokens")

    routes = Starlette(routes=[Route("/openai/v1/chat/completions", chat, methods=["POST"]),
                               Route("/openai/v1/responses", responses, methods=["POST"]),
                               Route("/openai/v1/models", openai_models, methods=["GET"]),
                               Route("/anthropic/v1/messages", messages, methods=["POST"]),
                               Route("/anthropic/v1/messages/count_tokens", count_tokens, methods=["POST"]),
                               Route("/anthropic/v1/models", anthropic_models, methods=["GET"])])
    return BodyLimit(routes, default=MAX_BODY_BYTES, limits={}, refuse=_too_large)


def _too_large(exc: TooLarge) -> Response:
    """A body over the bound, in a shape both providers' clients read (OpenAI's `error.code`, Anthropic's `type`)."""
    return JSONResponse({"type": "error", "error": {"type": "request_too_large", "code": "request_too_large",
                                                    "message": str(exc), "param": None}}, status_code=413)


def _upstream_key(up: UpstreamSpec, provider: str) -> dict[str, str]:
    """The operator's key as the upstream's header; none for an upstream that takes no key (a local server)."""
    key = os.environ.get(up.api_key_env, "") if up.api_key_env else ""
    if not key:
        return {}
    return {"authorization": f"Bearer {key}"} if provider == "openai" else {"x-api-key": key}


def _read_usage(provider: str, line: bytes, seen: dict[str, Any]) -> None:
    """Keep the usage a server-sent event line carries (OpenAI: the last chunk's, or response.completed's;
    Anthropic: message_start's input counts and message_delta's output count)."""
    if not line.startswith(b"data:"):
        return
    raw = line[5:].strip()
    if not raw or raw == b"[DONE]":
        return
    try:
        event = json.loads(raw)
    except ValueError:
        return
    if provider == "openai":
        if event.get("usage"):  # chat completions: the last chunk
            seen["usage"] = event["usage"]
        elif event.get("type") == "response.completed":  # the Responses API: the completed response
            seen["usage"] = (event.get("response") or {}).get("usage")
    elif event.get("type") == "message_start":
        seen.update({k: v for k, v in (event.get("message", {}).get("usage") or {}).items() if v is not None})
    elif event.get("type") == "message_delta":
        seen.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
