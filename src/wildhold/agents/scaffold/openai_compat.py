"""The OpenAI-compatible adapter (`openai` SDK): OpenAI, vLLM, Ollama, OpenRouter and others, by base URL.

Native tool calling; usage from the provider's own counts (cached prompt tokens included); transient
failures (connection, timeout, 429, 5xx) retried with exponential backoff here, so each retry is counted.
`StandinAdapter` is the same adapter pointed at the stand-in model (agents.scaffold.standin) it serves itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import openai

from wildhold.agents.scaffold.adapters import TRANSIENT_STATUS, ProviderAdapter, ToolCall, Turn, Usage


def is_transient(exc: Exception) -> bool:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in TRANSIENT_STATUS
    return isinstance(exc, openai.APIConnectionError)


def to_openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scaffold's neutral transcript in the chat-completions wire format."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    pictures: list[dict[str, Any]] = []  # images of the tool results just passed: a user message after them

    def show_pictures() -> None:
        if pictures:
            out.append({"role": "user", "content": list(pictures)})
            pictures.clear()

    for m in messages:
        if m["role"] != "tool":
            show_pictures()
        if m["role"] == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.get("content") or None}
            if m.get("tool_calls"):
                msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                      "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                                     for c in m["tool_calls"]]
            out.append(msg)
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
            for i in m.get("images", ()):  # a tool message carries text only: its images follow the tool results
                pictures += [{"type": "text", "text": f"The image {m['name']} returned ({m['tool_call_id']}):"},
                             {"type": "image_url", "image_url": {"url": f"data:{i['mime']};base64,{i['data']}"}}]
        else:
            out.append({"role": m["role"], "content": m["content"]})
    show_pictures()
    return out


def to_openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["input_schema"]}} for t in tools]


@dataclass
class OpenAICompatAdapter(ProviderAdapter):
    """A chat-completions endpoint. `sampling` is passed through as request fields (temperature, top_p, seed...)."""

    timeout_s: float = 120.0
    provider: str = "openai-compatible"

    def __post_init__(self) -> None:
        self.client = openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key or "not-needed",
                                         max_retries=0, timeout=self.timeout_s)

    async def complete(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        wire_messages, wire_tools = to_openai_messages(system, messages), to_openai_tools(tools)
        r, retries = await self.with_retries(
            lambda: self.client.chat.completions.create(model=self.model, messages=wire_messages, tools=wire_tools,
                                                        **self.sampling),
            is_transient)
        choice = r.choices[0].message
        calls = []
        for c in choice.tool_calls or []:
            try:
                args = json.loads(c.function.arguments or "{}")
            except json.JSONDecodeError:
                args = {"_unparsed_arguments": c.function.arguments}
            calls.append(ToolCall(c.id, c.function.name, args if isinstance(args, dict) else {"_arguments": args}))
        u = r.usage
        cached = (u.prompt_tokens_details.cached_tokens or 0) if u and u.prompt_tokens_details else 0
        usage = Usage(u.prompt_tokens, cached, u.completion_tokens) if u else Usage()
        return Turn(choice.content or "", calls, usage, retries)

    async def close(self) -> None:
        await self.client.close()


@dataclass
class StandinAdapter(OpenAICompatAdapter):
    """The OpenAI-compatible adapter, unchanged, pointed at a stand-in served by this process on 127.0.0.1: the
    server starts with the first call, in the caller's event loop, and stops when the adapter closes."""

    provider: str = "standin"
    server: Any = None

    def __post_init__(self) -> None:
        self.client = None

    async def complete(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        if self.server is None:
            from wildhold.agents.scaffold.loopback import Loopback
            from wildhold.agents.scaffold.standin import standin_app

            self.server = await Loopback(standin_app()).__aenter__()
            self.base_url = f"{self.server.url}/v1"
            super().__post_init__()
        return await super().complete(system, messages, tools)

    async def close(self) -> None:
        if self.client is not None:
            await super().close()
        if self.server is not None:
            await self.server.close()
            self.server = None
