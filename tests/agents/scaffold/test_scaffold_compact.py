"""An experiment served with the compact tool profile (`tools: compact`): its model arm is listed the compact tools and
plays through them, a scripted arm and the scaffold's own calls (waits, progress, sleep) go through them too, and the
profile is in the manifest, the tool-surface hash and the arm's identity."""

from __future__ import annotations

import asyncio
import json

from wildhold.agents.scaffold.experiment import Experiment, Run
from wildhold.server.mcp import tools_hash
from wildhold.store.archive import Archive

CASSETTE = {"model": "replay/compact", "turns": [
    {"tool_calls": [{"name": "observe", "arguments": {}}, {"name": "read", "arguments": {"query": "inventory"}}],
     "usage": {"input_tokens": 100, "output_tokens": 10}},
    {"tool_calls": [{"name": "act", "arguments": {"action": "eat", "args": {"item": "berries"}}}],
     "usage": {"input_tokens": 200, "output_tokens": 10}},
    {"tool_calls": [{"name": "wait_operation", "arguments": {}}], "usage": {"input_tokens": 300, "output_tokens": 10}},
    {"tool_calls": [{"name": "end_session", "arguments": {}}], "usage": {"input_tokens": 300, "output_tokens": 10}},
]}


def test_an_experiment_with_the_compact_tools_plays_every_arm_through_them(tmp_path):
    (tmp_path / "probe.json").write_text(json.dumps(CASSETTE))
    exp = Experiment.model_validate({
        "name": "compact", "scenario": "tiny", "seed": 1, "budget_usd": 1.0, "ceiling_s": 120, "tools": "compact",
        "caps": {"wake_default_minutes": 5},
        "arms": [{"name": "probe", "provider": "replay", "cassette": "probe.json",
                  "price": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
                 {"name": "base", "provider": "scripted", "policy": "producer"}]})
    run = Run(exp, tmp_path / "out", tmp_path)
    asyncio.run(run.play())
    paths = run.finish()
    listed = {t["name"] for t in run.adapters["probe"].received[0]["tools"]}
    assert {"act", "read", "program", "observe", "wait_operation", "rules"} <= listed and "eat" not in listed
    results = [m for r in run.adapters["probe"].received for m in r["messages"] if m.get("role") == "tool"]
    assert results and not any(str(m.get("content", "")).startswith(("unknown_tool", "bad_request")) for m in results)
    manifest = json.loads(paths["manifest"].read_text())
    assert manifest["tools"] == "compact" and manifest["tools_hash"] == tools_hash(horizon="hidden", profile="compact")
    assert manifest["arm_identities"]["probe"]["tools"] == "compact"
    assert "tools" not in manifest["arm_identities"]["base"], "a scripted arm never sees the tools"
    with Archive(paths["archive"]) as a:
        ids = {agent["name"]: agent["id"] for agent in a.manifest["agents"]}
        assert a.manifest["tools_hash"] == manifest["tools_hash"] and a.manifest["server"]["tools"] == "compact"
        started = [e["data"] for e in a.events() if e["kind"] == "operation_started"]
    assert any(d["agent"] == ids["probe"] and d["action"] == "eat" for d in started)
    assert any(d["agent"] == ids["base"] for d in started), "the scripted arm played through the compact tools"
