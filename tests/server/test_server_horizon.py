"""A hidden horizon (seed 001): no answer an agent can reach says when the match ends, how long it lasts, or
that spend is measured; a visible one still says when it ends; the two tool catalogues differ only there."""

from __future__ import annotations

import json
import re

import pytest
from server_support import auth, serving, until

from wildhold.server.mcp import tool_surface, tools_hash
from wildhold.service.host import Host
from wildhold.store.sqlite import StoreError

pytestmark = [pytest.mark.anyio, pytest.mark.slow(seconds=20)]

REALTIME = {"clock": "realtime", "tick_seconds": 0.01}
# A program that reads what programs may read and logs it: the program face's answers, seen through its log.
READER = 'o = observe()\nlog(o["time"])\nlog(quest_log())\nlog(inventory())\nlog(now())\n'


@pytest.fixture
def anyio_backend():
    return "asyncio"


def leaks(text: str, end_tick: int, length_ticks: int, days: int) -> list[str]:
    """What in `text` tells the end, the length or that spend is measured: each offending match, with context."""
    patterns = [
        rf"(?<![\w.]){end_tick}(?![\w.])", rf"(?<![\w.]){length_ticks}(?![\w.])",  # the end tick, the length in ticks
        rf"\b{days}[ -](in-game )?days?\b", r"\bthirty days\b", rf'"days":\s*{days}\b',  # the length in days
        r"ends_at_tick", r"length_ticks", r"\bend_tick\b", r"\bends after\b", r"\bmatch lasts\b", r"\bmatch ends at\b",
        r"\bhorizon\b", r"\binference\b", r"\bspend\b(?! (an|one|a|your|its|the|\w+ (coins?|energy)))",
        r"\bspent\b", r"\bbudget_usd\b", r"\bdollars?\b", r"\busd\b", r"\$\d", r"\bper_mtok\b", r"\bmtok\b",
        r"\b(input|output|cached)[ _-](input[ _-])?tokens?\b", r"\bcost_usd\b", r"\bprice table\b",
    ]
    found = []
    for pattern in patterns:
        for m in re.finditer(pattern, text, re.IGNORECASE):
            found.append(f"{m.group(0)!r} in ...{text[max(0, m.start() - 80):m.end() + 80]}...")
    return found


async def _answers(s, token: str) -> list[tuple[str, str]]:
    """Every answer this agent can reach, over every face: (where, text)."""
    out: list[tuple[str, str]] = []
    h = s.http
    for path in ("/llms.txt", "/openapi.json", "/api/state", "/api/health", "/api/me", "/api/scoring_info",
                 "/api/world_info", "/api/observe", "/api/map_memory", "/api/inventory", "/api/recipes",
                 "/api/quest_log", "/api/rules", "/api/programs", "/api/operation_status?op=op999",
                 "/api/wait_operation?timeout_s=0", "/api/programs/nope", "/api/rules?section=nope", "/api/nowhere",
                 "/api/observe?memory=maybe", "/report", "/api/report", "/api/metrics"):
        r = await h.get(path, headers=auth(token))
        out.append((f"GET {path} ({r.status_code})", r.text))
    rules = (await h.get("/api/rules", headers=auth(token))).json()["value"]
    for section in rules["sections"]:
        r = await h.get(f"/api/rules?section={section}", headers=auth(token))
        out.append((f"rules {section}", r.text))
    for path, body in (("/api/actions/move", {"direction": "up"}), ("/api/actions/eat", {"item": "gold"}),
                       ("/api/actions/teleport", {}), ("/api/act", {"action": "wait", "args": {"ticks": 10**6}}),
                       ("/api/epilogue", {"text": "I looked around."}), ("/api/programs/reader", {"source": "x = ("})):
        r = await h.post(path, json=body, headers=auth(token))
        out.append((f"POST {path} ({r.status_code})", r.text))
    async with s.mcp(token) as client:
        listing = (await client.list_tools()).tools
        out.append(("MCP tools/list", json.dumps([t.model_dump(mode="json") for t in listing])))
        out.append(("MCP instructions", str(client.instructions)))
        for tool, args in (("observe", {}), ("world_info", {}), ("scoring_info", {}), ("map_memory", {}),
                           ("quest_log", {}), ("inventory", {}), ("recipes", {}), ("rules", {}),
                           ("rules", {"section": "scenarios"}), ("rules", {"section": "world"}),
                           ("rules", {"section": "observation"}), ("operation_status", {"op": "op999"}),
                           ("wait_operation", {"timeout_s": 0}), ("eat", {"item": "gold"}), ("teleport", {}),
                           ("wait", {"ticks": 10**6}), ("list_programs", {}), ("program_status", {"name": "nope"})):
            r = await client.call_tool(tool, args)
            out.append((f"MCP {tool} {args}", json.dumps([c.model_dump(mode="json") for c in r.content])
                        + json.dumps(r.structured_content)))
        saved = await client.call_tool("save_program", {"name": "reader", "source": READER})
        assert not saved.is_error, saved.content[0].text
        await client.call_tool("start_program", {"name": "reader"})
        assert await until(lambda: s.host.programs.status(s.host.access.agent_of(
            s.host.access.authenticate(token)), "reader")["state"] in ("finished", "failed"), timeout=20)
        logs = await client.call_tool("program_logs", {"name": "reader"})
        out.append(("program logs", json.dumps(logs.structured_content)))
        assert "'tick'" in json.dumps(logs.structured_content), logs.structured_content  # the program did read its clock
    return out


async def test_no_answer_of_a_hidden_horizon_match_reveals_its_end_its_length_or_spend(tmp_path):
    async with serving(tmp_path / "hidden", scenario="frontier", seed=1, horizon="hidden", **REALTIME) as s:
        w = s.host.world
        end, length, days = w.end_tick, w.end_tick - w.start_tick, w.scenario.days
        token, _ = await s.register("ann")
        answers = await _answers(s, token)
        assert len(answers) > 60
        found = [f"{where}: {hit}" for where, text in answers for hit in leaks(text, end, length, days)]
        assert not found, "\n".join(found[:20])
        # What the agent still reads: the time of day, and the rules of the world.
        observed = json.loads(next(text for where, text in answers if where.startswith("GET /api/observe ")))
        assert set(observed["time"]) == {"tick", "day", "hour", "minute", "night", "season", "weather"}
        assert s.host.archives.export() and s.host.match.manifest([])["horizon"] == "hidden"


async def test_the_same_walk_finds_the_end_of_a_visible_match(tmp_path):
    """The check can fail: every face that hides the end in a hidden match shows it in a visible one."""
    async with serving(tmp_path / "visible", scenario="frontier", seed=1, **REALTIME) as s:
        w = s.host.world
        end, length, days = w.end_tick, w.end_tick - w.start_tick, w.scenario.days
        token, _ = await s.register("ann")
        answers = await _answers(s, token)
        told = {where.split(" (")[0] for where, text in answers if leaks(text, end, length, days)}
        assert {"GET /llms.txt", "GET /openapi.json", "GET /api/state", "GET /api/scoring_info", "GET /api/world_info",
                "GET /api/observe", "GET /api/map_memory", "rules world", "rules observation", "rules scenarios",
                "MCP tools/list", "program logs"} <= told, told
        assert any("inference" in text for where, text in answers if where == "GET /api/scoring_info (200)")


def test_the_catalogues_differ_only_by_the_clocks_end():
    visible, hidden = tool_surface(), tool_surface(horizon="hidden")
    assert tools_hash() != tools_hash(horizon="hidden")

    def without_end(value):
        if isinstance(value, dict):
            return {k: without_end(v) for k, v in value.items() if k != "ends_at_tick"}
        if isinstance(value, list):
            return [without_end(v) for v in value if v != "ends_at_tick"]
        return value

    assert without_end(visible) == hidden
    changed = {t["name"] for t, u in zip(visible, hidden) if t != u}
    assert changed == {"observe", "map_memory", "world_info"}  # their answers carry the clock
    assert "ends_at_tick" not in json.dumps(hidden)


def test_the_horizon_lives_with_the_match_and_a_resume_must_agree(tmp_path):
    from server_support import config

    host = Host.open(tmp_path, config(), "tiny", 3, horizon="hidden")
    host.close()
    again = Host.open(tmp_path, config(), "tiny", 3, horizon="hidden")
    assert again.horizon == "hidden" and again.match.manifest([])["horizon"] == "hidden"
    again.close()
    with pytest.raises(StoreError, match="horizon 'hidden', not 'visible'"):
        Host.open(tmp_path, config(), "tiny", 3)


async def test_an_app_refuses_a_host_of_another_horizon(tmp_path):
    from server_support import config

    from wildhold.server.http import create_app

    host = Host.open(tmp_path, config(), "tiny", 3, horizon="hidden")
    try:
        app = create_app(lambda: host, horizon="visible")  # its schemas would name the end the host hides
        with pytest.raises(RuntimeError, match="serves a visible horizon; the match's is hidden"):
            async with app.router.lifespan_context(app):
                pass
    finally:
        host.close()


def test_the_command_line_prints_each_horizons_rules_and_tool_hash():
    from typer.testing import CliRunner

    from wildhold.cli import app

    runner = CliRunner()
    hidden = runner.invoke(app, ["rules", "--tools-hash", "--horizon", "hidden"])
    assert hidden.exit_code == 0 and hidden.output.split()[0] == tools_hash(horizon="hidden")
    assert runner.invoke(app, ["rules", "--tools-hash"]).output.split()[0] == tools_hash()
    rules = runner.invoke(app, ["rules", "--horizon", "hidden"]).output
    assert "ends_at_tick" not in rules and "inference spend" not in rules
    assert "ends_at_tick" in runner.invoke(app, ["rules"]).output
