"""The Google adapter (`google-genai` SDK): generate_content with function declarations.

Usage from the provider's own counts (`usage_metadata`): the prompt count already includes cached
content; thinking tokens are billed as output, so they are added to the candidates count. Transient
failures (connection, timeout, 408, 429, 5xx) are retried here with exponential backoff, so each
retry is counted; the SDK's own retries are off (no retry options are given).
"""

from __future__ import annotations

import base64

from dataclasses import dataclass
from typing import Any

import httpx2
from google import genai
from google.genai import errors, types

from wildhold.agents.scaffold.adapters import TRANSIENT_STATUS, ProviderAdapter, ToolCall, Turn, Usage

try:  # google-genai sends through httpx2 unless configured for httpx, which only the dev extras install
    import httpx
except ImportError:
    httpx = None

try:  # and through aiohttp for its async calls when aiohttp is installed (another package may bring it)
    import aiohttp
except ImportError:
    aiohttp = None

CONNECTION_ERRORS = ((httpx2.TransportError,) + ((httpx.TransportError,) if httpx is not None else ())
                     + ((aiohttp.ClientConnectionError,) if aiohttp is not None else ()))


def is_transient(exc: Exception) -> bool:
    if isinstance(exc, errors.APIError):
        return exc.code in TRANSIENT_STATUS
    return isinstance(exc, CONNECTION_ERRORS)


# A model turn rebuilt from the neutral transcript (one this adapter did not see, e.g. before a crash) has
# no signature of its own; Gemini's documented stand-in tells the API so instead of failing the request.
UNSIGNED_TURN = b"skip_thought_signature_validator"


def to_google_contents(messages: list[dict[str, Any]], own_turns: dict[str, types.Content] | None = None,
                       wire_ids: dict[str, str | None] | None = None) -> list[types.Content]:
    """The scaffold's neutral transcript as Gemini contents.

    Function responses that answer one model turn go back together in one user turn. `own_turns`
    maps a turn's first tool call id to the model's own content, sent back unchanged so its thought
    signatures survive (any other turn's first call carries UNSIGNED_TURN); `wire_ids` maps our call ids
    to the ids the API gave (None when it gave none).
    """
    own_turns, wire_ids = own_turns or {}, wire_ids or {}
    out: list[types.Content] = []
    for m in messages:
        if m["role"] == "assistant":
            calls = m.get("tool_calls") or []
            if calls and calls[0]["id"] in own_turns:
                out.append(own_turns[calls[0]["id"]])
                continue
            parts = [types.Part(text=m["content"])] if m.get("content") else []
            parts += [types.Part(function_call=types.FunctionCall(id=wire_ids.get(c["id"], c["id"]), name=c["name"],
                                                                  args=c["arguments"]),
                                 thought_signature=UNSIGNED_TURN if i == 0 else None) for i, c in enumerate(calls)]
            out.append(types.Content(role="model", parts=parts))
        elif m["role"] == "tool":
            call_id = wire_ids.get(m["tool_call_id"], m["tool_call_id"])
            part = types.Part(function_response=types.FunctionResponse(id=call_id, name=m["name"],
                                                                       response={"output": m["content"]}))
            pictures = [types.Part(inline_data=types.Blob(mime_type=i["mime"], data=base64.b64decode(i["data"])))
                        for i in m.get("images", ())]
            if out and out[-1].role == "user" and out[-1].parts and any(p.function_response for p in out[-1].parts):
                out[-1].parts.extend([part, *pictures])
            else:
                out.append(types.Content(role="user", parts=[part, *pictures]))
        else:
            out.append(types.Content(role="user", parts=[types.Part(text=m["content"])]))
    return out


def to_google_tools(tools: list[dict[str, Any]]) -> list[types.Tool]:
    return [types.Tool(function_declarations=[
        types.FunctionDeclaration(name=t["name"], description=t["description"],
                                  parameters_json_schema=t["input_schema"])
        for t in tools])]


def usage_of(u: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    """Gemini's counts in our terms: input = prompt (cached included) + tool-use prompt;
    output = candidates + thoughts."""
    if u is None:
        return Usage()
    return Usage((u.prompt_token_count or 0) + (u.tool_use_prompt_token_count or 0), u.cached_content_token_count or 0,
                 (u.candidates_token_count or 0) + (u.thoughts_token_count or 0))


@dataclass
class GoogleAdapter(ProviderAdapter):
    """Gemini through generate_content. `sampling` is GenerateContentConfig fields (temperature, top_p, seed,
    max_output_tokens, thinking_config...), checked when the adapter is made."""

    provider: str = "google"

    def __post_init__(self) -> None:
        types.GenerateContentConfig(**self.sampling)  # a misspelt sampling field fails here, not mid-run
        options = types.HttpOptions(base_url=self.base_url, timeout=int(self.timeout_s * 1000))
        self.client = genai.Client(api_key=self.api_key, http_options=options).aio
        self._own_turns: dict[str, types.Content] = {}
        self._wire_ids: dict[str, str | None] = {}
        self._made = 0

    def config(self, system: str, tools: list[dict[str, Any]]) -> types.GenerateContentConfig:
        return types.GenerateContentConfig(
            system_instruction=system, tools=to_google_tools(tools),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True), **self.sampling)

    async def complete(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self._forget_all_but(messages)
        contents = to_google_contents(messages, self._own_turns, self._wire_ids)
        config = self.config(system, tools)
        r, retries = await self.with_retries(
            lambda: self.client.models.generate_content(model=self.model, contents=contents, config=config),
            is_transient)
        content = r.candidates[0].content if r.candidates else None
        texts, calls = [], []
        for part in (content.parts or []) if content else []:
            if part.text and not part.thought:
                texts.append(part.text)
            if part.function_call:
                fc = part.function_call
                self._made += 1
                call_id = fc.id or f"gemini_call_{self._made}"
                self._wire_ids[call_id] = fc.id
                calls.append(ToolCall(call_id, fc.name or "", dict(fc.args or {})))
        if calls:
            self._own_turns[calls[0].id] = content
        return Turn("".join(texts), calls, usage_of(r.usage_metadata), retries)

    def _forget_all_but(self, messages: list[dict[str, Any]]) -> None:
        """Turns kept for earlier sessions are dropped: each session starts a fresh transcript."""
        live = {c["id"] for m in messages for c in m.get("tool_calls") or []}
        self._own_turns = {k: v for k, v in self._own_turns.items() if k in live}
        self._wire_ids = {k: v for k, v in self._wire_ids.items() if k in live}

    async def close(self) -> None:
        await self.client.aclose()
