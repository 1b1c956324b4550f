"""The MCP face with the official `mcp` client over streamable HTTP (carried in-process), and both faces agreeing."""

from __future__ import annotations

import asyncio
import base64
import json
import zlib

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from server_support import SIGNUP, auth, serving, until

from wildhold.server.mcp import CATALOGUE_BUDGET, build_mcp, catalogue_size, lean_schema, tool_surface, tools_hash
from wildhold.service.schemas import OpResult
from wildhold.server.programs_surface import PROGRAM_OPS
from wildhold.server.surface import action_description
from wildhold.world.actions import REGISTRY
from wildhold.world.serialize import state_hash

pytestmark = pytest.mark.anyio
INFO = {"register", "observe", "view_image", "map_memory", "inventory", "recipes", "rules", "quest_log", "world_info",
        "scoring_info", "operation_status", "wait_operation", "write_epilogue"}
PROGRAMS = {op.tool for op in PROGRAM_OPS}


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_tools_are_the_registry_actions_plus_the_information_and_program_tools(tmp_path):
    async with serving(tmp_path) as s:
        async with s.mcp(SIGNUP) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(REGISTRY) <= set(tools) and INFO <= set(tools)
    assert set(tools) == set(REGISTRY) | INFO | PROGRAMS
    for name, spec in REGISTRY.items():
        assert tools[name].input_schema == lean_schema(spec.json_schema())
        assert tools[name].description == action_description(spec)


async def test_register_observe_act_wait_and_a_rule_failure_over_mcp(tmp_path):
    async with serving(tmp_path) as s:
        async with s.mcp(SIGNUP) as client:
            reg = await client.call_tool("register", {"name": "ann", "model": "test-model"})
            assert not reg.is_error and reg.structured_content["agent"] == "a1"
        token = reg.structured_content["token"]
        async with s.mcp(token) as client:
            obs = await client.call_tool("observe", {})
            assert obs.structured_content["self"]["id"] == "a1"
            started = await client.call_tool("wait", {"ticks": 3})
            assert not started.is_error and started.structured_content["status"] == "running"
            op = started.structured_content["op"]
            done = await client.call_tool("wait_operation", {"op": op, "timeout_s": 5})
            assert done.structured_content["status"] == "completed" and done.structured_content["timed_out"] is False
            status = await client.call_tool("operation_status", {"op": op})
            assert status.structured_content["finished_tick"] == status.structured_content["ends"]
            failed = await client.call_tool("eat", {"item": "bread"})
            assert failed.is_error and failed.content[0].text.startswith("not_in_inventory: You carry 0 bread")
            bad = await client.call_tool("eat", {"food": "berries"})
            assert bad.is_error and bad.content[0].text.startswith("bad_arguments: eat:")
            info = await client.call_tool("world_info", {})
            assert info.structured_content["rank"] == 1
            rules = await client.call_tool("rules", {"section": "actions", "key": "eat"})
            assert rules.structured_content["value"]["category"] == "maintenance"
            missing = await client.call_tool("operation_status", {"op": "op999"})
            assert missing.is_error and missing.content[0].text.startswith("unknown_operation:")
            assert not (await client.call_tool("write_epilogue", {"text": "My account."})).is_error
        assert s.host.archives.epilogues["a1"]["text"] == "My account."


async def test_clients_that_open_with_the_initialize_handshake_play_too(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        async with s.mcp(token, mode="legacy") as client:
            assert len((await client.list_tools()).tools) == len(REGISTRY) + len(INFO) + len(PROGRAMS)
            assert (await client.call_tool("wait", {"ticks": 1})).structured_content["status"] == "running"


async def test_a_missing_or_unknown_token_fails_the_request_itself(tmp_path):
    async with serving(tmp_path) as s:
        r = await s.http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                              headers={"Accept": "application/json, text/event-stream"})
        assert r.status_code == 401 and r.json()["code"] == "unauthorised"
        r = await s.http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                              headers={"Accept": "application/json, text/event-stream", **auth("forged-token")})
        assert r.status_code == 401
        with pytest.raises(BaseExceptionGroup) as failed:
            async with s.mcp("forged-token") as client:
                await client.list_tools()
        assert failed.group_contains(MCPError, depth=None)


async def test_signup_token_may_register_but_not_play(tmp_path):
    async with serving(tmp_path) as s:
        async with s.mcp(SIGNUP) as client:
            r = await client.call_tool("observe", {})
            assert r.is_error and r.content[0].text.startswith("forbidden:")
            r = await client.call_tool("wait", {"ticks": 1})
            assert r.is_error and r.content[0].text.startswith("forbidden:")


async def test_lobby_answers_not_started_as_a_tool_error(tmp_path):
    async with serving(tmp_path, lobby=True, late_join=True) as s:
        token, _ = await s.register("ann")
        async with s.mcp(token) as client:
            r = await client.call_tool("observe", {})
            assert r.is_error and r.content[0].text.startswith("not_started:")
            s.host.start()
            assert not (await client.call_tool("observe", {})).is_error


async def play(s, client_kind: str) -> None:
    """One scripted sequence of actions, through one face; lockstep makes the ticks of every input the same."""
    sequence = [("wait", {"ticks": 2}), ("eat", {"item": "bread"}), ("eat", {"item": "berries"}),
                ("move", {"direction": "e"}), ("drop", {"item": "wood", "qty": 1}), ("wait", {"ticks": 3})]
    if client_kind == "http":
        token, _ = await s.register("ann")
        for action, args in sequence:
            r = await s.http.post(f"/api/actions/{action}", json=args, headers=auth(token))
            if r.status_code == 200:
                await s.http.get("/api/wait", params={"op": r.json()["op"], "timeout_s": 5}, headers=auth(token))
        return
    async with s.mcp(SIGNUP) as client:
        token = (await client.call_tool("register", {"name": "ann"})).structured_content["token"]
    async with s.mcp(token) as client:
        for action, args in sequence:
            r = await client.call_tool(action, args)
            if not r.is_error:
                await client.call_tool("wait_operation", {"op": r.structured_content["op"], "timeout_s": 5})


async def test_http_and_mcp_reach_the_same_world_state_for_the_same_actions(tmp_path):
    results = {}
    for face in ("http", "mcp"):
        async with serving(tmp_path / face) as s:
            await play(s, face)
            w = s.host.world
            results[face] = (w.tick, state_hash(w), w.events.head)
    assert results["http"] == results["mcp"]


def test_tool_surface_hash_is_stable_and_covers_names_schemas_and_descriptions():
    surface = tool_surface()
    assert tools_hash(surface) == tools_hash(tool_surface(build_mcp(None)))
    changed = [dict(t) for t in surface]
    changed[0]["description"] += " "
    assert tools_hash(changed) != tools_hash(surface)
    assert {t["name"] for t in surface} >= set(REGISTRY)


def test_the_catalogue_stays_within_its_budget_and_states_the_operation_schema_once():
    """Every MCP session lists the tools and every model reads them: the whole catalogue is budgeted."""
    surface = {t["name"]: t for t in tool_surface()}
    assert catalogue_size(list(surface.values())) <= CATALOGUE_BUDGET["full"]
    assert all(surface[name]["output_schema"] is None for name in REGISTRY)
    assert not [name for name in REGISTRY if "operation_status" in surface[name]["description"]], \
        "what every action answers is said once, on operation_status"
    assert "Every action answers the operation" in surface["operation_status"]["description"]
    assert set(surface["operation_status"]["output_schema"]["properties"]) == set(OpResult.model_fields)
    shown = [json.dumps(t["output_schema"], sort_keys=True) for t in surface.values() if t["output_schema"] is not None]
    assert len(shown) == len(set(shown)), "an answer schema is shown on one tool; the others name it"
    for name, owner in (("wait_operation", "operation_status"), ("start_program", "program_status"),
                        ("stop_program", "program_status"), ("list_programs", "program_status")):
        assert surface[name]["output_schema"] is None and f"schema of {owner}'s output" in surface[name]["description"]
    assert len(surface["save_program"]["description"]) < 1_000 and "section='programs', key='reference'" in surface["save_program"]["description"]
    assert lean_schema({"title": "Args", "type": "object", "properties": {"title": {"title": "Title", "type": "string",
                                                                                      "default": {"title": "kept"}}}}) \
        == {"type": "object", "properties": {"title": {"type": "string", "default": {"title": "kept"}}}}


async def test_mcp_requests_from_foreign_hosts_are_refused(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=s.app), base_url="http://evil.example") as other:
            r = await other.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                 headers={"Accept": "application/json, text/event-stream", **auth(token)})
        assert r.status_code in (403, 421)


async def test_a_refusal_is_the_same_data_on_mcp_and_http(tmp_path):
    """The world's refusal, a malformed argument, a service refusal and a rate limit: MCP's structured error
    content equals HTTP's body, and HTTP's status says which kind it is."""
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        cases = [  # (MCP tool, its arguments, the HTTP request, the status HTTP answers)
            ("eat", {"item": "bread"}, ("post", "/api/actions/eat", {"json": {"item": "bread"}}), 409),
            ("eat", {"food": "berries"}, ("post", "/api/actions/eat", {"json": {"food": "berries"}}), 422),
            ("operation_status", {"op": "op999"}, ("get", "/api/operations/op999", {}), 404),
        ]
        async with s.mcp(token) as client:
            for tool, arguments, (method, path, kwargs), status in cases:
                over_mcp = await client.call_tool(tool, arguments)
                over_http = await getattr(s.http, method)(path, headers=auth(token), **kwargs)
                assert over_mcp.is_error and over_http.status_code == status, (tool, over_http.text)
                body = over_http.json()
                assert over_mcp.structured_content == body, tool
                assert over_mcp.content[0].text == f"{body['code']}: {body['message']}"
        async with s.mcp(SIGNUP) as client:
            refused = await client.call_tool("observe", {})
        assert refused.is_error and refused.structured_content["code"] == "forbidden"
    async with serving(tmp_path / "limited", rate_per_s=0.01, rate_burst=2) as s:
        token, _ = await s.register("bob")
        async with s.mcp(token) as client:
            answers = [await client.call_tool("inventory", {}) for _ in range(5)]
        limited = [a for a in answers if a.is_error]
        assert limited and all(a.structured_content["code"] == "rate_limited" for a in limited)
        assert all(a.structured_content["retry_after_s"] > 0 for a in limited)


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


async def open_session(s, token: str) -> httpx.Response:
    return await s.http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **auth(token)})


async def list_in(s, token: str, session: str) -> httpx.Response:
    return await s.http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                             headers={**MCP_HEADERS, **auth(token), "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})


async def call_in(s, token: str, session: str, tool: str, arguments: dict, method: str = "tools/call") -> httpx.Response:
    return await s.http.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": method,
                                           "params": {"name": tool, "arguments": arguments}},
                             headers={**MCP_HEADERS, **auth(token), "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})


async def test_a_session_answers_only_the_token_that_opened_it(tmp_path):
    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        bob, _ = await s.register("bob")
        session = (await open_session(s, ann)).headers["mcp-session-id"]
        assert (await list_in(s, ann, session)).status_code == 200
        assert (await list_in(s, bob, session)).status_code == 404
        r = await s.http.delete("/mcp", headers={**MCP_HEADERS, **auth(bob), "mcp-session-id": session})
        assert r.status_code == 404
        assert (await list_in(s, ann, session)).status_code == 200  # bob could not close it


async def test_a_token_past_its_session_limit_gets_a_new_session_and_loses_its_least_recently_used(tmp_path):
    """A client that never closes its sessions (the TypeScript SDK sends no DELETE) is never locked out: the session
    it used longest ago closes (its id answers 404, so its client initializes anew), and a token holds no more."""
    async with serving(tmp_path, mcp_sessions_per_token=3) as s:
        ann, _ = await s.register("ann")
        bob, _ = await s.register("bob")
        bobs = (await open_session(s, bob)).headers["mcp-session-id"]
        sessions = [(await open_session(s, ann)).headers["mcp-session-id"] for _ in range(3)]
        assert (await list_in(s, ann, sessions[0])).status_code == 200  # now sessions[1] is the least recently used
        fourth = await open_session(s, ann)
        assert fourth.status_code == 200
        assert (await list_in(s, ann, sessions[1])).status_code == 404
        kept = [sessions[0], sessions[2], fourth.headers["mcp-session-id"]]
        assert [(await list_in(s, ann, sid)).status_code for sid in kept] == [200] * 3
        assert (await list_in(s, bob, bobs)).status_code == 200  # the limit is per token
        assert len(s.app.state.mcp_sessions.owner) == 4
        r = await s.http.delete("/mcp", headers={**MCP_HEADERS, **auth(ann), "mcp-session-id": kept[0]})
        assert r.status_code < 300 and len(s.app.state.mcp_sessions.owner) == 3


async def test_a_session_answering_a_long_poll_is_closed_after_the_idle_ones(tmp_path):
    async with serving(tmp_path, mcp_sessions_per_token=2, clock="realtime", tick_seconds=3600) as s:
        ann, _ = await s.register("ann")
        polling = (await open_session(s, ann)).headers["mcp-session-id"]
        op = (await call_in(s, ann, polling, "wait", {"ticks": 10})).json()["result"]["structuredContent"]["op"]
        idle = (await open_session(s, ann)).headers["mcp-session-id"]
        held = asyncio.create_task(call_in(s, ann, polling, "wait_operation", {"op": op, "timeout_s": 5}))
        assert await until(lambda: polling in s.app.state.mcp_sessions.busy)
        assert (await open_session(s, ann)).status_code == 200  # polling is older, but busy: idle goes
        assert (await list_in(s, ann, idle)).status_code == 404
        held.cancel()


async def test_a_request_whose_session_closes_while_it_runs_answers_404_not_500(tmp_path):
    async with serving(tmp_path, clock="realtime", tick_seconds=3600) as s:
        ann, _ = await s.register("ann")
        session = (await open_session(s, ann)).headers["mcp-session-id"]
        op = (await call_in(s, ann, session, "wait", {"ticks": 10})).json()["result"]["structuredContent"]["op"]
        held = asyncio.create_task(call_in(s, ann, session, "wait_operation", {"op": op, "timeout_s": 10}))
        assert await until(lambda: session in s.app.state.mcp_sessions.busy)
        r = await s.http.delete("/mcp", headers={**MCP_HEADERS, **auth(ann), "mcp-session-id": session})
        assert r.status_code < 300
        answer = await held
        assert answer.status_code == 404 and answer.json()["error"]["data"]["code"] == "not_found"


async def test_an_initialize_spelled_with_json_escapes_is_counted_as_opening_a_session(tmp_path):
    escaped = json.dumps(INITIALIZE).replace('"initialize"', '"\\u0069nitialize"').encode()
    async with serving(tmp_path, mcp_sessions_per_token=1) as s:
        ann, _ = await s.register("ann")
        first = await s.http.post("/mcp", content=escaped, headers={**MCP_HEADERS, **auth(ann)})
        second = await s.http.post("/mcp", content=escaped, headers={**MCP_HEADERS, **auth(ann)})
        assert first.status_code == second.status_code == 200
        assert (await list_in(s, ann, first.headers["mcp-session-id"])).status_code == 404
        assert (await list_in(s, ann, second.headers["mcp-session-id"])).status_code == 200


async def test_opening_a_session_spends_the_tokens_rate_budget(tmp_path):
    async with serving(tmp_path, rate_per_s=0.01, rate_burst=3) as s:
        ann, _ = await s.register("ann")  # the signup token's budget, not ann's
        assert [(await open_session(s, ann)).status_code for _ in range(4)] == [200, 200, 200, 429]
        assert (await open_session(s, ann)).json()["code"] == "rate_limited"


async def test_two_authorization_headers_are_refused_on_every_face(tmp_path):
    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        bob, _ = await s.register("bob")
        twice = [("authorization", f"Bearer {ann}"), ("authorization", f"Bearer {bob}")]
        for path in ("/api/observe", "/api/inventory"):
            r = await s.http.get(path, headers=httpx.Headers(twice))
            assert r.status_code == 400 and r.json()["code"] == "bad_request", path
        r = await s.http.post("/mcp", json=INITIALIZE, headers=httpx.Headers([*MCP_HEADERS.items(), *twice]))
        assert r.status_code == 400 and r.json()["code"] == "bad_request"


async def test_the_signup_token_opens_a_session_to_register_and_read_the_public_tools(tmp_path):
    """An MCP-only agent reads the rules before it registers, as anyone reads /api/rules."""
    async with serving(tmp_path) as s:
        async with s.mcp(SIGNUP) as client:
            rules = await client.call_tool("rules", {"section": "actions", "key": "eat"})
            assert not rules.is_error and rules.structured_content["value"]["category"] == "maintenance"
            assert not (await client.call_tool("scoring_info", {})).is_error
            for name in ("world_info", "observe", "inventory"):
                r = await client.call_tool(name, {})
                assert r.is_error and r.structured_content["code"] == "forbidden", name
            r = await client.call_tool("register", {"name": "ann"})
            assert not r.is_error and r.structured_content["token"]


async def test_an_unreadable_body_is_a_json_rpc_parse_error_and_nothing_is_held(tmp_path):
    from wildhold.server.bodies import MAX_DEPTH
    from wildhold.server.mcp import MAX_BODY_BYTES

    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        big = {**INITIALIZE, "params": {**INITIALIZE["params"], "pad": "x" * (MAX_BODY_BYTES + 10)}}
        def nesting(levels: int) -> bytes:  # an initialize whose params hold `levels` nested arrays (about 200 KB)
            body = json.dumps({**INITIALIZE, "params": {**INITIALIZE["params"], "nest": None}})
            return body.replace("null", "[" * levels + "]" * levels).encode()

        nested, shallow_enough = nesting(100_000), nesting(MAX_DEPTH - 2)
        for body in (json.dumps(big).encode(), nested, b'{"jsonrpc": "2.0", "id": 1, "method": '):
            r = await s.http.post("/mcp", content=body, headers={**MCP_HEADERS, **auth(ann)})
            assert r.status_code == 400 and r.json()["error"]["code"] == -32700
            assert r.json()["error"]["data"] == {"code": "bad_request", "message": r.json()["error"]["message"],
                                                 "retry_after_s": None}
        assert "deeper than 64" in (await s.http.post("/mcp", content=nested, headers={**MCP_HEADERS, **auth(ann)})).text
        r = await s.http.post("/mcp", content=shallow_enough, headers={**MCP_HEADERS, **auth(ann)})
        assert r.status_code == 200
        assert len(s.app.state.mcp_sessions.owner) == 1 and (await open_session(s, ann)).status_code == 200


async def test_every_refusal_at_the_door_is_code_message_and_retry_after(tmp_path):
    async with serving(tmp_path, rate_per_s=0.01, rate_burst=1) as s:
        ann, _ = await s.register("ann")
        r = await s.http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        assert r.status_code == 401 and r.json() == {"code": "unauthorised", "message": r.json()["message"],
                                                     "retry_after_s": None}
        assert (await open_session(s, ann)).status_code == 200
        r = await open_session(s, ann)
        assert r.status_code == 429 and r.json()["code"] == "rate_limited" and r.json()["retry_after_s"] > 0
        assert int(r.headers["retry-after"]) >= r.json()["retry_after_s"]


async def test_the_host_is_checked_before_the_token_and_the_session(tmp_path):
    async with serving(tmp_path) as s:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=s.app), base_url="http://evil.example") as other:
            r = await other.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
            assert r.status_code == 421 and r.json()["code"] == "forbidden" and "Host" in r.json()["message"]
            r = await other.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "mcp-session-id": "none-such"})
            assert r.status_code == 421
        r = await s.http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Origin": "http://evil.example"})
        assert r.status_code == 403 and r.json()["code"] == "forbidden" and "Origin" in r.json()["message"]


async def test_only_what_is_served_is_advertised_and_the_rules_are_a_resource(tmp_path):
    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        opened = await open_session(s, ann)
        capabilities = opened.json()["result"]["capabilities"]
        assert "prompts" not in capabilities and "tools" in capabilities and "resources" in capabilities
        session = opened.headers["mcp-session-id"]
        r = await call_in(s, ann, session, "anything", {}, method="prompts/get")
        assert r.json()["error"]["code"] == -32601  # method not found: a JSON-RPC code
        async with s.mcp(ann) as client:
            [listed] = (await client.list_resources()).resources
            assert str(listed.uri) == "wildhold://rules" and listed.mime_type == "text/markdown"
            [text] = (await client.read_resource("wildhold://rules")).contents
            assert text.text.startswith("# Wildhold rules") and "## " in text.text
        for method in ("tools/list", "resources/list", "resources/templates/list"):
            r = await s.http.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": method, "params": {"cursor": "x"}},
                                  headers={**MCP_HEADERS, **auth(ann), "mcp-session-id": session,
                                           "mcp-protocol-version": "2025-06-18"})
            assert r.json()["error"]["code"] == -32602 and "cursor" in r.json()["error"]["message"], method


async def test_view_image_is_an_image_a_multimodal_model_sees_and_the_same_data_on_http(tmp_path):
    from wildhold.looks import default_looks

    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        async with s.mcp(token) as client:
            got = await client.call_tool("view_image", {})
        over_http = (await s.http.get("/api/view_image", headers=auth(token))).json()
    assert not got.is_error and got.structured_content == over_http
    image = next(c for c in got.content if c.type == "image")
    assert image.mime_type == "image/png" and image.data == over_http["png_base64"]
    png = base64.b64decode(image.data)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = over_http["width"], over_http["height"]
    looks = default_looks()
    assert width == height == 9 * looks.tile_px
    at = png.index(b"IDAT")
    rows = zlib.decompress(png[at + 4:at + 4 + int.from_bytes(png[at - 4:at], "big")])
    stride = 1 + 3 * width
    sprite = looks.sprites[looks.self_.sprite]
    y, x = next((r, c) for r, row in enumerate(sprite) for c, ch in enumerate(row) if ch == "#")  # its first lit pixel
    y, x = 4 * looks.tile_px + y, 4 * looks.tile_px + x
    assert tuple(rows[y * stride + 1 + 3 * x: y * stride + 4 + 3 * x]) == tuple(looks.self_.colour), "you stand at the centre"


def test_the_server_holds_at_most_its_total_of_sessions_closing_the_least_recently_used_of_any_token():
    from wildhold.server.mcp import Sessions

    sessions = Sessions(total=3)
    for key, sid in (("ann", "a1"), ("ann", "a2"), ("bob", "b1")):
        assert sessions.making_room(key, per_token=8) == []
        sessions.opened(key, sid)
        sessions.answered(key)
    sessions.touch("a1")  # a2 is now the least recently used of all
    assert sessions.making_room("bob", per_token=8) == ["a2"]
    sessions.opened("bob", "b2")
    sessions.answered("bob")
    assert sorted(sessions.owner) == ["a1", "b1", "b2"] and sessions.held == {"ann": 1, "bob": 2}
