"""The compact tool profile (`serve --tools compact`): a handful of tools within its catalogue budget that reach
every action, query and program operation the full profile serves, and answer through them as the full profile's
own tools answer."""

from __future__ import annotations

import pytest

from server_support import serving
from wildhold.server.mcp import CATALOGUE_BUDGET, COMPACT_MOST_TOOLS, catalogue_size, tool_surface, tools_hash
from wildhold.server.programs_surface import PROGRAM_OPS
from wildhold.server.surface import compact_call
from wildhold.service.queries import QUERIES

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_the_compact_catalogue_is_a_few_tools_within_its_budget_and_names_everything_the_full_one_serves():
    compact = {t["name"]: t for t in tool_surface(profile="compact")}
    assert len(compact) <= COMPACT_MOST_TOOLS and catalogue_size(list(compact.values())) <= CATALOGUE_BUDGET["compact"]
    assert tools_hash(profile="compact") != tools_hash(profile="full")
    for tool in tool_surface(profile="full"):
        through, args = compact_call(tool["name"], {})
        assert through in compact, tool["name"]
        if through != tool["name"]:  # served through act, read or program: its name is listed there, with its arguments
            named = next(v for k, v in args.items() if k != "args")
            assert f"\n{named}(" in compact[through]["description"], tool["name"]


async def test_act_read_and_program_answer_as_the_full_profiles_own_tools(tmp_path):
    async with serving(tmp_path / "full") as full, serving(tmp_path / "compact", tools="compact") as compact:
        answers = {}
        for s in (full, compact):
            token, _ = await s.register("ann")
            async with s.mcp(token) as client:
                listed = {t.name for t in (await client.list_tools()).tools}
                got = []
                for name, args in (("inventory", {}), ("world_info", {}), ("recipes", {}), ("eat", {"item": "gold"}),
                                   ("save_program", {"name": "p", "source": "log(1)\n"}), ("list_programs", {}),
                                   ("operation_status", {"op": "op999"}), ("offer_trade", {"to": "nobody", "ticks": 5})):
                    tool, sent = (name, args) if s is full else compact_call(name, args)
                    assert tool in listed, tool
                    r = await client.call_tool(tool, sent)
                    got.append((r.is_error, r.structured_content))
                answers[s is full] = got
            assert s.host.config.tools == ("full" if s is full else "compact")
        assert answers[True] == answers[False]


async def test_the_compact_tools_refuse_what_they_do_not_serve_with_the_names_they_do(tmp_path):
    async with serving(tmp_path, tools="compact") as s:
        token, _ = await s.register("ann")
        async with s.mcp(token) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert listed == {"act", "read", "program", "observe", "wait_operation", "rules", "write_epilogue", "register"}
            act = await client.call_tool("act", {"action": "mvoe", "args": {"direction": "n"}})
            read = await client.call_tool("read", {"query": "inventroy"})
            program = await client.call_tool("program", {"op": "begin", "args": {"name": "p"}})
            shaped = await client.call_tool("act", {"action": "move", "args": "n"})
            told = client.instructions
    assert act.structured_content["code"] == "unknown_action" and "'move'" in act.structured_content["message"]
    assert read.structured_content["code"] == "bad_request" and "'inventory'" in read.structured_content["message"]
    assert "The queries: view_image" in read.structured_content["message"]
    assert program.structured_content["code"] == "bad_request" and "start" in program.structured_content["message"]
    assert shaped.is_error and shaped.structured_content["code"] == "bad_request"
    assert "`act` does any action" in told
    assert set(QUERIES) - {"observe", "wait_operation", "rules", "write_epilogue"} <= set(read.structured_content["message"].replace(",", " ").replace(".", " ").split())
    assert {op.verb for op in PROGRAM_OPS} <= set(program.structured_content["message"].replace(",", " ").replace(".", " ").split())
