"""The example programs in examples/programs/ do what their headers promise, saved exactly as shipped:
each passes the save-time check; the farmer tills, plants, waters and harvests while its agent stays
silent; the delver finds the dungeon, clears tier 1 by its telegraphs without taking a hit, survives
a host restart in the middle of the fight with the same chain head as an uninterrupted run, drinks
a potion when low and stays out when too weak to go in."""

from __future__ import annotations

import tempfile
from functools import lru_cache
from pathlib import Path

import pytest
from programs_support import (FARM_SCENARIO, FARM_SEED, events, farm_site, inputs, join, log_texts, open_host, state,
                              step_until)

from wildhold.programs.replay import check_store
from wildhold.service.host import Host
from wildhold.world.parts.dungeon import room_view
from paths_support import ROOT

EXAMPLES = ROOT / "examples" / "programs"
LIVE = ("running", "waiting")


def source(name: str) -> str:
    return (EXAMPLES / f"{name}.py").read_text()


def program_actions(host: Host, agent: str) -> list:
    return [i for i in inputs(host, "action") if i.agent == agent]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_each_example_passes_the_save_time_check(tmp_path, path):
    host = open_host(tmp_path / "m")
    try:
        agent = join(host, "reader")
        assert host.programs.save(agent, path.stem, path.read_text())["revision"] == 1
    finally:
        host.close()


def test_the_examples_are_the_farmer_and_the_delver():
    assert {"farmer", "delver"} <= {p.stem for p in EXAMPLES.glob("*.py")}


# ---- the farmer ----------------------------------------------------------------------------------

FARMER_KIT = {"hoe": 1, "watering_can": 1, "turnip_seed": 2, "bread": 4}


def test_the_farmer_tills_plants_waters_and_harvests_with_its_agent_silent(tmp_path):
    host = open_host(tmp_path / "m", FARM_SCENARIO, FARM_SEED)
    try:
        agent = join(host, "farmer")
        (sx, sy), _ = farm_site(host.world)
        host.setup("move_character", {"agent": agent, "x": sx, "y": sy})
        for item, qty in FARMER_KIT.items():
            host.setup("give_items", {"agent": agent, "item": item, "qty": qty})
        host.programs.save(agent, "farmer", source("farmer"))
        host.programs.start(agent, "farmer")
        me = host.world.chars[agent]
        ticks = step_until(host, lambda: me.inventory.get("turnip", 0) > 0, limit=5 * 1440)
        assert ticks > 2 * 1440  # days of growth, the program working them alone
        assert state(host, agent, "farmer") in LIVE  # it farms on: it was never meant to finish
        actions = program_actions(host, agent)
        assert {i.issuer for i in actions} == {"program:farmer@1"}  # the agent never acted
        assert {"equip", "till", "plant", "water", "harvest", "eat", "rest"} <= {i.name for i in actions}
        texts = log_texts(host, agent, "farmer")
        assert any("tilled a plot" in t for t in texts) and any("harvested {'item': 'turnip'" in t for t in texts)
        assert me.health == 100 and me.satiety > 0 and me.energy > 0  # fed and rested throughout
    finally:
        host.close()


# ---- the delver ----------------------------------------------------------------------------------

DELVE_SCENARIO, DELVE_SEED = "tiny", 3
DELVER_KIT = {"wooden_club": 1, "padded_armor": 1, "healing_potion": 2, "bread": 2}


def start_delver(host: Host, kit: dict[str, int] = DELVER_KIT, **needs: int) -> str:
    """The operator arms a character (no scenario starts one armed); it starts the delver, then stays silent."""
    agent = join(host, "delver")
    for item, qty in kit.items():
        host.setup("give_items", {"agent": agent, "item": item, "qty": qty})
    if needs:
        host.setup("set_needs", {"agent": agent, **needs})
    host.programs.save(agent, "delver", source("delver"))
    host.programs.start(agent, "delver")
    return agent


def delve(data: Path, restart_in_room: int | None = None, limit: int = 1000) -> tuple[Host, int | None]:
    """Step a delver match until its program ends; with `restart_in_room`, close and reopen the host once,
    the first time the delver fights in that room. The host, and the tick of the restart."""
    host = open_host(data, DELVE_SCENARIO, DELVE_SEED)
    agent = start_delver(host)
    restarted = None
    for _ in range(limit):
        if state(host, agent, "delver") not in LIVE:
            return host, restarted
        room = room_view(host.world, agent)
        if restarted is None and room is not None and room["room"] == restart_in_room and room["enemies"]:
            restarted = host.world.tick
            host.close()
            host = open_host(data, DELVE_SCENARIO, DELVE_SEED)
        host.clock.step()
    raise AssertionError(f"the delver was still running after {limit} ticks")


@lru_cache(maxsize=1)
def uninterrupted() -> tuple[str, int, list[str]]:
    """The delver's match played straight through: chain head, final tick, program log."""
    with tempfile.TemporaryDirectory() as tmp:
        host, _ = delve(Path(tmp) / "m")
        try:
            return host.world.events.head, host.world.tick, log_texts(host, "a1", "delver")
        finally:
            host.close()


def test_the_delver_clears_tier_one_by_its_telegraphs_across_a_restart(tmp_path):
    host, restarted = delve(tmp_path / "m", restart_in_room=2)
    try:
        agent = "a1"
        status = host.programs.status(agent, "delver")
        assert status["state"] == "finished" and status["error"] is None
        assert restarted is not None and status["started_tick"] < restarted < status["ended_tick"]
        cleared = [e["data"] for e in events(host, "tier_cleared") if e["data"]["agent"] == agent]
        assert [(c["tier"], c["fresh"], c["damage_taken"]) for c in cleared] == [(1, True, 0)]  # dodged every hit
        assert host.world.tick - status["started_tick"] > 60  # a walk to the far corner and three rooms
        actions = program_actions(host, agent)
        assert {i.issuer for i in actions} == {"program:delver@1"}  # the agent never acted
        names = {i.name for i in actions}
        assert {"equip", "move_to", "enter_dungeon", "strike", "dodge", "advance", "leave_dungeon"} <= names
        texts = log_texts(host, agent, "delver")
        for room in (1, 2, 3):
            assert any(t.startswith(f"room {room}/3:") for t in texts)
            assert any(t.startswith(f"room {room} cleared") for t in texts)
        assert any(t.startswith("tier 1 outer_court cleared") for t in texts)
        assert texts[-1].startswith("out of the dungeon")
        assert host.world.chars[agent].inventory.get("t_coin", 0) > 0 and not room_view(host.world, agent)
        assert all(check.ok for check in check_store(host.match.store, host.content))  # the runs re-simulate
        head, tick, logs = uninterrupted()
        assert (host.world.events.head, host.world.tick, texts) == (head, tick, logs)  # the restart changed nothing
    finally:
        host.close()


def test_the_delver_drinks_a_potion_when_low_and_still_clears_the_tier(tmp_path):
    host = open_host(tmp_path / "m", DELVE_SCENARIO, DELVE_SEED)
    try:
        agent = start_delver(host, {"wooden_club": 1, "healing_potion": 1}, health=40)
        step_until(host, lambda: state(host, agent, "delver") not in LIVE, limit=1000)
        assert host.programs.status(agent, "delver")["state"] == "finished"
        used = [e["data"] for e in events(host, "consumable_used") if e["data"]["agent"] == agent]
        assert [u["item"] for u in used] == ["healing_potion"]
        cleared = [e["data"] for e in events(host, "tier_cleared") if e["data"]["agent"] == agent]
        assert [(c["tier"], c["consumables_used"]) for c in cleared] == [(1, 1)]
        assert "no padded_armor carried: going without" in log_texts(host, agent, "delver")
    finally:
        host.close()


def test_the_delver_too_weak_and_without_a_potion_stays_out(tmp_path):
    host = open_host(tmp_path / "m", DELVE_SCENARIO, DELVE_SEED)
    try:
        agent = start_delver(host, {"wooden_club": 1}, health=20)
        step_until(host, lambda: state(host, agent, "delver") not in LIVE, limit=100)
        assert host.programs.status(agent, "delver")["state"] == "finished"
        assert "enter_dungeon" not in {i.name for i in program_actions(host, agent)}
        assert log_texts(host, agent, "delver")[-1] == "too weak to go in: health 20 and no healing_potion"
    finally:
        host.close()
