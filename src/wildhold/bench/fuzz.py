"""Fuzzing a served match for `wildhold bench hardening`: schemathesis over the HTTP API (every operation,
valid and invalid requests, then a stateful run along the links it infers between operations), hypothesis
over every MCP tool through the official client, and the raw protocol of /mcp (`fuzz_wire`). Counted:
answers with a 5xx status (on MCP, also JSON-RPC internal errors); afterwards the match is stopped and its
archive must replay.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import httpx2

from wildhold.bench.served import ADMIN, CALL_TIMEOUT_S, SIGNUP, Serve, auth, end_match, replay_verifies

FUZZ_OPTIONS = ["--scenario", "season", "--clock", "realtime", "--tick-seconds", "0.05", "--rate", "0",
                "--wait-max", "0.5"]
MCP_SHARE, WIRE_SHARE, STATEFUL_SHARE = 0.3, 0.2, 0.3  # of all requests (tools, raw /mcp); of the HTTP ones
MAX_EXAMPLES = 25  # per operation or tool and round: rounds go on, each differently seeded, until the budget is spent
STEPS = 10  # per stateful scenario
INTERNAL_ERROR = -32603
KEPT = 10  # examples of each failure kept for the report


class Tally:
    """Requests sent and what came back wrong, with a few examples."""

    def __init__(self) -> None:
        self.requests = self.server_errors = self.transport_errors = self.stateful = self.flaky_rounds = 0
        self.examples: list[str] = []

    def bad(self, what: str) -> None:
        if len(self.examples) < KEPT:
            self.examples.append(what[:400])

    def dump(self) -> dict[str, Any]:
        return {"requests": self.requests, "server_errors": self.server_errors, "stateful": self.stateful,
                "transport_errors": self.transport_errors, "flaky_rounds": self.flaky_rounds, "examples": self.examples}


class ServerGone(Exception):
    """The server stopped answering: fuzzing ends (the figure then shows transport errors)."""


def _settings(examples: int):
    from hypothesis import HealthCheck, Phase, settings

    return settings(max_examples=examples, stateful_step_count=STEPS, deadline=None, database=None,
                    phases=[Phase.generate], suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


def fuzz_http(base: str, token: str, budget: int, seed: int, tally: Tally) -> None:
    """Each operation with valid then invalid requests, round after round, then stateful scenarios; every request
    under one of the tokens (mostly the agent's; the admin's never stops the match)."""
    import requests
    import schemathesis
    from hypothesis import given
    from hypothesis import seed as seeded
    from hypothesis.errors import FlakyStrategyDefinition as StrategyFlaky
    from hypothesis.errors import Unsatisfiable
    from schemathesis.generation import GenerationMode

    rng = random.Random(seed)
    identities = [auth(token)] * 6 + [auth(ADMIN), auth(SIGNUP), {"Authorization": "Bearer not-a-token"}, {}]
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    operations = [r.ok() for r in schema.get_all_operations()]

    def send(case: Any) -> Any:
        headers = rng.choice(identities)
        if case.path == "/api/admin/stop":
            headers = auth(token)
        try:
            response = case.call(headers=headers, timeout=CALL_TIMEOUT_S)
        except requests.RequestException as exc:
            tally.transport_errors += 1
            tally.bad(f"{case.method} {case.path}: {type(exc).__name__}: {exc}")
            raise ServerGone() from exc
        tally.requests += 1
        if response.status_code >= 500:
            tally.server_errors += 1
            tally.bad(f"{case.method} {case.formatted_path} {response.status_code}: {response.text[:200]}")
        return response

    stateless = budget - int(budget * STATEFUL_SHARE)
    rounds = 0
    while tally.requests < stateless:
        examples = max(1, min(MAX_EXAMPLES, (stateless - tally.requests) // (2 * len(operations)) or 1))
        for operation in operations:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                @seeded(seed * 1_000_003 + rounds)
                @given(case=operation.as_strategy(generation_mode=mode))
                @_settings(examples)
                def one(case: Any) -> None:
                    send(case)

                try:
                    one()
                except Unsatisfiable:
                    pass  # nothing in this operation can be made invalid
        rounds += 1

    machine = schema.as_state_machine()

    class Fuzzed(machine):  # type: ignore[misc, valid-type]
        def call(self, case: Any, **kwargs: Any) -> Any:
            tally.stateful += 1
            return send(case)

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            """Counted in `send`; a schema mismatch is not this figure."""

    stateful = budget - stateless
    while tally.stateful < stateful:
        seeded(seed * 1_000_003 + rounds)(Fuzzed)
        try:
            Fuzzed.run(settings=_settings(max(1, min(MAX_EXAMPLES, (stateful - tally.stateful) // STEPS))))
        except StrategyFlaky:
            tally.flaky_rounds += 1  # the server's state moved under a replayed scenario; its requests still count
        rounds += 1


def json_values(schema: dict[str, Any], defs: dict[str, Any]):
    """A hypothesis strategy for values of a JSON schema, as far as the tool schemas use it."""
    from hypothesis import strategies as st

    if "$ref" in schema:
        return json_values(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([json_values(s, defs) for s in schema[key]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 80), 400))
    if kind == "integer":
        return st.integers(schema.get("minimum", -2**40), schema.get("maximum", 2**40))
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(json_values(schema.get("items", {}), defs), min_size=schema.get("minItems", 0),
                        max_size=min(schema.get("maxItems", 4), 8))
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        fixed = {k: json_values(v, defs) for k, v in props.items() if k in required}
        optional = {k: json_values(v, defs) for k, v in props.items() if k not in required}
        extra = schema.get("additionalProperties")
        if not props and isinstance(extra, dict):
            return st.dictionaries(st.text(max_size=12), json_values(extra, defs), max_size=4)
        return st.fixed_dictionaries(fixed, optional=optional)
    return any_json()


def any_json():
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                        max_leaves=6)


def arguments(schema: dict[str, Any]):
    """Arguments for a tool: mostly valid by its schema, else its own keys (and one more) with any values."""
    from hypothesis import strategies as st

    keys = [*schema.get("properties", {}), "unexpected"]
    invalid = st.dictionaries(st.sampled_from(keys), any_json(), max_size=len(keys))
    return st.one_of(json_values(schema, schema.get("$defs", {})), json_values(schema, schema.get("$defs", {})), invalid)


def draw(strategy: Any, examples: int, seed: int) -> list[Any]:
    """Up to `examples` values hypothesis generates from the strategy (no I/O inside hypothesis)."""
    from hypothesis import given
    from hypothesis import seed as seeded

    out: list[Any] = []

    @seeded(seed)
    @given(strategy)
    @_settings(examples)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


async def fuzz_mcp(base: str, token: str, budget: int, seed: int) -> Tally:
    """Every tool the server lists, with hypothesis-generated arguments, round after round, over one session."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    tally = Tally()

    async def on_response(response: httpx2.Response) -> None:
        if response.status_code >= 500:
            tally.server_errors += 1
            tally.bad(f"MCP HTTP {response.status_code}")

    transport = httpx2.AsyncClient(headers=auth(token), timeout=CALL_TIMEOUT_S, event_hooks={"response": [on_response]})
    async with transport, Client(streamable_http_client(f"{base}/mcp", http_client=transport)) as session:
        tools = (await session.list_tools()).tools
        rounds = 0
        while tally.requests < budget:
            examples = max(1, min(MAX_EXAMPLES, (budget - tally.requests) // len(tools)))
            for tool in tools:
                for args in draw(arguments(tool.input_schema), examples, seed * 1_000_003 + rounds):
                    tally.requests += 1
                    try:
                        await asyncio.wait_for(session.call_tool(tool.name, args), CALL_TIMEOUT_S)
                    except MCPError as exc:
                        if exc.error.code == INTERNAL_ERROR:
                            tally.server_errors += 1
                            tally.bad(f"MCP {tool.name}({args!r:.150}): {exc}")
                    except (httpx2.TransportError, TimeoutError) as exc:
                        tally.transport_errors += 1
                        tally.bad(f"MCP {tool.name}: {type(exc).__name__}: {exc}")
                        return tally
            rounds += 1
    return tally


def fuzz(requests: int, seed: int, work: Path) -> dict[str, Any]:
    """Fuzz one served match with `requests` requests in all: half over HTTP, the rest over MCP, as tool calls of the
    official client and as raw protocol (`fuzz_wire`); then stop it and replay it."""
    from wildhold.bench.fuzz_wire import WireTally, fuzz_wire

    serve = Serve(work / "fuzz", FUZZ_OPTIONS)
    http, mcp, wire = Tally(), Tally(), WireTally()
    serve.start()
    try:
        asyncio.run(serve.ready())
        http_token, mcp_token, wire_token = asyncio.run(serve.register(["fuzz-http", "fuzz-mcp", "fuzz-wire"]))
        mcp_budget, wire_budget = int(requests * MCP_SHARE), int(requests * WIRE_SHARE)
        try:
            fuzz_http(serve.base, http_token, requests - mcp_budget - wire_budget, seed, http)
        except ServerGone:
            pass
        if serve.proc.poll() is None:
            mcp = asyncio.run(fuzz_mcp(serve.base, mcp_token, mcp_budget, seed))
        if serve.proc.poll() is None:
            wire = asyncio.run(fuzz_wire(serve.base, wire_token, wire_budget, seed, lambda: draw(any_json(), 200, seed)))
        up = serve.proc.poll() is None
        archive, exit_code = asyncio.run(end_match(serve)) if up else (None, serve.proc.returncode)
    finally:
        serve.kill()
    return {"http": http.dump(), "mcp": mcp.dump(), "wire": wire.dump(), "requests": requests,
            "sigterm_exit_code": exit_code, "replay_verifies": archive is not None and replay_verifies(archive)}
