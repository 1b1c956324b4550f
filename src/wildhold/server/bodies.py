"""Request bodies as every face reads them: JSON parsed under a bound on nesting depth, so a hostile body
(100,000 nested arrays fit in 200 KB) is refused in one sentence instead of exhausting the stack of whatever
walks it later; and the body size each path takes, enforced before a body is held."""

from __future__ import annotations

import json
from typing import Any, Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_DEPTH = 64  # nested arrays and objects a body may hold; every argument model of every face is far shallower


class BodyError(ValueError):
    """A body that is not JSON, or nests deeper than MAX_DEPTH: the sentence says which."""


def parse_json(raw: bytes | str) -> Any:
    """The JSON value of a body, refused (BodyError) when it is not JSON or nests deeper than MAX_DEPTH. The
    standard library reads it (orjson would turn an integer past 64 bits into a float; the world judges such an
    integer itself); a nesting deeper than its recursion limit is refused as too deep, and the walk that checks
    the bound is a loop. NaN and Infinity are not JSON (the match log could not record them as sent)."""
    deep = BodyError(f"The body nests arrays and objects deeper than {MAX_DEPTH} levels.")
    try:
        value = json.loads(raw, parse_constant=_not_json)
    except RecursionError:
        raise deep from None
    except ValueError as exc:
        raise BodyError(f"The body is not JSON ({exc}).") from None
    if nesting(value) > MAX_DEPTH:
        raise deep
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def nesting(value: Any, stop: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in a parsed value (a scalar is 0), counted up to `stop` + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > stop:
            return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


class TooLarge(Exception):
    """A body over its path's limit, refused before more of it is held."""

    def __init__(self, size: int, limit: int):
        super().__init__(f"The body is over {limit} bytes.")
        self.size, self.limit = size, limit


async def read_body(receive: Receive, limit: int) -> tuple[bytes, Receive]:
    """The request body read whole, at most `limit` bytes (TooLarge past it), and a receive that hands it on
    again, then whatever the client sends next (a disconnect, which a long poll listens for)."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            raise TooLarge(size, limit)
        more = message.get("more_body", False)
    body, sent = b"".join(chunks), False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}
    return body, replay


class BodyLimit:
    """Refuses a request whose body is over the limit of its path (the first prefix of `limits` it starts with,
    else `default`; None: the route bounds it itself), from its Content-Length or as the bytes arrive, before
    any route holds it; `refuse(exc)` is the ASGI answer."""

    def __init__(self, app: ASGIApp, default: int, limits: dict[str, int | None], refuse: Callable[[TooLarge], ASGIApp]):
        self.app, self.default, self.limits, self.refuse = app, default, limits, refuse

    def limit_of(self, path: str) -> int | None:
        return next((limit for prefix, limit in self.limits.items() if path.startswith(prefix)), self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.limit_of(scope.get("path", "")) if scope["type"] == "http" else None
        if limit is None:
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        try:
            if declared.isdigit() and int(declared) > limit:
                raise TooLarge(int(declared), limit)
            _, receive = await read_body(receive, limit)
        except TooLarge as exc:
            await self.refuse(exc)(scope, receive, send)
            return
        await self.app(scope, receive, send)
