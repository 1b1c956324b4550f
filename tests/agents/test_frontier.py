"""The frontier scenario (the orientation protocol of seed 001): a large unexplored world, the same starting
capital for everyone, quests from the board, conflict on; it generates, plays, and runs under `wildhold run`
on a real-time clock."""

from __future__ import annotations

import asyncio
import json

import orjson
import pytest

from wildhold.agents.runner import ScriptedRun
from wildhold.agents.scaffold.accounting import Telemetry, rebuild
from wildhold.agents.scaffold.experiment import Experiment, Run
from wildhold.world.serialize import state_hash


def test_frontier_is_the_largest_world_with_conflict_villagers_and_equal_capital(content):
    frontier = content.scenario("frontier")
    others = [s for name, s in content.scenarios.items() if name != "frontier"]
    assert frontier.width * frontier.height > max(s.width * s.height for s in others)
    assert frontier.days > max(s.days for s in others)  # open-ended: the budget, not the season, ends a run
    assert frontier.conflict and frontier.npcs and frontier.start_items.get("coin", 0) > 0


@pytest.fixture(scope="module")
def frontier(tmp_path_factory):
    run = ScriptedRun.start("frontier", 3, tmp_path_factory.mktemp("frontier") / "m.sqlite")
    run.run(until=run.world.start_tick + 720)
    events = [(kind, orjson.loads(payload)["data"]) for _, _, kind, payload, _ in run.match.store.events()]
    yield run, events
    run.match.close()


def test_frontier_generates_and_plays_with_quests_posted_and_the_same_start_for_everyone(frontier, content):
    run, events = frontier
    w = run.world
    assert (w.width, w.height) == (content.scenario("frontier").width, content.scenario("frontier").height)
    assert len(w.chars) == content.scenario("frontier").agents and w.tick == w.start_tick + 720
    assert any(kind == "quest_posted" for kind, _ in events)
    assert sum(1 for kind, _ in events if kind == "operation_completed") > 50
    starts = {}
    for kind, d in events:
        if kind == "item_gained" and d["source"] == "start":
            starts.setdefault(d["holder"], {})[d["item"]] = d["qty"]
    assert len(starts) == len(w.chars) and len({json.dumps(s, sort_keys=True) for s in starts.values()}) == 1


def test_frontier_is_deterministic(frontier, tmp_path):
    run, _ = frontier
    again = ScriptedRun.start("frontier", 3, tmp_path / "m.sqlite")
    again.run(until=again.world.start_tick + 720)
    try:
        assert state_hash(again.world) == state_hash(run.world) and again.world.events.head == run.world.events.head
    finally:
        again.match.close()


def test_a_frontier_experiment_runs_sessions_against_a_real_time_clock(tmp_path):
    cassette = {"model": "replay/scout", "turns": [
        {"tool_calls": [{"name": "observe", "arguments": {}}], "usage": {"input_tokens": 900, "output_tokens": 10}},
        {"tool_calls": [{"name": "set_next_wake", "arguments": {"minutes": 20}}, {"name": "end_session", "arguments": {}}],
         "usage": {"input_tokens": 1000, "output_tokens": 8}},
        {"tool_calls": [{"name": "quest_log", "arguments": {}}], "usage": {"input_tokens": 950, "output_tokens": 9}},
    ]}
    (tmp_path / "scout.json").write_text(json.dumps(cassette))
    exp = Experiment.model_validate({
        "name": "frontier-realtime", "scenario": "frontier", "seed": 2, "clock": "realtime", "tick_seconds": 0.01,
        "budget_usd": 1.0, "ceiling_s": 120,
        "arms": [{"name": "scout", "provider": "replay", "cassette": "scout.json",
                  "price": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
                 {"name": "settler", "provider": "scripted", "policy": "producer"}]})
    run = Run(exp, tmp_path / "out", tmp_path)
    asyncio.run(run.play())
    paths = run.finish()
    records = Telemetry(paths["telemetry"]).records()
    ledger = rebuild(records).arm("scout")
    assert ledger.sessions == 2 and ledger.complete == "cassette_exhausted"
    wake = next(r for r in records if r["kind"] == "wake_scheduled" and r["arm"] == "scout" and r["session"] == 1)
    progress = [r for r in records if r["kind"] == "progress" and r["arm"] == "scout"]
    assert progress[1]["tick"] >= wake["wake_tick"]  # it slept 20 world minutes while the clock ran on
    manifest = json.loads(paths["manifest"].read_text())
    assert (manifest["scenario"], manifest["clock"], manifest["tick_seconds"]) == ("frontier", "realtime", 0.01)
