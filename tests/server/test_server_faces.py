"""One surface: every query and every action answers the same on MCP, on HTTP and, where offered, to programs.

The faces are generated from the query and action registries; these tests call every entry of both
on every face against one world, so an entry a face forgets, renames or answers differently fails here.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from server_support import auth, serving
from wildhold.service.queries import QUERIES
from wildhold.world.actions import REGISTRY
from wildhold.world.serialize import state_hash

pytestmark = [pytest.mark.anyio, pytest.mark.slow(seconds=12)]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def calls(op: str) -> dict[str, list[dict[str, Any]]]:
    """Arguments to ask each query with; a query missing here fails the test below."""
    return {
        "observe": [{}, {"memory": "none"}, {"memory": "full"}, {"memory_since": 0}, {"memory_since": -1},
                    {"memory": "changes", "memory_since": 0}, {"memory": False}],
        "map_memory": [{}, {"start": 1, "limit": 2}, {"limit": 0}],
        "view_image": [{}],
        "inventory": [{}],
        "recipes": [{}],
        "rules": [{}, {"section": "actions"}, {"section": "actions", "key": "eat"}, {"section": "no_such_section"}],
        "quest_log": [{}],
        "world_info": [{}],
        "scoring_info": [{}],
        "operation_status": [{"op": op}, {"op": "op999"}],
        "wait_operation": [{"op": op, "timeout_s": 0}],
        "write_epilogue": [{"text": "An account of the day."}, {"text": ""}],
    }


async def test_every_query_answers_the_same_on_mcp_http_and_to_programs(tmp_path):
    async with serving(tmp_path) as s:
        token, registered = await s.register("ann")
        agent = registered["agent"]
        started = (await s.http.post("/api/actions/rest", json={"ticks": 1}, headers=auth(token))).json()
        done = (await s.http.get("/api/wait_operation", params={"op": started["op"], "timeout_s": 5}, headers=auth(token))).json()
        assert done["status"] == "completed"
        table = calls(started["op"])
        assert set(table) == set(QUERIES), "every query is called on every face"
        tick = s.host.world.tick
        async with s.mcp(token) as client:
            for name, q in QUERIES.items():
                for args in table[name]:
                    over_mcp = await client.call_tool(name, args)
                    if q.writes:
                        over_http = await s.http.post(f"/api/{name}", json=args, headers=auth(token))
                    else:
                        over_http = await s.http.get(f"/api/{name}", params=args, headers=auth(token))
                    assert over_mcp.structured_content == over_http.json(), (name, args)
                    assert over_mcp.is_error == (over_http.status_code >= 400), (name, args, over_http.status_code)
                    for alias in q.aliases:  # the older paths answer the same
                        in_path = re.findall(r"{(\w+)}", alias)
                        if not set(in_path) <= set(args):
                            continue
                        path, rest = alias.format(**args), {k: v for k, v in args.items() if k not in in_path}
                        old = (await s.http.post(path, json=rest, headers=auth(token)) if q.writes
                               else await s.http.get(path, params=rest, headers=auth(token)))
                        assert old.json() == over_http.json(), (alias, args)
                if q.program is not None:
                    over_mcp = await client.call_tool(name, q.program)
                    assert not over_mcp.is_error and s.host.programs.turns.calls._read(agent, name) == over_mcp.structured_content, name
        assert s.host.world.tick == tick, "the world stood still while every face was asked"
        changes = (await s.http.get("/api/observe", params={"memory_since": tick}, headers=auth(token))).json()
        assert changes["memory_since"] == tick and all(m["seen_tick"] >= tick for m in changes["memory"])


async def test_every_action_refuses_the_same_on_mcp_and_http(tmp_path):
    """Arguments no action takes: each action refuses them with one code and sentence on both faces, changing nothing."""
    async with serving(tmp_path) as s:
        token, _ = await s.register("ann")
        before = state_hash(s.host.world)
        async with s.mcp(token) as client:
            for name in REGISTRY:
                over_mcp = await client.call_tool(name, {"no_such_argument": 1})
                over_http = await s.http.post(f"/api/actions/{name}", json={"no_such_argument": 1}, headers=auth(token))
                assert over_mcp.is_error and over_http.status_code == 422, (name, over_http.text)
                assert over_mcp.structured_content == over_http.json(), name
        assert state_hash(s.host.world) == before
