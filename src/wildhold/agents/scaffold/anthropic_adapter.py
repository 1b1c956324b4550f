"""The Anthropic adapter (`anthropic` SDK): the Messages API with native tool use.

Usage from the provider's own counts: Anthropic reports `input_tokens` without the cache, so the
cache reads and writes are added back (our input includes cached; cached = cache reads). Transient
failures (connection, timeout, 429, 5xx, overloaded) are retried here with exponential backoff, so
each retry is counted; the SDK's own retries are off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anthropic

from wildhold.agents.scaffold import adapters
from wildhold.agents.scaffold.adapters import CannotContinue, ProviderAdapter, ToolCall, Turn, Usage

TRANSIENT_STATUS = adapters.TRANSIENT_STATUS | {529}  # 529: overloaded
DEFAULT_MAX_TOKENS = 8192


def is_transient(exc: Exception) -> bool:
    if isinstance(exc, anthropic.APIConnectionError):
        return True
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in TRANSIENT_STATUS or exc.type == "overloaded_error"
    return False


def to_anthropic_messages(messages: list[dict[str, Any]],
                          thinking: dict[str, list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """The scaffold's neutral transcript as Messages API turns.

    Tool results that answer one assistant turn go back together in one user message. `thinking`
    maps an assistant turn's first tool call id to the thinking blocks the model produced with it,
    which the API wants back unchanged while a tool-use loop is in progress.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "assistant":
            calls = m.get("tool_calls") or []
            blocks = list((thinking or {}).get(calls[0]["id"], [])) if calls else []
            if m.get("content"):
                blocks.append({"type": "text", "text": m["content"]})
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]} for c in calls]
            out.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            if m.get("images"):
                result["content"] = [{"type": "text", "text": m["content"]}] + [
                    {"type": "image", "source": {"type": "base64", "media_type": i["mime"], "data": i["data"]}}
                    for i in m["images"]]
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(result)
            else:
                out.append({"role": "user", "content": [result]})
        else:
            out.append({"role": "user", "content": [{"type": "text", "text": m["content"]}]})
    return out


def to_anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]} for t in tools]


def usage_of(u: Any) -> Usage:
    """Anthropic's counts in our terms: input includes cache reads and cache writes; cached = cache reads."""
    if u is None:
        return Usage()
    read, written = u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0
    return Usage(u.input_tokens + read + written, read, u.output_tokens)


@dataclass
class AnthropicAdapter(ProviderAdapter):
    """Claude through the Messages API.

    `sampling` is sent as request fields verbatim (temperature, top_p, thinking...), with `max_tokens`
    (default 8192) taken from it. `prompt_cache` asks the API to cache the growing transcript (automatic
    cache_control); the cost formula is caching-neutral, so it changes the bill, never the measure.
    """

    provider: str = "anthropic"
    prompt_cache: bool = True

    def __post_init__(self) -> None:
        self.client = anthropic.AsyncAnthropic(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                               timeout=self.timeout_s)
        self._thinking: dict[str, list[dict[str, Any]]] = {}
        self._made: set[str] = set()  # first tool call id of every turn this adapter received, this session

    @property
    def thinks(self) -> bool:
        return (self.sampling.get("thinking") or {}).get("type", "disabled") != "disabled"

    def _check_continuable(self, messages: list[dict[str, Any]]) -> None:
        """With thinking on, the API wants the last tool-use turn's thinking blocks back, unchanged, and one
        thinking setting for the whole loop: a turn made before a crash cannot be continued."""
        last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
        calls = (last or {}).get("tool_calls") or []
        if self.thinks and calls and calls[0]["id"] not in self._made:
            raise CannotContinue("the last tool-use turn was made before a restart and its thinking blocks are lost")

    def request(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        fields = dict(self.sampling)
        if self.prompt_cache:
            fields.setdefault("cache_control", {"type": "ephemeral"})
        return {"model": self.model, "max_tokens": fields.pop("max_tokens", DEFAULT_MAX_TOKENS), "system": system,
                "messages": to_anthropic_messages(messages, self._thinking), "tools": to_anthropic_tools(tools),
                "extra_body": fields}

    async def complete(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self._forget_all_but(messages)
        self._check_continuable(messages)
        request = self.request(system, messages, tools)
        r, retries = await self.with_retries(lambda: self.client.messages.create(**request), is_transient)
        texts, calls, thinking = [], [], []
        for block in r.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                args = block.input if isinstance(block.input, dict) else {"_arguments": block.input}
                calls.append(ToolCall(block.id, block.name, dict(args)))
            elif block.type == "thinking":
                thinking.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
            elif block.type == "redacted_thinking":
                thinking.append({"type": "redacted_thinking", "data": block.data})
        if calls:
            self._made.add(calls[0].id)
            if thinking:
                self._thinking[calls[0].id] = thinking
        return Turn("\n".join(texts), calls, usage_of(r.usage), retries)

    def _forget_all_but(self, messages: list[dict[str, Any]]) -> None:
        """Thinking kept for earlier sessions is dropped: each session starts a fresh transcript."""
        live = {c["id"] for m in messages for c in m.get("tool_calls") or []}
        self._thinking = {k: v for k, v in self._thinking.items() if k in live}
        self._made &= live

    async def close(self) -> None:
        await self.client.close()
