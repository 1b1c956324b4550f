"""Provider adapters: one interface over model APIs (native tool calling), and the replay adapter for tests."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class CannotContinue(Exception):
    """The provider cannot continue this transcript as it stands (a tool loop resumed after a crash whose
    signed reasoning was lost): the session ends, recorded as `interrupted`, and the next one starts fresh."""


@dataclass(frozen=True)
class Usage:
    """Provider-reported tokens; `input_tokens` includes `cached_input_tokens`."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0

    def dump(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "cached_input_tokens": self.cached_input_tokens,
                "output_tokens": self.output_tokens}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One model response: text, the tool calls it asked for, what it cost in tokens, and retries it took."""

    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    retries: int = 0


class Adapter(Protocol):
    """A model backend. `messages` is the scaffold's provider-neutral transcript (see session.py)."""

    model: str
    provider: str

    async def complete(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn: ...


@dataclass
class ProviderAdapter:
    """What the adapters over a provider's API share: endpoint, key, sampling fields and retry policy.

    Transient failures are retried here with exponential backoff, not by the SDK (its retries are off),
    so that every retry is counted in the turn's `retries`, and every failed attempt is kept in
    `interruptions` (when, the error, how long it then waited) until the session loop records it.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    max_retries: int = 5
    backoff_s: float = 1.0
    timeout_s: float = 300.0
    provider: str = ""
    interruptions: list[dict[str, Any]] = field(default_factory=list)

    async def with_retries(self, call: Callable[[], Awaitable[T]],
                           is_transient: Callable[[Exception], bool]) -> tuple[T, int]:
        """`call()`'s result and the retries it took; a permanent failure, or one past `max_retries`, is raised."""
        retries = 0
        while True:
            try:
                return await call(), retries
            except Exception as exc:
                final = not is_transient(exc) or retries >= self.max_retries
                wait = 0.0 if final else self.backoff_s * 2 ** retries
                self.interruptions.append({"at": round(time.time(), 3), "error": describe_error(exc), "wait_s": wait,
                                           "final": final})
                if final:
                    raise
            await asyncio.sleep(wait)
            retries += 1


def describe_error(exc: BaseException) -> str:
    """A provider failure in a few words: its class and HTTP status when it has one."""
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    return f"{type(exc).__name__}" + (f" {status}" if isinstance(status, int) else "")


@dataclass
class ReplayAdapter:
    """Plays recorded model turns from a cassette (JSON: model, turns[{text, tool_calls[{name, arguments}], usage}]).

    Keeps everything it was sent in `received`, so tests can search every string the model saw.
    When the cassette is exhausted it answers with no tool calls, which ends the session. A turn may
    carry the provider failures met before it (`interruptions`: [{error, wait_s}]): they are recorded
    as the live adapter's are, at the time of replay, without waiting.
    """

    cassette: Path
    model: str = ""
    provider: str = "replay"
    turns: list[dict[str, Any]] = field(default_factory=list)
    position: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)
    interruptions: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        data = json.loads(Path(self.cassette).read_text())
        self.model = self.model or data.get("model", "replay")
        self.turns = list(data["turns"])

    @property
    def exhausted(self) -> bool:
        return self.position >= len(self.turns)

    async def complete(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        self.received.append(json.loads(json.dumps({"system": system, "messages": messages, "tools": tools})))
        if self.exhausted:
            return Turn("", [], Usage())
        t = self.turns[self.position]
        self.position += 1
        for met in t.get("interruptions", ()):
            self.interruptions.append({"at": round(time.time(), 3), "error": str(met["error"]),
                                       "wait_s": float(met.get("wait_s", 0.0)), "final": False})
        calls = [ToolCall(c.get("id", f"call{self.position}_{i}"), c["name"], dict(c.get("arguments", {})))
                 for i, c in enumerate(t.get("tool_calls", []))]
        u = t.get("usage", {})
        return Turn(t.get("text", ""), calls, Usage(u.get("input_tokens", 0), u.get("cached_input_tokens", 0),
                                                     u.get("output_tokens", 0)))


class Limiter(Protocol):
    """Model calls in flight per provider, shared by whoever holds it (a sweep's workers: wildhold.runner.limits)."""

    def acquire(self, provider: str) -> None: ...

    def release(self, provider: str) -> None: ...


def limited(adapter: Adapter, provider: str, limiter: Limiter) -> Adapter:
    """`adapter` with each model call holding a slot of `provider`'s limit while it runs."""
    complete = adapter.complete

    async def call(*args: Any, **kwargs: Any) -> Turn:
        await asyncio.to_thread(limiter.acquire, provider)
        try:
            return await complete(*args, **kwargs)
        finally:
            await asyncio.to_thread(limiter.release, provider)

    adapter.complete = call  # type: ignore[method-assign]
    return adapter
