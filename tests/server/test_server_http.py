"""The HTTP API with httpx against the real app in-process: agents, actions, operations, lobby, clocks, refusals."""

from __future__ import annotations

import re

import pytest
from archive_support import forge
from server_support import ADMIN, SIGNUP, auth, config, serving, until

from wildhold.server.http import STATUS
from wildhold.service.errors import SERVICE_CODES
from wildhold.service.queries import QUERIES
from wildhold.world.actions import REGISTRY

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_the_map_memory_comes_a_page_at_a_time_and_the_pages_make_the_whole_memory(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        me = (await s.http.get("/api/observe", params={"memory": "none"}, headers=auth(token))).json()["self"]
        far = {"agent": me["id"], "x": (me["x"] + 12) % s.host.world.width, "y": me["y"]}
        moved = await s.http.post("/api/admin/setup", json={"command": "move_character", "args": far}, headers=auth(ADMIN))
        assert moved.status_code == 200, moved.text  # the whole view square it left is remembered
        whole = (await s.http.get("/api/observe", headers=auth(token))).json()["memory"]
        assert len(whole) > 6
        pages, start = [], 0
        while start is not None:
            page = (await s.http.get("/api/map_memory", params={"start": start, "limit": 4}, headers=auth(token))).json()
            assert page["total"] == len(whole) and len(page["memory"]) <= 4
            pages += page["memory"]
            start = page["next"]
        assert pages == whole


async def test_register_observe_act_wait_and_a_rule_failure(tmp_path):
    async with serving(tmp_path) as s:
        token, reg = await s.register("ann")
        assert reg["agent"] == "a1" and reg["status"] == "running" and reg["mcp_url"].endswith("/mcp")
        obs = (await s.http.get("/api/observation", headers=auth(token))).json()
        assert obs["self"]["id"] == "a1" and obs["time"]["tick"] == s.host.world.tick
        r = await s.http.post("/api/actions/wait", json={"ticks": 3}, headers=auth(token))
        assert r.status_code == 200 and r.json()["status"] == "running"
        op = r.json()["op"]
        done = (await s.http.get("/api/wait", params={"op": op, "timeout_s": 5}, headers=auth(token))).json()
        assert done["status"] == "completed" and done["finished_tick"] == done["ends"] and done["timed_out"] is False
        assert (await s.http.get(f"/api/operations/{op}", headers=auth(token))).json()["status"] == "completed"
        r = await s.http.post("/api/actions/eat", json={"item": "bread"}, headers=auth(token))
        assert r.status_code == 409 and r.json()["code"] == "not_in_inventory" and "bread" in r.json()["message"]


async def test_arguments_are_judged_by_the_registry_and_recorded(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        r = await s.http.post("/api/actions/eat", json={"itm": "berries"}, headers=auth(token))
        assert r.status_code == 422 and r.json()["code"] == "bad_arguments"
        r = await s.http.post("/api/act", json={"action": "eatt", "args": {}}, headers=auth(token))
        assert r.json()["code"] == "unknown_action" and "Did you mean 'eat'" in r.json()["message"]
        r = await s.http.post("/api/actions/eat", content=b"{not json", headers=auth(token))
        assert r.status_code == 400 and r.json()["code"] == "bad_request"
        rejected = [e for e in s.host.match.store.inputs(0) if e.kind == "action"]
        assert [i.name for i in rejected] == ["eat", "eatt"]


async def test_every_registry_action_has_its_documented_route(tmp_path):
    async with serving(tmp_path) as s:
        paths = (await s.http.get("/openapi.json")).json()["paths"]
        for name, spec in REGISTRY.items():
            body = paths[f"/api/actions/{name}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            assert body["properties"] == spec.json_schema()["properties"]
            assert spec.doc.split("\n")[0] in paths[f"/api/actions/{name}"]["post"]["description"]


async def test_unauthorised_forbidden_and_rate_limited_have_their_codes(tmp_path):
    async with serving(tmp_path, rate_per_s=0.5, rate_burst=2) as s:
        r = await s.http.get("/api/observation")
        assert r.status_code == 401 and r.json()["code"] == "unauthorised" and "Bearer" in r.headers["www-authenticate"]
        assert (await s.http.get("/api/observation", headers=auth("made-up-token"))).status_code == 401
        assert (await s.http.get("/api/observation", headers=auth(SIGNUP))).json()["code"] == "forbidden"
        token, _ = await s.register("ann")
        statuses = [(await s.http.get("/api/world", headers=auth(token))).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]
        r = await s.http.get("/api/world", headers=auth(token))
        assert r.json()["code"] == "rate_limited" and r.json()["retry_after_s"] > 0 and int(r.headers["retry-after"]) >= 1


async def test_admin_routes_refuse_agent_and_signup_tokens(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        for path in ("/api/admin/start", "/api/admin/stop", "/api/admin/snapshot"):
            for who in (token, SIGNUP):
                r = await s.http.post(path, headers=auth(who))
                assert r.status_code == 403 and r.json()["code"] == "forbidden", path
        r = await s.http.post("/api/admin/setup", json={"command": "give_items", "args": {"agent": "a1", "item": "wood"}},
                              headers=auth(token))
        assert r.status_code == 403
        assert (await s.http.get("/api/admin/agents", headers=auth(token))).status_code == 403
        assert (await s.http.post("/api/admin/snapshot", headers=auth(ADMIN))).status_code == 200
        assert s.host.state == "running"


@pytest.mark.parametrize("args", [{"agent": "a1", "item": "bread", "qty": 2**70}, {"agent": "a1", "item": "bread", "qty": -2**64},
                                  {"agent": "a1", "item": "bread", "deep": [{"n": 2**63}]}])
async def test_a_setup_integer_the_match_log_cannot_record_is_a_bad_request_and_changes_nothing(tmp_path, args):
    """Found by `wildhold bench hardening` fuzzing: a 500 (the log's JSON holds 64-bit integers)."""
    async with serving(tmp_path) as s:
        await s.register("ann")
        inputs = s.host.match.store.last_input
        r = await s.http.post("/api/admin/setup", json={"command": "give_items", "args": args}, headers=auth(ADMIN))
        assert r.status_code == 400 and r.json()["code"] == "bad_request", r.text
        assert "64-bit" in r.json()["message"] and s.host.match.store.last_input == inputs
        ok = await s.http.post("/api/admin/setup", json={"command": "give_items", "args": {"agent": "a1", "item": "bread", "qty": 2**62}},
                               headers=auth(ADMIN))
        assert ok.status_code == 200


async def test_an_agent_cannot_act_as_or_read_another(tmp_path):
    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        bob, _ = await s.register("bob")
        await s.http.post("/api/admin/setup", json={"command": "give_items", "args": {"agent": "a1", "item": "iron_ore", "qty": 7}},
                          headers=auth(ADMIN))
        op = (await s.http.post("/api/actions/wait", json={"ticks": 2}, headers=auth(ann))).json()["op"]
        r = await s.http.get(f"/api/operations/{op}", headers=auth(bob))
        assert r.status_code == 403 and r.json()["code"] == "forbidden"
        r = await s.http.get("/api/wait", params={"op": op, "timeout_s": 0}, headers=auth(bob))
        assert r.status_code == 403
        r = await s.http.post("/api/act", json={"action": "wait", "args": {"ticks": 1}, "agent": "a1"}, headers=auth(bob))
        assert r.status_code == 403 and "your own character (a2)" in r.json()["message"]
        seen = (await s.http.get("/api/observation", headers=auth(bob))).json()
        assert seen["self"]["id"] == "a2" and "iron_ore" not in seen["self"]["inventory"]
        assert str(seen).count("'inventory'") == 1  # its own, nobody else's
        assert all(set(other) == {"id", "name", "x", "y"} for other in seen["view"]["characters"])
        assert "iron_ore" in str((await s.http.get("/api/inventory", headers=auth(ann))).json())
        state = (await s.http.get("/api/state")).json()
        assert "inventory" not in str(state) and "'x'" not in str(state)
        assert {row["name"] for row in state["agents"]} == {"ann", "bob"}


async def test_lobby_start_and_late_join_over_http(tmp_path):
    async with serving(tmp_path, lobby=True, late_join=False) as s:
        ann, reg = await s.register("ann")
        assert reg["agent"] is None and reg["status"] == "lobby"
        for path in ("/api/observation", "/api/world"):
            r = await s.http.get(path, headers=auth(ann))
            assert r.status_code == 409 and r.json()["code"] == "not_started"
        r = await s.http.post("/api/actions/wait", json={"ticks": 1}, headers=auth(ann))
        assert r.json()["code"] == "not_started"
        state = (await s.http.get("/api/state")).json()
        assert state["status"] == "lobby" and state["lobby"] == ["ann"] and state["time"] is None
        assert (await s.http.post("/api/admin/start", headers=auth(ann))).status_code == 403
        started = (await s.http.post("/api/admin/start", headers=auth(ADMIN))).json()
        assert started["agents"] == ["a1"]
        assert (await s.http.get("/api/me", headers=auth(ann))).json()["agent"] == "a1"
        assert (await s.http.get("/api/observation", headers=auth(ann))).status_code == 200
        r = await s.http.post("/api/agents", json={"name": "late"}, headers=auth(SIGNUP))
        assert r.status_code == 409 and r.json()["code"] == "late_join_refused"
        assert (await s.http.post("/api/admin/start", headers=auth(ADMIN))).json()["code"] == "already_started"


async def test_lockstep_waits_for_every_agent(tmp_path):
    async with serving(tmp_path, clock="lockstep", turn_deadline_s=60) as s:
        token, _ = await s.register("ann")
        t0 = s.host.world.tick
        assert not await until(lambda: s.host.world.tick > t0, timeout=0.3)
        op = (await s.http.post("/api/actions/wait", json={"ticks": 4}, headers=auth(token))).json()["op"]
        done = (await s.http.get("/api/wait", params={"op": op, "timeout_s": 5}, headers=auth(token))).json()
        assert done["status"] == "completed" and s.host.world.tick == t0 + 4
        assert not await until(lambda: s.host.world.tick > t0 + 4, timeout=0.3)


async def test_lockstep_deadline_moves_on_without_a_silent_agent(tmp_path):
    async with serving(tmp_path, clock="lockstep", turn_deadline_s=0.02) as s:
        await s.register("ann")
        t0 = s.host.world.tick
        assert await until(lambda: s.host.world.tick >= t0 + 3, timeout=5)


async def test_realtime_does_not_wait_for_anyone(tmp_path):
    async with serving(tmp_path, clock="realtime", tick_seconds=0.01) as s:
        await s.register("ann")
        t0 = s.host.world.tick
        assert await until(lambda: s.host.world.tick >= t0 + 5, timeout=5)


async def test_fast_clock_plays_to_the_end_logs_the_silent_agent_and_archives(tmp_path):
    async with serving(tmp_path, clock="fast", idle_after_ticks=60) as s:
        token, _ = await s.register("ann")
        assert await until(lambda: s.host.state == "over", timeout=60)
        assert s.host.world.tick == s.host.world.end_tick and s.host.archives.path.exists()
        kinds = [kind for _, _, kind, _, _ in s.host.match.store.events(0)]
        assert kinds.count("agent_idle") == 1 and kinds[-1] == "match_ended"
        r = await s.http.get("/api/observation", headers=auth(token))
        assert r.status_code == 200  # the final state stays readable


async def test_stop_writes_the_archive_and_refuses_further_actions(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        saved = (await s.http.post("/api/epilogue", json={"text": "My own account."}, headers=auth(token))).json()
        assert saved["scored"] is False
        stopped = (await s.http.post("/api/admin/stop", headers=auth(ADMIN))).json()
        assert stopped["status"] == "over" and stopped["archive"].endswith("match.wildhold.zip")
        r = await s.http.post("/api/actions/wait", json={"ticks": 1}, headers=auth(token))
        assert r.status_code == 409 and r.json()["code"] == "match_over"
        assert (await s.http.post("/api/agents", json={"name": "bob"}, headers=auth(SIGNUP))).json()["code"] == "lobby_closed"


async def test_info_routes_answer_for_the_agent(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        info = (await s.http.get("/api/world", headers=auth(token))).json()
        assert info["rank"] == 1 and info["wealth_formula"].startswith("wealth (cents)") and info["clock"] == "lockstep"
        scoring = (await s.http.get("/api/scoring")).json()
        assert scoring["wealth"]["summary"] == info["wealth_formula"] and scoring["static"] is True
        recipes = (await s.http.get("/api/recipes", headers=auth(token))).json()["recipes"]
        assert recipes and all("locked" in r for r in recipes)
        assert "board" in (await s.http.get("/api/quests", headers=auth(token))).json()
        assert (await s.http.get("/api/rules/actions", params={"key": "eat"})).json()["value"]["category"] == "maintenance"
        assert (await s.http.get("/api/rules", params={"section": "actions", "key": "eat"})).json()["value"]["category"] == "maintenance"
        r = await s.http.get("/api/rules/actons")
        assert r.status_code == 404 and "Did you mean 'actions'" in r.json()["message"]
        assert (await s.http.get("/api/map", headers=auth(token))).json()["view"]["rows"]
        assert (await s.http.get("/api/metrics")).status_code == 401  # live activity: the operator's only
        assert (await s.http.get("/api/metrics", headers=auth(token))).json()["code"] == "forbidden"
        metrics = (await s.http.get("/api/metrics", headers=auth(ADMIN))).json()
        assert metrics["registered"] == 1 and metrics["counters"]["http_requests"] >= 5


async def test_the_briefing_says_how_to_connect_and_lists_every_tool(tmp_path):
    async with serving(tmp_path) as s:
        text = (await s.http.get("/llms.txt")).text
        assert "POST http://127.0.0.1:8765/api/agents" in text and "http://127.0.0.1:8765/mcp" in text
        assert "wealth (cents) =" in text and "lockstep" in text
        for name in REGISTRY:
            assert f"`{name}`" in text
        for word in ("should", "strategy", "best"):
            assert word not in text.lower()
        for name, q in QUERIES.items():  # every information tool, and its HTTP path
            assert f"`{name}` — {q.doc}" in text
        errors = text.split("## Errors", 1)[1]
        listed = re.findall(r"^- `(\w+)` — ", errors, flags=re.M)
        assert listed == list(SERVICE_CODES) and set(STATUS) == set(SERVICE_CODES), \
            "the briefing lists exactly the service codes, each with its HTTP status"
        assert "rejection_codes" in errors  # the world's codes: the rules document lists them (see test_rules_doc)


async def test_reports_are_for_the_operator_while_live_and_public_once_over(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        await s.http.post("/api/actions/wait", json={"ticks": 2}, headers=auth(token))
        live = await s.http.get("/api/report", headers=auth(token))
        assert live.status_code == 403 and live.json()["code"] == "forbidden"
        as_operator = await s.http.get("/api/report", headers=auth(ADMIN))
        assert as_operator.status_code == 200 and as_operator.json()["rubric_version"]
        await s.http.post("/api/admin/stop", headers=auth(ADMIN))
        public = (await s.http.get("/api/report")).json()
        assert [c["name"] for c in public["agents"]] == ["ann"]
        card = (await s.http.get("/api/report", params={"agent": "ann"})).json()
        assert card["card"]["name"] == "ann" and "fitness_index" in card["card"]
        page = await s.http.get("/report")
        assert page.status_code == 200 and "<html" in page.text.lower()
        again = await s.http.get("/api/matches/match/report", params={"format": "html"})
        assert again.status_code == 200 and again.text == page.text
        missing = await s.http.get("/api/matches/nope/report")
        assert missing.status_code == 404 and missing.json()["code"] == "not_found"
        unknown = await s.http.get("/api/report", params={"agent": "zed"})
        assert unknown.json()["code"] == "not_found"


async def test_a_report_route_refuses_an_archive_that_does_not_verify(tmp_path):
    async with serving(tmp_path) as s:
        await s.register("ann")
        await s.register("bob")
        await s.http.post("/api/admin/stop", headers=auth(ADMIN))
        verified = (await s.http.get("/api/matches/match/report")).json()["verification"]
        assert verified["status"] == "verified" and verified["bound"] is True
        archive = s.host.archives.path
        renamed = lambda agents: [{**a, "name": "bob" if a["name"] == "ann" else "ann"} for a in agents]  # noqa: E731
        forge(archive, archive.parent / "forged.wildhold.zip", agents=renamed)
        refused = await s.http.get("/api/matches/forged/report")
        assert refused.status_code == 422 and refused.json()["code"] == "archive_unverified"
        assert "roster_differs" in refused.json()["message"]


async def test_query_arguments_are_strict_on_json_faces_and_read_as_text_from_a_query_string(tmp_path):
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        assert (await s.http.get("/api/map_memory", params={"start": "0", "limit": "5"}, headers=auth(token))).status_code == 200
        r = await s.http.get("/api/map_memory", params={"limit": "five"}, headers=auth(token))
        assert r.status_code == 400 and r.json()["code"] == "bad_request"
        async with s.mcp(token) as client:
            for args in ({"limit": "5"}, {"limit": True}, {"memory": 1}):
                name = "observe" if "memory" in args else "map_memory"
                r = await client.call_tool(name, args)
                assert r.is_error and r.structured_content["code"] == "bad_request", args
            r = await client.call_tool("wait_operation", {"timeout_s": 31})
            assert r.is_error and "30" in r.structured_content["message"]  # the schema's bound is the server's


def test_a_server_may_not_hold_waits_longer_than_the_schema_says():
    from wildhold.service.access import WAIT_MAX_S
    from wildhold.service.queries import WaitArgs

    assert WaitArgs.model_json_schema()["properties"]["timeout_s"]["maximum"] == WAIT_MAX_S
    with pytest.raises(ValueError, match="wait bound"):
        config(wait_max_s=WAIT_MAX_S + 1).check()


async def test_an_action_whose_arguments_the_log_cannot_record_is_refused_and_nothing_is_recorded(tmp_path):
    """Found by `bench hardening --only fuzz --requests 100000`: an integer beyond 64 bits, or a lone surrogate in a
    string, reached the match log and answered 500."""
    from wildhold.world.serialize import state_hash

    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        before = (s.host.match.store.last_input, state_hash(s.host.world))
        headers = {**auth(token), "Content-Type": "application/json"}
        for body in (b'{"action": "wait", "args": {"ticks": 123456789012345678901234567890}}',
                     b'{"action": "say", "args": {"text": "\\ud800"}}',
                     b'{"action": "move", "args": {"direction": "n", "x": 123456789012345678901234567890}}'):
            r = await s.http.post("/api/act", content=body, headers=headers)
            assert r.status_code == 422 and r.json()["code"] == "bad_arguments", r.text
        assert (s.host.match.store.last_input, state_hash(s.host.world)) == before


async def test_a_body_nested_too_deep_is_a_bad_request_on_every_kind_of_route(tmp_path):
    """100,000 nested arrays fit in 200 KB; the routes that read a raw body and those FastAPI reads into a model
    answer alike: 400 with the sentence, never 500 (and nothing reaches the world)."""
    from wildhold.server.bodies import MAX_DEPTH

    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        before = s.host.world.tick, len(list(s.host.match.store.inputs(0)))
        for levels in (MAX_DEPTH + 1, 2_000, 30_000):
            deep = ("[" * levels + "]" * levels).encode()
            for path, body in (("/api/actions/say", b'{"text": ' + deep + b"}"), ("/api/act", b'{"action": "say", "args": {"text": ' + deep + b"}}"),
                               ("/api/write_epilogue", b'{"text": ' + deep + b"}"), ("/api/agents", b'{"name": ' + deep + b"}")):
                who = SIGNUP if path == "/api/agents" else token
                r = await s.http.post(path, content=body, headers={**auth(who), "Content-Type": "application/json"})
                assert r.status_code == 400 and r.json()["code"] == "bad_request", (path, levels, r.text[:200])
                assert "deeper than 64" in r.json()["message"] or "bytes" in r.json()["message"], r.json()
        assert len(list(s.host.match.store.inputs(0))) == before[1]


async def test_every_route_stops_reading_a_body_past_64_kb(tmp_path):
    """/api/agents read 10 MB before refusing on the name's length; now every route refuses past the bound, from
    the declared length or as the bytes come."""
    from wildhold.server.http import MAX_BODY_BYTES

    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        huge = b'{"name": "' + b"x" * (10 * 2**20) + b'"}'
        r = await s.http.post("/api/agents", content=huge, headers={**auth(SIGNUP), "Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["code"] == "bad_request" and str(MAX_BODY_BYTES) in r.json()["message"]

        async def chunks():  # no Content-Length: the bound is counted as the body arrives
            for _ in range(100):
                yield b"x" * 4096

        r = await s.http.post("/api/actions/say", content=chunks(), headers={**auth(token), "Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["code"] == "bad_request"
        assert (await s.http.post("/api/actions/say", json={"text": "still here"}, headers=auth(token))).status_code == 200
