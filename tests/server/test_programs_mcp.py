"""Programs end to end with the official `mcp` client against a served host: save, start, watch it act, read
its logs, revise, restart it (and the server), stop; refusals as "code: sentence" tool errors; one table behind
both faces."""

from __future__ import annotations

import hashlib

import orjson
import pytest
from mcp.shared.exceptions import MCPError
from programs_support import FARMER_1, FARMER_2
from server_support import SIGNUP, serving, until

from wildhold.programs.api import api_functions
from wildhold.server.mcp import SCHEMA_SHOWN_BY, lean_schema, tool_surface
from wildhold.server.programs_surface import PROGRAM_OPS
from wildhold.service.queries import program_reads
from wildhold.service.schemas import ProgramList, ProgramStatus

pytestmark = pytest.mark.anyio

REALTIME = {"clock": "realtime", "tick_seconds": 0.01}


@pytest.fixture
def anyio_backend():
    return "asyncio"


def issued(s, agent: str, issuer: str) -> list[int]:
    """Ticks at which the world started an operation of `agent` under `issuer`, from the match's event log."""
    return [tick for _, tick, kind, payload, _ in s.host.match.store.events(0)
            if kind == "operation_started" and (d := orjson.loads(payload)["data"])["agent"] == agent
            and d["issuer"] == issuer]


async def call(client, tool: str, args: dict) -> dict:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def refused(client, tool: str, args: dict) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.content[0].text


async def test_save_start_watch_logs_revise_restart_and_stop_over_mcp(tmp_path):
    async with serving(tmp_path, **REALTIME) as s:
        async with s.mcp(SIGNUP) as client:
            token = (await call(client, "register", {"name": "ann"}))["token"]
        async with s.mcp(token) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {op.tool for op in PROGRAM_OPS} <= set(tools)
            reference = (await call(client, "rules", {"section": "programs", "key": "reference"}))["value"]
            assert all(f"`{f['signature'].split('(')[0]}(" in reference for f in api_functions(reads=program_reads()))

            saved = await call(client, "save_program", {"name": "farmer", "source": FARMER_1})
            assert (saved["revision"], saved["source_sha256"]) == (1, hashlib.sha256(FARMER_1.encode()).hexdigest())
            started = await call(client, "start_program", {"name": "farmer"})
            assert started["state"] in ("running", "waiting") and started["revision"] == 1

            # It acts as ann's character while ann makes no call.
            assert await until(lambda: len(issued(s, "a1", "program:farmer@1")) >= 3)
            status = await call(client, "program_status", {"name": "farmer"})
            assert status["actions"] >= 3 and status["error"] is None
            assert (await call(client, "world_info", {}))["operation"] is not None

            logs = await call(client, "program_logs", {"name": "farmer"})
            assert logs["lines"][0]["text"] == "farmer rev 1 up"
            assert any(line["text"].startswith("tick ") and line["text"].endswith(" completed") for line in logs["lines"])
            newer = await call(client, "program_logs", {"name": "farmer", "after": logs["next"] - 1})
            assert newer["lines"] and newer["lines"][0]["seq"] == logs["next"]

            assert (await call(client, "save_program", {"name": "farmer", "source": FARMER_2}))["revision"] == 2
            assert (await refused(client, "start_program", {"name": "farmer"})).startswith("program_running:")
            source = await call(client, "program_source", {"name": "farmer", "revision": 1})
            assert source["source"] == FARMER_1 and source["revisions"] == 2

            assert (await call(client, "stop_program", {"name": "farmer"}))["state"] == "stopped"
            assert (await call(client, "start_program", {"name": "farmer"}))["revision"] == 2
            assert await until(lambda: len(issued(s, "a1", "program:farmer@2")) >= 1)
            listed = await call(client, "list_programs", {})
            assert [(p["name"], p["revision"]) for p in listed["programs"]] == [("farmer", 2)]
        stopped_at = s.host.world.tick

    # The server restarts on the same data folder: the program picks up where it was and keeps acting.
    async with serving(tmp_path, **REALTIME) as s:
        async with s.mcp(token) as client:
            assert (await call(client, "program_status", {"name": "farmer"}))["revision"] == 2
            assert await until(lambda: any(t > stopped_at for t in issued(s, "a1", "program:farmer@2")))
            assert (await call(client, "stop_program", {"name": "farmer"}))["state"] == "stopped"
            assert (await refused(client, "stop_program", {"name": "farmer"})).startswith("program_not_running:")


async def test_refusals_are_tool_errors_with_codes_and_change_nothing(tmp_path):
    async with serving(tmp_path) as s:
        ann, _ = await s.register("ann")
        bob, _ = await s.register("bob")
        async with s.mcp(ann) as client:
            assert (await refused(client, "program_status", {"name": "ghost"})).startswith("unknown_program:")
            assert (await refused(client, "start_program", {"name": "ghost"})).startswith("unknown_program:")
            text = await refused(client, "save_program", {"name": "bad", "source": "x = 1\nif x\n    log(x)\n"})
            assert text.startswith("program_invalid:") and "line 2" in text
            text = await refused(client, "save_program", {"name": "bad", "source": "log(1)\nmove(dir='n')\n"})
            assert text.startswith("program_invalid:") and "line 2" in text
            assert (await refused(client, "save_program", {"name": "bad"})).startswith("invalid_arguments:")
            assert (await refused(client, "save_program", {"name": "No Caps", "source": "log(1)"})).startswith("invalid_arguments:")
            assert (await refused(client, "program_logs", {"name": "bad", "limit": 0})).startswith("invalid_arguments:")
            assert (await call(client, "list_programs", {})) == {"programs": []}
            await call(client, "save_program", {"name": "farmer", "source": FARMER_1})
        async with s.mcp(bob) as client:
            assert (await call(client, "list_programs", {})) == {"programs": []}
            for tool in ("program_status", "program_source", "program_logs", "start_program", "stop_program"):
                assert (await refused(client, tool, {"name": "farmer"})).startswith("unknown_program:"), tool
        async with s.mcp(SIGNUP) as client:
            assert (await refused(client, "list_programs", {})).startswith("forbidden:")
        with pytest.raises(BaseExceptionGroup) as failed:
            async with s.mcp("forged-token") as client:
                await client.call_tool("list_programs", {})
        assert failed.group_contains(MCPError, depth=None)


def test_tools_and_routes_come_from_one_table():
    tools = {t["name"]: t for t in tool_surface()}
    for op in PROGRAM_OPS:
        assert tools[op.tool]["input_schema"] == lean_schema(op.args.model_json_schema())
        shown_by = SCHEMA_SHOWN_BY["full"].get(op.answer, op.tool)  # a shared answer's schema is on one tool, named by the rest
        shown = ProgramStatus if op.answer is ProgramList else op.answer  # a list of programs names its entries' schema
        assert tools[shown_by]["output_schema"] == shown.model_json_schema()
        assert tools[op.tool]["description"].startswith(op.description())
